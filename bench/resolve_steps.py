"""Benchmark: N due Choice steps of S seats each (reports rendered and written to the
outbox), resolved by the sweep on PostgreSQL.

For each S it prints, and writes as JSON (``--json``):

- ``process``: resolved one after another in this process (steps/s, seats/s, queries per
  step);
- ``workers 1`` and ``workers 2``: one sweep hands every due step to real Celery worker
  processes (concurrency 1 each) through Redis; timed from the sweep until the database
  says every step is done;
- ``raw SQL``: the limit the ORM path is measured against: the same database writes of a
  step (the same rows, the same sizes: captured from a real resolution) in one
  transaction each, with psycopg and no ORM, no engine and no templates.

Not a test: the figures go into docs/performance.md.

    .venv/bin/python bench/resolve_steps.py [--games 200] [--seats 3 5 8] [--quick]

Uses DATABASE_URL (default: the local PostgreSQL) with a database of its own,
``<name>_bench``, created and migrated on each run, and Redis database 7.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/moderator")
os.environ.setdefault("LOG_LEVEL", "WARNING")
os.environ.setdefault("DEBUG", "0")
os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-" + "x" * 40)
os.environ["DATABASE_URL"] = os.environ["DATABASE_URL"].rstrip("/") + "_bench"
os.environ["REDIS_URL"] = "redis://127.0.0.1:6379/7"
os.environ["CELERY_BROKER_URL"] = os.environ["REDIS_URL"]
os.environ.setdefault("SWEEP_BATCH", "100000")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "moderator.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

import bench  # noqa: E402
from games import postal  # noqa: E402
from games.models import DiceRoll, Game, Order, Seat, SeatLink, Step  # noqa: E402
from games.models import Event as EventRow  # noqa: E402
from moderator.mail import queueing  # noqa: E402
from moderator.mail.models import OutboundEmail  # noqa: E402

# The sweep's work ends when the outbox rows are committed; sending is measured elsewhere.
queueing.enqueue = bench.enqueue_nothing

# Games start 49 hours ago with 48-hour deadlines: every step is due, by the workers'
# clocks too.
START = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=49)
DUE = START + timedelta(hours=48)


def make_games(count: int, seats: int) -> list[int]:
    Game.objects.all().delete()
    OutboundEmail.objects.all().delete()
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
    steps = postal.due_step_ids(DUE, limit=count)
    assert len(steps) == count, (len(steps), count)
    return steps


def in_process(count: int, seats: int) -> dict[str, Any]:
    steps = make_games(count, seats)
    with CaptureQueriesContext(connection) as queries:
        assert postal.resolve_due_step(steps[0], now=DUE)
    began = time.perf_counter()
    for step_id in steps[1:]:
        assert postal.resolve_due_step(step_id, now=DUE)
    elapsed = time.perf_counter() - began
    resolved = len(steps) - 1
    return {
        "seats": seats,
        "how": "process",
        "steps": resolved,
        "seconds": round(elapsed, 3),
        "steps_per_second": round(resolved / elapsed, 1),
        "seats_per_second": round(resolved * seats / elapsed, 1),
        "queries_per_step": len(queries),
    }


def with_workers(count: int, seats: int, workers: int) -> dict[str, Any]:
    """The sweep hands the due steps to ``workers`` Celery processes; timed until done."""
    make_games(count, seats)
    import redis

    redis.Redis.from_url(os.environ["REDIS_URL"]).flushdb()
    env = dict(os.environ, DB_CONN_MAX_AGE="60")
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "moderator",
                "worker",
                "--queues",
                "steps",
                "--concurrency",
                "1",
                "--hostname",
                f"bench{n}@%h",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "--loglevel",
                "WARNING",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for n in range(workers)
    ]
    try:
        time.sleep(4)  # the workers start and connect
        from games.tasks import top_up_steps

        # What the steps run does, at the moment every step is due (its clock is ``DUE``).
        began = time.perf_counter()
        top_up_steps(DUE, waiting=0)
        while Step.objects.filter(status=Step.Status.DONE).count() < count:
            time.sleep(0.02)
        elapsed = time.perf_counter() - began
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)
    return {
        "seats": seats,
        "how": f"workers {workers}",
        "steps": count,
        "seconds": round(elapsed, 3),
        "steps_per_second": round(count / elapsed, 1),
        "seats_per_second": round(count * seats / elapsed, 1),
    }


# --- the raw SQL baseline -------------------------------------------------------------------


def captured_step(seats: int) -> dict[str, Any]:
    """The rows one real resolution writes, to be written again by the baseline."""
    steps = make_games(2, seats)
    step = Step.objects.get(pk=steps[0])
    postal.resolve_due_step(step.pk, now=DUE)
    game = step.game
    following = Step.objects.get(game=game, number=2)
    return {
        "game": Game.objects.filter(pk=game.pk).values("id", "state").get(),
        "step": Step.objects.filter(pk=step.pk).values("state_after").get(),
        "next": Step.objects.filter(pk=following.pk)
        .values("prompts", "state_before", "deadline")
        .get(),
        "orders": list(Order.objects.filter(step=step).values("seat_id", "parsed", "canonical")),
        "dice": list(DiceRoll.objects.filter(step=step).values("index", "sides", "value")),
        "events": list(EventRow.objects.filter(step=step).values("text", "audience")),
        "links": list(
            SeatLink.objects.filter(seat__game=game).values("seat_id", "purpose")[:seats]
        ),
        "emails": list(
            OutboundEmail.objects.filter(game=game, dedupe_key__startswith="report:")
            .filter(dedupe_key__contains=":2:")
            .values("to", "reply_to", "thread", "subject", "text", "html", "attachments")
        ),
    }


def raw_sql(count: int, seats: int) -> dict[str, Any]:
    import psycopg
    from psycopg.types.json import Jsonb

    rows = captured_step(seats)
    steps = make_games(count, seats)
    games = dict(Step.objects.filter(pk__in=steps).values_list("pk", "game_id"))
    seat_ids = {
        game_id: list(
            Seat.objects.filter(game_id=game_id).order_by("position").values_list("pk", flat=True)
        )
        for game_id in games.values()
    }
    settings = connection.settings_dict
    conn = psycopg.connect(
        host=settings["HOST"],
        port=settings["PORT"] or 5432,
        user=settings["USER"],
        dbname=settings["NAME"],
    )
    began = time.perf_counter()
    for number, step_id in enumerate(steps):
        game_id = games[step_id]
        seat_list = seat_ids[game_id]
        with conn.transaction():
            cur = conn.cursor()
            cur.execute("SELECT id, state FROM games_game WHERE id = %s FOR UPDATE", [game_id])
            cur.execute("SELECT * FROM games_step WHERE id = %s", [step_id])
            cur.execute("SELECT * FROM games_seat WHERE game_id = %s ORDER BY position", [game_id])
            cur.executemany(
                "INSERT INTO games_order (step_id, seat_id, text, parsed, canonical, source, "
                "received_at, receipt_due, results) "
                "VALUES (%s, %s, '', %s, %s, 'default', %s, false, '[]')",
                [
                    (step_id, seat_list[i % seats], Jsonb(o["parsed"]), o["canonical"], DUE)
                    for i, o in enumerate(rows["orders"])
                ],
            )
            cur.execute(
                "UPDATE games_seat SET nmr_count = nmr_count + 1 WHERE game_id = %s", [game_id]
            )
            cur.executemany(
                "INSERT INTO games_diceroll (game_id, index, sides, value, step_id, label) "
                "VALUES (%s, %s, %s, %s, %s, 'step 1')",
                [
                    (game_id, 1000 + d["index"], d["sides"], d["value"], step_id)
                    for d in rows["dice"]
                ],
            )
            cur.executemany(
                "INSERT INTO games_event (game_id, step_id, text, audience) "
                "VALUES (%s, %s, %s, %s)",
                [(game_id, step_id, e["text"], Jsonb(e["audience"])) for e in rows["events"]],
            )
            cur.execute(
                "UPDATE games_step SET status = 'done', state_after = %s, closed_at = %s, "
                "closed_by = 'deadline' WHERE id = %s",
                [Jsonb(rows["step"]["state_after"]), DUE, step_id],
            )
            cur.execute(
                "INSERT INTO games_step (game_id, number, status, opened_at, deadline, prompts, "
                "state_before, failures, last_error, closed_by) VALUES "
                "(%s, 2, 'open', %s, %s, %s, %s, 0, '', '')",
                [game_id, DUE, rows["next"]["deadline"], Jsonb(rows["next"]["prompts"]),
                 Jsonb(rows["next"]["state_before"])],
            )  # fmt: skip
            cur.executemany(
                "INSERT INTO games_seatlink (seat_id, token_hash, purpose, link_version, "
                "created_at, expires_at) VALUES (%s, %s, 'play', 0, %s, %s)",
                [(seat_list[i], f"raw-{seats}-{number}-{i}", DUE, DUE) for i in range(seats)],
            )
            cur.executemany(
                "INSERT INTO mail_outboundemail (dedupe_key, kind, game_id, \"to\", reply_to, "
                "thread, subject, text, html, headers, state, attempts, message_id, "
                "esp_message_id, last_error, created_at, attachments, delivery, "
                "delivery_detail) VALUES (%s, 'report', %s, %s, %s, %s, %s, %s, %s, '{}', "
                "'pending', 0, '', '', '', now(), %s, '', '')",
                [
                    (f"raw:{seats}:{number}:{i}", game_id, e["to"], e["reply_to"], e["thread"],
                     e["subject"], e["text"], e["html"], Jsonb(e["attachments"]))
                    for i, e in enumerate(rows["emails"])
                ],
            )  # fmt: skip
            cur.execute(
                "UPDATE games_game SET state = %s, step_number = 2, dice_drawn = %s WHERE id = %s",
                [Jsonb(rows["game"]["state"]), 1000 + len(rows["dice"]), game_id],
            )
    elapsed = time.perf_counter() - began
    conn.close()
    return {
        "seats": seats,
        "how": "raw SQL",
        "steps": count,
        "seconds": round(elapsed, 3),
        "steps_per_second": round(count / elapsed, 1),
        "seats_per_second": round(count * seats / elapsed, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--seats", type=int, nargs="+", default=[3, 5, 8])
    parser.add_argument("--quick", action="store_true", help="20 games of 5 seats")
    parser.add_argument("--json", default=str(ROOT / "var" / "bench" / "resolve_steps.json"))
    args = parser.parse_args()
    if args.quick:
        args.games, args.seats = 20, [5]
    bench.fresh_database()
    results = []
    print(f"{'seats':>5} {'how':>10} {'steps':>6} {'seconds':>8} {'steps/s':>8} "
          f"{'seats/s':>8} {'queries':>8} {'vs raw':>7}")  # fmt: skip
    for seats in args.seats:
        rows = [
            in_process(args.games, seats),
            with_workers(args.games, seats, 1),
            with_workers(args.games, seats, 2),
            raw_sql(args.games, seats),
        ]
        raw = rows[-1]["steps_per_second"]
        for row in rows:
            row["ratio_to_raw_sql"] = round(row["steps_per_second"] / raw, 3)
            print(
                f"{row['seats']:>5} {row['how']:>10} {row['steps']:>6} {row['seconds']:>8.2f} "
                f"{row['steps_per_second']:>8.1f} {row['seats_per_second']:>8.1f} "
                f"{row.get('queries_per_step', ''):>8} "
                f"{row['ratio_to_raw_sql']:>7.3f}"
            )
        results += rows
    five = [r for r in results if r["seats"] == 5 and r["how"] != "raw SQL"]
    best = max((r for r in five), key=lambda r: r["steps_per_second"], default=None)
    queries = {r["queries_per_step"] for r in results if "queries_per_step" in r}
    goals = []
    if best is not None:
        goals.append(
            {
                "what": "steps of 5 seats per second (best of process, 1 and 2 workers)",
                "goal": "at least 100 on 2 cores",
                "value": f"{best['steps_per_second']} ({best['how']})",
                "met": best["steps_per_second"] >= 100,
            }
        )
    goals.append(
        {
            "what": "queries per step for " + ", ".join(str(s) for s in args.seats) + " seats",
            "goal": "the same for every number of seats",
            "value": ", ".join(f"{q} queries" for q in sorted(queries)),
            "met": len(queries) == 1,
        }
    )
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(
        json.dumps(
            {
                "benchmark": "resolve_steps",
                "quick": args.quick,
                "run_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "method": (
                    f"{args.games} Choice games per seat count, started 49 hours ago with "
                    "48-hour deadlines, so step 1 of each is due; reports rendered and written "
                    "to the outbox. 'process': resolved one after another in the benchmark's "
                    "process; 'workers N': one steps run's worth of resolve_due_steps tasks "
                    "(STEP_BATCH "
                    f"{settings.STEP_BATCH} steps each) handed to N Celery workers "
                    "(concurrency 1) through Redis, timed until every step is done; 'raw "
                    "SQL': the same database writes per step (rows captured from a real "
                    "resolution) with psycopg in one transaction each: the limit. "
                    "'queries_per_step': the queries of one step, as Django's query log "
                    "counts them (BEGIN and COMMIT included)."
                ),
                "rows": results,
                "targets": goals,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
