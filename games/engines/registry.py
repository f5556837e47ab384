"""The one list of games: key -> engine. Model choices, forms and docs derive from it.

A registry line names the game's engine and, by dotted path, the order form of its web side
when it has one of its own (a path keeps this module free of Django). Its templates are found
by key: ``templates/games/<key>/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from games.engines.base import Engine
from games.engines.choice.rules import ChoiceEngine
from games.engines.dice_survivor.rules import DiceSurvivorEngine
from games.engines.drop_shy.rules import DropShyEngine
from games.engines.first_player.rules import FirstPlayerEngine
from games.engines.liars_dice.rules import LiarsDiceEngine


@dataclass(frozen=True)
class Game:
    """One game: its engine, and the dotted path of its order form ("" for the shared form:
    a menu of the legal orders when the engine has ``candidates``, else the typed order)."""

    engine: Engine[Any, Any, Any]
    form: str = ""


# One line per game; the order is the order GMs see them in.
_GAMES: list[Game] = [
    Game(ChoiceEngine(), form="games.forms.choice.ChoiceOrderForm"),
    Game(DiceSurvivorEngine()),
    Game(DropShyEngine(), form="games.forms.drop_shy.DropShyOrderForm"),
    Game(LiarsDiceEngine(), form="games.forms.liars_dice.LiarsDiceOrderForm"),
    Game(FirstPlayerEngine()),
]

ENGINES: dict[str, Engine[Any, Any, Any]] = {game.engine.key: game.engine for game in _GAMES}
FORMS: dict[str, str] = {game.engine.key: game.form for game in _GAMES if game.form}


def get(key: str) -> Engine[Any, Any, Any]:
    """The engine for ``key``; KeyError if no game has that key."""
    return ENGINES[key]


def choices() -> list[tuple[str, str]]:
    return [(key, engine.title) for key, engine in ENGINES.items()]
