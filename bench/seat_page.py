"""Benchmark: a player's seat page in a long game and in a short one, served by gunicorn,
next to the framework's limit (a bare Django view that reads one row, same settings).

    .venv/bin/python bench/seat_page.py [--quick] [--steps 1000] [--clients 20]
        [--seconds 15] [--slices 3] [--gap 2] [--open-seconds 60]
        [--json var/bench/seat_page.json]

Two classic Liar's Dice games of six players, each played through the postal layer
(``postal.accept_order``, every move a step: each bid opens the next player's step, each
challenge ends the round and rolls the next; bench/liars_moves.py): one to step
``--steps``, one to step 10. The short game is dealt as many dice as the long one has left
in play, so both pages offer a menu of the same size and show boards alike: what differs
is the history. The player on turn in each opens its seat page through a magic link, as
a browser does (bench/web.py), served by the web command of docker/compose.yaml (its
gunicorn workers and threads). The bare view (bench/bare_urls.py, ``GET
/bare/seat/<id>/``) reads the same seat with its game in one query under the same
settings, database connection settings and middleware, served by the same command.

Two loads, each view in ``--slices`` runs taken in turn so that all see the machine as it
is over the same minute:

- Closed loop (saturation): wrk GETs the page with the browser's cookie, one thread and
  one connection per client, each client from an address of its own, each asking again
  the moment it has its answer. Latency there is the clients over the throughput: this is
  the page's throughput against the bare view's.
- Open loop (players): each of the clients opens the page at a human pace, its own
  arrivals a Poisson process of mean gap ``--gap`` seconds (so the clients together a
  Poisson process of clients / gap a second), each on a connection of its own as the TLS
  proxy opens them, whether or not its previous page has come yet. Independent players
  do not wait for each other, and their chance bunching is what a p99 is about; the
  target is read here.

In process (Django's test client): the queries of each page and the CPU of rendering it.

Needs wrk (``apt-get install wrk``). Database ``<DATABASE_URL>_bench_seat_page`` (created
and migrated on each run), Redis database 14 (flushed).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import statistics
import sys
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# The in-process measurement speaks plain HTTP to a production-like configuration.
for name, value in {
    "SECURE_SSL_REDIRECT": "false",
    "SESSION_COOKIE_SECURE": "false",
    "CSRF_COOKIE_SECURE": "false",
    "ALLOWED_HOSTS": "testserver",
}.items():
    os.environ.setdefault(name, value)

import bench  # noqa: E402

bench.configure("_bench_seat_page", redis_db=14)

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client, override_settings  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench import liars_moves  # noqa: E402
from bench.web import Browser, compose_web, exchange, run_wrk  # noqa: E402
from games import postal  # noqa: E402
from games.models import Event, Game, Order, Seat  # noqa: E402
from games.postal import access  # noqa: E402
from moderator.mail import queueing  # noqa: E402

NAME = "seat_page"
PLAYERS = 6
DICE = 10
BIDS_PER_ROUND = 20
SHORT_STEPS = 10

# One thread per client; each GETs its page, again and again.
LUA = r"""
local clients = %(clients)s
local threads = {}
local count = 0

function setup(thread)
  count = count + 1
  thread:set("number", count)
  table.insert(threads, thread)
end

function init(args)
  client = clients[number]
  unexpected = 0
end

function request()
  local headers = {["Cookie"] = client.cookie, ["X-Forwarded-For"] = client.address}
  return wrk.format("GET", client.path, headers)
end

function response(status, headers, body)
  if status ~= 200 then unexpected = unexpected + 1 end
end

function done(summary, latency, requests)
  local wrong = 0
  for _, thread in ipairs(threads) do wrong = wrong + thread:get("unexpected") end
  local errors = summary.errors
  io.write(string.format(
    'BENCH {"requests": %%d, "duration_us": %%d, "p50_us": %%d, "p99_us": %%d, ' ..
    '"unexpected": %%d, "socket_errors": %%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    wrong, errors.connect + errors.read + errors.write + errors.timeout))
end
"""


@dataclass(frozen=True)
class Page:
    """A page as wrk asks for it: its address, and a browser's cookie and address."""

    path: str
    cookie: str
    address: str

    def lua(self) -> str:
        return (
            f"{{path = {json.dumps(self.path)}, cookie = {json.dumps(self.cookie)}, "
            f"address = {json.dumps(self.address)}}}"
        )


def play(steps: int, dice: int, title: str) -> Game:
    """A classic Liar's Dice game of PLAYERS seats with ``dice`` each, played to step
    ``steps`` through the postal layer, a minute a step, ending now."""
    gm, _ = get_user_model().objects.get_or_create(username="bench-gm")
    names = [f"p{n}" for n in range(PLAYERS)]
    began = timezone.now() - timedelta(minutes=steps)
    game = postal.create_game(
        gm=gm,
        engine_key="liars-dice",
        title=title,
        players=[postal.Player(name, f"{name}@example.org") for name in names],
        options={"profile": "classic", "dice_per_player": dice},
    )
    game = postal.start_game(game.pk, now=began)
    engine = liars_moves.ENGINE
    while game.step_number < steps:
        seat, text = liars_moves.next_move(engine.state_from_json(game.state), BIDS_PER_ROUND)
        postal.accept_order(
            game_id=game.pk,
            position=seat,
            text=text,
            source=Order.Source.WEB,
            now=began + timedelta(minutes=game.step_number),
            step_number=game.step_number,
        )
        game = Game.objects.get(pk=game.pk)
        if game.status != Game.Status.RUNNING:
            raise RuntimeError(f"{title} ended at step {game.step_number}: give it more dice")
    return game


def page_request(port: int, page: Page) -> bytes:
    """A browser's GET of ``page`` as the TLS proxy passes it on: a connection of its own."""
    lines = [
        f"GET {page.path} HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        f"X-Forwarded-For: {page.address}",
        "Connection: close",
    ]
    if page.cookie:
        lines.append(f"Cookie: {page.cookie}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def arrivals(
    port: int, pages: list[Page], gap: float, seconds: float, seed: int
) -> list[tuple[float, int]]:
    """Each client GETs its page at the times of a Poisson process of mean gap ``gap``
    seconds for ``seconds``, whether or not its previous page has come; (seconds to the
    last byte, status) of each GET. A page not there after 60 s counts as status 0."""
    loop = asyncio.get_running_loop()
    began = loop.time()
    taken: list[tuple[float, int]] = []
    pending: list[asyncio.Task[None]] = []

    async def one(page: Page) -> None:
        try:
            status, _, took = await asyncio.wait_for(exchange(port, page_request(port, page)), 60)
        except (TimeoutError, OSError):
            status, took = 0, 60.0
        taken.append((took, status))

    async def client(number: int, page: Page) -> None:
        chance = random.Random(f"{seed}-{number}")
        at = began + chance.expovariate(1 / gap)
        while at < began + seconds:
            await asyncio.sleep(at - loop.time())
            pending.append(asyncio.create_task(one(page)))
            at += chance.expovariate(1 / gap)

    await asyncio.gather(*(client(n, page) for n, page in enumerate(pages)))
    await asyncio.gather(*pending)
    return taken


def open_loop(
    runs: dict[str, tuple[int, list[Page]]], gap: float, seconds: float, slices: int
) -> dict[str, dict[str, Any]]:
    """Each view (name -> its port and clients' pages) under players' arrivals
    (``arrivals``) for ``seconds`` in all, in ``slices`` runs taken in turn; p50 and p99
    of all its GETs together (arrivals are independent of the answers: the slices' GETs
    are one sample)."""
    taken: dict[str, list[tuple[float, int]]] = {name: [] for name in runs}
    busy: dict[str, list[float]] = {name: [0.0, 0.0] for name in runs}
    for part in range(slices):
        for name, (port, pages) in runs.items():
            before = bench.busy_cpu()
            taken[name] += asyncio.run(arrivals(port, pages, gap, seconds / slices, part))
            after = bench.busy_cpu()
            busy[name][0] += after[0] - before[0]
            busy[name][1] += after[1] - before[1]
    measured = {}
    for name, answers in taken.items():
        times = [1000 * took for took, status in answers if status == 200]
        wrong = len(answers) - len(times)
        if not times or wrong:
            raise RuntimeError(f"{name}: {wrong} of {len(answers)} GETs were not answered 200")
        measured[name] = {
            "view": name,
            "clients": len(runs[name][1]),
            "gap_s": gap,
            "requests": len(times),
            "rps": len(times) / seconds,
            "p50_ms": bench.percentile(times, 50),
            "p99_ms": bench.percentile(times, 99),
            "max_ms": max(times),
            "machine_cpu_pct": 100 * busy[name][0] / busy[name][1],
        }
    return measured


def on_turn(game: Game) -> Seat:
    return Seat.objects.get(game=game, position=liars_moves.ENGINE.state_from_json(game.state).turn)


def dice_in_play(game: Game) -> int:
    return sum(liars_moves.ENGINE.state_from_json(game.state).counts)


def sign_in(port: int, number: int, seat: Seat) -> Page:
    """The seat's player opens its link in a browser of its own; its page must show the
    order form (the seat is on turn)."""
    browser = Browser(port, number)
    path = browser.open_link(seat)
    answer = browser.request("GET", path)
    if answer.status != 200 or 'id="menu-form"' not in answer.text:
        raise RuntimeError(f"GET {path} answered {answer.status} without the order form")
    browser.connection.close()
    return Page(path, browser.cookie(), browser.address)


def in_process(seat: Seat, rounds: int, bare: bool = False) -> dict[str, float]:
    """Queries and CPU (this process, the median of ``rounds``) of the seat's page through
    Django's test client, signed in through a link as a browser is; or (``bare``) of the
    bare view reading the seat."""
    client = Client(REMOTE_ADDR="10.250.0.1")
    if bare:
        path = f"/bare/seat/{seat.pk}/"
        with override_settings(ROOT_URLCONF="bench.bare_urls"):
            return in_process_get(client, path, rounds)
    token = access.mint([seat], now=timezone.now())[seat.position]
    if client.post(f"/p/{token}/").status_code != 302:
        raise RuntimeError("the magic link did not open the seat")
    return in_process_get(client, f"/play/{seat.game_id}/{seat.position}/", rounds)


def in_process_get(client: Client, path: str, rounds: int) -> dict[str, float]:
    if client.get(path).status_code != 200:
        raise RuntimeError(f"GET {path} did not answer 200")
    with CaptureQueriesContext(connection) as captured:
        client.get(path)
    queries = len(captured)  # now: the next request empties the log it reads
    taken = []
    for _ in range(rounds):
        began = time.process_time()
        response = client.get(path)
        taken.append(1000 * (time.process_time() - began))
    return {
        "queries": queries,
        "cpu_ms": statistics.median(taken),
        "kb": len(response.content) / 1024,
    }


def measure(
    runs: dict[str, tuple[int, list[Page]]], seconds: float, warmup: float, slices: int
) -> dict[str, dict[str, Any]]:
    """Each view (name -> its port and clients' pages) for ``seconds`` in all, in ``slices``
    runs taken in turn. Requests per second: all the slices' requests over their
    durations; p99: the highest slice's (an upper bound); p50: the slices' median."""

    def script(pages: list[Page]) -> str:
        return LUA % {"clients": "{" + ",\n".join(page.lua() for page in pages) + "}"}

    for port, pages in runs.values():
        run_wrk(port, script(pages), len(pages), warmup)
    taken: dict[str, list[dict[str, float]]] = {name: [] for name in runs}
    for _ in range(slices):
        for name, (port, pages) in runs.items():
            taken[name].append(run_wrk(port, script(pages), len(pages), seconds / slices))
    measured = {}
    for name, parts in taken.items():
        duration = sum(part["duration_us"] for part in parts)
        requests = sum(part["requests"] for part in parts)
        measured[name] = {
            "view": name,
            "clients": len(runs[name][1]),
            "requests": int(requests),
            "rps": requests / (duration / 1e6),
            "p50_ms": sorted(part["p50_us"] for part in parts)[len(parts) // 2] / 1000,
            "p99_ms": max(part["p99_us"] for part in parts) / 1000,
            "errors": int(sum(part["unexpected"] + part["socket_errors"] for part in parts)),
            "machine_cpu_pct": sum(p["machine_cpu_pct"] * p["duration_us"] for p in parts)
            / duration,
            "wrk_cpu_pct": sum(p["wrk_cpu_pct"] * p["duration_us"] for p in parts) / duration,
        }
        if requests == 0:
            raise RuntimeError(f"{name}: wrk made no request: {parts}")
        if measured[name]["errors"]:
            raise RuntimeError(f"{name}: {measured[name]['errors']} answers were not 200")
    return measured


OPEN_COLUMNS = [
    bench.Column("view", "view"),
    bench.Column("clients", "clients"),
    bench.Column("gap_s", "mean gap s", ".1f"),
    bench.Column("requests", "requests"),
    bench.Column("rps", "req/s", ".1f"),
    bench.Column("p50_ms", "p50 ms", ".1f"),
    bench.Column("p99_ms", "p99 ms", ".1f"),
    bench.Column("max_ms", "max ms", ".1f"),
    bench.Column("machine_cpu_pct", "machine CPU %", ".0f"),
]

COLUMNS = [
    bench.Column("view", "view"),
    bench.Column("steps", "steps"),
    bench.Column("events", "events"),
    bench.Column("clients", "clients"),
    bench.Column("requests", "requests"),
    bench.Column("rps", "req/s", ".1f"),
    bench.Column("p50_ms", "p50 ms", ".1f"),
    bench.Column("p99_ms", "p99 ms", ".1f"),
    bench.Column("queries", "queries"),
    bench.Column("cpu_ms", "CPU ms in process", ".2f"),
    bench.Column("kb", "kB", ".1f"),
    bench.Column("machine_cpu_pct", "machine CPU %", ".0f"),
]


def main() -> None:
    parser = bench.arguments(__doc__.splitlines()[0], NAME)
    parser.add_argument("--steps", type=int, default=1000, help="steps of the long game")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=15, help="measured time per view")
    parser.add_argument("--slices", type=int, default=3, help="runs per view, taken in turn")
    parser.add_argument(
        "--gap", type=float, default=2.0, help="open loop: mean seconds between a client's GETs"
    )
    parser.add_argument(
        "--open-seconds", type=float, default=60, help="open loop: measured time per view"
    )
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is needed: apt-get install wrk")
    steps = 200 if args.quick else args.steps
    seconds, warmup, rounds = (6.0, 2.0, 20) if args.quick else (args.seconds, 3.0, 100)
    open_seconds = 10.0 if args.quick else args.open_seconds
    slices = 2 if args.quick else args.slices

    bench.fresh_database()
    bench.flush_redis()
    queued = queueing.enqueue
    queueing.enqueue = bench.enqueue_nothing  # the reports' sending is not what is measured
    began = time.perf_counter()
    try:
        long = play(steps, DICE, f"{steps} steps")
        dice = max(1, round(dice_in_play(long) / PLAYERS))
        short = play(SHORT_STEPS, dice, f"{SHORT_STEPS} steps")
    finally:
        queueing.enqueue = queued
    print(f"Games played in {time.perf_counter() - began:.0f} s")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # as autovacuum would have, in a database this young
    games = {"long": long, "short": short}
    seats = {name: on_turn(game) for name, game in games.items()}
    rows = {
        name: {
            "steps": game.step_number,
            "events": Event.objects.filter(game=game).count(),
            "dice": dice_in_play(game),
        }
        | in_process(seats[name], rounds)
        for name, game in games.items()
    }
    rows["bare"] = {"steps": 0, "events": 0, "dice": 0} | in_process(seats["long"], rounds, True)
    connection.close()
    pages_port, bare_port = bench.free_port(), bench.free_port()
    with bench.Processes() as processes:
        command = compose_web(processes, "gunicorn-pages", pages_port)
        compose_web(processes, "gunicorn-bare", bare_port, app="bench.bare_wsgi")
        runs: dict[str, tuple[int, list[Page]]] = {}
        for number, (name, seat) in enumerate(seats.items()):
            page = sign_in(pages_port, number + 1, seat)
            runs[name] = (
                pages_port,
                [Page(page.path, page.cookie, f"10.9.{number}.{n}") for n in range(args.clients)],
            )
        bare = f"/bare/seat/{seats['long'].pk}/"
        runs["bare"] = (
            bare_port,
            [Page(bare, "", f"10.9.200.{n}") for n in range(args.clients)],
        )
        measured = measure(runs, seconds, warmup, slices)
        players = open_loop(
            {name: runs[name] for name in ("long", "bare")}, args.gap, open_seconds, slices
        )
    table = []
    for name in ("long", "short", "bare"):
        table.append(rows[name] | measured[name])
    long_row, short_row, bare_row = table
    growth = long_row["p99_ms"] / short_row["p99_ms"]
    cpu_growth = long_row["cpu_ms"] / short_row["cpu_ms"]
    share = long_row["rps"] / bare_row["rps"]
    open_rows = [players["long"] | {"view": "long"}, players["bare"] | {"view": "bare"}]
    at_pace = players["long"]["p99_ms"]
    targets = [
        bench.Target(
            f"p99 of the seat page of a {long_row['steps']}-step game, {args.clients} "
            f"players each opening it every {args.gap:g} s on average (open loop)",
            "at most 100 ms",
            f"{at_pace:.1f} ms (bare view {players['bare']['p99_ms']:.1f}; closed loop, "
            f"{args.clients} connections back to back: {long_row['p99_ms']:.1f}, bare "
            f"{bare_row['p99_ms']:.1f})",
            at_pace <= 100,
        ),
        bench.Target(
            f"p99 of that page against a {SHORT_STEPS}-step game's",
            "at most 1.25 times",
            f"{growth:.2f} (CPU in process: {cpu_growth:.2f}; queries "
            f"{long_row['queries']} and {short_row['queries']})",
            growth <= 1.25 and long_row["queries"] == short_row["queries"],
        ),
        bench.Target(
            "seat pages per second as a share of the bare view's (same settings)",
            "at least 0.50",
            f"{share:.2f}",
            share >= 0.5,
        ),
    ]
    bench.report(
        args.json,
        name=NAME,
        title="The seat page of a long game and of a short one (gunicorn)",
        quick=args.quick,
        method=(
            f"Two classic Liar's Dice games of {PLAYERS} players played through the postal "
            f"layer, every move a step ({BIDS_PER_ROUND} bids a round, then a challenge): "
            f"one to step {long_row['steps']} ({long_row['events']} events), one to step "
            f"{SHORT_STEPS}, dealt as many dice as the long one has left in play "
            f"({short_row['dice']} and {long_row['dice']}), so that both pages offer the "
            "same menu and board: what differs is the history. The seat on turn of each, "
            "signed in through its magic link; the web command of docker/compose.yaml "
            f"(gunicorn {' '.join(command)}), DEBUG off, TRUSTED_PROXY_COUNT=1. Closed loop "
            f"(saturation): wrk with {args.clients} clients (one thread and one "
            f"connection each, an address each) GETting the page back to back, "
            f"{seconds:.0f} s per view after {warmup:.0f} s of warm-up, in {slices} slices "
            "taken in turn (long, short, bare, long, ...); req/s over all slices, p99 the "
            "highest slice's, p50 the slices' median: latency there is the clients over "
            f"the throughput. Open loop (players): {args.clients} clients each opening the "
            f"page at the times of a Poisson process of mean gap {args.gap:g} s (together "
            f"{args.clients / args.gap:g} a second, bunched by chance as independent players "
            "are), each GET on a connection of its own as the TLS proxy opens them, not "
            f"waiting for the one before; {open_seconds:.0f} s per view in {slices} slices "
            "taken in turn (long, bare, long, ...), p50 and p99 of all its GETs. The bare "
            "view (bench/bare_urls.py) reads the same seat with its game in one query under "
            "the same settings module (database, connection health checks, middleware) and "
            "the same command: the framework's limit. In process (test client): queries "
            f"per page, median CPU of {rounds} pages."
        ),
        parameters={
            "steps": long_row["steps"],
            "short_steps": SHORT_STEPS,
            "clients": args.clients,
            "seconds": seconds,
            "warmup": warmup,
            "slices": slices,
            "gap": args.gap,
            "open_seconds": open_seconds,
            "web": "gunicorn " + " ".join(command),
            "players": PLAYERS,
        },
        tables=[
            bench.Table(
                f"Players at a human pace (open loop): {args.clients} clients, each every "
                f"{args.gap:g} s on average",
                OPEN_COLUMNS,
                open_rows,
            ),
            bench.Table(
                "Saturation (closed loop): the seat page and the bare view", COLUMNS, table
            ),
        ],
        targets=targets,
    )


if __name__ == "__main__":
    main()
