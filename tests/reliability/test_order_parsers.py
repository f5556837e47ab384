"""Every engine's order parser, in every profile, against arbitrary Unicode text and against
orders whose numbers are written in other digits than 0-9 or run to many digits.

The only outcomes allowed: the order is refused with the engine's ``OrderError`` (one line a
player can read), or it is taken and every number the engine keeps of it is a plain number
the game can mean. Never a ValueError, IndexError or any other exception: those become a 500
on the web form and no answer to an email reply. The states are those of real started games
of each engine and profile (tests/reliability/test_fuzz.py), and the text goes to every
seat, so each prompted seat is tried in each state.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from games.engines.base import Engine, OrderError
from games.engines.dice import VerifiableDice
from games.engines.registry import ENGINES
from tests.factories import SEED
from tests.reliability.test_fuzz import CONFIGS, NAMES, STATES, Config, check_message

# The largest number an accepted order may hold: the Liar's Dice quantity cap (999) is
# the highest any game allows; rounds stop at 500, dice and positions far below.
LARGEST = 999


def sum_phase(state: Any) -> Any:
    """The team game's sum phase (two single dice left), whose bids read a sum: a started
    team game with every other die gone, as tests/games/engines/test_liars_dice.py does."""
    return replace(state, counts=(1, 1, 0, 0), hands=((4,), (5,), (), ()))


def states_of(config: Config) -> list[tuple[Any, int]]:
    states = list(STATES[config.name])
    if config.name == "liars-dice-genius_team":
        first, start = states[0]
        states.append((sum_phase(first), start))
    return states


# Digits a player may type that are not 0-9: superscripts (str.isdigit passes them, int
# refuses them), other scripts' digits (int reads them), full-width and mathematical ones.
OTHER_DIGITS = "²³¹⁰٣٠١٢۴५০୨๓໒༣၄០᠕０５９𝟙𝟚𝟛"
number = (
    st.integers(0, 10**40).map(str)
    | st.integers(-(10**40), -1).map(str)
    | st.text(st.sampled_from(OTHER_DIGITS), min_size=1, max_size=3)
    | st.tuples(st.integers(0, 99), st.sampled_from(OTHER_DIGITS)).map(
        lambda pair: f"{pair[0]}{pair[1]}"
    )
    | st.text(st.characters(categories=["Nd", "No", "Nl"]), min_size=1, max_size=3)
)
# One line of each order form of every game, a number in each {} (rules/*.md syntax).
TEMPLATES = (
    "bid {} {}",
    "bid {} {} show {}",
    "bid sum {}",
    "mulligan {} {}",
    "reveal {} reroll",
    "reveal {} learn cy {}",
    "{}: w{} {}+{} {}+{}",
    "w{} {}+{} {}+{}",
    "{}.5: sk eat {} {} {} {} {} w{} {}+{} {}+{}",
    "flip {} w5 1+3 3+4",
    "swap {} {} w5 1+3 3+4",
    "place {} {}",
    "take closest place {} {}",
    "give bob {} dice",
    "give cy {} tokens",
    "roll {}",
    "reroll set-aside {}",
    "arrange {} {} {}",
    "token {} {}",
    "challenge {}",
)
SLOTS = max(template.count("{}") for template in TEMPLATES)
line = st.tuples(st.sampled_from(TEMPLATES), st.lists(number, min_size=SLOTS, max_size=SLOTS)).map(
    lambda pair: pair[0].format(*pair[1])
)


def order_texts(words: tuple[str, ...]) -> st.SearchStrategy[str]:
    """Arbitrary Unicode text; lines of the games' orders with odd or huge numbers in them;
    and the game's own words and the players' names mixed with such numbers."""
    mixed = st.lists(st.sampled_from([*words, *NAMES]) | number, min_size=1, max_size=8).map(
        " ".join
    )
    lines = st.lists(line | mixed, min_size=1, max_size=3).map("\n".join)
    return st.text() | lines


def numbers_kept(engine: Engine[Any, Any, Any], state: Any, seat: int, order: Any) -> list[str]:
    """The numbers in the canonical text of an accepted order (what a receipt echoes)."""
    return re.findall(r"\d+", engine.canonical(state, seat, order))


@pytest.mark.parametrize("config", CONFIGS, ids=lambda config: config.name)
def test_order_parsers_refuse_odd_numbers_with_the_games_message(config: Config) -> None:
    engine: Engine[Any, Any, Any] = ENGINES[config.key]
    states = states_of(config)

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(text=order_texts(config.words))
    @example(text="bid ² 3")
    @example(text="bid 99999999999999999999999999999 3")
    @example(text="²: W3 1+4 3+5")
    @example(text="٣: W3 1+4 3+5")
    @example(text="roll ²")
    @example(text="give bob ² dice")
    @example(text="arrange ² 1 1")
    def fuzz(text: str) -> None:
        for state, start in states:
            for seat in range(config.players):
                try:
                    order = engine.parse(state, seat, text)
                    engine.submit(state, seat, order, VerifiableDice(SEED, 1, start))
                except OrderError as error:
                    check_message(error)
                    continue
                for kept in numbers_kept(engine, state, seat, order):
                    assert kept.isascii() and int(kept) <= LARGEST, (text, kept)

    fuzz()
