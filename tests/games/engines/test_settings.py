"""Each game's settings (its profiles and options, in its home) against its engine: the
new-game form derives every field from them, so they must offer every option the engine
reads, with the bounds and values it accepts."""

from __future__ import annotations

import re
from typing import Any

import pytest

from games.engines import registry
from games.engines.base import Option, OptionsError

WAYS = [(key, profile.key) for key, profile in registry.profiles()]


def _data(key: str, profile: str, **values: Any) -> dict[str, Any]:
    settings = registry.settings(key)
    return {settings.profile_key: profile, **values} if settings.profile_key else values


def _accepts(key: str, data: dict[str, Any]) -> bool:
    try:
        registry.get(key).options(data)
    except OptionsError:
        return False
    return True


def test_every_game_and_profile_is_offered_by_name() -> None:
    assert [(key, profile.title) for key, profile in registry.profiles()] == [
        ("choice", "Choice"),
        ("choice", "Choice: Suppenkasper"),
        ("dice-survivor", "Dice Survivor"),
        ("drop-shy", "Drop-Shy"),
        ("liars-dice", "Liar's Dice: classic"),
        ("liars-dice", "Liar's Dice: Death Match"),
        ("liars-dice", "Liar's Dice: team"),
        ("first-player", "The First Player"),
    ]


@pytest.mark.parametrize("key", list(registry.ENGINES))
def test_the_settings_name_every_option_the_engine_reads(key: str) -> None:
    with pytest.raises(OptionsError) as refused:
        registry.get(key).options({"no_such_option": 1})
    listed = re.search(r"options: (.*)\)$", refused.value.message)
    assert listed is not None
    settings = registry.settings(key)
    offered = {option.key for option in settings.options} | {settings.profile_key} - {""}
    assert offered == set(listed[1].split(", "))


@pytest.mark.parametrize(("key", "profile"), WAYS)
def test_every_value_a_field_offers_is_accepted_and_the_bounds_are_the_engines(
    key: str, profile: str
) -> None:
    options = registry.settings(key).options_of(profile)
    # A value another option limits (Death Match's most dice against the dice per player)
    # is accepted with the other numbers at their lowest.
    lowest = {o.key: o.low for o in options if o.kind == "int"}
    for option in options:
        for value in _offered(option):
            assert _accepts(key, _data(key, profile, **{option.key: value})) or _accepts(
                key, _data(key, profile, **{**lowest, option.key: value})
            ), (option.key, value)
        if option.kind == "int":
            for outside in (option.low - 1, option.high + 1):
                assert not _accepts(key, _data(key, profile, **{option.key: outside})), (
                    option.key,
                    outside,
                )


def _offered(option: Option) -> list[Any]:
    if option.kind == "int":
        return [option.low, option.high]
    if option.kind == "choice":
        return [value for value, _ in option.choices]
    if option.kind == "multi":
        return [[value] for value, _ in option.choices] + [[v for v, _ in option.choices]]
    if option.kind == "flag":
        return [True, False]
    if option.kind == "name":
        return [None, "ann"]
    if option.kind == "names":
        return [[], ["ann", "bob"]]
    assert option.kind == "name_counts"
    return [{}, {"ann": option.high}]


def test_options_in_words_fill_in_the_defaults_of_the_profile() -> None:
    assert registry.describe("liars-dice", {"profile": "genius_dm", "oracle": True}) == (
        "Liar's Dice: Death Match",
        [
            ("Dice per player", "4"),
            ("Most dice", "10"),
            ("Round reserve", "yes"),
            ("Anomaly: Cheat", "no"),
            ("Anomaly: Double-Face", "no"),
            ("Anomaly: Fresh Start", "no"),
            ("Anomaly: Mulligan", "no"),
            ("Anomaly: Oracle", "yes"),
            ("Anomaly: Revelation", "no"),
            ("Anomaly: Summation", "no"),
        ],
    )
    assert registry.describe("choice", {"variant": "suppenkasper", "cards": ["sk", "flip"]}) == (
        "Choice: Suppenkasper",
        [
            ("Rounds per postal turn", "2"),
            ("Fifth-die count that ends a sheet", "7"),
            ("Cards in play", "Suppenkasper, Flip"),
            ("Free rides feed the plate", "no"),
            ("Equal scores", "share the place"),
            ("Round cap", "200"),
        ],
    )
    assert registry.describe("first-player", {"dice": {"ann": 4}, "absent": ["bob"]})[1][4:7] == [
        ("Dice at the start", "ann 4"),
        ("Dice in the reserve", "0"),
        ("Absent members", "bob"),
    ]
    assert registry.describe("drop-shy", {})[1][4:] == [
        ("Previous game's winner", "none"),
        ("Previous game's loser", "none"),
    ]


def test_an_option_whose_rule_needs_more_players_is_left_out_of_a_smaller_game() -> None:
    survivor = registry.settings("dice-survivor")
    assert [survivor.applies("finals_add_pp", n) for n in (3, 5, 6, 8, None)] == [
        False,
        False,
        True,
        True,
        True,
    ]
    assert [survivor.applies("start_pp", n) for n in (3, None)] == [True, True]
    labels = {
        n: [label for label, __ in registry.describe("dice-survivor", {}, n)[1]] for n in (5, 6)
    }
    assert labels == {
        5: [
            "Play points at the start",
            "Rematches per player",
            "A failed KO costs",
            "The KO defender's die",
            "Turn cap",
        ],
        6: [
            "Play points at the start",
            "Rematches per player",
            "A failed KO costs",
            "The KO defender's die",
            "Finals add play points",
            "Turn cap",
        ],
    }
    with pytest.raises(KeyError):
        survivor.applies("finals", 6)
