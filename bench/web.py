"""What the web benchmarks share: gunicorn started as in production, players' browsers that
open their magic links through it, and wrk driving a Lua script of the benchmark's own.

Imported after ``bench.configure`` (it reads Django's models).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import re
import resource
import subprocess
import tempfile
import time
from dataclasses import dataclass
from http.cookies import SimpleCookie
from urllib.parse import urlencode

import yaml
from django.utils import timezone

import bench
from games.models import Seat
from games.postal import access

CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
FORM = "application/x-www-form-urlencoded"


# --- players as coroutines ---------------------------------------------------------------
#
# One connection per request, opened when the request is ready, as gunicorn sees browsers
# through the TLS proxy: the proxy takes a browser's whole request before it opens its
# connection to gunicorn, so a player who thinks never holds one of gunicorn's sync workers.


@dataclass
class Player:
    """One player as a client sends its posts: its seat page, its browser's cookies, its
    address, and the bodies of its different orders, sent in turn."""

    path: str
    cookies: dict[str, str]
    address: str
    bodies: list[str]
    sent: int = 0


async def exchange(port: int, request: bytes) -> tuple[int, dict[str, list[str]], float]:
    """Send ``request`` on a new connection; (status, headers, seconds to the last byte)."""
    began = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    answer = await reader.read()  # gunicorn's sync workers close the connection
    took = time.perf_counter() - began
    writer.close()
    head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    status = int(head[0].split(" ", 2)[1]) if head and head[0].startswith("HTTP/") else 0
    headers: dict[str, list[str]] = {}
    for line in head[1:]:
        name, _, value = line.partition(":")
        headers.setdefault(name.strip().lower(), []).append(value.strip())
    return status, headers, took


def page_after(player: Player, headers: dict[str, list[str]]) -> Player:
    """The GET of the page a post redirected ``player`` to, with the cookies the answer
    set (the messages cookie), as a browser sends it."""
    cookies = dict(player.cookies)
    for header in headers.get("set-cookie", []):
        for key, morsel in SimpleCookie(header).items():
            cookies[key] = morsel.value
    return Player(player.path, cookies, player.address, [])


def request(method: str, port: int, player: Player, body: str = "", https: bool = False) -> bytes:
    """The bytes of ``player``'s request as its browser sends it through the TLS proxy
    (``https``: with the proxy's X-Forwarded-Proto too)."""
    lines = [
        f"{method} {player.path} HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        f"X-Forwarded-For: {player.address}",
        "Connection: close",
    ]
    if https:
        lines.append("X-Forwarded-Proto: https")
    if player.cookies:
        lines.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in player.cookies.items()))
    if method == "POST":
        lines += [
            f"Content-Type: {FORM}",
            f"Origin: {'https' if https else 'http'}://127.0.0.1:{port}",
            f"Content-Length: {len(body)}",
        ]
    return ("\r\n".join(lines) + "\r\n\r\n" + body).encode()


def production_workers() -> int:
    """The gunicorn workers docker/compose.yaml gives the web service."""
    compose = (bench.ROOT / "docker" / "compose.yaml").read_text()
    match = re.search(r'"gunicorn", "moderator\.wsgi".*"--workers", "(\d+)"', compose)
    if match is None:
        raise RuntimeError("docker/compose.yaml names no --workers for gunicorn")
    return int(match[1])


def behind_proxy(port: int) -> dict[str, str]:
    """The environment of a web process with the settings of production behind its TLS
    proxy, speaking plain HTTP on ``port``."""
    return {
        "DEBUG": "0",
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "false",
        "SESSION_COOKIE_SECURE": "false",
        "CSRF_COOKIE_SECURE": "false",
        "SITE_URL": f"http://127.0.0.1:{port}",
        # As in production behind the TLS proxy: each player's address is the proxy's
        # X-Forwarded-For entry, so the rate limits count players, not the load generator.
        "TRUSTED_PROXY_COUNT": "1",
    }


def gunicorn(processes: bench.Processes, name: str, app: str, port: int, workers: int) -> None:
    """gunicorn serving ``app`` on ``port`` with ``workers`` sync workers, with the
    settings of production behind its TLS proxy (plain HTTP here); returns once it
    answers /healthz."""
    args = ["-m", "gunicorn", app, "--bind", f"127.0.0.1:{port}", "--workers", str(workers)]
    processes.start(name, args, behind_proxy(port))
    processes.wait_until(name, lambda: bench.answers(f"http://127.0.0.1:{port}/healthz"))


def compose_web(
    processes: bench.Processes,
    name: str,
    port: int,
    *,
    app: str = "moderator.wsgi",
    env: dict[str, str] | None = None,
) -> list[str]:
    """The web service's command in docker/compose.yaml (its gunicorn workers and threads,
    its access log), run with this Python on ``port`` and serving ``app``, with the
    settings of production behind its TLS proxy and ``env``. Returns, once it answers
    /healthz, the command's options but its address (``--workers 3 --threads 8 ...``)."""
    compose = yaml.safe_load((bench.ROOT / "docker" / "compose.yaml").read_text())
    command = [str(part) for part in compose["services"]["web"]["command"]]
    if command[:2] != ["gunicorn", "moderator.wsgi"] or "--bind" not in command:
        raise RuntimeError(f"docker/compose.yaml's web command is not gunicorn's: {command}")
    bind = command.index("--bind")
    options = command[2:bind] + command[bind + 2 :]
    args = ["-m", "gunicorn", app, "--bind", f"127.0.0.1:{port}", *options]
    processes.start(name, args, behind_proxy(port) | (env or {}))
    processes.wait_until(name, lambda: bench.answers(f"http://127.0.0.1:{port}/healthz"))
    return options


@dataclass(frozen=True)
class Answer:
    status: int
    location: str
    text: str


class Browser:
    """Just enough of a browser for one player: cookies, and an address of its own, sent as
    the TLS proxy sends it (X-Forwarded-For): links and orders are rate limited per
    address, as for real players. ``https``: the proxy's X-Forwarded-Proto too, for a
    server with production's settings (HTTPS redirect, secure cookies)."""

    def __init__(
        self, port: int, number: int, *, https: bool = False, host: str = "127.0.0.1"
    ) -> None:
        self.address = f"10.{number // 65536 % 256}.{number // 256 % 256}.{number % 256}"
        self.origin = f"{'https' if https else 'http'}://{host}:{port}"
        self.proxy = {"X-Forwarded-For": self.address}
        if https:
            self.proxy["X-Forwarded-Proto"] = "https"
        self.connection = http.client.HTTPConnection(host, port, timeout=60)
        self.cookies: dict[str, str] = {}

    def cookie(self, *names: str) -> str:
        return "; ".join(f"{k}={v}" for k, v in self.cookies.items() if not names or k in names)

    def request(self, method: str, path: str, form: dict[str, str] | None = None) -> Answer:
        headers = dict(self.proxy)
        if self.cookies:
            headers["Cookie"] = self.cookie()
        body = None
        if form is not None:
            body = urlencode(form)
            headers |= {"Content-Type": FORM, "Origin": self.origin}
        try:
            self.connection.request(method, path, body, headers)
            response = self.connection.getresponse()
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            # The server closed the kept-alive connection while it was idle (gunicorn's
            # threaded workers keep one open for seconds): a browser opens a new one and
            # sends the request again, as nothing of it was answered.
            self.connection.close()
            self.connection.request(method, path, body, headers)
            response = self.connection.getresponse()
        text = response.read().decode()
        for header in response.headers.get_all("Set-Cookie") or []:
            for key, morsel in SimpleCookie(header).items():
                self.cookies[key] = morsel.value
        return Answer(response.status, response.getheader("Location", ""), text)

    def csrf(self, path: str) -> str:
        answer = self.request("GET", path)
        match = CSRF.search(answer.text)
        if answer.status != 200 or match is None:
            raise RuntimeError(f"GET {path} answered {answer.status} without a CSRF token")
        return match[1]

    def open_link(self, seat: Seat) -> str:
        """Open a new magic link of ``seat`` as a player does (its Continue page, then the
        POST that remembers the seat); returns the seat's page, where it redirected."""
        token = access.mint([seat], now=timezone.now())[seat.position]
        link = f"/p/{token}/"
        answer = self.request("POST", link, {"csrfmiddlewaretoken": self.csrf(link)})
        play = f"/play/{seat.game_id}/{seat.position}/"
        if (answer.status, answer.location) != (302, play):
            raise RuntimeError(f"POST {link} answered {answer.status}, not a redirect to {play}")
        return play

    def csrf_token(self) -> str:
        """A CSRF token for this browser's forms: the cookie's secret is what a form's token
        is checked against, and the cookie itself is a valid token."""
        return self.cookies["csrftoken"]


def run_wrk(port: int, script: str, clients: int, seconds: float) -> dict[str, float]:
    """Run wrk with one thread and one connection per client for ``seconds`` with the Lua
    ``script``, whose done() writes one line ``BENCH <json>``; returns that JSON with the
    CPU wrk used (``wrk_cpu_pct``) and the machine's (``machine_cpu_pct``), as shares of
    all cores."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as file:
        file.write(script)
        file.flush()
        command = [
            "wrk", "--threads", str(clients), "--connections", str(clients),
            "--duration", f"{seconds:.0f}s", "--timeout", "30s", "--script", file.name,
            f"http://127.0.0.1:{port}",
        ]  # fmt: skip
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        busy, total = bench.busy_cpu()
        began = time.perf_counter()
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - began
        busy_after, total_after = bench.busy_cpu()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = next((x for x in result.stdout.splitlines() if x.startswith("BENCH ")), None)
    if result.returncode != 0 or line is None:
        raise RuntimeError(f"wrk failed:\n{result.stdout}\n{result.stderr}")
    figures: dict[str, float] = json.loads(line.removeprefix("BENCH "))
    used = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    cores = os.cpu_count() or 1
    figures["wrk_cpu_pct"] = 100 * used / (wall * cores)
    figures["machine_cpu_pct"] = 100 * (busy_after - busy) / (total_after - total)
    return figures


# Lua for wrk: a monotonic clock in microseconds (wrk runs LuaJIT), for scripts that time
# requests by kind themselves; and the percentile of a list of such timings.
LUA_CLOCK = r"""
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clk_id, bench_timespec *tp);
]]
local bench_ts = ffi.new("bench_timespec")
function now_us()
  ffi.C.clock_gettime(1, bench_ts)
  return tonumber(bench_ts.tv_sec) * 1000000 + tonumber(bench_ts.tv_nsec) / 1000
end
function percentile(values, q)
  if #values == 0 then return 0 end
  table.sort(values)
  local rank = math.max(1, math.ceil(#values * q / 100))
  return values[rank]
end
"""
