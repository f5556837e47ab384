"""The factories hold no surprises: a game written directly by GameFactory is the game
postal.create_game makes of the same players, and started_game is create_game then
start_game with the seed every test shares."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from games import postal
from games.models import Game, Seat
from tests.factories import SEED, GameFactory, GMFactory, new_game, started_game

pytestmark = pytest.mark.django_db

# Each game's own: its row's id, public id and creation time, and its seats' ids.
OWN = {"id", "public_id", "created_at", "game"}


def columns(row: Game | Seat) -> dict[str, Any]:
    return {
        field.attname: getattr(row, field.attname)
        for field in row._meta.concrete_fields
        if field.name not in OWN
    }


def test_a_game_factory_row_is_what_create_game_makes_of_the_same_players() -> None:
    gm = GMFactory.create()
    players: list[str | postal.Player] = [
        "ann",
        postal.Player("bob", "bob@example.org", time_zone="Europe/Berlin"),
    ]
    written = GameFactory.create(gm=gm, seats=players)
    made = new_game(players=players, gm=gm)
    written.refresh_from_db()
    made.refresh_from_db()
    assert columns(written) == columns(made)
    assert [columns(seat) for seat in written.seats.order_by("position")] == [
        columns(seat) for seat in made.seats.order_by("position")
    ]


def test_a_started_game_is_step_one_of_the_shared_seed(now: datetime) -> None:
    game = started_game(now=now)
    assert (game.engine, game.title, game.status, game.seed) == (
        "choice",
        "Test Choice",
        Game.Status.RUNNING,
        SEED,
    )
    assert list(game.seats.values_list("name", "email")) == [
        ("ann", "ann@example.org"),
        ("bob", "bob@example.org"),
        ("cy", "cy@example.org"),
    ]
    assert list(game.steps.values_list("number", "opened_at")) == [(1, now)]
