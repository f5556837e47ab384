"""Benchmark: what open seat pages cost while they wait for news: ``--pages`` players'
pages (500) left open at once, each listening as games/live.js does, served by the web
command of docker/compose.yaml.

    .venv/bin/python bench/live_pages.py [--quick] [--pages 500] [--hold 120] [--idle 20]
        [--moves 6] [--probe-every 2] [--streams-per-process N]
        [--json var/bench/live_pages.json]

Classic Liar's Dice games of five seats (``--pages`` / 5 of them), started through the
postal layer; each seat's player opens its magic link in a browser of its own (an address
of its own, bench/web.py). Then the pages open, spread over one poll's interval
(``LIVE_POLL_SECONDS``) as players' pages are, and each does what live.js and htmx do:

- the page (a GET), which names its poll's token and its stream;
- the seat's event stream (``/play/<game>/<position>/stream``), held open. A stream
  refused (429: ``API_STREAMS_MOST`` open in all, or ``API_STREAMS_PER_PROCESS`` in the
  web process that took it) is given up, as an ``EventSource`` gives up on any answer
  but 200; one that ends (``API_STREAM_SECONDS``) or drops is opened again after the
  ``retry`` it asked for, with the last id it saw;
- the poll (``?live=<token>``, as htmx sends it) every ``LIVE_POLL_SECONDS``, whether or
  not the page has a stream (live.js keeps it), and at once when the stream says the
  seat moved. A poll answered with the page (news) takes the new token from it.

Each request is a connection of its own, as the TLS proxy opens them; a stream holds one.

Once every page has opened, two phases of ``--hold`` seconds each:

- quiet: nothing happens in any game. What open pages cost by themselves, per page: the
  CPU of this phase less that of ``--idle`` seconds measured before any page opened.
- moves and loads: ``--moves`` moves a minute are played (the next move of a game in
  turn, through ``postal.accept_order`` in this process), so that news reaches pages by
  their streams and by their polls (how long it took: the "news" table); and every
  ``--probe-every`` seconds a player loads their page (a plain GET, open loop): whether
  a page stays fast while the others are open.

Measured in each phase: CPU of the web processes (gunicorn and its workers), of
PostgreSQL's backends of the benchmark's database (followed every second), of the whole
PostgreSQL server (other databases on it count too) and of a Redis server of the
benchmark's own (redis-server as compose runs it); requests by kind; connections held
open at the web port (server side, from /proc/net/tcp, sampled every second); sessions and
transactions of the benchmark's database (pg_stat_database); Redis's commands.

Needs redis-server. Database ``<DATABASE_URL>_bench_live_pages`` (created and migrated on
each run); its Redis is its own, on a free port, stopped at the end.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import redis

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench
from bench import cpu

NAME = "live_pages"
SEATS = 5
DICE = 5
BIDS_PER_ROUND = 20
# How long a request may take before the page counts it as lost (a browser waits longer;
# a run must end).
TIMEOUT = 30.0
TOKEN = re.compile(r'hx-get="[^"?]*\?live=([^"]+)"')
STREAM = re.compile(r'data-stream="([^"]+)"')


# --- a Redis server of the benchmark's own ------------------------------------------------


class RedisServer:
    """redis-server as docker/compose.yaml runs it (no persistence), on a free port, in a
    session of its own: its CPU is the benchmark's alone."""

    def __init__(self) -> None:
        self.port = bench.free_port()
        self.url = f"redis://127.0.0.1:{self.port}"
        bench.LOGS.mkdir(parents=True, exist_ok=True)
        with open(bench.LOGS / "live-pages-redis.log", "wb") as log:
            self.process = subprocess.Popen(
                ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port),
                 "--save", "", "--appendonly", "no"],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        self.client = redis.Redis.from_url(self.url)
        deadline = time.monotonic() + 10
        while True:
            try:
                self.client.ping()
                break
            except redis.ConnectionError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.1)

    def __enter__(self) -> RedisServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def commands(self) -> int:
        return int(self.client.info("stats")["total_commands_processed"])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


# --- pages as live.js keeps them -----------------------------------------------------------


@dataclass
class Tally:
    """What every page asked and was answered, with when and how long it took."""

    # kind -> [(moment, seconds)]: page, probe, poll-none, poll-news, poll-other,
    # stream, stream-refused, lost (no answer in TIMEOUT, or the connection failed).
    answers: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    streams_open: int = 0
    # (moment, game id) of each page told of news by a poll answered with the page.
    news: list[tuple[float, int, bool]] = field(default_factory=list)

    def add(self, kind: str, moment: float, took: float) -> None:
        self.answers.setdefault(kind, []).append((moment, took))

    def between(self, kind: str, start: float, end: float) -> list[float]:
        return [took for moment, took in self.answers.get(kind, []) if start <= moment < end]


@dataclass
class Page:
    """A player's open page: its address, the browser's cookie and address, its game."""

    path: str
    cookie: str
    address: str
    game_id: int
    token: str = ""
    stream: str = ""
    streaming: bool = False
    # The seat as the page was drawn comes first on its EventSource: no news (live.js). On
    # a connection made again, the first is news.
    heard: bool = False
    news: asyncio.Event = field(default_factory=asyncio.Event)


def head(port: int, page: Page, path: str, extra: dict[str, str] | None = None) -> bytes:
    """A GET as the browser sends it through the TLS proxy: a connection of its own."""
    lines = [
        f"GET {path} HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        f"X-Forwarded-For: {page.address}",
        f"Cookie: {page.cookie}",
        "Connection: close",
        *(f"{name}: {value}" for name, value in (extra or {}).items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def get(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) of a GET on a new connection; the server closes it."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        answer = await reader.read()
    finally:
        writer.close()
    top, _, body = answer.partition(b"\r\n\r\n")
    lines = top.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1]) if lines[0].startswith("HTTP/") else 0
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding") == "chunked":
        body = dechunk(body)
    return status, headers, body


def dechunk(body: bytes) -> bytes:
    parts = []
    while body:
        size_line, _, body = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        parts.append(body[:size])
        body = body[size + 2 :]
    return b"".join(parts)


async def load(port: int, page: Page, tally: Tally, kind: str) -> None:
    """The page itself, as a browser loads it: its poll's token and its stream."""
    began = time.monotonic()
    try:
        status, _, body = await asyncio.wait_for(get(port, head(port, page, page.path)), TIMEOUT)
    except (TimeoutError, OSError):
        tally.add("lost", began, time.monotonic() - began)
        return
    tally.add(kind if status == 200 else f"{kind}-{status}", began, time.monotonic() - began)
    text = body.decode(errors="replace")
    if (token := TOKEN.search(text)) and (stream := STREAM.search(text)):
        page.token, page.stream = token[1], stream[1]


async def poll(port: int, page: Page, tally: Tally) -> None:
    """The poll as htmx sends it: 204 when nothing changed, else the page (news)."""
    htmx = {
        "HX-Request": "true",
        "HX-Trigger": "live",
        "HX-Target": "live",
        "HX-Current-URL": f"http://127.0.0.1:{port}{page.path}",
    }
    request = head(port, page, f"{page.path}?live={page.token}", htmx)
    began = time.monotonic()
    try:
        status, headers, body = await asyncio.wait_for(get(port, request), TIMEOUT)
    except (TimeoutError, OSError):
        tally.add("lost", began, time.monotonic() - began)
        return
    took = time.monotonic() - began
    if status == 204:
        tally.add("poll-none", began, took)
    elif status == 200 and "hx-refresh" not in headers:
        tally.add("poll-news", began, took)
        tally.news.append((time.monotonic(), page.game_id, page.streaming))
        if token := TOKEN.search(body.decode(errors="replace")):
            page.token = token[1]
    else:
        tally.add(f"poll-{status}", began, took)


async def polling(port: int, page: Page, every: float, tally: Tally) -> None:
    """htmx's ``every <n>s, news from:body``: a poll every ``every`` seconds, and one at
    once when the stream brings news."""
    next_at = time.monotonic() + every
    while True:
        try:
            await asyncio.wait_for(page.news.wait(), max(0.0, next_at - time.monotonic()))
            page.news.clear()
        except TimeoutError:
            next_at += every
        await poll(port, page, tally)


async def listening(port: int, page: Page, tally: Tally) -> None:
    """The page's EventSource: the stream held open; a refusal ends it for good, an end
    or a drop opens it again after its ``retry``, with the last id it saw."""
    last_id = ""
    retry = 3.0
    while True:
        extra = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
        if last_id:
            extra["Last-Event-ID"] = last_id
        began = time.monotonic()
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", port), TIMEOUT
            )
        except (TimeoutError, OSError):
            tally.add("lost", began, time.monotonic() - began)
            await asyncio.sleep(retry)
            continue
        try:
            writer.write(head(port, page, page.stream, extra))
            try:
                top = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), TIMEOUT)
            except (TimeoutError, OSError, asyncio.IncompleteReadError):
                tally.add("lost", began, time.monotonic() - began)
                await asyncio.sleep(retry)
                continue
            status = int(top.split(b" ", 2)[1])
            if status != 200:
                tally.add("stream-refused" if status == 429 else f"stream-{status}", began,
                          time.monotonic() - began)  # fmt: skip
                return
            tally.add("stream", began, time.monotonic() - began)
            page.streaming = True
            tally.streams_open += 1
            try:
                chunked = b"transfer-encoding: chunked" in top.lower()
                async for frame in frames(reader, chunked):
                    fields = dict(line.split(": ", 1) for line in frame.split("\n") if ": " in line)
                    if "retry" in fields:
                        retry = int(fields["retry"]) / 1000
                    if "id" in fields:
                        last_id = fields["id"]
                    if fields.get("event") == "seat":
                        if page.heard:
                            page.news.set()
                        page.heard = True
            except (OSError, asyncio.IncompleteReadError, ValueError):
                pass
            finally:
                tally.streams_open -= 1
        finally:
            writer.close()
        await asyncio.sleep(retry)


async def frames(reader: asyncio.StreamReader, chunked: bool) -> AsyncIterator[str]:
    """The stream's frames (text between blank lines), as they come."""
    buffer = ""
    while True:
        if chunked:
            size = int((await reader.readline()).split(b";")[0], 16)
            if size == 0:
                return
            data = await reader.readexactly(size)
            await reader.readexactly(2)
        else:
            data = await reader.read(65536)
            if not data:
                return
        buffer += data.decode(errors="replace")
        while "\n\n" in buffer:
            frame, buffer = buffer.split("\n\n", 1)
            yield frame


async def open_page(port: int, page: Page, after: float, every: float, tally: Tally) -> None:
    await asyncio.sleep(after)
    await load(port, page, tally, "page")
    if not page.token:
        return
    jobs = [polling(port, page, every, tally)]
    if page.stream:
        jobs.append(listening(port, page, tally))
    await asyncio.gather(*jobs)


async def probing(port: int, pages: list[Page], every: float, tally: Tally) -> None:
    """A player loads their page every ``every`` seconds, open loop."""
    number = 0
    pending = set()
    try:
        while True:
            await asyncio.sleep(every)
            page = pages[number * 7919 % len(pages)]
            probe = Page(page.path, page.cookie, page.address, page.game_id)
            task = asyncio.create_task(load(port, probe, tally, "probe"))
            pending.add(task)
            task.add_done_callback(pending.discard)
            number += 1
    finally:
        for task in pending:
            task.cancel()


# --- what the server holds ----------------------------------------------------------------


def connections_at(port: int) -> int:
    """TCP connections established to ``port`` on this machine, server side."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":
                count += 1
    return count


class Backends:
    """CPU seconds of the PostgreSQL backends of one database (the server's children whose
    title names it), followed from sample to sample: other databases on the server do not
    count, and a backend that ends between two samples loses at most a second of its
    CPU."""

    def __init__(self, server: int, database: str) -> None:
        self.server = server
        self.title = f" {database} "
        self.base: dict[int, float] = {}
        self.seen: dict[int, float] = {}

    def now(self) -> dict[int, float]:
        found = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                # After the command's closing parenthesis: state, ppid, ..., utime (12th),
                # stime.
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
                if int(fields[1]) != self.server:
                    continue
                title = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("latin-1")
            except (OSError, ValueError):
                continue
            if self.title in f" {title} ":
                found[int(entry.name)] = (int(fields[11]) + int(fields[12])) / cpu.TICKS
        return found

    def start(self) -> None:
        self.base = self.now()
        self.seen = dict(self.base)

    def sample(self) -> None:
        self.seen.update(self.now())

    def spent(self) -> float:
        """CPU seconds since ``start``."""
        self.sample()
        return sum(value - self.base.get(pid, 0.0) for pid, value in self.seen.items())


async def sampling(
    port: int, tally: Tally, backends: Backends, samples: list[tuple[float, int, int]]
) -> None:
    """Every second: (moment, connections at the web port, streams the pages hold); and the
    database's backends' CPU."""
    while True:
        samples.append((time.monotonic(), connections_at(port), tally.streams_open))
        backends.sample()
        await asyncio.sleep(1)


def database_counters() -> dict[str, float]:
    """The benchmark's database's sessions, transactions and time in statements so far
    (a backend's statistics reach them at most a second late, and when it idles)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT sessions, xact_commit + xact_rollback, active_time FROM pg_stat_database "
            "WHERE datname = current_database()"
        )
        row = cursor.fetchone()
    return {"sessions": row[0], "transactions": row[1], "active_ms": row[2]}


# --- the games and their players ---------------------------------------------------------


def make_games(count: int) -> list[int]:
    """``count`` classic Liar's Dice games of SEATS seats, started; their ids."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from games import postal

    gm, _ = get_user_model().objects.get_or_create(username="bench-gm")
    ids = []
    for number in range(count):
        names = [f"g{number}p{n}" for n in range(SEATS)]
        game = postal.create_game(
            gm=gm,
            engine_key="liars-dice",
            title=f"Open pages {number}",
            players=[postal.Player(name, f"{name}@example.org") for name in names],
            options={"profile": "classic", "dice_per_player": DICE},
        )
        ids.append(postal.start_game(game.pk, now=timezone.now()).pk)
    return ids


def sign_in(port: int, game_ids: list[int], pages: int) -> list[Page]:
    """Each seat's player opens its magic link in a browser of its own; the pages in the
    order they open, players of a game at any time (so that some of each game's pages
    hold a stream, and some poll)."""
    from bench.web import Browser
    from games.models import Seat

    seats = Seat.objects.filter(game_id__in=game_ids).order_by("game_id", "position")[:pages]
    opened = []
    for number, seat in enumerate(seats, start=1):
        browser = Browser(port, number)
        path = browser.open_link(seat)
        browser.connection.close()
        opened.append(Page(path, browser.cookie(), browser.address, seat.game_id))
    random.Random(NAME).shuffle(opened)
    return opened


class Mover(threading.Thread):
    """Plays ``per_minute`` moves a minute, each the next of a game in turn, through the
    postal layer (a thread of its own: the pages' event loop is not held up)."""

    def __init__(self, game_ids: list[int], per_minute: float) -> None:
        super().__init__(daemon=True)
        self.game_ids = game_ids
        self.per_minute = per_minute
        self.halt = threading.Event()
        self.moves: list[tuple[float, int]] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        from django.db import connection
        from django.utils import timezone

        from bench import liars_moves
        from games import postal
        from games.models import Game, Order

        turn = 0
        try:
            while self.per_minute > 0 and not self.halt.wait(60 / self.per_minute):
                game = Game.objects.get(pk=self.game_ids[turn % len(self.game_ids)])
                turn += 1
                state = liars_moves.ENGINE.state_from_json(game.state)
                seat, text = liars_moves.next_move(state, BIDS_PER_ROUND)
                moment = time.monotonic()
                postal.accept_order(
                    game_id=game.pk,
                    position=seat,
                    text=text,
                    source=Order.Source.WEB,
                    now=timezone.now(),
                    step_number=game.step_number,
                )
                self.moves.append((moment, game.pk))
        except BaseException as error:
            self.error = error
        finally:
            connection.close()


# --- the run -----------------------------------------------------------------------------


@dataclass
class Phase:
    """One part of the hold: when, and what each part of the service spent meanwhile."""

    name: str
    start: float
    end: float
    cpu: dict[str, float]
    database: dict[str, float]
    redis_commands: int

    @property
    def minutes(self) -> float:
        return (self.end - self.start) / 60


@dataclass
class Held:
    """What the hold measured."""

    tally: Tally
    pages: list[Page]
    phases: list[Phase]
    # (moment, connections at the web port, streams held), every second of the hold.
    samples: list[tuple[float, int, int]]
    command: list[str]
    idle_cpu: dict[str, float]
    idle_seconds: float
    moves: list[tuple[float, int]]
    memory: list[dict[str, Any]]


Reading = tuple[dict[str, float], dict[str, float], int]


async def hold_pages(
    port: int,
    pages: list[Page],
    every: float,
    hold: float,
    probe_every: float,
    measure: Callable[[], Reading],
    backends: Backends,
    mover: Mover,
) -> tuple[Tally, list[Phase], list[tuple[float, int, int]]]:
    """Open the pages over one poll's interval, then hold them for ``hold`` seconds with
    nothing happening ("quiet"), then ``hold`` seconds more while ``mover`` plays and a
    player loads their page every ``probe_every`` seconds ("moves and loads").
    ``measure`` is called (in a thread: it reads the database) as each phase begins and
    as it ends."""
    tally = Tally()
    samples: list[tuple[float, int, int]] = []
    jobs = [
        asyncio.create_task(open_page(port, page, every * n / len(pages), every, tally))
        for n, page in enumerate(pages)
    ]
    # Every page opened, its stream asked for (or refused) and its first poll made.
    await asyncio.sleep(every + 5)
    jobs.append(asyncio.create_task(sampling(port, tally, backends, samples)))
    phases = []
    for name in ("quiet", "moves and loads"):
        before = await asyncio.to_thread(measure)
        backends.start()
        start = time.monotonic()
        if name != "quiet":
            mover.start()
            jobs.append(asyncio.create_task(probing(port, pages, probe_every, tally)))
        await asyncio.sleep(hold)
        end = time.monotonic()
        database = backends.spent()
        after = await asyncio.to_thread(measure)
        phases.append(
            Phase(
                name,
                start,
                end,
                cpu.spent(before[0], after[0]) | {"database": database},
                {key: after[1][key] - before[1][key] for key in after[1]},
                after[2] - before[2],
            )
        )
    mover.halt.set()
    for job in jobs:
        job.cancel()
    await asyncio.gather(*jobs, return_exceptions=True)
    await asyncio.to_thread(mover.join)
    return tally, phases, samples


def run(args: Any, redis_server: RedisServer) -> Held:
    from django.conf import settings
    from django.db import connection, connections

    from bench.web import compose_web
    from moderator.mail import queueing

    bench.fresh_database()
    redis_server.client.flushdb()
    queued = queueing.enqueue
    # The reports' sending is not what is measured: moves write their emails, none is sent.
    queueing.enqueue = bench.enqueue_nothing
    try:
        game_ids = make_games(math.ceil(args.pages / SEATS))
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        port = bench.free_port()
        server = cpu.postmaster()
        with bench.Processes() as processes:
            env = {}
            if args.streams_per_process is not None:
                env["API_STREAMS_PER_PROCESS"] = str(args.streams_per_process)
            command = compose_web(processes, "live-pages-web", port, env=env)
            pages = sign_in(port, game_ids, args.pages)
            groups = {"web": processes.running["live-pages-web"].pid}
            alone = {"redis": redis_server.process.pid}

            def measure() -> Reading:
                try:
                    return (
                        cpu.snapshot(groups, server, alone),
                        database_counters(),
                        redis_server.commands(),
                    )
                finally:
                    connections.close_all()  # this thread's

            backends = Backends(server, str(connection.settings_dict["NAME"]))
            # What the processes spend with no page open (the server: other databases too).
            idle_before = cpu.snapshot(groups, server, alone)
            backends.start()
            time.sleep(args.idle)
            idle_cpu = cpu.spent(idle_before, cpu.snapshot(groups, server, alone)) | {
                "database": backends.spent()
            }
            mover = Mover(game_ids, args.moves)
            try:
                tally, phases, samples = asyncio.run(
                    hold_pages(
                        port,
                        pages,
                        settings.LIVE_POLL_SECONDS,
                        args.hold,
                        args.probe_every,
                        measure,
                        backends,
                        mover,
                    )
                )
            finally:
                mover.halt.set()
                if mover.is_alive():
                    mover.join()
            if mover.error is not None:
                raise RuntimeError(f"a move failed: {mover.error!r}")
            memory = bench.resident_memory(processes)
            processes.check("live-pages-web")
    finally:
        queueing.enqueue = queued
    return Held(
        tally=tally,
        pages=pages,
        phases=phases,
        samples=samples,
        command=command,
        idle_cpu=idle_cpu,
        idle_seconds=args.idle,
        moves=mover.moves,
        memory=memory,
    )


# --- figures -----------------------------------------------------------------------------


def news_delays(held: Held, phase: Phase, every: float) -> list[dict[str, Any]]:
    """For each move early enough in ``phase``, how long until each page of its game was
    told by a poll answered with the page, for pages with a stream and pages without."""
    delays: dict[bool, list[float]] = {True: [], False: []}
    missed: Counter[bool] = Counter()
    streamed = Counter(page.game_id for page in held.pages if page.streaming)
    total = Counter(page.game_id for page in held.pages if page.token)
    for moment, game_id in held.moves:
        if moment > phase.end - every - 5:
            continue
        for kind, pages in ((True, streamed[game_id]), (False, total[game_id] - streamed[game_id])):
            told = sorted(
                at - moment
                for at, game, streaming in held.tally.news
                if game == game_id and streaming == kind and at >= moment
            )[:pages]
            delays[kind] += told
            missed[kind] += pages - len(told)
    rows = []
    for kind, name in ((True, "with a stream"), (False, "polling only")):
        values = delays[kind]
        rows.append(
            {
                "pages": name,
                "told": len(values),
                "missed": missed[kind],
                "p50_s": bench.percentile(values, 50) if values else math.nan,
                "max_s": max(values) if values else math.nan,
            }
        )
    return rows


def requests(held: Held, phase: Phase) -> list[dict[str, Any]]:
    """Requests of each kind made in ``phase``: how many a second, and how long they took."""
    seconds = phase.end - phase.start
    rows = []
    kinds = sorted(held.tally.answers, key=lambda k: (k not in ("page", "probe"), k))
    for kind in kinds:
        times = [1000 * took for took in held.tally.between(kind, phase.start, phase.end)]
        if not times:
            continue
        rows.append(
            {
                "phase": phase.name,
                "kind": kind,
                "count": len(times),
                "per_s": len(times) / seconds,
                "p50_ms": bench.percentile(times, 50),
                "p99_ms": bench.percentile(times, 99),
                "max_ms": max(times),
            }
        )
    return rows


def figures(held: Held, every: float) -> tuple[list[bench.Table], list[bench.Target]]:
    quiet, busy = held.phases
    opened = sum(1 for page in held.pages if page.token)
    refused = len(held.tally.answers.get("stream-refused", []))
    in_quiet = [s for s in held.samples if quiet.start <= s[0] < quiet.end] or [(0.0, 0, 0)]
    connections = [sample[1] for sample in in_quiet]
    streams = max(sample[2] for sample in in_quiet)
    per_kind = requests(held, quiet) + requests(held, busy)
    hold_row = {
        "pages": len(held.pages),
        "opened": opened,
        "streams": streams,
        "refused": refused,
        "polling": opened - streams,
        "conns_mean": sum(connections) / len(connections),
        "conns_max": max(connections),
        "rps": sum(row["count"] for row in per_kind if row["phase"] == quiet.name)
        / (quiet.end - quiet.start),
        "web_mb": sum(row["rss_mb"] for row in held.memory if row["process"] == "live-pages-web"),
    }
    cpu_rows = []
    parts = {
        "web": "web",
        "database": "PostgreSQL, this database",
        "postgres": "PostgreSQL, whole server",
        "redis": "Redis",
        # The players' browsers, and the moves in the second phase.
        "benchmark": "benchmark",
    }
    for part, title in parts.items():
        idle = held.idle_cpu[part] / (held.idle_seconds / 60)
        quietly = quiet.cpu[part] / quiet.minutes
        cpu_rows.append(
            {
                "part": title,
                "idle_s_min": idle,
                "quiet_s_min": quietly,
                "pages_s_min": quietly - idle,
                "per_page_ms_min": 1000 * (quietly - idle) / max(1, opened),
                "core_pct": 100 * (quietly - idle) / 60,
                "busy_s_min": busy.cpu[part] / busy.minutes,
            }
        )
    database = [
        {
            "phase": phase.name,
            "sessions_min": phase.database["sessions"] / phase.minutes,
            "transactions_min": phase.database["transactions"] / phase.minutes,
            "active_ms_min": phase.database["active_ms"] / phase.minutes,
            "redis_commands_min": phase.redis_commands / phase.minutes,
        }
        for phase in held.phases
    ]
    probes = next((row for row in per_kind if row["kind"] == "probe"), None)
    lost = len(held.tally.between("lost", quiet.start, busy.end))
    tables = [
        bench.Table(
            f"{len(held.pages)} open pages, quiet {quiet.end - quiet.start:.0f} s",
            [
                bench.Column("pages", "pages"),
                bench.Column("opened", "opened"),
                bench.Column("streams", "streams held"),
                bench.Column("refused", "streams refused"),
                bench.Column("polling", "polling only"),
                bench.Column("conns_mean", "connections mean", ".0f"),
                bench.Column("conns_max", "connections max"),
                bench.Column("rps", "req/s", ".1f"),
                bench.Column("web_mb", "web MB", ".0f"),
            ],
            [hold_row],
        ),
        bench.Table(
            "Requests by kind, in each phase",
            [
                bench.Column("phase", "phase"),
                bench.Column("kind", "kind"),
                bench.Column("count", "count"),
                bench.Column("per_s", "per s", ".2f"),
                bench.Column("p50_ms", "p50 ms", ".1f"),
                bench.Column("p99_ms", "p99 ms", ".1f"),
                bench.Column("max_ms", "max ms", ".1f"),
            ],
            per_kind,
        ),
        bench.Table(
            "CPU seconds a minute: no page open, the pages open and quiet (theirs: the "
            "difference), and with moves and page loads",
            [
                bench.Column("part", "part"),
                bench.Column("idle_s_min", "no page s/min", ".2f"),
                bench.Column("quiet_s_min", "quiet s/min", ".2f"),
                bench.Column("pages_s_min", "pages' s/min", ".2f"),
                bench.Column("per_page_ms_min", "per page ms/min", ".1f"),
                bench.Column("core_pct", "pages' % of a core", ".1f"),
                bench.Column("busy_s_min", "moves+loads s/min", ".2f"),
            ],
            cpu_rows,
        ),
        bench.Table(
            "The benchmark's database and Redis, a minute",
            [
                bench.Column("phase", "phase"),
                bench.Column("sessions_min", "PostgreSQL sessions", ".0f"),
                bench.Column("transactions_min", "transactions", ".0f"),
                bench.Column("active_ms_min", "ms in statements", ".0f"),
                bench.Column("redis_commands_min", "Redis commands", ".0f"),
            ],
            database,
        ),
    ]
    if held.moves:
        tables.append(
            bench.Table(
                f"News: from a move ({len(held.moves)} played) to each page of its game told "
                "by a poll answered with the page",
                [
                    bench.Column("pages", "pages"),
                    bench.Column("told", "told"),
                    bench.Column("missed", "missed"),
                    bench.Column("p50_s", "p50 s", ".1f"),
                    bench.Column("max_s", "max s", ".1f"),
                ],
                news_delays(held, busy, every),
            )
        )
    web = next(row for row in cpu_rows if row["part"] == "web")
    targets = [
        bench.Target(
            f"p99 of a player's page load while {opened} pages are open (and moves played)",
            "at most 100 ms (the seat page's target)",
            f"{probes['p99_ms']:.1f} ms over {probes['count']} loads; {lost} requests lost"
            if probes
            else f"no page load answered; {lost} requests lost",
            bool(probes and probes["p99_ms"] <= 100 and not lost),
        ),
    ]
    print(
        f"\nWeb CPU per open page: {web['per_page_ms_min']:.1f} ms a minute "
        f"({web['pages_s_min']:.2f} s a minute for {opened} pages)"
    )
    return tables, targets


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(f"interrupted by signal {signum}")


def main() -> None:
    parser = bench.arguments(__doc__.splitlines()[0], NAME)
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument(
        "--hold", type=float, default=120, help="seconds the pages are held, in each phase"
    )
    parser.add_argument("--idle", type=float, default=20, help="seconds measured with no page")
    parser.add_argument("--moves", type=float, default=6, help="moves a minute, in all games")
    parser.add_argument(
        "--probe-every", type=float, default=2, help="seconds between players' page loads"
    )
    parser.add_argument(
        "--streams-per-process",
        type=int,
        default=None,
        help="API_STREAMS_PER_PROCESS for the web processes (default: the setting's)",
    )
    args = parser.parse_args()
    if args.quick:
        args.pages, args.hold, args.idle, args.moves = 100, 40.0, 10.0, 12.0
    # The processes and the Redis server are stopped however the run ends.
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    with RedisServer() as redis_server:
        bench.configure("_bench_live_pages", redis_db=0, redis=redis_server.url)
        from django.conf import settings

        every = float(settings.LIVE_POLL_SECONDS)
        limits = {
            "LIVE_POLL_SECONDS": settings.LIVE_POLL_SECONDS,
            "API_STREAMS_MOST": settings.API_STREAMS_MOST,
            "API_STREAMS_PER_PROCESS": args.streams_per_process or settings.API_STREAMS_PER_PROCESS,
            "API_STREAM_SECONDS": settings.API_STREAM_SECONDS,
            "API_STREAM_LOOK_SECONDS": settings.API_STREAM_LOOK_SECONDS,
        }
        held = run(args, redis_server)
    tables, targets = figures(held, every)
    bench.report(
        args.json,
        name=NAME,
        title="Open pages: what live updates cost",
        quick=args.quick,
        method=(
            f"{len(held.pages)} seats of classic Liar's Dice games of {SEATS} seats, each "
            "signed in through its magic link in a browser of its own; the web command of "
            f"docker/compose.yaml (gunicorn {' '.join(held.command)}), default settings, a Redis "
            "server of the benchmark's own. The pages "
            f"open over one poll's interval ({every:.0f} s) and each does what games/live.js "
            "and htmx do: the page, then the seat's event stream (refused with 429 past "
            "API_STREAMS_MOST in all or API_STREAMS_PER_PROCESS in one web process: given "
            "up, as EventSource does; ended or dropped: opened again after its retry with "
            "Last-Event-ID), and the poll every LIVE_POLL_SECONDS (every page, stream or "
            "not, as live.js keeps it) and at once when the stream says the seat moved; each "
            "request a connection of its own, as the TLS proxy opens them. Once every page "
            f"has opened, two phases of {args.hold:.0f} s: quiet (nothing happens: what "
            f"open pages cost by themselves), then moves and loads ({args.moves:g} moves a "
            "minute, each the next of a game in turn, through postal.accept_order in the "
            f"benchmark's process; a player loads their page every {args.probe_every:g} s, "
            "open loop). CPU from /proc: the web processes (gunicorn and its workers), "
            "PostgreSQL's backends of the benchmark's database (sampled every second), the "
            "whole PostgreSQL server (other databases too), the benchmark's Redis, each less "
            f"its figure with no page open (over {args.idle:.0f} s before the pages open) "
            "for the pages' own. Connections: established at the web port, server side, "
            "sampled every second. PostgreSQL sessions and transactions: pg_stat_database "
            "of the benchmark's database."
        ),
        parameters={
            "pages": args.pages,
            "hold": args.hold,
            "idle": args.idle,
            "moves_per_minute": args.moves,
            "probe_every": args.probe_every,
            "seats_per_game": SEATS,
            **limits,
        },
        tables=tables,
        targets=targets,
    )
    if not held.tally.answers.get("probe"):
        sys.exit("no page load was answered during the hold")


if __name__ == "__main__":
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    main()
