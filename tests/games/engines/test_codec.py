"""The JSON codec every engine's state and orders go through (games/engines/base.py):
``from_json(to_json(value)) == value`` for each kind of field the engines use, with the
same types back (tuples stay tuples), and fields missing from older records taking their
defaults; words (a field hinted ``Text``) come back with how they were made."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from games.engines.base import encoder, from_json, to_json
from games.engines.text import EMPTY, Text, _, data, join, ngettext


@dataclass(frozen=True)
class Card:
    name: str
    value: int | None = None


@dataclass(frozen=True)
class Hand:
    dice: tuple[int, ...]
    pair: tuple[int, str]
    cards: tuple[Card, ...]
    played: Card | None
    notes: list[str]
    by_round: dict[str, tuple[Card, ...]]
    plate: tuple[int, ...] = ()
    extra: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Chain:
    """A dataclass holding one of its own kind."""

    label: str
    next: Chain | None = None


def test_every_kind_of_field_comes_back_as_it_was() -> None:
    hand = Hand(
        dice=(3, 1, 6),
        pair=(4, "x"),
        cards=(Card("flip", 2), Card("sk")),
        played=Card("half"),
        notes=["a", "b"],
        by_round={"21": (Card("swap", 5),), "22": ()},
        plate=(2, 2),
        extra={"bonus": 1},
    )
    data = to_json(hand)
    assert data == {
        "dice": [3, 1, 6],
        "pair": [4, "x"],
        "cards": [{"name": "flip", "value": 2}, {"name": "sk", "value": None}],
        "played": {"name": "half", "value": None},
        "notes": ["a", "b"],
        "by_round": {"21": [{"name": "swap", "value": 5}], "22": []},
        "plate": [2, 2],
        "extra": {"bonus": 1},
    }
    back = from_json(Hand, data)
    assert back == hand
    assert type(back.dice) is tuple and type(back.cards[0]) is Card
    assert type(back.by_round["21"]) is tuple and type(back.notes) is list


def test_none_stays_none_and_missing_fields_take_their_defaults() -> None:
    data: dict[str, object] = {
        "dice": [],
        "pair": [1, "y"],
        "cards": [],
        "played": None,
        "notes": [],
        "by_round": {},
    }
    assert from_json(Hand, data) == Hand((), (1, "y"), (), None, [], {}, (), {})


def test_a_dataclass_holding_its_own_kind() -> None:
    chain = Chain("a", Chain("b", Chain("c")))
    assert from_json(Chain, to_json(chain)) == chain
    assert from_json(Chain, {"label": "z"}) == Chain("z")


@dataclass(frozen=True)
class Marked(Card):
    """Another class in a field hinted as its parent: written by what it is."""

    mark: str = "m"


def test_the_encoder_made_from_the_hints_writes_what_to_json_writes() -> None:
    hand = Hand(
        dice=(3, 1, 6),
        pair=(4, "x"),
        cards=(Card("flip", 2), Marked("sk")),
        played=None,
        notes=["a"],
        by_round={"21": (Card("swap", 5),)},
        extra={"bonus": 1},
    )
    written = encoder(Hand)(hand)
    assert written == to_json(hand)
    assert written["cards"][1] == {"name": "sk", "value": None, "mark": "m"}
    assert type(written["dice"]) is list and type(written["by_round"]["21"]) is list
    chain = Chain("a", Chain("b"))
    assert (
        encoder(Chain)(chain)
        == to_json(chain)
        == {
            "label": "a",
            "next": {"label": "b", "next": None},
        }
    )
    assert encoder(tuple[int, ...])((1, 2)) == [1, 2]
    assert encoder(dict[int, Card])({1: Card("x")}) == {"1": {"name": "x", "value": None}}


@dataclass(frozen=True)
class Told:
    """Words a state keeps: each said again in the reader's language."""

    last: Text
    lines: tuple[Text, ...] = ()
    aside: Text | None = None


def test_words_come_back_with_how_they_were_made() -> None:
    told = Told(
        last=_("%(name)s rolls %(dice)s", name="Ann", dice=join([_("an ace"), "5"], _(" and "))),
        lines=(ngettext("%(count)d die", "%(count)d dice", 3), EMPTY),
        aside=None,
    )
    written = json.loads(json.dumps(encoder(Told)(told)))

    assert written == to_json(told)
    assert written == {
        "last": {
            "t": "%(name)s rolls %(dice)s",
            "a": {"name": "Ann", "dice": {"j": {"t": " and "}, "i": [{"t": "an ace"}, "5"]}},
        },
        "lines": [
            {"t": "%(count)d die", "p": "%(count)d dice", "n": 3, "a": {"count": 3}},
            {"j": "", "i": []},
        ],
        "aside": None,
    }
    back = from_json(Told, written)
    assert back == told
    assert (back.last, back.lines) == ("Ann rolls an ace and 5", ("3 dice", ""))
    assert all(isinstance(words, Text) for words in (back.last, *back.lines))
    assert [data(words) for words in (back.last, *back.lines)] == [
        written["last"],
        *written["lines"],
    ]


def test_words_stored_as_plain_english_stay_as_they_were() -> None:
    """A state written before its words were kept holds their English."""
    back = from_json(Told, {"last": "Ann rolls 5", "lines": ["3 dice"], "aside": "x"})

    assert back == Told("Ann rolls 5", ("3 dice",), "x")  # type: ignore[arg-type]
    assert not isinstance(back.last, Text)
    assert encoder(Told)(back) == {"last": "Ann rolls 5", "lines": ["3 dice"], "aside": "x"}
