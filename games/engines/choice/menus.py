"""Choice's legal choices for the order form's menus, derived from the rules: which kinds
and values each round of a postal turn can offer, over every way the earlier rounds of the
same order can go, and whether the plate could feed a Suppen-Kasper round."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from games.engines.choice.rules import MAX_STORED_VALUES, SK_EATS, ChoiceOptions, Sheet, wurfel_rule

FACES = range(1, 7)
# The most numbers a card can put on the plate in its round (rules/choice.md 7.3).
PLATE_GAIN = {"flip": 1, "half": 2, "double": 2, "refuse": 1, "swap": 0, "sk": 0}


def _dice_after_cards(roll: tuple[int, ...], cards: Collection[str]) -> set[tuple[int, ...]]:
    """The dice a round may be played with: the roll, and, while Upside Down or From the
    Plate is left, the roll with one die turned over or replaced by any plate number."""
    found = {tuple(sorted(roll))}
    for value in set(roll):
        rest = list(roll)
        rest.remove(value)
        replacements: set[int] = set()
        if "flip" in cards:
            replacements.add(7 - value)
        if "swap" in cards:
            replacements.update(number for number in FACES if number != value)
        found.update(tuple(sorted((*rest, new))) for new in replacements)
    return found


Reachable = set[tuple[frozenset[int], bool]]


def _after_suppen_kasper(reachable: Reachable) -> Reachable:
    """The stored values, each with whether Suppen-Kasper is spent, after a Suppen-Kasper
    round of any five numbers may have been played."""
    return reachable | {
        (stored | {value}, True)
        for stored, spent in reachable
        if not spent and len(stored) < MAX_STORED_VALUES
        for value in FACES
    }


def possible_choices(
    sheet: Sheet, rolls: Iterable[tuple[int, ...]], cards: Collection[str] = ()
) -> list[tuple[set[str], set[int]]]:
    """For each round of a postal turn, the kinds (W, F) and the values the player may set
    aside, over every way the earlier rounds of the same order can go: a Wurfel taken in
    round 21 can make round 22 a free ride. With the sheet as it stands and no ``cards``
    (the unused cards in play), round 1 has exactly one kind; a card or a Suppen-Kasper
    round can open the other."""
    reachable: Reachable = {(frozenset(sheet.stored_values), "sk" not in cards)}
    result: list[tuple[set[str], set[int]]] = []
    for roll in rolls:
        reachable = _after_suppen_kasper(reachable)
        kinds: set[str] = set()
        values: set[int] = set()
        following: Reachable = set()
        for stored, spent in reachable:
            as_sheet = Sheet(stored=tuple((v, 1) for v in stored))
            for dice in _dice_after_cards(roll, cards):
                rule, allowed = wurfel_rule(as_sheet, dice)
                kind = "F" if rule == "W3" else "W"
                kinds.add(kind)
                values.update(allowed)
                if kind == "W":
                    following.update((stored | {v}, spent) for v in allowed)
                if kind == "F" or "refuse" in cards:
                    following.add((stored, spent))
        result.append((kinds, values))
        reachable = following
    return result


def plate_could_hold(sheet: Sheet, options: ChoiceOptions, rounds: int) -> bool:
    """Whether the plate could hold the five numbers Suppen-Kasper eats at some slot of a
    postal turn of ``rounds`` rounds: at most one card per round, each card once."""
    left = [card for card in options.cards if card not in sheet.cards_used]
    gains = sorted((PLATE_GAIN[card] for card in left), reverse=True)[:rounds]
    free_rides = rounds if options.free_ride_to_plate else 0
    return len(sheet.plate) + sum(gains) + free_rides >= SK_EATS
