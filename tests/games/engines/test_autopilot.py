"""The autopilots every game offers through the registry (games.engines.base.Strategy): who
offers which and that each lives in its game's home (that they stay pure:
test_purity.py). Each game's autopilots are tested in test_<game>_autopilot.py."""

from __future__ import annotations

import re

import pytest

from games.engines import registry

HOMES = {
    "choice": "choice",
    "liars-dice": "liars_dice",
    "drop-shy": "drop_shy",
    "dice-survivor": "dice_survivor",
    "first-player": "first_player",
}


def test_the_games_that_offer_autopilots() -> None:
    offered = {key: [s.key for s in registry.strategies(key)] for key in registry.ENGINES}
    assert offered == {
        "choice": ["best-score"],
        "dice-survivor": ["odds"],
        "drop-shy": ["next-room"],
        "liars-dice": ["expected-count"],
        "first-player": [],
    }


@pytest.mark.parametrize("game", sorted(HOMES))
def test_each_autopilot_is_named_once_and_lives_in_its_games_home(game: str) -> None:
    strategies = registry.strategies(game)
    assert len({s.key for s in strategies}) == len(strategies)
    for strategy in strategies:
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", strategy.key)
        assert strategy.title and strategy.summary.endswith(".")
        assert registry.strategy(game, strategy.key) is strategy
        assert strategy.play.__module__ == f"games.engines.{HOMES[game]}.autopilot"
    assert registry.strategy(game, "no-such-autopilot") is None


def test_an_unknown_game_has_no_autopilot() -> None:
    assert registry.strategy("no-such-game", "best-score") is None
    assert registry.strategies("no-such-game") == ()
