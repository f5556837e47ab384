"""Less email, by the player's choice: an order made on the seat's page gets no receipt by
email unless its player turned them on; an order by email always gets one; and nothing
that quotes a deadline is sent once the game is over."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.core import mail

from games import postal
from games.engines import registry
from games.models import EmailPreference, Game, Order, Seat
from games.notify import reminders
from moderator.mail import sending
from moderator.mail.models import OutboundEmail
from tests.factories import started_game
from tests.games.playing import ONE_DIE, SeedOnlyDice, play_out

pytestmark = pytest.mark.django_db

HOUR = timedelta(hours=1)


@pytest.fixture(autouse=True)
def seed_only_dice(monkeypatch: pytest.MonkeyPatch) -> None:
    from games.postal import steps

    monkeypatch.setattr(steps, "VerifiableDice", SeedOnlyDice)


def order(game: Game, position: int, now: datetime, source: str) -> Order:
    game.refresh_from_db()
    engine = registry.get(game.engine)
    state = engine.state_from_json(game.state)
    text = engine.canonical(state, position, engine.default(state, position))
    return postal.accept_order(
        game_id=game.pk, position=position, text=text, source=source, now=now
    )


def receipts_to() -> list[str]:
    return list(
        OutboundEmail.objects.filter(kind="receipt").order_by("id").values_list("to", flat=True)
    )


def test_an_order_made_on_the_page_gets_no_receipt_by_default(now: datetime) -> None:
    game = started_game(now=now, players=3)

    made = order(game, 0, now + HOUR, Order.Source.WEB)

    assert made.receipt_due is False
    assert postal.write_receipts(now=now + 2 * HOUR) == 0
    assert receipts_to() == []


def test_an_order_made_on_the_page_gets_a_receipt_when_the_player_turned_them_on(
    now: datetime,
) -> None:
    game = started_game(now=now, players=3)
    chosen = postal.choose_reports(
        game.pk, position=0, choice="every", everywhere=False, web_receipts=True
    )
    assert [(seat.position, seat.web_receipts) for seat in chosen] == [(0, True)]

    made = order(game, 0, now + HOUR, Order.Source.WEB)
    order(game, 1, now + HOUR, Order.Source.WEB)

    assert made.receipt_due is True
    assert postal.write_receipts(now=now + 2 * HOUR) == 1
    assert receipts_to() == ["ann@example.org"]


def test_an_order_by_email_always_gets_a_receipt(now: datetime) -> None:
    game = started_game(now=now, players=3)
    assert Seat.objects.get(game=game, position=1).web_receipts is False

    made = order(game, 1, now + HOUR, Order.Source.EMAIL)

    assert made.receipt_due is True
    assert postal.write_receipts(now=now + 2 * HOUR) == 1
    assert receipts_to() == ["bob@example.org"]


def test_receipts_for_all_my_seats_hold_for_the_games_joined_later(now: datetime) -> None:
    game = started_game(now=now, players=3)
    postal.choose_reports(game.pk, position=0, choice="every", everywhere=True, web_receipts=True)
    assert EmailPreference.objects.get(email="ann@example.org").web_receipts is True

    later = started_game(now=now, players=["ann", "dee"])

    assert dict(later.seats.values_list("name", "web_receipts")) == {"ann": True, "dee": False}
    made = order(later, 0, now + HOUR, Order.Source.WEB)
    assert made.receipt_due is True


def test_the_receipt_of_the_order_that_ends_the_game_quotes_no_deadline(now: datetime) -> None:
    game = started_game("liars-dice", now=now, players=["ann", "bob"], options=ONE_DIE)

    play_out(game, sending={"ann", "bob"}, source=Order.Source.EMAIL, receipts=True)

    last = Order.objects.filter(step__game=game).order_by("id").last()
    assert last is not None
    receipt = OutboundEmail.objects.get(dedupe_key=f"receipt:{last.pk}")
    assert "deadline" not in receipt.text.lower()
    assert "deadline" not in receipt.html.lower()
    assert receipt.subject == "Test Liar's Dice: order received for postal turn 2"
    assert receipt.text.split("Your page: ")[0] == (
        "Hello bob,\n\n"
        'Your order for postal turn 2 of "Test Liar\'s Dice" was received '
        "Mon 23 Nov 2026 18:00 UTC\n"
        "and is accepted. It reads:\n\n"
        "  liar\n\n"
        "It took effect at once:\n\n"
        "  round 1: bob challenges ann's 1 x 2: there are 0 2s with ones, the bid fails. "
        "The dice: ann 3; bob 5\n"
        "  ann loses a die and now holds 0\n"
        "  ann has no dice left and is out\n"
        "  the game is over: 1. bob; 2. ann\n\n"
        "The game is over: your page shows the final standings.\n\n"
    )
    assert 'id="over"' in receipt.html
    # Every email from the finishing transaction on: the final standings, then the receipt.
    first_final = OutboundEmail.objects.filter(kind="final").order_by("id").first()
    assert first_final is not None
    after = OutboundEmail.objects.filter(pk__gte=first_final.pk).order_by("id")
    assert [(email.kind, email.to) for email in after] == [
        ("final", "ann@example.org"),
        ("final", "bob@example.org"),
        ("receipt", "bob@example.org"),
    ]
    assert [email.kind for email in after if "deadline" in email.text.lower()] == []
    assert [email.kind for email in after if "deadline" in email.html.lower()] == []


def test_a_reminder_queued_before_the_game_ended_is_never_sent(now: datetime) -> None:
    game = started_game("liars-dice", now=now, players=["ann", "bob"], options=ONE_DIE)
    # One seat bids at a time: the one on turn is reminded.
    assert reminders.send_reminders(now + 24 * HOUR) == 1
    queued = list(OutboundEmail.objects.filter(kind="reminder").values_list("pk", flat=True))
    assert len(queued) == 1

    play_out(game, sending={"ann", "bob"})
    mail.outbox.clear()

    assert OutboundEmail.objects.filter(kind="reminder").count() == 0
    assert sending.send_batch(queued, now=now + 25 * HOUR) == {}
    assert mail.outbox == []
    assert reminders.send_reminders(now + 46 * HOUR) == 0


def test_a_game_that_ends_while_its_reminders_are_read_gets_none(
    now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = started_game("liars-dice", now=now, players=["ann", "bob"], options=ONE_DIE)
    owed = reminders._owed

    def ended_meanwhile(due: Any) -> Any:
        # The game's last order commits after the sweep read the open steps.
        Game.objects.filter(pk=game.pk).update(status=Game.Status.FINISHED)
        return owed(due)

    monkeypatch.setattr(reminders, "_owed", ended_meanwhile)

    assert reminders.send_reminders(now + 24 * HOUR) == 0
    assert OutboundEmail.objects.filter(kind="reminder").count() == 0
