"""Legal moves of a classic Liar's Dice game, for the benchmarks that play long games or
series of bids through the postal layer. Pure: the engine only.

A round is played as ``bids`` raises, each the smallest legal one (bids on other faces
than ones first: with wild ones, ones are bid on at half the count), then the player on
turn calls liar and the dice decide who loses a die. Every move is a step: a bid opens
the next player's step, a challenge ends the round and rolls the next one.
"""

from __future__ import annotations

from typing import Any

from games.engines.base import GameError
from games.engines.liars_dice.rules import LiarsDiceEngine

ENGINE = LiarsDiceEngine()


class NoDice:
    """A bid draws nothing: only a challenge (which ends the round) rolls."""

    def draw(self, sides: int) -> int:
        raise RuntimeError("a bid drew a die")


def smallest_raise(state: Any, seat: int) -> str:
    """The smallest bid ``seat`` may make now, in the engine's words; RuntimeError when
    there is none."""
    bids = [text for text, _ in ENGINE.candidates(state, seat) if text.startswith("bid ")]
    for text in sorted(bids, key=lambda text: text.endswith(" 1")):
        try:
            ENGINE.submit(state, seat, ENGINE.parse(state, seat, text), NoDice())
        except GameError:
            continue
        return text
    raise RuntimeError(f"seat {seat} has no legal bid")


def next_move(state: Any, bids: int) -> tuple[int, str]:
    """(seat on turn, its move): the smallest raise until the round has ``bids`` bids, or
    no raise is left (few dice in play late in a long game), then a challenge."""
    seat = state.turn
    if len(state.bids) >= bids:
        return seat, "liar"
    try:
        return seat, smallest_raise(state, seat)
    except RuntimeError:
        if not state.bids:
            raise
        return seat, "liar"


def bid_series(state: Any, count: int) -> list[tuple[int, str]]:
    """``count`` bids in a row from ``state`` (each the smallest raise, by the seat on
    turn), as (seat, bid): a series that never challenges, so no die is drawn and every
    bid opens the next player's step."""
    series = []
    for _ in range(count):
        seat, text = state.turn, smallest_raise(state, state.turn)
        state, _ = ENGINE.submit(state, seat, ENGINE.parse(state, seat, text), NoDice())
        series.append((seat, text))
    return series
