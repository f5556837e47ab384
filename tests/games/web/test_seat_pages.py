"""One seat per page: a browser may hold several seats of a game (a shared phone, a GM
trying their own game); every seat has its own address, its page names it, and an order
is only ever taken for the seat its form was rendered for."""

from __future__ import annotations

import json
import re
import secrets
from datetime import datetime
from typing import Any

import pytest
from django.test import Client

from games.engines.choice.rules import ChoiceEngine
from games.models import Game, Order, Seat
from games.postal import access
from games.web.api.stream import Frames, Slots
from tests.factories import started_game

pytestmark = pytest.mark.django_db

CHOICE = ChoiceEngine()


@pytest.fixture
def client() -> Client:
    # A client address of its own: the link rate limit counts per address.
    return Client(REMOTE_ADDR=f"10.{secrets.randbelow(256)}.{secrets.randbelow(256)}.7")


def open_link(client: Client, game: Game, position: int, now: datetime) -> None:
    seat = Seat.objects.get(game=game, position=position)
    token = access.mint([seat], now=now)[position]
    response = client.post(f"/p/{token}/")
    assert (response.status_code, response["Location"]) == (302, f"/play/{game.pk}/{position}/")


def order_text(game: Game, position: int) -> str:
    """A legal order of the seat: its no-moves default, as the engine writes it."""
    game.refresh_from_db()
    state = CHOICE.state_from_json(game.state)
    return CHOICE.canonical(state, position, CHOICE.default(state, position))


def post(client: Client, game: Game, page: int, text: str, seat: Any) -> Any:
    fields = {"step": "1", "entry": "text", "text": text}
    if seat is not None:
        fields["seat"] = str(seat)
    return client.post(f"/play/{game.pk}/{page}/", fields)


def orders(game: Game) -> list[tuple[str, str]]:
    return list(
        Order.objects.filter(step__game=game).order_by("id").values_list("seat__name", "canonical")
    )


def messages_of(client: Client, url: str) -> list[str]:
    html = client.get(url).content.decode()
    return re.findall(r'<li class="[a-z ]*">(.*?)</li>', html.split('class="messages"')[1])


def test_two_seats_in_one_browser_each_have_their_page_and_their_orders(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now)
    open_link(client, game, 0, now)
    open_link(client, game, 1, now)
    ann_page = client.get(f"/play/{game.pk}/0/").content.decode()
    bob_page = client.get(f"/play/{game.pk}/1/").content.decode()
    assert "You play as <strong>ann</strong>" in ann_page
    assert "You play as <strong>bob</strong>" in bob_page
    bob = Seat.objects.get(game=game, position=1)
    # The two order forms (choices and typed) carry the seat's position; the reminders' and
    # quiet hours' forms, on the seat's settings page, name the seat by id.
    assert re.findall(r'<input type="hidden" name="seat" value="(\d+)">', bob_page) == ["1", "1"]
    bob_settings = client.get(f"/play/{game.pk}/1/settings/").content.decode()
    assert (
        re.findall(r'<input type="hidden" name="seat" value="(\d+)">', bob_settings)
        == [str(bob.pk)] * 2
    )
    ann_text, bob_text = order_text(game, 0), order_text(game, 1)

    ann = post(client, game, 0, ann_text, 0)
    bob = post(client, game, 1, bob_text, 1)

    assert (ann.status_code, ann["Location"]) == (302, f"/play/{game.pk}/0/")
    assert (bob.status_code, bob["Location"]) == (302, f"/play/{game.pk}/1/")
    assert orders(game) == [("ann", ann_text), ("bob", bob_text)]


def test_a_form_of_one_seat_posted_to_another_seats_page_records_nothing(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now)
    open_link(client, game, 0, now)
    open_link(client, game, 1, now)

    response = post(client, game, 1, order_text(game, 0), 0)

    assert (response.status_code, response["Location"]) == (302, f"/play/{game.pk}/1/")
    assert orders(game) == []
    assert messages_of(client, f"/play/{game.pk}/1/") == [
        "This order form was for ann&#x27;s seat, but this page is bob&#x27;s: nothing was "
        "recorded. Send the order again from the right seat&#x27;s page."
    ]


@pytest.mark.parametrize("seat", [None, "", "x", "99", "²"])
def test_a_post_without_the_seat_it_was_written_for_records_nothing(
    client: Client, now: datetime, seat: str | None
) -> None:
    game = started_game(now=now)
    open_link(client, game, 0, now)

    response = post(client, game, 0, order_text(game, 0), seat)

    assert (response.status_code, response["Location"]) == (302, f"/play/{game.pk}/0/")
    assert orders(game) == []
    assert messages_of(client, f"/play/{game.pk}/0/") == [
        "This form is out of date, so nothing was recorded: send your order again from the "
        "current page."
    ]


def test_a_seat_the_browser_does_not_hold_is_not_found_for_pages_posts_and_json(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now)
    open_link(client, game, 0, now)

    assert client.get(f"/play/{game.pk}/1/").status_code == 404
    assert post(client, game, 1, order_text(game, 1), 1).status_code == 404
    assert client.get(f"/play/{game.pk}/1/view.json").status_code == 404
    assert orders(game) == []


def test_the_games_old_address_goes_to_the_one_seat_or_lets_the_browser_choose(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now)
    open_link(client, game, 2, now)
    one = client.get(f"/play/{game.pk}/")
    assert (one.status_code, one["Location"]) == (302, f"/play/{game.pk}/2/")

    open_link(client, game, 0, now)
    several = client.get(f"/play/{game.pk}/").content.decode()
    assert re.findall(r'<li><a href="([^"]+)">(.*?)</a>', several.split("<main>")[1]) == [
        (f"/play/{game.pk}/0/", "ann's seat"),
        (f"/play/{game.pk}/2/", "cy's seat"),
    ]

    stale = client.post(f"/play/{game.pk}/", {"step": "1", "entry": "text", "text": "x"})
    assert stale.status_code == 200
    assert orders(game) == []
    assert re.findall(r'<li class="error">(.*?)</li>', stale.content.decode()) == [
        "This form is out of date, so nothing was recorded: send your order again from the "
        "current page."
    ]


# A seat as "Your games" lists it: its page, its game's title, the seat's name.
SEAT_LINE = (
    r'<p class="tight"><a href="(/play/[^"]*)"><strong>(.*?)</strong></a>[^<]*</p>\s*'
    r'<p class="tight muted">You play (\w+)'
)


def test_your_games_lists_each_seat_by_name_and_game(client: Client, now: datetime) -> None:
    first = started_game(now=now)
    second = started_game(now=now)
    open_link(client, first, 0, now)
    open_link(client, first, 1, now)
    open_link(client, second, 2, now)

    html = client.get("/play/").content.decode()

    assert re.findall(SEAT_LINE, html) == [
        (f"/play/{second.pk}/2/", "Test Choice", "cy"),
        (f"/play/{first.pk}/0/", "Test Choice", "ann"),
        (f"/play/{first.pk}/1/", "Test Choice", "bob"),
    ]


def test_view_json_answers_for_the_seat_in_its_address(client: Client, now: datetime) -> None:
    game = started_game(now=now)
    open_link(client, game, 0, now)
    open_link(client, game, 1, now)

    ann = json.loads(client.get(f"/play/{game.pk}/0/view.json").content)
    bob = json.loads(client.get(f"/play/{game.pk}/1/view.json").content)
    listed = client.get(f"/play/{game.pk}/view.json")

    assert (ann["seat"], bob["seat"]) == (
        {"position": 0, "name": "ann", "bot": False, "autopilot": ""},
        {"position": 1, "name": "bob", "bot": False, "autopilot": ""},
    )
    game.refresh_from_db()
    state = CHOICE.state_from_json(game.state)
    assert (ann["view"], bob["view"]) == (CHOICE.view(state, 0), CHOICE.view(state, 1))
    assert listed.status_code == 300
    assert json.loads(listed.content) == {
        "game": game.pk,
        "seats": [
            {"name": "ann", "position": 0, "page": f"/play/{game.pk}/0/"},
            {"name": "bob", "position": 1, "page": f"/play/{game.pk}/1/"},
        ],
    }


def test_a_seats_stream_is_its_browsers_only(client: Client, now: datetime, settings: Any) -> None:
    settings.LIVE_STREAMS_PER_SEAT = 3
    game = started_game(now=now)
    assert client.get(f"/play/{game.pk}/0/stream").status_code == 404
    open_link(client, game, 0, now)
    answer = client.get(f"/play/{game.pk}/1/stream")
    assert answer.status_code == 404
    held = client.get(f"/play/{game.pk}/0/stream")
    assert (held.status_code, held["Content-Type"]) == (200, "text/event-stream")
    held.close()


def test_a_web_process_keeps_threads_for_pages_past_its_streams(
    client: Client, now: datetime, settings: Any
) -> None:
    # Each stream holds a thread of its process while it lasts: past
    # API_STREAMS_PER_PROCESS the process refuses more, whatever the service's count.
    settings.API_STREAMS_PER_PROCESS = 1
    settings.API_STREAMS_MOST = 1000
    settings.LIVE_STREAMS_PER_SEAT = 3
    game = started_game(now=now)
    open_link(client, game, 0, now)
    held = client.get(f"/play/{game.pk}/0/stream")
    refused = client.get(f"/play/{game.pk}/0/stream")
    assert (held.status_code, refused.status_code, refused["Retry-After"]) == (200, 429, "3")
    held.close()
    # Closed, it gives its thread back.
    again = Slots(f"seat-test-{secrets.token_hex(4)}", 1)
    assert again.take()
    again.give_back()


def test_a_stream_closed_before_it_began_gives_its_slot_back() -> None:
    holder = f"seat-test-{secrets.token_hex(4)}"
    slots = Slots(holder, 1)
    assert slots.take()
    assert not Slots(holder, 1).take()
    Frames(iter(()), slots).close()
    again = Slots(holder, 1)
    assert again.take()
    again.give_back()
