"""The game's row locked, as every change to a game begins, and what is read under that
lock: a seat of the game, its open step."""

from __future__ import annotations

from django.utils.translation import gettext

from games.models import Game, Seat, Step
from games.postal.errors import OrderRejected, PostalError


def locked(game_id: int) -> Game:
    """The game, its row locked until the transaction ends: every change to a game holds
    this lock, so none slips in between what the change reads and what it writes."""
    return Game.objects.select_for_update().get(pk=game_id)


def open_step_of(game: Game) -> Step:
    """The game's current step if it is open; PostalError otherwise."""
    step = game.steps.filter(number=game.step_number, status=Step.Status.OPEN).first()
    if step is None:
        raise PostalError("the game has no open step")
    return step


def seat_at(game: Game, position: int) -> Seat:
    """The game's seat at ``position``; OrderRejected if there is none."""
    try:
        return game.seats.get(position=position)
    except Seat.DoesNotExist:
        raise OrderRejected(gettext("there is no such seat in this game")) from None
