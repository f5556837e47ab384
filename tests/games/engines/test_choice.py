"""Choice, standard rules: worked examples of rules/choice.md, the order parser and its
messages, the NMR default, a full game and the JSON round trip."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace

import pytest

from games.engines.base import DiceError, Event, OptionsError, OrderError, Prompt, Standing
from games.engines.choice.rules import (
    Choice,
    ChoiceEngine,
    ChoiceOptions,
    ChoiceOrder,
    ChoiceState,
    Round,
    RoundLine,
    Sheet,
    SkLine,
    legal_choices,
    nmr_choice,
    play_round,
    rounds_in_turn,
    score,
    wurfel_rule,
)
from games.engines.dice import NoDice, ScriptedDice

engine = ChoiceEngine()
STANDARD = ChoiceOptions()


def sheet_with(stored: dict[int, int] | None = None, counts: dict[int, int] | None = None) -> Sheet:
    counts = counts or {}
    return Sheet(
        counts=tuple(counts.get(total, 0) for total in range(2, 13)),
        stored=tuple((stored or {}).items()),
    )


def turn_state(
    sheet: Sheet,
    rolls: Mapping[int, tuple[int, ...]],
    options: ChoiceOptions = STANDARD,
    others: tuple[Sheet, ...] = (),
) -> ChoiceState:
    """A running game in the middle: seat 0 holds ``sheet``; the current rounds are ``rolls``."""
    sheets = (sheet, *others)
    return ChoiceState(
        options=options,
        players=("ann", "bob", "cy", "dee")[: len(sheets)],
        sheets=sheets,
        turn=11,
        rounds=tuple(Round(number, roll) for number, roll in rolls.items()),
        orders=(None,) * len(sheets),
    )


def roundtrip_state(state: ChoiceState) -> ChoiceState:
    restored: ChoiceState = engine.state_from_json(
        json.loads(json.dumps(engine.state_to_json(state)))
    )
    return restored


def message(excinfo: pytest.ExceptionInfo[OrderError]) -> str:
    return excinfo.value.message


# --- section 6: scoring --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        ({7: 9}, 120),  # C1
        ({4: 7}, 120),  # C2 (A-1: the table wins over "2 x 40")
        ({9: 12}, 250),  # C3: capped at 10
        ({2: 14}, 500),  # C4
        ({2: 3}, -200),  # C5
        ({12: 5}, 0),  # C6
        ({}, 0),
        ({2: 1, 3: 4, 12: 6}, -300),
        ({6: 10, 8: 11}, 400),
    ],
)
def test_score_follows_the_table(counts: dict[int, int], expected: int) -> None:
    assert score(counts) == expected
    assert score(tuple(counts.get(total, 0) for total in range(2, 13))) == expected


# --- section 4: Wurfel rules and legal choices ---------------------------------------------


def test_c8_legal_sums_when_the_only_match_is_forced() -> None:
    sheet = sheet_with({2: 1, 5: 1, 6: 1})
    assert wurfel_rule(sheet, (1, 3, 3, 4, 5)) == ("W2", (5,))
    assert legal_choices(sheet, (1, 3, 3, 4, 5)) == [
        Choice("W", 5, (1, 3), (3, 4)),
        Choice("W", 5, (1, 4), (3, 3)),
    ]


def test_w1_allows_any_die_even_when_a_stored_value_shows() -> None:
    sheet = sheet_with({3: 2, 4: 1})
    assert wurfel_rule(sheet, (1, 3, 3, 4, 5)) == ("W1", (1, 3, 4, 5))


def test_w3_free_ride_when_no_stored_value_shows() -> None:
    sheet = sheet_with({1: 1, 2: 1, 3: 1})
    assert wurfel_rule(sheet, (4, 4, 5, 5, 6)) == ("W3", (4, 5, 6))
    assert {choice.kind for choice in legal_choices(sheet, (4, 4, 5, 5, 6))} == {"F"}


def test_legal_choices_list_each_distinct_pairing_once() -> None:
    assert legal_choices(Sheet(), (2, 2, 2, 2, 2)) == [Choice("W", 2, (2, 2), (2, 2))]
    assert legal_choices(Sheet(), (1, 2, 3, 4, 4)) == [
        Choice("W", 1, (2, 3), (4, 4)),
        Choice("W", 1, (2, 4), (3, 4)),
        Choice("W", 2, (1, 3), (4, 4)),
        Choice("W", 2, (1, 4), (3, 4)),
        Choice("W", 3, (1, 2), (4, 4)),
        Choice("W", 3, (1, 4), (2, 4)),
        Choice("W", 4, (1, 2), (3, 4)),
        Choice("W", 4, (1, 3), (2, 4)),
        Choice("W", 4, (1, 4), (2, 3)),
    ]


def test_c11_the_eighth_wurfel_ends_the_game_after_the_sums_are_recorded() -> None:
    sheet = sheet_with({1: 2, 5: 3, 6: 7})
    roll = (6, 2, 2, 5, 1)
    assert wurfel_rule(sheet, roll) == ("W2", (1, 5, 6))
    after = play_round(sheet, roll, RoundLine(21, Choice("W", 6, (2, 2), (1, 5))), STANDARD)
    assert after == Sheet(
        counts=sheet_with(counts={4: 1, 6: 1}).counts,
        stored=((1, 2), (5, 3), (6, 8)),
        active=False,
        ended_round=21,
        score=-400,
    )


def test_a_wurfel_below_the_threshold_keeps_the_game_going() -> None:
    sheet = sheet_with({1: 2, 5: 3, 6: 7})
    after = play_round(
        sheet, (6, 2, 2, 5, 1), RoundLine(21, Choice("W", 5, (2, 2), (1, 6))), STANDARD
    )
    assert after.active
    assert after.stored == ((1, 2), (5, 4), (6, 7))
    assert after.ended_round is None


def test_a_new_value_is_stored_after_the_earlier_ones() -> None:
    sheet = sheet_with({4: 1})
    after = play_round(
        sheet, (1, 2, 3, 4, 5), RoundLine(1, Choice("W", 2, (1, 3), (4, 5))), STANDARD
    )
    assert after.stored == ((4, 1), (2, 1))
    assert after.count(4) == 1
    assert after.count(9) == 1


def test_a_lower_end_threshold_ends_the_game_sooner() -> None:
    options = engine.options({"end_threshold": 3})
    after = play_round(
        sheet_with({6: 2}), (6, 6, 6, 6, 6), RoundLine(5, Choice("W", 6, (6, 6), (6, 6))), options
    )
    assert (after.active, after.ended_round, after.score) == (False, 5, -200)


# --- section 2: options --------------------------------------------------------------------


def test_options_defaults() -> None:
    assert engine.options({}) == ChoiceOptions(
        variant="standard",
        rolls_per_turn=2,
        end_threshold=8,
        cards=("flip", "half", "double", "refuse", "swap", "sk"),
        free_ride_to_plate=False,
        tiebreak="shared",
        round_cap=200,
    )


def test_suppenkasper_defaults_to_threshold_seven() -> None:
    options = engine.options({"variant": "suppenkasper"})
    assert options.end_threshold == 7
    assert engine.options({"variant": "suppenkasper", "end_threshold": 8}).end_threshold == 8


def test_every_option_key_is_read() -> None:
    options = engine.options(
        {
            "variant": "suppenkasper",
            "rolls_per_turn": "decreasing",
            "end_threshold": 5,
            "cards": ["sk", "flip"],
            "free_ride_to_plate": True,
            "tiebreak": "fewer_rounds",
            "round_cap": 30,
        }
    )
    assert options == ChoiceOptions(
        variant="suppenkasper",
        rolls_per_turn="decreasing",
        end_threshold=5,
        cards=("sk", "flip"),
        free_ride_to_plate=True,
        tiebreak="fewer_rounds",
        round_cap=30,
    )


def test_suppenkasper_only_keys_are_ignored_in_the_standard_game() -> None:
    options = engine.options({"cards": ["flip"], "free_ride_to_plate": True})
    assert options == ChoiceOptions()


@pytest.mark.parametrize(
    ("data", "text"),
    [
        (
            {"colour": "red"},
            "unknown option 'colour' (Choice options: variant, rolls_per_turn, end_threshold, "
            "cards, free_ride_to_plate, tiebreak, round_cap)",
        ),
        ({"variant": "extra"}, "option variant must be one of standard, suppenkasper, not 'extra'"),
        (
            {"rolls_per_turn": "2"},
            "option rolls_per_turn must be 1, 2, 3, 4 or \"decreasing\", not '2'",
        ),
        (
            {"rolls_per_turn": True},
            'option rolls_per_turn must be 1, 2, 3, 4 or "decreasing", not True',
        ),
        ({"rolls_per_turn": 5}, 'option rolls_per_turn must be 1, 2, 3, 4 or "decreasing", not 5'),
        ({"end_threshold": 9}, "option end_threshold must be 3-8, not 9"),
        ({"end_threshold": 2}, "option end_threshold must be 3-8, not 2"),
        ({"end_threshold": 7.0}, "option end_threshold must be a whole number 3-8, not 7.0"),
        ({"round_cap": 9}, "option round_cap must be 10-500, not 9"),
        ({"round_cap": 501}, "option round_cap must be 10-500, not 501"),
        ({"round_cap": True}, "option round_cap must be a whole number 10-500, not True"),
        ({"round_cap": "200"}, "option round_cap must be a whole number 10-500, not '200'"),
        ({"tiebreak": "coin"}, "option tiebreak must be one of shared, fewer_rounds, not 'coin'"),
        (
            {"variant": "suppenkasper", "cards": ["flip", "joker"]},
            "option cards: 'joker' is not a card (flip, half, double, refuse, swap, sk)",
        ),
        ({"variant": "suppenkasper", "cards": ["sk", "sk"]}, "option cards lists sk twice"),
        (
            {"variant": "suppenkasper", "cards": "sk"},
            "option cards must be a list drawn from flip, half, double, refuse, swap, sk",
        ),
        (
            {"variant": "suppenkasper", "free_ride_to_plate": "yes"},
            "option free_ride_to_plate must be true or false, not 'yes'",
        ),
    ],
)
def test_bad_options_are_rejected(data: dict[str, object], text: str) -> None:
    with pytest.raises(OptionsError) as excinfo:
        engine.options(data)
    assert excinfo.value.message == text


def test_the_suppenkasper_variant_starts_with_empty_plates_and_no_cards_used() -> None:
    dice = ScriptedDice([3, 1, 4, 1, 5, 2, 6, 5, 3, 5])
    state, _ = engine.start(engine.options({"variant": "suppenkasper"}), ["ann", "bob"], dice)
    assert state.sheets == (Sheet(), Sheet())
    assert [(s.plate, s.cards_used) for s in state.sheets] == [((), ()), ((), ())]


@pytest.mark.parametrize("count", [0, 21])
def test_player_count_outside_1_to_20_is_rejected(count: int) -> None:
    with pytest.raises(OptionsError) as excinfo:
        engine.start(STANDARD, [f"p{i}" for i in range(count)], NoDice())
    assert excinfo.value.message == f"Choice takes 1 to 20 players, not {count}"


# --- sections 5 and 10: postal turns and the dice draw order -------------------------------


def test_dice_draw_order_example() -> None:
    dice = ScriptedDice([3, 1, 4, 1, 5, 2, 6, 5, 3, 5, 6, 6, 6, 6, 6, 1, 2, 3, 4, 5])
    state, events = engine.start(STANDARD, ["ann", "bob"], dice)
    assert state.rounds == (Round(1, (3, 1, 4, 1, 5)), Round(2, (2, 6, 5, 3, 5)))
    assert events == [
        Event("postal turn 1, rounds 1-2: round 1 rolls 3 1 4 1 5; round 2 rolls 2 6 5 3 5")
    ]
    assert dice.position == 10
    state, events = engine.resolve(state, dice)
    assert state.turn == 2
    assert state.rounds == (Round(3, (6, 6, 6, 6, 6)), Round(4, (1, 2, 3, 4, 5)))
    assert dice.position == 20
    assert events[-1] == Event(
        "postal turn 2, rounds 3-4: round 3 rolls 6 6 6 6 6; round 4 rolls 1 2 3 4 5"
    )


def test_running_out_of_scripted_dice_is_a_dice_error() -> None:
    with pytest.raises(DiceError) as excinfo:
        engine.start(STANDARD, ["ann"], ScriptedDice([3, 1, 4, 1, 5, 2, 6, 5, 3]))
    assert excinfo.value.message == (
        "the record has too few dice: draw 10 (a d6) is needed but only 9 values are given"
    )


def test_a_scripted_value_above_six_is_a_dice_error() -> None:
    with pytest.raises(DiceError) as excinfo:
        engine.start(STANDARD, ["ann"], ScriptedDice([3, 1, 7]))
    assert excinfo.value.message == "die 3 of the record is 7, not a d6 value 1-6"


def turn_spans(options: ChoiceOptions, turns: int) -> dict[int, tuple[int, int]]:
    spans: dict[int, tuple[int, int]] = {}
    first = 1
    for turn in range(1, turns + 1):
        count = rounds_in_turn(options, turn)
        spans[turn] = (first, first + count - 1)
        first += count
    return spans


def test_c12_decreasing_rounds_per_turn() -> None:
    spans = turn_spans(engine.options({"rolls_per_turn": "decreasing"}), 12)
    assert spans[1] == (1, 4)
    assert spans[3] == (9, 12)
    assert spans[4] == (13, 15)
    assert spans[6] == (19, 21)
    assert spans[7] == (22, 23)
    assert spans[9] == (26, 27)
    assert spans[10] == (28, 28)
    assert spans[12] == (30, 30)


@pytest.mark.parametrize("rolls", [1, 2, 3, 4])
def test_fixed_rounds_per_turn(rolls: int) -> None:
    options = engine.options({"rolls_per_turn": rolls})
    assert [rounds_in_turn(options, turn) for turn in (1, 5, 20)] == [rolls, rolls, rolls]


def free_riding_game(cap: int) -> tuple[ChoiceState, ScriptedDice]:
    """One player who stores 1, 2 and 3, then free-rides on rolls of 4, 5 and 6."""
    rolls = [1, 1, 2, 2, 3] * 3 + [4, 4, 5, 5, 6] * (cap - 3)
    dice = ScriptedDice(rolls)
    options = engine.options({"rolls_per_turn": 4, "round_cap": cap})
    state, _ = engine.start(options, ["ann"], dice)
    order = "W1 1+2 2+3\nW2 1+1 2+3\nW3 1+1 2+2\nF6 4+4 5+5"
    state, _ = engine.submit(state, 0, engine.parse(state, 0, order), NoDice())
    state, _ = engine.resolve(state, dice)
    while not state.finished:
        lines = "\n".join("F6 4+4 5+5" for _ in state.rounds)
        state, _ = engine.submit(state, 0, engine.parse(state, 0, lines), NoDice())
        state, _ = engine.resolve(state, dice)
    return state, dice


def test_the_round_cap_cuts_the_last_turn_and_ends_every_active_player() -> None:
    state, dice = free_riding_game(10)
    assert [r.number for r in state.past] == list(range(1, 11))
    assert state.turn == 3
    assert dice.position == 50  # rounds 9 and 10 only: the third turn is cut to two rounds
    assert state.sheets[0].ended_round == 10
    assert state.sheets[0].score == score({2: 2, 3: 1, 4: 1, 5: 2, 8: 7, 10: 7})
    assert engine.standings(state) == [Standing(0, 1, state.sheets[0].score)]


def test_round_cap_event_names_the_player_and_score() -> None:
    dice = ScriptedDice([1, 1, 2, 2, 3] * 3 + [4, 4, 5, 5, 6] * 7)
    options = engine.options({"rolls_per_turn": 4, "round_cap": 10})
    state, _ = engine.start(options, ["ann"], dice)
    state = replace(state, sheets=(sheet_with({1: 1, 2: 1, 3: 1}),))
    state, _ = engine.resolve(state, dice)
    state, _ = engine.resolve(state, dice)
    state, events = engine.resolve(state, dice)
    assert state.finished
    ann = state.sheets[0]
    assert events[-2:] == [
        Event(f"round 10 is the round cap: ann's game ends with a score of {ann.score}"),
        Event(f"the game is over: 1. ann ({ann.score})"),
    ]


# --- prompts -------------------------------------------------------------------------------


def test_every_active_player_is_prompted_at_once() -> None:
    ended = replace(Sheet(), active=False, ended_round=19, score=0)
    state = turn_state(Sheet(), {21: (1, 3, 3, 4, 5), 22: (2, 2, 4, 6, 6)}, others=(ended, Sheet()))
    hint = "rounds 21-22: one line per round, e.g. W5 1+3 3+4"
    assert engine.prompts(state) == [Prompt(0, "postal turn", hint), Prompt(2, "postal turn", hint)]


def test_a_seat_with_a_sealed_order_is_still_prompted() -> None:
    state = turn_state(Sheet(), {28: (1, 3, 3, 4, 5)})
    state, _ = engine.submit(state, 0, engine.parse(state, 0, "W1 3+3 4+5"), NoDice())
    assert engine.has_order(state, 0)
    assert engine.prompts(state) == [
        Prompt(0, "postal turn", "round 28: one line, e.g. W5 1+3 3+4")
    ]


def test_nobody_is_prompted_once_finished() -> None:
    state = replace(turn_state(Sheet(), {21: (1, 3, 3, 4, 5)}), finished=True)
    assert engine.prompts(state) == []


# --- section 9: order syntax ---------------------------------------------------------------

ROLLS_94 = {21: (1, 3, 3, 4, 5), 22: (2, 2, 4, 6, 6)}
SHEET_94 = sheet_with({3: 1, 4: 1, 6: 1})


def state_94() -> ChoiceState:
    return turn_state(SHEET_94, ROLLS_94)


def line(
    number: int, kind: str, value: int, first: tuple[int, int], second: tuple[int, int]
) -> RoundLine:
    return RoundLine(number, Choice(kind, value, first, second))


def accept(text: str, state: ChoiceState | None = None) -> ChoiceOrder:
    state = state or state_94()
    order = engine.parse(state, 0, text)
    new_state, _ = engine.submit(state, 0, order, NoDice())
    assert new_state.orders[0] == order
    return order


def reject(text: str, state: ChoiceState | None = None) -> str:
    state = state or state_94()
    with pytest.raises(OrderError) as excinfo:
        engine.submit(state, 0, engine.parse(state, 0, text), NoDice())
    return message(excinfo)


def test_94_valid_order() -> None:
    assert accept("W3 1+4 3+5\nW6 2+2 4+6") == ChoiceOrder(
        (line(21, "W", 3, (1, 4), (3, 5)), line(22, "W", 6, (2, 2), (4, 6)))
    )


def test_94_case_spaces_and_prefixes() -> None:
    assert accept("21: w 4 1+3 3+5\n22:W6 6+2 4+2") == ChoiceOrder(
        (line(21, "W", 4, (1, 3), (3, 5)), line(22, "W", 6, (2, 6), (2, 4)))
    )


def test_94_order_within_a_pair_does_not_matter() -> None:
    assert accept("W3 4+1 5+3\nW6 2+2 4+6") == accept("W3 1+4 3+5\nW6 2+2 4+6")


def test_spaces_inside_tokens_are_dropped() -> None:
    expected = accept("W3 1+4 3+5\nW6 2+2 4+6")
    assert accept("W31+43+5\nW 6 2 + 2 4 + 6") == expected
    assert accept("2 1 : W3 1+4 3+5\n22 :W6 2+2,4+6") == expected


def test_quoted_lines_blank_lines_and_signature_are_ignored() -> None:
    text = "> old report line\n\nW3 1+4 3+5\n\n  W6 2+2 4+6  \n-- \nann\nW1 1+1 1+1"
    assert accept(text) == accept("W3 1+4 3+5\nW6 2+2 4+6")


def test_94_wurfel_must_be_a_stored_value_that_shows() -> None:
    assert reject("W5 1+3 3+4\nW6 2+2 4+6") == (
        "round 21: you store 3, 4, 6 and the roll shows 3 and 4, so the Wurfel must be 3 or 4"
    )


def test_94_the_line_must_use_the_dice_of_the_roll() -> None:
    assert reject("W3 1+1 4+5\nW6 2+2 4+6") == (
        "round 21: the roll is 1 3 3 4 5 but your line uses 1 1 3 4 5"
    )


def test_94_no_free_ride_when_a_stored_value_shows() -> None:
    assert reject("F5 1+3 3+4\nW6 2+2 4+6") == (
        "round 21: free ride not allowed; the roll shows your stored values 3, 4"
    )


def test_no_free_ride_with_fewer_than_three_stored_values() -> None:
    state = turn_state(sheet_with({3: 1}), ROLLS_94)
    assert reject("F5 1+3 3+4\nW6 2+2 4+6", state) == (
        "round 21: free ride not allowed; you store fewer than three values, so any die may "
        "be the Wurfel: write W5 instead of F5"
    )


def test_a_wurfel_is_not_allowed_on_a_free_ride_roll() -> None:
    state = turn_state(sheet_with({1: 1, 2: 1, 3: 1}), {21: (4, 4, 5, 5, 6)})
    assert reject("W6 4+4 5+5", state) == (
        "round 21: the roll shows none of your stored values 1, 2, 3, so this is a free "
        "ride: write F6 instead of W6"
    )
    assert accept("F6 4+4 5+5", state) == ChoiceOrder((line(21, "F", 6, (4, 4), (5, 5)),))


def test_the_wurfel_message_lists_three_matches() -> None:
    state = turn_state(SHEET_94, {21: (3, 4, 6, 1, 1)})
    assert reject("W1 1+3 4+6", state) == (
        "round 21: you store 3, 4, 6 and the roll shows 3, 4 and 6, so the Wurfel must be 3, 4 or 6"
    )


def test_the_second_round_is_checked_on_the_sheet_after_the_first() -> None:
    state = turn_state(sheet_with({3: 1, 4: 1}), {21: (1, 2, 3, 4, 5), 22: (1, 2, 3, 4, 5)})
    assert reject("W5 1+2 3+4\nW1 2+3 4+5", state) == (
        "round 22: you store 3, 4, 5 and the roll shows 3, 4 and 5, so the Wurfel must be 3, 4 or 5"
    )


def test_94_only_one_line_means_the_second_is_missing() -> None:
    assert reject("W3 1+4 3+5") == "round 22: line missing"


def test_an_empty_order_misses_the_first_line() -> None:
    assert reject("") == "round 21: line missing"


def test_lines_after_the_round_that_ends_the_game_are_optional_and_ignored() -> None:
    sheet = sheet_with({3: 7, 4: 1, 6: 1})
    state = turn_state(sheet, ROLLS_94)
    assert accept("W3 1+4 3+5", state) == ChoiceOrder((line(21, "W", 3, (1, 4), (3, 5)),))
    # The second line parses but is never played, so its dice are not checked.
    assert accept("W3 1+4 3+5\nW1 1+1 1+1", state).lines[1] == line(22, "W", 1, (1, 1), (1, 1))


def test_too_many_lines() -> None:
    assert reject("W3 1+4 3+5\nW6 2+2 4+6\nW6 2+2 4+6") == (
        "round 23: no such round in this postal turn"
    )


def test_a_prefix_must_match_the_round_of_its_position() -> None:
    assert reject("22: W6 2+2 4+6\n21: W3 1+4 3+5") == (
        "round 21: this line is marked 22: but lines go in round order and line 1 is for round 21"
    )


def test_a_comma_is_not_a_slot() -> None:
    assert reject("21,5: W3 1+4 3+5\nW6 2+2 4+6") == (
        "round 21: this line is marked 215: but lines go in round order and line 1 is for round 21"
    )


def test_an_unreadable_prefix() -> None:
    assert reject("x: W3 1+4 3+5") == (
        "round 21: cannot read the prefix 'x'; write the round number, e.g. 21: W5 1+3 3+4"
    )


def test_an_unreadable_line() -> None:
    assert reject("W3 1+4\nW6 2+2 4+6") == (
        "round 21: cannot read 'w3 1+4'; write W (Wurfel) or F (free ride), the die set "
        "aside and two pairs, e.g. W5 1+3 3+4"
    )


def test_a_prefix_without_a_choice() -> None:
    assert reject("21:\nW6 2+2 4+6") == (
        "round 21: no choice; write W (Wurfel) or F (free ride), the die set aside and two "
        "pairs, e.g. W5 1+3 3+4"
    )


def test_a_number_that_is_not_a_die() -> None:
    assert reject("W3 1+4 3+5\nW6 2+2 4+7") == "round 22: 7 is not a die number; dice show 1 to 6"


# 21 in Arabic-Indic digits, and a full-width 6: int() reads both; an order does not.
ARABIC_21 = "\N{ARABIC-INDIC DIGIT TWO}\N{ARABIC-INDIC DIGIT ONE}"
WIDE_6 = "\N{FULLWIDTH DIGIT SIX}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "²: W3 1+4 3+5\nW6 2+2 4+6",
            "round 21: cannot read the prefix '²'; write the round number, e.g. 21: W5 1+3 3+4",
        ),
        (
            f"{ARABIC_21}: W3 1+4 3+5\nW6 2+2 4+6",
            f"round 21: cannot read the prefix '{ARABIC_21}'; write the round number, "
            "e.g. 21: W5 1+3 3+4",
        ),
        ("W٣ 1+4 3+5\nW6 2+2 4+6", "round 21: '٣' is not a die number; write dice as 1 to 6"),
        (
            f"W3 1+4 3+5\nW6 2+2 4+{WIDE_6}",
            f"round 22: '{WIDE_6}' is not a die number; write dice as 1 to 6",
        ),
    ],
)
def test_numbers_in_other_digits_than_0_to_9_are_refused(text: str, message: str) -> None:
    assert reject(text) == message


@pytest.mark.parametrize(
    ("text", "text_message"),
    [
        (
            "W3 1+4 3+5\nW6 2+2 4+6 double",
            "round 22: cards are only played in the Suppenkasper variant",
        ),
        (
            "flip 2 W5 1+3 3+4\nW6 2+2 4+6",
            "round 21: cards are only played in the Suppenkasper variant",
        ),
        (
            "flip 1 half W3 6+3 4+5\nW6 2+2 4+6",
            "round 21: cards are only played in the Suppenkasper variant",
        ),
        (
            "refuse W3 1+4 3+5\nW6 2+2 4+6",
            "round 21: cards are only played in the Suppenkasper variant",
        ),
        (
            "W3 1+4 3+5\nswap 2 5 W6 2+5 4+6",
            "round 22: cards are only played in the Suppenkasper variant",
        ),
        (
            "W3 1+4 3+5 half\nW6 2+2 4+6",
            "round 21: cards are only played in the Suppenkasper variant",
        ),
        (
            "W3 1+4 3+5\n21.5: SK eat 1 5 5 6 6 W6 1+5 5+6\nW6 2+2 4+6",
            "slot 21.5: cards are only played in the Suppenkasper variant",
        ),
        (
            "W3 1+4 3+5\nW6 2+2 4+6\n22.5: SK eat 1 5 5 6 6 W6 1+5 5+6 half",
            "slot 22.5: cards are only played in the Suppenkasper variant",
        ),
        (
            "23.5: SK eat 1 5 5 6 6 W6 1+5 5+6",
            "slot 23.5: cards are only played in the Suppenkasper variant",
        ),
        (
            "sk eat 1 5 5 6 6 W6 1+5 5+6",
            "round 21: cards are only played in the Suppenkasper variant",
        ),
    ],
)
def test_cr8_card_words_are_errors_in_the_standard_game(text: str, text_message: str) -> None:
    with pytest.raises(OrderError) as excinfo:
        engine.parse(state_94(), 0, text)
    assert message(excinfo) == text_message


def test_94_an_order_from_a_player_whose_game_ended() -> None:
    ended = replace(SHEET_94, active=False, ended_round=19, score=-600)
    state = turn_state(ended, ROLLS_94, others=(Sheet(),))
    expected = "your game ended in round 19; no order is expected from you"
    with pytest.raises(OrderError) as excinfo:
        engine.parse(state, 0, "W3 1+4 3+5")
    assert message(excinfo) == expected
    order = ChoiceOrder((line(21, "W", 3, (1, 4), (3, 5)),))
    with pytest.raises(OrderError) as excinfo:
        engine.submit(state, 0, order, NoDice())
    assert message(excinfo) == expected


def test_an_order_after_the_game_is_over() -> None:
    state = replace(state_94(), finished=True)
    with pytest.raises(OrderError) as excinfo:
        engine.submit(state, 0, ChoiceOrder(()), NoDice())
    assert message(excinfo) == "the game is over; no order is expected from you"


def test_submit_checks_an_order_that_did_not_come_from_parse() -> None:
    order = ChoiceOrder((line(22, "W", 6, (2, 2), (4, 6)), line(21, "W", 3, (1, 4), (3, 5))))
    with pytest.raises(OrderError) as excinfo:
        engine.submit(state_94(), 0, order, NoDice())
    assert message(excinfo) == "round 21: this line is marked for round 22"
    with_sk = ChoiceOrder(
        accept("W3 1+4 3+5\nW6 2+2 4+6").lines,
        SkLine(21, (1, 5, 5, 6, 6), Choice("W", 6, (1, 5), (5, 6))),
    )
    with pytest.raises(OrderError) as excinfo:
        engine.submit(state_94(), 0, with_sk, NoDice())
    assert message(excinfo) == "slot 21.5: cards are only played in the Suppenkasper variant"


def test_a_rejected_order_changes_nothing() -> None:
    state = state_94()
    state, _ = engine.submit(state, 0, engine.parse(state, 0, "W3 1+4 3+5\nW6 2+2 4+6"), NoDice())
    before = state
    with pytest.raises(OrderError):
        engine.submit(state, 0, engine.parse(state, 0, "W3 1+4 3+5"), NoDice())
    assert state == before


def test_a_new_order_replaces_the_sealed_one_and_gets_a_private_receipt() -> None:
    state = state_94()
    state, _ = engine.submit(state, 0, engine.parse(state, 0, "W3 1+4 3+5\nW6 2+2 4+6"), NoDice())
    second = engine.parse(state, 0, "W4 1+3 3+5\nW4 2+2 6+6")
    state, events = engine.submit(state, 0, second, NoDice())
    assert state.orders[0] == second
    assert events == [
        Event("order received for rounds 21-22:\n21: W4 1+3 3+5\n22: W4 2+2 6+6", to=(0,))
    ]


def test_canonical_text_parses_back_to_the_same_order() -> None:
    state = state_94()
    order = engine.parse(state, 0, "w 4 3+1 5 + 3\n22:W6 6+2 4+2")
    text = engine.canonical(state, 0, order)
    assert text == "21: W4 1+3 3+5\n22: W6 2+6 2+4"
    assert engine.parse(state, 0, text) == order


def test_order_json_round_trip() -> None:
    order = accept("W3 1+4 3+5\nW6 2+2 4+6")
    data = json.loads(json.dumps(engine.order_to_json(order)))
    assert engine.order_from_json(data) == order
    with_sk = ChoiceOrder(order.lines, SkLine(21, (1, 5, 5, 6, 6), Choice("W", 6, (1, 5), (5, 6))))
    assert engine.order_from_json(json.loads(json.dumps(engine.order_to_json(with_sk)))) == with_sk


# --- section 5: the NMR default ------------------------------------------------------------


def test_nmr_ties_go_to_the_smaller_wurfel_then_the_smaller_lower_sum() -> None:
    # Every choice scores -400; W1 is the smallest value; of its pairings 4+9 has the
    # smallest lower sum.
    assert nmr_choice(Sheet(), (3, 1, 4, 1, 5)) == Choice("W", 1, (1, 3), (4, 5))


def test_nmr_ties_between_equal_pairs_go_to_the_smaller_wurfel() -> None:
    # W2 1+6 3+4 (7 twice) and W6 1+4 2+3 (5 twice) both score -200.
    assert nmr_choice(Sheet(), (1, 2, 3, 4, 6)) == Choice("W", 2, (1, 6), (3, 4))


def test_nmr_prefers_the_higher_score_over_the_smaller_wurfel() -> None:
    # W5 2+2 2+2 records 4 twice (-200); W2 2+2 2+5 records 4 and 7 (-400).
    assert nmr_choice(Sheet(), (2, 2, 2, 2, 5)) == Choice("W", 5, (2, 2), (2, 2))


def test_nmr_scores_as_if_the_game_ended_after_the_round() -> None:
    sheet = sheet_with(counts={7: 5})
    assert nmr_choice(sheet, (3, 4, 3, 4, 1)) == Choice("W", 1, (3, 4), (3, 4))


def test_nmr_follows_w2() -> None:
    # W3 gives three -400 pairings; W4 1+5 3+3 records 6 twice (-200).
    assert nmr_choice(SHEET_94, (1, 3, 3, 4, 5)) == Choice("W", 4, (1, 5), (3, 3))


def test_nmr_free_rides_under_w3_with_the_smaller_discard_on_a_tie() -> None:
    # F4 4+6 5+5 and F6 4+4 5+5 both score -200; F4 wins on the smaller value.
    sheet = sheet_with({1: 1, 2: 1, 3: 1})
    assert nmr_choice(sheet, (4, 4, 5, 5, 6)) == Choice("F", 4, (4, 6), (5, 5))


def test_nmr_writes_the_lowest_die_with_the_lowest_die_it_can() -> None:
    # 3 3 4 4 as 3+4 3+4: the written pairing puts the lowest die first, with a 4.
    assert nmr_choice(sheet_with(counts={7: 5}), (4, 3, 4, 3, 6)) == Choice("W", 6, (3, 4), (3, 4))


def test_nmr_default_plays_each_round_on_the_sheet_after_the_last() -> None:
    # On an empty sheet round 22 would be W1 2+5 3+4 (7 twice, -200); after round 21
    # recorded 4 and 9, W2 1+3 4+5 (4 and 9 again, -400) is best.
    state = turn_state(Sheet(), {21: (3, 1, 4, 1, 5), 22: (1, 3, 4, 5, 2)})
    assert nmr_choice(Sheet(), (1, 3, 4, 5, 2)) == Choice("W", 1, (2, 5), (3, 4))
    order = engine.default(state, 0)
    assert engine.canonical(state, 0, order) == "21: W1 1+3 4+5\n22: W2 1+3 4+5"


def test_nmr_default_stops_at_the_round_that_ends_the_game() -> None:
    state = turn_state(sheet_with({6: 7}), {21: (6, 6, 6, 6, 6), 22: (1, 2, 3, 4, 5)})
    assert engine.default(state, 0) == ChoiceOrder((line(21, "W", 6, (6, 6), (6, 6)),))


def test_the_nmr_default_is_worked_out_once_per_state_and_seat(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    state = turn_state(Sheet(), {21: (3, 1, 4, 1, 5), 22: (1, 3, 4, 5, 2)}, others=(Sheet(),))
    calls: list[int] = []
    work_out = ChoiceEngine._default

    def counted(self: ChoiceEngine, state: ChoiceState, seat: int) -> ChoiceOrder:
        calls.append(seat)
        return work_out(self, state, seat)

    monkeypatch.setattr(ChoiceEngine, "_default", counted)
    first = engine.default(state, 0)
    assert engine.default(state, 0) is first
    # What the postal layer records is what resolve plays: both seats missing, each
    # worked out once, and resolve asks for neither again.
    engine.default(state, 1)
    engine.resolve(state, ScriptedDice([6] * 10))
    assert calls == [0, 1]
    # Another state (the same game one step on, or a copy) works it out again.
    same = replace(state, turn=state.turn)
    assert engine.default(same, 0) == first
    assert calls == [0, 1, 0]
    assert engine.state_to_json(same) == engine.state_to_json(state)
    assert same == state


def test_resolve_plays_the_nmr_default_for_a_missing_order() -> None:
    dice = ScriptedDice([6] * 10)
    state = turn_state(Sheet(), {21: (3, 1, 4, 1, 5), 22: (1, 3, 4, 5, 2)}, others=(Sheet(),))
    state, _ = engine.submit(state, 1, engine.parse(state, 1, "W5 1+1 3+4\nW2 1+3 4+5"), NoDice())
    state, events = engine.resolve(state, dice)
    assert events == [
        Event("ann sent no order: the NMR default is played"),
        Event("ann, round 21: W1 1+3 4+5 (sums 4, 9)"),
        Event("bob, round 21: W5 1+1 3+4 (sums 2, 7)"),
        Event("ann, round 22: W2 1+3 4+5 (sums 4, 9)"),
        Event("bob, round 22: W2 1+3 4+5 (sums 4, 9)"),
        Event("postal turn 12, rounds 23-24: round 23 rolls 6 6 6 6 6; round 24 rolls 6 6 6 6 6"),
    ]
    assert state.sheets[0].counts == sheet_with(counts={4: 2, 9: 2}).counts
    assert state.sheets[0].stored == ((1, 1), (2, 1))
    assert [(p.seat, p.round, p.default) for p in state.history] == [
        (0, 21, True),
        (1, 21, False),
        (0, 22, True),
        (1, 22, False),
    ]


# --- a full game ---------------------------------------------------------------------------

FULL_GAME_DICE = [1, 6, 6, 6, 6] * 3 + [6, 6, 6, 6, 6] + [1, 6, 6, 6, 6] + [6, 6, 6, 6, 6]


def play_full_game(tiebreak: str) -> tuple[ChoiceState, list[list[Event]], ScriptedDice]:
    """Three players, threshold 3. ann ends in round 3 with twelve 6 times (100); bob ends in
    round 5 with 12 eight times and 7 twice (300 - 200 = 100); cy ends in round 3 with 7 and
    12 three times each (-400)."""
    dice = ScriptedDice(FULL_GAME_DICE)
    options = engine.options({"end_threshold": 3, "tiebreak": tiebreak})
    state, opened = engine.start(options, ["ann", "bob", "cy"], dice)
    log = [opened]
    orders = [
        {
            0: "W1 6+6 6+6\nW1 6+6 6+6",
            1: "W1 6+6 6+6\nW1 6+6 6+6",
            2: "W6 1+6 6+6\nW6 1+6 6+6",
        },
        {0: "W1 6+6 6+6", 1: "W6 1+6 6+6\nW6 6+6 6+6", 2: "W6 1+6 6+6"},
        {1: "W6 1+6 6+6"},
    ]
    for turn_orders in orders:
        for seat, text in turn_orders.items():
            state, _ = engine.submit(state, seat, engine.parse(state, seat, text), NoDice())
            assert roundtrip_state(state) == state
        state, events = engine.resolve(state, dice)
        assert roundtrip_state(state) == state
        log.append(events)
    return state, log, dice


def test_full_game_to_the_end_with_shared_places() -> None:
    state, log, dice = play_full_game("shared")
    assert state.finished
    assert dice.position == 30
    assert [(s.ended_round, s.score) for s in state.sheets] == [(3, 100), (5, 100), (3, -400)]
    assert state.sheets[1].counts == sheet_with(counts={7: 2, 12: 8}).counts
    assert state.sheets[1].stored == ((1, 2), (6, 3))
    assert engine.standings(state) == [
        Standing(0, 1, 100),
        Standing(1, 1, 100),
        Standing(2, 3, -400),
    ]
    assert engine.prompts(state) == []
    assert log[2] == [
        Event("ann, round 3: W1 6+6 6+6 (sums 12, 12)"),
        Event("bob, round 3: W6 1+6 6+6 (sums 7, 12)"),
        Event("cy, round 3: W6 1+6 6+6 (sums 7, 12)"),
        Event("ann's game ends in round 3 with a score of 100"),
        Event("cy's game ends in round 3 with a score of -400"),
        Event("bob, round 4: W6 6+6 6+6 (sums 12, 12)"),
        Event("postal turn 3, rounds 5-6: round 5 rolls 1 6 6 6 6; round 6 rolls 6 6 6 6 6"),
    ]
    assert log[3] == [
        Event("bob, round 5: W6 1+6 6+6 (sums 7, 12)"),
        Event("bob's game ends in round 5 with a score of 100"),
        Event("the game is over: 1. ann (100); 1. bob (100); 3. cy (-400)"),
    ]


def test_full_game_fewer_rounds_tiebreak() -> None:
    state, _, _ = play_full_game("fewer_rounds")
    assert engine.standings(state) == [
        Standing(0, 1, 100),
        Standing(1, 2, 100),
        Standing(2, 3, -400),
    ]


def test_orders_are_not_accepted_after_the_game_ends() -> None:
    state, _, _ = play_full_game("shared")
    with pytest.raises(OrderError) as excinfo:
        engine.parse(state, 1, "W6 6+6 6+6")
    assert message(excinfo) == "your game ended in round 5; no order is expected from you"


# --- view and JSON -------------------------------------------------------------------------


def test_view_hides_other_seats_sealed_orders() -> None:
    state = turn_state(Sheet(), ROLLS_94, others=(Sheet(),))
    state, _ = engine.submit(state, 0, engine.parse(state, 0, "W1 3+3 4+5\nW2 2+4 6+6"), NoDice())
    mine = engine.view(state, 0)
    assert mine["you"] == {
        "seat": 0,
        "name": "ann",
        "has_order": True,
        "order": "21: W1 3+3 4+5\n22: W2 2+4 6+6",
    }
    assert engine.view(state, 1)["you"] == {
        "seat": 1,
        "name": "bob",
        "has_order": False,
        "order": None,
    }
    public = engine.view(state, None)
    assert "you" not in public
    assert "W1 3+3 4+5" not in json.dumps(public)
    assert "W1 3+3 4+5" not in json.dumps(engine.view(state, 1))


def test_view_of_a_running_game() -> None:
    state = turn_state(sheet_with({3: 1, 4: 2}, counts={7: 6, 2: 1}), ROLLS_94)
    view = engine.view(state, None)
    assert view == {
        "game": "choice",
        "status": "running",
        "options": {
            "variant": "standard",
            "rolls_per_turn": 2,
            "end_threshold": 8,
            "cards": ["flip", "half", "double", "refuse", "swap", "sk"],
            "free_ride_to_plate": False,
            "tiebreak": "shared",
            "round_cap": 200,
        },
        "turn": 11,
        "rounds": [{"round": 21, "roll": [1, 3, 3, 4, 5]}, {"round": 22, "roll": [2, 2, 4, 6, 6]}],
        "players": [
            {
                "seat": 0,
                "name": "ann",
                "active": True,
                "ended_round": None,
                "score": None,
                "running_score": -170,
                "counts": {str(s): {2: 1, 7: 6}.get(s, 0) for s in range(2, 13)},
                "stored": [{"value": 3, "count": 1}, {"value": 4, "count": 2}],
                "plate": [],
                "cards_used": [],
            }
        ],
        "history": [],
    }
    assert json.loads(json.dumps(view)) == view


def test_view_of_a_finished_game_has_history_and_standings() -> None:
    state, _, _ = play_full_game("shared")
    view = engine.view(state, None)
    assert view["status"] == "finished"
    assert view["rounds"] == []
    assert view["standings"] == [
        {"player": "ann", "place": 1, "score": 100},
        {"player": "bob", "place": 1, "score": 100},
        {"player": "cy", "place": 3, "score": -400},
    ]
    assert [entry["round"] for entry in view["history"]] == [1, 2, 3, 4, 5, 6]
    assert view["history"][4] == {
        "round": 5,
        "roll": [1, 6, 6, 6, 6],
        "plays": [
            {"seat": 1, "player": "bob", "line": "W6 1+6 6+6", "sums": [7, 12], "default": False}
        ],
    }
    assert view["history"][5]["plays"] == []


def test_standings_are_none_while_running() -> None:
    assert engine.standings(state_94()) is None
    assert "standings" not in engine.view(state_94(), None)


def test_state_json_round_trip() -> None:
    state = turn_state(
        sheet_with({3: 1, 4: 2}, counts={7: 6}),
        ROLLS_94,
        options=engine.options({"rolls_per_turn": "decreasing"}),
        others=(replace(Sheet(), active=False, ended_round=4, score=-2200),),
    )
    state, _ = engine.submit(state, 0, engine.parse(state, 0, "W3 1+4 3+5\nW6 2+2 4+6"), NoDice())
    assert roundtrip_state(state) == state
    finished, _, _ = play_full_game("fewer_rounds")
    assert roundtrip_state(finished) == finished
