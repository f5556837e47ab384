"""The one list of games: key -> engine. Model choices, forms and docs derive from it.

A registry line names the game's engine, the settings a GM chooses (its profiles and options,
from which the new-game form and the options in words derive) and, by dotted path, the order
form of its web side when it has one of its own (a path keeps this module free of Django).
Its templates are found by key: ``templates/games/<key>/``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from games.engines.base import Conditions, Engine, Profile, Settings, Strategy
from games.engines.choice import autopilot as choice_autopilot
from games.engines.choice import rules as choice
from games.engines.dice_survivor import autopilot as dice_survivor_autopilot
from games.engines.dice_survivor import conditions as dice_survivor_conditions
from games.engines.dice_survivor import rules as dice_survivor
from games.engines.drop_shy import autopilot as drop_shy_autopilot
from games.engines.drop_shy import conditions as drop_shy_conditions
from games.engines.drop_shy import rules as drop_shy
from games.engines.first_player import rules as first_player
from games.engines.liars_dice import autopilot as liars_dice_autopilot
from games.engines.liars_dice import conditions as liars_dice_conditions
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
    # Its conditional orders, in a game played in turns (games.engines.base.Conditions).
    conditions: Conditions | None = None


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
        conditions=dice_survivor_conditions.CONDITIONS,
    ),
    Game(
        drop_shy.DropShyEngine(),
        drop_shy.SETTINGS,
        form="games.engines.drop_shy.forms.DropShyOrderForm",
        strategies=drop_shy_autopilot.STRATEGIES,
        conditions=drop_shy_conditions.CONDITIONS,
    ),
    Game(
        liars_dice.LiarsDiceEngine(),
        liars_dice.SETTINGS,
        form="games.engines.liars_dice.forms.LiarsDiceOrderForm",
        strategies=liars_dice_autopilot.STRATEGIES,
        conditions=liars_dice_conditions.CONDITIONS,
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
CONDITIONS: dict[str, Conditions] = {
    game.engine.key: game.conditions for game in _GAMES if game.conditions is not None
}


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


@dataclass(frozen=True)
class Players:
    """How many players a way to play takes: ``title`` names it as GMs pick it ("Liar's
    Dice: Death Match"), ``low`` and ``high`` the fewest and the most."""

    title: str
    low: int
    high: int

    def words(self) -> str:
        """ "Liar's Dice: Death Match takes exactly 2 players", "Drop-Shy takes 2 to 20
        players": what the new-game form and postal say."""
        if self.low == self.high:
            return f"{self.title} takes exactly {self.low} players"
        return f"{self.title} takes {self.low} to {self.high} players"

    def allows(self, count: int) -> bool:
        return self.low <= count <= self.high


def players(key: str, options: Mapping[str, Any]) -> Players:
    """How many players the profile ``options`` choose of game ``key`` takes: the
    profile's own counts, else the game's. KeyError if no game has that key or the
    options name no profile of it."""
    engine = ENGINES[key]
    profile = SETTINGS[key].profile_of(options)
    low, high = profile.players or (engine.min_players, engine.max_players)
    return Players(str(profile.title), low, high)


def describe(
    key: str, options: dict[str, Any], players: int | None = None
) -> tuple[str, list[tuple[str, str]]]:
    """The title of the profile ``options`` choose and each option in words, defaults filled
    in: what a game's pages and emails show instead of its options' JSON. Given the number
    of ``players``, an option whose rule needs more is left out (``Option.applies``)."""
    entry = SETTINGS[key]
    parsed = ENGINES[key].options(options)
    return entry.profile_of(options).title, entry.describe(options, parsed, players)


def strategies(key: str) -> tuple[Strategy, ...]:
    """The autopilots a player may choose for a seat of game ``key`` (maybe none)."""
    return STRATEGIES.get(key, ())


def strategy(key: str, name: str) -> Strategy | None:
    """The autopilot ``name`` of game ``key``; None if the game has none so named."""
    return next((s for s in STRATEGIES.get(key, ()) if s.key == name), None)
