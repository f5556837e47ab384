"""Liar's Dice help that fits the game being played: the seat page's typed-order help and
the reports' HOW TO ORDER show the profile in play and only the orders its options allow;
the Death Match bids with the same controls as the other profiles (Revelation's die to show
beside the bid: test_liars_dice_controls.py)."""

from __future__ import annotations

import re
from datetime import datetime
from html import unescape
from typing import Any

import pytest
from django.test import Client
from time_machine import TimeMachineFixture

from games import postal
from games.models import Game, Seat
from games.postal import access
from moderator.mail.models import OutboundEmail
from tests.factories import new_game, seat_page, started_game

pytestmark = pytest.mark.django_db


CLASSIC = [
    "  One move per message, when it is your turn:",
    "    bid 5 3               at least five 3s among all hands",
    "    liar                  challenge the last bid (also challenge, dudo)",
    "  Ones are wild: they count as every face, and a round may not open on ones.",
    "  Palifico round: ones are not wild and every bid keeps the opening face.",
]
CLASSIC_SPOT_NO_WILDS = [
    "  One move per message, when it is your turn:",
    "    bid 5 3               at least five 3s among all hands",
    "    liar                  challenge the last bid (also challenge, dudo)",
    "    spot                  the last bid is exactly right (also calza)",
    "  Ones are not wild.",
]
DEATH_MATCH = [
    "  One move per message, when it is your turn:",
    "    bid 5 3               at least five 3s in both hands together",
    "    liar                  challenge the last bid (also challenge, dudo)",
    "  Ones are not wild.",
]
DEATH_MATCH_ANOMALIES = [
    "  One move per message, when it is your turn:",
    "    bid 5 3               at least five 3s in both hands together",
    "    bid 5 3 show 2        the same bid, and your opponent sees your die at position 2",
    "                          (the second die of your cup as listed: 2 is a position, not a face)",
    "    liar                  challenge the last bid (also challenge, dudo)",
    "    accuse                your opponent cheated this round",
    "  Ones are not wild. A bid must show one of your unshown dice while more than",
    "  three are unshown, and may show none after that.",
    "  Secret orders before the bidding of each round:",
    "    mulligan 1 4          reroll your dice at positions 1 and 4 (mulligan none: keep all)",
    "    cheat yes / cheat no  cheat this round or not (twice a match at most)",
]
TEAM = [
    "  One move per message, when it is your turn:",
    "    bid 5 3               at least five 3s among all hands",
    "    bid sum 9             when two single dice remain: the two add up to at least 9",
    "    liar                  challenge the last bid (also challenge, dudo)",
    "  Ones are not wild. Before your bid or challenge, once a turn, on a line of its own:",
    "    reveal 2 reroll       reveal the die at position 2 of the player you watch, reroll",
    "                          their other dice that nobody revealed or learnt",
    "    reveal 2 learn ann 4  reveal that die, and learn ann's die at position 4 in secret",
]


@pytest.fixture(autouse=True)
def frozen(time_machine: TimeMachineFixture, now: datetime) -> None:
    time_machine.move_to(now, tick=False)


def how_to_order(email: OutboundEmail) -> list[str]:
    lines = email.text.splitlines()
    start = lines.index("HOW TO ORDER") + 1
    return lines[start : lines.index("", start)]


def page_help(game: Game, position: int, now: datetime) -> list[str]:
    """The typed-order help of the seat's page, as text lines (one per row or paragraph)."""
    seat = Seat.objects.get(game=game, position=position)
    client = Client()
    assert client.post(f"/p/{access.mint([seat], now=now)[position]}/").status_code == 302
    html = client.get(seat_page(game, position)).content.decode()
    form = re.search(r'<form method="post" action="" id="text-form">(.*?)</form>', html, re.S)
    assert form is not None
    rows = re.findall(r"<(?:tr|p)[^>]*>(.*?)</(?:tr|p)>", form[1], re.S)
    return [" ".join(unescape(re.sub(r"<[^>]+>", " ", row)).split()) for row in rows]


@pytest.mark.parametrize(
    ("options", "players", "expected"),
    [
        ({}, 3, CLASSIC),
        ({"calza": True, "wild_ones": False, "palifico": False}, 3, CLASSIC_SPOT_NO_WILDS),
        ({"profile": "genius_dm"}, 2, DEATH_MATCH),
        (
            {"profile": "genius_dm", "revelation": True, "cheat": True, "mulligan": True},
            2,
            DEATH_MATCH_ANOMALIES,
        ),
        ({"profile": "genius_team"}, 4, TEAM),
    ],
    ids=["classic", "classic-spot", "death-match", "death-match-anomalies", "team"],
)
def test_the_reports_how_to_order_shows_only_the_profile_in_play(
    now: datetime, options: dict[str, Any], players: int, expected: list[str]
) -> None:
    game = started_game("liars-dice", now=now, players=players, options=options)
    report = OutboundEmail.objects.get(dedupe_key=f"report:{game.pk}:1:0")
    assert how_to_order(report) == expected


def test_the_invitation_shows_the_profile_in_play(now: datetime) -> None:
    game = new_game("liars-dice", players=2, options={"profile": "genius_dm"})
    postal.invite(game.pk, now=now)
    invitation = OutboundEmail.objects.filter(game=game, to="ann@example.org").get()
    lines = invitation.text.splitlines()
    start = lines.index(DEATH_MATCH[0])
    assert lines[start : start + len(DEATH_MATCH)] == DEATH_MATCH


def test_the_seat_page_help_shows_only_the_classic_orders(now: datetime) -> None:
    game = started_game("liars-dice", now=now, players=3)
    assert page_help(game, 0, now) == [
        "One move per message, when it is your turn:",
        "bid 5 3 at least five 3s among all hands",
        "liar challenge the last bid (also challenge , dudo )",
        "Ones are wild: they count as every face, and a round may not open on ones.",
        "Palifico round: ones are not wild and every bid keeps the opening face.",
    ]


def test_the_seat_page_help_of_the_death_match_says_show_names_a_position(
    now: datetime,
) -> None:
    game = started_game(
        "liars-dice", now=now, players=2, options={"profile": "genius_dm", "revelation": True}
    )
    assert page_help(game, 0, now) == [
        "One move per message, when it is your turn:",
        "bid 5 3 at least five 3s in both hands together",
        "bid 5 3 show 2 the same bid, and your opponent sees your die at position 2 (the "
        "second die of your cup as listed: 2 is a position, not a face)",
        "liar challenge the last bid (also challenge , dudo )",
        "Ones are not wild. A bid must show one of your unshown dice while more than three "
        "are unshown, and may show none after that.",
    ]


# --- the Death Match's bid menu ----------------------------------------------------------------


def browser(game: Game, position: int, now: datetime) -> Client:
    seat = Seat.objects.get(game=game, position=position)
    client = Client()
    assert client.post(f"/p/{access.mint([seat], now=now)[position]}/").status_code == 302
    return client


def options_of(html: str, name: str) -> list[str]:
    select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', html, re.S)
    assert select is not None, name
    return re.findall(r'<option value="([^"]*)"', select[1])


def labels_of(html: str, name: str) -> list[str]:
    select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', html, re.S)
    assert select is not None, name
    return re.findall(r"<option[^>]*>([^<]*)</option>", select[1])


def test_the_death_match_offers_every_opening_bid(now: datetime) -> None:
    game = started_game("liars-dice", now=now, players=2, options={"profile": "genius_dm"})
    html = browser(game, 0, now).get(seat_page(game, 0)).content.decode()
    # Eight dice in play, literal faces: any quantity up to 8 of any face, ones included.
    assert options_of(html, "quantity") == [str(quantity) for quantity in range(1, 9)]
    assert re.findall(r'<input type="radio" name="face" value="(\d)"', html) == [
        "1",
        "2",
        "3",
        "4",
        "5",
        "6",
    ]
    assert 'name="show"' not in html


def test_the_board_counts_one_die_as_a_die(now: datetime) -> None:
    game = started_game(
        "liars-dice", now=now, players=2, options={"profile": "genius_dm", "fresh_start": True}
    )
    lines = OutboundEmail.objects.get(dedupe_key=f"report:{game.pk}:1:0").text.splitlines()
    start_at = lines.index("  Dice in play:") + 1
    assert lines[start_at : start_at + 2] == [
        "    ann          1 die  <- on turn",
        "    bob          1 die",
    ]
