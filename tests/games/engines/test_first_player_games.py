"""Random nights of The First Player (2 to 8 players, absences, gifts, tokens, several rounds)
driven through the replay driver: the dice movements rebuild every count, dice are conserved
except where the rules create them, no seat sees another seat's rolling before the reveal,
and the state survives JSON."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games import records
from games.engines.base import Event, to_json
from games.engines.first_player.rules import (
    COMMIT,
    Cup,
    Die,
    FirstPlayerEngine,
    FirstPlayerState,
    rebuild,
)

engine = FirstPlayerEngine()


class RandomDice:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.count = 0

    def draw(self, sides: int) -> int:
        self.count += 1
        return self.rng.randint(1, sides)


@st.composite
def nights(draw: st.DrawFn) -> dict[str, Any]:
    seats = draw(st.integers(2, 8))
    players = [f"p{seat}" for seat in range(seats)]
    absent = [f"a{n}" for n in range(draw(st.integers(0, 2)))]
    dice: dict[str, int] = {}
    for name in players + absent:
        if draw(st.booleans()):
            dice[name] = draw(st.integers(0, 5))
    if all(dice.get(name, 3) == 0 for name in players):
        dice[players[0]] = 1
    return {
        "order_mode": draw(st.sampled_from(["seating", "free"])),
        "rounds": draw(st.integers(1, 3)),
        "tokens": draw(st.booleans()),
        "reserve_to_second_last": draw(st.booleans()),
        "dice": dice,
        "reserve": draw(st.integers(0, 3)),
        "absent": absent,
        "players": players,
    }


def eligible(row: list[dict[str, Any]]) -> list[int]:
    return [i + 1 for i, die in enumerate(row) if not die["token"] and die["value"] < 6]


def random_order(state: FirstPlayerState, seat: int, kind: str, rng: random.Random) -> str:
    """A legal order for the prompt ``kind``, built from what the seat can see."""
    you = engine.view(state, seat)["you"]
    if kind == "gifts or ready":
        others = [name for s, name in enumerate(state.players) if s != seat]
        held, tokens = state.counts[seat], state.tokens[seat]
        if held >= 2 and rng.random() < 0.4:
            return f"give {rng.choice(others)} {rng.randint(1, held - 1)} dice"
        if tokens and rng.random() < 0.5:
            return f"give {rng.choice(others)} {rng.randint(1, tokens)} tokens"
        return "ready"
    if kind == "ready":
        return "ready"
    if kind == "roll":
        text = f"roll {rng.randint(1, state.counts[seat])}"
        return text + ("\narrange desc" if rng.random() < 0.5 else "")
    if kind == "reroll or arrange":
        hand = you["hand"]
        if len(hand) >= 2 and rng.random() < 0.4:
            return f"reroll set-aside {rng.choice(hand)}"
        shuffled = list(hand)
        rng.shuffle(shuffled)
        text = f"arrange {' '.join(map(str, shuffled))}"
        rows = [{"value": v, "token": False} for v in shuffled]
        if state.options.tokens and you["tokens_left"] and eligible(rows) and rng.random() < 0.5:
            text += f"\ntoken {rng.choice(eligible(rows))}"
        return text
    # a token: after arranging (COMMIT) or in a window
    free = eligible(you["row"])
    if state.phase == COMMIT:
        if not free or not you["tokens_left"]:
            return ""
        return f"token {rng.choice(free)}"
    count = min(len(free), state.tokens[seat], rng.randint(0, 2))
    return f"token {' '.join(map(str, rng.sample(free, count)))}" if count else "token none"


def members(state: FirstPlayerState) -> list[str]:
    return [*state.players, *(m.name for m in state.absent)]


def check_movements(state: FirstPlayerState, created: int) -> None:
    rebuilt, reserve = rebuild(state.options, members(state), state.movements)
    assert rebuilt == {
        **dict(zip(state.players, state.counts, strict=True)),
        **{m.name: m.count for m in state.absent},
    }
    assert reserve == state.reserve
    listed = sum(count for _, count in state.options.dice) + state.options.reserve
    new = sum(m.count for m in state.movements if m.reason == "new member")
    assert sum(rebuilt.values()) + reserve == listed + new == created
    tokens = dict.fromkeys(state.players, 0)
    for move in state.movements:
        if move.unit == "token":
            if move.giver is not None:
                tokens[move.giver] -= move.count
            if move.receiver is not None:
                tokens[move.receiver] += move.count
    assert tokens == dict(zip(state.players, state.tokens, strict=True))


def scrambled(cup: Cup) -> Cup:
    """The same public facts (rolled, arranged, how many) with other values and tokens."""
    return replace(
        cup,
        hand=tuple(v % 6 + 1 for v in cup.hand),
        set_aside=tuple(v % 6 + 1 for v in cup.set_aside),
        row=tuple(Die(d.value % 5 + 1, not d.token, not d.marked) for d in cup.row),
    )


def check_hidden(state: FirstPlayerState) -> None:
    if state.phase != COMMIT or state.revealed:
        return
    for other in state.participants:
        cups = list(state.cups)
        cups[other] = scrambled(cups[other])
        changed = replace(state, cups=tuple(cups))
        for seat in [None, *range(len(state.players))]:
            if seat == other:
                continue
            assert engine.view(changed, seat) == engine.view(state, seat)


def check_json(state: FirstPlayerState) -> None:
    # The engine's encoder, made from the hints, writes what the generic one writes.
    assert engine.state_to_json(state) == to_json(state)
    data = json.loads(json.dumps(engine.state_to_json(state)))
    assert engine.state_from_json(data) == state
    json.dumps(engine.view(state, None))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(night=nights(), seed=st.integers(0, 2**32 - 1))
def test_random_nights_keep_the_ledger_and_the_secrets(night: dict[str, Any], seed: int) -> None:
    rng = random.Random(seed)
    players = night.pop("players")
    record = {"game": "first-player", "options": night, "players": players, "dice": []}
    replay = records.start(record)
    replay.dice = RandomDice(rng)
    state: FirstPlayerState = replay.state
    created = sum(state.counts) + sum(m.count for m in state.absent) + state.reserve
    for _ in range(400):
        if not replay.prompts:
            break
        if rng.random() < 0.15:
            replay.deadline()
        else:
            prompt = rng.choice(replay.prompts)
            text = random_order(replay.state, prompt.seat, prompt.kind, rng)
            if not text:
                replay.deadline()
            else:
                seen = len(replay.log)
                replay.order(prompt.seat, text)
                new: list[Event] = replay.log[seen:]
                assert all(event.to in (None, (prompt.seat,)) for event in new)
        state = replay.state
        check_movements(state, created)
        check_hidden(state)
        check_json(state)
    while replay.prompts:
        replay.deadline()
    state = replay.state
    check_movements(state, created)
    assert state.finished
    assert state.tokens == (0,) * len(players)
    standings = engine.standings(state)
    assert standings is not None
    assert sorted(s.place for s in standings) == list(range(1, len(players) + 1))
    assert {s.seat: s.score for s in standings} == dict(enumerate(state.counts))
    assert len(state.history) == state.options.rounds
    result = records.describe(replay)
    assert result["reserve"] == state.reserve
    assert result["tracker"][players[0]]["count"] == state.counts[0]
