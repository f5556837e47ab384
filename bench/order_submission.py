"""Benchmark: players posting orders through the web form, served by gunicorn, next to
the framework's limit (a bare Django view that writes one row, same gunicorn settings).

    .venv/bin/python bench/order_submission.py [--quick] [--clients 10 50 200]
        [--players 1000] [--seconds 15] [--slices 3] [--workers 5]
        [--json var/bench/order_submission.json]

``--players`` players, each a seat of a running 5-seat Choice game (early processing off,
so the step stays open), each with a browser of its own: it opens its magic link (GET and
POST /p/<token>/, then its seat page for the CSRF token) from an address of its own, sent
as a TLS proxy sends it (``X-Forwarded-For``, ``TRUSTED_PROXY_COUNT=1`` as in production
behind the proxy), so the product's rate limits apply to each player as to real ones.
Each player has several different legal orders of its step (worked out from the engine);
every post sends the next one, so every post is a new revision of the seat's order, with
its receipt coalesced as in production; never the same order twice in a row (which the
product acknowledges without a write). The clients share the players out; each client
posts for its players in turn, one post in flight at a time. wrk drives the posts, one
thread and one connection per client; the bare view gets the same number of clients.
A browser would follow the 302 with a GET of the page; that GET is not part of the figure.

Needs wrk (``apt-get install wrk``). Database ``<DATABASE_URL>_bench_orders`` (created and
migrated on each run), Redis database 8 (flushed).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench

bench.configure("_bench_orders", redis_db=8)

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench.choice_orders import orders_of  # noqa: E402
from bench.web import FORM, Browser, gunicorn, run_wrk  # noqa: E402
from games import access, postal  # noqa: E402
from games.models import Game, Order, Seat  # noqa: E402
from moderator.mail import queueing  # noqa: E402

NAME = "order_submission"
SEATS = 5

# One script for every wrk thread (one thread = one client = one connection). Each thread
# takes its client by the number setup() gave it; done() prints one JSON line.
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
  players = clients[number]
  unexpected = 0
  turn = 0
end

-- The next player of this client, with the next of its orders.
function request()
  turn = turn %% #players + 1
  local player = players[turn]
  player.sent = (player.sent or 0) %% #player.bodies + 1
  local headers = {
    ["Content-Type"] = "%(form)s", ["Origin"] = "%(origin)s",
    ["Cookie"] = player.cookie, ["X-Forwarded-For"] = player.address,
  }
  return wrk.format("POST", player.path, headers, player.bodies[player.sent])
end

function response(status, headers, body)
  if status ~= 302 then unexpected = unexpected + 1 end
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


# --- the players -------------------------------------------------------------------------


@dataclass
class Player:
    """One player as wrk sends its posts: its seat page, its browser's cookies, its address,
    and the bodies of its different orders, sent in turn."""

    path: str
    cookie: str
    address: str
    bodies: list[str]

    def lua(self) -> str:
        bodies = ", ".join(json.dumps(body) for body in self.bodies)
        return (
            f"{{path = {json.dumps(self.path)}, cookie = {json.dumps(self.cookie)}, "
            f"address = {json.dumps(self.address)}, bodies = {{{bodies}}}}}"
        )


def make_games(count: int, seats: int) -> list[Game]:
    """``count`` running Choice games, early processing off, step 1 open for 48 hours."""
    gm, _ = get_user_model().objects.get_or_create(username="bench-gm")
    names = [f"p{n}" for n in range(seats)]
    queued = queueing.enqueue
    queueing.enqueue = bench.enqueue_nothing  # the start reports are not what is measured
    try:
        return [
            postal.start_game(
                postal.create_game(
                    gm=gm,
                    engine_key="choice",
                    title=f"orders {number}",
                    players=[postal.Player(name, f"{name}@example.org") for name in names],
                    early_processing=False,
                ).pk,
                now=timezone.now(),
            )
            for number in range(count)
        ]
    finally:
        queueing.enqueue = queued


def sign_in(port: int, number: int, game: Game, position: int, orders: int) -> Player:
    """A player opens its magic link, as a browser does, and posts its first order; returns
    the player with its different orders to post in turn."""
    seat = Seat.objects.get(game=game, position=position)
    token = access.mint([seat], now=timezone.now())[position]
    browser = Browser(port, number)
    link = f"/p/{token}/"
    answer = browser.request("POST", link, {"csrfmiddlewaretoken": browser.csrf(link)})
    play = f"/play/{game.pk}/{position}/"
    if (answer.status, answer.location) != (302, play):
        raise RuntimeError(f"POST {link} answered {answer.status}, not a redirect to {play}")
    form = {
        "csrfmiddlewaretoken": browser.csrf(play),
        "step": str(game.step_number),
        "seat": str(position),
        "entry": "text",
    }
    bodies = [urlencode(form | {"text": text}) for text in orders_of(game.state, position, orders)]
    answer = browser.request("POST", play, dict(parse_qsl(bodies[-1])))
    if (answer.status, answer.location) != (302, play):
        raise RuntimeError(f"the order form answered {answer.status}: {answer.text[:2000]}")
    browser.connection.close()
    # The messages cookie is left out: the next GET of the page would have consumed it.
    cookie = browser.cookie("csrftoken", access.SEATS_COOKIE)
    return Player(play, cookie, browser.address, bodies)


def bare_player(number: int, game: Game) -> Player:
    step = game.steps.get(number=game.step_number)
    body = urlencode({"game": game.pk, "step": step.pk, "text": "bare"})
    return Player("/bare/", "", f"10.200.{number // 256 % 256}.{number % 256}", [body])


def shared_out(players: list[Player], clients: int) -> list[list[Player]]:
    """The players dealt to ``clients`` clients in turn."""
    return [players[number::clients] for number in range(clients)]


# --- the load ----------------------------------------------------------------------------


def wrk(port: int, clients: list[list[Player]], seconds: float) -> dict[str, float]:
    """Run wrk with one thread and one connection per client for ``seconds``."""
    tables = ["{" + ", ".join(player.lua() for player in players) + "}" for players in clients]
    script = LUA % {
        "clients": "{" + ",\n".join(tables) + "}",
        "form": FORM,
        "origin": f"http://127.0.0.1:{port}",
    }
    return run_wrk(port, script, len(clients), seconds)


def measure(
    runs: dict[str, tuple[int, list[list[Player]]]], seconds: float, warmup: float, slices: int
) -> dict[str, dict[str, Any]]:
    """Each view (name -> its port and clients' players) for ``seconds`` in all, in ``slices`` runs
    taken in turn (orders, bare, orders, ...), so that both see the machine as it is
    over the same minute: on a shared virtual machine the speed drifts from one quarter
    minute to the next. Requests per second: all the slices' requests over their
    durations; p99: the highest slice's (an upper bound); p50: the slices' median."""
    for port, clients in runs.values():
        wrk(port, clients, warmup)
    taken: dict[str, list[dict[str, float]]] = {name: [] for name in runs}
    for _ in range(slices):
        for name, (port, clients) in runs.items():
            taken[name].append(wrk(port, clients, seconds / slices))
    bench.flush_redis()  # the receipts' send tasks that no mail worker takes
    measured = {}
    for name, parts in taken.items():
        duration = sum(part["duration_us"] for part in parts)
        p50s = sorted(part["p50_us"] for part in parts)
        measured[name] = {
            "clients": len(runs[name][1]),
            "requests": int(sum(part["requests"] for part in parts)),
            "rps": sum(part["requests"] for part in parts) / (duration / 1e6),
            "p50_ms": p50s[len(p50s) // 2] / 1000,
            "p99_ms": max(part["p99_us"] for part in parts) / 1000,
            "errors": int(sum(part["unexpected"] + part["socket_errors"] for part in parts)),
            "wrk_cpu_pct": sum(p["wrk_cpu_pct"] * p["duration_us"] for p in parts) / duration,
            "machine_cpu_pct": sum(p["machine_cpu_pct"] * p["duration_us"] for p in parts)
            / duration,
        }
    return measured


COLUMNS = [
    bench.Column("clients", "clients"),
    bench.Column("view", "view"),
    bench.Column("requests", "requests"),
    bench.Column("rps", "req/s", ".1f"),
    bench.Column("p50_ms", "p50 ms", ".1f"),
    bench.Column("p99_ms", "p99 ms", ".1f"),
    bench.Column("errors", "not 302"),
    bench.Column("wrk_cpu_pct", "wrk CPU %", ".1f"),
    bench.Column("machine_cpu_pct", "machine CPU %", ".1f"),
]
RATIO_COLUMNS = [
    bench.Column("clients", "clients"),
    bench.Column("orders_rps", "orders/s", ".1f"),
    bench.Column("bare_rps", "bare/s", ".1f"),
    bench.Column("ratio", "orders/bare", ".2f"),
    bench.Column("orders_p99_ms", "orders p99 ms", ".1f"),
]


def main() -> None:
    parser = bench.arguments(__doc__.splitlines()[0], NAME)
    parser.add_argument("--clients", type=int, nargs="+", default=[10, 50, 200])
    parser.add_argument("--players", type=int, default=1000, help="seats posting orders")
    parser.add_argument("--orders", type=int, default=6, help="different orders per player")
    parser.add_argument("--seconds", type=float, default=15, help="measured time per run")
    parser.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1) + 1)
    parser.add_argument(
        "--slices", type=int, default=3, help="runs per view and client count, taken in turn"
    )
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is needed: apt-get install wrk")
    levels = [5, 10] if args.quick else args.clients
    seconds, warmup = (3.0, 1.0) if args.quick else (args.seconds, 3.0)
    players_wanted = 100 if args.quick else args.players

    bench.fresh_database()
    bench.flush_redis()
    games = make_games(-(-players_wanted // SEATS), SEATS)
    seats = [(game, position) for game in games for position in range(SEATS)]
    seats = seats[:players_wanted]
    connection.close()
    orders_port, bare_port = bench.free_port(), bench.free_port()
    rows: list[dict[str, Any]] = []
    ratios: list[dict[str, Any]] = []
    with bench.Processes() as processes:
        gunicorn(processes, "gunicorn-orders", "moderator.wsgi", orders_port, args.workers)
        gunicorn(processes, "gunicorn-bare", "bench.bare_wsgi", bare_port, args.workers)
        began = time.perf_counter()
        players = [
            sign_in(orders_port, n, game, position, args.orders)
            for n, (game, position) in enumerate(seats)
        ]
        print(f"{len(players)} players signed in in {time.perf_counter() - began:.0f} s")
        bare = [bare_player(n, game) for n, (game, _) in enumerate(seats)]
        for clients in levels:
            measured = measure(
                {
                    "orders": (orders_port, shared_out(players, clients)),
                    "bare": (bare_port, shared_out(bare, clients)),
                },
                seconds,
                warmup,
                args.slices,
            )
            orders = measured["orders"] | {"view": "orders"}
            limit = measured["bare"] | {"view": "bare"}
            rows += [orders, limit]
            ratios.append(
                {
                    "clients": clients,
                    "orders_rps": orders["rps"],
                    "bare_rps": limit["rps"],
                    "ratio": orders["rps"] / limit["rps"],
                    "orders_p99_ms": orders["p99_ms"],
                    "errors": orders["errors"],
                }
            )
            print(f"{clients} clients: {orders['rps']:.0f} orders/s, {limit['rps']:.0f} bare/s")
    targets = [
        bench.Target(
            f"order posts per second at {r['clients']} clients, as a share of the bare view's",
            "at least 0.50",
            f"{r['ratio']:.2f}",
            r["ratio"] >= 0.5 and r["orders_rps"] > 0,
        )
        for r in ratios
    ]
    targets += [
        bench.Target(
            "p99 latency of order posts at 50 clients",
            "under 100 ms",
            f"{r['orders_p99_ms']:.1f} ms",
            r["orders_p99_ms"] < 100 and r["orders_rps"] > 0,
        )
        for r in ratios
        if r["clients"] == 50
    ]
    targets += [
        bench.Target(
            f"order posts answered other than 302 at {r['clients']} clients",
            "none (a rate limit or an error would show here)",
            str(r["errors"]),
            r["errors"] == 0,
        )
        for r in ratios
    ]
    bench.report(
        args.json,
        name=NAME,
        title="Order submission through the web form (gunicorn)",
        quick=args.quick,
        method=(
            f"gunicorn, {args.workers} sync workers, DEBUG off, TRUSTED_PROXY_COUNT=1 (as "
            "behind the TLS proxy); wrk with one thread and one connection per client (a new "
            f"one per post: gunicorn's sync workers close each), {seconds:.0f} s per view "
            f"and client count after {warmup:.0f} s of warm-up, in {args.slices} slices "
            "taken in turn (orders, bare, orders, ...: the views see the machine as it is "
            "over the same minute); req/s over all slices, p99 the highest slice's, p50 "
            "the slices' median. "
            f"{len(players)} players, each a seat of a {SEATS}-seat Choice game (early "
            "processing off, so the step stays open), signed in through its magic link from "
            "an address of its own (X-Forwarded-For): the product's rate limits apply to "
            "each as to a real player. The clients share the players out and post for them "
            f"in turn; each post sends the player's next of its {args.orders} different "
            "legal orders (its NMR default with the dice paired in other ways): a new "
            "revision and a coalesced receipt every time, answered 302 (the GET that "
            "follows in a browser is not counted). The bare view (bench/bare_wsgi.py) "
            "writes one Event row in a transaction under the same settings, database "
            "engine and middleware (the framework's limit: the targets' ratio). 'wrk CPU "
            "%' and 'machine CPU %' are shares of all cores during the run."
        ),
        parameters={
            "clients": levels,
            "players": len(players),
            "orders_per_player": args.orders,
            "seconds": seconds,
            "warmup": warmup,
            "workers": args.workers,
            "seats": SEATS,
            "slices": args.slices,
            "orders_stored": Order.objects.count(),
        },
        tables=[
            bench.Table("Every run", COLUMNS, rows),
            bench.Table("Order posts against the bare view", RATIO_COLUMNS, ratios),
        ],
        targets=targets,
    )


if __name__ == "__main__":
    main()
