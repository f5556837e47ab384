"""Liar's Dice conditional orders (games/engines/liars_dice/conditions.py): read and checked
when written, and, when the seat's turn comes, played, left waiting or disarmed, by the
pure rules alone."""

from __future__ import annotations

import pytest

from games.engines.base import OrderError, Verdict
from games.engines.liars_dice import conditions
from games.engines.liars_dice.rules import LiarsDiceState
from tests.games.engines.test_liars_dice import ANN, BOB, CLASSIC_3, CY, dealt, send


def _round_one() -> LiarsDiceState:
    state, _ = dealt(CLASSIC_3, ["ann", "bob", "cy"], ANN + BOB + CY)
    return state


def test_a_conditional_order_is_read_in_the_games_words_and_said_back() -> None:
    state = _round_one()
    data = conditions.parse(state, 2, "If 4 5 or more: LIAR; else: raise 5")
    assert data == {
        "round": 1,
        "quantity": 4,
        "face": 5,
        "then": {"kind": "liar"},
        "else": {"kind": "raise", "face": 5},
    }
    assert conditions.words(data) == "if 4 5 or more: liar; else: raise 5"
    assert conditions.parse(state, 2, "if the bid reaches 4 x 5 or more, liar") == {
        **data,
        "else": None,
    }


@pytest.mark.parametrize(
    ("seat", "text", "message"),
    [
        (0, "if 4 5 or more: liar", "it is your turn now: send your order itself"),
        (2, "liar", "write it as: " + conditions.SYNTAX),
        (
            2,
            "if 4 9 or more: liar",
            "if <quantity> <face>: a quantity of at least 1 and a face from 1 to 6",
        ),
        (2, "if 4 5 or more: spot", "spot calls are not used in this game"),
        (
            2,
            "if 4 5 or more: fold",
            "then: 'fold' is not an order here: liar, spot, bid <q> <f> or raise <f>",
        ),
        (
            2,
            "if 4 5 or more: liar; bid 5 5",
            "the second part starts with else: " + conditions.SYNTAX,
        ),
    ],
)
def test_a_conditional_order_the_rules_refuse_says_why(seat: int, text: str, message: str) -> None:
    with pytest.raises(OrderError) as refused:
        conditions.parse(_round_one(), seat, text)
    assert refused.value.message == message


def test_it_plays_its_then_at_or_above_the_bid_and_its_else_below() -> None:
    state = _round_one()
    data = conditions.parse(state, 2, "if 4 5 or more: liar; else: raise 5")
    assert conditions.play(state, 2, data) == Verdict("wait")
    below, _ = send(state, 0, "bid 3 5")
    below, _ = send(below, 1, "bid 3 6")
    # 3 x 6 is below 4 x 5: the else, one more five than the rules now allow.
    assert conditions.play(below, 2, data) == Verdict("play", order="bid 4 5")
    above, _ = send(state, 0, "bid 3 5")
    above, _ = send(above, 1, "bid 4 5")
    assert conditions.play(above, 2, data) == Verdict("play", order="liar")
    higher, _ = send(state, 0, "bid 3 5")
    higher, _ = send(higher, 1, "bid 5 2")
    assert conditions.play(higher, 2, data) == Verdict("play", order="liar")


def test_without_an_else_it_is_disarmed_below_the_bid_and_a_new_round_disarms_it() -> None:
    state = _round_one()
    data = conditions.parse(state, 2, "if 4 5 or more: liar")
    below, _ = send(state, 0, "bid 2 5")
    below, _ = send(below, 1, "bid 3 5")
    assert conditions.play(below, 2, data) == Verdict(
        "disarm", reason="the bid was 3 x 5, below 4 x 5, and it said nothing else"
    )
    over, _ = send(state, 0, "bid 3 5")
    over, _ = send(over, 1, "liar", ANN[:4] + BOB + CY)
    assert over.round == 2
    assert conditions.play(over, 2, data) == Verdict(
        "disarm", reason="the round it was written for is over: new cups"
    )


def test_in_the_team_game_it_plays_its_bid_without_an_action() -> None:
    state, _ = dealt({"profile": "genius_team"}, ["ann", "bob", "cy", "dee"], [3] * 20)
    waiting = (state.turn + 1) % 4
    data = conditions.parse(state, waiting, "if 9 3 or more: liar; else: raise 3")
    state, _ = send(state, state.turn, "bid 2 3")
    # 2 x 3 is below 9 x 3: one more three, literal faces.
    assert conditions.play(state, waiting, data) == Verdict("play", order="bid 3 3")
    state, _ = send(state, waiting, "bid 3 3")
