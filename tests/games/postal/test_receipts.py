"""Receipts: an accepted order is echoed by email. The order's transaction only marks the
order as owed its receipt; the workers' run (beat, every RECEIPT_SECONDS) writes each
receipt once, with a new link, whatever became of earlier runs."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

import psycopg
import pytest
from django.conf import settings
from django.db import connection
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks, Settings

from games import postal, tasks
from games.engines.choice.rules import ChoiceEngine
from games.models import Game, Order, Seat, Step
from games.postal import access
from moderator.mail.models import OutboundEmail
from tests.factories import EVERY_HOUR, started_game, without_footer

pytestmark = pytest.mark.django_db

CHOICE = ChoiceEngine()
SITE = "http://127.0.0.1:8000"


def berlin_game(now: datetime) -> Game:
    return started_game(now=now, players=2, time_zone="Europe/Berlin")


def nmr_text(game: Game, position: int) -> str:
    game.refresh_from_db()
    state = CHOICE.state_from_json(game.state)
    return CHOICE.canonical(state, position, CHOICE.default(state, position))


def accept(game: Game, position: int, now: datetime, **kwargs: Any) -> Order:
    if "text" not in kwargs:
        kwargs["text"] = nmr_text(game, position)
    # An order by email always gets its receipt (one made on the page only when its
    # player asked for them: test_web_receipts.py).
    kwargs.setdefault("source", "email")
    return postal.accept_order(game_id=game.pk, position=position, now=now, **kwargs)


def receipts() -> list[OutboundEmail]:
    return list(OutboundEmail.objects.filter(kind="receipt").order_by("id"))


def link_token(text: str) -> str:
    found = re.search(rf"^Your page: {SITE}/p/([\w-]+)/$", text, re.M)
    assert found is not None
    return found.group(1)


def test_beat_has_the_workers_write_receipts_every_receipt_seconds() -> None:
    assert settings.RECEIPT_SECONDS == 5
    assert settings.CELERY_BEAT_SCHEDULE["receipts"] == {
        "task": "games.write_receipts",
        "schedule": 5.0,
    }
    assert settings.CELERY_TASK_ROUTES["games.*"] == {"queue": "steps"}


def test_an_accepted_order_is_marked_and_nothing_is_written_or_published_for_it(
    now: datetime, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    game = berlin_game(now)
    before = OutboundEmail.objects.count()
    with django_capture_on_commit_callbacks() as after_commit:
        order = accept(game, 0, now)
    assert after_commit == []
    assert (order.receipt_due, order.results) == (True, [])
    assert OutboundEmail.objects.count() == before


def test_the_workers_write_the_receipt_of_a_sealed_order_once(
    now: datetime, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    game = berlin_game(now)
    canonical = nmr_text(game, 0)
    later = now + timedelta(minutes=1)
    order = accept(game, 0, later, text=canonical.upper(), source="email")
    with django_capture_on_commit_callbacks() as mail_callbacks:
        assert tasks.write_receipts() == 1
    (email,) = receipts()
    token = link_token(email.text)
    ann = Seat.objects.get(game=game, position=0)
    assert access.seat_for(token, now=later) == ann
    assert (email.to, email.subject, email.dedupe_key, email.state) == (
        "ann@example.org",
        "Test Choice: order received for postal turn 1",
        f"receipt:{order.pk}",
        "pending",
    )
    assert without_footer(email.text) == (
        "Hello ann,\n\n"
        'Your order for postal turn 1 of "Test Choice" was received Mon 23 Nov 2026 19:01 CET '
        "(18:01 UTC)\nand is accepted. It reads:\n\n"
        + "".join(f"  {line}\n" for line in canonical.splitlines())
        + "\nThis is now the order that counts. It stays sealed: nobody else sees it before\n"
        "postal turn 1 resolves. You can replace it with a new order until the deadline,\n"
        "Wed 25 Nov 2026 19:00 CET (18:00 UTC); the latest valid order counts.\n\n"
        f"Your page: {SITE}/p/{token}/\n"
    )
    pre = '<pre style="margin:0 0 12px;font-size:15px;white-space:pre-wrap">'
    assert f"{pre}{canonical}</pre>" in email.html
    assert f'<a href="{SITE}/p/{token}/">Your page</a>' in email.html
    # The email goes to the mail workers when the receipt's transaction commits.
    assert len(mail_callbacks) == 1
    order.refresh_from_db()
    assert order.receipt_due is False
    # The next run, or this one delivered again after a worker died: nothing more.
    assert tasks.write_receipts() == 0
    assert [r.pk for r in receipts()] == [email.pk]


def test_a_run_writes_every_receipt_owed_each_with_its_own_link(
    now: datetime,
    settings: Settings,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    settings.MAIL_BATCH = 2
    games = [berlin_game(now) for _ in range(2)]
    orders = [accept(game, position, now) for game in games for position in (0, 1)]
    orders.append(accept(games[0], 0, now))  # ann revised hers: both revisions are owed one
    with django_capture_on_commit_callbacks() as mail_callbacks:
        assert tasks.write_receipts() == 5
    assert len(mail_callbacks) == 3  # MAIL_BATCH to a transaction, each handed over once
    written = receipts()
    assert [email.dedupe_key for email in written] == [f"receipt:{o.pk}" for o in orders]
    assert [email.to for email in written] == [
        "ann@example.org",
        "bob@example.org",
        "ann@example.org",
        "bob@example.org",
        "ann@example.org",
    ]
    seats = [access.seat_for(link_token(email.text), now=now) for email in written]
    assert seats == [order.seat for order in orders]
    assert len({link_token(email.text) for email in written}) == 5


def test_a_run_stops_after_sweep_batch_receipts_and_the_next_takes_the_rest(
    now: datetime, settings: Settings
) -> None:
    settings.MAIL_BATCH = 2
    settings.SWEEP_BATCH = 3
    game = berlin_game(now)
    orders = [accept(game, position % 2, now) for position in range(5)]
    assert tasks.write_receipts() == 3
    assert [email.dedupe_key for email in receipts()] == [f"receipt:{o.pk}" for o in orders[:3]]
    assert tasks.write_receipts() == 2
    assert tasks.write_receipts() == 0
    assert len(receipts()) == 5


def test_the_receipt_of_an_order_that_took_effect_at_once_says_what_it_did(now: datetime) -> None:
    game = started_game("dice-survivor", now=now, schedule_spec=EVERY_HOUR)
    step = Step.objects.get(game=game, number=game.step_number)
    (prompt,) = step.prompts
    active = prompt["seat"]
    before = step.events.count()
    order = accept(game, active, now, text="extra")
    # What the order did (its roll, and who acts next), public here, kept with the order.
    done = list(step.events.order_by("id").values_list("text", flat=True))[before:]
    assert len(done) == 2 and done[0].startswith(f"{order.seat.name}: extra\n")
    assert (order.receipt_due, order.results) == (True, done)
    assert tasks.write_receipts() == 1
    (email,) = receipts()
    said = email.text.split("It took effect at once:\n\n")[1].split("The game has moved on")[0]
    assert said == "".join(f"  {text}\n" for text in done) + "\n"
    # The order moved the game on: the receipt quotes no deadline of the step it closed.
    moved_on = "The game has moved on since: your page shows what happened and what you owe now."
    assert email.text.split("\n\n")[-3] == moved_on
    assert "deadline" not in email.text
    assert "".join(f"<li>{text}</li>" for text in done) in email.html


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_an_order_another_run_holds_is_left_to_it(now: datetime) -> None:
    game = berlin_game(now)
    held, free = accept(game, 0, now), accept(game, 1, now)
    db = connection.settings_dict
    other = psycopg.connect(
        dbname=db["NAME"],
        user=db["USER"],
        password=db["PASSWORD"],
        host=db["HOST"],
        port=db["PORT"] or None,
    )
    try:
        # Another run is writing this receipt: it holds the order's row.
        other.execute("SELECT id FROM games_order WHERE id = %s FOR UPDATE", [held.pk])
        assert tasks.write_receipts() == 1
        assert [email.dedupe_key for email in receipts()] == [f"receipt:{free.pk}"]
        other.rollback()  # that run failed: its receipt is still owed
        assert tasks.write_receipts() == 1
    finally:
        other.close()
    assert [email.dedupe_key for email in receipts()] == [
        f"receipt:{free.pk}",
        f"receipt:{held.pk}",
    ]
    assert tasks.write_receipts() == 0
