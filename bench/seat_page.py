"""Benchmark: a player's seat page in a long game and in a short one, served by gunicorn,
next to the framework's limit (a bare Django view that reads one row, same settings).

    .venv/bin/python bench/seat_page.py [--quick] [--steps 1000] [--clients 20]
        [--seconds 15] [--slices 3] [--workers 3] [--json var/bench/seat_page.json]

Two classic Liar's Dice games of six players, each played through the postal layer
(``postal.accept_order``, every move a step: each bid opens the next player's step, each
challenge ends the round and rolls the next; bench/liars_moves.py): one to step
``--steps``, one to step 10. The short game is dealt as many dice as the long one has left
in play, so both pages offer a menu of the same size and show boards alike: what differs
is the history. The player on turn in each opens its seat page through a magic link, as
a browser does (bench/web.py); wrk then GETs that page with the browser's cookie, one
thread and one connection per client, each client from an address of its own. The bare
view (bench/bare_urls.py, ``GET /bare/seat/<id>/``) reads the same seat with its game in
one query under the same settings, database connection settings and middleware.

The pages, the bare view, the pages again ...: ``--slices`` runs each, taken in turn so
that all see the machine as it is over the same minute. In process (Django's test
client): the queries of each page and the CPU of rendering it.

Needs wrk (``apt-get install wrk``). Database ``<DATABASE_URL>_bench_seat_page`` (created
and migrated on each run), Redis database 14 (flushed).
"""

from __future__ import annotations

import json
import os
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
from bench.web import Browser, gunicorn, production_workers, run_wrk  # noqa: E402
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
        "--workers", type=int, default=None, help="gunicorn workers (default: compose.yaml's)"
    )
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is needed: apt-get install wrk")
    workers = args.workers or production_workers()
    steps = 200 if args.quick else args.steps
    seconds, warmup, rounds = (6.0, 2.0, 20) if args.quick else (args.seconds, 3.0, 100)
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
        gunicorn(processes, "gunicorn-pages", "moderator.wsgi", pages_port, workers)
        gunicorn(processes, "gunicorn-bare", "bench.bare_wsgi", bare_port, workers)
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
    table = []
    for name in ("long", "short", "bare"):
        table.append(rows[name] | measured[name])
    long_row, short_row, bare_row = table
    growth = long_row["p99_ms"] / short_row["p99_ms"]
    cpu_growth = long_row["cpu_ms"] / short_row["cpu_ms"]
    share = long_row["rps"] / bare_row["rps"]
    print(f"long {long_row['p99_ms']:.1f} ms p99, short {short_row['p99_ms']:.1f}, bare "
          f"{bare_row['p99_ms']:.1f}")  # fmt: skip
    targets = [
        bench.Target(
            f"p99 of the seat page of a {long_row['steps']}-step game at {args.clients} clients",
            "under 150 ms",
            f"{long_row['p99_ms']:.1f} ms",
            long_row["p99_ms"] < 150,
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
            "signed in through its magic link; gunicorn with "
            f"{workers} sync workers as in docker/compose.yaml, DEBUG off, "
            f"TRUSTED_PROXY_COUNT=1; wrk with {args.clients} clients (one thread and one "
            f"connection each, an address each) GETting the page, {seconds:.0f} s per view "
            f"after {warmup:.0f} s of warm-up, in {slices} slices taken in turn (long, "
            "short, bare, long, ...); req/s over all slices, p99 the highest slice's, p50 "
            "the slices' median. The bare view (bench/bare_urls.py) reads the same seat "
            "with its game in one query under the same settings module (database, "
            "connection health checks, middleware): the framework's limit. In process "
            f"(test client): queries per page, median CPU of {rounds} pages."
        ),
        parameters={
            "steps": long_row["steps"],
            "short_steps": SHORT_STEPS,
            "clients": args.clients,
            "seconds": seconds,
            "warmup": warmup,
            "slices": slices,
            "workers": workers,
            "players": PLAYERS,
        },
        tables=[
            bench.Table("The seat page and the bare view", COLUMNS, table),
        ],
        targets=targets,
    )


if __name__ == "__main__":
    main()
