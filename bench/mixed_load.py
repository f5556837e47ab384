"""Benchmark: players at work while a rush of deadlines resolves. bench/deadline_rush.py's
rush of 1,000 games (beat, the two workers and gunicorn of docker/compose.yaml, aiosmtpd),
and at its deadline 50 clients start on gunicorn, each a player's browser behind the TLS
proxy: post an order through the web form, open the page the post redirects to, think for
a second, and again; each client plays for 6 players of its own in turn (each from an
address of its own), each post the player's next of several different legal orders.

    .venv/bin/python bench/mixed_load.py [--quick] [--games 1000] [--clients 50]
        [--think 1.0] [--json var/bench/mixed_load.json]

The clients' games are 5-seat Choice games with early processing on; their players are
seats 0 to 3, so every post is checked for a complete step (early processing) and none
completes one: the post that resolves a step is bench/resolving_post.py's. Reported: the
order posts' p50 and p99 (and the page GETs'), how many of each, and the rush's times as
bench/deadline_rush.py reports them.

Database ``<DATABASE_URL>_bench_rush`` (bench/deadline_rush.py's, created and migrated for
the run), Redis database 10 (flushed).

The clients open a connection for each request when it is ready, as gunicorn sees players
through the TLS proxy. A client that connects and then thinks (wrk's ``delay()`` comes
after the connection) holds a sync worker while it thinks: with 50 such clients every page
waited about a second in gunicorn's accept queue, a figure of the load generator, not of
the service.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import deadline_rush as rush  # configures Django: imported first  # noqa: I001

import bench
from bench.choice_orders import TooFewOrders, orders_of
from bench.web import Browser, Player, exchange, page_after, request
from games.postal.access import SEATS_COOKIE
from games.models import Game

NAME = "mixed_load"
PLAYERS_PER_CLIENT = 6
ORDERS_PER_PLAYER = 6
PLAYED_SEATS = 4  # of 5: the fifth never posts, so no post completes its step


class Clients:
    """The clients of the mixed load, as rush.Load wants them: coroutines (bench/web.py's
    players) in a thread of their own, started at the deadline, stopped with the rush."""

    def __init__(self, clients: int, think: float) -> None:
        self.clients = clients
        self.think = think
        self.posts: list[float] = []
        self.pages: list[float] = []
        self.wrong: dict[str, int] = {}
        self.stopping = threading.Event()

    def make_games(self, start: datetime) -> None:
        players = self.clients * PLAYERS_PER_CLIENT
        # A tenth more: a seat whose dice leave it one order is not a player here.
        rush.make_games(-(-players * 11 // (10 * PLAYED_SEATS)), start, "mixed", early=True)

    def prepare(self, port: int) -> None:
        games = Game.objects.filter(title__startswith="mixed ").order_by("id")
        players: list[Player] = []
        for game in games:
            for seat in game.seats.filter(position__lt=PLAYED_SEATS).order_by("position"):
                try:
                    texts = orders_of(game.state, seat.position, ORDERS_PER_PLAYER)
                except TooFewOrders:  # the dice left this seat one order: not a player here
                    continue
                browser = Browser(port, 20000 + len(players), https=True)
                play = browser.open_link(seat)
                form = {
                    "csrfmiddlewaretoken": browser.csrf(play),
                    "step": str(game.step_number),
                    "seat": str(seat.position),
                    "entry": "text",
                }
                browser.connection.close()
                cookies = {
                    k: v for k, v in browser.cookies.items() if k in ("csrftoken", SEATS_COOKIE)
                }
                bodies = [urlencode(form | {"text": text}) for text in texts]
                players.append(Player(play, cookies, browser.address, bodies))
        per = PLAYERS_PER_CLIENT
        if len(players) < per * self.clients:
            raise RuntimeError(f"{len(players)} players for {self.clients} clients of {per}")
        self.players = [players[n * per : (n + 1) * per] for n in range(self.clients)]
        self.port = port

    def start(self) -> None:
        self.began = time.perf_counter()
        self.thread = threading.Thread(target=asyncio.run, args=(self._load(),), daemon=True)
        self.thread.start()

    async def _load(self) -> None:
        await asyncio.gather(*(self._client(players) for players in self.players))

    async def _client(self, players: list[Player]) -> None:
        """A player's post, the page it is sent back to, a thought; the next player's."""
        turn = 0
        while not self.stopping.is_set():
            player = players[turn % len(players)]
            turn += 1
            player.sent += 1
            body = player.bodies[player.sent % len(player.bodies)]
            post = request("POST", self.port, player, body, https=True)
            status, headers, took = await exchange(self.port, post)
            if (status, headers.get("location", [""])[0]) != (302, player.path):
                self._count_wrong(f"post answered {status}")
            self.posts.append(took)
            page = request("GET", self.port, page_after(player, headers), https=True)
            status, _, took = await exchange(self.port, page)
            if status != 200:
                self._count_wrong(f"page answered {status}")
            self.pages.append(took)
            await asyncio.sleep(self.think)

    def _count_wrong(self, what: str) -> None:
        self.wrong[what] = self.wrong.get(what, 0) + 1

    def stop(self) -> dict[str, Any]:
        self.stopping.set()
        self.thread.join(timeout=60)
        seconds = time.perf_counter() - self.began
        if not self.posts or self.wrong:
            raise RuntimeError(f"the clients' run is void: {len(self.posts)} posts, {self.wrong}")
        ms = 1000.0
        return {
            "seconds": seconds,
            "posts": len(self.posts),
            "gets": len(self.pages),
            "post_p50": ms * bench.percentile(self.posts, 50),
            "post_p99": ms * bench.percentile(self.posts, 99),
            "get_p50": ms * bench.percentile(self.pages, 50),
            "get_p99": ms * bench.percentile(self.pages, 99),
        }


COLUMNS = [
    bench.Column("games", "rush games"),
    bench.Column("clients", "clients"),
    bench.Column("posts", "posts"),
    bench.Column("posts_per_second", "posts/s", ".1f"),
    bench.Column("post_p50", "post p50 ms", ".0f"),
    bench.Column("post_p99", "post p99 ms", ".0f"),
    bench.Column("get_p50", "page p50 ms", ".0f"),
    bench.Column("get_p99", "page p99 ms", ".0f"),
    bench.Column("first", "first report s", ".1f"),
    bench.Column("last", "last report s", ".1f"),
]


def main() -> None:
    parser = bench.arguments(__doc__.splitlines()[0], NAME)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--think", type=float, default=1.0)
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()
    games, clients = (200, 10) if args.quick else (args.games, args.clients)
    run = rush.rush(games, args.timeout, Clients(clients, args.think))
    load = run["load"]
    row = {
        "games": games,
        "clients": clients,
        "posts": load["posts"],
        "posts_per_second": load["posts"] / load["seconds"],
        "post_p50": load["post_p50"],
        "post_p99": load["post_p99"],
        "get_p50": load["get_p50"],
        "get_p99": load["get_p99"],
        "first": run["reports"]["first"],
        "last": run["reports"]["last"],
    }
    bench.report(
        args.json,
        name=NAME,
        title="Mixed load: players during a rush",
        quick=args.quick,
        method=(
            f"bench/deadline_rush.py's rush of {games} games; at its deadline {clients} "
            "clients start (coroutines of the benchmark, bench/web.py), each a player's "
            "browser behind the TLS proxy, a connection per request opened when the request "
            "is ready (the proxy holds a thinking browser's connection, not gunicorn): post "
            "an order (the player's next of several legal ones, a new "
            f"revision each time), GET the page the post redirects to, think {args.think:g} "
            f"s, and again, for {PLAYERS_PER_CLIENT} players of its own in turn. Their games "
            "are 5-seat Choice games with early processing on, seats 0-3 played: every post "
            "is checked for a complete step and none completes one. Stopped when the rush's "
            "last report arrived."
        ),
        parameters={"games": games, "clients": clients, "think_seconds": args.think},
        tables=[bench.Table("Order posts and pages during the rush", COLUMNS, [row])],
        targets=[
            bench.Target(
                f"order posts of {clients} clients during the rush, p99",
                "under 200 ms",
                f"{row['post_p99']:.0f} ms",
                row["post_p99"] < 200,
            ),
            bench.Target(
                f"the rush of {games} games under that load: the last report",
                "within 40 s of the deadline",
                f"{row['last']:.1f} s",
                row["last"] <= 40,
            ),
        ],
    )


if __name__ == "__main__":
    main()
