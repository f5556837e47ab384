"""Random legal games of Dice Survivor for 3 to 8 players, played to the end or to the turn
cap through parse/submit/resolve as the postal layer drives them, with the invariants checked
after every step."""

from __future__ import annotations

import itertools
import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.engines.base import OrderError, to_json
from games.engines.dice import VerifiableDice
from games.engines.dice_survivor.rules import DiceSurvivorEngine, SurvivorOptions, SurvivorState

engine = DiceSurvivorEngine()


def roundtrip(state: SurvivorState) -> None:
    # The engine's encoder, made from the hints, writes what the generic one writes.
    assert engine.state_to_json(state) == to_json(state)
    data = json.loads(json.dumps(engine.state_to_json(state)))
    assert engine.state_from_json(data) == state
    json.dumps(engine.view(state, None))


def check_invariants(state: SurvivorState, players: int, options: SurvivorOptions) -> None:
    alive = [seat for seat, p in enumerate(state.participants) if not p.out]
    assert all(p.pp >= 0 for p in state.participants)
    assert all((p.pp == 0) == p.out for p in state.participants)
    # the bank balances: PP held plus PP paid in equal the PP handed out
    assert sum(p.pp for p in state.participants) + state.bank == players * options.start_pp
    assert all(0 <= p.rematches_used <= options.rematches for p in state.participants)
    for prompt in engine.prompts(state):
        assert not state.participants[prompt.seat].out
    # the Finals are on exactly when a game of six or more is down to three (or fewer)
    if state.finals:
        assert players >= 6 and len(alive) <= 3
    elif not state.finished:
        assert players < 6 or len(alive) > 3
    if state.finished:
        assert engine.prompts(state) == []
        assert len(alive) == 1 or state.capped
    else:
        assert len(alive) >= 2
        assert len(engine.prompts(state)) == 1
        assert not state.participants[state.active].out


@st.composite
def setups(draw: st.DrawFn) -> tuple[SurvivorOptions, int]:
    options = engine.options(
        {
            "start_pp": draw(st.sampled_from([1, 2, 3, 5])),
            "rematches": draw(st.sampled_from([0, 1, 3])),
            "ko_half": draw(st.sampled_from(["floor", "ceil"])),
            "ko_defender": draw(st.sampled_from(["lower", "higher"])),
            "finals_add_pp": draw(st.booleans()),
            "turn_cap": draw(st.sampled_from([20, 45, 120])),
        }
    )
    return options, draw(st.integers(3, 8))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setup=setups(), seed=st.binary(min_size=32, max_size=32), rng=st.randoms())
def test_random_games_keep_the_rules_invariants(
    setup: tuple[SurvivorOptions, int], seed: bytes, rng: random.Random
) -> None:
    options, players = setup
    dice = VerifiableDice(seed, game_id=rng.randrange(1, 10**6))
    names = [f"p{seat}" for seat in range(players)]
    state, _ = engine.start(options, names, dice)
    roundtrip(state)
    check_invariants(state, players, options)
    was_finals = False
    steps = 0
    while engine.prompts(state):
        steps += 1
        assert steps < 10 * options.turn_cap
        before = engine.prompts(state)
        (prompt,) = before
        alive_before = sum(not p.out for p in state.participants)
        for other in range(players):
            if other != prompt.seat:
                try:
                    engine.parse(state, other, "pass")
                except OrderError:
                    pass
                else:
                    raise AssertionError("an order was accepted from a seat not prompted")
        legal = engine.legal_orders(state, prompt.seat)
        assert legal
        if rng.random() < 0.15:
            state, _ = engine.resolve(state, dice)
        else:
            order = rng.choice(legal)
            text = engine.canonical(state, prompt.seat, order)
            assert engine.parse(state, prompt.seat, text) == order
            state, events = engine.submit(state, prompt.seat, order, dice)
            assert all(event.to is None for event in events)
        # every order takes effect at once: a new step opens
        assert engine.prompts(state) != before
        roundtrip(state)
        check_invariants(state, players, options)
        if state.finals and not was_finals:
            assert alive_before == 4
            assert sum(not p.out for p in state.participants) == 3
            assert state.actions_left == 1 or state.finished
        was_finals = was_finals or state.finals
        if was_finals:
            assert state.finals

    assert state.finished
    standings = engine.standings(state)
    assert standings is not None
    assert sorted(s.seat for s in standings) == list(range(players))
    assert standings[0].place == 1
    for better, worse in itertools.pairwise(standings):
        assert better.place <= worse.place
        if better.place == worse.place:
            assert better.seat < worse.seat
    for standing in standings:
        participant = state.participants[standing.seat]
        assert standing.score == participant.pp
    try:
        engine.parse(state, 0, "pass")
    except OrderError as error:
        assert error.message == "the game is over; no order is expected from you"
    else:
        raise AssertionError("an order was accepted after the game ended")
    assert engine.view(state, None)["status"] == "finished"
