"""Conditional orders by each way in (docs/orders.md): the seat's page, an emailed reply and
the API, each kept by ``games.postal.conditionals`` and played when the seat's turn comes."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
from django.test import Client
from pytest_django.fixtures import Settings

from games import postal
from games.community import tokens
from games.models import ConditionalOrder, Game, Order, Seat
from games.postal import access
from moderator.mail.models import InboundMessage, OutboundEmail
from tests.factories import seat_page, started_game
from tests.games.notify.test_replies import SECRET, auth, post_postmark, postmark_payload

pytestmark = pytest.mark.django_db


def _seats(game: Game) -> tuple[int, int, int]:
    first = int(game.rules.state_from_json(game.state).turn)
    return first, (first + 1) % 3, (first + 2) % 3


def _bid(game: Game, position: int, text: str, now: datetime) -> None:
    postal.accept_order(
        game_id=game.pk, position=position, text=text, source=Order.Source.WEB, now=now
    )


def _browser(seat: Seat, now: datetime) -> Client:
    browser = Client()
    token = access.mint([seat], now=now)[seat.position]
    assert browser.post(f"/p/{token}/").status_code == 302
    return browser


def test_the_seat_page_leaves_and_withdraws_one(now: datetime) -> None:
    game = started_game("liars-dice", now=now, players=3)
    first, _, third = _seats(game)
    seat = game.seats.get(position=third)
    browser = _browser(seat, now)
    page = browser.get(seat_page(game, third)).content.decode()
    assert 'id="conditional-form"' in page
    left = browser.post(
        f"/play/{game.pk}/{third}/conditional/",
        {"conditional": "if 4 5 or more: liar; else: raise 5"},
        follow=True,
    )
    said = left.content.decode()
    assert (
        "Your conditional order is kept for your turn: if 4 5 or more: liar; else: raise 5." in said
    )
    assert "<code>if 4 5 or more: liar; else: raise 5</code>" in said
    kept = ConditionalOrder.objects.get()
    refused = browser.post(
        f"/play/{game.pk}/{third}/conditional/",
        {"conditional": "if 4 9 or more: liar"},
        follow=True,
    )
    assert "Your conditional order was not kept: if &lt;quantity&gt; &lt;face&gt;" in (
        refused.content.decode()
    )
    gone = browser.post(f"/play/{game.pk}/{third}/conditional/{kept.pk}/withdraw/", follow=True)
    assert "Your conditional order is withdrawn." in gone.content.decode()
    kept.refresh_from_db()
    assert kept.status == "withdrawn"
    # The seat on turn is told to play its turn instead.
    on_turn = _browser(game.seats.get(position=first), now).get(seat_page(game, first))
    assert 'id="conditional-form"' not in on_turn.content.decode()


def test_an_emailed_reply_starting_with_if_is_a_conditional_order(
    now: datetime, settings: Settings
) -> None:
    settings.INBOUND_ADDRESS = "orders@in.example.org"
    settings.ANYMAIL = {"WEBHOOK_SECRET": [SECRET]}
    game = started_game("liars-dice", now=now, players=3)
    first, second, third = _seats(game)
    seat = game.seats.get(position=third)
    to = access.reply_address(seat)
    assert to is not None
    text = "If 4 5 or more: liar\nelse: raise 5\n\nThanks,\nCy"
    assert post_postmark(postmark_payload(to, text), **auth()).status_code == 200
    kept = ConditionalOrder.objects.get()
    assert (kept.words, kept.source) == ("if 4 5 or more: liar; else: raise 5", "email")
    assert InboundMessage.objects.get().state == "command"
    answer = OutboundEmail.objects.get(kind="command", to=seat.email)
    assert answer.subject.endswith(": your conditional order is kept")
    assert "  if 4 5 or more: liar; else: raise 5" in answer.text
    _bid(game, first, "bid 2 5", now)
    _bid(game, second, "bid 4 6", now)
    assert Order.objects.get(seat=seat).canonical == "liar"


def _api(method: str, path: str, raw: str, body: Any = None) -> Any:
    client = Client()
    call = getattr(client, method)
    if body is None:
        return call(f"/api/v1{path}", HTTP_AUTHORIZATION=f"Bearer {raw}")
    return call(
        f"/api/v1{path}",
        data=json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )


def test_the_api_leaves_lists_and_withdraws_them(now: datetime) -> None:
    game = started_game("liars-dice", now=now, players=3)
    first, second, third = _seats(game)
    seat = game.seats.get(position=third)
    raw = tokens.mint(name="t", scope="seat", access="play", email=seat.email, seat=seat, now=now)[
        1
    ]
    path = f"/seats/{game.pk}/{third}/conditionals"
    made = _api("post", path, raw, {"text": "if 3 5 or more: liar"})
    assert made.status_code == 200, made.content
    assert (made.json()["status"], made.json()["words"]) == ("armed", "if 3 5 or more: liar")
    spare = _api("post", path, raw, {"text": "if 9 9 or more: liar"})
    assert spare.status_code == 422
    assert spare.json()["detail"] == (
        "if <quantity> <face>: a quantity of at least 1 and a face from 1 to 6"
    )
    _bid(game, first, "bid 2 5", now)
    _bid(game, second, "bid 3 5", now)
    listed = _api("get", path, raw).json()
    assert [(row["status"], row["order"]) for row in listed] == [("played", "liar")]
    again = _api("delete", f"{path}/{listed[0]['id']}", raw)
    assert again.status_code == 422
    assert again.json() == {"detail": "that conditional order is no longer armed"}
    reader = tokens.mint(
        name="r", scope="seat", access="read", email=seat.email, seat=seat, now=now
    )[1]
    assert _api("post", path, reader, {"text": "if 3 5 or more: liar"}).status_code == 403


def test_an_emailed_order_out_of_turn_that_is_no_conditional_says_whose_turn_it_is(
    now: datetime, settings: Settings
) -> None:
    settings.INBOUND_ADDRESS = "orders@in.example.org"
    settings.ANYMAIL = {"WEBHOOK_SECRET": [SECRET]}
    game = started_game("liars-dice", now=now, players=3)
    first, _, third = _seats(game)
    seat = game.seats.get(position=third)
    to = access.reply_address(seat)
    assert to is not None
    assert post_postmark(postmark_payload(to, "bid 3 4"), **auth()).status_code == 200
    assert not ConditionalOrder.objects.exists()
    refused = OutboundEmail.objects.get(kind="refused", to=seat.email)
    name = game.seats.get(position=first).name
    assert f"not your turn: waiting for {name}" in refused.text
