"""Dice Survivor conditional orders (games/engines/dice_survivor/conditions.py): the answer to
the rematch question, left before it is asked, played by the rules when the question comes in
the turn it was written for."""

from __future__ import annotations

import pytest

from games.engines.base import OrderError, Verdict
from games.engines.dice_survivor import conditions
from tests.games.engines.test_dice_survivor import game, play


def test_it_answers_the_rematch_question_of_its_turn() -> None:
    state = game([5, 4, 5])
    data = conditions.parse(state, 1, "If challenged for 2 or more: rematch; else: accept")
    assert data == {"turn": 7, "stake": 2, "then": "rematch", "else": "accept"}
    assert conditions.words(data) == "if challenged for 2 or more: rematch; else: accept"
    assert conditions.play(state, 1, data) == Verdict("wait")
    # ann's single challenge, lost by bob (17 against 7): the else answers.
    asked, _ = play(state, "ann", "challenge bob", [12, 9, 3])
    assert conditions.play(asked, 1, data) == Verdict("play", order="accept")
    double, _ = play(state, "ann", "challenge bob double", [12, 9, 3])
    assert conditions.play(double, 1, data) == Verdict("play", order="rematch")


def test_a_turn_over_without_the_question_disarms_it() -> None:
    state = game([5, 4, 5])
    data = conditions.parse(state, 2, "if challenged: rematch")
    over, _ = play(state, "ann", "pass")
    assert conditions.play(over, 2, data) == Verdict(
        "disarm", reason="the turn it was written for ended without asking you"
    )


@pytest.mark.parametrize(
    ("seat", "text", "message"),
    [
        (0, "if challenged: rematch", "it is your turn now: send your order itself"),
        (1, "if challenged: fold", "then: answer rematch or accept"),
        (1, "rematch", "write it as: " + conditions.SYNTAX),
    ],
)
def test_a_conditional_order_the_rules_refuse_says_why(seat: int, text: str, message: str) -> None:
    with pytest.raises(OrderError) as refused:
        conditions.parse(game([5, 4, 5]), seat, text)
    assert refused.value.message == message


def test_no_rematch_left_is_said_when_written() -> None:
    with pytest.raises(OrderError) as refused:
        conditions.parse(game([5, 4, 5], rematches_used=(0, 3, 0)), 1, "if challenged: rematch")
    assert refused.value.message == "you have no rematch left"
