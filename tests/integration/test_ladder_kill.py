"""A worker killed in the middle of the reminders' sweep (games.notify.reminders): the test
holds an uncommitted push row with the key bob's push rung is about to write, so the sweep
stops there, inside its transaction, after it has written the emails' rows; then the worker
is killed with SIGKILL and the row let go. After a restart every rung is written exactly
once: one email reminder per seat, and bob's push."""

from __future__ import annotations

import signal
from datetime import timedelta

import psycopg
import pytest
from django.db import connection
from django.utils import timezone

from games import postal
from games.management.commands.makevapidkeys import new_keys
from games.models import PushDelivery, PushSubscription, Seat, Step
from games.notify import push, reminders
from games.notify.ladder import EMAIL, PUSH, Rung
from moderator.mail.models import OutboundEmail
from tests.factories import started_game
from tests.integration.conftest import Services, wait_for, wait_for_sweeps

pytestmark = [pytest.mark.integration, pytest.mark.postgres, pytest.mark.redis]


def blocking_push(key: str, subscription: PushSubscription) -> psycopg.Connection:
    """An uncommitted push row with ``key``: the sweep's INSERT of it waits for this."""
    settings = connection.settings_dict
    blocker = psycopg.connect(
        host=settings["HOST"],
        port=settings["PORT"] or 5432,
        user=settings["USER"],
        dbname=settings["NAME"],
        autocommit=False,
    )
    blocker.execute(
        "INSERT INTO games_pushdelivery (subscription_id, dedupe_key, payload, state, "
        "attempts, last_error, created_at) VALUES (%s, %s, '{}', 'pending', 0, '', now())",
        [subscription.pk, key],
    )
    return blocker


def waiting_on(blocker: psycopg.Connection) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))",
            [blocker.info.backend_pid],
        )
        return [pid for (pid,) in cursor.fetchall()]


def test_each_rung_is_written_once_when_the_worker_is_killed_mid_sweep(services: Services) -> None:
    keys = new_keys()
    services.env.update(VAPID_PUBLIC_KEY=keys["public"], VAPID_PRIVATE_KEY=keys["private"])
    # The step opened two hours ago, its deadline an hour away: the 2-hour rung is due.
    game = started_game(
        now=timezone.now() - timedelta(hours=2),
        schedule_spec={"kind": "interval", "seconds": 3 * 3600},
        early_processing=False,
    )
    bob = Seat.objects.select_related("game").get(game=game, position=1)
    subscription = PushSubscription.objects.create(
        email="bob@example.org",
        seat=None,
        endpoint="https://push.example.org/send/bob",
        p256dh="BGoF8JhgGGsoUikXz3yR6Dlx-y4OQ0WD27aRjUlWbew4W6zBEqjxdFZA-BXjXiuYDHNYNGRd"
        "dfrLXMMR128viCo",
        auth="AAECAwQFBgcICQoLDA0ODw",
        created_at=timezone.now(),
    )
    postal.choose_ladder(bob, [Rung(2, PUSH), Rung(2, EMAIL)], everywhere=True)
    step = Step.objects.get(game=game)
    mails = [reminders.reminder_key(step, position, 2) for position in range(3)]
    pushed = reminders.push_key(step, 1, 2, subscription)
    assert push.endpoint_key(subscription) in pushed

    blocker = blocking_push(pushed, subscription)
    try:
        services.start(
            "worker", "worker", "--queues", "urgent,steps", "--concurrency", "1",
            "--without-gossip", "--without-mingle", "--loglevel", "INFO",
        )  # fmt: skip
        services.beat()
        wait_for(lambda: waiting_on(blocker), 60, "the sweep to wait on the push row", services)
        services.stop("worker", signal.SIGKILL)
    finally:
        blocker.rollback()
        blocker.close()
    # Nothing of the killed sweep is kept: no reminder email was written.
    assert not OutboundEmail.objects.filter(dedupe_key__in=mails).exists()

    services.worker(queues="urgent,steps")
    wait_for(
        lambda: (
            OutboundEmail.objects.filter(dedupe_key__in=mails).count() == 3
            and PushDelivery.objects.filter(dedupe_key=pushed).exists()
        ),
        60,
        "the reminders after the restart",
        services,
    )
    # More sweeps write nothing again.
    wait_for_sweeps(3, services)
    assert sorted(
        OutboundEmail.objects.filter(kind="reminder").values_list("dedupe_key", flat=True)
    ) == sorted(mails)
    assert list(PushDelivery.objects.values_list("dedupe_key", flat=True)) == [pushed]
