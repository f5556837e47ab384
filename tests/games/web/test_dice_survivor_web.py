"""Dice Survivor on the seat page: the hint names only the actions still possible this
turn, and a KO (once a game) is never sent by one tap: the page asks for a tick first,
without JavaScript."""

from __future__ import annotations

import re
from datetime import datetime
from html import unescape

import pytest
from django.test import Client
from time_machine import TimeMachineFixture

from games.models import Game, Order, Seat, Step
from games.postal import access
from moderator.mail.models import OutboundEmail
from tests.factories import EVERY_HOUR, new_game, seat_page, started_game

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def frozen(time_machine: TimeMachineFixture, now: datetime) -> None:
    time_machine.move_to(now, tick=False)


def active(game: Game) -> Seat:
    step = Step.objects.get(game=game, number=Game.objects.get(pk=game.pk).step_number)
    return Seat.objects.get(game=game, position=step.prompts[0]["seat"])


def browser(seat: Seat, now: datetime) -> Client:
    client = Client()
    assert client.post(f"/p/{access.mint([seat], now=now)[seat.position]}/").status_code == 302
    return client


def owed(html: str) -> str:
    found = re.search(r'<p id="owed">(.*?)<br>', html, re.S)
    assert found is not None
    return unescape(found[1])


def post(client: Client, game: Game, seat: Seat, **fields: str) -> str:
    step = Game.objects.get(pk=game.pk).step_number
    data = {"step": str(step), "seat": str(seat.position), "entry": "menu", **fields}
    response = client.post(seat_page(game, seat.position), data)
    assert response.status_code in (200, 302)
    return response.content.decode()


def test_the_page_hint_drops_the_extra_play_point_once_used(now: datetime) -> None:
    game = started_game("dice-survivor", now=now, schedule_spec=EVERY_HOUR)
    seat = active(game)
    client = browser(seat, now)
    page = client.get(seat_page(game, seat.position)).content.decode()
    assert owed(page) == (
        "Action: turn 1, action 1 of 2: challenge <player> [double], extra, ko <player> or pass"
    )
    post(client, game, seat, pick="", pick_button="extra")
    page = client.get(seat_page(game, seat.position)).content.decode()
    assert owed(page) == "Action: turn 1, action 2 of 2: challenge <player> or pass"


def test_a_ko_button_asks_for_a_tick_and_sends_nothing_until_then(now: datetime) -> None:
    game = started_game("dice-survivor", now=now, schedule_spec=EVERY_HOUR)
    seat = active(game)
    target = Seat.objects.filter(game=game).exclude(pk=seat.pk).order_by("position").first()
    assert target is not None
    client = browser(seat, now)
    before = Game.objects.get(pk=game.pk).state
    page = post(client, game, seat, pick="", pick_button=f"ko {target.name}")
    assert Order.objects.count() == 0
    assert Game.objects.get(pk=game.pk).state == before
    confirm = re.search(r'<form method="post" action="" id="confirm-form">(.*?)</form>', page, re.S)
    assert confirm is not None
    assert re.findall(r"<li>(.*?)</li>", confirm[1]) == [
        f"ko {target.name} is not sent yet: it can be given once a game. Confirm it below."
    ]
    assert re.findall(r'<input type="hidden" name="pick" value="([^"]*)">', confirm[1]) == [
        f"ko {target.name}"
    ]
    assert re.findall(r'<label class="choice">(.*?)</label>', confirm[1]) == [
        f'<input type="checkbox" name="confirm" value="on" required> '
        f"Yes, use my one KO of the game on {target.name}"
    ]
    # The box left unticked (a browser that ignores "required"): asked again, nothing sent.
    again = post(client, game, seat, pick=f"ko {target.name}")
    assert again.count('id="confirm-form"') == 1
    assert Order.objects.count() == 0
    post(client, game, seat, pick=f"ko {target.name}", confirm="on")
    assert [(o.seat_id, o.canonical) for o in Order.objects.all()] == [
        (seat.pk, f"ko {target.name}")
    ]


def test_a_typed_ko_needs_no_tick(now: datetime) -> None:
    game = started_game("dice-survivor", now=now, schedule_spec=EVERY_HOUR)
    seat = active(game)
    target = Seat.objects.filter(game=game).exclude(pk=seat.pk).order_by("position").first()
    assert target is not None
    client = browser(seat, now)
    post(client, game, seat, entry="text", text=f"ko {target.name}")
    assert [o.canonical for o in Order.objects.all()] == [f"ko {target.name}"]


def test_other_buttons_are_sent_at_once(now: datetime) -> None:
    game = started_game("dice-survivor", now=now, schedule_spec=EVERY_HOUR)
    seat = active(game)
    client = browser(seat, now)
    post(client, game, seat, pick="", pick_button="pass")
    assert [o.canonical for o in Order.objects.all()] == ["pass"]


def finals_said(html: str) -> list[str]:
    """What a sign-up page's rules in play say of the Finals."""
    return re.findall(r"<dt>Finals add play points</dt><dd>([^<]*)</dd>", unescape(html))


def test_the_open_game_card_lists_the_finals_only_for_a_game_of_six_or_more(
    client: Client,
) -> None:
    four = new_game("dice-survivor", players=["ann"], signup="first", seats_wanted=4)
    six = new_game("dice-survivor", players=["ann"], signup="first", seats_wanted=6)

    listed = client.get("/open/").content.decode()

    assert finals_said(listed) == ["yes"]
    assert finals_said(client.get(f"/open/{four.public_id}/").content.decode()) == []
    assert finals_said(client.get(f"/open/{six.public_id}/").content.decode()) == ["yes"]


def test_seat_and_public_pages_and_reports_list_the_finals_only_from_six_players(
    now: datetime,
) -> None:
    said = {}
    for players in (5, 6):
        game = started_game(
            "dice-survivor", now=now, players=players, public="yes", schedule_spec=EVERY_HOUR
        )
        seat = active(game)  # its page has the typed-order box, with the syntax
        page = browser(seat, now).get(seat_page(game, seat.position)).content.decode()
        public = Client().get(f"/games/{game.public_id}/").content.decode()
        report = OutboundEmail.objects.get(game=game, kind="report", to=seat.email)
        lines = [line for line in report.text.splitlines() if "Finals add" in line]
        # The order syntax tells of the Finals' orders only where they are played.
        syntax = ("Finals (1 action)" in page, "Finals (1 action)" in report.text)
        said[players] = (finals_said(page), finals_said(public), lines, syntax)

    assert said == {
        5: ([], [], [], (False, False)),
        6: (["yes"], ["yes"], ["  Finals add play points: yes"], (True, True)),
    }
