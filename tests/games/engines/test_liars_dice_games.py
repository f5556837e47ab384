"""Random legal games of Liar's Dice, every profile, played to the end through the replay
driver: dice counts change as the rules say, the game always ends, the state survives JSON,
and no view shows a die its seat may not see (the view does not change when those dice do)."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from typing import Any, cast

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.engines.base import OrderError, to_json
from games.engines.dice import VerifiableDice
from games.engines.liars_dice.rules import LiarsDiceEngine, LiarsDiceState, behind
from games.records import Replay

engine = LiarsDiceEngine()
MOVE_LIMIT = 4000


def visible(state: LiarsDiceState, seat: int | None) -> set[tuple[int, int]]:
    """The (owner, slot) dice ``seat`` may see now, by the rules (not by the engine's view)."""
    seen: set[tuple[int, int]] = set()
    if state.profile == "genius_team":
        for owner in state.seats:
            seen |= {(owner, slot) for slot in state.revealed[owner]}
        if seat is not None and state.counts[seat] and not state.finished:
            watched = behind(state, seat)
            seen |= {(watched, slot) for slot in range(1, state.counts[watched] + 1)}
            seen |= {(entry.target, entry.slot) for entry in state.learnt if entry.seat == seat}
        return seen
    if seat is None:
        return seen
    seen |= {(seat, slot) for slot in range(1, state.counts[seat] + 1)}
    if state.profile == "genius_dm":
        other = 1 - seat
        if state.cheated[seat]:
            seen |= {(other, slot) for slot in range(1, state.counts[other] + 1)}
        seen |= {(other, bid.show) for bid in state.bids if bid.seat == other and bid.show}
    return seen


def scrambled(state: LiarsDiceState, seen: set[tuple[int, int]]) -> LiarsDiceState:
    hands = tuple(
        tuple(
            die if (owner, slot) in seen else die % 6 + 1 for slot, die in enumerate(hand, start=1)
        )
        for owner, hand in enumerate(state.hands)
    )
    return replace(state, hands=hands)


def check_state(state: LiarsDiceState) -> None:
    # The engine's encoder, made from the hints, writes what the generic one writes.
    assert engine.state_to_json(state) == to_json(state)
    data = json.loads(json.dumps(engine.state_to_json(state)))
    assert engine.state_from_json(data) == state
    if not state.finished:
        assert tuple(len(hand) for hand in state.hands) == state.counts
    for seat in [None, *state.seats]:
        view = engine.view(state, seat)
        json.dumps(view)
        assert engine.view(scrambled(state, visible(state, seat)), seat) == view


def bid_text(state: LiarsDiceState, seat: int, rng: random.Random) -> str:
    if state.sum_phase:
        low = state.bids[-1].quantity + 1 if state.bids else 2
        return f"bid sum {rng.randint(min(low, 12), 12)}"
    last = state.bids[-1] if state.bids else None
    quantity = rng.randint(1, 3) if last is None else last.quantity + rng.choice([0, 0, 1, 2])
    if last is not None and last.face == 1 and rng.random() < 0.5:
        quantity = 2 * last.quantity + 1
    text = f"bid {max(quantity, 1)} {rng.randint(1, 6)}"
    if state.options.revelation:
        shown = {bid.show for bid in state.bids if bid.seat == seat and bid.show}
        unshown = [slot for slot in range(1, state.counts[seat] + 1) if slot not in shown]
        if len(unshown) > 3:
            text += f" show {rng.choice(unshown)}"
    return text


def move_text(state: LiarsDiceState, seat: int, rng: random.Random) -> str:
    roll = rng.random()
    if state.bids and roll < 0.3:
        return "liar"
    if state.bids and state.options.calza and roll < 0.4:
        return "spot"
    if state.options.cheat and roll < 0.45:
        return "accuse"
    return bid_text(state, seat, rng)


def action_text(state: LiarsDiceState, seat: int, rng: random.Random) -> str:
    watched = behind(state, seat)
    reveal = rng.randint(1, state.counts[watched])
    if rng.random() < 0.5:
        return f"reveal {reveal} reroll"
    target = rng.choice(state.alive())
    slot = rng.randint(1, state.counts[target])
    return f"reveal {reveal} learn {state.players[target]} {slot}"


def order_for(state: LiarsDiceState, seat: int, rng: random.Random) -> str:
    if state.phase == "mulligan":
        most = min(5, state.counts[seat])
        positions = rng.sample(range(1, state.counts[seat] + 1), rng.randint(0, most))
        return "mulligan " + (" ".join(map(str, positions)) or "none")
    if state.phase == "cheat":
        return rng.choice(["cheat yes", "cheat no"])
    if state.profile == "genius_team" and not state.acted and rng.random() < 0.4:
        action = action_text(state, seat, rng)
        if rng.random() < 0.5:
            return action
        return f"{action}\n{move_text(state, seat, rng)}"
    return move_text(state, seat, rng)


def play(options: dict[str, Any], players: int, seed: int) -> LiarsDiceState:
    rng = random.Random(seed)
    names = ["ann", "bob", "cy", "dee", "eve", "fay"][:players]
    dice = VerifiableDice(seed.to_bytes(8, "big"), seed)
    state, events = engine.start(engine.options(options), names, dice)
    replay = Replay(engine, names, dice, state, engine.prompts(state), log=list(events))
    rounds = [(state.round, sum(state.counts))]
    for _ in range(MOVE_LIMIT):
        state = cast(LiarsDiceState, replay.state)
        check_state(state)
        if rounds[-1][0] != state.round or state.finished:
            check_dice_change(state, rounds[-1][1])
            rounds.append((state.round, sum(state.counts)))
        if not replay.prompts:
            return state
        waiting = [p.seat for p in replay.prompts if p.seat not in replay.answered]
        if rng.random() < 0.08 or not waiting:
            replay.deadline()
            continue
        seat = rng.choice(waiting)
        for _ in range(20):
            try:
                replay.order(seat, order_for(replay.state, seat, rng))
                break
            except OrderError:
                continue
        else:
            replay.deadline()
    raise AssertionError("the game did not end")


def check_dice_change(state: LiarsDiceState, before: int) -> None:
    """A round changes the dice in play by one: down in classic and team (up after a right
    spot call, or unchanged when that player already holds the most), up in the Death Match."""
    change = sum(state.counts) - before
    last = state.last
    assert last is not None
    if state.profile == "genius_dm":
        assert change == 1
    elif "calls spot" in last.result and "exactly" in last.result:
        assert change in (0, 1)
    else:
        assert change == -1
    assert all(number >= 0 for number in state.counts)
    if state.profile == "classic":
        assert max(state.counts) <= state.options.dice_per_player


SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)


@SETTINGS
@given(
    players=st.integers(2, 6),
    dice_per_player=st.integers(1, 5),
    wild_ones=st.booleans(),
    palifico=st.booleans(),
    calza=st.booleans(),
    seed=st.integers(0, 2**32),
)
def test_random_classic_games_end_with_one_player_left(
    players: int, dice_per_player: int, wild_ones: bool, palifico: bool, calza: bool, seed: int
) -> None:
    options = {
        "dice_per_player": dice_per_player,
        "wild_ones": wild_ones,
        "palifico": palifico,
        "calza": calza,
    }
    state = play(options, players, seed)
    assert len(state.alive()) == 1
    standings = engine.standings(state)
    assert standings is not None
    assert [s.place for s in standings] == list(range(1, players + 1))
    assert standings[0].seat == state.alive()[0]


@SETTINGS
@given(
    anomalies=st.sets(
        st.sampled_from(
            [
                "cheat",
                "double_face",
                "fresh_start",
                "mulligan",
                "oracle",
                "revelation",
                "summation",
            ]
        )
    ),
    reserve=st.booleans(),
    max_dice=st.integers(5, 10),
    seed=st.integers(0, 2**32),
)
def test_random_death_matches_end_when_a_player_holds_too_many(
    anomalies: set[str], reserve: bool, max_dice: int, seed: int
) -> None:
    options: dict[str, Any] = {"profile": "genius_dm", "reserve": reserve, "max_dice": max_dice}
    options.update(dict.fromkeys(anomalies, True))
    state = play(options, 2, seed)
    assert state.loser is not None
    assert state.counts[state.loser] == max_dice + 1
    assert max(state.cheats_used) <= 2
    standings = engine.standings(state)
    assert standings is not None
    assert [(s.seat, s.place) for s in standings] == [(1 - state.loser, 1), (state.loser, 2)]


@SETTINGS
@given(
    seating=st.sampled_from(["alternate", "adjacent"]),
    dice_per_player=st.integers(1, 5),
    seed=st.integers(0, 2**32),
)
def test_random_team_games_end_with_one_team_left(
    seating: str, dice_per_player: int, seed: int
) -> None:
    options = {
        "profile": "genius_team",
        "team_seating": seating,
        "dice_per_player": dice_per_player,
    }
    state = play(options, 4, seed)
    standings = engine.standings(state)
    assert standings is not None
    winners = [s.seat for s in standings if s.place == 1]
    assert [s.place for s in standings] == [1, 1, 3, 3]
    assert set(state.alive()) <= set(winners)
