"""The seat's settings page shows how often the player gets the game's reports and takes a new
choice, for this seat or for all the seats of the player's address, in a plain form (no
JavaScript, POST with CSRF); bad input says what is wrong and changes nothing."""

from __future__ import annotations

import re
import secrets
from datetime import datetime

import pytest
from django.test import Client

from games.models import EmailPreference, Game, Seat
from games.postal import access
from tests.factories import GameFactory, settings_page, started_game

pytestmark = pytest.mark.django_db


@pytest.fixture
def client() -> Client:
    # A client address of its own: the link rate limit counts per address.
    return Client(REMOTE_ADDR=f"10.{secrets.randbelow(256)}.{secrets.randbelow(256)}.9")


def open_seat(client: Client, game: Game, position: int, now: datetime) -> None:
    seat = Seat.objects.get(game=game, position=position)
    client.post(f"/p/{access.mint([seat], now=now)[position]}/")


def messages_of(html: str) -> list[str]:
    return re.findall(r'<li class="[a-z ]*">(.*?)</li>', html.split('class="messages"')[1])


def choices() -> list[tuple[str, int, str]]:
    return list(
        Seat.objects.order_by("game__title", "position").values_list(
            "game__title", "position", "reports"
        )
    )


def test_the_page_shows_the_choice_and_a_form_that_works_without_javascript(
    client: Client, now: datetime
) -> None:
    game = started_game("liars-dice", now=now, title="Liars")
    open_seat(client, game, 0, now)
    html = client.get(settings_page(game, 0)).content.decode()
    (shown,) = re.findall(r'<p id="email-choice">(.*?)</p>', html)
    assert shown == (
        "You get this game's reports <strong>only when you owe an order, with what happened "
        "since</strong> (the default of Liar&#x27;s Dice). This page always shows every "
        "report."
    )
    form = html.split('id="email-form"')[1].split("</form>")[0]
    assert f'action="/play/{game.pk}/0/email/"' in html
    assert 'name="csrfmiddlewaretoken"' in form
    assert re.findall(r'<input type="radio" name="reports" value="(\w+)"[^>]*checked', form) == [
        "owed"
    ]
    assert re.findall(r'<input type="radio" name="scope" value="(\w+)"[^>]*checked', form) == [
        "seat"
    ]


def test_a_choice_for_this_seat_is_saved_and_said(client: Client, now: datetime) -> None:
    game = started_game("liars-dice", now=now, title="Liars")
    open_seat(client, game, 0, now)
    response = client.post(
        f"/play/{game.pk}/0/email/", {"reports": "every", "scope": "seat"}, follow=True
    )
    assert response.redirect_chain == [(settings_page(game, 0), 302)]
    assert messages_of(response.content.decode()) == [
        "Done: you now get this game&#x27;s reports every postal turn. Orders you make on the page "
        "get no receipt by email: the page shows them; orders by email always do."
    ]
    assert choices() == [("Liars", 0, "every"), ("Liars", 1, ""), ("Liars", 2, "")]
    assert EmailPreference.objects.count() == 0


def test_a_choice_for_all_my_seats_sets_them_all_and_the_default(
    client: Client, now: datetime
) -> None:
    game = started_game("liars-dice", now=now, title="Liars")
    other = GameFactory.create(seats=3, title="Other")
    open_seat(client, game, 0, now)
    response = client.post(
        f"/play/{game.pk}/0/email/", {"reports": "digest", "scope": "all"}, follow=True
    )
    assert messages_of(response.content.decode()) == [
        "Done: ann@example.org now gets the reports of its 2 games, and of the games it "
        "joins later, in one daily digest. Orders you make on the page get no receipt by "
        "email: the page shows them; orders by email always do."
    ]
    assert choices() == [
        ("Liars", 0, "digest"),
        ("Liars", 1, ""),
        ("Liars", 2, ""),
        ("Other", 0, "digest"),
        ("Other", 1, ""),
        ("Other", 2, ""),
    ]
    assert list(EmailPreference.objects.values_list("email", "reports", "hour")) == [
        ("ann@example.org", "digest", 8)
    ]
    assert Seat.objects.get(game=other, position=0).reports == "digest"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"reports": "hourly", "scope": "seat"},
            "Choose one of the ways to get email about this game. Nothing was changed.",
        ),
        ({"scope": "all"}, "Choose how often you want email about this game. Nothing was changed."),
        (
            {"reports": "every", "scope": "everyone"},
            "Choose whether this is for this seat only or for all your seats. Nothing was changed.",
        ),
    ],
)
def test_bad_input_says_what_is_wrong_and_changes_nothing(
    client: Client, now: datetime, fields: dict[str, str], message: str
) -> None:
    game = started_game("liars-dice", now=now, title="Liars")
    open_seat(client, game, 0, now)
    response = client.post(f"/play/{game.pk}/0/email/", fields, follow=True)
    assert response.redirect_chain == [(settings_page(game, 0), 302)]
    assert messages_of(response.content.decode()) == [message]
    assert choices() == [("Liars", 0, ""), ("Liars", 1, ""), ("Liars", 2, "")]
    assert EmailPreference.objects.count() == 0


def test_a_seat_this_browser_does_not_hold_is_not_found_and_changes_nothing(
    client: Client, now: datetime
) -> None:
    game = started_game("liars-dice", now=now, title="Liars")
    open_seat(client, game, 0, now)
    response = client.post(f"/play/{game.pk}/1/email/", {"reports": "every", "scope": "all"})
    assert response.status_code == 404
    assert client.get(f"/play/{game.pk}/0/email/").status_code == 405
    assert choices() == [("Liars", 0, ""), ("Liars", 1, ""), ("Liars", 2, "")]


def test_a_post_without_the_csrf_token_is_refused(now: datetime) -> None:
    game = started_game("liars-dice", now=now, title="Liars")
    client = Client(enforce_csrf_checks=True, REMOTE_ADDR="10.1.2.3")
    seat = Seat.objects.get(game=game, position=0)
    page = client.get(f"/p/{access.mint([seat], now=now)[0]}/").content.decode()
    (token,) = re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    client.post(f"/p/{access.mint([seat], now=now)[0]}/", {"csrfmiddlewaretoken": token})
    response = client.post(f"/play/{game.pk}/0/email/", {"reports": "every", "scope": "seat"})
    assert response.status_code == 403
    assert choices() == [("Liars", 0, ""), ("Liars", 1, ""), ("Liars", 2, "")]
