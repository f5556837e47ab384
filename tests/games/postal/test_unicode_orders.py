"""An order whose numbers are not written in the digits 0-9 (a superscript '²', which
``str.isdigit`` passes and ``int`` refuses; an Arabic-Indic '٣'), or whose number runs far
past anything the game can mean, is answered with the game's message through the web form
of a seat page and through an email reply: never a 500, and nothing is stored."""

from __future__ import annotations

from datetime import datetime
from html import escape

import pytest
from django.test import Client
from pytest_django.fixtures import Settings

from games.models import Order, Seat
from moderator.mail.models import InboundMessage
from tests.factories import seat_page, started_game
from tests.games.notify.test_replies import (
    SECRET,
    SIGNING_KEY,
    auth,
    post_postmark,
    postmark_payload,
    refusals,
    reply_address,
)
from tests.games.web.test_views import fresh_ip, log_in, snapshot, text_errors, typed_data

pytestmark = pytest.mark.django_db


# (game, order typed by seat 0, the game's message); seat 0 owes an order at step 1 of each.
ORDERS = [
    pytest.param(
        "liars-dice",
        "bid ² 3",
        "bid ² 3: the quantity must be a whole number in the digits 0-9, not '²'",
        id="liars-dice-superscript",
    ),
    pytest.param(
        "liars-dice",
        "bid ٣ 3",
        "bid ٣ 3: the quantity must be a whole number in the digits 0-9, not '٣'",
        id="liars-dice-arabic-indic",
    ),
    pytest.param(
        "liars-dice",
        "bid 99999999999999999999999999999 3",
        "bid 99999999999999999999999999999 3: the quantity must be at most 999 (15 dice in play)",
        id="liars-dice-huge",
    ),
    pytest.param(
        "choice",
        "²: W3 1+4 3+5",
        "round 1: cannot read the prefix '²'; write the round number, e.g. 1: W5 1+3 3+4",
        id="choice-superscript",
    ),
    pytest.param(
        "first-player",
        "give bob ² dice",
        "give bob ² dice: '²' is not a number of dice; write it in the digits 0-9",
        id="first-player-superscript",
    ),
]


@pytest.fixture(autouse=True)
def inbound(settings: Settings, now: datetime) -> None:
    """Replies come in through Postmark's webhook, as in tests/games/notify/test_replies.py."""
    settings.INBOUND_ADDRESS = "orders@in.example.org"
    settings.ANYMAIL = {"WEBHOOK_SECRET": [SECRET], "MAILGUN_WEBHOOK_SIGNING_KEY": SIGNING_KEY}


@pytest.mark.parametrize(("engine", "text", "message"), ORDERS)
def test_the_web_form_answers_with_the_games_message_and_stores_nothing(
    engine: str, text: str, message: str, now: datetime
) -> None:
    game = started_game(engine, now=now)
    assert 0 in game.steps.get().prompted_seats
    client = Client(REMOTE_ADDR=fresh_ip())
    log_in(client, game, 0, now)
    before = snapshot(game)

    response = client.post(seat_page(game, 0), typed_data(0, text, step=game.step_number))

    assert response.status_code == 200
    assert text_errors(response.content.decode()) == [escape(message)]
    assert snapshot(game) == before


@pytest.mark.parametrize(("engine", "text", "message"), ORDERS)
def test_an_email_reply_is_answered_with_the_games_message_and_stores_nothing(
    engine: str, text: str, message: str, now: datetime
) -> None:
    game = started_game(engine, now=now)
    seat = Seat.objects.get(game=game, position=0)
    state = game.state

    response = post_postmark(postmark_payload(reply_address(seat), text), **auth())

    assert response.status_code == 200
    assert InboundMessage.objects.get().note == message
    (refused,) = refusals()
    assert refused.to == "ann@example.org"
    # The refusal quotes the reason indented by two spaces, apart from the player's text.
    assert [line for line in refused.text.splitlines() if line.startswith("  ")] == [f"  {message}"]
    game.refresh_from_db()
    assert (Order.objects.count(), game.state) == (0, state)
