"""What the benchmark scripts share: their own database and Redis database, the processes
they start and stop, and their output (a table on the terminal, the same figures as JSON
for bench/performance_doc.py).

Only the standard library is imported here: gunicorn imports this package (through
``bench.bare_wsgi``) before Django is set up.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REDIS = "redis://127.0.0.1:6379"
LOGS = ROOT / "var" / "bench" / "logs"


def configure(
    suffix: str, redis_db: int, *, database: str | None = None, redis: str = REDIS
) -> None:
    """Point this process (and every process it starts) at the benchmark's own database,
    ``<DATABASE_URL>_<suffix>`` (``database``: on that server instead, a URL of its own
    database), and its own Redis database (``redis_db``, or ``BENCH_REDIS_DB`` when set:
    people sharing a Redis server each take their own; ``redis``: the server), then set
    Django up.

    The first call in a process decides: a benchmark that imports another's helpers (whose
    module calls this at import) keeps the database it chose, and so does a test."""
    sys.path.insert(0, str(ROOT))
    from django.apps import apps

    if apps.ready:
        return
    redis_db = int(os.environ.get("BENCH_REDIS_DB", redis_db))
    if database is not None:
        os.environ["DATABASE_URL"] = database
    os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/moderator")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.setdefault("DEBUG", "0")
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-" + "x" * 40)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "moderator.settings")
    os.environ["DATABASE_URL"] = os.environ["DATABASE_URL"].rstrip("/") + suffix
    os.environ["REDIS_URL"] = f"{redis}/{redis_db}"
    os.environ["CELERY_BROKER_URL"] = f"{redis}/{redis_db}"
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "0"

    import django

    django.setup()


def fresh_database() -> None:
    """Drop and create the benchmark's database and migrate it."""
    import psycopg
    from django.core.management import call_command
    from django.db import connection

    settings = connection.settings_dict
    name = settings["NAME"]
    connection.close()
    server = {
        key: value
        for key, value in {
            "host": settings["HOST"],
            "port": settings["PORT"],
            "user": settings["USER"],
            "password": settings["PASSWORD"],
        }.items()
        if value
    }
    with psycopg.connect(dbname="postgres", autocommit=True, **server) as maintenance:
        # FORCE: a process left over from an interrupted run must not keep it alive.
        maintenance.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        maintenance.execute(f'CREATE DATABASE "{name}"')
    call_command("migrate", verbosity=0)


def flush_redis() -> None:
    """Empty this benchmark's Redis database (and no other)."""
    import redis

    redis.Redis.from_url(os.environ["REDIS_URL"]).flushdb()


def arguments(description: str, name: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--quick", action="store_true", help="a small run, under a minute, to check the script"
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=ROOT / "var" / "bench" / f"{name}.json",
        help=f"where to write the figures as JSON (default: var/bench/{name}.json)",
    )
    return parser


# --- processes ---------------------------------------------------------------------------


def enqueue_nothing(ids: list[int], *, urgent: bool = False) -> None:
    """Stands in for moderator.mail.queueing.enqueue where a benchmark sends nothing."""


class Statements:
    """Counts the statements this process sends: a wrapper for Django's
    ``connection.execute_wrapper``."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        self.count += 1
        return execute(sql, params, many, context)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class Processes:
    """The processes a benchmark starts, each in a session of its own with its output in
    var/bench/logs/; all of them are stopped at the end, whatever happened."""

    def __init__(self) -> None:
        self.running: dict[str, subprocess.Popen[bytes]] = {}

    def __enter__(self) -> Processes:
        return self

    def __exit__(self, *exc: object) -> None:
        for name in list(self.running):
            self.stop(name)

    def start(self, name: str, args: Sequence[str], env: dict[str, str] | None = None) -> None:
        LOGS.mkdir(parents=True, exist_ok=True)
        with open(LOGS / f"{name}.log", "wb") as log:
            self.running[name] = subprocess.Popen(
                [sys.executable, *args],
                cwd=ROOT,
                env={**os.environ, **(env or {})},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def check(self, name: str) -> None:
        if self.running[name].poll() is not None:
            tail = (LOGS / f"{name}.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"{name} exited; the end of its log:\n{tail}")

    def stop(self, name: str) -> None:
        process = self.running.pop(name)
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()

    def wait_until(self, name: str, ready: Callable[[], bool], timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            self.check(name)
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} was not ready after {timeout:.0f} s")
            time.sleep(0.2)


# The SMTP server, in a process of its own so that it takes no CPU from the process that
# sends (the limit): one line per message received, with its time of arrival and its size
# (the bytes of its DATA, as the server took them).
SMTP_SERVER = r"""
import re, sys, time
from aiosmtpd.controller import Controller

SUBJECT = re.compile(rb"^Subject: (.*)$", re.M)

class Log:
    async def handle_DATA(self, server, session, envelope):
        content = envelope.original_content or envelope.content
        found = SUBJECT.search(content)
        subject = found.group(1).decode(errors="replace").strip() if found else ""
        to = ",".join(envelope.rcpt_tos)
        sys.stdout.write(f"{time.time()}\t{len(content)}\t{to}\t{subject}\n")
        sys.stdout.flush()
        return "250 OK"

controller = Controller(Log(), hostname=sys.argv[2], port=int(sys.argv[1]))
controller.start()
sys.stdout.write("ready\n")
sys.stdout.flush()
sys.stdin.read()
controller.stop()
"""


@dataclass(frozen=True)
class Arrival:
    """A message the SMTP server accepted: when, for whom, its subject and its size (the
    bytes of its DATA)."""

    at: float
    to: str
    subject: str
    size: int = 0


class SmtpServer:
    """aiosmtpd in a process of its own (it takes no CPU from the process that sends),
    keeping every message it receives: when, for whom, its subject and its size. It listens on
    ``host`` (another address of this machine: hosts of bench/hosts.py reach it there)."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = free_port(host)
        self.process = subprocess.Popen(
            [sys.executable, "-c", SMTP_SERVER, str(self.port), host],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        if self.process.stdout.readline().strip() != "ready":
            raise RuntimeError("the SMTP server did not start")
        self.arrivals: list[Arrival] = []
        self.changed = threading.Condition()
        threading.Thread(target=self._count, daemon=True).start()

    def _count(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            at, size, to, subject = line.rstrip("\n").split("\t", 3)
            with self.changed:
                self.arrivals.append(Arrival(float(at), to, subject, int(size)))
                self.changed.notify_all()

    @property
    def received(self) -> int:
        with self.changed:
            return len(self.arrivals)

    def since(self, moment: float) -> list[Arrival]:
        """The messages that arrived at ``moment`` or later."""
        with self.changed:
            return [arrival for arrival in self.arrivals if arrival.at >= moment]

    def wait_for(self, count: int, timeout: float) -> float:
        """The arrival time of message number ``count``."""
        with self.changed:
            if not self.changed.wait_for(lambda: len(self.arrivals) >= count, timeout):
                raise RuntimeError(f"the SMTP server has {len(self.arrivals)} of {count} messages")
            return self.arrivals[count - 1].at

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def worker_answers(service: str) -> bool:
    """Whether the Celery worker of compose service ``service`` (worker-steps: hostname
    steps@<host>) answers a ping."""
    from moderator.celery import app

    name = f"{service.removeprefix('worker-')}@{socket.gethostname()}"
    return bool(app.control.ping(destination=[name], timeout=0.5))


def resident_memory(processes: Processes) -> list[dict[str, Any]]:
    """The resident memory (VmRSS) of every process the benchmark started and of their
    children (gunicorn's workers, Celery's pool), each started in a session of its own."""
    rows = []
    for name, process in processes.running.items():
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                # The fields after the command's closing parenthesis: state, ppid, pgrp, ...
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
                if int(fields[2]) != process.pid:
                    continue
                status = (entry / "status").read_text()
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except (OSError, ValueError):
                continue
            rss = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
            rows.append(
                {
                    "process": name,
                    "pid": int(entry.name),
                    "role": "parent" if int(entry.name) == process.pid else "child",
                    "rss_mb": int(rss.split()[1]) / 1024,
                    "command": command.strip()[:120],
                }
            )
    return sorted(rows, key=lambda row: (row["process"], row["role"] != "parent", row["pid"]))


def busy_cpu() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine so far, from /proc/stat."""
    fields = [float(value) for value in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    ticks = os.sysconf("SC_CLK_TCK")
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields) - idle) / ticks, sum(fields) / ticks


# --- figures -----------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) of ``values``, interpolated between closest ranks."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    format: str = ""


@dataclass
class Table:
    title: str
    columns: list[Column]
    rows: list[dict[str, Any]]

    def print(self) -> None:
        cells = [[format(row[c.key], c.format) for c in self.columns] for row in self.rows]
        widths = [
            max([len(column.title), *(len(line[n]) for line in cells)])
            for n, column in enumerate(self.columns)
        ]
        # Words to the left, numbers to the right.
        aligns = [
            "<" if all(isinstance(row[c.key], str) for row in self.rows) else ">"
            for c in self.columns
        ]
        layout = list(zip(widths, aligns, strict=True))
        print(f"\n{self.title}")
        print(
            "  ".join(f"{c.title:{a}{w}}" for c, (w, a) in zip(self.columns, layout, strict=True))
        )
        for line in cells:
            print("  ".join(f"{cell:{a}{w}}" for cell, (w, a) in zip(line, layout, strict=True)))

    def as_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "columns": [{"key": c.key, "title": c.title, "format": c.format} for c in self.columns],
            "rows": self.rows,
        }


@dataclass(frozen=True)
class Target:
    """A figure the lead wants reported against a goal: ``met`` is not an assertion."""

    what: str
    goal: str
    value: str
    met: bool


def report(
    path: Path,
    *,
    name: str,
    title: str,
    quick: bool,
    method: str,
    parameters: dict[str, Any],
    tables: list[Table],
    targets: list[Target],
) -> None:
    """Print the tables and the targets, and write them all to ``path`` as JSON."""
    for table in tables:
        table.print()
    if targets:
        print("\nTargets (reported, not asserted):")
        for target in targets:
            verdict = "met" if target.met else "NOT met"
            print(f"  {target.what}: {target.value} (goal: {target.goal}): {verdict}")
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "benchmark": name,
        "title": title,
        "run_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "quick": quick,
        "method": method,
        "parameters": parameters,
        "tables": [table.as_json() for table in tables],
        "targets": [asdict(target) for target in targets],
    }
    path.write_text(json.dumps(document, indent=2, default=str) + "\n")
    print(f"\nWritten: {path}")
