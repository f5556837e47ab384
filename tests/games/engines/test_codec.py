"""The JSON codec every engine's state and orders go through (games/engines/base.py):
``from_json(to_json(value)) == value`` for each kind of field the engines use, with the
same types back (tuples stay tuples), and fields missing from older records taking their
defaults."""

from __future__ import annotations

from dataclasses import dataclass, field

from games.engines.base import from_json, to_json


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
