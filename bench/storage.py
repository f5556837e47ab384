"""Benchmark: bytes stored per finished step, table by table, before and after pruning.

    .venv/bin/python bench/storage.py [--quick] [--games 1000] [--senders 3]
        [--json var/bench/storage.json]

``--games`` Choice games of 5 seats are played to their end through the domain
functions, all started at the same moment, step by step in step: each step, ``--senders``
seats post an order (their no-moves default, typed) with postal.accept_order, the
receipts are written (postal.write_receipts), the other seats get their no-moves default
when the deadline passes (postal.resolve_due_step), and every email is sent (Django's
dummy backend: the outbox rows end as they would, sent). Then every table of the
database is measured (``pg_total_relation_size``: heap, indexes and TOAST) after
``VACUUM FULL``, so that dead row versions count for nothing; divided by the finished
steps. Then the clock moves on past the retention of the last email
(MAIL_RETENTION_DAYS) and the life of the last link (LINK_DAYS), games.records.retention.prune
runs as the daily task would, and the tables are measured again: after a plain
``VACUUM`` (the files keep their size; a running service reuses the space for new rows)
and after ``VACUUM FULL`` (the rows that are left).

Database ``<DATABASE_URL>_storage_bench`` (created and migrated on each run), Redis
database 12 (unused: no worker runs).
"""

from __future__ import annotations

import os
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench

os.environ["EMAIL_BACKEND"] = "django.core.mail.backends.dummy.EmailBackend"
bench.configure("_storage_bench", redis_db=12)

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402

from bench.month_sizing import sizes, vacuum  # noqa: E402
from games import postal  # noqa: E402
from games.engines import registry  # noqa: E402
from games.models import Game, Step  # noqa: E402
from games.records import retention  # noqa: E402
from moderator.mail import queueing, sending  # noqa: E402
from moderator.mail.models import OutboundEmail  # noqa: E402

NAME = "storage"
SEATS = 5
START = datetime(2026, 11, 23, 18, 0, tzinfo=UTC)
TARGET_BYTES = 20_000  # "at most 20 kB per finished step", kB of 1000 bytes

# No mail worker runs: the benchmark sends the outbox itself after each step.
queueing.enqueue = bench.enqueue_nothing


def start_games(count: int) -> list[int]:
    gm, _ = get_user_model().objects.get_or_create(username="bench-gm")
    names = [f"p{n}" for n in range(SEATS)]
    ids = []
    for number in range(count):
        game = postal.create_game(
            gm=gm,
            engine_key="choice",
            title=f"storage {number}",
            players=[postal.Player(name, f"{name}@example.org") for name in names],
        )
        postal.start_game(game.pk, now=START)
        ids.append(game.pk)
    return ids


def post_orders(senders: int, now: datetime) -> int:
    """``senders`` seats of each open step post their no-moves default as typed text."""
    engine = registry.get("choice")
    posted = 0
    steps = Step.objects.filter(status=Step.Status.OPEN).select_related("game")
    for step in steps:
        state = engine.state_from_json(step.game.state)
        for position in step.prompted_seats[:senders]:
            text = engine.canonical(state, position, engine.default(state, position))
            postal.accept_order(
                game_id=step.game_id, position=position, text=text, source="web", now=now
            )
            posted += 1
    return posted


def write_all_receipts(now: datetime) -> None:
    while postal.write_receipts(now=now):
        pass


def send_all(now: datetime) -> int:
    """Every pending email, MAIL_BATCH to a call, as the mail workers would."""
    sent = 0
    while ids := list(
        OutboundEmail.objects.filter(state=OutboundEmail.State.PENDING)
        .order_by("pk")
        .values_list("pk", flat=True)[: settings.MAIL_BATCH]
    ):
        states = sending.send_batch(ids, now=now)
        if not states:
            raise RuntimeError(f"outbox rows {ids[:5]}... could not be sent")
        sent += len(states)
    return sent


def play(games: int, senders: int) -> dict[str, Any]:
    """Every game to its end, all in step; returns what was done and the last moment."""
    ids = start_games(games)
    now = START
    orders = emails = rounds = 0
    emails += send_all(now)
    while Game.objects.filter(pk__in=ids, status=Game.Status.RUNNING).exists():
        rounds += 1
        orders += post_orders(senders, now + timedelta(hours=1))
        write_all_receipts(now + timedelta(hours=2))
        emails += send_all(now + timedelta(hours=2))
        deadline = min(
            Step.objects.filter(status=Step.Status.OPEN).values_list("deadline", flat=True)
        )
        now = deadline
        due = postal.due_step_ids(now, limit=len(ids))
        for step_id in due:
            if not postal.resolve_due_step(step_id, now=now):
                raise RuntimeError(f"step {step_id} was not resolved")
        emails += send_all(now)
        print(f"round {rounds}: {len(due)} steps resolved", flush=True)
    return {"orders": orders, "emails": emails, "rounds": rounds, "end": now}


SHOWN = 9  # the largest tables by name; the rest in one row


def rows_of(
    before: dict[str, tuple[int, int]],
    vacuumed: dict[str, tuple[int, int]],
    after: dict[str, tuple[int, int]],
    steps: int,
) -> list[dict[str, Any]]:
    order = sorted(before, key=lambda table: -before[table][0])
    named, rest = order[:SHOWN], order[SHOWN:]

    def row(name: str, tables: list[str]) -> dict[str, Any]:
        return {
            "table": name,
            "rows_before": sum(before[t][1] for t in tables),
            "rows_after": sum(after[t][1] for t in tables),
            "before": sum(before[t][0] for t in tables) / steps,
            "after_vacuum": sum(vacuumed[t][0] for t in tables) / steps,
            "after": sum(after[t][0] for t in tables) / steps,
        }

    rows = [row(table, [table]) for table in named]
    rows.append(row(f"{len(rest)} other tables", rest))
    rows.append(row("total", order))
    return rows


COLUMNS = [
    bench.Column("table", "table"),
    bench.Column("rows_before", "rows before"),
    bench.Column("rows_after", "rows after"),
    bench.Column("before", "bytes/step before", ".0f"),
    bench.Column("after_vacuum", "after, VACUUM", ".0f"),
    bench.Column("after", "after, VACUUM FULL", ".0f"),
]


def main() -> None:
    parser = bench.arguments(__doc__.splitlines()[0], NAME)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument(
        "--senders", type=int, default=3, help="seats of 5 that post an order each step"
    )
    args = parser.parse_args()
    games = 50 if args.quick else args.games

    bench.fresh_database()
    began = time.perf_counter()
    played = play(games, args.senders)
    play_seconds = time.perf_counter() - began
    finished = Game.objects.filter(status=Game.Status.FINISHED).count()
    steps = Step.objects.filter(status=Step.Status.DONE, game__status=Game.Status.FINISHED).count()
    if finished != games or steps == 0:
        raise SystemExit(f"measured nothing: {finished} of {games} games finished, {steps} steps")
    if Step.objects.exclude(status=Step.Status.DONE).exists():
        raise SystemExit("a finished game has a step still open")

    vacuum(full=True)
    before = sizes()

    # Past the retention of the last email and the life of the last link.
    days = max(settings.MAIL_RETENTION_DAYS, settings.LINK_DAYS) + 1
    later = played["end"] + timedelta(days=days)
    began = time.perf_counter()
    pruned = retention.prune(now=later)
    prune_seconds = time.perf_counter() - began
    if pruned.bodies == 0:
        raise SystemExit("pruning removed no email body: nothing was measured")
    vacuum(full=False)
    vacuumed = sizes()
    vacuum(full=True)
    after = sizes()

    rows = rows_of(before, vacuumed, after, steps)
    total_before, total_after = rows[-1]["before"], rows[-1]["after"]
    bench.report(
        args.json,
        name=NAME,
        title=f"Storage: bytes per finished step, {finished} finished games of {SEATS} seats",
        quick=args.quick,
        method=(
            f"{games} Choice games of {SEATS} seats played to their end through games.postal "
            f"(started together, in step): each step {args.senders} seats post an order "
            "(accept_order), receipts are written (write_receipts), the others get their "
            "no-moves default at the deadline (resolve_due_step), every email is sent "
            "(dummy backend). Bytes: pg_total_relation_size (heap, indexes, TOAST) of every "
            "table of the schema after VACUUM FULL, divided by the finished steps "
            f"({steps}). Then games.records.retention.prune at the end plus {days} days "
            f"(MAIL_RETENTION_DAYS {settings.MAIL_RETENTION_DAYS}, LINK_DAYS "
            f"{settings.LINK_DAYS}) and the tables measured again after VACUUM (files keep "
            "their size; the space is reused) and after VACUUM FULL (the rows left). "
            "kB = 1000 bytes."
        ),
        parameters={
            "games": games,
            "seats": SEATS,
            "senders": args.senders,
            "finished_steps": steps,
            "orders_posted": played["orders"],
            "emails_sent": played["emails"],
            "bodies_pruned": pruned.bodies,
            "links_pruned": pruned.links,
            "play_seconds": round(play_seconds, 1),
            "prune_seconds": round(prune_seconds, 2),
            "mail_retention_days": settings.MAIL_RETENTION_DAYS,
            "link_days": settings.LINK_DAYS,
        },
        tables=[bench.Table("Bytes per finished step, by table", COLUMNS, rows)],
        targets=[
            bench.Target(
                "bytes stored per finished step, after pruning (VACUUM FULL)",
                f"at most {TARGET_BYTES // 1000} kB",
                f"{total_after / 1000:.1f} kB (before pruning {total_before / 1000:.1f} kB)",
                total_after <= TARGET_BYTES,
            )
        ],
    )


if __name__ == "__main__":
    main()
