"""Killing the worker in the middle of a step's resolution (DESIGN.md section 5): the test
holds a lock that the resolution's transaction waits for, so the worker stops there,
inside its transaction; then the worker's child, or the whole worker, is killed with
SIGKILL and the lock let go. After a restart the step is resolved exactly once, every die
exists once with its first value, and every seat has exactly one report of the next step.

Wherever it waits (on the first or the last table it writes), the transaction has sent no
COMMIT: nothing of the killed attempt is kept, and the restarted worker resolves the step
from the start. (It never waits on the game's lock: a worker claims due steps with SKIP
LOCKED and passes over a game another transaction holds; tests/games/postal/test_step_tasks.py.)"""

from __future__ import annotations

import os
import signal
from collections import Counter
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
from django.db import connection
from django.utils import timezone

from games.engines.dice import face
from games.models import DiceRoll, Game, Order, Step
from moderator.mail.models import OutboundEmail
from tests.factories import SEED, started_game
from tests.integration.conftest import Services, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.postgres, pytest.mark.redis]

# Where the resolution is stopped: the first and the last table its transaction writes.
TABLES = {"dice": "games_diceroll", "outbox": "mail_outboundemail"}


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found += [int(child) for child in text]
    return found


def blocking_row(where: str, game: Game) -> psycopg.Connection:
    """An uncommitted row with the unique key the resolution is about to insert into the
    table: its INSERT waits for this transaction (and nothing else does, not the sweep)."""
    settings = connection.settings_dict
    blocker = psycopg.connect(
        host=settings["HOST"],
        port=settings["PORT"] or 5432,
        user=settings["USER"],
        dbname=settings["NAME"],
        autocommit=False,
    )
    step = Step.objects.get(game=game, number=1)
    if where == "dice":
        blocker.execute(
            "INSERT INTO games_diceroll (game_id, index, sides, value, step_id, label) "
            "VALUES (%s, %s, 6, 1, %s, 'blocker')",
            [game.pk, game.dice_drawn, step.pk],
        )
    else:
        blocker.execute(
            'INSERT INTO mail_outboundemail (dedupe_key, kind, "to", reply_to, thread, '
            "subject, text, html, headers, state, attempts, message_id, esp_message_id, "
            "last_error, created_at, attachments, delivery, delivery_detail) VALUES "
            "(%s, 'report', 'x@example.org', '', '', 's', 't', '', '{}', 'pending', 0, '', '', "
            "'', now(), '[]', '', '')",
            [f"report:{game.pk}:2:0"],
        )
    return blocker


def step_two_keys(game: Game) -> list[str]:
    return [f"report:{game.pk}:2:{position}" for position in range(3)]


def waiting_on(blocker: psycopg.Connection) -> list[int]:
    """The server processes whose statements wait for the blocker: the resolution's."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))",
            [blocker.info.backend_pid],
        )
        return [pid for (pid,) in cursor.fetchall()]


def gone(pids: list[int]) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", [pids])
        count: int = cursor.fetchone()[0]
        return count == 0


@pytest.mark.parametrize("where", TABLES)
@pytest.mark.parametrize("victim", ["child", "worker"])
def test_a_step_survives_a_worker_killed_mid_resolution(
    services: Services, where: str, victim: str
) -> None:
    game = started_game(
        now=timezone.now() - timedelta(minutes=2),
        players=3,
        schedule_spec={"kind": "interval", "seconds": 60},
    )
    # The start reports are sent before the lock is taken, so that only the step waits.
    OutboundEmail.objects.update(state="sent")
    drawn = DiceRoll.objects.filter(game=game).count()
    assert drawn == game.dice_drawn > 0
    table = TABLES[where]
    blocker = blocking_row(where, game)
    try:
        worker = services.start(
            "worker", "worker", "--queues", "urgent,steps", "--concurrency", "1",
            "--without-gossip", "--without-mingle", "--loglevel", "INFO",
        )  # fmt: skip
        services.beat()
        wait_for(lambda: waiting_on(blocker), 60, f"the resolution to wait on {table}", services)
        attempt = waiting_on(blocker)
        if victim == "child":
            for pid in children(worker.pid):
                os.kill(pid, signal.SIGKILL)
        else:
            services.stop("worker", signal.SIGKILL)
    finally:
        blocker.rollback()
        blocker.close()
    if victim == "worker":
        # The killed attempt's server process ends once it has nothing left to run.
        wait_for(lambda: gone(attempt), 30, "the killed attempt's session to end", services)
        # No COMMIT was sent: nothing of it is kept (the step open, no die, no step).
        assert Step.objects.get(game=game, number=1).status == "open"
        assert (DiceRoll.objects.filter(game=game).count(), game.steps.count()) == (drawn, 1)
        assert not OutboundEmail.objects.filter(dedupe_key__in=step_two_keys(game)).exists()
        services.worker(queues="urgent,steps,mail")

    def resolved() -> bool:
        return Step.objects.filter(game=game, number=1, status="done").exists()

    wait_for(resolved, 90, "step 1 to be resolved after the kill", services)
    wait_for(
        lambda: OutboundEmail.objects.filter(dedupe_key__in=step_two_keys(game)).count() == 3,
        30,
        "the step 2 reports",
        services,
    )
    game = Game.objects.get(pk=game.pk)
    assert list(game.steps.order_by("number").values_list("number", "status")) == [
        (1, "done"),
        (2, "open"),
    ]
    rolls = list(DiceRoll.objects.filter(game=game).order_by("index"))
    assert [roll.index for roll in rolls] == list(range(game.dice_drawn))
    assert all(roll.value == face(SEED, game.pk, roll.index, roll.sides) for roll in rolls)
    defaults = Counter(
        Order.objects.filter(step__game=game, step__number=1).values_list(
            "seat__position", flat=True
        )
    )
    assert defaults == Counter({0: 1, 1: 1, 2: 1})
    reports = Counter(
        OutboundEmail.objects.filter(dedupe_key__in=step_two_keys(game)).values_list(
            "to", flat=True
        )
    )
    assert reports == Counter({f"{n}@example.org": 1 for n in ("ann", "bob", "cy")})
    if victim == "worker":
        # Sent by the new worker, which resolved the step in the killed attempt's place.
        wait_for(
            lambda: (
                OutboundEmail.objects.filter(
                    dedupe_key__in=step_two_keys(game), state="sent"
                ).count()
                == 3
            ),
            60,
            "the step 2 reports to be sent",
            services,
        )
