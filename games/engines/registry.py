"""The one list of games: key -> engine. Model choices, forms and docs derive from it.

A registry line names the game's engine, the settings a GM chooses (its profiles and options,
from which the new-game form and the options in words derive) and, by dotted path, the order
form of its web side when it has one of its own (a path keeps this module free of Django).
Its templates are found by key: ``templates/games/<key>/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from games.engines.base import Engine, Profile, Settings, Strategy
from games.engines.choice import autopilot as choice_autopilot
from games.engines.choice import rules as choice
from games.engines.dice_survivor import autopilot as dice_survivor_autopilot
from games.engines.dice_survivor import rules as dice_survivor
from games.engines.drop_shy import autopilot as drop_shy_autopilot
from games.engines.drop_shy import rules as drop_shy
from games.engines.first_player import rules as first_player
from games.engines.liars_dice import autopilot as liars_dice_autopilot
from games.engines.liars_dice import rules as liars_dice


@dataclass(frozen=True)
class Game:
    """One game: its engine, the settings a GM chooses, and the dotted path of its order form
    ("" for the shared form: a menu of the legal orders when the engine has ``candidates``,
    else the typed order)."""

    engine: Engine[Any, Any, Any]
    settings: Settings
    form: str = ""
    # The autopilots a player may choose for a seat of this game (games.engines.base.Strategy).
    strategies: tuple[Strategy, ...] = ()


# One line per game; the order is the order GMs see them in.
_GAMES: list[Game] = [
    Game(
        choice.ChoiceEngine(),
        choice.SETTINGS,
        form="games.engines.choice.forms.ChoiceOrderForm",
        strategies=choice_autopilot.STRATEGIES,
    ),
    Game(
        dice_survivor.DiceSurvivorEngine(),
        dice_survivor.SETTINGS,
        strategies=dice_survivor_autopilot.STRATEGIES,
    ),
    Game(
        drop_shy.DropShyEngine(),
        drop_shy.SETTINGS,
        form="games.engines.drop_shy.forms.DropShyOrderForm",
        strategies=drop_shy_autopilot.STRATEGIES,
    ),
    Game(
        liars_dice.LiarsDiceEngine(),
        liars_dice.SETTINGS,
        form="games.engines.liars_dice.forms.LiarsDiceOrderForm",
        strategies=liars_dice_autopilot.STRATEGIES,
    ),
    Game(
        first_player.FirstPlayerEngine(),
        first_player.SETTINGS,
        form="games.engines.first_player.forms.FirstPlayerOrderForm",
    ),
]

ENGINES: dict[str, Engine[Any, Any, Any]] = {game.engine.key: game.engine for game in _GAMES}
FORMS: dict[str, str] = {game.engine.key: game.form for game in _GAMES if game.form}
SETTINGS: dict[str, Settings] = {game.engine.key: game.settings for game in _GAMES}
STRATEGIES: dict[str, tuple[Strategy, ...]] = {game.engine.key: game.strategies for game in _GAMES}


def get(key: str) -> Engine[Any, Any, Any]:
    """The engine for ``key``; KeyError if no game has that key."""
    return ENGINES[key]


def choices() -> list[tuple[str, str]]:
    return [(key, engine.title) for key, engine in ENGINES.items()]


def settings(key: str) -> Settings:
    """The settings of game ``key``; KeyError if no game has that key."""
    return SETTINGS[key]


def profiles() -> list[tuple[str, Profile]]:
    """(game key, profile) for every way to play, in the order GMs see them."""
    return [(key, profile) for key, entry in SETTINGS.items() for profile in entry.profiles]


def title(key: str, options: dict[str, Any]) -> str:
    """The name of the way ``options`` play game ``key``: "Liar's Dice: Death Match"."""
    return SETTINGS[key].profile_of(options).title


def describe(key: str, options: dict[str, Any]) -> tuple[str, list[tuple[str, str]]]:
    """The title of the profile ``options`` choose and each option in words, defaults filled
    in: what a game's pages and emails show instead of its options' JSON."""
    entry = SETTINGS[key]
    parsed = ENGINES[key].options(options)
    return entry.profile_of(options).title, entry.describe(options, parsed)


def strategies(key: str) -> tuple[Strategy, ...]:
    """The autopilots a player may choose for a seat of game ``key`` (maybe none)."""
    return STRATEGIES.get(key, ())


def strategy(key: str, name: str) -> Strategy | None:
    """The autopilot ``name`` of game ``key``; None if the game has none so named."""
    return next((s for s in STRATEGIES.get(key, ()) if s.key == name), None)
