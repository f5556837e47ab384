"""Random legal games of Choice played to the end, checked against an independent tally."""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.engines.base import OrderError, to_json
from games.engines.choice.rules import (
    ChoiceEngine,
    ChoiceOptions,
    ChoiceOrder,
    ChoiceState,
    RoundLine,
    legal_choices,
    play_round,
    score,
)
from games.engines.dice import NoDice, VerifiableDice

engine = ChoiceEngine()


@dataclass
class Tally:
    """What a seat's sheet must hold, counted from the lines that were played."""

    sums: Counter[int] = field(default_factory=Counter)
    wurfels: Counter[int] = field(default_factory=Counter)
    rounds: int = 0
    ended_round: int | None = None


def roundtrip(state: ChoiceState) -> None:
    # The engine's encoder, made from the hints, writes what the generic one writes.
    assert engine.state_to_json(state) == to_json(state)
    data = json.loads(json.dumps(engine.state_to_json(state)))
    assert engine.state_from_json(data) == state
    json.dumps(engine.view(state, None))


def random_order(state: ChoiceState, seat: int, rng: random.Random) -> ChoiceOrder:
    """A legal order built from the legal choices of each round, on a copy of the sheet."""
    sheet = state.sheets[seat]
    lines: list[RoundLine] = []
    for current in state.rounds:
        line = RoundLine(current.number, rng.choice(legal_choices(sheet, current.roll)))
        lines.append(line)
        sheet = play_round(sheet, current.roll, line, state.options)
        if not sheet.active:
            break
    return ChoiceOrder(tuple(lines))


def played_lines(state: ChoiceState, order: ChoiceOrder, tally: Tally, threshold: int) -> None:
    """Apply ``order`` to the tally by the rules, independently of the engine."""
    for current, line in zip(state.rounds, order.lines, strict=False):
        choice = line.choice
        assert sorted(choice.dice) == sorted(current.roll)
        if choice.wurfel:
            tally.wurfels[choice.value] += 1
        tally.sums.update(choice.sums)
        tally.rounds += 1
        if choice.wurfel and tally.wurfels[choice.value] >= threshold:
            tally.ended_round = current.number
            return


@st.composite
def game_setups(draw: st.DrawFn) -> tuple[ChoiceOptions, int]:
    options = engine.options(
        {
            "rolls_per_turn": draw(st.sampled_from([1, 2, 3, 4, "decreasing"])),
            "end_threshold": draw(st.integers(3, 8)),
            "tiebreak": draw(st.sampled_from(["shared", "fewer_rounds"])),
            "round_cap": draw(st.sampled_from([10, 17, 40, 500])),
        }
    )
    return options, draw(st.integers(1, 8))


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setup=game_setups(), seed=st.binary(min_size=32, max_size=32), rng=st.randoms())
def test_random_games_finish_with_consistent_sheets_and_standings(
    setup: tuple[ChoiceOptions, int], seed: bytes, rng: random.Random
) -> None:
    options, players = setup
    dice = VerifiableDice(seed, game_id=rng.randrange(1, 10**6))
    state, _ = engine.start(options, [f"p{seat}" for seat in range(players)], dice)
    roundtrip(state)
    tallies = [Tally() for _ in range(players)]

    turns = 0
    while not state.finished:
        turns += 1
        assert turns <= options.round_cap
        assert {p.seat for p in engine.prompts(state)} == {
            seat for seat, sheet in enumerate(state.sheets) if sheet.active
        }
        played: dict[int, ChoiceOrder] = {}
        for prompt in engine.prompts(state):
            seat = prompt.seat
            way = rng.choice(["random", "random", "default", "nmr", "resubmit"])
            if way == "nmr":
                played[seat] = engine.default(state, seat)
                continue
            order = random_order(state, seat, rng)
            if way == "default":
                order = engine.default(state, seat)
            if way == "resubmit":
                state, _ = engine.submit(state, seat, engine.default(state, seat), NoDice())
            parsed = engine.parse(state, seat, engine.canonical(state, seat, order))
            assert parsed == order
            state, events = engine.submit(state, seat, parsed, NoDice())
            assert all(event.to == (seat,) for event in events)
            assert engine.has_order(state, seat)
            roundtrip(state)
            played[seat] = order
        before = state
        state, _ = engine.resolve(state, dice)
        roundtrip(state)
        for seat, order in played.items():
            played_lines(before, order, tallies[seat], options.end_threshold)

    for seat, (sheet, tally) in enumerate(zip(state.sheets, tallies, strict=True)):
        assert not sheet.active
        assert sum(sheet.counts) == 2 * tally.rounds
        assert {total: sheet.count(total) for total in range(2, 13)} == {
            total: tally.sums[total] for total in range(2, 13)
        }
        assert dict(sheet.stored) == dict(tally.wurfels)
        assert len(sheet.stored) <= 3
        assert sheet.score == score(sheet.counts)
        history = [play for play in state.history if play.seat == seat]
        assert len(history) == tally.rounds
        if tally.ended_round is not None:
            assert sheet.ended_round == tally.ended_round
            assert max(count for _, count in sheet.stored) == options.end_threshold
        else:
            assert sheet.ended_round == options.round_cap
        if options.round_cap == 500:
            assert tally.ended_round is not None
    assert engine.prompts(state) == []

    standings = engine.standings(state)
    assert standings is not None
    assert sorted(s.seat for s in standings) == list(range(players))
    assert [s.place for s in standings] == sorted(s.place for s in standings)
    for better, worse in itertools.pairwise(standings):
        assert better.score is not None and worse.score is not None
        assert better.score >= worse.score
        if better.place == worse.place:
            assert better.score == worse.score
            assert better.seat < worse.seat
    for position, standing in enumerate(standings):
        assert standing.score == state.sheets[standing.seat].score
        ahead = [s for s in standings if _key(state, s.seat) < _key(state, standing.seat)]
        assert standing.place == len(ahead) + 1
        assert position + 1 >= standing.place
    try:
        engine.parse(state, 0, "W1 1+1 1+1")
    except OrderError as error:
        assert error.message.endswith("no order is expected from you")
    else:
        raise AssertionError("an order was accepted after the game ended")


def _key(state: ChoiceState, seat: int) -> tuple[int, ...]:
    sheet = state.sheets[seat]
    assert sheet.score is not None and sheet.ended_round is not None
    if state.options.tiebreak == "fewer_rounds":
        return (-sheet.score, sheet.ended_round)
    return (-sheet.score,)
