"""Drop-Shy: the worked examples of rules/drop-shy.md (sections 8, 9, 9.1 and 9.2), the
options, the order parser and its messages, the NMR default, automatic turns, the turn cap,
the follow-up game, the view and the JSON round trip."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import pytest

from games import records
from games.engines.base import Event, GameError, OptionsError, OrderError, Prompt, Standing
from games.engines.dice import NoDice, ScriptedDice
from games.engines.drop_shy.rules import (
    Die,
    DropShyEngine,
    DropShyOptions,
    DropShyOrder,
    DropShyState,
    Placed,
    candidates,
    cell_problem,
    follow_up,
    grid_rows,
    legal_cells,
    parse_options,
)

engine = DropShyEngine()
STRICT = DropShyOptions()
TWO = DropShyOptions(selection="two_candidate")
TWO_OPTIONS: dict[str, object] = {"dice_per_player": 2, "selection": "two_candidate"}


def start(
    dice: Sequence[int], players: Sequence[str] = ("ann", "bob"), **options: object
) -> tuple[DropShyState, list[Event], ScriptedDice]:
    source = ScriptedDice(dice)
    state, events = engine.start(engine.options(options), list(players), source)
    return state, events, source


def order(state: DropShyState, seat: int, text: str, dice: Sequence[int] = ()) -> DropShyState:
    """Parse and submit ``text`` for ``seat``; every die the turn needs comes from ``dice``."""
    source = ScriptedDice(dice)
    state, _ = engine.submit(state, seat, engine.parse(state, seat, text), source)
    assert source.position == len(source.values)
    return state


def board_state(
    board: Mapping[tuple[int, int], int],
    lines: Sequence[Sequence[int | tuple[int, int]]],
    options: DropShyOptions = STRICT,
    current: int = 0,
) -> DropShyState:
    """A game in the middle: ``board`` maps cell -> face (the instigator at (0, 0) first);
    each line holds faces, or (face, depth) pairs in two-candidate mode."""

    def die(entry: int | tuple[int, int]) -> Die:
        return Die(*entry) if isinstance(entry, tuple) else Die(entry)

    placed = [Placed(0, 0, board[(0, 0)])] + [
        Placed(x, y, face, 0) for (x, y), face in board.items() if (x, y) != (0, 0)
    ]
    return DropShyState(
        options=options,
        players=("ann", "bob", "cy")[: len(lines)],
        board=tuple(placed),
        lines=tuple(tuple(die(entry) for entry in line) for line in lines),
        current=current,
    )


def grid(state: DropShyState) -> dict[tuple[int, int], int]:
    return {(placed.x, placed.y): placed.face for placed in state.board}


def faces(state: DropShyState, seat: int) -> list[int]:
    return [die.face for die in state.lines[seat]]


def rejected(state: DropShyState, seat: int, text: str) -> str:
    with pytest.raises(OrderError) as excinfo:
        order(state, seat, text)
    return excinfo.value.message


def standings(state: DropShyState) -> list[tuple[str, int]]:
    result = engine.standings(state)
    assert result is not None
    return [(state.players[s.seat], s.place) for s in result]


def roundtrip(state: DropShyState) -> DropShyState:
    restored: DropShyState = engine.state_from_json(
        json.loads(json.dumps(engine.state_to_json(state)))
    )
    return restored


# --- section 2: options --------------------------------------------------------------------


def test_options_default_to_the_table() -> None:
    assert parse_options({}) == DropShyOptions(
        dice_per_player=10,
        selection="strict_queue",
        auto_single=False,
        turn_cap=500,
        previous_winner=None,
        previous_loser=None,
    )


def test_options_take_every_value_of_the_table() -> None:
    options = parse_options(
        {
            "dice_per_player": 30,
            "selection": "two_candidate",
            "auto_single": True,
            "turn_cap": 5000,
            "previous_winner": "bob",
            "previous_loser": "ann",
        }
    )
    assert options == DropShyOptions(30, "two_candidate", True, 5000, "bob", "ann")
    assert parse_options({"dice_per_player": 1, "turn_cap": 50}) == DropShyOptions(
        dice_per_player=1, turn_cap=50
    )


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {"colour": "red"},
            "unknown option 'colour' (Drop-Shy options: dice_per_player, selection, "
            "auto_single, turn_cap, previous_winner, previous_loser)",
        ),
        ({"dice_per_player": 0}, "option dice_per_player must be 1-30, not 0"),
        ({"dice_per_player": 31}, "option dice_per_player must be 1-30, not 31"),
        (
            {"dice_per_player": "10"},
            "option dice_per_player must be a whole number 1-30, not '10'",
        ),
        (
            {"dice_per_player": True},
            "option dice_per_player must be a whole number 1-30, not True",
        ),
        ({"dice_per_player": 2.0}, "option dice_per_player must be a whole number 1-30, not 2.0"),
        (
            {"selection": "queue"},
            "option selection must be one of strict_queue, two_candidate, not 'queue'",
        ),
        ({"auto_single": "yes"}, "option auto_single must be true or false, not 'yes'"),
        ({"auto_single": 1}, "option auto_single must be true or false, not 1"),
        ({"turn_cap": 49}, "option turn_cap must be 50-5000, not 49"),
        ({"turn_cap": 5001}, "option turn_cap must be 50-5000, not 5001"),
        ({"previous_winner": 3}, "option previous_winner must be a player's name or null, not 3"),
        (
            {"previous_loser": " "},
            "option previous_loser must be a player's name or null, not ' '",
        ),
        (
            {"previous_winner": "Ann", "previous_loser": "ann"},
            "option previous_winner and previous_loser are both 'Ann'",
        ),
    ],
)
def test_bad_options_are_rejected(data: dict[str, object], expected: str) -> None:
    with pytest.raises(OptionsError) as excinfo:
        parse_options(data)
    assert excinfo.value.message == expected


def test_fewer_than_two_players_cannot_start() -> None:
    with pytest.raises(OptionsError) as excinfo:
        engine.start(STRICT, ["ann"], NoDice())
    assert excinfo.value.message == "Drop-Shy takes 2 to 20 players, not 1"


def test_a_record_with_a_bad_option_or_one_player_is_broken() -> None:
    base = {"game": "drop-shy", "players": ["ann", "bob"], "dice": [4, 3, 1]}
    for record in (
        {**base, "options": {"turn_cap": 10}},
        {**base, "options": {"variant": "x"}},
        {**base, "players": ["ann"]},
    ):
        with pytest.raises(records.RecordError) as excinfo:
            records.play(record)
        assert excinfo.value.status == records.BROKEN_RECORD


# --- section 3 and 9: the neighbour rule ---------------------------------------------------


def test_s1_a_3_may_go_on_all_four_sides_of_a_4() -> None:
    assert sorted(legal_cells({(0, 0): 4}, 3)) == [(-1, 0), (0, -1), (0, 1), (1, 0)]


def test_s2_a_6_never_fits_next_to_a_4() -> None:
    assert legal_cells({(0, 0): 4}, 6) == []


def test_s2_the_6_fails_is_rerolled_and_goes_to_the_back() -> None:
    state, events, _ = start([4, 6, 3, 5, 5, 2], dice_per_player=2)
    assert faces(state, 0) == [3, 2]
    assert state.current == 1
    assert events[-1] == Event(
        "turn 1: ann's 6 cannot be placed: it is rerolled and goes to the back of ann's line as a 2"
    )


def test_s3_a_5_may_not_touch_the_3() -> None:
    assert sorted(legal_cells({(0, 0): 4, (1, 0): 3}, 5)) == [(-1, 0), (0, -1), (0, 1)]


def test_s7_the_scale_does_not_wrap() -> None:
    assert legal_cells({(0, 0): 2}, 6) == []
    assert sorted(legal_cells({(0, 0): 2}, 1)) == [(-1, 0), (0, -1), (0, 1), (1, 0)]
    assert legal_cells({(0, 0): 6}, 1) == []
    assert legal_cells({(0, 0): 1}, 6) == []


def test_corner_contact_does_not_count() -> None:
    # the 6 at (2,1) is at the corner of (1,0): a 3 may still go there
    assert legal_cells({(0, 0): 4, (2, 1): 6}, 3)[1:3] == [(-1, 0), (1, 0)]
    assert cell_problem({(0, 0): 4}, 3, (1, 1)) == (
        "(1,1) is not next to any die (corner contact does not count)"
    )


def test_s8_a_failed_die_goes_to_the_back_and_play_passes() -> None:
    # instigator 2; ann 6 1 4; bob 1 1 1; the reroll gives 3
    state, _, source = start([2, 6, 1, 4, 1, 1, 1, 3], dice_per_player=3)
    assert faces(state, 0) == [1, 4, 3]
    assert state.current == 1
    assert state.turns == 1
    assert source.position == 8
    assert engine.prompts(state) == [
        Prompt(
            1, "place your die", "turn 2: place your 1; legal cells: (0,1), (-1,0), (1,0), (0,-1)"
        )
    ]
    assert state.history[0].how == "auto"
    assert state.history[0].reroll == Die(3)


def test_s9_the_texts_line_is_tried_front_first() -> None:
    line = [2, 5, 4, 5, 2, 3, 1, 3, 2, 2, 5, 1, 1, 1]
    # instigator 5: the 2 in front fits nowhere; bob's 4 fits
    dice = [5, *line, *([4] * 14), 6]
    state, _, _ = start(dice, dice_per_player=14)
    assert faces(state, 0) == [5, 4, 5, 2, 3, 1, 3, 2, 2, 5, 1, 1, 1, 6]
    assert state.current == 1


def test_s10_first_to_finish_wins_last_holding_dice_loses() -> None:
    # instigator 3; ann 6 (fails, rerolled to 6); bob 2; cy 4
    state, _, _ = start([3, 6, 2, 4, 6], ("ann", "bob", "cy"), dice_per_player=1)
    assert state.current == 1
    state = order(state, 1, "place 1 0")
    assert state.finishers == (1,)
    assert state.current == 2
    state = order(state, 2, "place -1 0")
    assert state.finished
    assert engine.prompts(state) == []
    assert standings(state) == [("bob", 1), ("cy", 2), ("ann", 3)]
    assert engine.standings(state) == [
        Standing(1, 1, None),
        Standing(2, 2, None),
        Standing(0, 3, None),
    ]


def test_s11_with_two_players_the_first_to_finish_ends_the_game() -> None:
    state, _, _ = start([3, 4, 2], dice_per_player=1)
    state = order(state, 0, "place 1 0")
    assert state.finished
    assert standings(state) == [("ann", 1), ("bob", 2)]


def test_s12_the_follow_up_seats_the_loser_first_and_names_the_winner() -> None:
    state, _, _ = start([3, 6, 2, 4, 6], ("ann", "bob", "cy"), dice_per_player=1)
    state = order(order(state, 1, "place 1 0"), 2, "place -1 0")
    players, options = follow_up(state)
    assert players == ["ann", "bob", "cy"]
    assert options == {
        "dice_per_player": 1,
        "selection": "strict_queue",
        "auto_single": False,
        "turn_cap": 500,
        "previous_winner": "bob",
        "previous_loser": "ann",
    }
    after, events, _ = start([3, 2, 4, 4], players, **options)
    assert after.current == 0
    assert engine.prompts(after)[0].seat == 0
    assert events[0] == Event("the instigator is a 3 at (0,0), rolled for bob, the previous winner")
    assert events[-1] == Event("ann, the previous loser, places first")
    view = engine.view(after, None)
    assert view["instigator"] == {"face": 3, "rolled_for": "bob"}


def test_the_follow_up_rotates_the_seats_so_the_loser_is_seat_1() -> None:
    state, _, _ = start([3, 4, 2], ("ann", "bob"), dice_per_player=1)
    state = order(state, 0, "place 1 0")
    players, options = follow_up(state)
    assert players == ["bob", "ann"]
    assert (options["previous_winner"], options["previous_loser"]) == ("ann", "bob")
    with pytest.raises(GameError):
        follow_up(start([3, 4, 2], dice_per_player=1)[0])


def test_the_previous_loser_must_be_seat_1_and_names_must_be_players() -> None:
    with pytest.raises(OptionsError) as excinfo:
        start([3, 4, 2], ("ann", "bob"), previous_loser="BOB")
    assert excinfo.value.message == (
        "option previous_loser: bob places first, so bob must be seat 1, not seat 2"
    )
    with pytest.raises(OptionsError) as excinfo:
        start([3, 4, 2], ("ann", "bob"), previous_winner="dee")
    assert excinfo.value.message == "option previous_winner: 'dee' is not a player of this game"
    state, _, _ = start([3, 4, 2], ("ann", "bob"), dice_per_player=1, previous_winner="BOB")
    assert state.options.previous_winner == "bob"


def test_s13_the_nmr_default_takes_the_first_legal_cell_in_scan_order() -> None:
    # instigator 4; ann 3 1; bob 5 2
    state, _, _ = start([4, 3, 1, 5, 2], dice_per_player=2)
    state = order(state, 0, "place 1 0")
    assert legal_cells(grid(state), 5) == [(0, 1), (-1, 0), (0, -1)]
    assert engine.default(state, 1) == DropShyOrder(None, (0, 1))
    state, events = engine.resolve(state, ScriptedDice([6]))
    assert grid(state)[(0, 1)] == 5
    assert [turn.how for turn in state.history] == ["order", "default", "auto"]
    assert events[:2] == [
        Event("bob sent no order: the no-moves default is played"),
        Event("turn 2: bob places the 5 at (0,1)"),
    ]


# --- section 8: the draw order example -----------------------------------------------------


def test_section_8_draw_order_example() -> None:
    state, events, source = start([4, 3, 1, 5, 2], dice_per_player=2)
    assert state.instigator == 4
    assert (faces(state, 0), faces(state, 1)) == ([3, 1], [5, 2])
    assert source.position == 5
    state = order(state, 0, "place 1 0")
    # bob's 5 goes on; ann's 1 then fits nowhere and is failed at once: the 6 is drawn
    state = order(state, 1, "place 0 1", dice=[6])
    assert faces(state, 0) == [6]
    assert state.current == 1
    state = order(state, 1, "place 2 0")
    assert state.finished
    assert standings(state) == [("bob", 1), ("ann", 2)]
    assert [turn.how for turn in state.history] == ["order", "order", "auto", "order"]
    assert events[0] == Event("the instigator is a 4 at (0,0), rolled for the moderator")
    assert events[1:] == [
        Event("ann's line, front first: 3 1"),
        Event("bob's line, front first: 5 2"),
    ]


def test_section_8_example_as_a_record() -> None:
    record = {
        "game": "drop-shy",
        "options": {"dice_per_player": 2},
        "players": ["ann", "bob"],
        "dice": [4, 3, 1, 5, 2, 6],
        "moves": [
            {"player": "ann", "order": "place 1 0"},
            {"player": "bob", "order": "place 0 1"},
            {"player": "bob", "order": "place 2 0"},
        ],
    }
    result = records.play(record)
    assert result["status"] == "finished"
    assert result["standings"] == [
        {"player": "bob", "place": 1, "score": None},
        {"player": "ann", "place": 2, "score": None},
    ]
    assert result["log"][-3:] == [
        "turn 4: bob places the 2 at (2,0)",
        "bob has placed every die and wins",
        "the game is over: 1. bob; 2. ann, 1 die left",
    ]


def test_too_few_scripted_dice_is_a_broken_record() -> None:
    record = {
        "game": "drop-shy",
        "options": {"dice_per_player": 2},
        "players": ["ann", "bob"],
        "dice": [4, 3, 1, 5, 2],
        "moves": [
            {"player": "ann", "order": "place 1 0"},
            {"player": "bob", "order": "place 0 1"},
        ],
    }
    with pytest.raises(records.RecordError) as excinfo:
        records.play(record)
    assert excinfo.value.status == records.BROKEN_RECORD
    assert excinfo.value.message.startswith("broken record: move 2 (bob): the record has too few")


# --- section 9.1: two candidates -----------------------------------------------------------


def test_9_1_two_candidate_example() -> None:
    state, _, source = start(
        [3, 4, 10, 2, 3, 6, 8, 5, 8, 4, 2], dice_per_player=2, selection="two_candidate"
    )
    assert state.lines == ((Die(4, 10), Die(2, 3)), (Die(6, 8), Die(5, 8)))
    assert candidates(state.lines[0], state.options) == [("rightmost", 0), ("closest", 1)]
    assert engine.prompts(state) == [
        Prompt(
            0,
            "choose and place",
            "turn 1: take rightmost (4) or take closest (2), then place x y if it fits",
        )
    ]
    state = order(state, 0, "take closest\nplace -1 0", dice=[4, 2])
    # bob: equal depths, so the 6 is the only candidate; it fits nowhere and fails at once
    assert candidates((Die(6, 8), Die(5, 8)), state.options) == [("rightmost", 0)]
    assert state.lines[1] == (Die(5, 8), Die(4, 2))
    assert state.current == 0
    assert source.position == 9
    state = order(state, 0, "place 1 0")
    assert state.finished
    assert standings(state) == [("ann", 1), ("bob", 2)]
    assert [(t.seat, t.take, t.cell, t.how) for t in state.history] == [
        (0, "closest", (-1, 0), "order"),
        (1, None, None, "auto"),
        (0, None, (1, 0), "order"),
    ]


def test_9_1_as_a_record() -> None:
    result = records.play(
        {
            "game": "drop-shy",
            "options": TWO_OPTIONS,
            "players": ["ann", "bob"],
            "dice": [3, 4, 10, 2, 3, 6, 8, 5, 8, 4, 2],
            "moves": [
                {"player": "ann", "order": "take closest\nplace -1 0"},
                {"player": "ann", "order": "place 1 0"},
            ],
        }
    )
    assert result["standings"] == [
        {"player": "ann", "place": 1, "score": None},
        {"player": "bob", "place": 2, "score": None},
    ]


def test_closest_is_chosen_among_the_whole_line_nearer_the_front_on_equal_depth() -> None:
    line = (Die(1, 9), Die(2, 4), Die(3, 4), Die(4, 20))
    assert candidates(line, TWO) == [("rightmost", 0), ("closest", 1)]
    assert candidates((Die(1, 4), Die(2, 4)), TWO) == [("rightmost", 0)]
    assert candidates(line, STRICT) == [("rightmost", 0)]
    assert candidates((), TWO) == []


def test_the_chosen_die_leaves_the_line_and_the_others_keep_their_order() -> None:
    state = board_state({(0, 0): 4}, [[(5, 9), (2, 8), (3, 1), (6, 12)], [(5, 1)]], TWO)
    state = order(state, 0, "take closest place 1 0")
    assert state.lines[0] == (Die(5, 9), Die(2, 8), Die(6, 12))


def test_a_die_chosen_that_fits_nowhere_fails_with_its_reroll_and_depth() -> None:
    state = board_state({(0, 0): 5}, [[(2, 10), (6, 3), (4, 7)], [(4, 1)]], TWO)
    assert rejected(state, 0, "take rightmost place 1 0") == (
        "your 2 cannot be placed; send take rightmost alone to fail it"
    )
    state, events = engine.submit(
        state, 0, engine.parse(state, 0, "take rightmost"), ScriptedDice([1, 15])
    )
    assert state.lines[0] == (Die(6, 3), Die(4, 7), Die(1, 15))
    assert state.history[-1].reroll == Die(1, 15)
    assert events == [
        Event(
            "turn 1: ann takes the rightmost die, a 2, which cannot be placed: it is rerolled "
            "and goes to the back of ann's line as a 1/15"
        )
    ]


def test_one_candidate_in_two_candidate_mode_may_name_it_either_way_or_not_at_all() -> None:
    state = board_state({(0, 0): 4}, [[(3, 1), (5, 9)], [(5, 1)]], TWO)
    assert engine.prompts(state) == [
        Prompt(
            0, "place your die", "turn 1: place your 3; legal cells: (0,1), (-1,0), (1,0), (0,-1)"
        )
    ]
    for text in ("place 1 0", "take rightmost place 1 0", "take closest\nplace 1 0"):
        after = order(state, 0, text)
        assert grid(after)[(1, 0)] == 3


def test_two_candidate_messages() -> None:
    # the table of section 7: rightmost 3, closest 6; the 6 fits on (0,2) and (-1,1)
    state = board_state({(0, 0): 4, (0, 1): 5, (1, 0): 3}, [[(3, 12), (6, 2)], [(2, 1)]], TWO)
    assert rejected(state, 0, "place 1 0") == (
        "choose your die first: take rightmost (3) or take closest (6)"
    )
    assert rejected(state, 0, "take closest") == (
        "your 6 can be placed; add place x y (legal: (0,2), (-1,1))"
    )
    assert rejected(state, 0, "take closest place 1 1") == (
        "(1,1) is not legal for your 6: it touches the 3 at (1,0)"
    )
    assert engine.default(state, 0) == DropShyOrder("rightmost", (-1, 0))
    after = order(state, 0, "take closest\nplace -1 1")
    assert grid(after)[(-1, 1)] == 6


def test_nmr_default_in_two_candidate_mode_fails_the_rightmost_die_if_it_fits_nowhere() -> None:
    state = board_state({(0, 0): 5}, [[(2, 10), (6, 3)], [(4, 1)]], TWO)
    assert engine.default(state, 0) == DropShyOrder("rightmost", None)
    state, _ = engine.resolve(state, ScriptedDice([5, 5]))
    assert state.lines[0] == (Die(6, 3), Die(5, 5))
    assert state.history[-1].how == "default"


# --- section 9.2: order examples -----------------------------------------------------------


def bob_with_a_5() -> DropShyState:
    state, _, _ = start([4, 3, 1, 5, 2], dice_per_player=2)
    return order(state, 0, "place 1 0")


@pytest.mark.parametrize(
    ("text", "cell"),
    [("place 0 1", (0, 1)), ("PLACE -1,0", (-1, 0)), ("place (0, -1)", (0, -1))],
)
def test_9_2_valid_orders(text: str, cell: tuple[int, int]) -> None:
    state = bob_with_a_5()
    assert engine.parse(state, 1, text) == DropShyOrder(None, cell)
    after = order(state, 1, text, dice=[6])
    assert grid(after)[cell] == 5
    # ann's 1 then fits nowhere, fails at once, and bob is on turn again
    assert [turn.how for turn in after.history] == ["order", "order", "auto"]
    assert after.current == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("place 2 0", "(2,0) is not legal for your 5: it touches the 3 at (1,0)"),
        ("place 1 1", "(1,1) is not legal for your 5: it touches the 3 at (1,0)"),
        ("place 1 0", "(1,0) is taken"),
        ("place 0 2", "(0,2) is not next to any die (the dice lie within x 0 to 1 and y 0 to 0)"),
        (
            "take closest place 0 1",
            '"take closest place 0 1": take is only used in two-candidate mode; this game '
            "plays the front die of your line, so write place x y",
        ),
    ],
)
def test_9_2_rejected_orders(text: str, message: str) -> None:
    state = bob_with_a_5()
    assert rejected(state, 1, text) == message


def test_section_7_table_messages_on_the_9_2_board() -> None:
    state = bob_with_a_5()
    assert rejected(state, 1, "place 2 1") == (
        "(2,1) is not next to any die (corner contact does not count)"
    )
    assert rejected(state, 1, "place 0 0") == "(0,0) is taken"
    assert rejected(state, 0, "place 0 1") == "not your turn: waiting for bob"


def test_a_cell_touching_two_wrong_dice_names_both() -> None:
    state = board_state({(0, 0): 4, (1, 0): 3, (0, 1): 5, (1, 2): 1}, [[6], [1]])
    assert rejected(state, 0, "place 1 1") == (
        "(1,1) is not legal for your 6: it touches the 1 at (1,2) and the 3 at (1,0)"
    )


# --- parsing -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("place 1 0", DropShyOrder(None, (1, 0))),
        ("  Place\t+1   -0 ", DropShyOrder(None, (1, 0))),
        ("place(-1,0)", DropShyOrder(None, (-1, 0))),
        ("> quoted place 9 9\n\nplace 12 -30\n-- \nplace 1 1", DropShyOrder(None, (12, -30))),
    ],
)
def test_place_is_read_in_every_documented_spelling(text: str, expected: DropShyOrder) -> None:
    assert engine.parse(bob_with_a_5(), 1, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("take closest place 0 1", DropShyOrder("closest", (0, 1))),
        ("place 0 1\ntake rightmost", DropShyOrder("rightmost", (0, 1))),
        ("TAKE Closest", DropShyOrder("closest", None)),
        ("take closest\n\nplace (-1, 0)", DropShyOrder("closest", (-1, 0))),
    ],
)
def test_take_is_read_in_two_candidate_mode(text: str, expected: DropShyOrder) -> None:
    state = board_state({(0, 0): 4}, [[(3, 12), (6, 2)], [(1, 1)]], TWO)
    assert engine.parse(state, 0, text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the order is empty: write place x y, e.g. place 1 0"),
        ("> place 1 0", "the order is empty: write place x y, e.g. place 1 0"),
        ("place", '"place": place needs two whole numbers x and y, e.g. place -1 0'),
        ("place 1", '"place 1": place needs two whole numbers x and y, e.g. place -1 0'),
        ("place a b", '"place a b": place needs two whole numbers x and y, e.g. place -1 0'),
        ("place 1.5 0", '"place 1.5 0": place needs two whole numbers x and y, e.g. place -1 0'),
        ("put 1 0", "\"put 1 0\": 'put' is not understood; write place x y"),
        ("place 1 0 2", "\"place 1 0 2\": '2' is not understood; write place x y"),
        ("place 1 0\nplace 0 1", '"place 0 1": only one place per order'),
    ],
)
def test_parse_errors_name_the_line(text: str, message: str) -> None:
    assert rejected(bob_with_a_5(), 1, text) == message


def test_a_place_far_off_names_where_the_dice_lie() -> None:
    state = bob_with_a_5()
    assert rejected(state, 1, "place 99999999999999999999 -99999999999999999999") == (
        "(99999999999999999999,-99999999999999999999) is not next to any die "
        "(the dice lie within x 0 to 1 and y 0 to 0)"
    )
    assert rejected(state, 1, "place ٢ 0") == (
        '"place ٢ 0": place needs two whole numbers x and y, e.g. place -1 0'
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("take left", '"take left": write take rightmost or take closest'),
        ("take", '"take": write take rightmost or take closest'),
        ("take closest\ntake rightmost", '"take rightmost": only one take per order'),
        (
            "grab closest",
            "\"grab closest\": 'grab' is not understood; write place x y "
            "(and take rightmost or take closest)",
        ),
    ],
)
def test_take_errors_in_two_candidate_mode(text: str, message: str) -> None:
    state = board_state({(0, 0): 4}, [[(3, 12), (6, 2)], [(1, 1)]], TWO)
    assert rejected(state, 0, text) == message


def test_canonical_text_is_read_back_as_the_same_order() -> None:
    state = board_state({(0, 0): 4}, [[(3, 12), (6, 2)], [(1, 1)]], TWO)
    for parsed in (
        DropShyOrder("closest", (-1, 0)),
        DropShyOrder("rightmost", None),
        DropShyOrder(None, (3, -2)),
    ):
        text = engine.canonical(state, 0, parsed)
        assert engine.parse(state, 0, text) == parsed
    assert (
        engine.canonical(state, 0, DropShyOrder("closest", (-1, 0))) == "take closest\nplace -1 0"
    )


def test_orders_out_of_turn_and_after_the_end_are_rejected() -> None:
    state, _, _ = start([3, 6, 2, 4, 6], ("ann", "bob", "cy"), dice_per_player=1)
    with pytest.raises(OrderError) as excinfo:
        engine.parse(state, 0, "place 1 0")
    assert excinfo.value.message == "not your turn: waiting for bob"
    with pytest.raises(OrderError) as excinfo:
        engine.submit(state, 2, DropShyOrder(None, (1, 0)), NoDice())
    assert excinfo.value.message == "not your turn: waiting for bob"
    state = order(state, 1, "place 1 0")
    with pytest.raises(OrderError) as excinfo:
        engine.parse(state, 1, "place 2 0")
    assert excinfo.value.message == "you have placed every die; no order is expected from you"
    state = order(state, 2, "place -1 0")
    with pytest.raises(OrderError) as excinfo:
        engine.parse(state, 0, "place 2 0")
    assert excinfo.value.message == "the game is over; no order is expected from you"
    with pytest.raises(GameError):
        engine.resolve(state, NoDice())


def test_a_rejected_order_changes_nothing_and_parse_and_default_draw_nothing() -> None:
    state = bob_with_a_5()
    before = engine.state_to_json(state)
    rejected(state, 1, "place 2 0")
    engine.default(state, 1)
    engine.parse(state, 1, "place 0 1")
    assert engine.state_to_json(state) == before


# --- automatic turns -----------------------------------------------------------------------


def one_cell_game(auto_single: bool) -> DropShyState:
    """ann 3 3 6, bob 5 5 2 on an instigator 4; after three turns bob's 5 has one cell."""
    state, _, _ = start([4, 3, 3, 6, 5, 5, 2], dice_per_player=3, auto_single=auto_single)
    state = order(state, 0, "place 1 0")
    state = order(state, 1, "place 0 1")
    return order(state, 0, "place 0 -1")


def test_without_auto_single_a_die_with_one_legal_cell_is_asked_for() -> None:
    state = one_cell_game(auto_single=False)
    assert engine.prompts(state) == [
        Prompt(1, "place your die", "turn 4: place your 5; legal cell: (-1,0)")
    ]


def test_auto_single_places_a_die_with_one_legal_cell() -> None:
    state = one_cell_game(auto_single=True)
    assert grid(state)[(-1, 0)] == 5
    assert state.history[-1].how == "auto"
    assert state.current == 0
    assert engine.prompts(state)[0].hint.startswith("turn 5: place your 6;")


def test_auto_single_needs_one_candidate() -> None:
    options = DropShyOptions(selection="two_candidate", auto_single=True)
    state = board_state(
        {(0, 0): 4, (1, 0): 3, (0, 1): 5, (0, -1): 3}, [[(5, 9), (1, 1)], [(1, 1)]], options
    )
    assert legal_cells(grid(state), 5) == [(-1, 0)]
    state, _ = engine._advance(state, NoDice(), [])
    assert engine.prompts(state)[0].kind == "choose and place"


def test_prompts_change_when_the_same_player_is_on_turn_again() -> None:
    # bob places; ann's 1 fails automatically; bob is on turn again with a new hint
    state, _, _ = start([4, 3, 1, 5, 2], dice_per_player=2)
    state = order(state, 0, "place 1 0")
    before = engine.prompts(state)
    state = order(state, 1, "place 0 1", dice=[6])
    after = engine.prompts(state)
    assert before[0].seat == after[0].seat == 1
    assert before != after


# --- section 5: the turn cap ---------------------------------------------------------------


def test_turn_cap_with_nobody_finished_ranks_by_dice_left() -> None:
    # instigator 1: ann places her 2; every 6 after that fits nowhere until turn 50
    dice = [1, 2, 6, 6, 6, 6, 6]
    state, _, _ = start(dice, ("ann", "bob", "cy"), dice_per_player=2, turn_cap=50)
    state = order(state, 0, "place 1 0", dice=[6] * 49)
    assert state.finished
    assert state.capped
    assert state.turns == 50
    assert [len(line) for line in state.lines] == [1, 2, 2]
    assert standings(state) == [("ann", 1), ("bob", 3), ("cy", 3)]


def test_turn_cap_with_a_finisher_gives_the_three_group_places() -> None:
    # instigator 1; ann 2 3 places both; cy places her 3; bob, cy and dee then fail forever
    dice = [1, 2, 3, 6, 6, 3, 6, 6, 6]
    state, _, _ = start(dice, ("ann", "bob", "cy", "dee"), dice_per_player=2, turn_cap=50)
    state = order(state, 0, "place 1 0", dice=[6])
    state = order(state, 2, "place 2 0", dice=[6])
    state, events = engine.submit(state, 0, DropShyOrder(None, (1, 1)), ScriptedDice([6] * 45))
    assert state.finished and state.capped and state.turns == 50
    assert [len(line) for line in state.lines] == [0, 2, 1, 2]
    assert [(state.players[s.seat], s.place) for s in engine.standings(state) or []] == [
        ("ann", 1),
        ("cy", 2),
        ("bob", 4),
        ("dee", 4),
    ]
    assert events[-1] == Event(
        "turn 50 is the turn cap: the game is over: 1. ann; 2. cy, 1 die left; "
        "4. bob, 2 dice left; 4. dee, 2 dice left"
    )


def test_turn_cap_with_equal_dice_left_shares_place_1() -> None:
    state, _, _ = start([1, 6, 6, *([6] * 50)], dice_per_player=1, turn_cap=50)
    assert state.finished and state.capped and state.turns == 50
    assert standings(state) == [("ann", 1), ("bob", 1)]


def test_a_normal_end_on_the_cap_turn_takes_precedence() -> None:
    # both 6s fail for 48 turns; bob's turn-48 reroll is a 2, placed on turn 50
    dice = [1, 6, 6, *([6] * 47), 2, 6]
    state, _, _ = start(dice, dice_per_player=1, turn_cap=50)
    assert (state.current, state.turns) == (1, 49)
    state = order(state, 1, "place 1 0")
    assert state.turns == 50
    assert not state.capped
    assert standings(state) == [("bob", 1), ("ann", 2)]


# --- the view ------------------------------------------------------------------------------


def test_view_has_the_board_lines_and_legal_cells() -> None:
    state = bob_with_a_5()
    view = engine.view(state, 1)
    json.dumps(view)
    assert view["options"] == engine.state_to_json(state)["options"]
    assert view["current"] == 1
    assert view["current_player"] == "bob"
    assert view["turn"] == 2
    assert view["owed"] == {
        "kind": "place your die",
        "hint": "turn 2: place your 5; legal cells: (0,1), (-1,0), (0,-1)",
    }
    assert view["legal"] == [[0, 1], [-1, 0], [0, -1]]
    assert view["candidates"] == [
        {
            "which": "rightmost",
            "index": 0,
            "face": 5,
            "depth": None,
            "legal": [[0, 1], [-1, 0], [0, -1]],
        }
    ]
    assert view["board"] == {
        "cells": [
            {"x": 0, "y": 0, "face": 4, "seat": None},
            {"x": 1, "y": 0, "face": 3, "seat": 0},
        ],
        "bounds": {"min_x": 0, "max_x": 1, "min_y": 0, "max_y": 0},
    }
    assert [p["line"] for p in view["players"]] == [[1], [5, 2]]
    assert view["you"] == {"seat": 1, "name": "bob", "on_turn": True, "dice_left": 2}
    assert "you" not in engine.view(state, None)
    assert "standings" not in view


def test_grid_rows_mark_faces_and_legal_cells_top_row_first() -> None:
    state = bob_with_a_5()
    rows = grid_rows(state)
    assert [row["y"] for row in rows] == [1, 0, -1]
    marks = ["".join(str(cell["mark"]) for cell in row["cells"]) for row in rows]
    assert marks == [".+..", "+43.", ".+.."]
    two = board_state({(0, 0): 4}, [[(3, 12), (5, 2)], [(1, 1)]], TWO)
    assert ["".join(str(c["mark"]) for c in r["cells"]) for r in grid_rows(two)] == [
        ".+.",
        "+4+",
        ".+.",
    ]
    three = board_state({(0, 0): 4, (1, 0): 3}, [[(5, 12), (2, 2)], [(1, 1)]], TWO)
    assert ["".join(str(c["mark"]) for c in r["cells"]) for r in grid_rows(three)] == [
        ".rc.",
        "r43c",
        ".rc.",
    ]


def test_the_state_round_trips_through_json() -> None:
    state = order(
        board_state({(0, 0): 5}, [[(2, 10), (6, 3)], [(4, 1)]], TWO),
        0,
        "take rightmost",
        dice=[1, 15],
    )
    assert roundtrip(state) == state
    finished, _, _ = start([3, 6, 2, 4, 6], ("ann", "bob", "cy"), dice_per_player=1)
    finished = order(order(finished, 1, "place 1 0"), 2, "place -1 0")
    assert roundtrip(finished) == finished
    assert engine.order_from_json(engine.order_to_json(DropShyOrder("closest", (-1, 2)))) == (
        DropShyOrder("closest", (-1, 2))
    )
    view = engine.view(finished, 0)
    assert view["standings"] == [
        {"player": "bob", "place": 1, "score": None},
        {"player": "cy", "place": 2, "score": None},
        {"player": "ann", "place": 3, "score": None},
    ]
    assert [p["result"] for p in view["players"]] == ["loser", "winner", "neither"]


# --- the board templates (no database: only Django's template engine) ---------------------


def test_the_text_board_is_a_grid_with_coordinates() -> None:
    from django.template.loader import render_to_string

    text = render_to_string("games/drop-shy/board.txt", {"view": engine.view(bob_with_a_5(), 1)})
    assert text.splitlines()[:8] == [
        "The board (x grows to the right, y upward; the instigator is at 0,0):",
        "  + marks a cell where bob's 5 may go",
        "",
        "      -1  0  1  2",
        "    1  .  +  .  .",
        "    0  +  4  3  .",
        "   -1  .  +  .  .",
        "",
    ]
    html = render_to_string(
        "games/drop-shy/board.html", {"view": engine.view(bob_with_a_5(), 1), "html_email": True}
    )
    assert html.count("<tr>") == 4 + 2
    assert html.count("<svg") == 0
