"""Dice on the pages and in the emails of every game: SVG dice with the right values on a
page, boxed numbers in an HTML email (its text part as it was), and each seat in one colour
on the board, in messages and in standings."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from datetime import datetime

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from games.community import press
from games.engines import colours
from games.models import Game
from moderator.mail.models import OutboundEmail
from tests.factories import seat_page, started_game
from tests.games.playing import QUICK_LIARS, play_out
from tests.games.web.test_views import log_in, section

pytestmark = pytest.mark.django_db

BLUE, ORANGE, GREEN = colours.SEAT_COLOURS[:3]
DIE = re.compile(
    r'<svg class="die" [^>]*aria-label="([^"]+)"><title>[^<]*</title><rect [^>]*fill="(#\w+)"'
)
BOX = re.compile(r'<span class="die" style="[^"]*background:(#\w+);[^"]*">(\d+)</span>')
SWATCH = re.compile(r'<span class="swatch" [^>]*background:(#\w+);[^>]*>&nbsp;</span>([^<]+)')


@pytest.fixture(autouse=True)
def clock(now: datetime) -> Iterator[None]:
    with time_machine.travel(now, tick=False):
        yield


def page_of(game: Game, position: int, now: datetime) -> str:
    client = Client()
    log_in(client, game, position, now)
    return client.get(seat_page(game, position)).content.decode()


def dice_in(markup: str) -> list[tuple[str, str]]:
    """Each die drawn in ``markup``: (its value, its colour)."""
    return [(value, fill) for value, fill in DIE.findall(markup)]


def test_a_liars_dice_page_draws_the_cup_in_the_seats_colour(now: datetime) -> None:
    game = started_game("liars-dice", now=now, players=3, options={"profile": "classic"})
    state = game.rules.state_from_json(Game.objects.get(pk=game.pk).state)
    for position, colour in enumerate((BLUE, ORANGE, GREEN)):
        page = page_of(game, position, now)
        cup = section(page, "p", "your-cup")
        assert cup.startswith("Your cup: ")
        assert dice_in(cup) == [(str(value), colour) for value in state.hands[position]]
        assert [("\u2680" <= c <= "\u2685") for c in page].count(True) == 0
        board = section(page, "table", "board")
        assert SWATCH.findall(board) == [(BLUE, "ann"), (ORANGE, "bob"), (GREEN, "cy")]


def test_a_liars_dice_report_boxes_the_dice_in_html_and_keeps_its_text(now: datetime) -> None:
    game = started_game("liars-dice", now=now, players=3, options={"profile": "classic"})
    state = game.rules.state_from_json(Game.objects.get(pk=game.pk).state)
    email = OutboundEmail.objects.get(dedupe_key=f"report:{game.pk}:1:1")
    cup = section(email.html, "p", "your-cup")
    assert BOX.findall(cup) == [(ORANGE, str(value)) for value in state.hands[1]]
    assert re.search("[\u2680-\u2685]|<svg", email.html) is None
    # The text part says the cup in digits, as it always did.
    dice = " ".join(map(str, state.hands[1]))
    assert f"  Your cup: {dice}" in email.text.splitlines()


def test_drop_shy_and_dice_survivor_draw_their_dice_with_the_right_values(now: datetime) -> None:
    game = started_game("drop-shy", now=now, players=3, options={"dice_per_player": 4})
    state = game.rules.state_from_json(Game.objects.get(pk=game.pk).state)
    lines = section(page_of(game, 0, now), "table", "lines")
    assert dice_in(lines) == [
        (str(die.face), colour)
        for line, colour in zip(state.lines, (BLUE, ORANGE, GREEN), strict=True)
        for die in line
    ]


def test_one_colour_per_seat_on_the_board_in_messages_and_in_standings(now: datetime) -> None:
    game = started_game("liars-dice", now=now, players=["ann", "bob", "cy"], **QUICK_LIARS)
    press.send(game_id=game.pk, position=1, to=None, text="Good luck", source="web", now=now)
    play_out(game, sending={"ann", "bob", "cy"})
    page = page_of(game, 0, now)
    by_name = {"ann": BLUE, "bob": ORANGE, "cy": GREEN}
    standings = SWATCH.findall(section(page, "table", "standings"))
    assert sorted(standings) == sorted((colour, name) for name, colour in by_name.items())
    assert SWATCH.findall(section(page, "table", "board")) == list(
        (colour, name) for name, colour in by_name.items()
    )
    head = re.search(r'<p class="press-head">(.*?)</p>', page, re.S)
    assert head is not None
    assert SWATCH.findall(head[1]) == []  # the heading's name is in <strong>
    assert re.findall(r"background:(#\w+);", head[1]) == [ORANGE]
    public = Client().get(reverse("games:public", args=[game.public_id])).content.decode()
    assert sorted(SWATCH.findall(section(public, "table", "standings"))) == sorted(standings)


def test_choice_draws_the_wurfels_and_the_plates_in_the_seats_colour(now: datetime) -> None:
    game = started_game("choice", now=now, players=3, options={"variant": "suppenkasper"})
    engine = game.rules
    state = engine.state_from_json(Game.objects.get(pk=game.pk).state)
    sheets = list(state.sheets)
    sheets[0] = dataclasses.replace(sheets[0], stored=((5, 2), (1, 1)), plate=(2, 6, 6))
    sheets[1] = dataclasses.replace(sheets[1], stored=((3, 1),))
    state = dataclasses.replace(state, sheets=tuple(sheets))
    Game.objects.filter(pk=game.pk).update(state=engine.state_to_json(state))

    page = page_of(game, 0, now)

    wurfels = [
        re.sub(r"<svg .*?</svg>", lambda m: "[" + ",".join(dice_in(m[0])[0]) + "]", cell)
        for cell in re.findall(r'<td style="text-align:left;[^"]*">(.*?)</td>', page, re.S)
    ]
    assert [re.sub(r"<[^>]+>", "", cell) for cell in wurfels] == [
        f"[5,{BLUE}]\N{MULTIPLICATION SIGN}2 [1,{BLUE}]\N{MULTIPLICATION SIGN}1",
        f"[3,{ORANGE}]\N{MULTIPLICATION SIGN}1",
        "none",
    ]
    plates = section(page, "table", "plates")
    assert dice_in(plates) == [("2", BLUE), ("6", BLUE), ("6", BLUE)]
    assert plates.count("empty") == 2


def test_a_two_candidate_drop_shy_line_draws_each_die_with_its_depth(now: datetime) -> None:
    game = started_game(
        "drop-shy",
        now=now,
        players=2,
        options={"dice_per_player": 3, "selection": "two_candidate"},
    )
    state = game.rules.state_from_json(Game.objects.get(pk=game.pk).state)
    lines = section(page_of(game, 0, now), "table", "lines")
    drawn = re.findall(r'aria-label="(\d)".*?<span class="depth">/(\d+)</span>', lines, re.S)
    assert drawn == [(str(die.face), str(die.depth)) for line in state.lines for die in line]
    assert dice_in(lines) == [
        (str(die.face), colour)
        for line, colour in zip(state.lines, (BLUE, ORANGE), strict=True)
        for die in line
    ]
