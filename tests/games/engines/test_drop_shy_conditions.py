"""Drop-Shy conditional orders (games/engines/drop_shy/conditions.py): cells named best first
for the die a player will play, checked when written and decided by the rules when the
player's turn comes."""

from __future__ import annotations

import pytest

from games.engines.base import OrderError, Verdict
from games.engines.dice import ScriptedDice
from games.engines.drop_shy import conditions
from games.engines.drop_shy.rules import DropShyEngine, DropShyState

engine = DropShyEngine()


def _game() -> DropShyState:
    # Instigator 4; ann's line 3 1; bob's line 5 2 (rules/drop-shy.md, section 8's example).
    state, _ = engine.start(
        engine.options({"dice_per_player": 2}), ["ann", "bob"], ScriptedDice([4, 3, 1, 5, 2])
    )
    return state


def _send(state: DropShyState, seat: int, text: str) -> DropShyState:
    after, _ = engine.submit(state, seat, engine.parse(state, seat, text), ScriptedDice([]))
    return after


def test_the_first_legal_cell_plays_when_the_turn_comes() -> None:
    state = _game()
    data = conditions.parse(state, 1, "place 1 0 or 0 1 or -1 0")
    assert data == {
        "line": [5, 2],
        "free": None,
        "then": {"take": None, "face": 5, "cells": [[1, 0], [0, 1], [-1, 0]]},
        "else": None,
    }
    assert conditions.words(data) == "place 1 0 or 0 1 or -1 0"
    assert conditions.play(state, 1, data) == Verdict("wait")
    # ann's 3 takes (1,0): bob's 5 may not touch it there, so (0,1) plays.
    after = _send(state, 0, "place 1 0")
    assert conditions.play(after, 1, data) == Verdict("play", order="place 0 1")


def test_if_a_cell_is_free_else_other_cells_and_none_legal_disarms() -> None:
    state = _game()
    data = conditions.parse(state, 1, "if (1,0) is free: place 1 0; else: place 2 0")
    assert conditions.words(data) == "if 1 0 is free: place 1 0; else: place 2 0"
    after = _send(state, 0, "place 1 0")
    # (1,0) was taken: the else, whose (2,0) touches the 3 with a 5: nothing legal.
    assert conditions.play(after, 1, data) == Verdict(
        "disarm", reason="none of its cells is legal for your 5 now: (2,0)"
    )
    free = conditions.parse(state, 1, "if 1 0 is free: place 1 0")
    elsewhere = _send(state, 0, "place -1 0")
    assert conditions.play(elsewhere, 1, free) == Verdict("play", order="place 1 0")


@pytest.mark.parametrize(
    ("seat", "text", "message"),
    [
        (0, "place 1 0", "it is your turn now: send your order itself"),
        (1, "put it at 1 0", "place: write place x y, or place x y or x y, e.g. place 1 0 or -1 0"),
        (1, "place 1 0; place 2 0", "write it as: " + conditions.SYNTAX),
    ],
)
def test_a_conditional_order_the_rules_refuse_says_why(seat: int, text: str, message: str) -> None:
    with pytest.raises(OrderError) as refused:
        conditions.parse(_game(), seat, text)
    assert refused.value.message == message


def test_in_two_candidate_mode_it_names_the_die_it_takes() -> None:
    # Instigator 3; ann's line 4/9 2/5 (face/depth); bob's 2/7 4/1: bob's closest is his 4.
    dice = ScriptedDice([3, 4, 9, 2, 5, 2, 7, 4, 1])
    options = engine.options({"dice_per_player": 2, "selection": "two_candidate"})
    state, _ = engine.start(options, ["ann", "bob"], dice)
    with pytest.raises(OrderError) as refused:
        conditions.parse(state, 1, "place 1 0")
    assert refused.value.message == (
        "choose your die first: take rightmost or take closest, then place x y"
    )
    data = conditions.parse(state, 1, "take closest place 1 0 or 0 1")
    assert conditions.words(data) == "take closest place 1 0 or 0 1"
    # ann's 4 goes to (0,1): bob's closest die, a 4, may not touch it; (1,0) it may.
    after = _send(state, 0, "take rightmost place 0 1")
    assert conditions.play(after, 1, data) == Verdict("play", order="take closest place 1 0")
