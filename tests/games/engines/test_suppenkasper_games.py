"""Whole Suppenkasper games: the short game of rules/choice.md section 11.2, and random legal
games with cards, Suppen-Kasper rounds and NMR defaults checked against an independent tally
of sheets, plates and cards."""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.engines.base import Event, Standing, to_json
from games.engines.choice.rules import (
    CARDS,
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
    legal_choices,
    parse_round_line,
    parse_sk_line,
    play_round,
    play_sk,
    score,
)
from games.engines.dice import NoDice, ScriptedDice, VerifiableDice

engine = ChoiceEngine()


def roundtrip(state: ChoiceState) -> None:
    # The engine's encoder, made from the hints, writes what the generic one writes.
    assert engine.state_to_json(state) == to_json(state)
    data = json.loads(json.dumps(engine.state_to_json(state)))
    assert engine.state_from_json(data) == state
    json.dumps(engine.view(state, None))


# --- section 11.2: a short game with all six cards -----------------------------------------

GAME_112_ROLLS = [
    (2, 1, 3, 4, 6),
    (6, 6, 2, 3, 1),
    (4, 4, 2, 5, 5),
    (5, 1, 2, 3, 6),
    (1, 1, 2, 2, 3),
    (6, 3, 4, 2, 2),
    *[(6, 6, 6, 6, 6)] * 5,
    (1, 2, 3, 4, 5),  # round 12: rolled with round 11, never used
]
GAME_112_ORDERS = [
    "flip 2 W5 1+3 4+6\nW6 6+2 3+1 double",
    "W4 4+2 5+5\nrefuse W5 1+2 3+6",
    "swap 1 5 W5 1+2 2+3\nhalf W6 3+4 2+2\n6.5: SK eat 1 2 2 2 3 F1 2+2 2+3",
    "W6 6+6 6+6\nW6 6+6 6+6",
    "W6 6+6 6+6\nW6 6+6 6+6",
    "W6 6+6 6+6",
]
# Stored values and plate after each round of the table (6.5 is the Suppen-Kasper round).
GAME_112_AFTER: list[tuple[str, dict[int, int], tuple[int, ...]]] = [
    ("1", {5: 1}, (2,)),
    ("2", {5: 1, 6: 1}, (1, 2, 3)),
    ("3", {5: 1, 6: 1, 4: 1}, (1, 2, 3)),
    ("4", {5: 1, 6: 1, 4: 1}, (1, 2, 3, 5)),
    ("5", {5: 2, 6: 1, 4: 1}, (1, 1, 2, 3)),
    ("6", {5: 2, 6: 2, 4: 1}, (1, 1, 2, 2, 2, 3)),
    ("6.5", {5: 2, 6: 2, 4: 1}, ()),
    *[(str(n), {5: 2, 6: n - 4, 4: 1}, ()) for n in range(7, 12)],
]


def play_game_112() -> tuple[ChoiceState, list[list[Event]], ScriptedDice]:
    dice = ScriptedDice(value for roll in GAME_112_ROLLS for value in roll)
    options = engine.options({"variant": "suppenkasper", "rolls_per_turn": 2})
    state, opened = engine.start(options, ["ann"], dice)
    log = [opened]
    for text in GAME_112_ORDERS:
        order = engine.parse(state, 0, text)
        assert engine.parse(state, 0, engine.canonical(state, 0, order)) == order
        state, _ = engine.submit(state, 0, order, NoDice())
        state, events = engine.resolve(state, dice)
        roundtrip(state)
        log.append(events)
    return state, log, dice


def test_112_final_counts_and_score() -> None:
    state, _, dice = play_game_112()
    assert state.finished
    assert dice.position == 60
    ann = state.sheets[0]
    final = {3: 2, 4: 2, 5: 2, 6: 1, 7: 1, 8: 2, 9: 1, 10: 2, 12: 10}
    assert {total: ann.count(total) for total in range(2, 13)} == {
        total: final.get(total, 0) for total in range(2, 13)
    }
    assert score(ann.counts) == -1100
    assert (ann.score, ann.ended_round, ann.ended_slot) == (-1100, 11, False)
    assert ann.stored == ((5, 2), (6, 7), (4, 1))
    assert ann.plate == ()
    assert ann.cards_used == ("flip", "double", "refuse", "swap", "half", "sk")
    assert engine.standings(state) == [Standing(0, 1, -1100)]


def test_112_each_round_leaves_the_sheet_of_the_table() -> None:
    state, _, _ = play_game_112()
    plays = list(state.history)
    assert [play.label for play in plays] == [label for label, _, _ in GAME_112_AFTER]
    # Replay the plays one by one on a fresh sheet and compare with the table.
    sheet = Sheet()
    rolls = dict(enumerate(GAME_112_ROLLS, start=1))
    for play, (label, stored, plate) in zip(plays, GAME_112_AFTER, strict=True):
        text = play.line.lower()
        if play.slot:
            sheet = play_sk(sheet, parse_sk_line(text, play.round), state.options)
        else:
            line = parse_round_line(text, play.round, state.options)
            sheet = play_round(sheet, rolls[play.round], line, state.options)
        assert (dict(sheet.stored), sheet.plate) == (stored, plate), label


def test_112_sums_recorded_per_round() -> None:
    state, _, _ = play_game_112()
    assert [(play.label, play.sums) for play in state.history] == [
        ("1", (4, 10)),
        ("2", (8, 8)),
        ("3", (6, 10)),
        ("4", (3, 9)),
        ("5", (3, 5)),
        ("6", (7,)),
        ("6.5", (4, 5)),
        *[(str(n), (12, 12)) for n in range(7, 12)],
    ]


def test_112_reports() -> None:
    _, log, _ = play_game_112()
    assert log[0] == [
        Event("postal turn 1, rounds 1-2: round 1 rolls 2 1 3 4 6; round 2 rolls 6 6 2 3 1")
    ]
    assert log[1][:2] == [
        Event("ann, round 1: flip 2 W5 1+3 4+6 (sums 4, 10); 2 onto the plate"),
        Event("ann, round 2: double W6 2+6 1+3 (sums 8, 8); 1 and 3 onto the plate"),
    ]
    assert log[2][:2] == [
        Event("ann, round 3: W4 2+4 5+5 (sums 6, 10)"),
        Event("ann, round 4: refuse W5 1+2 3+6 (sums 3, 9); 5 onto the plate"),
    ]
    assert log[3] == [
        Event("ann, round 5: swap 1 5 W5 1+2 2+3 (sums 3, 5); 5 off the plate; 1 onto the plate"),
        Event("ann, round 6: half W6 3+4 2+2 (sums 7); 2 and 2 onto the plate"),
        Event("ann, slot 6.5: SK eat 1 2 2 2 3 F1 2+2 2+3 (sums 4, 5); the dog gets 1"),
        Event("postal turn 4, rounds 7-8: round 7 rolls 6 6 6 6 6; round 8 rolls 6 6 6 6 6"),
    ]
    assert log[6] == [
        Event("ann, round 11: W6 6+6 6+6 (sums 12, 12)"),
        Event("ann's game ends in round 11 with a score of -1100"),
        Event("the game is over: 1. ann (-1100)"),
    ]


def test_112_view_of_the_finished_game() -> None:
    state, _, _ = play_game_112()
    view = engine.view(state, None)
    assert [entry["round"] for entry in view["history"]] == [
        1, 2, 3, 4, 5, 6, "6.5", 7, 8, 9, 10, 11, 12
    ]  # fmt: skip
    assert view["history"][12] == {"round": 12, "roll": [1, 2, 3, 4, 5], "plays": []}
    ann = view["players"][0]
    assert (ann["plate"], ann["cards_left"], ann["cards_used"]) == (
        [],
        [],
        ["flip", "double", "refuse", "swap", "half", "sk"],
    )


# --- random legal games --------------------------------------------------------------------


@dataclass
class Tally:
    """What a seat's sheet must hold, counted from the lines that were played."""

    sums: Counter[int] = field(default_factory=Counter)
    wurfels: Counter[int] = field(default_factory=Counter)
    plate: Counter[int] = field(default_factory=Counter)
    cards: list[str] = field(default_factory=list)
    rounds: int = 0
    ended: tuple[int, bool] | None = None
    last_round: int = 0


def _swapped(dice: tuple[int, ...], old: int, new: int) -> tuple[int, ...]:
    index = dice.index(old)
    return (*dice[:index], new, *dice[index + 1 :])


def random_line(
    sheet: Sheet, current: Round, options: ChoiceOptions, rng: random.Random
) -> RoundLine:
    """A legal line for ``current`` on ``sheet``, with a random card now and then."""
    free = [c for c in options.cards if c != "sk" and c not in sheet.cards_used]
    card: Card | None = None
    dice = current.roll
    if free and rng.random() < 0.4:
        name = rng.choice(free)
        if name == "flip":
            value = rng.choice(dice)
            card, dice = Card("flip", value), _swapped(dice, value, 7 - value)
        elif name == "swap":
            swaps = [(v, p) for v in set(dice) for p in set(sheet.plate) if p != v]
            if swaps:
                value, taken = rng.choice(sorted(swaps))
                card, dice = Card("swap", value, taken), _swapped(dice, value, taken)
        elif name != "refuse" or any(c.wurfel for c in legal_choices(sheet, dice)):
            card = Card(name)
    choices = legal_choices(sheet, dice)
    if card is not None and card.name == "refuse":
        choices = [c for c in choices if c.wurfel]
    picked = rng.choice(choices)
    if rng.random() < 0.5:
        picked = Choice(picked.kind, picked.value, picked.second, picked.first)
    return RoundLine(current.number, picked, card)


def random_sk(
    sheet: Sheet, after: int, options: ChoiceOptions, rng: random.Random
) -> SkLine | None:
    if "sk" not in options.cards or "sk" in sheet.cards_used or len(sheet.plate) < 5:
        return None
    eat = tuple(rng.sample(list(sheet.plate), 5))
    return SkLine(after, eat, rng.choice(legal_choices(sheet, eat)))


def random_order(state: ChoiceState, seat: int, rng: random.Random) -> ChoiceOrder:
    """A legal order built from legal options on a copy of the sheet; now and then with
    unplayed junk after the game ends (lines and a Suppen-Kasper slot never reached)."""
    options = state.options
    numbers = [current.number for current in state.rounds]
    slot = rng.choice([*range(numbers[0] - 1, numbers[-1] + 1), None])
    sheet = state.sheets[seat]
    lines: list[RoundLine] = []
    sk: SkLine | None = None
    for current in state.rounds:
        if slot == current.number - 1:
            sk = random_sk(sheet, slot, options, rng)
            sheet = play_sk(sheet, sk, options) if sk is not None else sheet
            if not sheet.active:
                break
        line = random_line(sheet, current, options, rng)
        lines.append(line)
        sheet = play_round(sheet, current.roll, line, options)
        if not sheet.active:
            break
    else:
        if slot == numbers[-1]:
            sk = random_sk(sheet, slot, options, rng)
    if not sheet.active and rng.random() < 0.5:
        junk = Choice("W", 1, (1, 1), (1, 1))
        lines.extend(RoundLine(n, junk, Card("half")) for n in numbers[len(lines) :])
        if sk is None and slot is not None and slot >= numbers[0] - 1 + len(lines):
            sk = SkLine(slot, (1, 1, 1, 1, 1), junk)
    return ChoiceOrder(tuple(lines), sk)


def apply_line(
    tally: Tally,
    dice: tuple[int, ...],
    card: Card | None,
    choice: Choice,
    options: ChoiceOptions,
) -> None:
    """One played round by the rules of section 7.5, independently of the engine."""
    if card is not None:
        assert card.name in options.cards
        assert card.name not in tally.cards
        tally.cards.append(card.name)
    if card is not None and card.name == "flip":
        assert card.value is not None
        dice = _swapped(dice, card.value, 7 - card.value)
        tally.plate[card.value] += 1
    if card is not None and card.name == "swap":
        assert card.value is not None and card.plate is not None
        assert tally.plate[card.plate] > 0
        tally.plate[card.plate] -= 1
        dice = _swapped(dice, card.value, card.plate)
        tally.plate[card.value] += 1
    assert sorted(choice.dice) == sorted(dice)
    name = card.name if card is not None else None
    if name == "refuse":
        assert choice.wurfel
        tally.plate[choice.value] += 1
    elif choice.wurfel:
        tally.wurfels[choice.value] += 1
    elif options.free_ride_to_plate:
        tally.plate[choice.value] += 1
    if name in ("half", "double"):
        tally.sums[sum(choice.first)] += 1 if name == "half" else 2
        tally.plate.update(choice.second)
    else:
        tally.sums.update(choice.sums)


def apply_order(state: ChoiceState, order: ChoiceOrder, tally: Tally) -> None:
    """The lines of ``order`` that are played, in slot order, applied to the tally."""
    options = state.options
    steps: list[tuple[float, RoundLine | SkLine, tuple[int, ...]]] = [
        (float(current.number), line, current.roll)
        for current, line in zip(state.rounds, order.lines, strict=False)
    ]
    if order.sk is not None:
        steps.append((order.sk.after + 0.5, order.sk, order.sk.eat))
    for position, step, dice in sorted(steps, key=lambda item: item[0]):
        if isinstance(step, SkLine):
            assert "sk" in options.cards and "sk" not in tally.cards
            tally.cards.append("sk")
            assert not Counter(step.eat) - tally.plate
            tally.plate = Counter()
            apply_line(tally, dice, None, step.choice, options)
        else:
            apply_line(tally, dice, step.card, step.choice, options)
            tally.rounds += 1
            tally.last_round = step.round
        if max(tally.wurfels.values(), default=0) >= options.end_threshold:
            slot = isinstance(step, SkLine)
            tally.ended = (int(position), slot)
            return


def check_sheet(sheet: Sheet, tally: Tally, options: ChoiceOptions) -> None:
    assert all(1 <= number <= 6 for number in sheet.plate)
    assert sheet.plate == tuple(sorted(tally.plate.elements()))
    assert all(count >= 0 for count in tally.plate.values())
    assert list(sheet.cards_used) == tally.cards
    assert len(set(sheet.cards_used)) == len(sheet.cards_used)
    assert set(sheet.cards_used) <= set(options.cards)
    assert {total: sheet.count(total) for total in range(2, 13)} == {
        total: tally.sums[total] for total in range(2, 13)
    }
    assert dict(sheet.stored) == dict(tally.wurfels)


@st.composite
def game_setups(draw: st.DrawFn) -> tuple[ChoiceOptions, int]:
    data: dict[str, object] = {
        "variant": "suppenkasper",
        "rolls_per_turn": draw(st.sampled_from([1, 2, 3, 4, "decreasing"])),
        "cards": draw(st.lists(st.sampled_from(CARDS), unique=True)),
        "free_ride_to_plate": draw(st.booleans()),
        "tiebreak": draw(st.sampled_from(["shared", "fewer_rounds"])),
        "round_cap": draw(st.sampled_from([10, 17, 40, 500])),
    }
    threshold = draw(st.sampled_from([None, 3, 5, 8]))
    if threshold is not None:
        data["end_threshold"] = threshold
    return engine.options(data), draw(st.integers(1, 4))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setup=game_setups(), seed=st.binary(min_size=32, max_size=32), rng=st.randoms())
def test_random_suppenkasper_games_keep_plates_and_cards_consistent(
    setup: tuple[ChoiceOptions, int], seed: bytes, rng: random.Random
) -> None:
    options, players = setup
    dice = VerifiableDice(seed, game_id=rng.randrange(1, 10**6))
    state, _ = engine.start(options, [f"p{seat}" for seat in range(players)], dice)
    roundtrip(state)
    tallies = [Tally() for _ in range(players)]

    while not state.finished:
        assert state.turn <= options.round_cap
        played: dict[int, ChoiceOrder] = {}
        for prompt in engine.prompts(state):
            seat = prompt.seat
            if rng.random() < 0.25:
                played[seat] = engine.default(state, seat)
                continue
            order = random_order(state, seat, rng)
            parsed = engine.parse(state, seat, engine.canonical(state, seat, order))
            assert parsed == order
            state, _ = engine.submit(state, seat, parsed, NoDice())
            played[seat] = order
        before = state
        drawn = len(dice.draws)
        state, events = engine.resolve(state, dice)
        assert len(dice.draws) - drawn == 5 * len(state.rounds)
        roundtrip(state)
        for seat, order in played.items():
            apply_order(before, order, tallies[seat])
        for sheet, tally in zip(state.sheets, tallies, strict=True):
            check_sheet(sheet, tally, options)
            if tally.ended is not None:
                assert (sheet.ended_round, sheet.ended_slot) == tally.ended
                assert not sheet.active
        texts = [event.text for event in events]
        for play in state.history[len(before.history) :]:
            assert any(
                text.startswith(
                    f"p{play.seat}, {'slot' if play.slot else 'round'} {play.label}: {play.line} "
                )
                for text in texts
            )

    for sheet, tally in zip(state.sheets, tallies, strict=True):
        assert not sheet.active
        assert sheet.score == score(sheet.counts)
        if tally.ended is None:
            assert (sheet.ended_round, sheet.ended_slot) == (options.round_cap, False)
        else:
            assert sheet.ended_round == tally.ended[0]
        if options.round_cap == 500:
            assert tally.ended is not None
    assert engine.prompts(state) == []
    standings = engine.standings(state)
    assert standings is not None
    assert sorted(s.seat for s in standings) == list(range(players))
