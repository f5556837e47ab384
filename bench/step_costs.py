"""Benchmark: where a step and an email spend their time, in one process, without Celery:
the rush's 5-seat Choice steps resolved by the function the steps workers call, then their
reports sent by the function the mail workers call, to a local SMTP server.

    .venv/bin/python bench/step_costs.py [--quick] [--games 500]
        [--json var/bench/step_costs.json]

For each part: CPU milliseconds of this process per step and per email (time.process_time,
so the figure is the work, whatever else the machine runs), statements sent to PostgreSQL,
the CPU PostgreSQL and the SMTP server spent for it (bench/cpu.py), and where this
process's time went, by layer (bench/sampling.py: the innermost frame that belongs to a
layer decides; waits for PostgreSQL's answers count as the driver's).

Database ``<DATABASE_URL>_bench_costs`` (created and migrated), Redis database 8.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench

# The SMTP server first: the mail settings are read from the environment at set-up.
SERVER = bench.SmtpServer()
os.environ |= {
    "EMAIL_BACKEND": "moderator.mail.smtp.EmailBackend",
    "EMAIL_HOST": "127.0.0.1",
    "EMAIL_PORT": str(SERVER.port),
}
bench.configure("_bench_costs", redis_db=8)

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench import cpu, deadline_rush, sampling  # noqa: E402
from games import postal  # noqa: E402
from games.models import Step  # noqa: E402
from moderator.mail import queueing, sending  # noqa: E402
from moderator.mail.models import OutboundEmail  # noqa: E402

NAME = "step_costs"


def measured(work: Any, postmaster: int) -> dict[str, Any]:
    """Run ``work()``; its result, this process's CPU seconds, statements, the CPU of
    PostgreSQL and of the SMTP server meanwhile, and the sampler's shares."""
    statements = bench.Statements()
    alone = {"smtp server": SERVER.process.pid}
    before = cpu.snapshot({}, postmaster, alone)
    began = time.process_time()
    with connection.execute_wrapper(statements), sampling.Sampler() as sampler:
        result = work()
    own = time.process_time() - began
    spent = cpu.spent(before, cpu.snapshot({}, postmaster, alone))
    return {
        "result": result,
        "cpu": own,
        "statements": statements.count,
        "postgres": spent["postgres"],
        "smtp_server": spent["smtp server"],
        "shares": sampler.shares(),
    }


def run(games: int) -> dict[str, Any]:
    bench.fresh_database()
    bench.flush_redis()
    start = timezone.now() - timedelta(hours=1)
    deadline_rush.make_games(games, start, "rush")
    queueing.enqueue = bench.enqueue_nothing  # this process sends them itself, below
    now = timezone.now()
    Step.objects.filter(number=1).update(deadline=now - timedelta(seconds=1))
    postmaster = cpu.postmaster()
    postal.resolve_due_steps(now=now, limit=5)  # warm: templates, catalogues, statements
    steps = measured(lambda: postal.resolve_due_steps(now=now, limit=games), postmaster)
    ids = list(
        OutboundEmail.objects.filter(state=OutboundEmail.State.PENDING, kind="report")
        .order_by("id")
        .values_list("pk", flat=True)
    )
    received = SERVER.received

    def send_all() -> int:
        # As the steps workers hand them out: MAIL_BATCH rows to a task, one connection.
        for first in range(0, len(ids), settings.MAIL_BATCH):
            sending.send_batch(ids[first : first + settings.MAIL_BATCH], now=timezone.now())
        SERVER.wait_for(received + len(ids), timeout=120)
        return len(ids)

    mail = measured(send_all, postmaster)
    sizes = OutboundEmail.objects.filter(pk__in=ids).values_list("text", "html")
    return {
        "games": games,
        "steps": steps,
        "mail": mail,
        "emails": len(ids),
        "per_connection": settings.MAIL_BATCH,
        "stored_kb": sum(len(text) + len(html) for text, html in sizes) / len(ids) / 1024,
    }


PART_COLUMNS = [
    bench.Column("part", "part"),
    bench.Column("count", "count"),
    bench.Column("cpu_ms", "CPU ms each", ".2f"),
    bench.Column("statements", "statements each", ".1f"),
    bench.Column("postgres_ms", "PostgreSQL CPU ms each", ".2f"),
    bench.Column("smtp_ms", "SMTP server CPU ms each", ".2f"),
    bench.Column("kb", "outbox kB each (text and HTML)", ".1f"),
]
SHARE_COLUMNS = [
    bench.Column("layer", "layer"),
    bench.Column("step", "a step %", ".1f"),
    bench.Column("email", "an email %", ".1f"),
]


def main() -> None:
    parser = bench.arguments(__doc__.splitlines()[0], NAME)
    parser.add_argument("--games", type=int, default=500)
    args = parser.parse_args()
    games = 100 if args.quick else args.games
    try:
        result = run(games)
    finally:
        SERVER.stop()
    steps, mail = result["steps"], result["mail"]
    resolved, emails = steps["result"], result["emails"]
    parts = [
        {"part": "a step (5 seats, 5 reports written)", "count": resolved,
         "cpu_ms": 1000 * steps["cpu"] / resolved, "statements": steps["statements"] / resolved,
         "postgres_ms": 1000 * steps["postgres"] / resolved,
         "smtp_ms": 1000 * steps["smtp_server"] / resolved,
         "kb": result["stored_kb"] * emails / resolved},
        {"part": "an email (sent over a connection of MAIL_BATCH)", "count": emails,
         "cpu_ms": 1000 * mail["cpu"] / emails, "statements": mail["statements"] / emails,
         "postgres_ms": 1000 * mail["postgres"] / emails,
         "smtp_ms": 1000 * mail["smtp_server"] / emails, "kb": result["stored_kb"]},
    ]  # fmt: skip
    layers = [*dict.fromkeys([*steps["shares"], *mail["shares"]])]
    shares = [
        {
            "layer": layer,
            "step": 100 * steps["shares"].get(layer, 0.0),
            "email": 100 * mail["shares"].get(layer, 0.0),
        }
        for layer in layers
    ]
    bench.report(
        args.json,
        name=NAME,
        title="Where a step and an email spend their time",
        quick=args.quick,
        method=(
            f"{games} 5-seat Choice games whose step 1 is due, resolved in this process by "
            "postal.resolve_due_steps (what the steps workers call), then their reports "
            "sent by sending.send_batch (what the mail workers call), MAIL_BATCH to a "
            "connection, to aiosmtpd in a process of its own. CPU of this process by "
            "time.process_time; statements by Django's execute_wrapper; PostgreSQL's and "
            "the SMTP server's CPU from /proc. The layers: a thread samples the stack "
            "every 2 ms, and the innermost frame that belongs to a layer decides (a wait "
            "for PostgreSQL's answer is the driver's). Without Celery: a worker adds its "
            "task overhead (compare bench/deadline_rush.py's CPU per part)."
        ),
        parameters={"games": games, "mail_batch": settings.MAIL_BATCH},
        tables=[
            bench.Table("A step and an email", PART_COLUMNS, parts),
            bench.Table("Where this process's time went, by layer", SHARE_COLUMNS, shares),
        ],
        targets=[],
    )


if __name__ == "__main__":
    main()
