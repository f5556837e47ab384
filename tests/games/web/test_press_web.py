"""Messages between players on the web (docs/players.md "Messages"): the seat page's
section and its form, the seat's messages page, its choice of email, and the GM's pages
(every message, hiding one, announcements, the private-message setting). Bad input comes
back with its reason and the text as written, and nothing is stored."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from html import escape
from typing import Any

import pytest
import time_machine
from django.contrib.auth.models import User
from django.test import Client
from pytest_django.fixtures import Settings

from games.community import press
from games.models import Game, GMAction, Message, PressEmail, Seat
from games.postal import access
from tests.factories import GMFactory, seat_page, started_game
from tests.games.postal.test_gm import CHOICE_FORM, GOOD
from tests.games.test_query_counts import PAGE_QUERIES

pytestmark = pytest.mark.django_db

ANN, BOB, CY = 0, 1, 2


@pytest.fixture(autouse=True)
def clock(now: datetime) -> Iterator[None]:
    with time_machine.travel(now, tick=False):
        yield


@pytest.fixture
def gm() -> User:
    return GMFactory.create(is_staff=True)


@pytest.fixture
def game(now: datetime, gm: User) -> Game:
    return started_game(now=now, players=3, gm=gm)


def holding(game: Game, position: int, now: datetime) -> Client:
    """A browser that opened the seat's magic link."""
    client = Client(REMOTE_ADDR=f"10.40.0.{position + 1}")
    seat = Seat.objects.get(game=game, position=position)
    token = access.mint([seat], now=now)[position]
    assert client.post(f"/p/{token}/").status_code == 302
    return client


def gm_client(gm: User) -> Client:
    client = Client()
    client.force_login(gm)
    return client


def messages_page(game: Game, position: int) -> str:
    return f"/play/{game.pk}/{position}/messages/"


def section(page: str) -> str:
    """The seat page's "Messages" section."""
    start = page.index('<section id="messages">')
    return page[start : page.index("</section>", start)]


def flashes(response: Any) -> list[str]:
    return [str(message) for message in response.context["messages"]]


# --- the seat page ------------------------------------------------------------------------


def test_the_seat_page_lists_the_seats_messages_and_offers_the_form(
    game: Game, now: datetime
) -> None:
    press.send(game_id=game.pk, position=ANN, to=None, text="Hi <all>", source="web", now=now)
    press.send(game_id=game.pk, position=ANN, to=BOB, text="Bob only", source="web", now=now)
    press.send(game_id=game.pk, position=CY, to=ANN, text="Ann only", source="web", now=now)
    page = section(holding(game, BOB, now).get(seat_page(game, BOB)).content.decode())
    assert "The GM can read every message, private ones too, and may hide one." in page
    assert "<strong>ann to everyone</strong>" in page
    assert '<div class="press-text">Hi &lt;all&gt;</div>' in page
    assert "<strong>ann to you (private)</strong>" in page
    assert "Ann only" not in page
    assert (
        '<select name="to" id="press_to">'
        '<option value="all" selected>Everyone</option>'
        '<option value="0">ann</option>'
        '<option value="2">cy</option>'
        "</select>"
    ) in re.sub(r"\s*\n\s*", "", page)
    assert 'name="back" value="seat"' in page


def test_links_in_a_message_are_links_that_search_engines_do_not_follow(
    game: Game, now: datetime
) -> None:
    text = 'See https://example.org/map?a=1&b=2 and <a href="javascript:x">this</a>'
    press.send(game_id=game.pk, position=ANN, to=None, text=text, source="web", now=now)
    page = section(holding(game, BOB, now).get(seat_page(game, BOB)).content.decode())
    assert (
        '<div class="press-text">See <a href="https://example.org/map?a=1&amp;b=2" '
        'rel="nofollow">https://example.org/map?a=1&amp;b=2</a> and &lt;a '
        "href=&quot;javascript:x&quot;&gt;this&lt;/a&gt;</div>"
    ) in page


def test_a_message_sent_from_the_seat_page_goes_back_to_it(game: Game, now: datetime) -> None:
    client = holding(game, BOB, now)
    response = client.post(
        messages_page(game, BOB), {"to": "2", "text": "Hello cy", "back": "seat"}, follow=True
    )
    assert response.redirect_chain == [(f"{seat_page(game, BOB)}#messages", 302)]
    assert flashes(response) == ["Your private message to cy is sent."]
    message = Message.objects.select_related("sender", "recipient").get()
    assert (message.sender, message.recipient, message.text, message.source) == (
        Seat.objects.get(game=game, position=BOB),
        Seat.objects.get(game=game, position=CY),
        "Hello cy",
        "web",
    )
    assert "<strong>You to cy (private)</strong>" in section(response.content.decode())


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("   ", "The message is empty: write something to send."),
        ("y" * 2001, "A message has at most 2000 characters; this one has 2001."),
    ],
)
def test_a_bad_message_comes_back_with_its_reason_and_text_and_nothing_is_sent(
    game: Game, now: datetime, text: str, error: str
) -> None:
    response = holding(game, BOB, now).post(
        messages_page(game, BOB), {"to": "all", "text": text, "back": "seat"}
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert f"<li>{error}</li>" in page
    assert f">\n{text}</textarea>" in page
    assert Message.objects.count() == 0


def test_over_the_rate_limit_the_form_says_so_and_keeps_the_text(
    game: Game, now: datetime, settings: Settings
) -> None:
    settings.RATES = {**settings.RATES, "press-seat": "1/h"}
    client = holding(game, BOB, now)
    client.post(messages_page(game, BOB), {"to": "all", "text": "First"})
    response = client.post(messages_page(game, BOB), {"to": "all", "text": "Second"})
    page = response.content.decode()
    assert response.status_code == 429
    assert (
        "<li>Too many messages: each player may send 1 messages an hour, and a game 100 in "
        "all. Nothing was sent; try again later.</li>"
    ) in page
    assert ">\nSecond</textarea>" in page
    assert list(Message.objects.values_list("text", flat=True)) == ["First"]


def test_with_private_messages_off_the_form_writes_to_everyone_only(
    game: Game, now: datetime
) -> None:
    press.set_private(game.pk, allowed=False, by=None, now=now)
    client = holding(game, BOB, now)
    page = section(client.get(seat_page(game, BOB)).content.decode())
    assert '<input type="hidden" name="to" value="all">' in page
    assert "every message goes to everyone" in page
    response = client.post(messages_page(game, BOB), {"to": "2", "text": "Psst"})
    assert "Select a valid choice. 2 is not one of the available choices." in (
        response.content.decode()
    )
    assert Message.objects.count() == 0


def test_a_finished_game_shows_its_messages_and_takes_no_more(game: Game, now: datetime) -> None:
    press.send(game_id=game.pk, position=ANN, to=None, text="Good game", source="web", now=now)
    Game.objects.filter(pk=game.pk).update(status=Game.Status.FINISHED)
    client = holding(game, BOB, now)
    page = client.get(messages_page(game, BOB)).content.decode()
    assert '<div class="press-text">Good game</div>' in page
    assert 'id="press-form"' not in page
    assert "The game is over, so messages are closed." in page
    response = client.post(messages_page(game, BOB), {"to": "all", "text": "Too late"})
    assert (
        "The game is over, so messages are closed: nothing was sent." in response.content.decode()
    )
    assert Message.objects.count() == 1


def test_a_browser_without_the_seat_opens_and_sends_nothing(game: Game, now: datetime) -> None:
    stranger = Client()
    assert stranger.get(messages_page(game, BOB)).status_code == 404
    assert stranger.post(messages_page(game, BOB), {"to": "all", "text": "x"}).status_code == 404
    bob = holding(game, BOB, now)
    assert bob.post(messages_page(game, CY), {"to": "all", "text": "as cy"}).status_code == 404
    assert (
        bob.post(f"/play/{game.pk}/{CY}/messages/email/", {"press_email": "none"}).status_code
        == 404
    )
    assert Message.objects.count() == 0


def test_the_messages_page_reads_older_messages_a_hundred_at_a_time(
    game: Game, now: datetime
) -> None:
    for number in range(105):
        Message.objects.create(
            game=game, step_number=1, sender=None, text=f"Note {number}.", sent_at=now, source="web"
        )
    client = holding(game, BOB, now)
    page = client.get(messages_page(game, BOB)).content.decode()
    assert ("Note 4.</div>" in page, "Note 5.</div>" in page, "Note 104.</div>" in page) == (
        False,
        True,
        True,
    )
    older = Message.objects.get(text="Note 5.").pk
    assert f'<a href="?before={older}" rel="prev">Older messages</a>' in page
    page = client.get(f"{messages_page(game, BOB)}?before={older}").content.decode()
    assert ("Note 0.</div>" in page, "Note 4.</div>" in page, "Note 5.</div>" in page) == (
        True,
        True,
        False,
    )


def test_a_seat_page_with_many_messages_makes_its_usual_queries(
    game: Game, now: datetime, django_assert_num_queries: Any
) -> None:
    for number in range(30):
        press.send(
            game_id=game.pk, position=number % 3, to=None, text=f"{number}", source="web", now=now
        )
    client = holding(game, BOB, now)
    client.get(seat_page(game, BOB))
    with django_assert_num_queries(PAGE_QUERIES):
        page = client.get(seat_page(game, BOB)).content.decode()
    assert "All 30 messages" in page


def test_the_seat_chooses_how_it_is_emailed_messages(game: Game, now: datetime) -> None:
    client = holding(game, BOB, now)
    url = f"/play/{game.pk}/{BOB}/messages/email/"
    response = client.post(url, {"press_email": "digest"}, follow=True)
    assert response.redirect_chain == [(f"/play/{game.pk}/{BOB}/settings/#press-email-form", 302)]
    assert flashes(response) == ["Done: the other players' messages come in your daily digest."]
    assert Seat.objects.get(game=game, position=BOB).press_email == PressEmail.DIGEST
    response = client.post(url, {"press_email": "weekly"}, follow=True)
    assert flashes(response) == [
        "Email me the other players' messages: Select a valid choice. weekly is not one of "
        "the available choices. Nothing was changed."
    ]
    assert Seat.objects.get(game=game, position=BOB).press_email == PressEmail.DIGEST


def test_a_german_seat_reads_and_writes_its_messages_in_german(game: Game, now: datetime) -> None:
    """The messages page and its posts speak the seat's language, as its page does, in a
    browser that asks for English."""
    Seat.objects.filter(game=game, position=BOB).update(language="de")
    client = holding(game, BOB, now)
    client.cookies["django_language"] = "en"
    press.send(game_id=game.pk, position=ANN, to=BOB, text="Psst, bob", source="web", now=now)
    page = client.get(messages_page(game, BOB)).content.decode()
    assert '<html lang="de"' in page
    assert "<strong>ann an dich (privat)</strong>" in page
    assert '<label for="press_to">An</label>' in page
    response = client.post(
        messages_page(game, BOB), {"to": "0", "text": "Gern, ann", "back": "seat"}, follow=True
    )
    assert flashes(response) == ["Deine private Nachricht an ann ist gesendet."]
    assert "<strong>Du an ann (privat)</strong>" in section(response.content.decode())
    empty = client.post(messages_page(game, BOB), {"to": "all", "text": "  "})
    assert "<li>Die Nachricht ist leer: schreib etwas, bevor du sie abschickst.</li>" in (
        empty.content.decode()
    )
    url = f"/play/{game.pk}/{BOB}/messages/email/"
    response = client.post(url, {"press_email": "none"}, follow=True)
    assert flashes(response) == [
        "Erledigt: keine Nachrichten der anderen Spieler mehr per E-Mail; lies sie auf der "
        "Seite des Spiels."
    ]
    assert Message.objects.count() == 2


def test_the_one_click_stop_of_a_message_email_stops_the_players_messages(
    game: Game, now: datetime
) -> None:
    seat = Seat.objects.get(game=game, position=BOB)
    url = access.stop_url(seat, "press").removeprefix("http://127.0.0.1:8000")
    assert escape("This stops the other players' messages in this game by email") in (
        Client().get(url).content.decode()
    )
    response = Client().post(url)
    assert "bob gets no messages of Test Choice by email." in response.content.decode()
    assert Seat.objects.get(pk=seat.pk).press_email == PressEmail.NONE


# --- the GM -------------------------------------------------------------------------------


def test_the_gm_reads_every_message_and_hides_one(game: Game, now: datetime, gm: User) -> None:
    press.send(game_id=game.pk, position=ANN, to=BOB, text="Secret plan", source="web", now=now)
    public = press.send(
        game_id=game.pk, position=CY, to=None, text="Rude words", source="web", now=now
    )
    client = gm_client(gm)
    page = client.get(f"/gm/{game.pk}/messages/").content.decode()
    assert "<strong>ann to bob (private)</strong>" in page
    assert '<div class="press-text">Secret plan</div>' in page
    response = client.post(
        f"/gm/{game.pk}/messages/{public.pk}/hide/", {"reason": "keep it civil"}, follow=True
    )
    assert response.redirect_chain == [(f"/gm/{game.pk}/messages/#message-{public.pk}", 302)]
    assert flashes(response) == [
        "The message is hidden: players see that the GM hid it, never its text."
    ]
    page = response.content.decode()
    assert '<div class="press-text">Rude words</div>' in page
    assert "Hidden from the players. Reason: keep it civil" in page
    action = GMAction.objects.get()
    assert (action.kind, action.words, action.reason, action.gm_id) == (
        "hide-message",
        "The GM hid a message of cy to everyone",
        "keep it civil",
        gm.pk,
    )
    seat_view = holding(game, ANN, now).get(seat_page(game, ANN)).content.decode()
    assert "Rude words" not in seat_view
    assert "A message hidden by the GM. Reason: keep it civil" in section(seat_view)
    assert (
        'The GM hid a message of cy to everyone <span class="gm-reason">(keep it civil)</span>'
    ) in seat_view


def test_the_gm_announces_to_every_player(game: Game, now: datetime, gm: User) -> None:
    client = gm_client(gm)
    response = client.post(f"/gm/{game.pk}/messages/", {"text": "Welcome!"}, follow=True)
    assert flashes(response) == ["Your announcement is sent to every player."]
    message = Message.objects.get()
    assert (message.sender, message.recipient, message.text) == (None, None, "Welcome!")
    empty = client.post(f"/gm/{game.pk}/messages/", {"text": ""})
    assert "The message is empty: write something to send." in empty.content.decode()
    assert Message.objects.count() == 1


def test_another_gm_opens_and_hides_nothing(game: Game, now: datetime) -> None:
    message = press.send(game_id=game.pk, position=ANN, to=None, text="Hi", source="web", now=now)
    other = gm_client(GMFactory.create(is_staff=True))
    assert other.get(f"/gm/{game.pk}/messages/").status_code == 404
    assert (
        other.post(f"/gm/{game.pk}/messages/{message.pk}/hide/", {"reason": ""}).status_code == 404
    )
    assert other.post(f"/gm/{game.pk}/messages/", {"text": "Hijack"}).status_code == 404
    assert Message.objects.get().hidden_at is None
    assert Message.objects.count() == 1


def test_the_gm_turns_private_messages_off_on_the_game_page(game: Game, gm: User) -> None:
    client = gm_client(gm)
    page = client.get(f"/gm/{game.pk}/").content.decode()
    assert "0 messages so far." in page
    assert 'id="private-press-form"' in page
    response = client.post(f"/gm/{game.pk}/private-press/", {"private_press": "off"}, follow=True)
    assert flashes(response) == ["Private messages are off: every message goes to every player."]
    game.refresh_from_db()
    assert game.private_press is False
    wrong = client.post(
        f"/gm/{game.pk}/private-press/", {"private_press": "sometimes"}, follow=True
    )
    assert flashes(wrong) == [
        "Private messages between players: Select a valid choice. sometimes is not one of the "
        "available choices."
    ]
    game.refresh_from_db()
    assert game.private_press is False


@pytest.mark.parametrize(("chosen", "private"), [({}, True), ({"private_press": "off"}, False)])
def test_the_new_game_form_sets_private_messages(
    gm: User, chosen: dict[str, str], private: bool
) -> None:
    response = gm_client(gm).post(CHOICE_FORM, {**GOOD, **chosen})
    assert response.status_code == 302
    assert Game.objects.get().private_press is private


def test_a_reason_the_gm_may_not_give_hides_nothing(game: Game, now: datetime, gm: User) -> None:
    message = press.send(game_id=game.pk, position=ANN, to=None, text="Hi", source="web", now=now)
    response = gm_client(gm).post(
        f"/gm/{game.pk}/messages/{message.pk}/hide/", {"reason": "x" * 301}, follow=True
    )
    assert flashes(response) == [
        "Reason (players see it): Ensure this value has at most 300 characters (it has 301)."
    ]
    assert (Message.objects.get().hidden_at, GMAction.objects.count()) == (None, 0)
    assert escape("Hi") in response.content.decode()
