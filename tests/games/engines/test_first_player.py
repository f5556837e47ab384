"""The First Player: the worked examples of rules/first-player.md section 10 (10.1 message by
message), the order examples and messages of section 8, options, NMR defaults, tiebreaks,
tokens, the reserve, gifts, players without dice, partial orders and the replay output."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, cast

import pytest

from games import records
from games.engines.base import Event, GameError, OptionsError, OrderError, Prompt, Standing
from games.engines.dice import NoDice, ScriptedDice
from games.engines.first_player.rules import (
    COMMIT,
    GIFTS,
    TIEBREAK,
    TOKENS,
    Cup,
    Die,
    FirstPlayerEngine,
    FirstPlayerOrder,
    FirstPlayerState,
    Line,
    Movement,
    rebuild,
    tracker,
)

engine = FirstPlayerEngine()


def begin(players: Sequence[str] = ("ann", "bob", "cy"), **options: Any) -> FirstPlayerState:
    state, _ = engine.start(engine.options(options), list(players), NoDice())
    return state


def rolling(players: Sequence[str] = ("ann", "bob", "cy"), **options: Any) -> FirstPlayerState:
    """A night whose first gift window has closed: COMMIT(1) is open."""
    state, _ = engine.resolve(begin(players, **options), NoDice())
    assert state.phase == COMMIT
    return state


def send(
    state: FirstPlayerState, name: str, text: str, dice: Sequence[int] = ()
) -> tuple[FirstPlayerState, list[Event]]:
    """Parse and submit ``text`` for ``name``, drawing exactly ``dice``."""
    seat = state.players.index(name)
    source = ScriptedDice(dice)
    order = engine.parse(state, seat, text)
    new, events = engine.submit(state, seat, order, source)
    assert source.position == len(dice)
    return new, events


def after(
    state: FirstPlayerState, name: str, text: str, dice: Sequence[int] = ()
) -> FirstPlayerState:
    return send(state, name, text, dice)[0]


def deadline(state: FirstPlayerState, dice: Sequence[int] = ()) -> FirstPlayerState:
    source = ScriptedDice(dice)
    new, _ = engine.resolve(state, source)
    assert source.position == len(dice)
    return new


def refused(state: FirstPlayerState, name: str, text: str, dice: Sequence[int] = ()) -> str:
    with pytest.raises(OrderError) as caught:
        send(state, name, text, dice)
    return caught.value.message


def counts(state: FirstPlayerState) -> dict[str, int]:
    return dict(zip(state.players, state.counts, strict=True))


def order_names(state: FirstPlayerState) -> list[str]:
    return [state.players[seat] for seat in state.history[-1].order]


def record(players: Sequence[str], rolls: Sequence[int], moves: list[Any], **options: Any) -> Any:
    return {
        "game": "first-player",
        "options": options,
        "players": list(players),
        "dice": list(rolls),
        "moves": moves,
    }


def one_each(state: FirstPlayerState, rolls: dict[str, int]) -> FirstPlayerState:
    """Every named participant rolls one die and arranges it (in the order given)."""
    for name, value in rolls.items():
        state = after(state, name, "roll 1\narrange desc", [value])
    return state


def roundtrip(state: FirstPlayerState) -> FirstPlayerState:
    restored: FirstPlayerState = engine.state_from_json(
        json.loads(json.dumps(engine.state_to_json(state)))
    )
    return restored


# --- section 10: comparing (P1-P3) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("ann", "bob", "winner"),
    [
        ([6, 2, 1], [5, 4, 4], "ann"),  # P1
        ([6, 5], [6, 5, 1], "bob"),  # P2: the missing third die counts 0
        ([6], [5, 6, 6], "ann"),  # P3: the first position decides
    ],
)
def test_p1_p3_sequences_compare_left_to_right(ann: list[int], bob: list[int], winner: str) -> None:
    state = rolling(("ann", "bob"), order_mode="free")
    arrange = " ".join(map(str, ann))
    state = after(state, "ann", f"roll {len(ann)}\narrange {arrange}", ann)
    arrange = " ".join(map(str, bob))
    state = after(state, "bob", f"roll {len(bob)}\narrange {arrange}", bob)
    assert state.finished
    assert order_names(state)[0] == winner


def test_p6_a_set_aside_die_is_back_next_round() -> None:
    state = rolling(order_mode="free", rounds=2)
    state = after(state, "ann", "roll 3", [2, 1, 1])
    state = after(state, "ann", "reroll set-aside 1", [6, 3])
    assert state.cups[0].hand == (6, 3)
    assert state.cups[0].set_aside == (1,)
    state = after(state, "ann", "arrange 6 3")
    assert state.cups[0].row == (Die(6), Die(3))
    state = after(state, "bob", "roll 2\narrange desc", [6, 4])
    state = after(state, "cy", "roll 1\narrange desc", [1])
    assert order_names(state) == ["bob", "ann", "cy"]
    assert counts(state) == {"ann": 3, "bob": 2, "cy": 4}
    state = deadline(state)
    assert engine.prompts(state)[0] == Prompt(0, "roll", "round 2: roll <n> (1 to 3) or roll all")


def test_p7_four_players_free_mode_with_tokens() -> None:
    state = rolling(
        ("A", "B", "C", "D"),
        order_mode="free",
        tokens=True,
        rounds=2,
        dice={"A": 3, "B": 3, "C": 2, "D": 3},
    )
    state = after(state, "A", "roll 3\narrange desc", [5, 5, 5])
    state = after(state, "B", "roll 3\narrange desc", [6, 1, 1])
    state = after(state, "C", "roll 2\narrange desc", [2, 1])
    state = after(state, "D", "roll all\narrange desc", [4, 4, 4])
    assert order_names(state) == ["B", "A", "D", "C"]
    assert counts(state) == {"A": 3, "B": 2, "C": 3, "D": 3}
    assert state.tokens == (0, 0, 0, 1)
    assert state.movements == (
        Movement(1, "winner to last", "B", "C", 1),
        Movement(1, "token award", None, "D", 1, "token"),
    )
    assert state.phase == GIFTS and state.round == 2


def test_p8_seating_order_runs_from_the_winner() -> None:
    seats = ("S1", "S2", "S3", "S4", "S5")
    state = rolling(seats)
    state = one_each(state, {"S1": 2, "S2": 3, "S3": 6, "S4": 1, "S5": 4})
    assert order_names(state) == ["S3", "S4", "S5", "S1", "S2"]
    assert counts(state) == {"S1": 3, "S2": 4, "S3": 2, "S4": 3, "S5": 3}
    assert engine.standings(state) == [
        Standing(2, 1, 2),
        Standing(3, 2, 3),
        Standing(4, 3, 3),
        Standing(0, 4, 3),
        Standing(1, 5, 4),
    ]


SIX = ("P1", "P2", "P3", "P4", "P5", "P6")
SIX_ROLLS = {"P1": 6, "P2": 5, "P3": 4, "P4": 3, "P5": 2, "P6": 1}


def test_p9_six_players_the_first_two_give_to_the_last_two() -> None:
    state = rolling(SIX, order_mode="free", tokens=True, rounds=2)
    state = one_each(state, SIX_ROLLS)
    assert order_names(state) == list(SIX)
    assert counts(state) == {"P1": 2, "P2": 2, "P3": 3, "P4": 3, "P5": 4, "P6": 4}
    assert state.tokens == (0, 0, 0, 1, 0, 0)


def test_f11_with_six_players_the_reserve_gives_and_the_second_keeps() -> None:
    state = rolling(SIX, order_mode="free", reserve=1)
    state = one_each(state, SIX_ROLLS)
    assert counts(state) == {"P1": 2, "P2": 3, "P3": 3, "P4": 3, "P5": 4, "P6": 4}
    assert state.reserve == 0
    assert state.movements[-2:] == (
        Movement(1, "winner to last", "P1", "P6", 1),
        Movement(1, "reserve to second-last", "reserve", "P5", 1),
    )


def test_f11_a_second_player_without_dice_gives_nothing() -> None:
    state = rolling(SIX, dice={"P2": 0})
    state = one_each(state, {"P1": 6, "P3": 1, "P4": 1, "P5": 1, "P6": 1})
    assert order_names(state) == list(SIX)
    assert counts(state) == {"P1": 2, "P2": 0, "P3": 3, "P4": 3, "P5": 3, "P6": 4}


def test_p12_a_winner_with_one_die_sits_out_next_round_and_comes_last() -> None:
    state = rolling(("Forud", "Eli", "Bita"), order_mode="free", rounds=2, dice={"Forud": 1})
    state = one_each(state, {"Forud": 6, "Eli": 5, "Bita": 4})
    assert counts(state) == {"Forud": 0, "Eli": 3, "Bita": 4}
    state = deadline(state)
    assert state.participants == (1, 2)
    assert [p.seat for p in engine.prompts(state)] == [1, 2]
    assert refused(state, "Forud", "roll 1") == (
        "no order is expected from you now: you have no dice this round"
    )
    state = one_each(state, {"Eli": 6, "Bita": 1})
    assert order_names(state) == ["Eli", "Bita", "Forud"]
    assert counts(state) == {"Forud": 1, "Eli": 2, "Bita": 4}


def test_p13_two_players_without_dice_order_themselves_with_temporary_dice() -> None:
    state = rolling(("A", "B", "X", "Y"), order_mode="free", dice={"X": 0, "Y": 0})
    state = after(state, "A", "roll 1\narrange desc", [6])
    state = after(state, "B", "roll 1\narrange desc", [5, 3, 5])
    assert order_names(state) == ["A", "B", "Y", "X"]
    assert counts(state) == {"A": 2, "B": 3, "X": 1, "Y": 0}
    assert state.history[-1].temporary == ((3, 5), (2, 3))
    assert state.movements[-5:] == (
        Movement(1, "temporary die", None, "Y", 1),
        Movement(1, "temporary die removed", "Y", None, 1),
        Movement(1, "temporary die", None, "X", 1),
        Movement(1, "temporary die removed", "X", None, 1),
        Movement(1, "winner to last", "A", "X", 1),
    )


def test_temporary_dice_ties_roll_again_and_lower_ties_among_themselves() -> None:
    state = rolling(("A", "X", "Y", "Z"), order_mode="free", dice={"X": 0, "Y": 0, "Z": 0})
    # X 4, Y 4, Z 4: the whole group again: X 5, Y 3, Z 3; X placed; Y and Z again: 1, 2
    state = after(state, "A", "roll 1\narrange desc", [6, 4, 4, 4, 5, 3, 3, 1, 2])
    assert order_names(state) == ["A", "X", "Z", "Y"]


def test_p14_a_token_placed_with_arrange_wins() -> None:
    state = rolling(("A", "B"), tokens=True)
    state = replace(state, tokens=(1, 0))
    assert refused(state, "A", "roll 3\narrange 6 4 4\ntoken 1", [4, 6, 4]).startswith(
        "line 3 (token 1): die 1 shows 6 and cannot go higher"
    )
    state = after(state, "A", "roll 3\narrange 5 4 4\ntoken 2", [4, 5, 4])
    assert state.cups[0].row == (Die(5), Die(4, True, True), Die(4))
    assert state.tokens == (1, 0)  # the public count moves at the reveal
    state, events = send(state, "B", "roll 3\narrange desc", [5, 5, 3])
    assert Event("round 1 reveal: A 5 4+1 4; B 5 5 3") in events
    assert order_names(state) == ["A", "B"]
    assert Movement(1, "token used", "A", None, 1, "token") in state.movements


# --- section 10: the reserve and the tracker (P15-P17) -------------------------------------


def test_p15_an_absent_member_moves_one_die_to_the_reserve() -> None:
    state = begin(("Forud", "Bita"), absent=["Eli"], dice={"Eli": 4})
    assert state.reserve == 1
    assert tracker(state)["Eli"] == {"count": 3, "note": "4(-1)"}
    assert state.movements[0] == Movement(0, "absence", "Eli", "reserve", 1)


def test_f13_an_absent_member_with_no_dice_moves_nothing() -> None:
    state = begin(("Forud", "Bita"), absent=["Eli"], dice={"Eli": 0, "Forud": 3, "Bita": 3})
    assert state.reserve == 0
    assert state.movements == ()
    assert tracker(state)["Eli"] == {"count": 0, "note": "0"}


def test_p16_a_gift_must_leave_the_giver_a_die() -> None:
    state = begin(("A", "B", "C"))
    state = after(state, "A", "give b 2 dice")
    assert counts(state) == {"A": 1, "B": 5, "C": 3}
    assert refused(state, "A", "give B 1 dice") == (
        "give B 1 die: gift refused: you would keep 0 dice (you hold 1)"
    )


def test_p17_the_tracker_example_totals_nine_in_every_column() -> None:
    players = ["Forud", "Eli", "Bita"]
    night1 = records.play(
        record(
            players,
            [3, 6, 1],
            [
                {"player": "Bita", "order": "give eli 2 dice"},
                {"deadline": True},
                {"player": "Forud", "order": "roll 1\narrange desc"},
                {"player": "Eli", "order": "roll 1\narrange desc"},
                {"player": "Bita", "order": "roll 1\narrange desc"},
            ],
            order_mode="free",
        )
    )
    night2 = records.play(
        record(
            players,
            [6, 5, 1],
            [
                {"player": "Forud", "order": "give bita 1 dice"},
                {"deadline": True},
                {"player": "Forud", "order": "roll 1\narrange desc"},
                {"player": "Eli", "order": "roll 1\narrange desc"},
                {"player": "Bita", "order": "roll 1\narrange desc"},
            ],
            order_mode="free",
            dice={"Forud": 3, "Eli": 4, "Bita": 2},
        )
    )
    night3 = records.play(
        record(
            ["Forud", "Bita"],
            [2, 5],
            [
                {"deadline": True},
                {"player": "Forud", "order": "roll 1\narrange desc"},
                {"player": "Bita", "order": "roll 1\narrange desc"},
            ],
            dice={"Forud": 1, "Eli": 4, "Bita": 4},
            absent=["Eli"],
        )
    )
    columns = [
        {name: cell["note"] for name, cell in night["tracker"].items()}
        | {"reserve": night["reserve"]}
        for night in (night1, night2, night3)
    ]
    assert columns == [
        {"Forud": "3", "Eli": "4", "Bita": "2", "reserve": 0},
        {"Forud": "1", "Eli": "4", "Bita": "4", "reserve": 0},
        {"Forud": "2", "Bita": "3", "Eli": "4(-1)", "reserve": 1},
    ]
    totals = [
        sum(cell["count"] for cell in night["tracker"].values()) + night["reserve"]
        for night in (night1, night2, night3)
    ]
    assert totals == [9, 9, 9]


# --- 10.1: one round, message by message ---------------------------------------------------

RECORD_10_1 = record(
    ["ann", "bob", "cy"],
    [6, 2, 3, 5, 5, 1, 4, 4, 4, 2, 1],
    [
        {"deadline": True},
        {"player": "cy", "order": "roll 3"},
        {"player": "ann", "order": "roll 3"},
        {"player": "ann", "order": "reroll set-aside 1"},
        {"player": "cy", "order": "arrange 6 3 2"},
        {"deadline": True},
    ],
    order_mode="free",
)


def drawn(replay: records.Replay) -> list[int]:
    return [draw.value for draw in cast(ScriptedDice, replay.dice).draws]


def private(replay: records.Replay, seat: int) -> list[str]:
    return [event.text for event in replay.log if event.to == (seat,)]


def test_10_1_one_round_message_by_message() -> None:
    replay = records.start(RECORD_10_1)
    assert [p.kind for p in replay.prompts] == ["gifts or ready"] * 3
    replay.deadline()  # the gift window closes with no gifts
    assert [(p.seat, p.kind) for p in replay.prompts] == [(0, "roll"), (1, "roll"), (2, "roll")]
    assert drawn(replay) == []

    replay.order(2, "roll 3")
    assert drawn(replay) == [6, 2, 3]
    assert private(replay, 2) == ["round 1: you roll 6 2 3"]
    you = engine.view(replay.state, 2)["you"]
    assert you["hand"] == [6, 2, 3]
    assert engine.view(replay.state, 0)["you"]["hand"] == []
    assert engine.view(replay.state, None)["players"][2]["row"] is None

    replay.order(0, "roll 3")
    assert drawn(replay)[3:] == [5, 5, 1]
    replay.order(0, "reroll set-aside 1")
    assert drawn(replay)[6:] == [4, 4]
    assert private(replay, 0) == [
        "round 1: you roll 5 5 1",
        "round 1: you set a 1 aside and reroll: 4 4",
    ]
    assert engine.view(replay.state, 0)["you"]["set_aside"] == [1]

    replay.order(2, "arrange 6 3 2")  # cy is done
    assert [(p.seat, p.kind) for p in replay.prompts] == [(0, "reroll or arrange"), (1, "roll")]

    replay.deadline()  # bob rolls 4 2 1; ann is arranged high to low
    assert drawn(replay) == [6, 2, 3, 5, 5, 1, 4, 4, 4, 2, 1]
    state = replay.state
    assert state.history[-1].rows == (
        (Die(4), Die(4)),
        (Die(4), Die(2), Die(1)),
        (Die(6), Die(3), Die(2)),
    )
    assert "round 1 reveal: ann 4 4; bob 4 2 1; cy 6 3 2" in [e.text for e in replay.log]
    assert order_names(state) == ["cy", "ann", "bob"]
    assert replay.prompts == []
    result = records.describe(replay)
    assert result["standings"] == [
        {"player": "cy", "place": 1, "score": 2},
        {"player": "ann", "place": 2, "score": 3},
        {"player": "bob", "place": 3, "score": 4},
    ]
    assert result["reserve"] == 0
    assert result["tracker"] == {
        "ann": {"count": 3, "note": "3"},
        "bob": {"count": 4, "note": "4"},
        "cy": {"count": 2, "note": "2"},
    }


def test_10_1_replays_as_a_record() -> None:
    result = records.play(RECORD_10_1)
    assert result["status"] == "finished"
    assert [s["player"] for s in result["standings"]] == ["cy", "ann", "bob"]


# --- section 8: order examples (ann rolled 6 2 2, tokens on, ann holds one token) ----------


@pytest.fixture
def rolled() -> FirstPlayerState:
    state = rolling(("ann", "bob"), tokens=True)
    state = replace(state, tokens=(1, 0))
    return after(state, "ann", "roll 3", [6, 2, 2])


def test_order_example_arrange_in_any_order(rolled: FirstPlayerState) -> None:
    assert after(rolled, "ann", "arrange 6 2 2").cups[0].row == (Die(6), Die(2), Die(2))
    assert after(rolled, "ann", "ARRANGE 2, 6, 2").cups[0].row == (Die(2), Die(6), Die(2))


def test_order_example_arrange_desc_then_token(rolled: FirstPlayerState) -> None:
    state = after(rolled, "ann", "arrange desc\ntoken 2")
    assert [die.shown for die in state.cups[0].row] == [6, 3, 2]
    assert state.cups[0].row[1] == Die(2, token=True, marked=True)
    assert engine.view(state, 0)["you"]["tokens_left"] == 0
    assert engine.view(state, 1)["players"][0]["tokens"] == 1


def test_order_example_reroll_two_dice(rolled: FirstPlayerState) -> None:
    state = after(rolled, "ann", "reroll set-aside 2", [5, 1])
    assert state.cups[0].hand == (5, 1)
    assert state.cups[0].set_aside == (2,)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("reroll set-aside 5", "reroll set-aside 5: you hold no 5 (your dice: 6 2 2)"),
        ("arrange 6 2", "arrange 6 2: arrange must use exactly your dice: 6 2 2"),
        ("arrange desc\ntoken 1", "line 2 (token 1): die 1 shows 6 and cannot go higher"),
        ("roll 2", "roll 2: you have already rolled"),
        ("give bob 1 dice", "give bob 1 die: gifts are closed until this round is resolved"),
    ],
)
def test_order_examples_rejected(rolled: FirstPlayerState, text: str, message: str) -> None:
    seat = 0
    with pytest.raises(OrderError) as caught:
        engine.parse(rolled, seat, text)
    assert caught.value.message == message
    assert caught.value.applied is None


# --- section 8: typical error messages -----------------------------------------------------


def test_messages_in_the_gift_window() -> None:
    state = begin()
    assert refused(state, "ann", "give bob 3 dice") == (
        "give bob 3 dice: gift refused: you would keep 0 dice (you hold 3)"
    )
    assert refused(state, "ann", "roll 3") == (
        "roll 3: rolling has not started: the gift window is open; send ready to close it sooner"
    )
    assert (
        refused(state, "ann", "give ann 1 dice") == "give ann 1 die: a gift goes to another player"
    )
    assert refused(state, "ann", "give dee 1 dice") == (
        "give dee 1 dice: dee is not a player of this game (players: ann, bob, cy)"
    )
    assert (
        refused(state, "ann", "give bob 0 dice") == "give bob 0 dice: a gift needs at least 1 die"
    )
    assert refused(state, "ann", "give bob 1 token") == (
        "give bob 1 token: tokens are not in play in this game"
    )


def test_messages_while_rolling() -> None:
    state = rolling()
    assert refused(state, "ann", "roll 4") == "roll 4: you own 3 dice: roll 1 to 3"
    assert refused(state, "ann", "arrange desc") == (
        "arrange desc: you have not rolled yet: roll <n> first"
    )
    state = after(state, "ann", "roll 3", [6, 2, 1])
    assert refused(state, "ann", "reroll set-aside 5") == (
        "reroll set-aside 5: you hold no 5 (your dice: 6 2 1)"
    )
    assert refused(state, "ann", "arrange 6 6 1") == (
        "arrange 6 6 1: arrange must use exactly your dice: 6 2 1"
    )
    assert refused(state, "ann", "token 1") == "token 1: tokens are not in play in this game"
    one = after(after(state, "ann", "reroll set-aside 6", [3, 3]), "ann", "reroll set-aside 3", [5])
    assert refused(one, "ann", "reroll set-aside 5") == (
        "reroll set-aside 5: you need at least 2 dice in hand to set one aside"
    )
    done = after(state, "ann", "arrange desc")
    assert refused(done, "ann", "arrange desc") == (
        "no order is expected from you now: you have arranged; the reveal comes when everyone has"
    )


def test_messages_about_tokens() -> None:
    state = replace(rolling(("ann", "bob"), tokens=True), tokens=(2, 1))
    state = after(state, "ann", "roll 3\narrange 6 4 3\ntoken 2", [6, 4, 3])
    assert refused(state, "ann", "token 1") == "token 1: die 1 shows 6 and cannot go higher"
    assert refused(state, "ann", "token 2") == "token 2: die 2 already has a token this round"
    assert refused(state, "ann", "token 4") == "token 4: there is no die 4: your row has 3 dice"
    assert refused(state, "ann", "token none") == "token none: token none is only for token windows"
    state = after(state, "ann", "token 3")
    assert refused(state, "ann", "token 3") == "token 3: die 3 already has a token this round"
    bob = after(state, "bob", "roll 1", [2])
    assert refused(replace(bob, tokens=(2, 0)), "bob", "arrange 2\ntoken 1") == (
        "line 2 (token 1): you hold no token"
    )


def test_an_order_from_a_player_who_owes_none_is_refused() -> None:
    state = rolling(("ann", "bob", "cy"), dice={"cy": 0})
    assert refused(state, "cy", "roll 1") == (
        "no order is expected from you now: you have no dice this round"
    )
    finished = one_each(state, {"ann": 6, "bob": 1})
    assert refused(finished, "ann", "ready") == "the night is over; no order is expected from you"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the order is empty;"),
        ("dance", "dance: unknown order;"),
        ("roll", "roll: write roll <n> or roll all"),
        ("roll three", "roll three: 'three' is not a number of dice"),
        ("reroll 3", "reroll 3: write reroll set-aside <value>"),
        ("reroll set-aside 7", "reroll set-aside 7: '7' is not a die value 1-6"),
        ("arrange", "arrange: write arrange <values> or arrange desc"),
        ("arrange 6 0 1", "arrange 6 0 1: '0' is not a die value 1-6"),
        ("token", "token: write token <position> ... or token none"),
        ("token 0", "token 0: '0' is not a die position (1 = leftmost)"),
        ("roll 1\nready now", "line 2 (ready now): ready takes nothing after it"),
    ],
)
def test_parse_errors_name_the_line(text: str, message: str) -> None:
    state = rolling(("ann", "bob"))
    with pytest.raises(OrderError) as caught:
        engine.parse(state, 0, text)
    assert caught.value.message.startswith(message)


def test_numbers_in_other_digits_than_0_to_9_are_refused() -> None:
    gifts = begin()
    assert refused(gifts, "ann", "give bob ² dice") == (
        "give bob ² dice: '²' is not a number of dice; write it in the digits 0-9"
    )
    state = rolling()
    assert refused(state, "ann", "roll ²") == (
        "roll ²: '²' is not a number of dice; write it in the digits 0-9"
    )
    assert refused(state, "ann", "roll ٣") == (
        "roll ٣: '٣' is not a number of dice; write it in the digits 0-9"
    )
    assert refused(state, "ann", "arrange ² 1 1") == "arrange ² 1 1: '²' is not a die value 1-6"
    six = "\N{FULLWIDTH DIGIT SIX}"
    assert refused(state, "ann", f"roll 3\nreroll set-aside {six}") == (
        f"line 2 (reroll set-aside {six}): '{six}' is not a die value 1-6"
    )
    tokens = rolling(tokens=True)
    assert refused(tokens, "ann", "roll 3\narrange desc\ntoken ²") == (
        "line 3 (token ²): '²' is not a die position (1 = leftmost)"
    )


def test_give_syntax_and_canonical_text() -> None:
    state = replace(begin(("Ann", "Mary Jo"), tokens=True), tokens=(2, 0))
    order = engine.parse(state, 0, "GIVE mary  jo 1 die\n> quoted\ngive Mary Jo 2 tokens\nready")
    assert order == FirstPlayerOrder(
        (
            Line("give", seat=1, count=1, unit="dice"),
            Line("give", seat=1, count=2, unit="token"),
            Line("ready"),
        )
    )
    assert engine.canonical(state, 0, order) == "give Mary Jo 1 die\ngive Mary Jo 2 tokens\nready"
    assert engine.parse(state, 0, engine.canonical(state, 0, order)) == order
    order = engine.parse(rolling(("ann", "bob")), 0, "roll all\narrange desc")
    assert engine.canonical(state, 0, order) == "roll all\narrange desc"


# --- partial orders: roll lines stand when a later line fails -------------------------------


def test_a_roll_stands_when_a_later_line_fails_on_the_dice() -> None:
    state = rolling(("ann", "bob"))
    seat = 0
    order = engine.parse(state, seat, "roll 3\narrange 6 6 6")  # parse cannot know the dice
    with pytest.raises(OrderError) as caught:
        engine.submit(state, seat, order, ScriptedDice([1, 2, 3]))
    assert caught.value.message == (
        "line 2 (arrange 6 6 6): arrange must use exactly your dice: 1 2 3 "
        "(the lines before it stand: your dice were rolled)"
    )
    assert caught.value.applied is not None
    partial, events = caught.value.applied
    assert partial.cups[0] == Cup(rolls=1, hand=(1, 2, 3))
    assert events[0] == Event("round 1: you roll 1 2 3", to=(0,))


def test_parse_refuses_what_it_can_before_any_die_is_drawn() -> None:
    state = rolling(("ann", "bob"))
    with pytest.raises(OrderError) as caught:
        engine.parse(state, 0, "roll 2\narrange 6 5 4")
    assert caught.value.message == (
        "line 2 (arrange 6 5 4): arrange must use exactly your dice: the 2 you will hold"
    )
    with pytest.raises(OrderError) as caught:
        engine.parse(state, 0, "roll 1\nreroll set-aside 4")
    assert caught.value.message.startswith("line 2 (reroll set-aside 4): you need at least 2 dice")


def test_a_replay_keeps_the_roll_and_stops_with_exit_2() -> None:
    bad = record(
        ["ann", "bob"],
        [1, 2, 3],
        [{"deadline": True}, {"player": "ann", "order": "roll 3\narrange 6 6 6"}],
    )
    with pytest.raises(records.RecordError) as caught:
        records.play(bad)
    assert caught.value.status == 2
    assert caught.value.message.startswith("move 2 (ann): line 2 (arrange 6 6 6): arrange must use")
    replay = records.start(bad)
    replay.deadline()
    with pytest.raises(OrderError):
        replay.order(0, "roll 3\narrange 6 6 6")
    assert replay.state.cups[0].hand == (1, 2, 3)
    assert [(p.seat, p.kind) for p in replay.prompts] == [(0, "reroll or arrange"), (1, "roll")]


# --- gifts (F-17, F-18) --------------------------------------------------------------------


def test_gifts_change_counts_at_once_and_ready_closes_the_window() -> None:
    state = begin(("ann", "bob"), tokens=True)
    state = replace(state, tokens=(2, 0))
    before = engine.prompts(state)
    state = after(state, "ann", "give bob 1 dice\ngive bob 1 token")
    assert engine.prompts(state) != before
    assert counts(state) == {"ann": 2, "bob": 4}
    assert state.tokens == (1, 1)
    state = after(state, "ann", "ready")
    assert engine.prompts(state)[0] == Prompt(
        0,
        "ready",
        "round 1 gifts: you are ready (you hold 2 dice and 1 token); "
        "rolling starts when everyone is ready",
    )
    assert after(state, "ann", "ready") == state  # a second ready changes nothing
    assert refused(state, "ann", "give bob 1 dice") == (
        "give bob 1 die: you have sent ready: no more gifts from you this round"
    )
    assert refused(state, "bob", "give ann 2 tokens") == (
        "give ann 2 tokens: gift refused: you hold 1 token, not 2"
    )
    state = after(state, "bob", "ready")
    assert state.phase == COMMIT


def test_a_gift_is_reported_with_the_word_its_count_takes() -> None:
    state = replace(begin(("ann", "bob"), tokens=True), tokens=(2, 0))
    _, events = send(state, "ann", "give bob 1 dice\ngive bob 2 token")
    assert [event.text for event in events] == [
        "round 1: ann gives bob 1 die",
        "round 1: ann gives bob 2 tokens",
    ]
    _, events = send(state, "ann", "give bob 2 die\ngive bob 1 tokens")
    assert [event.text for event in events] == [
        "round 1: ann gives bob 2 dice",
        "round 1: ann gives bob 1 token",
    ]


def test_a_message_with_a_bad_gift_is_refused_as_a_whole() -> None:
    state = begin(("ann", "bob"))
    assert refused(state, "ann", "give bob 1 dice\ngive bob 2 dice") == (
        "line 2 (give bob 2 dice): gift refused: you would keep 0 dice (you hold 2)"
    )


def test_6_1_a_player_without_dice_who_receives_a_gift_takes_part() -> None:
    state = begin(("ann", "bob"), dice={"bob": 0})
    state = after(state, "ann", "give bob 1 dice")
    state = deadline(state)
    assert state.participants == (0, 1)


# --- tiebreaks (RP-5, RP-6, F-3, F-4) ------------------------------------------------------


def test_rp5_a_full_tie_rolls_the_last_die_until_one_is_highest() -> None:
    state = rolling(("ann", "bob"))
    state = after(state, "ann", "roll 2\narrange desc", [5, 5])
    state, events = send(state, "bob", "roll 2\narrange desc", [5, 5, 3, 3, 2, 4])
    assert [e.text for e in events if "tiebreak" in e.text] == [
        "round 1 tiebreak roll 1: ann 3 (5 3); bob 3 (5 3)",
        "round 1 tiebreak roll 2: ann 2 (5 2); bob 4 (5 4)",
    ]
    assert order_names(state) == ["bob", "ann"]


def test_f3_when_the_highest_is_still_shared_the_whole_group_rolls_again() -> None:
    state = rolling(("A", "B", "C"), order_mode="free")
    state = one_each(state, {"A": 4, "B": 4})
    # C ties too: A 6, B 6, C 1, then the whole group again: A 2, B 3, C 5
    state = after(state, "C", "roll 1\narrange desc", [4, 6, 6, 1, 2, 3, 5])
    assert order_names(state) == ["C", "B", "A"]


def test_6_1_places_after_a_tiebreak_follow_the_dice_as_they_stand() -> None:
    state = rolling(("A", "B", "C"), order_mode="free")
    state = after(state, "A", "roll 2\narrange desc", [5, 5])
    state = after(state, "B", "roll 2\narrange desc", [5, 5])
    state = after(state, "C", "roll 2\narrange 5 4", [5, 4, 6, 1])
    assert order_names(state) == ["A", "C", "B"]
    assert state.history[-1].rows[1] == (Die(5), Die(1))


def test_f4_identical_sequences_lower_down_tie_among_themselves() -> None:
    state = rolling(("A", "B", "C"), order_mode="free")
    state = one_each(state, {"A": 6, "B": 3})
    state = after(state, "C", "roll 1\narrange desc", [3, 2, 4])
    assert order_names(state) == ["A", "C", "B"]


def test_seating_mode_breaks_only_the_tie_for_first() -> None:
    state = rolling(("A", "B", "C"))
    state = one_each(state, {"A": 2, "B": 2})
    state = after(state, "C", "roll 1\narrange desc", [2, 1, 5, 1])
    assert order_names(state) == ["B", "C", "A"]


# --- token windows (F-9, F-19) -------------------------------------------------------------


def test_the_token_window_after_the_reveal_is_sealed_and_replaceable() -> None:
    state = replace(rolling(("ann", "bob"), tokens=True), tokens=(1, 1))
    state = after(state, "ann", "roll 2\narrange desc", [5, 4])
    state = after(state, "bob", "roll 2\narrange desc", [5, 4])
    assert state.phase == TOKENS
    prompts = engine.prompts(state)
    hint = "round 1 token window after the reveal: token <positions> or token none"
    assert prompts == [Prompt(0, "token", hint), Prompt(1, "token", hint)]
    state = after(state, "ann", "token 1")
    state = after(state, "ann", "token 2")  # replaces token 1
    assert engine.view(state, 0)["you"]["window_order"] == [2]
    assert "window_order" not in engine.view(state, 1)["players"][0]
    assert engine.view(state, 1)["you"]["window_order"] is None
    assert engine.prompts(state) == prompts
    assert engine.default(state, 1) == FirstPlayerOrder((Line("token"),))
    state = deadline(state)
    assert order_names(state) == ["ann", "bob"]
    assert state.history[-1].rows[0] == (Die(5), Die(4, True, True))


def test_f19_a_tiebreak_reroll_spends_the_token_and_opens_a_window() -> None:
    state = replace(rolling(("A", "B"), tokens=True), tokens=(2, 1))
    state = after(state, "A", "roll 2\narrange 5 4\ntoken 2", [5, 4])
    state = after(state, "B", "roll 2\narrange desc", [5, 5])
    assert state.phase == TOKENS  # A still holds one token, B one
    state = after(state, "A", "token none")
    state = after(state, "B", "token none")
    # 5 5 against 5 5: tiebreak roll 1 (A 3, B 3); token window for both
    state = deadline(state, [3, 3])
    assert state.phase == TIEBREAK
    assert state.cups[0].row == (Die(5), Die(3, token=False, marked=True))
    hint = "round 1 token window after tiebreak roll 1: token <positions> or token none"
    assert engine.prompts(state) == [Prompt(0, "token", hint), Prompt(1, "token", hint)]
    assert refused(state, "A", "token 2") == "token 2: die 2 already has a token this round"
    state = after(state, "A", "token 1")
    state = deadline(after(state, "B", "token none"))  # every owed order is in
    assert order_names(state) == ["A", "B"]
    assert state.history[-1].rows[0] == (Die(5, True, True), Die(3, False, True))


# --- RESOLVE: the reserve and tokens for 4-5 players (F-12) --------------------------------


FOUR = ("A", "B", "C", "D")


def test_f12_reserve_to_second_last_replaces_the_token() -> None:
    state = rolling(
        FOUR, order_mode="free", tokens=True, reserve_to_second_last=True, reserve=1, rounds=2
    )
    state = one_each(state, {"A": 6, "B": 5, "C": 4, "D": 3})
    assert counts(state) == {"A": 2, "B": 3, "C": 4, "D": 4}
    assert state.reserve == 0
    assert state.tokens == (0, 0, 0, 0)


def test_f12_with_an_empty_reserve_the_token_is_given() -> None:
    state = rolling(FOUR, order_mode="free", tokens=True, reserve_to_second_last=True, rounds=2)
    state = one_each(state, {"A": 6, "B": 5, "C": 4, "D": 3})
    assert counts(state) == {"A": 2, "B": 3, "C": 3, "D": 4}
    assert state.tokens == (0, 0, 1, 0)


def test_three_players_receive_no_token() -> None:
    state = rolling(order_mode="free", tokens=True, rounds=2)
    state = one_each(state, {"ann": 6, "bob": 5, "cy": 4})
    assert state.tokens == (0, 0, 0)


def test_tokens_are_discarded_at_the_end_of_the_night() -> None:
    state = rolling(FOUR, order_mode="free", tokens=True)
    state = one_each(state, {"A": 6, "B": 5, "C": 4, "D": 3})
    assert state.finished
    assert state.tokens == (0, 0, 0, 0)
    assert state.movements[-1] == Movement(1, "tokens discarded", "C", None, 1, "token")


# --- players with no dice in seating mode (4.5) ---------------------------------------------


def test_seating_a_player_without_dice_keeps_the_seat_and_can_stay_at_zero() -> None:
    state = rolling(("ann", "bob", "cy"), dice={"cy": 0})
    assert [p.seat for p in engine.prompts(state)] == [0, 1]
    state = one_each(state, {"ann": 1, "bob": 6})
    assert order_names(state) == ["bob", "cy", "ann"]
    assert counts(state) == {"ann": 4, "bob": 2, "cy": 0}


# --- NMR defaults --------------------------------------------------------------------------


def test_nmr_defaults_per_step() -> None:
    state = begin(("ann", "bob"), tokens=True)
    assert engine.canonical(state, 0, engine.default(state, 0)) == "ready"
    state = replace(deadline(state), tokens=(1, 0))
    assert engine.canonical(state, 0, engine.default(state, 0)) == "roll all\narrange desc"
    state = after(state, "ann", "roll 2", [3, 2])
    assert engine.canonical(state, 0, engine.default(state, 0)) == "arrange desc"
    state = after(state, "ann", "arrange desc")
    assert engine.default(state, 0) == FirstPlayerOrder()
    assert engine.prompts(state)[0] == Prompt(
        0, "token", "round 1: arranged; token <position> is possible until rolling closes"
    )


def test_the_commit_deadline_rolls_for_the_silent_in_seat_order() -> None:
    state = rolling(("ann", "bob", "cy"), order_mode="free", dice={"ann": 2, "bob": 1, "cy": 3})
    state = after(state, "bob", "roll 1", [1])
    state = deadline(state, [3, 5, 6, 2, 2])
    assert state.history[-1].rows == ((Die(5), Die(3)), (Die(1),), (Die(6), Die(2), Die(2)))
    assert [state.cups[s].defaulted for s in range(3)] == [True, True, True]
    assert order_names(state) == ["cy", "ann", "bob"]


def test_nobody_is_prompted_once_the_night_is_over() -> None:
    state = one_each(rolling(("ann", "bob")), {"ann": 6, "bob": 1})
    assert engine.prompts(state) == []
    with pytest.raises(GameError):
        engine.resolve(state, NoDice())
    with pytest.raises(OrderError):
        engine.default(state, 0)


# --- several rounds, host override (F-16) ---------------------------------------------------


def test_two_rounds_with_gifts_between_them() -> None:
    state = rolling(("ann", "bob"), order_mode="free", rounds=2)
    state = one_each(state, {"ann": 6, "bob": 1})
    assert state.phase == GIFTS and state.round == 2
    state = after(state, "bob", "give ann 3 dice")
    state = after(state, "ann", "ready")
    state = after(state, "bob", "ready")
    state = one_each(state, {"ann": 1, "bob": 6})
    assert counts(state) == {"ann": 6, "bob": 0}
    assert engine.standings(state) == [Standing(1, 1, 0), Standing(0, 2, 6)]


def test_f16_the_host_sets_the_actual_order_and_resolve_applies() -> None:
    state = begin()
    state, _ = engine.host_order(state, [2, 0, 1])
    assert order_names(state) == ["cy", "ann", "bob"]
    assert counts(state) == {"ann": 3, "bob": 4, "cy": 2}
    assert state.history[-1].host
    with pytest.raises(GameError):
        engine.host_order(begin(), [0, 0, 1])


# --- options -------------------------------------------------------------------------------


def test_options_defaults() -> None:
    options = engine.options({})
    assert options.as_dict() == {
        "order_mode": "seating",
        "rounds": 1,
        "tokens": False,
        "reserve_to_second_last": False,
        "dice": {},
        "reserve": 0,
        "absent": [],
        "campaign": True,
    }


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"colour": "red"}, "unknown option 'colour'"),
        ({"order_mode": "random"}, "option order_mode must be seating or free"),
        ({"rounds": 0}, "option rounds must be 1-10, not 0"),
        ({"rounds": 11}, "option rounds must be 1-10, not 11"),
        ({"rounds": "2"}, "option rounds must be a whole number 1-10"),
        ({"tokens": 1}, "option tokens must be true or false"),
        ({"reserve_to_second_last": "yes"}, "option reserve_to_second_last must be true or false"),
        ({"campaign": None}, "option campaign must be true or false"),
        ({"reserve": 101}, "option reserve must be 0-100, not 101"),
        ({"reserve": -1}, "option reserve must be 0-100, not -1"),
        ({"dice": {"ann": 31}}, "option dice of ann must be 0-30, not 31"),
        ({"dice": {"ann": True}}, "option dice of ann must be a whole number 0-30"),
        ({"dice": [3, 3]}, "option dice must map each member's name"),
        ({"dice": {"ann": 3, "ANN": 2}}, "option dice lists ANN twice"),
        ({"absent": "eli"}, "option absent must be a list"),
        ({"absent": ["eli", "Eli"]}, "option absent lists Eli twice"),
        ({"absent": [3]}, "option absent: 3 is not a member's name"),
    ],
)
def test_options_are_checked(options: dict[str, Any], message: str) -> None:
    with pytest.raises(OptionsError) as caught:
        engine.options(options)
    assert caught.value.message.startswith(message)


@pytest.mark.parametrize(
    ("players", "options", "message"),
    [
        (["ann"], {}, "The First Player takes 2 to 20 players, not 1"),
        (["ann", "bob"], {"absent": ["Bob"]}, "option absent: Bob is both absent and playing"),
        (["ann", "bob"], {"dice": {"eli": 2}}, "option dice: eli is neither a player nor absent"),
        (["ann", "bob"], {"dice": {"ann": 0, "bob": 0}}, "nobody holds a die"),
        (["ann", "Reserve"], {}, "the name reserve is kept"),
    ],
)
def test_a_night_that_cannot_start(
    players: list[str], options: dict[str, Any], message: str
) -> None:
    with pytest.raises(OptionsError) as caught:
        engine.start(engine.options(options), players, NoDice())
    assert caught.value.message.startswith(message)


def test_broken_and_illegal_records_exit_with_their_status() -> None:
    nobody = record(["ann", "bob"], [], [], dice={"ann": 0, "bob": 0})
    with pytest.raises(records.RecordError) as caught:
        records.play(nobody)
    assert caught.value.status == 3
    stranger = record(["ann", "bob"], [], [{"player": "eli", "order": "ready"}])
    with pytest.raises(records.RecordError) as caught:
        records.play(stranger)
    assert caught.value.status == 2


# --- movements, views, JSON ----------------------------------------------------------------


def test_the_counts_rebuild_from_the_movements() -> None:
    state = begin(("ann", "bob", "cy"), absent=["eli"], dice={"ann": 2, "eli": 5}, reserve=2)
    state = after(state, "bob", "give cy 2 dice")
    state = deadline(state)
    state = one_each(state, {"ann": 6, "bob": 2, "cy": 1})
    members = [*state.players, "eli"]
    rebuilt, reserve = rebuild(state.options, members, state.movements)
    assert rebuilt == {"ann": 1, "bob": 1, "cy": 6, "eli": 4}
    assert rebuilt == {name: cell["count"] for name, cell in tracker(state).items()}
    assert reserve == state.reserve == 3


def test_no_seat_sees_another_seats_roll_before_the_reveal() -> None:
    state = rolling(("ann", "bob"), tokens=True)
    state = replace(state, tokens=(1, 0))
    state, events = send(state, "ann", "roll 3\narrange desc\ntoken 2", [5, 3, 2])
    assert all(event.to in (None, (0,)) for event in events)
    assert [e.text for e in events if e.to is None] == [
        "round 1: ann has rolled",
        "round 1: ann has arranged",
    ]
    bob = engine.view(state, 1)
    assert bob["players"][0]["row"] is None
    assert bob["players"][0]["tokens"] == 1
    assert bob["you"]["hand"] == []
    assert "5 3" not in json.dumps(bob)
    assert engine.view(state, 0)["you"]["row"] == [
        {"value": 5, "token": False, "shown": 5},
        {"value": 3, "token": True, "shown": 4},
        {"value": 2, "token": False, "shown": 2},
    ]
    state = after(state, "bob", "roll 1\narrange desc", [1])
    assert engine.view(state, 1)["history"][0]["rows"]["ann"][1]["shown"] == 4


def test_state_json_round_trips_in_every_phase() -> None:
    state = replace(rolling(("ann", "bob"), tokens=True, absent=["eli"]), tokens=(1, 1))
    assert roundtrip(state) == state
    state = after(state, "ann", "roll 2\narrange desc\ntoken 2", [5, 4])
    assert roundtrip(state) == state
    state = after(state, "bob", "roll 2\narrange desc", [5, 5])
    assert state.phase == TOKENS
    assert roundtrip(state) == state
    json.dumps(engine.view(state, None))
    json.dumps(engine.view(state, 0))
