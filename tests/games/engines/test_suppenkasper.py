"""Choice, Suppenkasper variant: the cards, the plate and the Suppen-Kasper extra round
(rules/choice.md sections 7, 9 and 11.1), order checking for a whole postal turn, the
reports and the view."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace

import pytest

from games.engines.base import Event, OrderError, Standing
from games.engines.choice.rules import (
    Card,
    Choice,
    ChoiceEngine,
    ChoiceOptions,
    ChoiceOrder,
    ChoiceState,
    Round,
    RoundLine,
    Sheet,
    SkLine,
    play_round,
    play_sk,
    round_outcome,
    sk_outcome,
    wurfel_rule,
)
from games.engines.dice import NoDice, ScriptedDice

engine = ChoiceEngine()
SK = engine.options({"variant": "suppenkasper"})
ALL_CARDS = ["flip", "half", "double", "refuse", "swap", "sk"]


def sheet_with(
    stored: Mapping[int, int] | None = None,
    counts: Mapping[int, int] | None = None,
    plate: Sequence[int] = (),
    cards_used: tuple[str, ...] = (),
) -> Sheet:
    counts = counts or {}
    return Sheet(
        counts=tuple(counts.get(total, 0) for total in range(2, 13)),
        stored=tuple((stored or {}).items()),
        plate=tuple(sorted(plate)),
        cards_used=cards_used,
    )


def turn_state(
    sheet: Sheet,
    rolls: Mapping[int, tuple[int, ...]],
    options: ChoiceOptions = SK,
    others: tuple[Sheet, ...] = (),
) -> ChoiceState:
    """A running Suppenkasper game: seat 0 holds ``sheet``; the current rounds are ``rolls``."""
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


def accept(text: str, state: ChoiceState) -> ChoiceOrder:
    order = engine.parse(state, 0, text)
    new_state, _ = engine.submit(state, 0, order, NoDice())
    assert new_state.orders[0] == order
    return order


def reject(text: str, state: ChoiceState) -> str:
    with pytest.raises(OrderError) as excinfo:
        engine.submit(state, 0, engine.parse(state, 0, text), NoDice())
    return excinfo.value.message


def line(text: str, number: int = 21, options: ChoiceOptions = SK) -> RoundLine:
    """A round line read by the engine's parser (syntax only)."""
    order = engine.parse(turn_state(Sheet(), {number: (1, 1, 1, 1, 1)}, options), 0, text)
    return order.lines[0]


def choice(kind: str, value: int, first: tuple[int, int], second: tuple[int, int]) -> Choice:
    return Choice(kind, value, first, second)


def resolve(state: ChoiceState) -> tuple[ChoiceState, list[Event]]:
    """Resolve the postal turn; the next turn (two rounds) rolls ten sixes."""
    dice = ScriptedDice([6] * 10)
    state, events = engine.resolve(state, dice)
    assert dice.position == (0 if state.finished else 10)
    return state, events


# --- section 9.4: the postal turn of rounds 21 and 22 -------------------------------------

ROLLS_94 = {21: (1, 3, 3, 4, 5), 22: (2, 2, 4, 6, 6)}
SHEET_94 = sheet_with({3: 1, 4: 1, 6: 1}, plate=[1, 5, 5, 6])


def state_94() -> ChoiceState:
    return turn_state(SHEET_94, ROLLS_94)


def test_94_double_portion_records_the_first_sum_twice_and_plates_the_second_pair() -> None:
    state = state_94()
    order = accept("W3 1+4 3+5\nW6 2+2 4+6 double", state)
    assert order.lines[1] == RoundLine(22, choice("W", 6, (2, 2), (4, 6)), Card("double"))
    state, _ = engine.submit(state, 0, order, NoDice())
    state, events = resolve(state)
    assert events[:2] == [
        Event("ann, round 21: W3 1+4 3+5 (sums 5, 8)"),
        Event("ann, round 22: double W6 2+2 4+6 (sums 4, 4); 4 and 6 onto the plate"),
    ]
    ann = state.sheets[0]
    assert ann.count(4) == 2
    assert ann.count(10) == 0
    assert ann.plate == (1, 4, 5, 5, 6, 6)
    assert ann.cards_used == ("double",)
    assert ann.stored == ((3, 2), (4, 1), (6, 2))


def test_94_suppen_kasper_needs_five_numbers_on_the_plate_at_its_slot() -> None:
    text = "W3 1+4 3+5\n21.5: SK eat 1 5 5 6 6 W6 1+5 5+6\nW6 2+2 4+6"
    assert reject(text, state_94()) == (
        "slot 21.5: Suppen-Kasper needs 5 numbers on your plate; it will hold 4"
    )


def test_94_the_same_suppen_kasper_line_is_valid_once_the_plate_holds_its_numbers() -> None:
    # Double Portion in round 22 puts 4 and 6 on the plate: at 22.5 it holds 1 4 5 5 6 6.
    state = state_94()
    order = accept("W3 1+4 3+5\nW6 2+2 4+6 double\n22.5: SK eat 1 5 5 6 6 W6 1+5 5+6", state)
    assert order.sk == SkLine(22, (1, 5, 5, 6, 6), choice("W", 6, (1, 5), (5, 6)))
    state, _ = engine.submit(state, 0, order, NoDice())
    state, events = resolve(state)
    assert events[2] == Event(
        "ann, slot 22.5: SK eat 1 5 5 6 6 W6 1+5 5+6 (sums 6, 11); the dog gets 4"
    )
    ann = state.sheets[0]
    assert ann.plate == ()
    assert ann.cards_used == ("double", "sk")
    assert ann.stored == ((3, 2), (4, 1), (6, 3))


def test_94_the_roll_shows_no_die_to_flip() -> None:
    assert reject("flip 2 W5 1+3 3+4\nW6 2+2 4+6", state_94()) == (
        "round 21: the roll shows no 2 to flip"
    )


def test_94_only_one_card_per_round() -> None:
    assert reject("flip 1 half W3 6+3 4+5\nW6 2+2 4+6", state_94()) == (
        "round 21: only one card per round"
    )
    assert reject("W3 1+4 3+5\ndouble W6 2+2 4+6 refuse", state_94()) == (
        "round 22: only one card per round"
    )


def test_94_no_other_card_in_the_suppen_kasper_round() -> None:
    text = "W3 1+4 3+5\nW6 2+2 4+6\n22.5: SK eat 1 5 5 6 6 W6 1+5 5+6 half"
    assert reject(text, state_94()) == "slot 22.5: no other card in the Suppen-Kasper round"


def test_94_a_slot_outside_the_postal_turn() -> None:
    assert reject("W3 1+4 3+5\nW6 2+2 4+6\n23.5: SK eat ...", state_94()) == (
        "slot 23.5 is not in this postal turn (allowed: 20.5, 21.5, 22.5)"
    )


# 21 in Arabic-Indic digits and full-width digits: int() reads them; an order does not.
ARABIC_21 = "\N{ARABIC-INDIC DIGIT TWO}\N{ARABIC-INDIC DIGIT ONE}"
WIDE_2, WIDE_6 = "\N{FULLWIDTH DIGIT TWO}", "\N{FULLWIDTH DIGIT SIX}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "flip ٣ W4 1+3 3+5\nW6 2+2 4+6",
            "round 21: '٣' is not a die number; write dice as 1 to 6",
        ),
        (
            f"W3 1+4 3+5\nswap {WIDE_2} 5 W6 2+5 4+6",
            f"round 22: '{WIDE_2}' is not a die number; write dice as 1 to 6",
        ),
        (
            f"W3 1+4 3+5\nW6 2+2 4+6\n21.5: SK eat 1 5 5 6 {WIDE_6} W6 1+5 5+6",
            f"slot 21.5: '{WIDE_6}' is not a die number; write dice as 1 to 6",
        ),
        (
            f"W3 1+4 3+5\n{ARABIC_21}.5: SK eat 1 5 5 6 6 W6 1+5 5+6\nW6 2+2 4+6",
            f"round 22: cannot read the prefix '{ARABIC_21}.5'; write the round number, "
            "e.g. 22: W5 1+3 3+4",
        ),
    ],
)
def test_94_card_and_slot_numbers_in_other_digits_are_refused(text: str, message: str) -> None:
    assert reject(text, state_94()) == message


def test_94_rows_without_cards_read_the_same_in_the_variant() -> None:
    state = state_94()
    assert accept("21: w 4 1+3 3+5\n22:W6 6+2 4+2", state).lines[0].card is None
    assert reject("W5 1+3 3+4\nW6 2+2 4+6", state) == (
        "round 21: you store 3, 4, 6 and the roll shows 3 and 4, so the Wurfel must be 3 or 4"
    )
    assert reject("W3 1+4 3+5", state) == "round 22: line missing"


# --- C13-C16 -------------------------------------------------------------------------------


@pytest.mark.parametrize("slot", ["20.5", "21.5", "22.5"])
def test_c13_the_legal_slots_of_rounds_21_and_22(slot: str) -> None:
    state = turn_state(sheet_with(plate=[1, 2, 3, 4, 5]), ROLLS_94)
    order = accept(f"W1 3+3 4+5\nW2 2+4 6+6\n{slot}: SK eat 1 2 3 4 5 W1 2+3 4+5", state)
    assert order.sk == SkLine(int(slot[:2]), (1, 2, 3, 4, 5), choice("W", 1, (2, 3), (4, 5)))


@pytest.mark.parametrize("slot", ["19.5", "23.5", "0.5", "100.5"])
def test_c13_any_other_slot_is_rejected(slot: str) -> None:
    state = turn_state(sheet_with(plate=[1, 2, 3, 4, 5]), ROLLS_94)
    with pytest.raises(OrderError) as excinfo:
        engine.parse(state, 0, f"W1 3+3 4+5\nW1 2+4 6+6\n{slot}: SK eat 1 2 3 4 5 W1 2+3 4+5")
    assert excinfo.value.message == (
        f"slot {slot} is not in this postal turn (allowed: 20.5, 21.5, 22.5)"
    )


def test_c14_the_rest_of_the_plate_goes_to_the_dog() -> None:
    sheet = sheet_with({4: 1, 5: 1, 6: 1}, plate=[2, 2, 5, 6, 6, 1, 3])
    sk = SkLine(21, (2, 5, 6, 6, 3), choice("W", 6, (2, 5), (3, 6)))
    outcome = sk_outcome(sheet, sk, SK)
    assert outcome.dog == (1, 2)
    assert outcome.sums == (7, 9)
    assert outcome.sheet.plate == ()
    assert outcome.sheet.stored == ((4, 1), (5, 1), (6, 2))
    assert outcome.sheet.cards_used == ("sk",)
    # The five numbers are played as the roll 2 5 6 6 3 under W1-W3.
    assert wurfel_rule(sheet, sk.eat) == ("W2", (5, 6))
    with pytest.raises(OrderError) as excinfo:
        play_sk(sheet, replace(sk, choice=choice("W", 2, (5, 6), (3, 6))), SK)
    assert excinfo.value.message == (
        "slot 21.5: you store 4, 5, 6 and the roll shows 5 and 6, so the Wurfel must be 5 or 6"
    )


def test_c15_four_numbers_on_the_plate_are_not_enough() -> None:
    state = turn_state(sheet_with(plate=[4, 4, 1, 6]), ROLLS_94)
    text = "20.5: SK eat 4 4 1 6 6 W1 4+4 6+6\nW1 3+3 4+5\nW1 2+4 6+6"
    assert reject(text, state) == (
        "slot 20.5: Suppen-Kasper needs 5 numbers on your plate; it will hold 4"
    )


def test_c15_an_empty_plate() -> None:
    state = turn_state(Sheet(), ROLLS_94)
    text = "20.5: SK eat 4 4 1 6 6 W1 4+4 6+6\nW1 3+3 4+5\nW1 2+4 6+6"
    assert reject(text, state) == (
        "slot 20.5: Suppen-Kasper needs 5 numbers on your plate; it will be empty"
    )


def test_the_eaten_numbers_must_be_on_the_plate() -> None:
    state = turn_state(sheet_with(plate=[1, 4, 5, 6, 6]), ROLLS_94)
    text = "20.5: SK eat 1 5 5 6 6 W1 5+5 6+6\nW1 3+3 4+5\nW1 2+4 6+6"
    assert (
        reject(text, state) == "slot 20.5: you cannot eat 1 5 5 6 6; your plate will hold 1 4 5 6 6"
    )


def test_c16_a_stored_value_reaching_seven_ends_the_game() -> None:
    assert SK.end_threshold == 7
    roll = (6, 6, 6, 6, 6)
    six = line("W6 6+6 6+6")
    assert play_round(sheet_with({6: 5}), roll, six, SK).active
    after = play_round(sheet_with({6: 6}), roll, six, SK)
    assert (after.active, after.ended_round, after.ended_slot) == (False, 21, False)
    assert after.stored == ((6, 7),)


# --- section 11.1: one example per card ----------------------------------------------------


def test_k1_upside_down_creates_a_match() -> None:
    sheet = sheet_with({2: 1, 4: 3, 6: 2})
    roll = (1, 3, 3, 5, 5)
    outcome = round_outcome(sheet, roll, line("flip 5 W2 1+3 3+5"), SK)
    assert outcome.sums == (4, 8)
    assert outcome.onto_plate == (5,)
    assert outcome.sheet.stored == ((2, 2), (4, 3), (6, 2))
    assert outcome.sheet.plate == (5,)
    assert outcome.sheet.cards_used == ("flip",)
    with pytest.raises(OrderError) as excinfo:
        play_round(sheet, roll, line("flip 5 F2 1+3 3+5"), SK)
    assert excinfo.value.message == (
        "round 21: free ride not allowed; the roll shows your stored values 2"
    )
    # Without the card: a free ride.
    assert wurfel_rule(sheet, roll) == ("W3", (1, 3, 5))
    assert play_round(sheet, roll, line("F5 1+3 3+5"), SK).plate == ()


def test_k2_upside_down_avoids_the_end() -> None:
    sheet = sheet_with({2: 1, 5: 2, 6: 6})
    roll = (6, 1, 1, 3, 4)
    ended = play_round(sheet, roll, line("W6 1+1 3+4"), SK)
    assert (ended.active, ended.ended_round) == (False, 21)
    outcome = round_outcome(sheet, roll, line("flip 6 F1 1+1 3+4"), SK)
    assert outcome.sums == (2, 7)
    assert outcome.sheet.plate == (6,)
    assert outcome.sheet.stored == sheet.stored
    assert outcome.sheet.active


def test_k3_half_portion() -> None:
    sheet = sheet_with({4: 2})
    outcome = round_outcome(sheet, (2, 2, 4, 6, 6), line("half W4 6+6 2+2"), SK)
    assert outcome.sums == (12,)
    assert outcome.sheet.stored == ((4, 3),)
    assert outcome.sheet.counts == sheet_with(counts={12: 1}).counts
    assert outcome.sheet.plate == (2, 2)
    assert outcome.onto_plate == (2, 2)


def test_k4_double_portion() -> None:
    sheet = sheet_with({4: 2})
    outcome = round_outcome(sheet, (2, 2, 4, 6, 6), line("W4 6+6 2+2 double"), SK)
    assert outcome.sums == (12, 12)
    assert outcome.sheet.stored == ((4, 3),)
    assert outcome.sheet.counts == sheet_with(counts={12: 2}).counts
    assert outcome.sheet.plate == (2, 2)


def test_k5_refusal_stores_nothing_and_plates_the_wurfel() -> None:
    sheet = sheet_with({3: 6, 1: 2, 5: 1})
    roll = (3, 3, 3, 4, 6)
    ended = play_round(sheet, roll, line("W3 3+4 3+6"), SK)
    assert (ended.active, ended.ended_round) == (False, 21)
    outcome = round_outcome(sheet, roll, line("refuse W3 3+4 3+6"), SK)
    assert outcome.sums == (7, 9)
    assert outcome.sheet.stored == sheet.stored
    assert outcome.sheet.plate == (3,)
    assert outcome.sheet.counts == sheet_with(counts={7: 1, 9: 1}).counts
    assert outcome.sheet.active


def test_k5_refusal_of_a_wurfel_that_is_not_legal() -> None:
    sheet = sheet_with({3: 6, 1: 2, 5: 1})
    with pytest.raises(OrderError) as excinfo:
        play_round(sheet, (3, 3, 3, 4, 6), line("refuse W4 3+3 3+6"), SK)
    assert excinfo.value.message == (
        "round 21: you store 1, 3, 5 and the roll shows 3, so the Wurfel must be 3"
    )


def test_k5_nothing_to_refuse_on_a_free_ride() -> None:
    sheet = sheet_with({3: 6, 1: 2, 5: 1})
    with pytest.raises(OrderError) as excinfo:
        play_round(sheet, (2, 2, 4, 4, 6), line("refuse F6 2+2 4+4"), SK)
    assert excinfo.value.message == (
        "round 21: nothing to refuse on a free ride; refuse goes with a Wurfel, "
        "e.g. refuse W5 1+3 3+4"
    )


def test_k6_from_the_plate() -> None:
    sheet = sheet_with({2: 1, 4: 1, 6: 1}, plate=[1, 4, 6])
    roll = (1, 1, 3, 3, 5)
    outcome = round_outcome(sheet, roll, line("swap 5 6 W6 1+1 3+3"), SK)
    assert outcome.sheet.plate == (1, 4, 5)
    assert (outcome.off_plate, outcome.onto_plate) == ((6,), (5,))
    assert outcome.sheet.stored == ((2, 1), (4, 1), (6, 2))
    assert outcome.sums == (2, 6)
    with pytest.raises(OrderError) as excinfo:
        play_round(sheet, roll, line("swap 5 2 W2 1+1 3+3"), SK)
    assert excinfo.value.message == "round 21: swap 5 2 needs a 2 on your plate; it will hold 1 4 6"
    assert wurfel_rule(sheet, roll) == ("W3", (1, 3, 5))


K7_SHEET = sheet_with({4: 1, 5: 1, 6: 1}, plate=[1, 2, 2, 2, 5, 6])
K7_ROLLS = {21: (3, 4, 4, 5, 5), 22: (6, 6, 1, 2, 3)}
K7_ORDER = "swap 3 6 W6 4+4 5+5\n21.5: SK eat 1 2 2 2 3 F1 2+2 2+3\nW6 1+2 3+6"


def test_k7_suppen_kasper_between_two_rounds() -> None:
    # Round 21 swaps the 3 for the plate's 6, so after it the plate is [1, 2, 2, 2, 3, 5].
    state = turn_state(K7_SHEET, K7_ROLLS)
    order = accept(K7_ORDER, state)
    state, _ = engine.submit(state, 0, order, NoDice())
    state, events = resolve(state)
    assert events == [
        Event("ann, round 21: swap 3 6 W6 4+4 5+5 (sums 8, 10); 6 off the plate; 3 onto the plate"),
        Event("ann, slot 21.5: SK eat 1 2 2 2 3 F1 2+2 2+3 (sums 4, 5); the dog gets 5"),
        Event("ann, round 22: W6 1+2 3+6 (sums 3, 9)"),
        Event("postal turn 12, rounds 23-24: round 23 rolls 6 6 6 6 6; round 24 rolls 6 6 6 6 6"),
    ]
    ann = state.sheets[0]
    assert ann.plate == ()
    assert ann.stored == ((4, 1), (5, 1), (6, 3))
    assert ann.cards_used == ("swap", "sk")
    assert ann.counts == sheet_with(counts={3: 1, 4: 1, 5: 1, 8: 1, 9: 1, 10: 1}).counts
    assert [(p.round, p.slot, p.card, p.sums) for p in state.history] == [
        (21, False, "swap", (8, 10)),
        (21, True, "sk", (4, 5)),
        (22, False, None, (3, 9)),
    ]
    assert roundtrip_state(state) == state


def test_k7_history_shows_the_extra_round_as_21_5() -> None:
    state = turn_state(K7_SHEET, K7_ROLLS)
    state, _ = engine.submit(state, 0, engine.parse(state, 0, K7_ORDER), NoDice())
    state, _ = resolve(state)
    history = engine.view(state, None)["history"]
    assert [entry["round"] for entry in history] == [21, "21.5", 22]
    assert history[1] == {
        "round": "21.5",
        "roll": None,
        "plays": [
            {
                "seat": 0,
                "player": "ann",
                "line": "SK eat 1 2 2 2 3 F1 2+2 2+3",
                "sums": [4, 5],
                "default": False,
                "card": "sk",
                "slot": True,
                "onto_plate": [],
                "off_plate": [],
                "dog": [5],
            }
        ],
    }
    assert history[0]["plays"][0]["card"] == "swap"
    assert history[0]["plays"][0]["onto_plate"] == [3]
    assert history[0]["plays"][0]["off_plate"] == [6]
    assert history[2]["plays"][0]["card"] is None


K8_SHEET = sheet_with({6: 6, 2: 1, 3: 1}, plate=[6, 6, 1, 1, 2])


def test_k8_suppen_kasper_ends_the_game_and_later_lines_are_ignored() -> None:
    state = turn_state(K8_SHEET, ROLLS_94, others=(Sheet(),))
    # The lines for rounds 21 and 22 are never played: not checked, their cards not used.
    text = "20.5: SK eat 6 6 1 1 2 W6 6+1 1+2\nflip 4 W1 1+1 1+1\ndouble W1 1+1 1+1"
    order = accept(text, state)
    state, _ = engine.submit(state, 0, order, NoDice())
    state, _ = engine.submit(state, 1, engine.parse(state, 1, "W1 3+3 4+5\nW2 2+4 6+6"), NoDice())
    state, events = resolve(state)
    assert events[:2] == [
        Event("ann, slot 20.5: SK eat 6 6 1 1 2 W6 1+6 1+2 (sums 7, 3)"),
        Event("ann's game ends in slot 20.5 with a score of -400"),
    ]
    ann = state.sheets[0]
    assert (ann.active, ann.ended_round, ann.ended_slot, ann.score) == (False, 20, True, -400)
    assert ann.stored == ((6, 7), (2, 1), (3, 1))
    assert ann.cards_used == ("sk",)
    assert ann.plate == ()
    assert [(p.seat, p.round, p.slot) for p in state.history] == [
        (0, 20, True),
        (1, 21, False),
        (1, 22, False),
    ]
    with pytest.raises(OrderError) as excinfo:
        engine.parse(state, 0, "W6 6+6 6+6\nW6 6+6 6+6")
    assert excinfo.value.message == "your game ended in slot 20.5; no order is expected from you"


def test_k8_the_suppen_kasper_line_alone_is_a_whole_order() -> None:
    state = turn_state(K8_SHEET, ROLLS_94)
    order = accept("20.5: SK eat 6 6 1 1 2 W6 6+1 1+2", state)
    assert order == ChoiceOrder((), SkLine(20, (6, 6, 1, 1, 2), choice("W", 6, (1, 6), (1, 2))))


# --- card rules and precise points ---------------------------------------------------------


def test_a_card_not_in_the_cards_option_cannot_be_played() -> None:
    options = engine.options({"variant": "suppenkasper", "cards": ["sk", "half"]})
    state = turn_state(sheet_with({3: 1, 4: 1, 6: 1}, plate=[1, 5, 5, 6, 6]), ROLLS_94, options)
    assert reject("W3 1+4 3+5\ndouble W6 2+2 4+6", state) == (
        "round 22: the double card is not in play in this game (cards in play: sk, half)"
    )
    accept("W3 1+4 3+5\nhalf W6 2+2 4+6", state)
    only_half = engine.options({"variant": "suppenkasper", "cards": ["half"]})
    state = replace(state, options=only_half)
    assert reject("21.5: SK eat 1 5 5 6 6 W6 1+5 5+6\nW3 1+4 3+5\nW6 2+2 4+6", state) == (
        "slot 21.5: the sk card is not in play in this game (cards in play: half)"
    )
    state = replace(state, options=engine.options({"variant": "suppenkasper", "cards": []}))
    assert reject("W3 1+4 3+5 half\nW6 2+2 4+6", state) == (
        "round 21: the half card is not in play in this game (cards in play: none)"
    )


def test_cr1_a_card_is_played_once_per_game() -> None:
    state = turn_state(replace(SHEET_94, cards_used=("double", "sk")), ROLLS_94)
    assert reject("W3 1+4 3+5\ndouble W6 2+2 4+6", state) == (
        "round 22: you have already played your double card; each card is played once per game"
    )
    fresh = state_94()
    assert reject("half W3 1+4 3+5\nhalf W6 2+2 4+6", fresh) == (
        "round 22: you have already played your half card; each card is played once per game"
    )
    plated = turn_state(replace(SHEET_94, plate=(1, 5, 5, 6, 6), cards_used=("sk",)), ROLLS_94)
    assert reject("W3 1+4 3+5\nW6 2+2 4+6\n22.5: SK eat 1 5 5 6 6 W6 1+5 5+6", plated) == (
        "slot 22.5: you have already played your sk card; each card is played once per game"
    )


def test_one_suppen_kasper_line_per_order() -> None:
    state = turn_state(sheet_with(plate=[1, 2, 3, 4, 5]), ROLLS_94)
    text = "20.5: SK eat 1 2 3 4 5 W1 2+3 4+5\nW1 3+3 4+5\nW1 2+4 6+6\n22.5: SK eat 1 1 1 1 1"
    with pytest.raises(OrderError) as excinfo:
        engine.parse(state, 0, text)
    assert excinfo.value.message == "slot 22.5: only one Suppen-Kasper line per order"


def test_a_suppen_kasper_line_without_a_slot() -> None:
    with pytest.raises(OrderError) as excinfo:
        engine.parse(state_94(), 0, "SK eat 1 5 5 6 6 W6 1+5 5+6")
    assert excinfo.value.message == (
        "round 21: a Suppen-Kasper line needs its slot, e.g. 21.5: SK eat 1 2 3 4 5 W5 1+3 3+4"
    )


def test_an_unreadable_suppen_kasper_line() -> None:
    with pytest.raises(OrderError) as excinfo:
        engine.parse(state_94(), 0, "21.5: SK eat 1 5 5 W6 1+5 5+6")
    assert excinfo.value.message == (
        "slot 21.5: write SK eat and the five plate numbers eaten, then the choice, "
        "e.g. 21.5: SK eat 2 5 6 6 3 W6 2+5 6+3"
    )


def test_a_suppen_kasper_slot_never_reached_is_not_checked_and_uses_no_card() -> None:
    sheet = sheet_with({3: 6, 4: 1, 6: 1})
    state = turn_state(sheet, ROLLS_94)
    order = accept("W3 1+4 3+5\n21.5: SK eat 1 1 1 1 1 W1 1+1 1+1", state)
    state, _ = engine.submit(state, 0, order, NoDice())
    state, events = resolve(state)
    assert events == [
        Event("ann, round 21: W3 1+4 3+5 (sums 5, 8)"),
        Event("ann's game ends in round 21 with a score of -400"),
        Event("the game is over: 1. ann (-400)"),
    ]
    assert state.sheets[0].cards_used == ()


def test_cr7_a_card_in_an_ignored_line_is_not_used() -> None:
    sheet = sheet_with({3: 6, 4: 1, 6: 1}, cards_used=("flip",))
    state = turn_state(sheet, ROLLS_94)
    state, _ = engine.submit(
        state, 0, engine.parse(state, 0, "W3 1+4 3+5\nflip 6 W1 1+1 1+1"), NoDice()
    )
    state, _ = resolve(state)
    assert state.sheets[0].cards_used == ("flip",)
    assert [p.round for p in state.history] == [21]


def test_half_and_double_portion_go_with_a_free_ride() -> None:
    sheet = sheet_with({1: 1, 2: 1, 3: 1})
    outcome = round_outcome(sheet, (4, 4, 5, 5, 6), line("half F6 4+4 5+5"), SK)
    assert outcome.sums == (8,)
    assert outcome.sheet.plate == (5, 5)
    assert outcome.sheet.stored == sheet.stored
    outcome = round_outcome(sheet, (4, 4, 5, 5, 6), line("double F6 5+5 4+4"), SK)
    assert outcome.sums == (10, 10)
    assert outcome.sheet.plate == (4, 4)


def test_refusal_under_w1_stores_no_new_value() -> None:
    outcome = round_outcome(Sheet(), (1, 2, 3, 4, 5), line("refuse W5 1+2 3+4"), SK)
    assert outcome.sheet.stored == ()
    assert outcome.sheet.plate == (5,)
    assert outcome.sums == (3, 7)


def test_from_the_plate_needs_a_different_number() -> None:
    sheet = sheet_with(plate=[3, 4])
    with pytest.raises(OrderError) as excinfo:
        play_round(sheet, (1, 2, 3, 4, 5), line("swap 3 3 W1 2+3 4+5"), SK)
    assert excinfo.value.message == (
        "round 21: swap 3 3 changes nothing; take a number other than 3 from your plate"
    )
    with pytest.raises(OrderError) as excinfo:
        play_round(sheet, (1, 2, 3, 4, 5), line("swap 6 4 W1 2+3 4+5"), SK)
    assert excinfo.value.message == "round 21: the roll shows no 6 to swap"


def test_upside_down_can_turn_a_forced_wurfel_into_a_free_ride_only() -> None:
    # Flipping the only 6 leaves no stored value showing: W1 would be wrong.
    sheet = sheet_with({2: 1, 5: 2, 6: 6})
    with pytest.raises(OrderError) as excinfo:
        play_round(sheet, (6, 1, 1, 3, 4), line("flip 6 W1 1+1 3+4"), SK)
    assert excinfo.value.message == (
        "round 21: the roll shows none of your stored values 2, 5, 6, so this is a free "
        "ride: write F1 instead of W1"
    )


def test_the_line_must_use_the_dice_after_the_card() -> None:
    with pytest.raises(OrderError) as excinfo:
        play_round(Sheet(), (1, 2, 3, 4, 5), line("flip 1 W1 2+3 4+5"), SK)
    assert excinfo.value.message == "round 21: the roll is 2 3 4 5 6 but your line uses 1 2 3 4 5"


def test_a_card_on_a_round_line_in_the_standard_game_is_an_error_at_play() -> None:
    with pytest.raises(OrderError) as excinfo:
        play_round(Sheet(), (1, 2, 3, 4, 5), line("half W1 2+3 4+5"), ChoiceOptions())
    assert excinfo.value.message == "round 21: cards are only played in the Suppenkasper variant"


# --- free_ride_to_plate and the NMR default ------------------------------------------------

FREE_RIDE = engine.options({"variant": "suppenkasper", "free_ride_to_plate": True})


def test_cr6_a_free_ride_discard_goes_nowhere_by_default() -> None:
    sheet = sheet_with({1: 1, 2: 1, 3: 1})
    assert play_round(sheet, (4, 4, 5, 5, 6), line("F6 4+4 5+5"), SK).plate == ()


def test_free_ride_to_plate_puts_the_discard_on_the_plate() -> None:
    sheet = sheet_with({1: 1, 2: 1, 3: 1})
    outcome = round_outcome(sheet, (4, 4, 5, 5, 6), line("half F6 4+4 5+5"), FREE_RIDE)
    assert outcome.onto_plate == (6, 5, 5)
    assert outcome.sheet.plate == (5, 5, 6)


def test_free_ride_to_plate_in_the_suppen_kasper_round_leaves_only_the_discard() -> None:
    sheet = sheet_with({4: 1, 5: 1, 6: 1}, plate=[1, 2, 2, 2, 3, 5])
    sk = SkLine(21, (1, 2, 2, 2, 3), choice("F", 1, (2, 2), (2, 3)))
    outcome = sk_outcome(sheet, sk, FREE_RIDE)
    assert (outcome.dog, outcome.onto_plate, outcome.sheet.plate) == ((5,), (1,), (1,))


def test_the_nmr_default_plays_no_card_but_free_rides_to_the_plate() -> None:
    sheet = sheet_with({1: 1, 2: 1, 3: 1}, plate=[1, 2, 3, 4, 5])
    state = turn_state(sheet, {21: (4, 4, 5, 5, 6), 22: (1, 4, 4, 5, 6)}, FREE_RIDE)
    order = engine.default(state, 0)
    assert engine.canonical(state, 0, order) == "21: F4 4+6 5+5\n22: W1 4+5 4+6"
    state, events = resolve(state)
    assert events[:3] == [
        Event("ann sent no order: the NMR default is played"),
        Event("ann, round 21: F4 4+6 5+5 (sums 10, 10); 4 onto the plate"),
        Event("ann, round 22: W1 4+5 4+6 (sums 9, 10)"),
    ]
    assert state.sheets[0].plate == (1, 2, 3, 4, 4, 5)
    assert state.sheets[0].cards_used == ()
    assert [p.default for p in state.history] == [True, True]


def test_the_nmr_default_without_the_house_rule_leaves_the_plate_alone() -> None:
    sheet = sheet_with({1: 1, 2: 1, 3: 1}, plate=[1, 2, 3, 4, 5])
    state = turn_state(sheet, {21: (4, 4, 5, 5, 6), 22: (1, 4, 4, 5, 6)})
    state, _ = resolve(state)
    assert state.sheets[0].plate == (1, 2, 3, 4, 5)


# --- canonical text, dice, round cap and standings -----------------------------------------


def test_canonical_text_prints_the_card_first_and_the_suppen_kasper_line_at_its_slot() -> None:
    state = state_94()
    order = accept("22.5: sk eat 1 5 5 6 6 w6 5+1 6+5\nW3 1+4 3+5\nW6 2+2 4+6 double", state)
    text = engine.canonical(state, 0, order)
    assert text == "21: W3 1+4 3+5\n22: double W6 2+2 4+6\n22.5: SK eat 1 5 5 6 6 W6 1+5 5+6"
    assert engine.parse(state, 0, text) == order
    assert engine.order_from_json(json.loads(json.dumps(engine.order_to_json(order)))) == order


def test_canonical_text_with_every_card_kind() -> None:
    sheet = sheet_with({2: 1, 4: 1, 6: 1}, plate=[1, 4, 6, 6])
    state = turn_state(sheet, {21: (1, 1, 3, 3, 5), 22: (2, 2, 4, 6, 6)})
    text = "22.5: SK eat 6 5 4 2 1 W4 6+1 5+2\nW6 1+1 3+3 swap 5 6\nflip 2 W4 5+2 6+6"
    order = accept(text, state)
    text = engine.canonical(state, 0, order)
    assert text == (
        "21: swap 5 6 W6 1+1 3+3\n22: flip 2 W4 2+5 6+6\n22.5: SK eat 6 5 4 2 1 W4 1+6 2+5"
    )
    assert engine.parse(state, 0, text) == order


def test_cards_draw_no_dice_and_the_next_turn_draws_ten() -> None:
    state = turn_state(K7_SHEET, K7_ROLLS)
    state, _ = engine.submit(state, 0, engine.parse(state, 0, K7_ORDER), NoDice())
    dice = ScriptedDice([1, 2, 3, 4, 5, 6, 5, 4, 3, 2, 1])
    state, _ = engine.resolve(state, dice)
    assert dice.position == 10
    assert state.rounds == (Round(23, (1, 2, 3, 4, 5)), Round(24, (6, 5, 4, 3, 2)))


def test_round_cap_still_plays_the_last_suppen_kasper_slot() -> None:
    options = engine.options({"variant": "suppenkasper", "round_cap": 10})
    sheet = sheet_with({1: 1, 2: 1, 3: 1}, plate=[1, 1, 2, 2, 3])
    state = turn_state(sheet, {9: (4, 4, 5, 5, 6), 10: (4, 4, 5, 5, 6)}, options)
    text = "F6 4+4 5+5\nF6 4+4 5+5\n10.5: SK eat 1 1 2 2 3 W1 1+2 2+3"
    state, _ = engine.submit(state, 0, engine.parse(state, 0, text), NoDice())
    state, events = engine.resolve(state, NoDice())
    ann = state.sheets[0]
    assert events == [
        Event("ann, round 9: F6 4+4 5+5 (sums 8, 10)"),
        Event("ann, round 10: F6 4+4 5+5 (sums 8, 10)"),
        Event("ann, slot 10.5: SK eat 1 1 2 2 3 W1 1+2 2+3 (sums 3, 5)"),
        Event("round 10 is the round cap: ann's game ends with a score of -800"),
        Event("the game is over: 1. ann (-800)"),
    ]
    assert (ann.ended_round, ann.ended_slot, ann.stored[0]) == (10, False, (1, 2))


def two_players_ending_level() -> ChoiceState:
    """ann ends in slot 20.5, bob in round 21, both with -400."""
    bob = sheet_with({6: 6})
    state = turn_state(K8_SHEET, {21: (6, 1, 1, 2, 6), 22: ROLLS_94[22]}, others=(bob,))
    state, _ = engine.submit(
        state, 0, engine.parse(state, 0, "20.5: SK eat 6 6 1 1 2 W6 6+1 1+2"), NoDice()
    )
    state, _ = engine.submit(state, 1, engine.parse(state, 1, "W6 1+6 1+2"), NoDice())
    return state


def test_fewer_rounds_counts_the_round_before_the_suppen_kasper_slot() -> None:
    state = two_players_ending_level()
    shared, _ = engine.resolve(state, NoDice())
    assert engine.standings(shared) == [Standing(0, 1, -400), Standing(1, 1, -400)]
    fewer = replace(state, options=replace(state.options, tiebreak="fewer_rounds"))
    fewer, events = engine.resolve(fewer, NoDice())
    assert [(s.ended_round, s.ended_slot) for s in fewer.sheets] == [(20, True), (21, False)]
    assert engine.standings(fewer) == [Standing(0, 1, -400), Standing(1, 2, -400)]
    assert events == [
        Event("ann, slot 20.5: SK eat 6 6 1 1 2 W6 1+6 1+2 (sums 7, 3)"),
        Event("ann's game ends in slot 20.5 with a score of -400"),
        Event("bob, round 21: W6 1+6 1+2 (sums 7, 3)"),
        Event("bob's game ends in round 21 with a score of -400"),
        Event("the game is over: 1. ann (-400); 2. bob (-400)"),
    ]


# --- view and JSON -------------------------------------------------------------------------


def test_view_shows_plates_and_cards_left() -> None:
    options = engine.options({"variant": "suppenkasper", "cards": ["sk", "double", "flip"]})
    sheet = replace(SHEET_94, cards_used=("double",))
    state = turn_state(sheet, ROLLS_94, options, others=(Sheet(),))
    players = engine.view(state, None)["players"]
    assert players[0] == {
        "seat": 0,
        "name": "ann",
        "active": True,
        "ended_round": None,
        "score": None,
        "running_score": 0,
        "counts": {str(total): 0 for total in range(2, 13)},
        "stored": [{"value": 3, "count": 1}, {"value": 4, "count": 1}, {"value": 6, "count": 1}],
        "plate": [1, 5, 5, 6],
        "cards_used": ["double"],
        "cards_left": ["sk", "flip"],
        "ended_slot": False,
    }
    assert (players[1]["plate"], players[1]["cards_left"]) == ([], ["sk", "double", "flip"])


def test_state_with_cards_and_slots_round_trips_through_json() -> None:
    state = two_players_ending_level()
    assert roundtrip_state(state) == state
    finished, _ = engine.resolve(state, NoDice())
    assert roundtrip_state(finished) == finished
    assert json.loads(json.dumps(engine.view(finished, 0)))["history"][0]["round"] == "20.5"


def test_the_suppenkasper_variant_uses_every_card_by_default() -> None:
    assert list(SK.cards) == ALL_CARDS
    assert SK.free_ride_to_plate is False
