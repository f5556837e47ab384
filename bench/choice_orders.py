"""Different legal orders of a Choice seat, for the order benchmarks: every post sends a
new revision, as a player who changes their mind does. Pure: the engine only."""

from __future__ import annotations

import itertools
from typing import Any

from games.engines.base import GameError
from games.engines.registry import get


class NoDice:
    """Orders are checked without drawing: a Choice order draws nothing."""

    def draw(self, sides: int) -> int:
        raise RuntimeError("an order drew a die")


class TooFewOrders(RuntimeError):
    """The dice leave the seat one order (or none): a player who cannot vary its orders."""


def orders_of(game_state: Any, position: int, most: int) -> list[str]:
    """Up to ``most`` different legal orders of the seat for the open step of a Choice game
    in ``game_state`` (its stored state), in the engine's words: its NMR default with each
    round's four dice paired in every other way. RuntimeError when there are fewer than
    two."""
    engine = get("choice")
    state = engine.state_from_json(game_state)
    lines = engine.canonical(state, position, engine.default(state, position)).splitlines()
    per_line = []
    for line in lines:
        number, kind, first, second = line.split()
        a, b = first.split("+")
        c, d = second.split("+")
        pairings = [((a, b), (c, d)), ((a, c), (b, d)), ((a, d), (b, c))]
        per_line.append(
            [f"{number} {kind} {p[0]}+{p[1]} {q[0]}+{q[1]}" for p, q in pairings]
            + [f"{number} {kind} {q[0]}+{q[1]} {p[0]}+{p[1]}" for p, q in pairings]
        )
    found: dict[str, None] = {}
    for text in ("\n".join(rounds) for rounds in itertools.product(*per_line)):
        try:
            order = engine.parse(state, position, text)
            engine.submit(state, position, order, NoDice())
        except GameError:
            continue
        found.setdefault(engine.canonical(state, position, order), None)
        if len(found) == most:
            break
    if len(found) < 2:
        raise TooFewOrders(f"seat {position} has fewer than two different orders")
    return list(found)
