"""The three queues: what goes where, and how the steps run reads a queue's depth on the
real broker."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from celery import current_app
from django.conf import settings
from kombu import Connection
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks

from games import postal
from moderator import queues
from moderator.mail import queueing
from tests.factories import started_game


def queue_of(task_name: str) -> str:
    return str(current_app.amqp.router.route({}, task_name)["queue"].name)


def test_each_task_goes_to_its_queue() -> None:
    assert {
        name: queue_of(name)
        for name in (
            "games.hand_out_steps",
            "games.write_receipts",
            "games.send_lost_links",
            "games.sweep",
            "games.resolve_due_steps",
            "mail.send_emails",
            "mail.send_urgent_emails",
        )
    } == {
        "games.hand_out_steps": "urgent",
        "games.write_receipts": "urgent",
        "games.send_lost_links": "urgent",
        "games.sweep": "steps",
        "games.resolve_due_steps": "steps",
        "mail.send_emails": "mail",
        "mail.send_urgent_emails": "urgent",
    }


def test_beat_hands_out_due_steps_every_five_seconds_and_sweeps_every_thirty() -> None:
    schedule = settings.CELERY_BEAT_SCHEDULE
    assert schedule["steps"] == {"task": "games.hand_out_steps", "schedule": 5.0}
    assert schedule["sweep"] == {"task": "games.sweep", "schedule": 30.0}


@pytest.fixture
def scratch_queue() -> Iterator[str]:
    name = f"test-waiting-{uuid.uuid4().hex}"
    yield name
    with current_app.connection_for_write() as connection:
        connection.SimpleQueue(name).queue.delete()


@pytest.mark.filterwarnings("ignore::celery.exceptions.AlwaysEagerIgnored")
def test_waiting_counts_the_messages_in_a_queue_of_the_broker(
    scratch_queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(current_app.conf, "task_always_eager", False)
    assert queues.waiting(scratch_queue) == 0
    for _ in range(3):
        current_app.send_task("games.resolve_due_steps", kwargs={"limit": 1}, queue=scratch_queue)
    assert queues.waiting(scratch_queue) == 3
    # Where tasks run in the process that publishes them, none waits, whatever a broker
    # holds (left there by another process).
    monkeypatch.setitem(current_app.conf, "task_always_eager", True)
    assert queues.waiting(scratch_queue) == 0


@pytest.mark.django_db
def test_receipts_and_links_go_to_the_urgent_queue_and_reports_to_the_mail_queue(
    now: datetime,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    sent: dict[str, list[list[int]]] = {"mail.send_emails": [], "mail.send_urgent_emails": []}
    for name, batches in sent.items():
        monkeypatch.setattr(
            current_app.tasks[name],
            "delay",
            lambda batches=batches, **kw: batches.append(kw["outbound_ids"]),
        )
    with django_capture_on_commit_callbacks(execute=True):
        game = started_game(now=now - timedelta(days=3), players=2)
    with django_capture_on_commit_callbacks(execute=True), queueing.enqueue_after():
        postal.rotate_link(game.pk, position=0, now=now)
        assert postal.resolve_due_steps(now=now, limit=5) == 1
    assert [len(ids) for ids in sent["mail.send_urgent_emails"]] == [1]
    # start_game's two reports, then the step's two, handed over when the batch ended.
    assert [len(ids) for ids in sent["mail.send_emails"]] == [2, 2]


def test_the_messages_workers_took_are_pruned_from_the_embedded_broker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqla+sqlite:///{tmp_path / 'broker.sqlite3'}"
    monkeypatch.setitem(current_app.conf, "broker_url", url)
    monkeypatch.setitem(
        current_app.conf, "broker_transport_options", {"connect_args": {"timeout": 20}}
    )
    assert queues.prune_delivered() == 0  # nothing published yet: no table either
    with Connection(url) as connection:
        queue = connection.SimpleQueue("urgent")
        for number in range(3):
            queue.put({"number": number})
        taken = queue.get(timeout=5)
        taken.ack()
        # kombu keeps the row of the message taken (hidden) besides the two waiting.
        with sqlite3.connect(tmp_path / "broker.sqlite3") as database:
            assert database.execute(
                "SELECT visible, count(*) FROM kombu_message GROUP BY visible ORDER BY visible"
            ).fetchall() == [(0, 1), (1, 2)]
        assert queues.prune_delivered() == 1
        assert queues.prune_delivered() == 0
        assert [queue.get(timeout=5).payload["number"] for _ in range(2)] == [1, 2]
    assert queues.waiting("urgent") == 0
    assert queues.prune_delivered() == 2
    # Redis keeps nothing of the kind.
    monkeypatch.setitem(current_app.conf, "broker_url", "redis://127.0.0.1:6379/0")
    assert queues.prune_delivered() == 0


def test_beat_prunes_the_embedded_broker_every_ten_minutes(tmp_path: Path) -> None:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL"}
    }
    schedule = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings; "
         "print(settings.CELERY_BROKER_URL, settings.CELERY_BEAT_SCHEDULE.get('broker'))"],
        env=env | {"VAR_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "moderator.settings"},
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    assert schedule == (
        f"sqla+sqlite:///{tmp_path}/broker.sqlite3 "
        "{'task': 'games.prune_broker', 'schedule': 600.0}"
    )
    assert "broker" not in settings.CELERY_BEAT_SCHEDULE  # on Redis, nothing to prune
