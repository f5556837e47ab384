"""Benchmark: what the reminders cost each sweep (games.sweep, every SWEEP_SECONDS), as
the number of running games grows: an idle sweep (no rung due) and a sweep where one game
in a hundred has its 2-hour rung due.

    .venv/bin/python bench/reminder_sweep.py [--quick] [--sizes 1000 10000]
        [--json var/bench/reminder_sweep.json]

N running 5-seat Choice games (reminders at 24 and 2 hours, as a new game's), their step 1
opened an hour ago with its deadline 20 hours ahead: every step is within a day of its
deadline, as a daily game's always is, and no rung is due. ``reminders.send_reminders``
is called as the sweep calls it, in this process (and the whole sweep, games.sweep, with
nothing else due either): its CPU (time.process_time), the
statements it sends, the steps it reads and PostgreSQL's CPU meanwhile (bench/cpu.py).
The limit is the sweep's period: the running games at which one sweep's reminders would
take all of it, from the cost per game of the largest size.

Database ``<DATABASE_URL>_bench_reminders``, Redis database 7.
"""

from __future__ import annotations

import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench

bench.configure("_bench_reminders", redis_db=7)

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench import cpu, deadline_rush  # noqa: E402
from games import tasks  # noqa: E402
from games.models import Game, Step  # noqa: E402
from games.notify import reminders  # noqa: E402
from moderator.mail import queueing  # noqa: E402
from moderator.mail.models import OutboundEmail  # noqa: E402

NAME = "reminder_sweep"
REPEATS = 5


def sweep(now: Any, postmaster: int, whole: bool = False) -> dict[str, Any]:
    """One call of the sweep's reminders at ``now`` (``whole``: the whole sweep, now):
    its figures."""
    statements = bench.Statements()
    before = cpu.snapshot({}, postmaster, {})
    began, wall = time.process_time(), time.perf_counter()
    with connection.execute_wrapper(statements):
        written = sum(tasks.sweep().values()) if whole else reminders.send_reminders(now)
    return {
        "cpu": time.process_time() - began,
        "wall": time.perf_counter() - wall,
        "postgres": cpu.spent(before, cpu.snapshot({}, postmaster, {}))["postgres"],
        "statements": statements.count,
        "written": written,
    }


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def measure(games: int) -> list[dict[str, Any]]:
    bench.fresh_database()
    bench.flush_redis()
    now = timezone.now()
    deadline_rush.make_games(games, now - timedelta(hours=1), "sweep")
    Step.objects.filter(status=Step.Status.OPEN).update(
        opened_at=now - timedelta(hours=1), deadline=now + timedelta(hours=20)
    )
    postmaster = cpu.postmaster()
    reminders.send_reminders(now)  # warm: statements, catalogues; and what it keeps
    idle = median_of([sweep(now, postmaster) for _ in range(REPEATS)])
    whole = median_of([sweep(now, postmaster, whole=True) for _ in range(REPEATS)])
    # One game in a hundred: its 2-hour rung is due (opened 3 hours before a deadline
    # 1.5 hours ahead); each sweep after the first finds those reminders written.
    running = Game.objects.filter(status=Game.Status.RUNNING).order_by("pk")
    due = list(running.values_list("pk", flat=True))[::100]
    # As the writers do when they move a deadline (games.postal.gm): looked at again.
    Step.objects.filter(game_id__in=due, status=Step.Status.OPEN).update(
        opened_at=now - timedelta(hours=3), deadline=now + timedelta(minutes=90), remind_at=None
    )
    first = sweep(now, postmaster)
    again = median_of([sweep(now, postmaster) for _ in range(REPEATS)])
    emailed = OutboundEmail.objects.filter(kind="reminder").count()
    return [
        {"games": games, "sweep": "idle: no rung due", **idle, "emails": 0},
        {"games": games, "sweep": "the whole sweep, idle (games.sweep)", **whole, "emails": 0},
        {"games": games, "sweep": f"{len(due)} games' rungs due", **first, "emails": emailed},
        {"games": games, "sweep": "the same again (written)", **again, "emails": 0},
    ]


COLUMNS = [
    bench.Column("games", "running games"),
    bench.Column("sweep", "sweep"),
    bench.Column("cpu_ms", "CPU ms", ".1f"),
    bench.Column("wall_ms", "wall ms", ".1f"),
    bench.Column("postgres_ms", "PostgreSQL CPU ms", ".1f"),
    bench.Column("statements", "statements", ".0f"),
    bench.Column("emails", "reminders written"),
    bench.Column("per_game_us", "wall µs per running game", ".1f"),
]


def main() -> None:
    parser = bench.arguments(__doc__.splitlines()[0], NAME)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    args = parser.parse_args()
    sizes = [200, 1000] if args.quick else args.sizes
    queueing.enqueue = bench.enqueue_nothing  # the reminders are written, not sent
    rows = []
    for games in sizes:
        for row in measure(games):
            rows.append(
                {
                    **row,
                    "cpu_ms": 1000 * row["cpu"],
                    "wall_ms": 1000 * row["wall"],
                    "postgres_ms": 1000 * row["postgres"],
                    "per_game_us": 1e6 * (row["wall"] + row["postgres"]) / games,
                }
            )
    idle = [row for row in rows if row["sweep"].startswith("idle")][-1]
    period = settings.SWEEP_SECONDS
    # The sweep's own process and PostgreSQL's work, both on the machine's cores.
    per_game = (idle["wall"] + idle["postgres"]) / idle["games"]
    filled = period / per_game if per_game else float("inf")
    bench.report(
        args.json,
        name=NAME,
        title="The reminders' part of each sweep",
        quick=args.quick,
        method=__doc__.split("\n\n", 2)[2].rsplit("\n\n", 1)[0].replace("\n", " "),
        parameters={"sizes": sizes, "repeats": REPEATS, "sweep_seconds": period},
        tables=[bench.Table("One sweep's reminders", COLUMNS, rows)],
        targets=[
            bench.Target(
                f"running games at which an idle sweep's reminders fill its {period} s",
                "at least 1,000,000",
                f"{filled:,.0f}",
                filled >= 1_000_000,
            )
        ],
    )


if __name__ == "__main__":
    main()
