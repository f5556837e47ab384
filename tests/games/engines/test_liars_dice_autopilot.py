"""Liar's Dice's autopilot ``expected-count`` (games/engines/liars_dice/autopilot.py): exact
moves on hands from rules/liars-dice.md in every profile, that it never reads a die its
seat may not see, and random games of every profile where it is checked at every prompt
and where it plays whole games alone."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import replace
from fractions import Fraction
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.engines import registry
from games.engines.base import JSON, OrderError
from games.engines.dice import ScriptedDice, VerifiableDice
from games.engines.liars_dice.autopilot import (
    STRATEGIES,
    expected_count,
    expected_count_play,
    expected_sum,
    known_dice,
)
from games.engines.liars_dice.rules import (
    Bid,
    Learnt,
    LiarsDiceEngine,
    LiarsDiceOrder,
    LiarsDiceState,
)
from games.records import Replay
from tests.games.engines.autopilots import checked_order
from tests.games.engines.test_liars_dice_games import order_for, scrambled, visible

engine = LiarsDiceEngine()
STRATEGY = STRATEGIES[0]
LIAR = LiarsDiceOrder("liar")


def bid(quantity: int, face: int, show: int | None = None) -> LiarsDiceOrder:
    return LiarsDiceOrder("bid", quantity, face, show=show)


def table(
    options: Mapping[str, JSON],
    hands: Sequence[Sequence[int]],
    bids: Sequence[tuple[int, int]] = (),
    players: Sequence[str] = ("ann", "bob", "cy", "dee"),
) -> LiarsDiceState:
    """Round 1 of ``options`` with these hands (seat order; an empty hand is a player out),
    the bids made in turn from seat 1 on, and the seat after the last bidder on turn."""
    players = players[: len(hands)]
    state, _ = engine.start(engine.options(options), players, ScriptedDice([3] * 200))
    counts = tuple(len(hand) for hand in hands)
    state = replace(state, counts=counts, hands=tuple(tuple(hand) for hand in hands))
    while state.phase != "bidding":  # the Mulligan and Cheat steps pass with their defaults
        state, _ = engine.resolve(state, ScriptedDice([]))
    for quantity, face in bids:
        seat = state.turn
        state, _ = engine.submit(state, seat, bid(quantity, face), ScriptedDice([]))
    return state


def play(state: LiarsDiceState) -> LiarsDiceOrder:
    """The autopilot's move for the seat on turn, checked as at every prompt."""
    return cast(LiarsDiceOrder, checked_order(engine, STRATEGY, state, state.turn))


def test_the_registry_offers_it_for_liars_dice() -> None:
    assert registry.strategies("liars-dice") == STRATEGIES
    found = registry.strategy("liars-dice", "expected-count")
    assert found is not None and found.play is expected_count_play
    assert registry.strategy("liars-dice", "best-score") is None


# --- classic -------------------------------------------------------------------------------


def test_12_1_bob_raises_on_the_face_his_cup_supports_best() -> None:
    # 12.1: three players, wild ones, ann bid 3 x 4. bob holds 1 4 4 2 6; ten dice unknown,
    # each a 4 or a one with chance 1/3. Fours: 3 + 10/3 = 19/3, so 3 x 4 stands.
    state = table(
        {"palifico": False}, [[2, 3, 5, 6, 6], [1, 4, 4, 2, 6], [5, 5, 3, 2, 6]], [(3, 4)]
    )
    assert state.turn == 1
    assert expected_count(state, 1, 4) == Fraction(19, 3)
    # Smallest raises: 3 x 5 (1 + 10/3), 3 x 6 (2 + 10/3), 4 x 2 (2 + 10/3), 4 x 3
    # (1 + 10/3), 4 x 4 (19/3) and, to ones, 2 x 1 (1 + 10/6). 3 x 6 and 4 x 4 both have
    # 7/3 to spare: the lower quantity is bid.
    assert play(state) == bid(3, 6)


def test_it_calls_liar_only_above_the_expected_count() -> None:
    # Three players of two dice; bob holds 4 4 and four dice are unknown: 2 + 4/3 fours.
    # After 3 x 4 the best raise is 4 x 4 (-2/3 to spare; 3 x 5 and 3 x 6 expect 4/3).
    hands = [[2, 3], [4, 4], [5, 6]]
    assert expected_count(table({}, hands, [(4, 4)]), 1, 4) == Fraction(10, 3)
    assert play(table({}, hands, [(3, 4)])) == bid(4, 4)
    assert play(table({}, hands, [(4, 4)])) == LIAR


def test_it_opens_on_the_best_supported_face_never_on_ones() -> None:
    # bob opens with 1 1 3 5 5 against five unknown dice: 5s expect 4 + 5/3.
    state = table({}, [[1, 1, 3, 5, 5], [2, 2, 2, 6, 6]], players=("bob", "ann"))
    assert state.turn == 0 and not state.bids
    assert play(state) == bid(1, 5)
    # Without wild ones, 1s and 5s tie (2 + 5/6 each): the lower face.
    state = table({"wild_ones": False}, [[1, 1, 3, 5, 5], [2, 2, 2, 6, 6]])
    assert play(state) == bid(1, 1)


def test_with_ones_in_hand_it_switches_to_ones() -> None:
    # bob holds 1 1 1 1 2 against five unknown: after 5 x 4 the ones need only 3 (half of
    # 5, up), expecting 4 + 5/6; 5 x 5 and 5 x 6 expect 4 + 5/3, 6 x 2 5 + 5/3.
    state = table({}, [[3, 4, 4, 6, 6], [1, 1, 1, 1, 2]], [(5, 4)])
    assert play(state) == bid(3, 1)


def test_leaving_ones_takes_twice_the_quantity_and_one() -> None:
    # ann bids 3 x 3, cy 2 x 1; bob sees ten unknown dice. Leaving ones takes 5 of a face.
    def after_ones(bob: list[int]) -> LiarsDiceState:
        hands = [[3, 4, 4, 6, 6], [5, 5, 2, 3, 3], bob]
        return table({}, hands, [(3, 3), (2, 1)], players=("ann", "cy", "bob"))

    # Five ones: 3 x 1 has 5 + 10/6 - 3 to spare, 5 x 2 only 5 + 10/3 - 5.
    assert play(after_ones([1, 1, 1, 1, 1])) == bid(3, 1)
    # One 1 and four 2s: 5 x 2 (5 + 10/3 - 5) beats 3 x 1 (1 + 10/6 - 3).
    assert play(after_ones([1, 2, 2, 2, 2])) == bid(5, 2)


def test_palifico_keeps_the_face_and_ones_are_not_wild() -> None:
    # ann opens a palifico round holding a single 1: ones may open it, and are not wild.
    state = replace(table({}, [[1], [3, 1], [6, 6]]), palifico=True)
    assert expected_count(state, 0, 1) == 1 + Fraction(4, 6)
    assert play(state) == bid(1, 1)
    state, _ = engine.submit(state, 0, bid(1, 1), ScriptedDice([]))
    # bob holds 3 1: ones and threes both expect 1 + 3/6. 1 x 3 would be the better raise
    # in another round; in palifico the face stays, so 2 x 1.
    assert expected_count(state, 1, 3) == expected_count(state, 1, 1) == Fraction(3, 2)
    assert play(state) == bid(2, 1)
    state, _ = engine.submit(state, 1, bid(2, 1), ScriptedDice([]))
    # cy holds 6 6 and expects 3/6 ones of 2: liar.
    assert play(state) == LIAR


# --- Death Match ---------------------------------------------------------------------------


def test_l3_b_challenges_three_sixes() -> None:
    # L3: A = 1 1 6 2, B = 6 4 4 1, A claims 3 x 6. B sees one 6 and four unknown dice
    # (1/6 each, no wilds): 1 + 4/6 < 3.
    state = table({"profile": "genius_dm"}, [[1, 1, 6, 2], [6, 4, 4, 1]], [(3, 6)])
    assert expected_count(state, 1, 6) == Fraction(5, 3)
    assert play(state) == LIAR
    # The NMR default here would be a missed deadline, which submit refuses.
    assert engine.default(state, 1) == LiarsDiceOrder("timeout")
    with pytest.raises(OrderError):
        engine.submit(state, 1, engine.default(state, 1), ScriptedDice([]))


def test_a_seat_that_cheated_counts_the_opponents_dice() -> None:
    state = table({"profile": "genius_dm", "cheat": True}, [[1, 1, 6, 2], [6, 4, 4, 1]], [(2, 6)])
    assert play(state) == LIAR  # 1 + 4/6 sixes expected
    cheated = replace(state, cheated=(False, True))
    # Having seen A's cup, B knows every die: two 6s, so 2 x 6 stands. No face has more
    # than 6 to raise to at 2; at 3 only the 1s (three of them) hold: 3 x 1.
    assert known_dice(cheated, 1) == {
        (1, 1): 6, (1, 2): 4, (1, 3): 4, (1, 4): 1, (0, 1): 1, (0, 2): 1, (0, 3): 6, (0, 4): 2
    }  # fmt: skip
    assert play(cheated) == bid(3, 1)


def test_revelation_shows_a_die_that_does_not_back_the_claim() -> None:
    state = table(
        {"profile": "genius_dm", "revelation": True, "dice_per_player": 5},
        [[5, 5, 5, 2, 3], [4, 4, 2, 6, 1]],
    )
    # ann opens on fives (3 + 5/6) and must show a die: the first that is not a 5, her 4th.
    assert play(state) == bid(1, 5, show=4)


def test_double_face_weights_the_announced_faces() -> None:
    state = table({"profile": "genius_dm"}, [[2, 2, 3, 3], [1, 1, 1, 1]])
    state = replace(state, options=replace(state.options, double_face=True), faces=(2, 4, 6))
    assert expected_count(state, 0, 2) == 2 + 4 * Fraction(2, 9)
    assert expected_count(state, 0, 3) == 2 + 4 * Fraction(1, 9)
    assert play(state) == bid(1, 2)


def test_mulligan_and_cheat_steps_take_the_nmr_default() -> None:
    options = {"profile": "genius_dm", "mulligan": True, "cheat": True}
    state, _ = engine.start(engine.options(options), ["ann", "bob"], ScriptedDice([3] * 8))
    assert state.phase == "mulligan"
    assert checked_order(engine, STRATEGY, state, 0) == LiarsDiceOrder("mulligan")
    assert checked_order(engine, STRATEGY, state, 1) == engine.default(state, 1)
    state, _ = engine.resolve(state, ScriptedDice([]))
    assert state.phase == "cheat"
    assert checked_order(engine, STRATEGY, state, 1) == LiarsDiceOrder("cheat", cheat=False)


def test_it_refuses_a_seat_that_owes_nothing() -> None:
    state = table({}, [[2, 3], [4, 4], [5, 6]], [(3, 4)])
    with pytest.raises(OrderError):
        STRATEGY.play(state, 0)


# --- the team game -------------------------------------------------------------------------

TEAM = {"profile": "genius_team"}


def test_team_it_counts_the_hand_it_watches_never_its_own() -> None:
    # ann watches dee (5 5 5 2 3); fifteen dice are unknown, her own among them.
    hands = [[5, 5, 5, 5, 5], [1, 2, 3, 4, 6], [5, 1, 1, 1, 1], [5, 5, 5, 2, 3]]
    state = table(TEAM, hands, [(2, 3), (3, 3), (4, 2), (5, 5)])
    assert state.turn == 0
    assert expected_count(state, 0, 5) == 3 + Fraction(15, 6)
    assert play(state) == bid(6, 5)
    state = table(TEAM, hands, [(2, 3), (3, 3), (4, 2), (6, 5)])
    assert play(state) == LIAR


def test_team_a_die_it_learnt_and_its_own_revealed_die_count() -> None:
    hands = [[5, 5, 5, 5, 5], [1, 2, 3, 4, 6], [5, 1, 1, 1, 1], [5, 5, 5, 2, 3]]
    state = table(TEAM, hands, [(2, 3), (3, 3), (4, 2), (6, 5)])
    # ann learnt cy's first die (a 5) and bob revealed ann's first (a 5) to everybody:
    # she knows seven dice, five of them 5s, and 13 unknown: 6 x 5 stands; 7 x 5 it is.
    seen = replace(state, learnt=(Learnt(0, 2, 1),), revealed=((1,), (), (), ()), acted=True)
    assert expected_count(seen, 0, 5) == 5 + Fraction(13, 6)
    assert play(seen) == bid(7, 5)
    # A die bob learnt is not ann's to count: 3 + 15/6 < 6.
    assert play(replace(state, learnt=(Learnt(1, 2, 1),))) == LIAR


def test_team_sum_phase_bids_the_expected_sum() -> None:
    # Two single dice: ann's (unknown to her) and cy's 4, which she watches: 4 + 7/2.
    state = table(TEAM, [[6], [], [4], []])
    assert state.sum_phase and state.turn == 0
    assert expected_sum(state, 0) == Fraction(15, 2)
    assert play(state) == LiarsDiceOrder("bid", 2, 0, sum=True)
    state = replace(state, bids=(Bid(2, 7, 0, sum=True),))
    assert play(state) == LiarsDiceOrder("bid", 8, 0, sum=True)
    state = replace(state, bids=(Bid(2, 8, 0, sum=True),))
    assert play(state) == LIAR


# --- no peeking ----------------------------------------------------------------------------


def disguised(state: LiarsDiceState, seat: int) -> LiarsDiceState:
    """``state`` with everything ``seat`` may not see changed: every die it does not see,
    and in the Death Match the opponent's sealed Mulligan and Cheat orders, whether it
    cheated, its Oracle answers, what it rerolled and the sum it was told."""
    state = scrambled(state, visible(state, seat))
    if state.profile != "genius_dm":
        return state
    other = 1 - seat

    def mine(values: tuple[Any, ...], changed: Any) -> tuple[Any, ...]:
        return tuple(changed if s == other else value for s, value in enumerate(values))

    bids = tuple(
        replace(b, true=None if b.true is None else not b.true) if b.seat == other else b
        for b in state.bids
    )
    return replace(
        state,
        bids=bids,
        cheated=mine(state.cheated, not state.cheated[other]),
        cheats=mine(state.cheats, not state.cheats[other]),
        mulligans=mine(state.mulligans, (1,) if state.mulligans[other] is None else None),
        rerolled=mine(state.rerolled, (1, 2) if not state.rerolled[other] else ()),
        sums=mine(state.sums, (state.sums[other] or 0) + 1),
    )


def test_a_disguised_table_hides_what_the_rules_hide() -> None:
    # The disguise itself can fail: it changes every die the seat does not see.
    state = table({"profile": "genius_dm"}, [[1, 1, 6, 2], [6, 4, 4, 1]], [(3, 6)])
    assert disguised(state, 1).hands == ((2, 2, 1, 3), (6, 4, 4, 1))
    assert expected_count(disguised(state, 1), 1, 6) == expected_count(state, 1, 6)
    # A state where a cheat showed B the cup is not disguised there.
    cheated = replace(state, cheated=(False, True))
    assert disguised(cheated, 1).hands == cheated.hands


def check_prompt(state: LiarsDiceState, seat: int) -> LiarsDiceOrder:
    order = cast(LiarsDiceOrder, checked_order(engine, STRATEGY, state, seat))
    assert STRATEGY.play(disguised(state, seat), seat) == order
    return order


# --- random games --------------------------------------------------------------------------

MOVE_LIMIT = 4000

PROFILES = st.one_of(
    st.fixed_dictionaries(
        {
            "players": st.integers(2, 6),
            "dice_per_player": st.integers(1, 5),
            "wild_ones": st.booleans(),
            "palifico": st.booleans(),
            "calza": st.booleans(),
        }
    ),
    st.fixed_dictionaries(
        {"profile": st.just("genius_dm"), "players": st.just(2), "reserve": st.booleans()},
        optional={
            name: st.booleans()
            for name in (
                "cheat",
                "double_face",
                "fresh_start",
                "mulligan",
                "oracle",
                "revelation",
                "summation",
            )
        },
    ),
    st.fixed_dictionaries(
        {
            "profile": st.just("genius_team"),
            "players": st.just(4),
            "team_seating": st.sampled_from(["alternate", "adjacent"]),
            "dice_per_player": st.integers(1, 5),
        }
    ),
)


def start(setup: dict[str, Any], seed: int) -> Replay:
    options = {key: value for key, value in setup.items() if key != "players"}
    names = ["ann", "bob", "cy", "dee", "eve", "fay"][: setup["players"]]
    dice = VerifiableDice(seed.to_bytes(8, "big"), seed)
    state, events = engine.start(engine.options(options), names, dice)
    return Replay(engine, names, dice, state, engine.prompts(state), log=list(events))


SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)


@SETTINGS
@given(setup=PROFILES, seed=st.integers(0, 2**32))
def test_random_games_it_is_legal_at_every_prompt(setup: dict[str, Any], seed: int) -> None:
    rng = random.Random(seed)
    replay = start(setup, seed)
    for _ in range(MOVE_LIMIT):
        state = cast(LiarsDiceState, replay.state)
        if not replay.prompts:
            return
        for prompt in replay.prompts:
            check_prompt(state, prompt.seat)
        waiting = [p.seat for p in replay.prompts if p.seat not in replay.answered]
        if rng.random() < 0.08 or not waiting:
            replay.deadline()
            continue
        seat = rng.choice(waiting)
        if rng.random() < 0.4:
            replay.order(seat, engine.canonical(state, seat, STRATEGY.play(state, seat)))
            continue
        for _ in range(20):
            try:
                replay.order(seat, order_for(replay.state, seat, rng))
                break
            except OrderError:
                continue
        else:
            replay.deadline()
    raise AssertionError("the game did not end")


@SETTINGS
@given(setup=PROFILES, seed=st.integers(0, 2**32))
def test_games_played_by_the_autopilot_alone_finish(setup: dict[str, Any], seed: int) -> None:
    replay = start(setup, seed)
    for _ in range(MOVE_LIMIT):
        state = cast(LiarsDiceState, replay.state)
        if not replay.prompts:
            break
        waiting = [p.seat for p in replay.prompts if p.seat not in replay.answered]
        seat = waiting[0]
        replay.order(seat, engine.canonical(state, seat, check_prompt(state, seat)))
    else:
        raise AssertionError("the game did not end")
    assert replay.state.finished
    assert engine.standings(replay.state) is not None
    # No move was left to a deadline: every one was the autopilot's own.
    assert not any("sent no" in event.text or "missed" in event.text for event in replay.log)
