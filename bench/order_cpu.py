"""Benchmark: the CPU one order post costs, in the web process and in its PostgreSQL
backend, without HTTP or a load generator in the way (Django's test client in one process).

    .venv/bin/python bench/order_cpu.py [--quick] [--posts 1200] [--rounds 3]
        [--json var/bench/order_cpu.json]

400 players, each a seat of a 5-seat Choice game (early processing off), each signed in
through its magic link in a browser (a test client) of its own; the posts go to the
players in turn, each sending the player's next of six different legal orders (a new
revision every time, as in bench/order_submission.py), each from an address of its own
and well under the limit of posts per seat, form-encoded as a browser sends it. Process
CPU from ``time.process_time``; the backend's from /proc (Linux); queries per post
counted. Medians of ``--rounds`` rounds. Database ``<DATABASE_URL>_bench_cpu``, Redis database 9
(or ``BENCH_REDIS_DB``).
"""

from __future__ import annotations

import itertools
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# The test client speaks plain HTTP to a production-like configuration.
for name, value in {
    "SECURE_SSL_REDIRECT": "false",
    "SESSION_COOKIE_SECURE": "false",
    "CSRF_COOKIE_SECURE": "false",
    "ALLOWED_HOSTS": "testserver",
}.items():
    os.environ.setdefault(name, value)

import bench  # noqa: E402

bench.configure("_bench_cpu", redis_db=9)

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench.choice_orders import orders_of  # noqa: E402
from games import postal  # noqa: E402
from games.models import Game, Seat  # noqa: E402
from games.postal import access  # noqa: E402

NAME = "order_cpu"
SEATS = 5
ORDERS = 6
PLAYERS = 400
TICKS = os.sysconf("SC_CLK_TCK")
FORM = "application/x-www-form-urlencoded"


class Player:
    def __init__(self, number: int, game: Game, position: int) -> None:
        seat = Seat.objects.get(game=game, position=position)
        self.client = Client(REMOTE_ADDR=f"10.0.{number // 256}.{number % 256}")
        token = access.mint([seat], now=timezone.now())[position]
        if self.client.post(f"/p/{token}/").status_code != 302:
            raise RuntimeError("the magic link did not open the seat")
        self.path = f"/play/{game.pk}/{position}/"
        form = {"step": str(game.step_number), "seat": str(position), "entry": "text"}
        # Encoded as a browser sends a form (the test client's default is multipart,
        # whose parsing was a tenth of a post's CPU and no browser's cost).
        self.forms = [
            urlencode(form | {"text": text}) for text in orders_of(game.state, position, ORDERS)
        ]
        self.sent = 0

    def post(self) -> None:
        self.sent += 1
        body = self.forms[self.sent % len(self.forms)]
        answer = self.client.post(self.path, body, content_type=FORM)
        if answer.status_code != 302:
            raise RuntimeError(f"an order post answered {answer.status_code}")


def backend_cpu(pid: int) -> float:
    """Seconds of CPU the PostgreSQL backend ``pid`` has used (user + system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def main() -> None:
    parser = bench.arguments(__doc__.splitlines()[0], NAME)
    parser.add_argument("--posts", type=int, default=1200, help="posts per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    posts, rounds = (200, 1) if args.quick else (args.posts, args.rounds)
    bench.fresh_database()
    bench.flush_redis()
    gm, _ = get_user_model().objects.get_or_create(username="bench-gm")
    names = [f"p{n}" for n in range(SEATS)]
    players: list[Player] = []
    for number in range(PLAYERS // SEATS):
        game = postal.create_game(
            gm=gm,
            engine_key="choice",
            title=f"cpu {number}",
            players=[postal.Player(name, f"{name}@example.org") for name in names],
            early_processing=False,
        )
        game = postal.start_game(game.pk, now=timezone.now())
        players += [Player(len(players), game, position) for position in range(SEATS)]
    turn = itertools.cycle(players)
    for _ in range(len(players)):  # each player's first post, and the warm-up
        next(turn).post()
    with CaptureQueriesContext(connection) as queries:
        for _ in range(len(players)):
            next(turn).post()
    per_post = len(queries) / len(players)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    taken: list[dict[str, float]] = []
    for _ in range(rounds):
        process, backend, wall = time.process_time(), backend_cpu(pid), time.perf_counter()
        for _ in range(posts):
            next(turn).post()
        taken.append(
            {
                "process_ms": 1000 * (time.process_time() - process) / posts,
                "backend_ms": 1000 * (backend_cpu(pid) - backend) / posts,
                "wall_ms": 1000 * (time.perf_counter() - wall) / posts,
            }
        )
    row: dict[str, Any] = {
        key: statistics.median(part[key] for part in taken) for key in taken[0]
    } | {"queries": per_post, "posts": posts * rounds}
    row["total_ms"] = row["process_ms"] + row["backend_ms"]
    print(
        f"CPU per order post: {row['process_ms']:.2f} ms in the process, "
        f"{row['backend_ms']:.2f} ms in PostgreSQL; {per_post:.1f} queries"
    )
    columns = [
        bench.Column("posts", "posts"),
        bench.Column("queries", "queries/post", ".1f"),
        bench.Column("process_ms", "process CPU ms", ".2f"),
        bench.Column("backend_ms", "PostgreSQL CPU ms", ".2f"),
        bench.Column("total_ms", "total CPU ms", ".2f"),
        bench.Column("wall_ms", "wall ms", ".2f"),
    ]
    bench.report(
        args.json,
        name=NAME,
        title="CPU per order post (one process, Django's test client)",
        quick=args.quick,
        method=(
            f"{len(players)} players of {SEATS}-seat Choice games, signed in through their "
            f"links, posting in turn, each its next of {ORDERS} different legal orders (a "
            f"new revision every time); {posts} posts per round, medians of {rounds} "
            "rounds; CPU of this process (time.process_time) and of its PostgreSQL "
            "backend (/proc); DEBUG off, the production middleware and rate limits."
        ),
        parameters={"posts": posts, "rounds": rounds, "players": len(players)},
        tables=[bench.Table("Per order post", columns, [row])],
        targets=[],
    )


if __name__ == "__main__":
    main()
