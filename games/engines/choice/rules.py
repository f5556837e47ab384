"""Choice (Sid Sackson), played by post: rules/choice.md.

Every round the engine rolls five dice for everybody. Each active player sets one die aside
(the Wurfel, or a free-ride discard) and splits the other four into two pairs whose sums are
recorded on their own sheet. A postal turn covers one or more rounds, all rolled when it
opens; one order per player covers them all and is sealed until the turn resolves.

A round is played in the steps of rules/choice.md section 7.5: start from the roll,
before-choosing cards, the Wurfel rules W1-W3, the choice, recording, the end check. The
standard game has no cards. The Suppenkasper variant is the same engine with options: cards
(each once per game) that change the roll, the Wurfel or the recording and put the numbers
they leave unused on the player's plate, and the Suppen-Kasper extra round, played from five
plate numbers at a half-numbered slot between the rounds of a postal turn.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from games.engines.base import (
    JSON,
    Dice,
    Event,
    GameError,
    JsonCodec,
    Option,
    OptionsError,
    OrderError,
    Profile,
    Prompt,
    Settings,
    Standing,
    check_option_keys,
    check_players,
    competition_places,
    is_int,
    option_flag,
    option_int,
    option_one_of,
    order_lines,
    order_number,
    to_json,
)
from games.engines.text import Text, _, join

SUMS = tuple(range(2, 13))
SUM_VALUES = {2: 100, 3: 70, 4: 60, 5: 50, 6: 40, 7: 30, 8: 40, 9: 50, 10: 60, 11: 70, 12: 100}
CARDS = ("flip", "half", "double", "refuse", "swap", "sk")
BEFORE_CHOOSING_CARDS = ("flip", "swap")
PORTION_CARDS = ("half", "double")
SK_EATS = 5
VARIANTS = ("standard", "suppenkasper")
TIEBREAKS = ("shared", "fewer_rounds")
DICE_PER_ROUND = 5
MAX_STORED_VALUES = 3
EXAMPLE_LINE = "W5 1+3 3+4"

# --- options -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChoiceOptions:
    """The options table of rules/choice.md section 2."""

    variant: str = "standard"
    rolls_per_turn: int | str = 2
    end_threshold: int = 8
    cards: tuple[str, ...] = CARDS
    free_ride_to_plate: bool = False
    tiebreak: str = "shared"
    round_cap: int = 200

    @property
    def suppenkasper(self) -> bool:
        return self.variant == "suppenkasper"


_SUPPENKASPER_ONLY = ("cards", "free_ride_to_plate")
_OPTION_KEYS = (
    "variant",
    "rolls_per_turn",
    "end_threshold",
    "cards",
    "free_ride_to_plate",
    "tiebreak",
    "round_cap",
)


def _rolls_per_turn(value: JSON) -> int | str:
    if value == "decreasing":
        return "decreasing"
    if is_int(value) and 1 <= value <= 4:
        return int(value)
    raise OptionsError(
        _(
            'option rolls_per_turn must be 1, 2, 3, 4 or "decreasing", not %(value)s',
            value=repr(value),
        )
    )


def _cards(value: JSON) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        raise OptionsError(
            _("option cards must be a list drawn from %(cards)s", cards=", ".join(CARDS))
        )
    cards: list[str] = []
    for card in value:
        if not isinstance(card, str) or card not in CARDS:
            raise OptionsError(
                _(
                    "option cards: %(card)s is not a card (%(cards)s)",
                    card=repr(card),
                    cards=", ".join(CARDS),
                )
            )
        if card in cards:
            raise OptionsError(_("option cards lists %(card)s twice", card=card))
        cards.append(card)
    return tuple(cards)


def parse_options(data: Mapping[str, JSON]) -> ChoiceOptions:
    """Options from a dict: defaults filled in; OptionsError on unknown keys or values."""
    check_option_keys("Choice", data, _OPTION_KEYS)
    variant = option_one_of("variant", data.get("variant", "standard"), VARIANTS)
    suppenkasper = variant == "suppenkasper"
    fields: dict[str, JSON] = {"variant": variant}
    if "rolls_per_turn" in data:
        fields["rolls_per_turn"] = _rolls_per_turn(data["rolls_per_turn"])
    fields["end_threshold"] = option_int(
        "end_threshold", data.get("end_threshold", 7 if suppenkasper else 8), 3, 8
    )
    if suppenkasper and "cards" in data:
        fields["cards"] = _cards(data["cards"])
    if suppenkasper and "free_ride_to_plate" in data:
        fields["free_ride_to_plate"] = option_flag("free_ride_to_plate", data["free_ride_to_plate"])
    if "tiebreak" in data:
        fields["tiebreak"] = option_one_of("tiebreak", data["tiebreak"], TIEBREAKS)
    if "round_cap" in data:
        fields["round_cap"] = option_int("round_cap", data["round_cap"], 10, 500)
    return ChoiceOptions(**fields)


SETTINGS = Settings(
    profile_key="variant",
    profiles=(
        Profile("standard", "Choice", _("Sid Sackson's game: pick pairs of dice, fill the "
                "score sheet, keep the fifth die from running out. 1 to 20 players.")),
        Profile("suppenkasper", "Choice: Suppenkasper", _("Choice with one-use cards and a "
                "leftovers plate to eat from. 1 to 20 players.")),
    ),
    options=(
        Option("rolls_per_turn", _("Rounds per postal turn"), _("2 is the usual way to play; "
               "decreasing gives 4 rounds in turns 1-3, 3 in 4-6, 2 in 7-9, then 1."),
               kind="choice", choices=((1, "1"), (2, "2"), (3, "3"), (4, "4"),
                                       ("decreasing", _("decreasing: 4, 3, 2, then 1")))),
        Option("end_threshold", _("Fifth-die count that ends a sheet"), _("A player's game "
               "ends when any of their fifth-die values has been stored this many times."),
               low=3, high=8),
        Option("cards", _("Cards in play"), _("Every player holds each of these once."),
               kind="multi", profiles=("suppenkasper",),
               choices=(("flip", _("Flip")), ("half", _("Half Portion")),
                        ("double", _("Double Portion")), ("refuse", _("Refuse")),
                        ("swap", _("Swap")), ("sk", "Suppenkasper"))),
        Option("free_ride_to_plate", _("Free rides feed the plate"), _("House rule: the die "
               "discarded on a free ride goes onto the plate."), kind="flag",
               profiles=("suppenkasper",)),
        Option("tiebreak", _("Equal scores"), kind="choice",
               choices=(("shared", _("share the place")),
                        ("fewer_rounds", _("fewer numbered rounds ranks higher")))),
        Option("round_cap", _("Round cap"), _("Safety cap: after this round every player "
               "still active is scored."), low=10, high=500),
    ),
)  # fmt: skip


def rounds_in_turn(options: ChoiceOptions, turn: int) -> int:
    """Rounds of postal turn ``turn`` before the round cap cuts it (section 2)."""
    if options.rolls_per_turn != "decreasing":
        return int(options.rolls_per_turn)
    if turn <= 3:
        return 4
    if turn <= 6:
        return 3
    if turn <= 9:
        return 2
    return 1


# --- orders --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Choice:
    """``W v a+b c+d`` (Wurfel v) or ``F v a+b c+d`` (free ride, discard v).

    Each pair is written low die first; the order of the two pairs is kept as written
    because Half and Double Portion record the first one.
    """

    kind: str
    value: int
    first: tuple[int, int]
    second: tuple[int, int]

    @property
    def wurfel(self) -> bool:
        return self.kind == "W"

    @property
    def dice(self) -> tuple[int, ...]:
        return (self.value, *self.first, *self.second)

    @property
    def sums(self) -> tuple[int, int]:
        return (sum(self.first), sum(self.second))

    def text(self) -> str:
        (a, b), (c, d) = self.first, self.second
        return f"{self.kind}{self.value} {a}+{b} {c}+{d}"


@dataclass(frozen=True)
class Card:
    """A card written on a round line (Suppenkasper only): flip v, swap v p, half, double,
    refuse."""

    name: str
    value: int | None = None
    plate: int | None = None

    def text(self) -> str:
        return " ".join(
            str(part) for part in (self.name, self.value, self.plate) if part is not None
        )


@dataclass(frozen=True)
class RoundLine:
    """The line for one numbered round, matched to its round by position."""

    round: int
    choice: Choice
    card: Card | None = None

    def text(self) -> str:
        card = f"{self.card.text()} " if self.card else ""
        return card + self.choice.text()


@dataclass(frozen=True)
class SkLine:
    """``N.5: SK eat n1 .. n5 choice``: the Suppen-Kasper extra round after round ``after``."""

    after: int
    eat: tuple[int, ...]
    choice: Choice

    def text(self) -> str:
        return f"SK eat {_numbers(self.eat)} {self.choice.text()}"


@dataclass(frozen=True)
class ChoiceOrder:
    """One postal turn's order: the round lines in round order, at most one SK line."""

    lines: tuple[RoundLine, ...]
    sk: SkLine | None = None


# --- state ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Round:
    number: int
    roll: tuple[int, ...]


@dataclass(frozen=True)
class Sheet:
    """One player's sheet. ``counts[i]`` is the count of sum ``i + 2``; ``stored`` holds
    (value, count) in the order the values were first stored.

    Suppenkasper: ``plate`` is the leftovers plate, kept sorted; ``cards_used`` the card keys
    played, in the order they were played. ``ended_slot`` marks a game that ended in the
    Suppen-Kasper round after round ``ended_round``.
    """

    counts: tuple[int, ...] = (0,) * len(SUMS)
    stored: tuple[tuple[int, int], ...] = ()
    active: bool = True
    ended_round: int | None = None
    score: int | None = None
    plate: tuple[int, ...] = ()
    cards_used: tuple[str, ...] = ()
    ended_slot: bool = False

    def count(self, total: int) -> int:
        return self.counts[total - 2]

    @property
    def stored_values(self) -> tuple[int, ...]:
        return tuple(sorted(value for value, __ in self.stored))


@dataclass(frozen=True)
class Play:
    """What a player did in one round, for the reports.

    ``sums`` are the sums recorded (one for Half Portion, the same sum twice for Double
    Portion). A Suppen-Kasper round has ``slot`` set and ``round`` the numbered round before
    it (21 for slot 21.5). ``onto_plate``, ``off_plate`` and ``dog`` are the numbers that went
    onto the plate, were taken off it (From the Plate) and were fed to the dog.
    """

    seat: int
    round: int
    line: str
    sums: tuple[int, ...]
    default: bool = False
    card: str | None = None
    slot: bool = False
    onto_plate: tuple[int, ...] = ()
    off_plate: tuple[int, ...] = ()
    dog: tuple[int, ...] = ()

    @property
    def label(self) -> str:
        """The round as reports show it: 21, or 21.5 for the Suppen-Kasper round after it."""
        return f"{self.round}.5" if self.slot else str(self.round)

    @property
    def position(self) -> int:
        """Slot order within the game: round r is 2r, the Suppen-Kasper slot r.5 is 2r + 1."""
        return 2 * self.round + self.slot


@dataclass(frozen=True)
class ChoiceState:
    options: ChoiceOptions
    players: tuple[str, ...]
    sheets: tuple[Sheet, ...]
    turn: int
    rounds: tuple[Round, ...]
    orders: tuple[ChoiceOrder | None, ...]
    past: tuple[Round, ...] = ()
    history: tuple[Play, ...] = ()
    finished: bool = False

    @property
    def rounds_label(self) -> Text:
        return rounds_label(self.rounds)


def _round(number: int) -> Text:
    """ "round 21": what a message concerns, or a numbered round in an event."""
    return _("round %(round)d", round=number)


def _slot(after: int) -> Text:
    """ "slot 21.5": the Suppen-Kasper round after round ``after``."""
    return _("slot %(slot)s", slot=f"{after}.5")


def rounds_label(rounds: Sequence[Round]) -> Text:
    if len(rounds) == 1:
        return _round(rounds[0].number)
    return _("rounds %(first)d-%(last)d", first=rounds[0].number, last=rounds[-1].number)


def _ended_at(sheet: Sheet) -> Text:
    if sheet.ended_slot:
        return _("in slot %(slot)s", slot=f"{sheet.ended_round}.5")
    return _("in round %(round)s", round=sheet.ended_round)


def _end_position(sheet: Sheet) -> int | None:
    """Where the game ended in slot order (as ``Play.position``); None while it goes on."""
    if sheet.ended_round is None:
        return None
    return 2 * sheet.ended_round + sheet.ended_slot


def _slot_order(rounds: Sequence[Round], sk: SkLine | None) -> list[Round | SkLine]:
    """The rounds of a postal turn with the Suppen-Kasper line at its slot (section 7.5)."""
    steps: list[Round | SkLine] = []
    for current in rounds:
        if sk is not None and sk.after == current.number - 1:
            steps.append(sk)
        steps.append(current)
    if sk is not None and rounds and sk.after == rounds[-1].number:
        steps.append(sk)
    return steps


# --- scoring -------------------------------------------------------------------------------


def score(counts: Sequence[int] | Mapping[int, int]) -> int:
    """The score of a sum track (section 6): eleven counts for sums 2-12, or sum -> count."""
    if isinstance(counts, Mapping):
        counts = tuple(counts.get(total, 0) for total in SUMS)
    points = 0
    for total, count in zip(SUMS, counts, strict=True):
        if 1 <= count <= 4:
            points -= 200
        elif count >= 6:
            points += (min(count, 10) - 5) * SUM_VALUES[total]
    return points


# --- one round -----------------------------------------------------------------------------


def _join(values: Iterable[int], last: Text) -> str:
    """ "1, 2 and 3": ``last`` (" and ", " or ") before the last value."""
    words = [str(value) for value in values]
    if len(words) < 2:
        return "".join(words)
    return join([", ".join(words[:-1]), words[-1]], last)


def wurfel_rule(sheet: Sheet, dice: Sequence[int]) -> tuple[str, tuple[int, ...]]:
    """Which rule applies to ``dice`` ("W1", "W2" or "W3") and the values it lets the player
    set aside: a Wurfel under W1 and W2, a free-ride discard under W3."""
    shown = tuple(sorted(set(dice)))
    if len(sheet.stored) < MAX_STORED_VALUES:
        return "W1", shown
    matches = tuple(value for value in shown if value in sheet.stored_values)
    if matches:
        return "W2", matches
    return "W3", shown


def _pairings(dice: Sequence[int]) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The distinct ways to split four dice into two pairs, each written low die first and
    the pair holding the lowest die first."""
    low, *rest = sorted(dice)
    found: list[tuple[tuple[int, int], tuple[int, int]]] = []
    for partner in sorted(set(rest)):
        others = list(rest)
        others.remove(partner)
        pairing = ((low, partner), (others[0], others[1]))
        if pairing not in found:
            found.append(pairing)
    return found


def legal_choices(sheet: Sheet, roll: Sequence[int]) -> list[Choice]:
    """Every legal choice for ``roll`` on ``sheet`` (no cards), by value and then pairing."""
    rule, values = wurfel_rule(sheet, roll)
    kind = "F" if rule == "W3" else "W"
    choices: list[Choice] = []
    for value in values:
        rest = list(roll)
        rest.remove(value)
        for first, second in _pairings(rest):
            choices.append(Choice(kind, value, first, second))
    return choices


def _check_choice(sheet: Sheet, dice: Sequence[int], choice: Choice, where: str) -> None:
    """Steps 3 and 4 of a round: the line uses exactly the dice, and W1-W3 allow the choice."""
    if sorted(choice.dice) != sorted(dice):
        raise OrderError(
            _(
                "%(where)s: the roll is %(roll)s but your line uses %(used)s",
                where=where,
                roll=_numbers(sorted(dice)),
                used=_numbers(sorted(choice.dice)),
            )
        )
    rule, allowed = wurfel_rule(sheet, dice)
    stored = ", ".join(map(str, sheet.stored_values))
    if choice.wurfel and rule == "W3":
        raise OrderError(
            _(
                "%(where)s: the roll shows none of your stored values %(stored)s, so this is "
                "a free ride: write F%(value)d instead of W%(value)d",
                where=where,
                stored=stored,
                value=choice.value,
            )
        )
    if choice.wurfel and choice.value not in allowed:
        raise OrderError(
            _(
                "%(where)s: you store %(stored)s and the roll shows %(shown)s, so the Wurfel "
                "must be %(allowed)s",
                where=where,
                stored=stored,
                shown=_join(allowed, _(" and ")),
                allowed=_join(allowed, _(" or ")),
            )
        )
    if not choice.wurfel and rule == "W1":
        raise OrderError(
            _(
                "%(where)s: free ride not allowed; you store fewer than three values, so any "
                "die may be the Wurfel: write W%(value)d instead of F%(value)d",
                where=where,
                value=choice.value,
            )
        )
    if not choice.wurfel and rule == "W2":
        raise OrderError(
            _(
                "%(where)s: free ride not allowed; the roll shows your stored values %(shown)s",
                where=where,
                shown=", ".join(map(str, allowed)),
            )
        )


def _store(sheet: Sheet, choice: Choice) -> Sheet:
    if not choice.wurfel:
        return sheet
    stored = dict(sheet.stored)
    stored[choice.value] = stored.get(choice.value, 0) + 1
    return replace(sheet, stored=tuple(stored.items()))


def _record_sums(sheet: Sheet, sums: Iterable[int]) -> Sheet:
    return replace(sheet, counts=_counts_with(sheet.counts, sums))


def _counts_with(counts: Sequence[int], sums: Iterable[int]) -> tuple[int, ...]:
    """The sum track ``counts`` with ``sums`` recorded."""
    new = list(counts)
    for total in sums:
        new[total - 2] += 1
    return tuple(new)


def _end_check(sheet: Sheet, number: int, options: ChoiceOptions, slot: bool = False) -> Sheet:
    if any(count >= options.end_threshold for __, count in sheet.stored):
        return end_game(sheet, number, slot)
    return sheet


def end_game(sheet: Sheet, last_round: int, slot: bool = False) -> Sheet:
    """The sheet of a player whose game ends after ``last_round`` (numbered) was played, or,
    with ``slot``, in the Suppen-Kasper round after it."""
    return replace(
        sheet, active=False, ended_round=last_round, ended_slot=slot, score=score(sheet.counts)
    )


@dataclass(frozen=True)
class Outcome:
    """A round as played: the sheet after it, the sums recorded, and the numbers that went
    onto the plate, off it and to the dog, in the order they moved."""

    sheet: Sheet
    sums: tuple[int, ...]
    onto_plate: tuple[int, ...] = ()
    off_plate: tuple[int, ...] = ()
    dog: tuple[int, ...] = ()


def _numbers(values: Iterable[int]) -> str:
    return " ".join(map(str, values))


def _will_hold(plate: Sequence[int]) -> Text:
    if plate:
        return _("it will hold %(numbers)s", numbers=_numbers(plate))
    return _("it will be empty")


def _no_cards(where: str) -> OrderError:
    return OrderError(
        _("%(where)s: cards are only played in the Suppenkasper variant", where=where)
    )


def _use_card(sheet: Sheet, name: str, options: ChoiceOptions, where: str) -> Sheet:
    """CR-1, CR-8 and the ``cards`` option: ``name`` may be played here; it is now used."""
    if not options.suppenkasper:
        raise _no_cards(where)
    if name not in options.cards:
        in_play = ", ".join(options.cards) if options.cards else _("none")
        raise OrderError(
            _(
                "%(where)s: the %(card)s card is not in play in this game "
                "(cards in play: %(cards)s)",
                where=where,
                card=name,
                cards=in_play,
            )
        )
    if name in sheet.cards_used:
        raise OrderError(
            _(
                "%(where)s: you have already played your %(card)s card; each card is played "
                "once per game",
                where=where,
                card=name,
            )
        )
    return replace(sheet, cards_used=(*sheet.cards_used, name))


def _before_choosing(
    sheet: Sheet, dice: tuple[int, ...], card: Card | None, where: str
) -> tuple[tuple[int, ...], int | None, int | None]:
    """Step 2: Upside Down and From the Plate change one die of the roll. Returns the dice
    as they now stand, the die put on the plate and the number taken off it."""
    if card is None or card.name not in BEFORE_CHOOSING_CARDS:
        return dice, None, None
    value = card.value
    if value is None or (card.name == "swap" and card.plate is None):
        example = "flip 2" if card.name == "flip" else "swap 5 6"
        raise OrderError(
            _(
                "%(where)s: %(card)s needs its numbers, e.g. %(example)s",
                where=where,
                card=card.name,
                example=example,
            )
        )
    if value not in dice:
        raise OrderError(
            _(
                "%(where)s: the roll shows no %(value)d to %(card)s",
                where=where,
                value=value,
                card=card.name,
            )
        )
    taken = card.plate
    if taken is not None and taken == value:
        raise OrderError(
            _(
                "%(where)s: swap %(value)d %(taken)d changes nothing; take a number other "
                "than %(value)d from your plate",
                where=where,
                value=value,
                taken=taken,
            )
        )
    if taken is not None and taken not in sheet.plate:
        raise OrderError(
            _(
                "%(where)s: swap %(value)d %(taken)d needs a %(taken)d on your plate; %(plate)s",
                where=where,
                value=value,
                taken=taken,
                plate=_will_hold(sheet.plate),
            )
        )
    index = dice.index(value)
    new = 7 - value if taken is None else taken
    return (*dice[:index], new, *dice[index + 1 :]), value, taken


def _play(
    sheet: Sheet,
    dice: tuple[int, ...],
    card: Card | None,
    choice: Choice,
    options: ChoiceOptions,
    where: str,
) -> Outcome:
    """Steps 2-5 of section 7.5 on ``dice`` (a roll, or the five numbers eaten)."""
    if card is not None:
        if card.name not in CARDS or card.name == "sk":
            raise OrderError(
                _("%(where)s: %(card)s is not a card for a round line", where=where, card=card.name)
            )
        sheet = _use_card(sheet, card.name, options, where)
    name = card.name if card is not None else None
    dice, replaced, taken = _before_choosing(sheet, dice, card, where)
    onto = [replaced] if replaced is not None else []
    off = [taken] if taken is not None else []
    _check_choice(sheet, dice, choice, where)
    if name == "refuse" and not choice.wurfel:
        raise OrderError(
            _(
                "%(where)s: nothing to refuse on a free ride; refuse goes with a Wurfel, "
                "e.g. refuse %(example)s",
                where=where,
                example=EXAMPLE_LINE,
            )
        )
    if name == "refuse" or (
        not choice.wurfel and options.suppenkasper and options.free_ride_to_plate
    ):
        onto.append(choice.value)
    else:
        sheet = _store(sheet, choice)
    sums: tuple[int, ...] = choice.sums
    if name in PORTION_CARDS:
        sums = (sum(choice.first),) * (2 if name == "double" else 1)
        onto.extend(choice.second)
    sheet = _record_sums(sheet, sums)
    plate = Counter(sheet.plate)
    plate.subtract(off)
    plate.update(onto)
    sheet = replace(sheet, plate=tuple(sorted(plate.elements())))
    return Outcome(sheet, sums, tuple(onto), tuple(off))


def play_round(sheet: Sheet, roll: Sequence[int], line: RoundLine, options: ChoiceOptions) -> Sheet:
    """Play ``line`` on ``sheet`` for the round whose five dice are ``roll`` (section 7.5).

    Raises OrderError, starting with "round N:", if the line is illegal on this sheet.
    """
    return round_outcome(sheet, roll, line, options).sheet


def round_outcome(
    sheet: Sheet, roll: Sequence[int], line: RoundLine, options: ChoiceOptions
) -> Outcome:
    """``play_round`` with what the round recorded and moved on and off the plate."""
    where = _round(line.round)
    outcome = _play(sheet, tuple(roll), line.card, line.choice, options, where)
    return replace(outcome, sheet=_end_check(outcome.sheet, line.round, options))


def play_sk(sheet: Sheet, sk: SkLine, options: ChoiceOptions) -> Sheet:
    """Play the Suppen-Kasper round ``sk`` on ``sheet`` (section 7.5, step 1 for the extra
    round). Raises OrderError, starting with "slot N.5:", if it is illegal on this sheet."""
    return sk_outcome(sheet, sk, options).sheet


def sk_outcome(sheet: Sheet, sk: SkLine, options: ChoiceOptions) -> Outcome:
    """``play_sk`` with what the round recorded, fed to the dog and put on the plate."""
    where = _slot(sk.after)
    sheet = _use_card(sheet, "sk", options, where)
    if len(sk.eat) != SK_EATS:
        raise OrderError(
            _(
                "%(where)s: Suppen-Kasper eats exactly %(count)d numbers from your plate",
                where=where,
                count=SK_EATS,
            )
        )
    if len(sheet.plate) < SK_EATS:
        held = (
            _("it will hold %(count)d", count=len(sheet.plate))
            if sheet.plate
            else _("it will be empty")
        )
        raise OrderError(
            _(
                "%(where)s: Suppen-Kasper needs %(count)d numbers on your plate; %(held)s",
                where=where,
                count=SK_EATS,
                held=held,
            )
        )
    left = Counter(sheet.plate)
    left.subtract(sk.eat)
    if min(left.values()) < 0:
        raise OrderError(
            _(
                "%(where)s: you cannot eat %(eaten)s; your plate will hold %(plate)s",
                where=where,
                eaten=_numbers(sk.eat),
                plate=_numbers(sheet.plate),
            )
        )
    dog = tuple(sorted(left.elements()))
    sheet = replace(sheet, plate=())
    outcome = _play(sheet, tuple(sk.eat), None, sk.choice, options, where)
    sheet = _end_check(outcome.sheet, sk.after, options, slot=True)
    return replace(outcome, sheet=sheet, dog=dog)


def nmr_choice(sheet: Sheet, roll: Sequence[int]) -> Choice:
    """The no-moves-received choice for one round (section 5): the highest score as if the
    game ended after this round; ties to the smaller value set aside, then to the smaller
    pair of sums (lower sum first)."""

    def rank(choice: Choice) -> tuple[int, int, int, int]:
        low, high = sorted(choice.sums)
        return (-score(_counts_with(sheet.counts, choice.sums)), choice.value, low, high)

    return min(legal_choices(sheet, roll), key=rank)


# --- order text ----------------------------------------------------------------------------

# The patterns find where the numbers stand with \d, which matches any script's digits: each
# number is then read by order_number, so a digit other than 0-9 gets a message naming it.
_CARD_WORD = re.compile(
    r"flip\s*(?P<flip>\d)?|swap\s*(?P<swap_value>\d)?\s*(?P<swap_plate>\d)?|half|double|refuse"
)
_CHOICE = re.compile(r"([wf])(\d)(\d)\+(\d)(\d)\+(\d)")
_SK = re.compile(r"skeat(\d{5})(.*)")
_SLOT = re.compile(r"(\d+)\.5")


def _die_numbers(digits: Iterable[str], where: str) -> list[int]:
    numbers: list[int] = []
    for digit in digits:
        number = order_number(digit)
        if number is None:
            raise OrderError(
                _(
                    "%(where)s: %(digit)s is not a die number; write dice as 1 to 6",
                    where=where,
                    digit=repr(digit),
                )
            )
        if not 1 <= number <= 6:
            raise OrderError(
                _(
                    "%(where)s: %(number)d is not a die number; dice show 1 to 6",
                    where=where,
                    number=number,
                )
            )
        numbers.append(number)
    return numbers


def _parse_choice(text: str, where: str) -> Choice:
    compact = text.replace(" ", "")
    match = _CHOICE.fullmatch(compact)
    if match is None:
        found = (
            _("cannot read %(text)s", text=repr(text.strip())) if text.strip() else _("no choice")
        )
        raise OrderError(
            _(
                "%(where)s: %(found)s; write W (Wurfel) or F (free ride), the die set aside "
                "and two pairs, e.g. %(example)s",
                where=where,
                found=found,
                example=EXAMPLE_LINE,
            )
        )
    value, a, b, c, d = _die_numbers(match.groups()[1:], where)
    first = (min(a, b), max(a, b))
    second = (min(c, d), max(c, d))
    return Choice(match.group(1).upper(), value, first, second)


def _parse_card(match: re.Match[str], where: str) -> Card:
    name = next(card for card in CARDS if match.group(0).startswith(card))
    if name == "flip":
        if match.group("flip") is None:
            raise OrderError(
                _("%(where)s: flip needs the value of the die to flip, e.g. flip 2", where=where)
            )
        (value,) = _die_numbers(match.group("flip"), where)
        return Card("flip", value)
    if name == "swap":
        if match.group("swap_plate") is None:
            raise OrderError(
                _(
                    "%(where)s: swap needs the die value and the plate number, e.g. swap 5 6",
                    where=where,
                )
            )
        value, plate = _die_numbers(match.group("swap_value", "swap_plate"), where)
        return Card("swap", value, plate)
    return Card(name)


def parse_round_line(body: str, number: int, options: ChoiceOptions) -> RoundLine:
    """A round line without its prefix: card words first, then the choice with every space
    dropped (section 9.1)."""
    where = _round(number)
    cards: list[re.Match[str]] = []

    def take(match: re.Match[str]) -> str:
        cards.append(match)
        return " "

    rest = _CARD_WORD.sub(take, body)
    if "sk" in rest.replace(" ", ""):
        if not options.suppenkasper:
            raise _no_cards(where)
        raise OrderError(
            _(
                "%(where)s: a Suppen-Kasper line needs its slot, e.g. %(number)d.5: "
                "SK eat 1 2 3 4 5 %(example)s",
                where=where,
                number=number,
                example=EXAMPLE_LINE,
            )
        )
    if cards and not options.suppenkasper:
        raise _no_cards(where)
    if len(cards) > 1:
        raise OrderError(_("%(where)s: only one card per round", where=where))
    card = _parse_card(cards[0], where) if cards else None
    return RoundLine(number, _parse_choice(rest, where), card)


def parse_sk_line(body: str, after: int) -> SkLine:
    """The body of ``N.5: SK eat n1 .. n5 choice`` (section 9.2)."""
    where = _slot(after)
    if _CARD_WORD.search(body):
        raise OrderError(_("%(where)s: no other card in the Suppen-Kasper round", where=where))
    match = _SK.fullmatch(body.replace(" ", ""))
    if match is None:
        raise OrderError(
            _(
                "%(where)s: write SK eat and the five plate numbers eaten, then the choice, "
                "e.g. %(after)d.5: SK eat 2 5 6 6 3 W6 2+5 6+3",
                where=where,
                after=after,
            )
        )
    eat = tuple(_die_numbers(match.group(1), where))
    return SkLine(after, eat, _parse_choice(match.group(2), where))


def check_slot(after: int, rounds: Sequence[int], options: ChoiceOptions) -> None:
    """The Suppen-Kasper slot ``after``.5 is one of first-0.5 ... last+0.5 (section 9.2)."""
    if not options.suppenkasper:
        raise _no_cards(_slot(after))
    allowed = range(rounds[0] - 1, rounds[-1] + 1)
    if after not in allowed:
        slots = ", ".join(f"{n}.5" for n in allowed)
        raise OrderError(
            _(
                "%(where)s is not in this postal turn (allowed: %(slots)s)",
                where=_slot(after),
                slots=slots,
            )
        )


def parse_order(text: str, rounds: Sequence[int], options: ChoiceOptions) -> ChoiceOrder:
    """The order in ``text`` for a postal turn of ``rounds``: syntax only (section 9)."""
    lines: list[RoundLine] = []
    sk: SkLine | None = None
    for raw in order_lines(text):
        head, colon, tail = raw.partition(":")
        prefix, body = (head.replace(" ", ""), tail) if colon else (None, raw)
        slot = _SLOT.fullmatch(prefix) if prefix is not None else None
        # A slot whose number does not read is an unreadable prefix, like "x.5:".
        after = order_number(slot.group(1)) if slot is not None else None
        if after is not None:
            check_slot(after, rounds, options)
            if sk is not None:
                raise OrderError(
                    _("%(where)s: only one Suppen-Kasper line per order", where=_slot(after))
                )
            sk = parse_sk_line(body, after)
            continue
        number = (rounds[0] if rounds else 1) + len(lines)
        where = _round(number)
        if len(lines) >= len(rounds):
            raise _no_such_round(where)
        marked = order_number(prefix) if prefix is not None else number
        if marked is None:
            raise OrderError(
                _(
                    "%(where)s: cannot read the prefix %(prefix)s; write the round number, "
                    "e.g. %(number)d: %(example)s",
                    where=where,
                    prefix=repr(head.strip()),
                    number=number,
                    example=EXAMPLE_LINE,
                )
            )
        if marked != number:
            raise OrderError(
                _(
                    "%(where)s: this line is marked %(marked)d: but lines go in round order "
                    "and line %(line)d is for round %(number)d",
                    where=where,
                    marked=marked,
                    line=len(lines) + 1,
                    number=number,
                )
            )
        lines.append(parse_round_line(body, number, options))
    return ChoiceOrder(tuple(lines), sk)


def order_text(order: ChoiceOrder) -> str:
    """The canonical text: one line per round (and the SK line at its slot), prefixed."""
    entries: list[tuple[float, str]] = [
        (line.round, f"{line.round}: {line.text()}") for line in order.lines
    ]
    if order.sk is not None:
        entries.append((order.sk.after + 0.5, f"{order.sk.after}.5: {order.sk.text()}"))
    return "\n".join(text for __, text in sorted(entries))


def _no_such_round(where: str) -> OrderError:
    return OrderError(_("%(where)s: no such round in this postal turn", where=where))


# --- the engine ----------------------------------------------------------------------------


class ChoiceEngine(JsonCodec):
    key = "choice"
    title = "Choice"
    min_players = 1
    max_players = 20
    # Every player orders in the same step: every step owes something of every
    # seat, so a seat's reports come by default every step.
    sequential = False
    step_word = "postal turn"
    # No private event of this game speaks to its seat ("you"): everyone reads them alike.
    onlooker_words: Mapping[str, str] = {}

    State = ChoiceState
    Order = ChoiceOrder

    def options(self, data: Mapping[str, JSON]) -> ChoiceOptions:
        return parse_options(data)

    def start(
        self, options: ChoiceOptions, players: Sequence[str], dice: Dice
    ) -> tuple[ChoiceState, list[Event]]:
        check_players(self.title, self.min_players, self.max_players, len(players))
        seats = len(players)
        state = ChoiceState(
            options=options,
            players=tuple(players),
            sheets=(Sheet(),) * seats,
            turn=0,
            rounds=(),
            orders=(None,) * seats,
        )
        return self._open_turn(state, dice)

    # --- orders ----------------------------------------------------------------------------

    def has_order(self, state: ChoiceState, seat: int) -> bool:
        return state.orders[seat] is not None

    def prompts(self, state: ChoiceState) -> list[Prompt]:
        if state.finished:
            return []
        if len(state.rounds) > 1:
            hint = _(
                "%(rounds)s: one line per round, e.g. %(example)s",
                rounds=state.rounds_label,
                example=EXAMPLE_LINE,
            )
        else:
            hint = _(
                "%(rounds)s: one line, e.g. %(example)s",
                rounds=state.rounds_label,
                example=EXAMPLE_LINE,
            )
        return [
            Prompt(seat, _("postal turn"), hint)
            for seat, sheet in enumerate(state.sheets)
            if sheet.active
        ]

    def _expect_order(self, state: ChoiceState, seat: int) -> None:
        if not 0 <= seat < len(state.players):
            raise OrderError(_("there is no seat %(seat)d in this game", seat=seat))
        sheet = state.sheets[seat]
        if not sheet.active:
            raise OrderError(
                _(
                    "your game ended %(when)s; no order is expected from you",
                    when=_ended_at(sheet),
                )
            )
        if state.finished:
            raise OrderError(_("the game is over; no order is expected from you"))

    def parse(self, state: ChoiceState, seat: int, text: str) -> ChoiceOrder:
        self._expect_order(state, seat)
        return parse_order(text, [r.number for r in state.rounds], state.options)

    def _play_turn(
        self, state: ChoiceState, seat: int, order: ChoiceOrder, default: bool = False
    ) -> tuple[Sheet, list[Play]]:
        """Play ``order`` on the seat's sheet in slot order; OrderError at the first illegal
        line. Lines after the round that ends the player's game, and a Suppen-Kasper slot
        never reached, are not played (section 9.5)."""
        numbers = [current.number for current in state.rounds]
        if order.sk is not None:
            check_slot(order.sk.after, numbers, state.options)
        if len(order.lines) > len(state.rounds):
            raise _no_such_round(_round(numbers[0] + len(state.rounds)))
        sheet = state.sheets[seat]
        plays: list[Play] = []
        for step in _slot_order(state.rounds, order.sk):
            if isinstance(step, SkLine):
                outcome = sk_outcome(sheet, step, state.options)
                play = Play(seat, step.after, step.text(), outcome.sums, default, "sk", True)
            else:
                line = self._line_for(order, step, numbers[0])
                outcome = round_outcome(sheet, step.roll, line, state.options)
                card = line.card.name if line.card is not None else None
                play = Play(seat, step.number, line.text(), outcome.sums, default, card)
            sheet = outcome.sheet
            plays.append(
                replace(
                    play,
                    onto_plate=outcome.onto_plate,
                    off_plate=outcome.off_plate,
                    dog=outcome.dog,
                )
            )
            if not sheet.active:
                break
        return sheet, plays

    @staticmethod
    def _line_for(order: ChoiceOrder, current: Round, first: int) -> RoundLine:
        where = _round(current.number)
        index = current.number - first
        if index >= len(order.lines):
            raise OrderError(_("%(where)s: line missing", where=where))
        line = order.lines[index]
        if line.round != current.number:
            raise OrderError(
                _(
                    "%(where)s: this line is marked for round %(marked)d",
                    where=where,
                    marked=line.round,
                )
            )
        return line

    def submit(
        self, state: ChoiceState, seat: int, order: ChoiceOrder, dice: Dice
    ) -> tuple[ChoiceState, list[Event]]:
        self._expect_order(state, seat)
        self._play_turn(state, seat, order)
        orders = list(state.orders)
        orders[seat] = order
        receipt = Event(
            _(
                "order received for %(rounds)s:\n%(order)s",
                rounds=state.rounds_label,
                order=order_text(order),
            ),
            to=(seat,),
        )
        return replace(state, orders=tuple(orders)), [receipt]

    def default(self, state: ChoiceState, seat: int) -> ChoiceOrder:
        """The NMR default order, kept on ``state`` (in its ``__dict__``, not a field): the
        postal layer records a missing seat's default and ``resolve`` then plays it from
        the same state, and working it out is a third of a step's engine time."""
        kept: dict[int, ChoiceOrder] = state.__dict__.setdefault("_nmr_defaults", {})
        if seat not in kept:
            kept[seat] = self._default(state, seat)
        return kept[seat]

    def _default(self, state: ChoiceState, seat: int) -> ChoiceOrder:
        self._expect_order(state, seat)
        sheet = state.sheets[seat]
        lines: list[RoundLine] = []
        for current in state.rounds:
            line = RoundLine(current.number, nmr_choice(sheet, current.roll))
            lines.append(line)
            sheet = play_round(sheet, current.roll, line, state.options)
            if not sheet.active:
                break
        return ChoiceOrder(tuple(lines))

    def canonical(self, state: ChoiceState, seat: int, order: ChoiceOrder) -> str:
        return order_text(order)

    # --- resolution ------------------------------------------------------------------------

    def resolve(self, state: ChoiceState, dice: Dice) -> tuple[ChoiceState, list[Event]]:
        if state.finished:
            raise GameError(_("the game is over; there is nothing to resolve"))
        sheets = list(state.sheets)
        plays: list[Play] = []
        events: list[Event] = []
        for seat, sheet in enumerate(state.sheets):
            if not sheet.active:
                continue
            order = state.orders[seat]
            if order is None:
                events.append(
                    Event(
                        _(
                            "%(name)s sent no order: the NMR default is played",
                            name=state.players[seat],
                        )
                    )
                )
            sheets[seat], seat_plays = self._play_turn(
                state, seat, order or self.default(state, seat), default=order is None
            )
            plays.extend(seat_plays)
        first, last = state.rounds[0].number, state.rounds[-1].number
        for position in range(2 * first - 1, 2 * last + 2):
            for play in plays:
                if play.position == position:
                    events.append(Event(self._play_text(state, play)))
            for seat, sheet in enumerate(sheets):
                if state.sheets[seat].active and _end_position(sheet) == position:
                    events.append(
                        Event(
                            _(
                                "%(name)s's game ends %(when)s with a score of %(score)d",
                                name=state.players[seat],
                                when=_ended_at(sheet),
                                score=sheet.score,
                            )
                        )
                    )
        if last >= state.options.round_cap:
            for seat, sheet in enumerate(sheets):
                if sheet.active:
                    sheets[seat] = end_game(sheet, last)
                    events.append(
                        Event(
                            _(
                                "round %(round)d is the round cap: %(name)s's game ends with "
                                "a score of %(score)d",
                                round=last,
                                name=state.players[seat],
                                score=sheets[seat].score,
                            )
                        )
                    )
        state = replace(
            state,
            sheets=tuple(sheets),
            orders=(None,) * len(sheets),
            past=state.past + state.rounds,
            rounds=(),
            history=state.history + tuple(sorted(plays, key=lambda p: (p.position, p.seat))),
        )
        if any(sheet.active for sheet in sheets):
            state, opened = self._open_turn(state, dice)
            return state, events + opened
        state = replace(state, finished=True)
        return state, [*events, Event(self._final_text(state))]

    def _play_text(self, state: ChoiceState, play: Play) -> Text:
        parts = [
            _(
                "%(name)s, %(where)s: %(line)s (sums %(sums)s)",
                name=state.players[play.seat],
                where=_slot(play.round) if play.slot else _round(play.round),
                line=play.line,
                sums=", ".join(map(str, play.sums)),
            )
        ]
        if play.dog:
            parts.append(_("the dog gets %(numbers)s", numbers=_join(play.dog, _(" and "))))
        if play.off_plate:
            parts.append(_("%(numbers)s off the plate", numbers=_join(play.off_plate, _(" and "))))
        if play.onto_plate:
            parts.append(
                _("%(numbers)s onto the plate", numbers=_join(play.onto_plate, _(" and ")))
            )
        return join(parts, "; ")

    def _final_text(self, state: ChoiceState) -> Text:
        standings = self.standings(state) or []
        places = "; ".join(
            f"{place.place}. {state.players[place.seat]} ({place.score})" for place in standings
        )
        return _("the game is over: %(places)s", places=places)

    def _open_turn(self, state: ChoiceState, dice: Dice) -> tuple[ChoiceState, list[Event]]:
        """OPEN(t): roll every round of the next postal turn now (section 10)."""
        turn = state.turn + 1
        first = state.past[-1].number + 1 if state.past else 1
        count = min(rounds_in_turn(state.options, turn), state.options.round_cap - first + 1)
        rounds: list[Round] = []
        for number in range(first, first + count):
            roll = tuple(dice.draw(6) for __ in range(DICE_PER_ROUND))
            rounds.append(Round(number, roll))
        state = replace(state, turn=turn, rounds=tuple(rounds))
        rolls = join(
            [
                _("round %(round)d rolls %(dice)s", round=r.number, dice=_numbers(r.roll))
                for r in state.rounds
            ],
            "; ",
        )
        opened = _(
            "postal turn %(turn)d, %(rounds)s: %(rolls)s",
            turn=turn,
            rounds=state.rounds_label,
            rolls=rolls,
        )
        return state, [Event(opened)]

    # --- what players see ------------------------------------------------------------------

    def _sheet_view(self, state: ChoiceState, seat: int) -> dict[str, JSON]:
        sheet = state.sheets[seat]
        data: dict[str, JSON] = {
            "seat": seat,
            "name": state.players[seat],
            "active": sheet.active,
            "ended_round": sheet.ended_round,
            "score": sheet.score,
            "running_score": score(sheet.counts),
            "counts": {str(total): sheet.count(total) for total in SUMS},
            "stored": [{"value": value, "count": count} for value, count in sheet.stored],
            "plate": list(sheet.plate),
            "cards_used": list(sheet.cards_used),
        }
        if state.options.suppenkasper:
            data["cards_left"] = [
                card for card in state.options.cards if card not in sheet.cards_used
            ]
            data["ended_slot"] = sheet.ended_slot
        return data

    def view(self, state: ChoiceState, seat: int | None) -> dict[str, JSON]:
        data: dict[str, JSON] = {
            "game": self.key,
            "status": "finished" if state.finished else "running",
            "options": to_json(state.options),
            "turn": state.turn,
            "rounds": [{"round": r.number, "roll": list(r.roll)} for r in state.rounds],
            "players": [self._sheet_view(state, s) for s in range(len(state.players))],
            "history": self._history_view(state),
        }
        if seat is not None:
            order = state.orders[seat]
            data["you"] = {
                "seat": seat,
                "name": state.players[seat],
                "has_order": order is not None,
                "order": order_text(order) if order is not None else None,
            }
        standings = self.standings(state)
        if standings is not None:
            data["standings"] = [
                {"player": state.players[s.seat], "place": s.place, "score": s.score}
                for s in standings
            ]
        return data

    def _history_view(self, state: ChoiceState) -> list[JSON]:
        """One entry per past round; a Suppen-Kasper round played by anyone follows the round
        it comes after as its own entry, numbered like "21.5", with no shared roll."""
        by_position: dict[int, list[JSON]] = {}
        for play in state.history:
            by_position.setdefault(play.position, []).append(self._play_view(state, play))
        rolls = {2 * past.number: past.roll for past in state.past}
        history: list[JSON] = []
        for position in sorted(rolls.keys() | by_position.keys()):
            plays = by_position.get(position, [])
            if position % 2:
                history.append({"round": f"{position // 2}.5", "roll": None, "plays": plays})
            else:
                entry = {"round": position // 2, "roll": list(rolls[position]), "plays": plays}
                history.append(entry)
        return history

    def _play_view(self, state: ChoiceState, play: Play) -> dict[str, JSON]:
        data: dict[str, JSON] = {
            "seat": play.seat,
            "player": state.players[play.seat],
            "line": play.line,
            "sums": list(play.sums),
            "default": play.default,
        }
        if state.options.suppenkasper:
            data["card"] = play.card
            data["slot"] = play.slot
            data["onto_plate"] = list(play.onto_plate)
            data["off_plate"] = list(play.off_plate)
            data["dog"] = list(play.dog)
        return data

    def standings(self, state: ChoiceState) -> list[Standing] | None:
        if not state.finished:
            return None
        keys: list[tuple[int, tuple[int, ...]]] = []
        for seat, sheet in enumerate(state.sheets):
            points = sheet.score if sheet.score is not None else score(sheet.counts)
            if state.options.tiebreak == "fewer_rounds":
                keys.append((seat, (-points, sheet.ended_round or 0)))
            else:
                keys.append((seat, (-points,)))
        final = {seat: sheet.score for seat, sheet in enumerate(state.sheets)}
        return [Standing(seat, place, final[seat]) for seat, place in competition_places(keys)]
