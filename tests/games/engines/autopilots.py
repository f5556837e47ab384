"""What every autopilot must do at every prompt (games.engines.base.Strategy), checked
alike for every game by the tests of each game's autopilots."""

from __future__ import annotations

import json
from typing import Any

from games.engines.base import Dice, Engine, Strategy
from games.engines.dice import VerifiableDice


def spare_dice() -> Dice:
    """Dice for a trial submit, apart from the game's own: a trial must not use up the
    values the game goes on with."""
    return VerifiableDice(b"autopilot trial", 1)


def checked_order(engine: Engine[Any, Any, Any], strategy: Strategy, state: Any, seat: int) -> Any:
    """The order ``strategy`` plays for ``seat`` (which a prompt names), after checking it:
    the same state gives the same order, also read back from the state's JSON (so it hangs
    on nothing but the state); the engine's text of it parses back to it; ``submit`` takes
    it now."""
    assert seat in {prompt.seat for prompt in engine.prompts(state)}
    order = strategy.play(state, seat)
    assert isinstance(order, engine.Order)  # type: ignore[attr-defined]
    assert strategy.play(state, seat) == order
    stored = engine.state_from_json(json.loads(json.dumps(engine.state_to_json(state))))
    assert strategy.play(stored, seat) == order
    assert engine.parse(state, seat, engine.canonical(state, seat, order)) == order
    engine.submit(state, seat, order, spare_dice())
    return order
