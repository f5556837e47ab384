"""The one list of games: key -> engine. Model choices, forms and docs derive from it."""

from __future__ import annotations

from typing import Any

from games.engines.base import Engine
from games.engines.choice.rules import ChoiceEngine
from games.engines.dice_survivor.rules import DiceSurvivorEngine
from games.engines.drop_shy.rules import DropShyEngine
from games.engines.first_player.rules import FirstPlayerEngine
from games.engines.liars_dice.rules import LiarsDiceEngine

# One line per game; the order is the order GMs see them in.
_GAMES: list[Engine[Any, Any, Any]] = [
    ChoiceEngine(),
    DiceSurvivorEngine(),
    DropShyEngine(),
    LiarsDiceEngine(),
    FirstPlayerEngine(),
]

ENGINES: dict[str, Engine[Any, Any, Any]] = {engine.key: engine for engine in _GAMES}


def get(key: str) -> Engine[Any, Any, Any]:
    """The engine for ``key``; KeyError if no game has that key."""
    return ENGINES[key]


def choices() -> list[tuple[str, str]]:
    return [(key, engine.title) for key, engine in ENGINES.items()]
