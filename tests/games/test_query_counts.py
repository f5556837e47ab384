"""N+1 guards on the seat page and on the post that resolves a step: the page's queries
do not grow with the length of the game (its history is paged), and a resolving post's
do not grow with the seats it reports to."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from games import postal
from games.engines.choice.rules import ChoiceEngine
from games.models import Game, Order, Seat
from games.postal import access
from tests.factories import seat_page, started_game

pytestmark = pytest.mark.django_db

CHOICE = ChoiceEngine()
# A seat page: the seats of the browser with their games, the open step, a page of history
# (which holds the latest report's events), the order that counts, the game's seats with
# their players' absences now, the GM's log (its latest actions with their count), the
# latest messages the seat may read (with their count), what was decided for the seat
# (games.notify.ledger), and the page's pulse, the token its poll asks with
# (games.notify.live). The address's preferences are read by the seat's settings page, not
# here.
PAGE_QUERIES = 9
# The last order of a step with early processing on: the seat with its game locked and the
# open step (one statement), whether every seat answered, and the resolution (the seats
# with whether each answered, dice, events, the step closed, the next step, links, the
# outbox, the game's webhooks, the game).
RESOLVING_QUERIES = 16


def bids(count: int) -> list[str]:
    """``count`` raises in a row, each legal after the one before: 1 2, 1 3, ... 1 6, 2 2..."""
    return [f"bid {1 + number // 5} {2 + number % 5}" for number in range(count)]


def liars_game(steps: int, now: datetime) -> Game:
    """A classic Liar's Dice game of ann and bob played to step ``steps``, a bid a step."""
    game = started_game(
        "liars-dice",
        now=now - timedelta(minutes=steps),
        players=2,
        title=f"{steps} steps",
        options={"profile": "classic", "dice_per_player": 10},
    )
    for number, text in enumerate(bids(steps - 1), start=1):
        postal.accept_order(
            game_id=game.pk,
            position=(number - 1) % 2,
            text=text,
            source=Order.Source.WEB,
            now=now - timedelta(minutes=steps - number),
            step_number=number,
        )
    game.refresh_from_db()
    assert (game.step_number, game.status) == (steps, Game.Status.RUNNING)
    return game


def signed_in(game: Game, position: int, now: datetime, number: int) -> Client:
    client = Client(REMOTE_ADDR=f"10.31.0.{number}")
    seat = Seat.objects.get(game=game, position=position)
    token = access.mint([seat], now=now)[position]
    assert client.post(f"/p/{token}/").status_code == 302
    return client


def test_a_seat_page_makes_as_many_queries_at_step_100_as_at_step_10(
    now: datetime, django_assert_num_queries: Any
) -> None:
    for number, steps in enumerate((10, 100)):
        game = liars_game(steps, now)
        on_turn = (steps - 1) % 2  # ann opened; the seat that owes the next bid
        client = signed_in(game, on_turn, now, number)
        client.get(seat_page(game, on_turn))  # the CSRF cookie is set once
        with django_assert_num_queries(PAGE_QUERIES):
            page = client.get(seat_page(game, on_turn)).content.decode()
        assert 'id="menu-form"' in page
        older = f"Older reports, before postal turn {steps - 19}" if steps > 20 else None
        assert (older is None or older in page, "Older reports" in page) == (True, steps > 20)


@pytest.mark.parametrize("seats", [3, 8])
def test_the_post_that_resolves_a_step_makes_the_same_queries_for_3_and_8_seats(
    seats: int, now: datetime, django_assert_num_queries: Any
) -> None:
    game = started_game(now=now, players=seats)
    state = CHOICE.state_from_json(game.state)
    orders = [CHOICE.canonical(state, p, CHOICE.default(state, p)) for p in range(seats)]
    for position in range(seats - 1):
        postal.accept_order(
            game_id=game.pk,
            position=position,
            text=orders[position],
            source=Order.Source.WEB,
            now=now,
            step_number=1,
        )
    last = seats - 1
    client = signed_in(game, last, now, seats)
    form = {"step": "1", "seat": str(last), "entry": "text", "text": orders[last]}
    # SQLite (the embedded default) reads the seat and its step in two statements, not one
    # (postal._linked_seat_and_step).
    one_statement = connection.vendor == "postgresql"
    with django_assert_num_queries(RESOLVING_QUERIES + (0 if one_statement else 1)):
        response = client.post(seat_page(game, last), form)
    assert (response.status_code, response["Location"]) == (302, seat_page(game, last))
    game.refresh_from_db()
    assert game.step_number == 2
