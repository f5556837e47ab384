"""Orders by email reply, through the real anymail inbound webhooks of two ESPs (Postmark's
JSON and Mailgun's signed form posts, in their real payload shapes): with and without the
webhook secret, delivered twice, with a forged signature; auto-replies and foreign
tokens make no order and get no answer."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import datetime
from typing import Any

import pytest
from django.test import Client
from pytest_django.fixtures import Settings
from time_machine import TimeMachineFixture

from games import postal, tasks
from games.engines.choice.rules import ChoiceEngine
from games.models import Game, Order, Seat
from games.notify.replies import NOT_FOUND
from games.postal import access
from moderator.mail.models import InboundMessage, OutboundEmail
from tests.esps import read_kept
from tests.factories import started_game

pytestmark = pytest.mark.django_db

CHOICE = ChoiceEngine()
SECRET = "hook:s3cret-one"
SIGNING_KEY = "mailgun-signing-key"
POSTMARK_INBOUND = "/mail/webhooks/postmark/inbound/"
MAILGUN_INBOUND = "/mail/webhooks/mailgun/inbound/"


@pytest.fixture(autouse=True)
def inbound(settings: Settings, time_machine: TimeMachineFixture, now: datetime) -> None:
    time_machine.move_to(now, tick=False)
    settings.INBOUND_ADDRESS = "orders@in.example.org"
    settings.ANYMAIL = {
        "WEBHOOK_SECRET": [SECRET, "hook:s3cret-two"],
        "MAILGUN_WEBHOOK_SIGNING_KEY": SIGNING_KEY,
    }


@pytest.fixture
def game(now: datetime) -> Game:
    return started_game(now=now, players=3, early_processing=False)


def reply_address(seat: Seat) -> str:
    address = access.reply_address(seat)
    assert address is not None
    return address


def seat(game: Game, position: int) -> Seat:
    return Seat.objects.get(game=game, position=position)


def order_text(game: Game, position: int) -> str:
    game.refresh_from_db()
    state = CHOICE.state_from_json(game.state)
    return CHOICE.canonical(state, position, CHOICE.default(state, position))


def auth(secret: str = SECRET) -> dict[str, Any]:
    return {"HTTP_AUTHORIZATION": "Basic " + base64.b64encode(secret.encode()).decode()}


def player_of(to: str) -> str:
    """The address of the seat whose order or message address ``to`` is (who replies to
    it), or ann's when it is none."""
    found = access.press_for_reply([to])
    seat_of = found[0] if found is not None else access.seat_for_reply([to])
    return seat_of.email if seat_of is not None else "ann@example.org"


def postmark_payload(
    to: str,
    text: str,
    message_id: str = "<reply-1@mail.example.net>",
    *,
    sender: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """An inbound email as Postmark posts it, from the player of the seat it is sent to
    unless ``sender`` says otherwise."""
    sender = sender or player_of(to)
    headers = [
        {"Name": "Message-ID", "Value": message_id},
        {"Name": "In-Reply-To", "Value": "<game-1-seat-0@localhost>"},
        *({"Name": name, "Value": value} for name, value in extra.pop("headers", {}).items()),
    ]
    payload = {
        "FromName": sender.split("@")[0].title(),
        "From": sender,
        "FromFull": {"Email": sender, "Name": sender.split("@")[0].title(), "MailboxHash": ""},
        "To": to,
        "ToFull": [{"Email": to, "Name": "", "MailboxHash": to.split("+")[-1].split("@")[0]}],
        "Cc": "",
        "CcFull": [],
        "OriginalRecipient": to,
        "Subject": "Re: Test Choice, step 1",
        "MessageID": "73e6d360-66eb-11e1-8e72-a8904824019b",
        "ReplyTo": "",
        "MailboxHash": to.split("+")[-1].split("@")[0],
        "Date": "Mon, 23 Nov 2026 18:00:00 +0000",
        "TextBody": text,
        "HtmlBody": "",
        "StrippedTextReply": "",
        "Tag": "",
        "Headers": headers,
        "Attachments": [],
    }
    payload.update(extra)
    return payload


def post_postmark(payload: dict[str, Any], **headers: Any) -> Any:
    """Postmark's post, and then the mail worker's reading of what the webhook kept."""
    response = Client().post(
        POSTMARK_INBOUND, data=json.dumps(payload), content_type="application/json", **headers
    )
    read_kept()
    return response


def mailgun_form(to: str, text: str, message_id: str, key: str = SIGNING_KEY) -> dict[str, str]:
    """An inbound email as a Mailgun route's forward() posts it (fully parsed), signed."""
    timestamp, token = "1795370400", "a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0"
    signature = hmac.new(key.encode(), f"{timestamp}{token}".encode(), hashlib.sha256)
    headers = [
        ["Message-Id", message_id],
        ["From", "Bob <bob@example.org>"],
        ["To", to],
        ["Subject", "Re: Test Choice, step 1"],
    ]
    return {
        "recipient": to,
        "sender": "bob@example.org",
        "from": "Bob <bob@example.org>",
        "subject": "Re: Test Choice, step 1",
        "body-plain": text,
        "stripped-text": text.split("\n\nOn ")[0],
        "message-headers": json.dumps(headers),
        "timestamp": timestamp,
        "token": token,
        "signature": signature.hexdigest(),
    }


def refusals() -> list[OutboundEmail]:
    return list(OutboundEmail.objects.filter(kind="refused").order_by("id"))


def test_the_reports_reply_to_is_the_seats_order_address(game: Game) -> None:
    report = OutboundEmail.objects.get(kind="report", to="ann@example.org")
    assert report.reply_to == access.reply_address(seat(game, 0))
    assert report.reply_to.startswith(f"orders+{game.pk}-0-")
    assert report.reply_to.endswith("@in.example.org")
    assert "Or reply to this email: write your order above the quoted report." in report.text


def test_a_reply_through_postmark_becomes_the_order_with_a_receipt(game: Game) -> None:
    text = order_text(game, 0)
    reply = (
        f"{text}\n\nOn Mon, 23 Nov 2026, Moderator wrote:\n> Postal turn: rounds 1-2\n> W5 1+3 3+4"
    )
    response = post_postmark(postmark_payload(reply_address(seat(game, 0)), reply), **auth())
    assert response.status_code == 200
    assert tasks.write_receipts() == 1
    order = Order.objects.get(seat__position=0)
    assert (order.source, order.canonical, order.text) == ("email", text, text)
    assert OutboundEmail.objects.filter(kind="receipt", to="ann@example.org").count() == 1
    message = InboundMessage.objects.get()
    assert (message.state, message.order_id, message.esp) == ("order", order.pk, "Postmark")


def test_the_same_message_delivered_twice_makes_one_order(game: Game) -> None:
    payload = postmark_payload(reply_address(seat(game, 0)), order_text(game, 0))
    for _ in range(2):
        assert post_postmark(payload, **auth()).status_code == 200
        tasks.write_receipts()
    assert Order.objects.count() == 1
    assert InboundMessage.objects.count() == 1
    assert OutboundEmail.objects.filter(kind="receipt").count() == 1


def test_either_of_the_rotating_secrets_is_taken(game: Game) -> None:
    payload = postmark_payload(reply_address(seat(game, 0)), order_text(game, 0))
    assert post_postmark(payload, **auth("hook:s3cret-two")).status_code == 200
    assert Order.objects.count() == 1


@pytest.mark.parametrize("headers", [{}, auth("hook:wrong")], ids=["no secret", "wrong secret"])
def test_a_webhook_without_the_secret_is_refused_and_changes_nothing(
    game: Game, headers: dict[str, Any]
) -> None:
    payload = postmark_payload(reply_address(seat(game, 0)), order_text(game, 0))
    assert post_postmark(payload, **headers).status_code == 401
    assert (Order.objects.count(), InboundMessage.objects.count()) == (0, 0)


def test_webhooks_are_off_until_a_secret_is_set(game: Game, settings: Settings) -> None:
    settings.ANYMAIL = {"MAILGUN_WEBHOOK_SIGNING_KEY": SIGNING_KEY}
    payload = postmark_payload(reply_address(seat(game, 0)), order_text(game, 0))
    assert post_postmark(payload, **auth()).status_code == 403
    assert (Order.objects.count(), InboundMessage.objects.count()) == (0, 0)


def test_a_signed_mailgun_reply_becomes_the_order_from_its_stripped_text(game: Game) -> None:
    text = order_text(game, 1)
    body = f"{text}\n\nOn Mon, 23 Nov 2026, Moderator wrote:\n> W5 1+3 3+4"
    form = mailgun_form(reply_address(seat(game, 1)), body, "<mg-1@mail.example.net>")
    response = Client().post(MAILGUN_INBOUND, data=form, **auth())
    assert response.status_code == 200
    read_kept()
    order = Order.objects.get()
    assert (order.seat.position, order.source, order.canonical) == (1, "email", text)


def test_a_forged_mailgun_signature_is_refused_and_changes_nothing(game: Game) -> None:
    form = mailgun_form(reply_address(seat(game, 1)), order_text(game, 1), "<mg-2@x>", key="forged")
    assert Client().post(MAILGUN_INBOUND, data=form, **auth()).status_code == 403
    assert (Order.objects.count(), InboundMessage.objects.count()) == (0, 0)


def test_an_invalid_order_is_answered_with_the_line_and_the_engines_message(game: Game) -> None:
    address = reply_address(seat(game, 0))
    response = post_postmark(postmark_payload(address, "W9 1+1 1+1\nthanks!"), **auth())
    assert response.status_code == 200
    assert Order.objects.count() == 0
    (refused,) = refusals()
    assert refused.to == "ann@example.org"
    reason = InboundMessage.objects.get().note
    assert reason.startswith("round 1: ")
    assert f"  {reason}\n" in refused.text
    assert "> W9 1+1 1+1\n> thanks!\n" in refused.text
    assert refused.reply_to == address


def test_a_reply_with_no_order_above_the_quote_is_answered(game: Game) -> None:
    post_postmark(
        postmark_payload(reply_address(seat(game, 0)), "> W5 1+3 3+4\n-- \nann"), **auth()
    )
    (refused,) = refusals()
    assert refused.text.splitlines()[4] == f"  {NOT_FOUND}"
    assert "What you wrote" not in refused.text
    assert Order.objects.count() == 0


@pytest.mark.parametrize(
    "headers",
    [
        {"Auto-Submitted": "auto-replied"},
        {"X-Autoreply": "yes"},
        {"Precedence": "bulk"},
        {"Return-Path": "<>"},
    ],
    ids=["auto-submitted", "x-autoreply", "precedence", "bounce"],
)
def test_automatic_replies_make_no_order_and_get_no_answer(
    game: Game, headers: dict[str, str]
) -> None:
    payload = postmark_payload(reply_address(seat(game, 0)), order_text(game, 0), headers=headers)
    assert post_postmark(payload, **auth()).status_code == 200
    assert (Order.objects.count(), refusals()) == (0, [])
    assert InboundMessage.objects.get().state == "ignored"


def test_an_out_of_office_subject_is_an_automatic_reply(game: Game) -> None:
    payload = postmark_payload(
        reply_address(seat(game, 0)), "I am away until Monday.", Subject="Out of Office"
    )
    post_postmark(payload, **auth())
    assert (Order.objects.count(), refusals()) == (0, [])


def test_unknown_rotated_and_foreign_tokens_make_no_order_and_no_answer(
    game: Game, now: datetime
) -> None:
    other = started_game(now=now, players=3)
    ann = seat(game, 0)
    old_address = reply_address(ann)
    postal.rotate_link(game.pk, position=0, now=now)
    # Another game's token with this game's seat number: the MAC covers the game.
    foreign = reply_address(seat(other, 0)).replace(f"+{other.pk}-", f"+{game.pk}-")
    addresses = [old_address, "orders+123-0-aaaaaaaaaaaaaaaaaaaaaaaaaa@in.example.org", foreign]
    sent_before = OutboundEmail.objects.count()
    for number, address in enumerate(addresses):
        payload = postmark_payload(address, order_text(game, 0), message_id=f"<x{number}@y>")
        assert post_postmark(payload, **auth()).status_code == 200
    assert Order.objects.count() == 0
    assert OutboundEmail.objects.count() == sent_before
    assert set(InboundMessage.objects.values_list("state", flat=True)) == {"ignored"}
    # The new address works.
    new = postmark_payload(reply_address(seat(game, 0)), order_text(game, 0))
    post_postmark(new, **auth())
    assert Order.objects.count() == 1


def test_a_late_reply_is_answered_too_late_and_changes_nothing(
    game: Game, time_machine: TimeMachineFixture, now: datetime
) -> None:
    step = game.steps.get(number=1)
    time_machine.move_to(step.deadline, tick=False)
    post_postmark(postmark_payload(reply_address(seat(game, 0)), order_text(game, 0)), **auth())
    assert Order.objects.count() == 0
    (refused,) = refusals()
    assert "too late: the deadline passed at" in refused.text


def test_without_an_inbound_address_replies_go_to_the_gm(settings: Settings, now: datetime) -> None:
    settings.INBOUND_ADDRESS = ""
    game = started_game(now=now, players=2)
    report = OutboundEmail.objects.get(kind="report", to="ann@example.org", game=game)
    assert report.reply_to == game.gm.email
    assert "Or reply to this email" not in report.text


# --- The First Player by email: a gift moves the game on; a roll stands ---------------------


def test_an_emailed_gift_after_anothers_gift_is_taken_for_the_step_open_now(
    now: datetime,
) -> None:
    game = started_game("first-player", now=now, title="Game night", options={"order_mode": "free"})
    postal.accept_order(game_id=game.pk, position=0, text="give cy 1 dice", source="web", now=now)
    assert Game.objects.get(pk=game.pk).step_number == 2
    # A reply carries no step: it is an order for the step open when it arrives.
    post_postmark(postmark_payload(reply_address(seat(game, 1)), "give cy 1 dice"), **auth())
    assert refusals() == []
    assert [(o.seat.name, o.step.number, o.source, o.canonical) for o in Order.objects.all()] == [
        ("ann", 1, "web", "give cy 1 die"),
        ("bob", 2, "email", "give cy 1 die"),
    ]


def test_a_refused_line_after_an_emailed_roll_says_the_roll_stands(now: datetime) -> None:
    game = started_game("first-player", now=now, title="Game night", options={"order_mode": "free"})
    for position in (0, 1, 2):
        postal.accept_order(game_id=game.pk, position=position, text="ready", source="web", now=now)
    post_postmark(postmark_payload(reply_address(seat(game, 0)), "roll 3\narrange 6 6 6"), **auth())
    game.refresh_from_db()
    hand = game.rules.state_from_json(game.state).cups[0].hand
    assert sorted(hand) != [6, 6, 6]
    (refused,) = refusals()
    lines = refused.text.splitlines()
    assert lines[2] == 'Your email "Re: Test Choice, step 1" to "Game night" was only partly taken:'
    assert lines[4] == (
        f"  line 2 (arrange 6 6 6): arrange must use exactly your dice: "
        f"{' '.join(map(str, hand))} (the lines before it stand: your dice were rolled)"
    )
    assert lines[11:13] == [
        "The lines before the refused one took effect and stand; the rest was not taken.",
        "Reply to this email with the lines still to play above the quoted text, or use your page:",
    ]
