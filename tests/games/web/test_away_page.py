"""The seat's page says what plays a missed turn and takes the player's autopilot; the
away page declares and removes absences; fellow players see "away until". Bad input says
what is wrong and changes nothing; another browser's seat answers 404."""

from __future__ import annotations

import re
import secrets
from datetime import date, datetime
from typing import Any

import pytest
from django.test import Client

from games import postal
from games.community import absences
from games.engines import registry
from games.engines.base import Strategy
from games.engines.choice.rules import ChoiceEngine
from games.models import Absence, Game, Seat
from games.postal import access
from tests.factories import seat_page, settings_page, started_game

pytestmark = pytest.mark.django_db

CHOICE = ChoiceEngine()


@pytest.fixture
def client() -> Client:
    return Client(REMOTE_ADDR=f"10.{secrets.randbelow(256)}.{secrets.randbelow(256)}.7")


@pytest.fixture
def strategies(monkeypatch: pytest.MonkeyPatch) -> None:
    def play(state: Any, seat: int) -> Any:
        return CHOICE.default(state, seat)

    monkeypatch.setitem(
        registry.STRATEGIES, "choice", (Strategy("test", "the test pilot", "Plays safe.", play),)
    )


def open_seat(client: Client, game: Game, position: int, now: datetime) -> None:
    seat = Seat.objects.get(game=game, position=position)
    client.post(f"/p/{access.mint([seat], now=now)[position]}/")


def messages_of(html: str) -> list[str]:
    return re.findall(r'<li class="[a-z ]*">(.*?)</li>', html.split('class="messages"')[1])


def away_page(game: Game, position: int) -> str:
    return f"/play/{game.pk}/{position}/away/"


def test_the_settings_page_says_what_plays_a_missed_turn(
    client: Client, now: datetime, strategies: None
) -> None:
    game = started_game(
        now=now,
        missed=postal.MissedTurns(extensions=2, extension_hours=12, civil_disorder_after=3),
    )
    open_seat(client, game, 0, now)
    assert 'id="missed"' not in client.get(seat_page(game, 0)).content.decode()
    html = client.get(settings_page(game, 0)).content.decode()
    section = html.split('<section id="missed">')[1].split("</section>")[0]
    assert (
        '<input type="radio" name="autopilot" value="" id="autopilot-default" checked> '
        "<span>The game's no-moves-received default plays</span></label>" in section
    )
    assert (
        '<input type="radio" name="autopilot" value="test" id="autopilot-test"> '
        '<span>Autopilot: the test pilot<span class="muted summary">Plays safe.</span></span>'
        "</label>" in section
    )
    assert "You have <strong>2 of 2</strong> left" in section
    assert "the deadline moves on by 12 hours for everyone" in section
    assert "After 3 missed turns in a row your seat is in civil disorder" in section
    assert "While you are away, in this game the deadline waits for you." in section
    assert f'href="{away_page(game, 0)}"' in section


def test_a_player_chooses_an_autopilot_and_back(
    client: Client, now: datetime, strategies: None
) -> None:
    game = started_game(now=now)
    open_seat(client, game, 1, now)
    response = client.post(f"/play/{game.pk}/1/autopilot/", {"autopilot": "test"}, follow=True)
    assert response.redirect_chain == [(settings_page(game, 1), 302)]
    assert messages_of(response.content.decode()) == [
        "Done: when you miss a deadline, your autopilot (the test pilot) plays."
    ]
    assert Seat.objects.get(game=game, position=1).autopilot == "test"
    response = client.post(f"/play/{game.pk}/1/autopilot/", {"autopilot": ""}, follow=True)
    assert messages_of(response.content.decode()) == [
        "Done: when you miss a deadline, the game&#x27;s default plays."
    ]
    assert Seat.objects.get(game=game, position=1).autopilot == ""


def test_an_unknown_autopilot_changes_nothing(
    client: Client, now: datetime, strategies: None
) -> None:
    game = started_game(now=now)
    open_seat(client, game, 1, now)
    postal.choose_autopilot(game.pk, position=1, key="test")
    response = client.post(f"/play/{game.pk}/1/autopilot/", {"autopilot": "cheat"}, follow=True)
    assert messages_of(response.content.decode()) == [
        "When I miss a deadline: Choose the game&#x27;s default or one of its autopilots. "
        "Nothing was changed."
    ]
    assert Seat.objects.get(game=game, position=1).autopilot == "test"


def test_another_browser_cannot_choose_for_a_seat(client: Client, now: datetime) -> None:
    game = started_game(now=now)
    open_seat(client, game, 0, now)
    assert client.post(f"/play/{game.pk}/1/autopilot/", {"autopilot": ""}).status_code == 404
    assert client.get(away_page(game, 1)).status_code == 404
    assert client.post(away_page(game, 1), {"withdraw": "1"}).status_code == 404
    assert Client().get(away_page(game, 0)).status_code == 404


def test_a_player_declares_an_absence_and_others_see_it(client: Client, now: datetime) -> None:
    game = started_game(now=now)
    open_seat(client, game, 1, now)
    response = client.post(
        away_page(game, 1),
        {"first_day": "2026-11-23", "last_day": "2026-12-02", "scope": "all"},
        follow=True,
    )
    html = response.content.decode()
    assert messages_of(html) == [
        "Done: you are away in all your games from 23 November 2026 to 2 December 2026."
    ]
    absence = Absence.objects.get()
    assert (absence.email, absence.game, absence.first_day, absence.last_day) == (
        "bob@example.org",
        None,
        date(2026, 11, 23),
        date(2026, 12, 2),
    )
    assert "Monday 23 November 2026" in html and "all your games" in html
    own = client.get(seat_page(game, 1)).content.decode()
    assert '<p id="away-now" class="muted">Away: you until 2 December.</p>' in own
    other = Client()
    open_seat(other, game, 0, now)
    page = other.get(seat_page(game, 0)).content.decode()
    assert '<p id="away-now" class="muted">Away: bob until 2 December.</p>' in page


@pytest.mark.parametrize(
    ("posted", "error"),
    [
        (
            {"first_day": "2026-12-10", "last_day": "2026-12-09", "scope": "all"},
            "The absence ends (9 December 2026) before it starts (10 December 2026).",
        ),
        (
            {"first_day": "tomorrow", "last_day": "2026-12-09", "scope": "all"},
            "Write the first day as a date, for example 2026-12-24.",
        ),
        (
            {"first_day": "2026-12-01", "last_day": "", "scope": "all"},
            "Give the last day you are away.",
        ),
        (
            {"first_day": "2026-12-01", "last_day": "2026-12-02", "scope": "moon"},
            "Choose whether you are away from one game or from all your games.",
        ),
    ],
)
def test_a_wrong_absence_is_said_next_to_the_form_and_changes_nothing(
    client: Client, now: datetime, posted: dict[str, str], error: str
) -> None:
    game = started_game(now=now)
    open_seat(client, game, 1, now)
    response = client.post(away_page(game, 1), posted)
    assert response.status_code == 200
    assert error in response.content.decode()
    assert Absence.objects.count() == 0


def test_a_player_removes_only_their_own_absence(client: Client, now: datetime) -> None:
    game = started_game(now=now)
    theirs = absences.declare(
        "ann@example.org",
        first_day=date(2026, 12, 1),
        last_day=date(2026, 12, 2),
        zone="UTC",
        now=now,
    )
    mine = absences.declare(
        "bob@example.org",
        first_day=date(2026, 12, 1),
        last_day=date(2026, 12, 2),
        zone="UTC",
        now=now,
        game=game,
    )
    open_seat(client, game, 1, now)
    html = client.get(away_page(game, 1)).content.decode()
    assert f'value="{mine.pk}"' in html and f'value="{theirs.pk}"' not in html
    response = client.post(away_page(game, 1), {"withdraw": str(theirs.pk)}, follow=True)
    assert messages_of(response.content.decode()) == [
        "There is no such absence of yours. Nothing was changed."
    ]
    response = client.post(away_page(game, 1), {"withdraw": "x" * 40}, follow=True)
    assert messages_of(response.content.decode()) == [
        "There is no such absence of yours. Nothing was changed."
    ]
    assert Absence.objects.count() == 2
    response = client.post(away_page(game, 1), {"withdraw": str(mine.pk)}, follow=True)
    assert messages_of(response.content.decode()) == ["Done: that absence is removed."]
    assert list(Absence.objects.values_list("pk", flat=True)) == [theirs.pk]


def test_the_gm_sees_who_is_away_in_disorder_and_on_autopilot(
    now: datetime, strategies: None
) -> None:
    from tests.games.postal.test_gm import staff_user

    gm = staff_user()
    game = started_game(
        now=now, gm=gm, missed=postal.MissedTurns(extensions=2, civil_disorder_after=1)
    )
    postal.choose_autopilot(game.pk, position=0, key="test")
    absences.declare(
        "bob@example.org",
        first_day=date(2026, 11, 20),
        last_day=date(2026, 12, 3),
        zone="UTC",
        now=now,
    )
    Seat.objects.filter(game=game, position=2).update(
        civil_disorder_at=now, missed_in_row=4, nmr_count=6, extensions_used=2
    )
    client = Client()
    client.force_login(gm)
    html = client.get(f"/gm/{game.pk}/").content.decode()
    rows = html.split('<table class="stack" id="seat-table">')[1].split("</tbody>")[0]
    cells = re.findall(r'<td data-label="(Status|Missed turns)">(.*?)</td>', rows)
    assert cells == [
        ("Status", "active"),
        ("Missed turns", "0<br>extensions used: 0 of 2<br>autopilot: the test pilot"),
        ("Status", "active<br>away until 3 December"),
        ("Missed turns", "0<br>extensions used: 0 of 2"),
        ("Status", 'active<br><span class="bad">civil disorder since 23 Nov</span>'),
        ("Missed turns", "6 (4 in a row)<br>extensions used: 2 of 2"),
    ]


def test_the_player_uses_an_extension_from_the_seat_page(client: Client, now: datetime) -> None:
    game = started_game(now=now, missed=postal.MissedTurns(extensions=1, extension_hours=6))
    open_seat(client, game, 0, now)
    html = client.get(seat_page(game, 0)).content.decode()
    assert re.findall(r'<div id="more-time">.*?<button[^>]*>(.*?)</button>', html) == [
        "More time: use an extension (+6 hours)"
    ]
    response = client.post(f"/play/{game.pk}/0/extension/", follow=True)
    assert response.redirect_chain == [(seat_page(game, 0), 302)]
    assert messages_of(response.content.decode()) == [
        "Done: the deadline is now Thu 26 Nov 2026 00:00 UTC; it is emailed to the players "
        "who owe an order and to those who get every report."
    ]
    assert 'id="extension-form"' not in response.content.decode()
    response = client.post(f"/play/{game.pk}/0/extension/", follow=True)
    assert messages_of(response.content.decode()) == [
        "You have used all 1 extension of this game. Nothing was changed."
    ]
    assert client.post(f"/play/{game.pk}/1/extension/").status_code == 404
