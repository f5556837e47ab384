"""What the database engine's and moderator.db.rows' tests share."""

from __future__ import annotations

import pytest

from games import postal
from games.models import Order, Step
from tests.factories import choice_game


@pytest.fixture
def step(now) -> Step:
    """The open first step of a started Choice game of three seats."""
    game = postal.start_game(choice_game(3).pk, now=now)
    return game.steps.get()


@pytest.fixture
def order(step) -> Order:
    """An order of seat 0 for ``step``, not written yet."""
    return Order(
        step=step,
        seat=step.game.seats.get(position=0),
        text="t",
        parsed={},
        canonical="c",
        source="web",
        received_at=step.opened_at,
    )
