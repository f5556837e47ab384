"""Drop-Shy's autopilot ``next-room`` (games/engines/drop_shy/autopilot.py): exact orders on
boards from rules/drop-shy.md, and random games where it is checked at every prompt and
where it plays whole games alone. Drop-Shy hides nothing, so there is nothing it could
peek at."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.engines import registry
from games.engines.base import OrderError
from games.engines.dice import VerifiableDice
from games.engines.drop_shy.autopilot import STRATEGIES, next_room
from games.engines.drop_shy.rules import (
    Die,
    DropShyEngine,
    DropShyOptions,
    DropShyOrder,
    DropShyState,
    Placed,
    legal_cells,
)
from tests.games.engines.autopilots import checked_order
from tests.games.engines.test_drop_shy_games import game_setups, random_order

engine = DropShyEngine()
STRATEGY = STRATEGIES[0]


def board(
    grid: dict[tuple[int, int], int], *lines: tuple[Die, ...], two: bool = False
) -> DropShyState:
    """bob (seat 1) on turn on ``grid`` (the instigator at (0, 0)), with these lines."""
    options = engine.options({"selection": "two_candidate" if two else "strict_queue"})
    placed = tuple(
        Placed(x, y, face, None if (x, y) == (0, 0) else 0) for (x, y), face in grid.items()
    )
    return DropShyState(options, ("ann", "bob"), placed, lines, current=1)


def test_the_registry_offers_it_for_drop_shy() -> None:
    assert registry.strategies("drop-shy") == STRATEGIES
    found = registry.strategy("drop-shy", "next-room")
    assert found is not None and found.play is next_room


def test_s13_the_5_goes_where_bobs_next_die_has_most_room() -> None:
    # S13: {(0,0): 4, (1,0): 3}, bob's 5 in play; the NMR default takes (0,1), the first
    # legal cell in scan order. bob's next die is a 6, which may only touch 5s: after the 5
    # goes to (0,1) it fits at (-1,1) and (0,2); at (0,-1) at (-1,-1) and (0,-2); at (-1,0)
    # at (-2,0), (-1,1) and (-1,-1). The autopilot takes (-1,0).
    state = board({(0, 0): 4, (1, 0): 3}, (Die(2),), (Die(5), Die(6)))
    assert engine.default(state, 1) == DropShyOrder(None, (0, 1))
    assert checked_order(engine, STRATEGY, state, 1) == DropShyOrder(None, (-1, 0))


def test_s13_equal_room_goes_to_the_first_cell_in_scan_order() -> None:
    # With a 3 next, every legal cell of the 5 leaves the 3 two cells: (0,1), as the
    # default.
    grid = {(0, 0): 4, (1, 0): 3}
    assert [len(legal_cells({**grid, cell: 5}, 3)) for cell in legal_cells(grid, 5)] == [2, 2, 2]
    state = board(grid, (Die(2),), (Die(5), Die(3)))
    assert checked_order(engine, STRATEGY, state, 1) == DropShyOrder(None, (0, 1))


def test_its_last_die_goes_on_the_first_legal_cell() -> None:
    state = board({(0, 0): 4, (1, 0): 3}, (Die(2),), (Die(5),))
    assert checked_order(engine, STRATEGY, state, 1) == DropShyOrder(None, (0, 1))


def test_two_candidates_it_takes_the_die_that_fits() -> None:
    # Instigator 3; bob's line 5/9, 2/1, 4/12: the rightmost 5 fits nowhere (the default
    # fails it), the closest 2 fits beside the 3 anywhere; the 5 then next fits nowhere
    # either way, so the first cell in scan order.
    state = board({(0, 0): 3}, (Die(2, 5),), (Die(5, 9), Die(2, 1), Die(4, 12)), two=True)
    assert engine.default(state, 1) == DropShyOrder("rightmost", None)
    assert checked_order(engine, STRATEGY, state, 1) == DropShyOrder("closest", (0, 1))


def test_two_candidates_it_keeps_room_for_the_next_front_die() -> None:
    # Board 5 4 5 along y = 0; bob's line 4/9, 3/1, 6/12. Both candidates fit. Placing the
    # rightmost 4 leaves the 3 in front, which fits only beside 4s away from the 5s: in
    # five cells at most. Placing the closest 3 at (1,1), on the 4, leaves the 4 in front,
    # which then fits beside the 3 or a 5 in seven cells. The default plays the rightmost.
    grid = {(0, 0): 5, (1, 0): 4, (2, 0): 5}
    state = board(grid, (Die(2, 5),), (Die(4, 9), Die(3, 1), Die(6, 12)), two=True)
    assert max(len(legal_cells({**grid, cell: 4}, 3)) for cell in legal_cells(grid, 4)) == 5
    assert len(legal_cells({**grid, (1, 1): 3}, 4)) == 7
    assert checked_order(engine, STRATEGY, state, 1) == DropShyOrder("closest", (1, 1))
    assert engine.default(state, 1) == DropShyOrder("rightmost", (0, 1))


def test_two_candidates_equal_room_goes_to_the_rightmost() -> None:
    # Instigator 3; bob's line 4/9, 2/1: whichever is placed beside the 3, the other then
    # fits in the three cells left beside the 3. The rightmost, on the first cell.
    state = board({(0, 0): 3}, (Die(2, 5),), (Die(4, 9), Die(2, 1)), two=True)
    assert checked_order(engine, STRATEGY, state, 1) == DropShyOrder("rightmost", (0, 1))


def test_neither_candidate_fits_it_fails_the_rightmost() -> None:
    state = board({(0, 0): 3}, (Die(2, 5),), (Die(6, 2), Die(6, 1)), two=True)
    assert checked_order(engine, STRATEGY, state, 1) == DropShyOrder("rightmost", None)


def test_it_refuses_a_seat_not_on_turn() -> None:
    state = board({(0, 0): 4}, (Die(3),), (Die(5),))
    with pytest.raises(OrderError):
        STRATEGY.play(state, 0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setup=game_setups(), seed=st.binary(min_size=32, max_size=32), rng=st.randoms())
def test_random_games_it_is_legal_at_every_prompt(
    setup: tuple[DropShyOptions, int], seed: bytes, rng: random.Random
) -> None:
    options, players = setup
    dice = VerifiableDice(seed, game_id=rng.randrange(1, 10**6))
    state, _ = engine.start(options, [f"p{seat}" for seat in range(players)], dice)
    while not state.finished:
        (prompt,) = engine.prompts(state)
        order = checked_order(engine, STRATEGY, state, prompt.seat)
        way = rng.random()
        if way < 0.2:
            state, _ = engine.resolve(state, dice)
        else:
            chosen = order if way < 0.6 else random_order(state, rng)
            state, _ = engine.submit(state, prompt.seat, chosen, dice)
    assert engine.prompts(state) == []


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setup=game_setups(), seed=st.binary(min_size=32, max_size=32))
def test_games_played_by_the_autopilot_alone_finish(
    setup: tuple[DropShyOptions, int], seed: bytes
) -> None:
    options, players = setup
    dice = VerifiableDice(seed, game_id=3)
    state, _ = engine.start(options, [f"p{seat}" for seat in range(players)], dice)
    while not state.finished:
        assert state.turns < options.turn_cap
        (prompt,) = engine.prompts(state)
        order = checked_order(engine, STRATEGY, state, prompt.seat)
        state, _ = engine.submit(state, prompt.seat, order, dice)
    assert all(turn.how != "default" for turn in state.history)
    standings = engine.standings(state)
    assert standings is not None and standings[0].place == 1
