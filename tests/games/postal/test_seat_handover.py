"""A new player on a seat starts fresh (docs/players.md, "When a player is replaced"):
pairwise across a takeover (``postal.replace_player``, as a civil-disorder sign-up or the
GM does it). What was private belongs to whoever held the seat then: the new player reads
the public history and what is written to the seat from their arrival, never their
predecessor's private messages, and sees their predecessor's messages under their name;
their time zone, language, email choices and absences are their own; and the player who
left loses every way in: links, browser, reply and message addresses, calendar feed."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from html import unescape
from typing import Any

import pytest
from django.apps import apps
from django.test import Client
from django.utils.module_loading import import_string

from games import postal
from games.community import absences, press
from games.models import EmailPreference, Game, Message, Order, Player, PressEmail, Seat
from games.notify import digests
from games.postal import access
from moderator.mail.models import InboundMessage, OutboundEmail
from tests.factories import GMFactory, seat_page, started_game
from tests.games.notify.test_replies import (
    auth,
    inbound,  # noqa: F401 - the inbound address and the webhook secret
    order_text,
    post_postmark,
    postmark_payload,
)

pytestmark = pytest.mark.django_db

ANN, BOB, CY = 0, 1, 2


@pytest.fixture
def game(now: datetime) -> Game:
    """A running Choice game of ann, bob and cy."""
    gm = GMFactory.create(is_staff=True)
    return started_game(now=now, players=3, gm=gm, early_processing=False)


def seat(game: Game, position: int) -> Seat:
    return Seat.objects.get(game=game, position=position)


def send(game: Game, position: int, text: str, now: datetime, to: int | None = None) -> Message:
    return press.send(game_id=game.pk, position=position, to=to, text=text, source="web", now=now)


def holding(game: Game, position: int, now: datetime) -> Client:
    """A browser that opened the seat's magic link."""
    client = Client(REMOTE_ADDR=f"10.41.0.{position + 1}")
    token = access.mint([seat(game, position)], now=now)[position]
    assert client.post(f"/p/{token}/").status_code == 302
    return client


def take_over(game: Game, now: datetime) -> Seat:
    """Dee takes ann's seat."""
    return postal.replace_player(
        game.pk, position=ANN, name="Dee", email="dee@example.org", now=now
    )


def chat(game: Game, now: datetime) -> None:
    """Before the takeover: two private messages between ann and bob, one of cy to bob,
    and ann's public greeting."""
    send(game, BOB, "Deal, Ann: I back you.", now, to=ANN)
    send(game, ANN, "My plan is the red die.", now, to=BOB)
    send(game, CY, "Cy to bob only.", now, to=BOB)
    send(game, ANN, "Hello from ann.", now)


def read_by(game: Game, position: int) -> list[tuple[str, str]]:
    """(heading, text) of every message the seat's player may read, oldest first."""
    names = dict(game.seats.values_list("pk", "name"))
    page = press.for_seat(seat(game, position), names, limit=press.PAGE_MESSAGES)
    return [(message.heading, message.text) for message in page.messages]


def listed(html: str) -> list[tuple[str, str]]:
    """(heading, text) of every message a page lists."""
    swatch = r'(?:<span class="swatch" [^>]*>&nbsp;</span>)?'
    heads = re.findall(rf'<p class="press-head">{swatch}<strong>(.*?)</strong>', html)
    texts = re.findall(r'<div class="press-text">(.*?)</div>', html, re.S)
    return [(unescape(head), unescape(text)) for head, text in zip(heads, texts, strict=True)]


# --- messages ------------------------------------------------------------------------------


def test_the_new_player_reads_the_public_history_and_never_the_old_ones_private_messages(
    game: Game, now: datetime
) -> None:
    chat(game, now)
    take_over(game, now)
    assert read_by(game, ANN) == [("ann to everyone", "Hello from ann.")]
    send(game, BOB, "Welcome, Dee.", now, to=ANN)
    send(game, ANN, "Thanks, bob.", now, to=BOB)
    assert read_by(game, ANN) == [
        ("ann to everyone", "Hello from ann."),
        ("bob to you (private)", "Welcome, Dee."),
        ("You to bob (private)", "Thanks, bob."),
    ]
    # bob keeps what was said with ann, under her name, and tells it from what Dee says.
    assert read_by(game, BOB) == [
        ("You to ann (private)", "Deal, Ann: I back you."),
        ("ann to you (private)", "My plan is the red die."),
        ("cy to you (private)", "Cy to bob only."),
        ("ann to everyone", "Hello from ann."),
        ("You to Dee (private)", "Welcome, Dee."),
        ("Dee to you (private)", "Thanks, bob."),
    ]
    assert read_by(game, CY) == [
        ("You to bob (private)", "Cy to bob only."),
        ("ann to everyone", "Hello from ann."),
    ]


def test_the_new_players_pages_list_only_what_is_theirs_under_the_right_names(
    game: Game, now: datetime
) -> None:
    chat(game, now)
    take_over(game, now)
    send(game, BOB, "Welcome, Dee.", now, to=ANN)
    dee = holding(game, ANN, now)
    expected = [
        ("ann to everyone", "Hello from ann."),
        ("bob to you (private)", "Welcome, Dee."),
    ]
    assert listed(dee.get(f"/play/{game.pk}/{ANN}/messages/").content.decode()) == expected
    assert listed(dee.get(seat_page(game, ANN)).content.decode()) == expected
    view = json.loads(dee.get(f"/play/{game.pk}/{ANN}/view.json").content)
    assert view["seat"] == {"position": ANN, "name": "Dee", "bot": False, "autopilot": ""}
    # The GM reads every message, each under the name of whoever wrote it.
    gm = Client()
    gm.force_login(game.gm)
    assert listed(gm.get(f"/gm/{game.pk}/messages/").content.decode()) == [
        ("bob to ann (private)", "Deal, Ann: I back you."),
        ("ann to bob (private)", "My plan is the red die."),
        ("cy to bob (private)", "Cy to bob only."),
        ("ann to everyone", "Hello from ann."),
        ("bob to Dee (private)", "Welcome, Dee."),
    ]


def test_the_new_players_digest_tells_nothing_of_the_old_ones_messages(
    game: Game, now: datetime
) -> None:
    press.choose_email(game.pk, position=ANN, choice=PressEmail.DIGEST)
    chat(game, now)
    # Dee plays elsewhere and has her own digest hour.
    EmailPreference.objects.create(email="dee@example.org", time_zone="UTC", hour=8)
    take_over(game, now)
    at_eight = now.replace(hour=8) + timedelta(days=1)
    assert digests.send_daily_digests(at_eight) == 0
    assert OutboundEmail.objects.filter(kind="daily").count() == 0
    # Whatever marks a digest counts from, it tells Dee only what she may read.
    dee = seat(game, ANN)
    dee.press_email, dee.press_told = PressEmail.DIGEST, 0
    dee.save(update_fields=["press_email", "press_told"])
    send(game, BOB, "Welcome, Dee.", now, to=ANN)
    shown, _latest = press.for_digest(dee)
    assert [(message.heading, message.text) for message in shown] == [
        ("bob to you (private)", "Welcome, Dee."),
    ]


def test_emails_of_messages_go_to_the_player_of_the_seat_when_they_are_sent(
    game: Game, now: datetime
) -> None:
    press.choose_email(game.pk, position=ANN, choice=PressEmail.NONE)
    chat(game, now)
    before = OutboundEmail.objects.filter(kind="press").count()
    take_over(game, now)
    send(game, BOB, "Welcome, Dee.", now, to=ANN)
    assert list(
        OutboundEmail.objects.filter(kind="press").order_by("id").values_list("to", "subject")
    )[before:] == [("dee@example.org", "Test Choice: a private message from bob")]


def reply(address: str, sender: str, text: str, number: int) -> Any:
    payload = postmark_payload(
        address,
        text,
        message_id=f"<handover-{number}@mail.example.net>",
        From=sender,
        FromFull={"Email": sender, "Name": "", "MailboxHash": ""},
    )
    return post_postmark(payload, **auth())


def test_a_reply_to_the_old_players_private_message_reaches_nobody_and_says_why(
    game: Game, now: datetime
) -> None:
    plan = send(game, ANN, "My plan is the red die.", now, to=BOB)
    address = access.press_address(seat(game, BOB), plan.pk)
    assert address is not None
    take_over(game, now)
    assert reply(address, "bob@example.org", "Count me in.", 1).status_code == 200
    assert Message.objects.count() == 1
    reason = (
        "ann has left the game, so nothing was sent: Dee plays that seat now. Write to them "
        "from your page."
    )
    row = InboundMessage.objects.get()
    assert (row.state, row.note) == ("rejected", reason)
    (answer,) = OutboundEmail.objects.filter(kind="press-refused")
    assert answer.to == "bob@example.org"
    assert f"\n  {reason}\n" in answer.text


# --- the new player's own choices -------------------------------------------------------------


def test_the_new_player_starts_with_their_own_choices_not_the_old_ones(
    game: Game, now: datetime
) -> None:
    Seat.objects.filter(game=game, position=ANN).update(
        time_zone="Asia/Tokyo", language="de", reports="none", press_email=PressEmail.NONE
    )
    postal.choose_autopilot(game.pk, position=ANN, key="best-score")
    take_over(game, now)
    dee = seat(game, ANN)
    assert (
        dee.time_zone,
        dee.zone,
        dee.language,
        dee.speaks,
        dee.reports,
        dee.press_email,
        dee.autopilot,
        dee.tenure,
    ) == ("", "UTC", "", "en", "", PressEmail.EACH, "", 1)


def test_a_signed_in_newcomer_brings_their_own_zone_and_language(game: Game, now: datetime) -> None:
    Seat.objects.filter(game=game, position=ANN).update(time_zone="Asia/Tokyo", language="fr")
    user = GMFactory.create(username="dee")
    Player.objects.create(
        user=user,
        email="dee@example.org",
        time_zone="America/Chicago",
        language="de",
        created_at=now,
    )
    take_over(game, now)
    dee = seat(game, ANN)
    assert (dee.time_zone, dee.language) == ("America/Chicago", "de")


def test_the_old_players_absences_do_not_hold_the_seat_for_the_new_one(
    game: Game, now: datetime
) -> None:
    today = now.date()
    absences.declare(
        "ann@example.org", first_day=today, last_day=today + timedelta(days=5), zone="UTC", now=now
    )
    absences.declare(
        "ann@example.org",
        first_day=today,
        last_day=today + timedelta(days=9),
        zone="UTC",
        now=now,
        game=game,
    )
    assert [row.away_until is None for row in absences.seats_of_game(game.pk, now=now)] == [
        False,
        True,
        True,
    ]
    take_over(game, now)
    away = {row.position: row.away_until for row in absences.seats_of_game(game.pk, now=now)}
    assert away == {ANN: None, BOB: None, CY: None}


# --- the old player's ways in -------------------------------------------------------------------


def test_the_old_player_loses_link_browser_reply_message_and_calendar_addresses(
    game: Game, now: datetime, django_capture_on_commit_callbacks: Any
) -> None:
    ann = seat(game, ANN)
    link = access.mint([ann], now=now)[ANN]
    browser = holding(game, ANN, now)
    order_address = access.reply_address(ann)
    calendar = access.calendar_url(ann).removeprefix("http://127.0.0.1:8000")
    deal = send(game, BOB, "Deal, Ann: I back you.", now, to=ANN)
    press_address = access.press_address(ann, deal.pk)
    assert Client().get(calendar).status_code == 200  # and kept in the cache

    with django_capture_on_commit_callbacks(execute=True):
        take_over(game, now)
    assert Client().get(f"/p/{link}/").status_code == 404
    assert Client().post(f"/p/{link}/").status_code == 404
    for page in ("", "messages/", "view.json"):
        assert browser.get(f"/play/{game.pk}/{ANN}/{page}").status_code == 404
    posted = browser.post(f"/play/{game.pk}/{ANN}/messages/", {"to": "all", "text": "Still here?"})
    assert posted.status_code == 404
    assert Client().get(calendar).status_code == 404
    assert order_address is not None and press_address is not None
    reply(order_address, "ann@example.org", order_text(game, ANN), 1)
    reply(press_address, "ann@example.org", "Thanks, bob.", 2)
    assert (Order.objects.count(), Message.objects.count()) == (0, 1)
    assert list(InboundMessage.objects.values_list("state", flat=True)) == ["ignored", "ignored"]
    # Dee's own browser opens the seat, and her messages are not the old player's.
    dee = holding(game, ANN, now)
    assert dee.get(seat_page(game, ANN)).status_code == 200


def test_messages_written_before_tenures_are_given_to_the_players_who_held_the_seats(
    game: Game, now: datetime
) -> None:
    """The migration that brought tenures reads the handovers already recorded."""
    chat(game, now)
    take_over(game, now + timedelta(hours=1))
    send(game, BOB, "Welcome, Dee.", now + timedelta(hours=2), to=ANN)
    # As the rows were before the migration.
    Seat.objects.update(tenure=0)
    Message.objects.update(sender_tenure=0, sender_name="", recipient_tenure=0, recipient_name="")
    import_string("games.migrations.0031_seat_tenures.backfill")(apps, None)
    assert seat(game, ANN).tenure == 1
    assert list(
        Message.objects.order_by("id").values_list(
            "sender_name", "sender_tenure", "recipient_name", "recipient_tenure"
        )
    ) == [
        ("bob", 0, "ann", 0),
        ("ann", 0, "bob", 0),
        ("cy", 0, "bob", 0),
        ("ann", 0, "", 0),
        ("bob", 0, "Dee", 1),
    ]
    assert read_by(game, ANN) == [
        ("ann to everyone", "Hello from ann."),
        ("bob to you (private)", "Welcome, Dee."),
    ]
