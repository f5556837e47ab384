"""Replies come from the player (issue 39, section 4): an order or a message by email is
taken only from the seat's own address; anything else (another sender, or an email the
ESP's spam or authentication check failed) is held for the GM with the real sender shown,
the seat's player is told, and the GM releases it as the seat's or discards it. A reply
with no order in it (a note) reaches the GM, and the player's answer says so."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django.fixtures import Settings
from time_machine import TimeMachineFixture

from games import postal
from games.community import press
from games.models import Game, Message, Order
from games.postal import access
from moderator.mail.models import InboundMessage, OutboundEmail
from tests.factories import GMFactory, started_game
from tests.games.notify.test_replies import (
    SECRET,
    auth,
    order_text,
    post_postmark,
    postmark_payload,
    seat,
)

pytestmark = pytest.mark.django_db

EVE = "eve@example.net"


@pytest.fixture(autouse=True)
def inbound(settings: Settings, time_machine: TimeMachineFixture, now: datetime) -> None:
    time_machine.move_to(now, tick=False)
    settings.INBOUND_ADDRESS = "orders@in.example.org"
    settings.ANYMAIL = {"WEBHOOK_SECRET": [SECRET]}


@pytest.fixture
def game(now: datetime) -> Game:
    return started_game(
        now=now,
        players=3,
        gm=GMFactory.create(email="gm@example.org", is_staff=True),
        early_processing=False,
    )


def gm_client(game: Game) -> Client:
    client = Client()
    client.force_login(User.objects.get(pk=game.gm_id))
    return client


def test_an_order_from_another_address_is_held_shown_to_the_gm_and_the_player_told(
    game: Game,
) -> None:
    ann = seat(game, 0)
    address = access.reply_address(ann) or ""
    text = order_text(game, 0)
    assert post_postmark(postmark_payload(address, text, sender=EVE), **auth()).status_code == 200
    assert Order.objects.count() == 0
    row = InboundMessage.objects.get()
    assert (row.state, row.note, row.reason, row.tenure, row.sender, row.seat_id, row.words) == (
        "held",
        f"sent from {EVE}, not the seat's address",
        "sender",
        0,
        EVE,
        ann.pk,
        text,
    )
    (told,) = OutboundEmail.objects.filter(kind="held")
    assert (told.to, told.subject) == (
        "ann@example.org",
        f"{game.title}: an email from another address was held",
    )
    paragraphs = [" ".join(part.split()) for part in told.text.split("\n\n")]
    assert paragraphs[1] == (
        f'An email to your reply address in "{game.title}" came from {EVE}, not from your '
        "address. It was not taken as your order or message: it is held for the GM, who can "
        "take it as yours or discard it."
    )
    page = gm_client(game).get(f"/gm/{game.pk}/inbound/")
    assert page.status_code == 200
    assert f"Sent from {EVE}, not from the seat&#x27;s address." in page.content.decode()
    assert "Take as the seat's order" in page.content.decode()
    game_page = gm_client(game).get(f"/gm/{game.pk}/")
    assert "1 email held for you: not from the seat's address." in game_page.content.decode()


def test_the_gm_releases_a_held_order_as_the_seats(game: Game) -> None:
    ann = seat(game, 0)
    text = order_text(game, 0)
    post_postmark(postmark_payload(access.reply_address(ann) or "", text, sender=EVE), **auth())
    row = InboundMessage.objects.get()
    response = gm_client(game).post(f"/gm/{game.pk}/inbound/{row.pk}/release/")
    assert response.status_code == 302
    order = Order.objects.get()
    assert (order.seat_id, order.source, order.canonical) == (ann.pk, "email", text)
    row.refresh_from_db()
    assert (row.state, row.order_id) == ("order", order.pk)
    again = gm_client(game).post(f"/gm/{game.pk}/inbound/{row.pk}/release/", follow=True)
    assert "Nothing was done: this email is no longer held." in again.content.decode()
    assert Order.objects.count() == 1


def test_the_gm_discards_a_held_order(game: Game) -> None:
    ann = seat(game, 0)
    post_postmark(
        postmark_payload(access.reply_address(ann) or "", order_text(game, 0), sender=EVE), **auth()
    )
    row = InboundMessage.objects.get()
    gm_client(game).post(f"/gm/{game.pk}/inbound/{row.pk}/discard/")
    row.refresh_from_db()
    assert row.state == "discarded"
    assert Order.objects.count() == 0


def test_another_gm_cannot_release_it(game: Game) -> None:
    ann = seat(game, 0)
    post_postmark(
        postmark_payload(access.reply_address(ann) or "", order_text(game, 0), sender=EVE), **auth()
    )
    row = InboundMessage.objects.get()
    other = Client()
    other.force_login(GMFactory.create(is_staff=True))
    assert other.post(f"/gm/{game.pk}/inbound/{row.pk}/release/").status_code == 404
    assert InboundMessage.objects.get().state == "held"


def test_a_message_from_another_address_is_held_and_released_as_the_seats_message(
    game: Game, now: datetime
) -> None:
    bob = seat(game, 1)
    hello = press.send(game_id=game.pk, position=0, to=1, text="Ally?", source="web", now=now)
    address = access.press_address(bob, hello.pk) or ""
    post_postmark(postmark_payload(address, "Deal.", sender=EVE), **auth())
    row = InboundMessage.objects.get()
    assert (row.state, row.answered, row.seat_id) == ("held", hello.pk, bob.pk)
    assert Message.objects.count() == 1
    gm_client(game).post(f"/gm/{game.pk}/inbound/{row.pk}/release/")
    sent = Message.objects.exclude(pk=hello.pk).get()
    assert (sent.sender_id, sent.recipient_id, sent.text) == (bob.pk, seat(game, 0).pk, "Deal.")
    assert InboundMessage.objects.get().state == "message"


def test_the_seats_own_address_in_another_case_is_the_seats(game: Game) -> None:
    ann = seat(game, 0)
    text = order_text(game, 0)
    payload = postmark_payload(access.reply_address(ann) or "", text, sender="Ann@Example.ORG")
    post_postmark(payload, **auth())
    assert InboundMessage.objects.get().state == "order"


def test_an_email_the_provider_marked_as_spam_is_held(game: Game) -> None:
    ann = seat(game, 0)
    payload = postmark_payload(
        access.reply_address(ann) or "", order_text(game, 0), headers={"X-Spam-Status": "Yes"}
    )
    post_postmark(payload, **auth())
    assert Order.objects.count() == 0
    row = InboundMessage.objects.get()
    assert (row.state, row.note, row.reason) == (
        "held",
        "the mail provider marked it as spam",
        "verdict",
    )
    (told,) = OutboundEmail.objects.filter(kind="held")
    assert (told.to, told.subject) == (
        "ann@example.org",
        f"{game.title}: an email that failed the mail checks was held",
    )
    paragraphs = [" ".join(part.split()) for part in told.text.split("\n\n")]
    assert paragraphs[1] == (
        f'An email to your reply address in "{game.title}" came from your address, but the '
        "mail provider's spam or sender checks failed it, so it may be forged. It was not "
        "taken as your order or message: it is held for the GM, who can take it as yours or "
        "discard it."
    )
    assert "came from ann@example.org" not in told.text
    page = gm_client(game).get(f"/gm/{game.pk}/inbound/").content.decode()
    assert (
        "Sent from the seat&#x27;s address, but the mail provider&#x27;s spam or sender checks "
        "failed it: it may be forged."
    ) in page


def test_an_email_failing_dmarc_at_the_receiving_server_is_held(game: Game) -> None:
    ann = seat(game, 0)
    results = "mx.example.net; spf=pass smtp.mailfrom=example.org; dmarc=fail header.from=x"
    payload = postmark_payload(
        access.reply_address(ann) or "",
        order_text(game, 0),
        headers={"Authentication-Results": results},
    )
    post_postmark(payload, **auth())
    row = InboundMessage.objects.get()
    assert (row.state, row.note) == ("held", "the receiving server's DMARC check failed")


def test_a_note_with_no_order_reaches_the_gm_and_the_player_is_told(game: Game) -> None:
    ann = seat(game, 0)
    note = "Sorry, I will be away until Sunday evening.\nAnn"
    post_postmark(postmark_payload(access.reply_address(ann) or "", note), **auth())
    assert Order.objects.count() == 0
    row = InboundMessage.objects.get()
    assert row.state == "note"
    assert row.note.startswith("no order: passed to the GM (")
    (to_gm,) = OutboundEmail.objects.filter(kind="gm-note")
    assert (to_gm.to, to_gm.reply_to, to_gm.subject) == (
        "gm@example.org",
        "ann@example.org",
        f"{game.title}: a note from ann by email",
    )
    told_gm = to_gm.text.split("\n\n")
    assert told_gm[1:3] == ["Written by ann (ann@example.org).", "Subject: Re: Test Choice, step 1"]
    assert "> Sorry, I will be away until Sunday evening.\n> Ann" in told_gm
    assert "To answer ann, reply to this email: it goes to ann@example.org." in told_gm
    assert OutboundEmail.objects.filter(kind="refused").count() == 0
    (answer,) = OutboundEmail.objects.filter(kind="note-passed")
    assert (answer.to, answer.subject) == (
        "ann@example.org",
        f"{game.title}: your note was passed to your GM",
    )
    paragraphs = [" ".join(part.split()) for part in answer.text.split("\n\n")]
    assert paragraphs[1] == (
        f'Your email "Re: Test Choice, step 1" to "{game.title}" was passed to your GM, who '
        "reads it: no line of it reads as an order, so it was taken as a note."
    )
    assert paragraphs[4:6] == [
        "If it was meant as an order, nothing was recorded, and the order that counted before "
        "(if any) still counts. The game could not read it:",
        "Round 1: cannot read 'sorry i will be away until sunday evening.'; write W (Wurfel) "
        "or F (free ride), the die set aside and two pairs, e.g. W5 1+3 3+4",
    ]
    assert "not accepted" not in answer.subject + answer.text
    assert "corrected order" not in answer.text
    page = gm_client(game).get(f"/gm/{game.pk}/inbound/").content.decode()
    assert "Sorry, I will be away until Sunday evening." in page
    assert "No line of it reads as an order: it was emailed to you as a note." in page
    assert "cannot read" not in page


def test_a_mistyped_order_is_refused_with_the_reason_not_passed_on(game: Game) -> None:
    ann = seat(game, 0)
    post_postmark(postmark_payload(access.reply_address(ann) or "", "W9 1+1 1+1"), **auth())
    assert InboundMessage.objects.get().state == "rejected"
    assert OutboundEmail.objects.filter(kind="gm-note").count() == 0


def test_a_held_email_is_not_released_as_the_seats_new_players(game: Game, now: datetime) -> None:
    ann = seat(game, 0)
    text = order_text(game, 0)
    post_postmark(postmark_payload(access.reply_address(ann) or "", text, sender=EVE), **auth())
    row = InboundMessage.objects.get()
    assert row.tenure == 0
    postal.replace_player(game.pk, position=0, name="Dee", email="dee@example.org", now=now)
    response = gm_client(game).post(f"/gm/{game.pk}/inbound/{row.pk}/release/", follow=True)
    assert [str(message) for message in response.context["messages"]] == [
        "Nothing was done: Dee has played this seat since this email came, which was written "
        "to the player before them, so it cannot be taken as theirs. Discard it, or ask Dee "
        "to send it themselves."
    ]
    assert Order.objects.count() == 0
    row.refresh_from_db()
    assert row.state == "held"
    gm_client(game).post(f"/gm/{game.pk}/inbound/{row.pk}/discard/")
    row.refresh_from_db()
    assert row.state == "discarded"
    assert Order.objects.count() == 0
