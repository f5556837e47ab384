"""Benchmark: how the cost of resolving steps grows, with the seats of a game and with the
number of steps due at once.

    .venv/bin/python bench/growth.py [--quick] [--seats 3 5 8] [--games 50]
        [--sizes 10 100 1000 10000] [--json var/bench/growth.json]

(a) One step of a Choice game of 3, 5 and 8 seats: ``--games`` games each, started with
postal.start_game, each due step resolved on its own with games.postal.resolve_due_step
and timed; median and p95.
(b) The sweep with 10, 100, 1,000 and 10,000 due steps of 3-seat Choice games: the time
of games.postal.due_step_ids, then every step resolved in one process and each one timed:
the per-step median and p95 at every size say whether a step gets slower when many are due.

As in bench/resolve_steps.py, a resolution includes rendering its reports and writing
them to the outbox, not sending them. The games of (b) are clones: one game is created and
started with postal, and its rows (game, seats, open step, dice rolls, events) are copied
with bulk_create for every other game (its outbox rows are not copied); the tables are
analyzed before the clock runs. Database ``<DATABASE_URL>_bench_growth`` (created and
migrated on each run), Redis database 10.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench

bench.configure("_bench_growth", redis_db=10)

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models import Model  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from games import postal  # noqa: E402
from games.models import DiceRoll, Event, Game, Seat, Step, new_public_id  # noqa: E402
from moderator.mail import queueing  # noqa: E402

NAME = "growth"
START = datetime(2026, 11, 23, 18, 0, tzinfo=UTC)
DUE = START + timedelta(hours=48)
BATCH = 2000

# The sweep's work ends when the outbox rows are committed; sending is measured elsewhere.
queueing.enqueue = bench.enqueue_nothing


def empty() -> None:
    """No game left (and nothing that hangs on one), without a slow cascade in Python."""
    with connection.cursor() as cursor:
        cursor.execute(f'TRUNCATE "{Game._meta.db_table}" CASCADE')


def analyze() -> None:
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def start_game(seats: int, number: int) -> Game:
    gm, _ = get_user_model().objects.get_or_create(username="bench-gm")
    names = [f"p{n}" for n in range(seats)]
    game = postal.create_game(
        gm=gm,
        engine_key="choice",
        title=f"growth {seats}x{number}",
        players=[postal.Player(name, f"{name}@example.org") for name in names],
    )
    return postal.start_game(game.pk, now=START)


def copy_of(row: Model, **changes: Any) -> Any:
    fields = {f.attname: getattr(row, f.attname) for f in row._meta.concrete_fields}
    fields.pop(row._meta.pk.attname)
    return type(row)(**(fields | changes))


def clone(template: Game, count: int) -> None:
    """``count`` copies of a started game, in a few bulk inserts."""
    seats = list(template.seats.all())
    steps = list(template.steps.all())
    dice = list(template.dice_rolls.all())
    events = list(template.events.all())
    games = Game.objects.bulk_create(
        (
            copy_of(template, title=f"{template.title} copy {n}", public_id=new_public_id())
            for n in range(count)
        ),
        batch_size=BATCH,
    )
    Seat.objects.bulk_create(
        (copy_of(seat, game_id=game.pk) for game in games for seat in seats), batch_size=BATCH
    )
    new_steps = Step.objects.bulk_create(
        (copy_of(step, game_id=game.pk) for game in games for step in steps), batch_size=BATCH
    )
    step_of = {(step.game_id, step.number): step.pk for step in new_steps}
    number_of = {step.pk: step.number for step in steps}

    def moved(rows: Iterable[DiceRoll | Event]) -> Iterable[Any]:
        for game in games:
            for row in rows:
                step_id = step_of[(game.pk, number_of[row.step_id])]
                yield copy_of(row, game_id=game.pk, step_id=step_id)

    DiceRoll.objects.bulk_create(moved(dice), batch_size=BATCH)
    Event.objects.bulk_create(moved(events), batch_size=BATCH)


def resolve_each(step_ids: list[int]) -> list[float]:
    """Resolve every step, one at a time; the seconds each took."""
    times = []
    for step_id in step_ids:
        began = time.perf_counter()
        resolved = postal.resolve_due_step(step_id, now=DUE)
        times.append(time.perf_counter() - began)
        if not resolved:
            raise RuntimeError(f"step {step_id} was not resolved")
    return times


def by_seats(seats: int, games: int) -> dict[str, Any]:
    empty()
    for number in range(games):
        start_game(seats, number)
    analyze()
    step_ids = postal.due_step_ids(DUE, limit=games)
    with CaptureQueriesContext(connection) as queries:
        times = resolve_each(step_ids[:1])
    times += resolve_each(step_ids[1:])
    return {
        "seats": seats,
        "steps": len(times),
        "median_ms": 1000 * bench.percentile(times, 50),
        "p95_ms": 1000 * bench.percentile(times, 95),
        "per_seat_ms": 1000 * bench.percentile(times, 50) / seats,
        "queries_per_step": len(queries),
    }


def sweep(size: int) -> dict[str, Any]:
    empty()
    began = time.perf_counter()
    clone(start_game(3, 0), size - 1)
    analyze()
    created = time.perf_counter() - began
    began = time.perf_counter()
    step_ids = postal.due_step_ids(DUE, limit=size)
    found = time.perf_counter() - began
    if len(step_ids) != size:
        raise RuntimeError(f"{len(step_ids)} steps are due, not {size}")
    times = resolve_each(step_ids)
    total = found + sum(times)
    tenth = max(1, size // 10)
    return {
        "due": size,
        "created_s": created,
        "due_step_ids_ms": 1000 * found,
        "total_s": total,
        "per_step_ms": 1000 * total / size,
        "median_ms": 1000 * bench.percentile(times, 50),
        "p95_ms": 1000 * bench.percentile(times, 95),
        "first_tenth_median_ms": 1000 * bench.percentile(times[:tenth], 50),
        "last_tenth_median_ms": 1000 * bench.percentile(times[-tenth:], 50),
    }


SEAT_COLUMNS = [
    bench.Column("seats", "seats"),
    bench.Column("steps", "steps"),
    bench.Column("median_ms", "median ms", ".2f"),
    bench.Column("p95_ms", "p95 ms", ".2f"),
    bench.Column("per_seat_ms", "median ms/seat", ".2f"),
    bench.Column("queries_per_step", "queries/step"),
]
SWEEP_COLUMNS = [
    bench.Column("due", "due steps"),
    bench.Column("due_step_ids_ms", "due_step_ids ms", ".1f"),
    bench.Column("total_s", "total s", ".2f"),
    bench.Column("per_step_ms", "total/step ms", ".2f"),
    bench.Column("median_ms", "median ms", ".2f"),
    bench.Column("p95_ms", "p95 ms", ".2f"),
    bench.Column("first_tenth_median_ms", "first 10% median", ".2f"),
    bench.Column("last_tenth_median_ms", "last 10% median", ".2f"),
    bench.Column("created_s", "setup s", ".1f"),
]


def main() -> None:
    parser = bench.arguments(__doc__.splitlines()[0], NAME)
    parser.add_argument("--seats", type=int, nargs="+", default=[3, 5, 8])
    parser.add_argument("--games", type=int, default=50, help="games per seat count in (a)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000, 10000])
    args = parser.parse_args()
    games, sizes = (10, [10, 100]) if args.quick else (args.games, args.sizes)

    bench.fresh_database()
    seat_rows = []
    for seats in args.seats:
        seat_rows.append(by_seats(seats, games))
        print(f"{seats} seats: median {seat_rows[-1]['median_ms']:.1f} ms")
    sweep_rows = []
    for size in sizes:
        sweep_rows.append(sweep(size))
        print(f"{size} due: {sweep_rows[-1]['total_s']:.1f} s")
    # Ten steps make a noisy median: the spread is taken over the sizes of 100 and more.
    steady = [row for row in sweep_rows if row["due"] >= 100]
    compared = steady if len(steady) >= 2 else sweep_rows
    medians = [row["median_ms"] for row in compared]
    spread = max(medians) / min(medians)
    largest = sweep_rows[-1]
    drift = largest["last_tenth_median_ms"] / largest["first_tenth_median_ms"]
    bench.report(
        args.json,
        name=NAME,
        title="Growth: seats per game and steps due at once",
        quick=args.quick,
        method=(
            f"(a) {games} Choice games per seat count, started with postal.start_game; "
            "each due step resolved alone with postal.resolve_due_step (reports rendered "
            "and written to the outbox, not sent). (b) one 3-seat game started with postal "
            "and cloned with bulk_create (game, seats, open step, dice, events; not its "
            "outbox rows) to the size, ANALYZE, then postal.due_step_ids and every step "
            "resolved in one process. 'total' is due_step_ids plus every resolution."
        ),
        parameters={"seats": args.seats, "games": games, "sizes": sizes},
        tables=[
            bench.Table("(a) One step by seats per game", SEAT_COLUMNS, seat_rows),
            bench.Table("(b) The sweep by steps due at once", SWEEP_COLUMNS, sweep_rows),
        ],
        targets=[
            bench.Target(
                "per-step median, slowest size against fastest "
                f"({', '.join(str(row['due']) for row in compared)} due)",
                "at most 1.25 (linear growth: no step slower because others are due)",
                f"{spread:.2f}",
                spread <= 1.25,
            ),
            bench.Target(
                f"per-step median of the last tenth against the first, {largest['due']} due",
                "at most 1.25 (no step slower for the rows the sweep wrote before it)",
                f"{drift:.2f}",
                drift <= 1.25,
            ),
        ],
    )


if __name__ == "__main__":
    main()
