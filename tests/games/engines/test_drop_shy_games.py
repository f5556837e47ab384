"""Random legal games of Drop-Shy played to the end: the board always keeps the neighbour
rule, every player's dice are conserved, the game ends, and the state survives JSON."""

from __future__ import annotations

import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.engines.base import OrderError, to_json
from games.engines.dice import VerifiableDice
from games.engines.drop_shy.rules import (
    DropShyEngine,
    DropShyOptions,
    DropShyOrder,
    DropShyState,
    legal_by_candidate,
    places,
)

engine = DropShyEngine()


def roundtrip(state: DropShyState) -> None:
    # The engine's encoder, made from the hints, writes what the generic one writes.
    assert engine.state_to_json(state) == to_json(state)
    data = json.loads(json.dumps(engine.state_to_json(state)))
    assert engine.state_from_json(data) == state
    for seat in (None, *range(len(state.players))):
        assert json.loads(json.dumps(engine.view(state, seat))) == engine.view(state, seat)


def check_board(state: DropShyState) -> None:
    """Every two dice that share a side differ by one; the grid's two colours keep parity."""
    grid = {(p.x, p.y): p.face for p in state.board}
    assert len(grid) == len(state.board)
    assert state.board[0].cell == (0, 0)
    assert state.board[0].seat is None
    for (x, y), face in grid.items():
        for other in ((x + 1, y), (x, y + 1)):
            if other in grid:
                assert abs(grid[other] - face) == 1
        same_colour = (x + y) % 2 == 0
        assert (face % 2 == state.instigator % 2) == same_colour


def check_dice(state: DropShyState) -> None:
    per_player = state.options.dice_per_player
    for seat, line in enumerate(state.lines):
        placed = sum(1 for p in state.board if p.seat == seat)
        assert len(line) + placed == per_player
        assert (not line) == (seat in state.finishers)
        for die in line:
            assert 1 <= die.face <= 6
            if state.options.two_candidate:
                assert die.depth is not None and 1 <= die.depth <= 20
            else:
                assert die.depth is None


def random_order(state: DropShyState, rng: random.Random) -> DropShyOrder:
    """A legal order for the seat on turn: a random candidate on a random legal cell, or that
    candidate alone when it fits nowhere."""
    found = legal_by_candidate(state)
    name, _, legal = rng.choice(found)
    named = state.options.two_candidate and rng.random() < 0.2
    take = name if len(found) > 1 or named else None
    return DropShyOrder(take, rng.choice(legal) if legal else None)


@st.composite
def game_setups(draw: st.DrawFn) -> tuple[DropShyOptions, int]:
    options = engine.options(
        {
            "dice_per_player": draw(st.integers(1, 12)),
            "selection": draw(st.sampled_from(["strict_queue", "two_candidate"])),
            "auto_single": draw(st.booleans()),
            "turn_cap": draw(st.sampled_from([50, 80, 5000])),
        }
    )
    return options, draw(st.integers(2, 5))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setup=game_setups(), seed=st.binary(min_size=32, max_size=32), rng=st.randoms())
def test_random_games_keep_the_neighbour_rule_and_conserve_dice(
    setup: tuple[DropShyOptions, int], seed: bytes, rng: random.Random
) -> None:
    options, players = setup
    dice = VerifiableDice(seed, game_id=rng.randrange(1, 10**6))
    state, _ = engine.start(options, [f"p{seat}" for seat in range(players)], dice)
    check_board(state)
    check_dice(state)
    roundtrip(state)

    steps = 0
    while not state.finished:
        steps += 1
        assert state.turns < options.turn_cap
        prompts = engine.prompts(state)
        assert [p.seat for p in prompts] == [state.current]
        seat = prompts[0].seat
        for other in range(players):
            if other != seat:
                try:
                    engine.parse(state, other, "place 0 1")
                except OrderError:
                    pass
                else:
                    raise AssertionError("an order out of turn was accepted")
        drawn = len(dice.draws)
        turns = state.turns
        if rng.random() < 0.25:
            state, _ = engine.resolve(state, dice)
        else:
            order = random_order(state, rng)
            text = engine.canonical(state, seat, order)
            assert engine.parse(state, seat, text) == order
            state, events = engine.submit(state, seat, order, dice)
            assert all(event.to is None for event in events)
        assert engine.prompts(state) != prompts
        assert state.turns > turns
        fails = sum(1 for turn in state.history[turns:] if turn.cell is None)
        assert len(dice.draws) - drawn == fails * (2 if options.two_candidate else 1)
        check_board(state)
        check_dice(state)
        roundtrip(state)
    assert steps <= options.turn_cap

    assert engine.prompts(state) == []
    holders = [seat for seat, line in enumerate(state.lines) if line]
    standings = engine.standings(state)
    assert standings is not None
    assert sorted(s.seat for s in standings) == list(range(players))
    assert [(s.place, s.seat) for s in standings] == sorted((s.place, s.seat) for s in standings)
    assert all(s.score is None for s in standings)
    final = places(state)
    if state.capped:
        assert state.turns == options.turn_cap
        assert len(holders) >= 2
        assert {s.place for s in standings} <= {1, 2, players}
    else:
        assert len(holders) == 1
        assert state.finishers[0] == standings[0].seat
        assert [s.place for s in standings] == [1, *([2] * (players - 2)), players]
        assert final[holders[0]] == players
        assert len(state.finishers) == players - 1
    try:
        engine.parse(state, 0, "place 0 1")
    except OrderError as error:
        assert error.message == "the game is over; no order is expected from you"
    else:
        raise AssertionError("an order was accepted after the game ended")
