"""Dice Survivor's autopilot ``odds`` (games/engines/dice_survivor/autopilot.py): exact
orders in hand-built games, its odds against a count of every throw, and random games where
it is checked at every prompt and where it plays whole games alone. Dice Survivor hides
nothing, so there is nothing it could peek at."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.engines import registry
from games.engines.base import OrderError
from games.engines.dice import VerifiableDice
from games.engines.dice_survivor.autopilot import (
    KO_ODDS,
    STRATEGIES,
    challenge_wins,
    ko_succeeds,
    odds,
    rematch_pays,
)
from games.engines.dice_survivor.rules import (
    DiceSurvivorEngine,
    Question,
    SurvivorOptions,
    SurvivorOrder,
    SurvivorState,
)
from tests.games.engines.autopilots import checked_order
from tests.games.engines.test_dice_survivor import game
from tests.games.engines.test_dice_survivor_games import setups

engine = DiceSurvivorEngine()
STRATEGY = STRATEGIES[0]
EVERY_THROW = list(itertools.product(range(1, 21), range(1, 13), range(1, 9)))


def play(state: SurvivorState, seat: int | None = None) -> SurvivorOrder:
    (prompt,) = engine.prompts(state)
    assert seat is None or prompt.seat == seat
    order: SurvivorOrder = checked_order(engine, STRATEGY, state, prompt.seat)
    return order


def ko_used(state: SurvivorState) -> SurvivorState:
    return replace(state, participants=tuple(replace(p, ko_turn=1) for p in state.participants))


def test_the_registry_offers_it_for_dice_survivor() -> None:
    assert registry.strategies("dice-survivor") == STRATEGIES
    found = registry.strategy("dice-survivor", "odds")
    assert found is not None and found.play is odds


# --- the odds, against a count of every throw ----------------------------------------------


@pytest.mark.parametrize(("active", "defender"), [(5, 4), (5, 6), (1, 1), (1, 12), (9, 2)])
def test_challenge_and_ko_odds_count_every_throw(active: int, defender: int) -> None:
    won = lost = knocked = 0
    for d20, d12, d8 in EVERY_THROW:
        mine, theirs = d20 + active, min(d12, d8) + defender
        knocked += mine > theirs
        if d20 == 20 or (d20 != 1 and mine > theirs):
            won += 1
        elif d20 == 1 or mine < theirs:
            lost += 1
    assert challenge_wins(active, defender) == Fraction(won, won + lost)
    state = game([active, defender])
    assert ko_succeeds(state, 0, 1) == Fraction(knocked, len(EVERY_THROW))


def rematch_average(active: int, held: int, stake: int) -> Fraction:
    """The defender's PP change by a rematch, over every throw but those thrown again."""
    total = counted = 0
    for d20, d12, d8 in EVERY_THROW:
        mine, theirs = d20 + active, min(d12, d8) + held
        if d20 == 1:
            total += 1
        elif d20 == 20:
            total -= 1
        elif mine == theirs:
            continue
        elif mine > theirs:
            total -= min(2 * stake, held)
        counted += 1
    return Fraction(total, counted)


@pytest.mark.parametrize(
    ("active", "held", "stake", "answer"),
    [
        (5, 4, 1, "accept"),  # V1: bob's rematch costs 1.67 PP on average
        (5, 1, 1, "rematch"),  # accepting knocks the defender out
        (2, 7, 1, "accept"),  # a rematch costs 1.09 on average
        (2, 8, 1, "rematch"),  # a rematch costs 0.99
        (5, 2, 2, "rematch"),  # a double stake takes all of 2 PP either way
    ],
)
def test_the_defender_rematches_when_that_costs_less(
    active: int, held: int, stake: int, answer: str
) -> None:
    state = game([active, held, 5], question=Question(1, stake))
    assert (rematch_average(active, held, stake) > -min(stake, held)) == (answer == "rematch")
    assert rematch_pays(state, 1) == (answer == "rematch")
    assert play(state, 1) == SurvivorOrder(answer)


# --- the normal phase ----------------------------------------------------------------------


def test_v9_a_ko_when_it_succeeds_three_times_in_four() -> None:
    # V9's PP: ann (5) KOs bob (6) 76.9% of the time; cy (8) less often.
    state = game([5, 6, 8])
    assert ko_succeeds(state, 0, 1) == Fraction(1476, 1920) >= KO_ODDS
    assert play(state, 0) == SurvivorOrder("ko", 1)
    # Keeping the higher of the d12 and d8 (ko_defender) makes it 31%: the Extra Play Point.
    higher = replace(state, options=SurvivorOptions(ko_defender="higher"))
    assert ko_succeeds(higher, 0, 1) < KO_ODDS
    assert play(higher, 0) == SurvivorOrder("extra")


def test_extra_first_then_the_likeliest_challenge() -> None:
    state = ko_used(game([5, 4, 9]))
    assert play(state, 0) == SurvivorOrder("extra")
    # With one action left: bob (4 PP) is beaten 88% of the time, cy (9) 66%.
    after = replace(state, actions_left=1, extra_used=True)
    assert challenge_wins(5, 4) > challenge_wins(5, 9) > Fraction(1, 2)
    assert play(after, 0) == SurvivorOrder("challenge", 1)


def test_it_passes_when_every_challenge_is_likelier_lost() -> None:
    # ann (1 PP) against 8 and 12 PP: at best 49.3% against bob.
    state = replace(ko_used(game([1, 8, 12])), actions_left=1, extra_used=True)
    assert challenge_wins(1, 8) < Fraction(1, 2)
    assert play(state, 0) == SurvivorOrder("pass")
    assert play(replace(state, actions_left=2, extra_used=False), 0) == SurvivorOrder("extra")


def test_the_ko_needs_both_actions() -> None:
    state = replace(game([6, 1, 5]), actions_left=1, extra_used=True)
    assert ko_succeeds(state, 0, 1) > KO_ODDS
    assert play(state, 0) == SurvivorOrder("challenge", 1)


# --- the Finals ----------------------------------------------------------------------------


def test_finals_the_d12_goes_where_the_seat_keeps_its_pp_most() -> None:
    # ann (3) against bob (2) and cy (6), her KO spent: with the d12 bob keeps her PP
    # 63.0% of the time, with cy 56.9%. The NMR default gives it to the richer cy.
    state = ko_used(game([3, 2, 6], finals=True))
    assert play(state, 0) == SurvivorOrder("challenge", 1, d12=True)
    assert engine.default(state, 0) == SurvivorOrder("challenge", 2, d12=True)
    # Equal chances: the first clockwise.
    assert play(ko_used(game([5, 5, 5], finals=True)), 0) == SurvivorOrder("challenge", 1, d12=True)


def test_finals_ko_and_one_opponent() -> None:
    # With her KO unused, ann knocks bob (2 PP) out 86.9% of the time.
    assert play(game([3, 2, 6], finals=True), 0) == SurvivorOrder("ko", 1)
    # Against one opponent the challenge names them as the d12's holder, as parse does.
    state = ko_used(game([3, 0, 6], finals=True))
    assert play(state, 0) == SurvivorOrder("challenge", 2, d12=True)
    assert engine.parse(state, 0, "challenge") == play(state, 0)


def test_it_refuses_a_seat_that_owes_nothing() -> None:
    with pytest.raises(OrderError):
        STRATEGY.play(game([5, 5, 5]), 1)


# --- random games --------------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setup=setups(), seed=st.binary(min_size=32, max_size=32), rng=st.randoms())
def test_random_games_it_is_legal_at_every_prompt(
    setup: tuple[SurvivorOptions, int], seed: bytes, rng: random.Random
) -> None:
    options, players = setup
    dice = VerifiableDice(seed, game_id=rng.randrange(1, 10**6))
    state, _ = engine.start(options, [f"p{seat}" for seat in range(players)], dice)
    while engine.prompts(state):
        (prompt,) = engine.prompts(state)
        order = checked_order(engine, STRATEGY, state, prompt.seat)
        way = rng.random()
        if way < 0.15:
            state, _ = engine.resolve(state, dice)
        else:
            legal = engine.legal_orders(state, prompt.seat)
            assert order in legal
            chosen = order if way < 0.6 else rng.choice(legal)
            state, _ = engine.submit(state, prompt.seat, chosen, dice)
    assert state.finished


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setup=setups(), seed=st.binary(min_size=32, max_size=32))
def test_games_played_by_the_autopilot_alone_finish(
    setup: tuple[SurvivorOptions, int], seed: bytes
) -> None:
    options, players = setup
    dice = VerifiableDice(seed, game_id=11)
    state, _ = engine.start(options, [f"p{seat}" for seat in range(players)], dice)
    while engine.prompts(state):
        assert state.turn <= options.turn_cap
        (prompt,) = engine.prompts(state)
        order = checked_order(engine, STRATEGY, state, prompt.seat)
        state, _ = engine.submit(state, prompt.seat, order, dice)
    assert state.finished
    assert all(not action.default for action in state.log)
    standings = engine.standings(state)
    assert standings is not None and standings[0].place == 1
