"""Benchmark: players posting orders through the web form, served by gunicorn, and the page
that follows each post, while the workers write and send the receipts; next to the
framework's limit (a bare Django view that writes one row, same gunicorn settings).

    .venv/bin/python bench/order_submission.py [--quick] [--clients 1 10 20 50]
        [--players 2000] [--seconds 15] [--workers 5] [--json var/bench/order_submission.json]

``--players`` players, four of each 5-seat Choice game (early processing on, as games
have it by default; the fifth seat is left to its deadline, so the step stays open and
every post runs the check whether all orders are in), each with a browser of its own: it
opens its magic link (GET and POST /p/<token>/, then its seat page for the CSRF token)
from an address of its own, sent as a TLS proxy sends it (``X-Forwarded-For``,
``TRUSTED_PROXY_COUNT=1`` as in production behind the proxy), so the product's rate
limits apply to each player as to real ones (20 posts a minute per seat: the players are
many enough that none is limited). Each player has several different legal orders of its
step (worked out from the engine); every post sends the next one, a new revision of the
seat's order every time, never the same order twice in a row (which the product
acknowledges without a write).

Each client is one browser at a time: it posts a player's order, follows the redirect
with a GET of the seat page (sending the cookies the answer set, as a browser does, so
the page shows and clears the "accepted" message), then takes its next player: one
request in flight per client, back to back. Latency is timed per request from the
connection's opening to the answer's last byte (gunicorn's sync workers close each
connection), post and page apart, and per pair. The clients are coroutines of this
process (asyncio, plain sockets): its CPU is reported next to the machine's.

During every run a Celery worker on the ``steps`` queue (receipts), one on ``mail`` and
beat run as in production, sending to a local SMTP server (aiosmtpd): the receipts are
written (every RECEIPT_SECONDS, coalesced per seat and step as in production) and sent
while the posts come in, their CPU on the same two cores.

Database ``<DATABASE_URL>_bench_orders`` (created and migrated on each run), Redis
database 8 (flushed; or ``BENCH_REDIS_DB``).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench

bench.configure("_bench_orders", redis_db=8)

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench.choice_orders import TooFewOrders, orders_of  # noqa: E402
from bench.web import Browser, Player, exchange, page_after, request  # noqa: E402
from games import postal  # noqa: E402
from games.models import Game, Order, Seat, Step  # noqa: E402
from games.postal import access  # noqa: E402
from moderator.mail import queueing  # noqa: E402
from moderator.mail.models import OutboundEmail  # noqa: E402

NAME = "order_submission"
SEATS = 5
PLAYING = 4  # seats of each game that post; the fifth keeps the step open


# --- the players -------------------------------------------------------------------------


def make_games(count: int, seats: int) -> list[Game]:
    """``count`` running Choice games, early processing on, step 1 open for 48 hours."""
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
                    early_processing=True,
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
    # The messages cookie is left out: the GET of the page would have consumed it.
    cookies = {k: v for k, v in browser.cookies.items() if k in ("csrftoken", access.SEATS_COOKIE)}
    return Player(play, cookies, browser.address, bodies)


def bare_player(number: int, game: Game) -> Player:
    step = game.steps.get(number=game.step_number)
    body = urlencode({"game": game.pk, "step": step.pk, "text": "bare"})
    return Player("/bare/", {}, f"10.200.{number // 256 % 256}.{number % 256}", [body])


def shared_out(players: list[Player], clients: int) -> list[list[Player]]:
    """The players dealt to ``clients`` clients in turn."""
    return [players[number::clients] for number in range(clients)]


# --- the load ----------------------------------------------------------------------------


@dataclass
class Timings:
    """What one run's clients saw: latencies in seconds, and what went wrong."""

    posts: list[float] = field(default_factory=list)
    pages: list[float] = field(default_factory=list)
    pairs: list[float] = field(default_factory=list)
    wrong: dict[str, int] = field(default_factory=dict)

    def count_wrong(self, what: str) -> None:
        self.wrong[what] = self.wrong.get(what, 0) + 1


async def client(
    port: int, players: list[Player], until: float, seen: Timings | None, follow: bool
) -> None:
    """One browser at a time, back to back: a player's post, the page it is sent back
    to (``follow``), then the next player's."""
    turn = 0
    while time.perf_counter() < until:
        player = players[turn % len(players)]
        turn += 1
        player.sent += 1
        body = player.bodies[player.sent % len(player.bodies)]
        status, headers, post = await exchange(port, request("POST", port, player, body))
        location = headers.get("location", [""])[0]
        if seen is not None and (status, location) != (302, player.path):
            seen.count_wrong(f"post answered {status}")
        if not follow:
            if seen is not None:
                seen.posts.append(post)
            continue
        status, _, got = await exchange(port, request("GET", port, page_after(player, headers)))
        if seen is not None:
            if status != 200:
                seen.count_wrong(f"page answered {status}")
            seen.posts.append(post)
            seen.pages.append(got)
            seen.pairs.append(post + got)


async def load(
    port: int, clients: list[list[Player]], seconds: float, follow: bool, seen: Timings | None
) -> None:
    until = time.perf_counter() + seconds
    await asyncio.gather(*(client(port, players, until, seen, follow) for players in clients))


def run(
    port: int, clients: list[list[Player]], seconds: float, warmup: float, follow: bool
) -> dict[str, Any]:
    """``warmup`` seconds unrecorded, then ``seconds`` recorded; the figures."""
    asyncio.run(load(port, clients, warmup, follow, None))
    seen = Timings()
    process, (busy, total) = time.process_time(), bench.busy_cpu()
    began = time.perf_counter()
    asyncio.run(load(port, clients, seconds, follow, seen))
    wall = time.perf_counter() - began
    used = time.process_time() - process
    busy_after, total_after = bench.busy_cpu()
    cores = os.cpu_count() or 1
    ms = 1000.0
    return {
        "clients": len(clients),
        "posts": len(seen.posts),
        "posts_per_second": len(seen.posts) / wall,
        "post_p50_ms": ms * bench.percentile(seen.posts, 50),
        "post_p99_ms": ms * bench.percentile(seen.posts, 99),
        "page_p50_ms": ms * bench.percentile(seen.pages, 50) if seen.pages else 0.0,
        "page_p99_ms": ms * bench.percentile(seen.pages, 99) if seen.pages else 0.0,
        "pair_p99_ms": ms * bench.percentile(seen.pairs, 99) if seen.pairs else 0.0,
        "errors": sum(seen.wrong.values()),
        "wrong": ", ".join(f"{k}: {v}" for k, v in sorted(seen.wrong.items())) or "none",
        "client_cpu_pct": 100 * used / (wall * cores),
        "machine_cpu_pct": 100 * (busy_after - busy) / (total_after - total),
    }


def start_workers(processes: bench.Processes, smtp_port: int) -> None:
    """A worker per queue and beat, as in production, sending to the local SMTP server."""
    env = {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": "127.0.0.1",
        "EMAIL_PORT": str(smtp_port),
        "SITE_URL": "http://127.0.0.1",
    }
    # Each worker takes its own queue and any other the routes name (the workers of
    # docs/operations.md).
    routes: dict[str, dict[str, str]] = settings.CELERY_TASK_ROUTES
    shared = sorted({route["queue"] for route in routes.values()} - {"steps", "mail"})
    for queue in ("steps", "mail"):
        processes.start(
            f"worker-{queue}",
            [
                "-m",
                "celery",
                "-A",
                "moderator",
                "worker",
                "--queues",
                ",".join([*shared, queue]),
                "--concurrency",
                "1",
                "--hostname",
                f"{queue}-bench@%h",
                "--loglevel",
                "WARNING",
            ],
            env,
        )
    schedule = bench.LOGS / "celerybeat-orders"
    processes.start(
        "beat",
        [
            "-m",
            "celery",
            "-A",
            "moderator",
            "beat",
            "--schedule",
            str(schedule),
            "--loglevel",
            "WARNING",
        ],
        env,
    )


def gunicorn(
    processes: bench.Processes,
    name: str,
    app: str,
    port: int,
    workers: int,
) -> None:
    env = {
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
    args = ["-m", "gunicorn", app, "--bind", f"127.0.0.1:{port}", "--workers", str(workers)]
    processes.start(name, args, env)
    processes.wait_until(name, lambda: bench.answers(f"http://127.0.0.1:{port}/healthz"))


COLUMNS = [
    bench.Column("clients", "clients"),
    bench.Column("view", "view"),
    bench.Column("posts", "posts"),
    bench.Column("posts_per_second", "posts/s", ".1f"),
    bench.Column("post_p50_ms", "post p50 ms", ".1f"),
    bench.Column("post_p99_ms", "post p99 ms", ".1f"),
    bench.Column("page_p50_ms", "page p50 ms", ".1f"),
    bench.Column("page_p99_ms", "page p99 ms", ".1f"),
    bench.Column("pair_p99_ms", "post+page p99 ms", ".1f"),
    bench.Column("errors", "wrong"),
    bench.Column("client_cpu_pct", "client CPU %", ".1f"),
    bench.Column("machine_cpu_pct", "machine CPU %", ".1f"),
]
RATIO_COLUMNS = [
    bench.Column("clients", "clients"),
    bench.Column("orders_rps", "posts/s", ".1f"),
    bench.Column("bare_rps", "bare/s", ".1f"),
    bench.Column("ratio", "posts/bare", ".2f"),
]


def main() -> None:
    parser = bench.arguments(__doc__.splitlines()[0], NAME)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 10, 20, 50])
    parser.add_argument("--players", type=int, default=2000, help="seats posting orders")
    parser.add_argument("--orders", type=int, default=6, help="different orders per player")
    parser.add_argument("--seconds", type=float, default=15, help="measured time per run")
    parser.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1) + 1)
    args = parser.parse_args()
    levels = [1, 10] if args.quick else args.clients
    seconds, warmup = (3.0, 1.0) if args.quick else (args.seconds, 3.0)
    players_wanted = 100 if args.quick else args.players

    bench.fresh_database()
    bench.flush_redis()
    games = make_games(-(-players_wanted // PLAYING), SEATS)
    seats = [(game, position) for game in games for position in range(PLAYING)]
    seats = seats[:players_wanted]
    connection.close()
    orders_port, bare_port = bench.free_port(), bench.free_port()
    rows: list[dict[str, Any]] = []
    ratios: list[dict[str, Any]] = []
    smtp = bench.SmtpServer()
    try:
        with bench.Processes() as processes:
            gunicorn(processes, "gunicorn-orders", "moderator.wsgi", orders_port, args.workers)
            gunicorn(processes, "gunicorn-bare", "bench.bare_wsgi", bare_port, args.workers)
            began = time.perf_counter()
            players = []
            for n, (game, position) in enumerate(seats):
                try:
                    players.append(sign_in(orders_port, n, game, position, args.orders))
                except TooFewOrders:  # the dice left this seat one order: not a player here
                    continue
            print(f"{len(players)} players signed in in {time.perf_counter() - began:.0f} s")
            bare = [bare_player(n, game) for n, (game, _) in enumerate(seats)]
            start_workers(processes, smtp.port)
            for clients in levels:
                orders = run(orders_port, shared_out(players, clients), seconds, warmup, True)
                limit = run(bare_port, shared_out(bare, clients), seconds, warmup, False)
                for name in ("worker-steps", "worker-mail", "beat"):
                    processes.check(name)
                rows += [orders | {"view": "orders"}, limit | {"view": "bare"}]
                ratios.append(
                    {
                        "clients": clients,
                        "orders_rps": orders["posts_per_second"],
                        "bare_rps": limit["posts_per_second"],
                        "ratio": orders["posts_per_second"] / max(limit["posts_per_second"], 1e-9),
                    }
                )
                print(
                    f"{clients} clients: {orders['posts_per_second']:.0f} posts/s, post p99 "
                    f"{orders['post_p99_ms']:.1f} ms; wrong: {orders['wrong']}"
                )
    finally:
        received = smtp.received
        smtp.stop()
    posts = Order.objects.filter(source=Order.Source.WEB).count()
    early = Step.objects.filter(closed_by=Step.Closed.EARLY).count()
    receipts = OutboundEmail.objects.filter(kind="receipt")
    sent = receipts.filter(state=OutboundEmail.State.SENT).count()
    by_clients = {row["clients"]: row for row in rows if row["view"] == "orders"}
    targets = [
        bench.Target(
            "p99 latency of order posts at 50 clients, back to back, each followed by its page",
            "under 100 ms",
            f"{by_clients[50]['post_p99_ms']:.1f} ms",
            by_clients[50]["post_p99_ms"] < 100,
        )
        for _ in [0]
        if 50 in by_clients
    ]
    targets += [
        bench.Target(
            f"order posts per second at {r['clients']} clients, as a share of the bare view's",
            "at least 0.50",
            f"{r['ratio']:.2f}",
            r["ratio"] >= 0.5,
        )
        for r in ratios
    ]
    bench.report(
        args.json,
        name=NAME,
        title="Order posts through the web form, each with its page (gunicorn)",
        quick=args.quick,
        method=(
            f"gunicorn, {args.workers} sync workers, DEBUG off, TRUSTED_PROXY_COUNT=1 (as "
            "behind the TLS proxy); a Celery worker on 'steps', one on 'mail' and beat "
            "running, sending to a local SMTP server (aiosmtpd). "
            f"{len(players)} players, {PLAYING} of each {SEATS}-seat Choice game (early "
            "processing on; the fifth seat keeps the step open), signed in through their "
            "magic links from addresses of their own (X-Forwarded-For). Each client, back "
            "to back, posts a player's next of its "
            f"{args.orders} different legal orders (a new revision every time), follows "
            "the redirect with a GET of the seat page (with the cookies the answer set), "
            "and takes its next player; one request in flight per client; latency from "
            "the connection's opening to the answer's last byte. "
            f"{seconds:.0f} s per client count after {warmup:.0f} s of warm-up; the bare "
            "view (bench/bare_wsgi.py: one Event row written in a transaction, same "
            "settings, engine and middleware) gets the same clients posting without a GET "
            "(the framework's limit). 'client CPU %' (this process) and 'machine CPU %' "
            "are shares of all cores."
        ),
        parameters={
            "clients": levels,
            "players": len(players),
            "orders_per_player": args.orders,
            "seconds": seconds,
            "warmup": warmup,
            "workers": args.workers,
            "seats": SEATS,
            "orders_stored": posts,
            "steps_closed_early": early,
            "share_of_posts_completing_a_step": early / max(posts, 1),
            "receipts_written": receipts.count(),
            "receipts_sent": sent,
            "messages_at_smtp_server": received,
        },
        tables=[
            bench.Table("Every run", COLUMNS, rows),
            bench.Table("Order posts against the bare view", RATIO_COLUMNS, ratios),
        ],
        targets=targets,
    )
    failed = [
        f"{row['view']} at {row['clients']} clients: {row['posts']} posts, wrong: {row['wrong']}"
        for row in rows
        if row["posts"] == 0 or row["errors"]
    ]
    if not sent or not received:
        failed.append(f"{sent} receipts sent, {received} messages at the SMTP server")
    if failed:
        sys.exit("measured wrong or nothing: " + "; ".join(failed))


if __name__ == "__main__":
    main()
