"""Receipts: an accepted order is echoed by email. The order's transaction only marks the
order as owed its receipt; a worker writes the email (with a new link) once the order is
committed, each receipt once, and the sweep hands out receipts whose task was lost."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

import psycopg
import pytest
from django.db import connection

from games import access, postal, tasks
from games.engines.choice import ChoiceEngine
from games.models import Game, Seat, Step
from moderator.mail.models import OutboundEmail
from tests.factories import GMFactory, choice_game

pytestmark = pytest.mark.django_db

SEED = bytes(range(32))
CHOICE = ChoiceEngine()
SITE = "http://127.0.0.1:8000"


@pytest.fixture
def receipt_tasks(published: Any) -> list[dict[str, Any]]:
    return published(tasks.write_receipts)


def berlin_game(now: datetime) -> Game:
    return postal.start_game(choice_game(2, time_zone="Europe/Berlin").pk, now=now, seed=SEED)


def nmr_text(game: Game, position: int) -> str:
    game.refresh_from_db()
    state = CHOICE.state_from_json(game.state)
    return CHOICE.canonical(state, position, CHOICE.default(state, position))


def receipts() -> list[OutboundEmail]:
    return list(OutboundEmail.objects.filter(kind="receipt").order_by("id"))


def link_token(text: str) -> str:
    found = re.search(rf"^Your page: {SITE}/p/([\w-]+)/$", text, re.M)
    assert found is not None
    return found.group(1)


def test_an_accepted_order_is_marked_and_its_receipt_handed_over_once_it_commits(
    now, receipt_tasks, django_capture_on_commit_callbacks
):
    game = berlin_game(now)
    with django_capture_on_commit_callbacks() as callbacks:
        order = postal.accept_order(
            game_id=game.pk, position=0, text=nmr_text(game, 0), source="web", now=now
        )
        assert receipt_tasks == []  # nothing is published before the commit
    assert (order.receipt_due, order.results) == (True, [])
    assert receipts() == []
    for callback in callbacks:
        callback()
    assert receipt_tasks == [{"order_ids": [order.pk]}]


def test_the_worker_writes_the_receipt_of_a_sealed_order_once(
    now, django_capture_on_commit_callbacks
):
    game = berlin_game(now)
    canonical = nmr_text(game, 0)
    later = now + timedelta(minutes=1)
    order = postal.accept_order(
        game_id=game.pk, position=0, text=canonical.upper(), source="email", now=later
    )
    with django_capture_on_commit_callbacks() as mail_callbacks:
        assert tasks.write_receipts(order_ids=[order.pk]) == 1
    (email,) = receipts()
    token = link_token(email.text)
    ann = Seat.objects.get(game=game, position=0)
    assert access.seat_for(token, now=later) == ann
    assert (email.to, email.subject, email.dedupe_key, email.state) == (
        "ann@example.org",
        "Test Choice: order received for step 1",
        f"receipt:{order.pk}",
        "pending",
    )
    assert email.text == (
        "Hello ann,\n\n"
        'Your order for step 1 of "Test Choice" was received Mon 23 Nov 2026 19:01 CET '
        "(18:01 UTC)\nand is accepted. It reads:\n\n"
        + "".join(f"  {line}\n" for line in canonical.splitlines())
        + "\nThis is now the order that counts. It stays sealed: nobody else sees it before "
        "the step\nresolves. You can replace it with a new order until the deadline, "
        "Wed 25 Nov 2026 19:00 CET (18:00 UTC);\nthe latest valid order counts.\n\n"
        f"Your page: {SITE}/p/{token}/\n\n"
    )
    pre = '<pre style="margin:0 0 12px;font-size:15px;white-space:pre-wrap">'
    assert f"{pre}{canonical}</pre>" in email.html
    assert f'<a href="{SITE}/p/{token}/">Your page</a>' in email.html
    # The email goes to the mail workers when the receipt's transaction commits.
    assert len(mail_callbacks) == 1
    order.refresh_from_db()
    assert order.receipt_due is False
    # Delivered again (a worker died before acknowledging it), or the sweep's: nothing more.
    assert tasks.write_receipts(order_ids=[order.pk]) == 0
    assert [r.pk for r in receipts()] == [email.pk]


def test_one_task_writes_the_receipts_of_several_orders_each_with_its_own_link(now):
    games = [berlin_game(now) for _ in range(2)]
    orders = [
        postal.accept_order(game_id=g.pk, position=p, text=nmr_text(g, p), source="web", now=now)
        for g in games
        for p in (0, 1)
    ]
    # An order of ann's revised: both revisions are owed a receipt.
    orders.append(
        postal.accept_order(
            game_id=games[0].pk, position=0, text=nmr_text(games[0], 0), source="web", now=now
        )
    )
    assert tasks.write_receipts(order_ids=[order.pk for order in orders]) == 5
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


def survivor(now: datetime) -> Game:
    game = postal.create_game(
        gm=GMFactory(),
        engine_key="dice-survivor",
        title="Survivors",
        players=[postal.Player(name, f"{name}@example.org") for name in ("ann", "bob", "cy")],
        schedule_spec={"kind": "interval", "seconds": 3600},
    )
    return postal.start_game(game.pk, now=now, seed=SEED)


def test_the_receipt_of_an_order_that_took_effect_at_once_says_what_it_did(now):
    game = survivor(now)
    step = Step.objects.get(game=game, number=game.step_number)
    (prompt,) = step.prompts
    active = prompt["seat"]
    before = step.events.count()
    order = postal.accept_order(
        game_id=game.pk, position=active, text="extra", source="web", now=now
    )
    # What the order did (its roll, and who acts next), public here, kept with the order.
    done = list(step.events.order_by("id").values_list("text", flat=True))[before:]
    assert len(done) == 2 and done[0].startswith(f"{order.seat.name}: extra\n")
    assert (order.receipt_due, order.results) == (True, done)
    assert tasks.write_receipts(order_ids=[order.pk]) == 1
    (email,) = receipts()
    said = email.text.split("It took effect at once:\n\n")[1].split("The step's deadline")[0]
    assert said == "".join(f"  {text}\n" for text in done) + "\n"
    assert "The step's deadline: Mon 23 Nov 2026 19:00 UTC.\n" in email.text
    assert "".join(f"<li>{text}</li>" for text in done) in email.html


def test_a_receipt_whose_task_was_lost_is_written_by_the_sweep(
    now, time_machine, settings, caplog, django_capture_on_commit_callbacks, monkeypatch
):
    settings.SWEEP_SECONDS = 30
    time_machine.move_to(now, tick=False)
    game = berlin_game(now)

    def broker_away(**kwargs: Any) -> None:
        raise ConnectionError("Error 111 connecting to redis")

    monkeypatch.setattr(tasks.write_receipts, "delay", broker_away)
    with django_capture_on_commit_callbacks(execute=True):
        order = postal.accept_order(
            game_id=game.pk, position=0, text=nmr_text(game, 0), source="web", now=now
        )
    assert f"could not enqueue the receipts of orders [{order.pk}]" in caplog.text
    monkeypatch.undo()
    handed: list[dict[str, Any]] = []
    monkeypatch.setattr(tasks.write_receipts, "delay", lambda **kw: handed.append(kw))
    # Not before a sweep period has passed: its own task may still be on its way.
    time_machine.move_to(now + timedelta(seconds=30), tick=False)
    assert tasks.sweep()["receipts"] == 0
    time_machine.move_to(now + timedelta(seconds=31), tick=False)
    assert tasks.sweep()["receipts"] == 1
    assert handed == [{"order_ids": [order.pk]}]
    assert tasks.write_receipts(order_ids=[order.pk]) == 1
    assert [email.dedupe_key for email in receipts()] == [f"receipt:{order.pk}"]
    assert tasks.sweep()["receipts"] == 0


def test_the_sweep_hands_out_receipts_mail_batch_to_a_task(now, settings, receipt_tasks):
    settings.MAIL_BATCH = 2
    game = berlin_game(now)
    orders = [
        postal.accept_order(
            game_id=game.pk, position=p % 2, text=nmr_text(game, p % 2), source="web", now=now
        )
        for p in range(5)
    ]
    ids = [order.pk for order in orders]
    assert postal.due_receipt_ids(older_than=now, limit=10) == []
    assert postal.due_receipt_ids(older_than=now + timedelta(seconds=1), limit=10) == ids
    assert postal.due_receipt_ids(older_than=now + timedelta(seconds=1), limit=3) == ids[:3]
    tasks.hand_out_receipts(ids)
    assert receipt_tasks == [
        {"order_ids": ids[:2]},
        {"order_ids": ids[2:4]},
        {"order_ids": ids[4:]},
    ]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_an_order_another_writer_holds_is_left_to_it(now, receipt_tasks):
    game = berlin_game(now)
    order = postal.accept_order(
        game_id=game.pk, position=0, text=nmr_text(game, 0), source="web", now=now
    )
    settings = connection.settings_dict
    other = psycopg.connect(
        dbname=settings["NAME"],
        user=settings["USER"],
        password=settings["PASSWORD"],
        host=settings["HOST"],
        port=settings["PORT"] or None,
    )
    try:
        # Another worker is writing this receipt: it holds the order's row.
        other.execute("SELECT id FROM games_order WHERE id = %s FOR UPDATE", [order.pk])
        assert tasks.write_receipts(order_ids=[order.pk]) == 0
        assert receipts() == []
        other.rollback()
        assert tasks.write_receipts(order_ids=[order.pk]) == 1
    finally:
        other.close()
    assert [email.dedupe_key for email in receipts()] == [f"receipt:{order.pk}"]
    # Its own task was published when the order committed; it finds nothing left to do.
    assert receipt_tasks == [{"order_ids": [order.pk]}]
    assert tasks.write_receipts(**receipt_tasks[0]) == 0
