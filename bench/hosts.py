"""Hosts of their own on one machine: a network namespace each for web, worker-steps,
worker-mail, beat, postgres and redis, as docker/compose.yaml's services are on hosts of
their own, joined by a bridge in this (the root) namespace, which holds the subnet's first
address: the processes here (a test, a benchmark, its SMTP server and its players) reach
every host, and every host reaches them.

    python bench/hosts.py up          # make the hosts, start PostgreSQL and Redis; Ctrl-C ends
    python bench/hosts.py list        # the runs on this machine, and whether their owner lives
    python bench/hosts.py down        # remove what runs whose owner died left behind
    python bench/hosts.py down --all  # remove every run, living or not

Each run names its namespaces, links and bridge with a prefix of its own (``mdh`` and five
hex digits) and takes a /24 of 10.77.0.0/16 that no address or route of this namespace
uses, so two runs side by side, or the remains of one that crashed, never meet. A run
writes down its owner (process id and start time) before it makes anything; ``down``, and
every new run, removes the runs whose owner is gone: their processes (killed inside their
namespaces), namespaces, links and files. A run's own teardown removes everything it made,
on an exception or Ctrl-C as well.

``cut(host)`` takes a host off the network by setting its link down on the bridge's side:
its packets are dropped, so TCP connections stall (as across a partition) rather than
reset; ``restore(host)`` sets it up again.

Every host knows the others' hardware addresses for good (no ARP), so a cut host only
drops packets, as a host behind a router does: a connection begun during the cut waits
too, rather than failing once ARP gives up.

Only the standard library and iproute2's ``ip`` (root, ``ip netns add``), with PostgreSQL's
binaries (the newest under /usr/lib/postgresql, else the PATH's) and redis-server for the
two servers: the command line needs nothing of the project.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import ipaddress
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, TracebackType

ROOT = Path(__file__).resolve().parents[1]
# The hosts, in the order of their addresses (.2, .3, ...; the bridge holds .1).
HOSTS = ("web", "worker-steps", "worker-mail", "beat", "postgres", "redis")
# The compose services that run the project's own commands, each on its host.
SERVICES = ("web", "worker-steps", "worker-mail", "beat")
MARK = "mdh"
RUN_NAME = re.compile(rf"^{MARK}[0-9a-f]{{5}}$")
NAMESPACE = re.compile(rf"^({MARK}[0-9a-f]{{5}})-")
# Where runs write down their owners and keep their files (the servers' data, logs).
REGISTRY = Path(tempfile.gettempdir()) / "moderator-hosts"
SUBNETS = ipaddress.IPv4Network("10.77.0.0/16")
POSTGRES_PORT = 5432
REDIS_PORT = 6379
WEB_PORT = 8000


class HostsError(RuntimeError):
    pass


def ip(*args: str, check: bool = True) -> str:
    """``ip args`` (iproute2); its output. Raises HostsError when it fails and ``check``."""
    result = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if check and result.returncode != 0:
        raise HostsError(f"ip {' '.join(args)}: {result.stderr.strip()}")
    return result.stdout


def can_make_namespaces() -> str | None:
    """None when this process can make hosts here; else why not (for a test's skip)."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "iproute2's ip is not installed"
    probe = f"{MARK}probe{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"ip netns add was refused: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "delete", probe], capture_output=True, check=False)
    return None


def real_clock_environment() -> dict[str, str]:
    """This environment without libfaketime's (``make test-later``): the servers, like the
    machine's own, keep the real clock."""
    return {
        name: value
        for name, value in os.environ.items()
        if name != "LD_PRELOAD" and not name.startswith("FAKETIME")
    }


def postgres_binaries() -> Path:
    """The newest PostgreSQL's binaries: Debian keeps each version in a folder of its own
    (not on the PATH); elsewhere, the folder of the PATH's initdb."""
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda path: int(path.parts[-3]) if path.parts[-3].isdigit() else 0,
    )
    if found:
        return found[-1].parent
    initdb = shutil.which("initdb")
    if initdb is None:
        raise HostsError("PostgreSQL's binaries (initdb) are not installed")
    return Path(initdb).parent


# --- the runs on this machine --------------------------------------------------------------


def _start_time(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks after boot), or None if there is none (or
    only its zombie, dead and not yet reaped)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    if len(fields) < 20 or fields[0] == "Z":
        return None
    return fields[19]


@dataclass(frozen=True)
class Run:
    """A run of hosts as it wrote itself down."""

    prefix: str
    pid: int
    started: str | None
    subnet: str

    @property
    def alive(self) -> bool:
        return self.started is not None and _start_time(self.pid) == self.started


@contextlib.contextmanager
def _registry_lock() -> Iterator[None]:
    """One process at a time chooses a subnet or removes runs."""
    REGISTRY.mkdir(mode=0o755, exist_ok=True)
    with open(REGISTRY / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def runs() -> list[Run]:
    """Every run this machine has: those written down, and namespaces or links of runs
    whose record is gone (their owner unknown, so never alive)."""
    found: dict[str, Run] = {}
    for record in REGISTRY.glob(f"{MARK}*.json"):
        try:
            data = json.loads(record.read_text())
            found[record.stem] = Run(record.stem, data["pid"], data["started"], data["subnet"])
        except (OSError, ValueError, KeyError):
            found[record.stem] = Run(record.stem, 0, None, "")
    names = ip("netns", "list").split() + [
        line.split(":")[1].strip().split("@")[0] for line in ip("-o", "link", "show").splitlines()
    ]
    for name in names:
        match = NAMESPACE.match(name)
        if match and match[1] not in found:
            found[match[1]] = Run(match[1], 0, None, "")
    for folder in REGISTRY.glob(f"{MARK}*"):
        if folder.is_dir() and RUN_NAME.match(folder.name) and folder.name not in found:
            found[folder.name] = Run(folder.name, 0, None, "")
    return sorted(found.values(), key=lambda run: run.prefix)


def _kill_namespace(namespace: str) -> None:
    """End every process inside ``namespace``: asked first (SIGTERM), then killed."""
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        pids = [int(pid) for pid in ip("netns", "pids", namespace, check=False).split()]
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and any(_start_time(pid) for pid in pids):
            time.sleep(0.1)


def remove_run(prefix: str) -> None:
    """Everything run ``prefix`` made: its processes, namespaces, links and files."""
    namespaces = [name for name in ip("netns", "list").split() if name.startswith(prefix + "-")]
    for namespace in namespaces:
        _kill_namespace(namespace)
    for namespace in namespaces:
        ip("netns", "delete", namespace, check=False)
    for line in ip("-o", "link", "show").splitlines():
        name = line.split(":")[1].strip().split("@")[0]
        if name.startswith(prefix + "-"):
            ip("link", "delete", name, check=False)
    shutil.rmtree(REGISTRY / prefix, ignore_errors=True)
    (REGISTRY / f"{prefix}.json").unlink(missing_ok=True)


def remove_leftovers(*, every: bool = False) -> list[str]:
    """Remove the runs whose owner is gone (``every``: all runs); their prefixes."""
    removed = []
    with _registry_lock():
        for run in runs():
            if every or not run.alive:
                remove_run(run.prefix)
                removed.append(run.prefix)
    return removed


def _free_subnet() -> ipaddress.IPv4Network:
    """The first /24 of SUBNETS that no address or route of this namespace touches."""
    used = []
    for line in ip("-o", "-4", "addr", "show").splitlines():
        used.append(ipaddress.ip_interface(line.split()[3]).network)
    for line in ip("-4", "route", "show", "table", "all").splitlines():
        target = line.split()[0]
        if target[0].isdigit():
            with contextlib.suppress(ValueError):
                used.append(ipaddress.ip_network(target, strict=False))
    for subnet in SUBNETS.subnets(new_prefix=24):
        if not any(isinstance(net, ipaddress.IPv4Network) and subnet.overlaps(net) for net in used):
            return subnet
    raise HostsError(f"no free /24 left in {SUBNETS}")


# --- one run ----------------------------------------------------------------------------


def _wait(
    ready: Callable[[], bool], what: str, timeout: float, process: subprocess.Popen[bytes]
) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if process.poll() is not None:
            raise HostsError(f"{what} exited with {process.returncode}")
        if time.monotonic() > deadline:
            raise HostsError(f"{what} did not answer within {timeout:.0f} s")
        time.sleep(0.1)


class Hosts:
    """The hosts of one run, made by ``up()`` (or ``with Hosts() as hosts``) and removed,
    with everything started in them, by ``down()``."""

    def __init__(self, logs: Path | None = None) -> None:
        self.prefix = MARK + secrets.token_hex(3)[:5]
        self.dir = REGISTRY / self.prefix
        # Where the processes' output goes (by default the run's folder, removed with it).
        self.logs = logs
        self.subnet: ipaddress.IPv4Network | None = None
        self.processes: dict[str, subprocess.Popen[bytes]] = {}

    # names and addresses

    def namespace(self, host: str) -> str:
        return f"{self.prefix}-{host}"

    def link(self, host: str) -> str:
        """The bridge's end of the host's link (an interface name has 15 characters)."""
        return f"{self.prefix}-{HOSTS.index(host)}"

    @property
    def bridge(self) -> str:
        return f"{self.prefix}-br"

    def address(self, host: str) -> str:
        """The host's address (``root``: the bridge's, the machine's own namespace)."""
        if self.subnet is None:
            raise HostsError("the hosts are not up")
        number = 1 if host == "root" else 2 + HOSTS.index(host)
        return str(self.subnet[number])

    @property
    def database_url(self) -> str:
        """The PostgreSQL of the postgres host, its database ``moderator``."""
        return f"postgres://postgres@{self.address('postgres')}:{POSTGRES_PORT}/moderator"

    @property
    def redis_url(self) -> str:
        return f"redis://{self.address('redis')}:{REDIS_PORT}/0"

    @property
    def web_url(self) -> str:
        return f"http://{self.address('web')}:{WEB_PORT}"

    # making and removing

    def __enter__(self) -> Hosts:
        self.up()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.down()

    def up(self) -> None:
        """Make the network and start PostgreSQL and Redis on their hosts; on any failure,
        remove what was made."""
        try:
            with _registry_lock():
                for run in runs():
                    if not run.alive:
                        remove_run(run.prefix)
                self.subnet = _free_subnet()
                self.dir.mkdir(mode=0o755)
                (REGISTRY / f"{self.prefix}.json").write_text(
                    json.dumps(
                        {
                            "pid": os.getpid(),
                            "started": _start_time(os.getpid()),
                            "subnet": str(self.subnet),
                        }
                    )
                )
                # The bridge takes its address under the lock: the next run sees it used.
                ip("link", "add", self.bridge, "type", "bridge", "forward_delay", "0",
                   "nf_call_iptables", "0")  # fmt: skip
                ip("addr", "add", f"{self.address('root')}/24", "dev", self.bridge)
                ip("link", "set", self.bridge, "up")
            for host in HOSTS:
                self._make_host(host)
            self._pin_neighbours()
            self._start_postgres()
            self._start_redis()
        except BaseException:
            self.down()
            raise

    def _make_host(self, host: str) -> None:
        namespace, link = self.namespace(host), self.link(host)
        ip("netns", "add", namespace)
        ip("link", "add", link, "type", "veth", "peer", "name", f"{link}h", "netns", namespace)
        ip("-n", namespace, "link", "set", f"{link}h", "name", "eth0")
        ip("-n", namespace, "addr", "add", f"{self.address(host)}/24", "dev", "eth0")
        ip("-n", namespace, "link", "set", "lo", "up")
        ip("-n", namespace, "link", "set", "eth0", "up")
        ip("-n", namespace, "route", "add", "default", "via", self.address("root"))
        ip("link", "set", link, "master", self.bridge)
        ip("link", "set", link, "up")

    def _pin_neighbours(self) -> None:
        """Every host, and this namespace, knows every other's hardware address for good
        (no ARP). A cut host then only drops packets, as across a router: without this, a
        connection begun after the cut failed within 3 s (ARP unanswered: "no route to
        host") or stalled, depending on whether its address had been looked up lately."""
        hardware = {"root": _hardware_address([], self.bridge)}
        for host in HOSTS:
            hardware[host] = _hardware_address(["-n", self.namespace(host)], "eth0")
        for owner in ("root", *HOSTS):
            where = [] if owner == "root" else ["-n", self.namespace(owner)]
            device = self.bridge if owner == "root" else "eth0"
            for other, address in hardware.items():
                if other != owner:
                    ip(*where, "neigh", "replace", self.address(other), "lladdr", address,
                       "dev", device, "nud", "permanent")  # fmt: skip

    def down(self) -> None:
        """Stop every process started here and remove the hosts, whatever state they are in."""
        for name in reversed(list(self.processes)):
            # PostgreSQL's fast shutdown (SIGINT): its smart one (SIGTERM) waits for clients.
            with contextlib.suppress(Exception):
                self.stop(name, signal.SIGINT if name == "postgres" else signal.SIGTERM)
        with _registry_lock():
            remove_run(self.prefix)
        self.subnet = None

    # processes

    def start(
        self,
        host: str,
        name: str,
        args: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        log: Path | None = None,
        user: str | None = None,
    ) -> subprocess.Popen[bytes]:
        """Run ``args`` inside ``host`` (``ip netns exec``), as ``user`` if given (runuser),
        in a session of its own, its output to ``log`` (else ``<name>.log`` in the logs'
        folder)."""
        if log is None:
            folder = self.logs or self.dir
            folder.mkdir(parents=True, exist_ok=True)
            log = folder / f"{name}.log"
        command = ["ip", "netns", "exec", self.namespace(host)]
        if user is not None:
            command += ["runuser", "-u", user, "--"]
        with open(log, "wb") as output:
            process = subprocess.Popen(
                [*command, *args],
                cwd=ROOT,
                env=dict(env if env is not None else os.environ),
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.processes[name] = process
        return process

    def stop(self, name: str, sig: int = signal.SIGTERM) -> None:
        process = self.processes.pop(name)
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, sig)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()

    def check(self, name: str) -> None:
        """Raise if process ``name`` has exited."""
        process = self.processes[name]
        if process.poll() is not None:
            raise HostsError(f"{name} exited with {process.returncode}")

    # the servers

    def _start_postgres(self) -> None:
        binaries = postgres_binaries()
        data = self.dir / "postgres"
        data.mkdir(mode=0o700)
        shutil.chown(data, "postgres", "postgres")
        env = real_clock_environment()
        initdb = [
            "runuser", "-u", "postgres", "--", str(binaries / "initdb"), "--pgdata", str(data),
            "--username", "postgres", "--auth", "trust", "--encoding", "UTF8",
            "--locale", "C.UTF-8", "--no-sync",
        ]  # fmt: skip
        made = subprocess.run(initdb, capture_output=True, text=True, env=env, check=False)
        if made.returncode != 0:
            raise HostsError(f"initdb failed: {made.stderr.strip()}")
        with open(data / "pg_hba.conf", "a") as hba:
            hba.write(f"host all all {self.subnet} trust\n")
        server = self.start(
            "postgres",
            "postgres",
            [str(binaries / "postgres"), "-D", str(data),
             "-c", f"listen_addresses={self.address('postgres')}",
             "-c", f"port={POSTGRES_PORT}", "-c", f"unix_socket_directories={data}",
             "-c", "log_connections=on", "-c", "log_disconnections=on",
             # Its shared memory in files of its folder, removed with it whatever happens.
             "-c", "dynamic_shared_memory_type=mmap"],
            env=env,
            user="postgres",
        )  # fmt: skip
        isready = [str(binaries / "pg_isready"), "--quiet", "--host", self.address("postgres"),
                   "--port", str(POSTGRES_PORT), "--username", "postgres"]  # fmt: skip

        def answers() -> bool:
            return subprocess.run(isready, env=env, check=False).returncode == 0

        _wait(answers, "PostgreSQL", 60, server)
        created = subprocess.run(
            [str(binaries / "createdb"), "--host", self.address("postgres"), "--port",
             str(POSTGRES_PORT), "--username", "postgres", "moderator"],
            capture_output=True, text=True, env=env, check=False,
        )  # fmt: skip
        if created.returncode != 0:
            raise HostsError(f"createdb failed: {created.stderr.strip()}")

    def _start_redis(self) -> None:
        folder = self.dir / "redis"
        folder.mkdir()
        server = self.start(
            "redis",
            "redis",
            ["redis-server", "--bind", self.address("redis"), "--port", str(REDIS_PORT),
             "--save", "", "--appendonly", "no", "--protected-mode", "no", "--dir", str(folder)],
            env=real_clock_environment(),
        )  # fmt: skip
        _wait(lambda: _redis_answers(self.address("redis")), "Redis", 30, server)

    # the project's services

    def service_environment(
        self, smtp_port: int, *, database_url: str | None = None
    ) -> dict[str, str]:
        """What the project's processes on the hosts are told: the database (``database_url``,
        else ``moderator``) and Redis on their hosts, the SMTP server and the clients in
        the root namespace (the bridge's address), the web host's address as theirs."""
        web = self.address("web")
        return {
            "DATABASE_URL": database_url or self.database_url,
            "REDIS_URL": self.redis_url,
            "CELERY_BROKER_URL": self.redis_url,
            "EMAIL_BACKEND": "moderator.mail.smtp.EmailBackend",
            "EMAIL_HOST": self.address("root"),
            "EMAIL_PORT": str(smtp_port),
            "SITE_URL": f"http://{web}:{WEB_PORT}",
            "ALLOWED_HOSTS": f"{web},127.0.0.1,localhost",
            # The clients stand behind a TLS proxy (X-Forwarded-For, X-Forwarded-Proto).
            "TRUSTED_PROXY_COUNT": "1",
            "CELERY_TASK_ALWAYS_EAGER": "0",
            "VAR_DIR": str(self.dir / "var"),
        }

    def start_services(self, commands: Mapping[str, Sequence[str]], env: Mapping[str, str]) -> None:
        """Each of SERVICES on its own host, with its command: ``commands`` gives what
        follows this Python (``-m celery ...``: docker/compose.yaml's, as compose runs it,
        the web bound to every address of its host on WEB_PORT); beat's schedule goes to
        the run's folder. Returns once the web answers /healthz."""
        (self.dir / "var").mkdir(exist_ok=True)
        schedule = str(self.dir / "celerybeat-schedule")
        for service in SERVICES:
            args = [
                schedule if part.endswith("celerybeat-schedule") else part
                for part in commands[service]
            ]
            self.start(service, service, [sys.executable, *args], env=env)
        web = self.processes["web"]
        _wait(lambda: _answers(f"{self.web_url}/healthz"), "the web", 90, web)

    # the network

    def cut(self, host: str) -> None:
        """Take ``host`` off the network: its link down at the bridge, so its packets, and
        everybody's to it, are dropped (no reset: connections stall)."""
        ip("link", "set", self.link(host), "down")

    def restore(self, host: str) -> None:
        ip("link", "set", self.link(host), "up")

    @contextlib.contextmanager
    def cut_off(self, host: str) -> Iterator[None]:
        """``host`` off the network for the block, back on after it, whatever happened."""
        self.cut(host)
        try:
            yield
        finally:
            self.restore(host)


def _hardware_address(where: list[str], device: str) -> str:
    """The MAC address of ``device`` (in the namespace ``where`` names: ``-n NAME``)."""
    fields = ip(*where, "-o", "link", "show", device).split()
    return fields[fields.index("link/ether") + 1]


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def _redis_answers(address: str) -> bool:
    try:
        with socket.create_connection((address, REDIS_PORT), timeout=1) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(16).startswith(b"+PONG")
    except OSError:
        return False


# --- the command line -----------------------------------------------------------------------


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("up", help="make the hosts, start PostgreSQL and Redis, wait for Ctrl-C")
    commands.add_parser("list", help="the runs on this machine")
    down = commands.add_parser("down", help="remove the runs whose owner is gone")
    down.add_argument("--all", action="store_true", help="every run, its owner alive or not")
    args = parser.parse_args(argv)
    why_not = can_make_namespaces()
    if why_not is not None:
        print(why_not, file=sys.stderr)
        return 1
    if args.command == "list":
        for run in runs():
            state = "alive" if run.alive else "left over"
            print(f"{run.prefix}  {run.subnet or '-':16}  pid {run.pid or '-'}  {state}")
        return 0
    if args.command == "down":
        removed = remove_leftovers(every=args.all)
        print("removed: " + (", ".join(removed) if removed else "nothing"))
        return 0
    # Both end the run, its teardown included (a shell's background job ignores SIGINT
    # unless told otherwise).
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    with Hosts() as hosts:
        for host in HOSTS:
            print(f"{host:13} {hosts.namespace(host):24} {hosts.address(host)}")
        print(f"DATABASE_URL={hosts.database_url}\nREDIS_URL={hosts.redis_url}")
        print("Ctrl-C removes them.")
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)
    return 0


if __name__ == "__main__":
    sys.exit(main())
