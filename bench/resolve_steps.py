"""Benchmark: N due Choice steps of S seats each, resolved by the sweep on PostgreSQL.

Prints steps per second, seats per second and queries per step for each S. Not a test:
the figures go into the issue notes and docs/performance.md.

    .venv/bin/python bench/resolve_steps.py [--games 200] [--seats 3 8]

Uses DATABASE_URL (default: the local PostgreSQL) with a database of its own,
``<name>_bench``, created and migrated on each run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/moderator")
os.environ.setdefault("LOG_LEVEL", "WARNING")
os.environ.setdefault("DEBUG", "0")
os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-" + "x" * 40)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "moderator.settings")
os.environ["DATABASE_URL"] = os.environ["DATABASE_URL"].rstrip("/") + "_bench"

import django

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from games import postal  # noqa: E402
from games.models import Game  # noqa: E402
from moderator.mail import outbox  # noqa: E402

# The sweep's work ends when the outbox rows are committed; sending is measured elsewhere.
outbox.enqueue = lambda ids: None

WIDTHS = (5, 6, 8, 8, 8, 12)
START = datetime(2026, 11, 23, 18, 0, tzinfo=UTC)


def fresh_database() -> None:
    name = connection.settings_dict["NAME"]
    with connection._nodb_cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')
        cursor.execute(f'CREATE DATABASE "{name}"')
    call_command("migrate", verbosity=0)


def make_games(count: int, seats: int) -> None:
    gm, _ = get_user_model().objects.get_or_create(username="bench-gm")
    names = [f"p{n}" for n in range(seats)]
    for number in range(count):
        game = postal.create_game(
            gm=gm,
            engine_key="choice",
            title=f"bench {seats}x{number}",
            players=[postal.Player(name, f"{name}@example.org") for name in names],
        )
        postal.start_game(game.pk, now=START)


def run(count: int, seats: int) -> dict[str, float]:
    Game.objects.all().delete()
    make_games(count, seats)
    due = START + timedelta(hours=48)
    steps = postal.due_step_ids(due, limit=count)
    assert len(steps) == count, (len(steps), count)
    with CaptureQueriesContext(connection) as queries:
        assert postal.resolve_due_step(steps[0], now=due)
    began = time.perf_counter()
    for step_id in steps[1:]:
        assert postal.resolve_due_step(step_id, now=due)
    elapsed = time.perf_counter() - began
    resolved = len(steps) - 1
    return {
        "seats": seats,
        "steps": resolved,
        "seconds": elapsed,
        "steps_per_second": resolved / elapsed,
        "seats_per_second": resolved * seats / elapsed,
        "queries_per_step": len(queries),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--seats", type=int, nargs="+", default=[3, 8])
    args = parser.parse_args()
    fresh_database()
    header = ("seats", "steps", "seconds", "steps/s", "seats/s", "queries/step")
    print(" ".join(f"{title:>{width}}" for title, width in zip(header, WIDTHS, strict=True)))
    for seats in args.seats:
        r = run(args.games, seats)
        print(
            f"{r['seats']:>5} {r['steps']:>6} {r['seconds']:>8.2f} {r['steps_per_second']:>8.1f} "
            f"{r['seats_per_second']:>8.1f} {r['queries_per_step']:>12}"
        )


if __name__ == "__main__":
    main()
