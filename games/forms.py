"""Order forms. Every form writes the plain order text, which goes through the same parser
and the same checks as an emailed order (rules/README.md, "Web form").

``FORMS`` maps an engine key to its form class; a game without its own form gets the
quick-entry text box alone. Each form is rendered by ``games/forms/<engine key>.html``
(fallback ``games/forms/default.html``).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from games.engines import registry
from games.engines.base import OrderError
from games.engines.choice.rules import (
    MAX_STORED_VALUES,
    SK_EATS,
    ChoiceOptions,
    ChoiceOrder,
    ChoiceState,
    RoundLine,
    Sheet,
    SkLine,
    wurfel_rule,
)

BLOCKS = "blocks"
TEXT = "text"
MENU = "menu"
# "round 21: ..." or "slot 21.5: ...": the engine's messages start with what they concern.
_ROUND_MESSAGE = re.compile(r"round (\d+):")
_SLOT_MESSAGE = re.compile(r"slot \d+\.5\b")


class OrderForm(forms.Form):
    """The part every order form shares: the step it was written for, which entry was
    used, and the quick-entry box that takes the order syntax as typed."""

    step = forms.IntegerField(widget=forms.HiddenInput, min_value=1)
    entry = forms.ChoiceField(
        choices=[(BLOCKS, BLOCKS), (TEXT, TEXT), (MENU, MENU)],
        widget=forms.HiddenInput,
        initial=TEXT,
    )
    text = forms.CharField(
        required=False,
        label="Type your order",
        widget=forms.Textarea(attrs={"rows": 4, "autocapitalize": "none", "spellcheck": "false"}),
        max_length=5000,
    )

    def __init__(
        self, data: Any = None, *, state: Any, position: int, step_number: int, current: str = ""
    ) -> None:
        super().__init__(data, initial={"step": step_number, "text": current})
        self.state = state
        self.position = position

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if cleaned.get("entry", TEXT) == TEXT and not (cleaned.get("text") or "").strip():
            self.add_error("text", "Write your order in the box first.")
        return cleaned

    def order_text(self) -> str:
        """The order as plain text; only after ``is_valid()``."""
        return str(self.cleaned_data["text"])

    def add_order_error(self, message: str) -> None:
        """Show the postal layer's rejection where the player will look for it."""
        if self.cleaned_data.get("entry") == TEXT:
            self.add_error("text", message)
        else:
            self.add_error(None, message)


def typed_order(data: Any) -> str | None:
    """The order of a post of the typed-order box (entry "text") that passes the checks
    every order form makes of that entry, else None. Reading it needs nothing of the game,
    so the view hands it to the postal layer before it builds anything of the page."""
    # The form's own fields, each cleaned as the form cleans it, and its clean(): what
    # OrderForm(data).is_valid() decides, without building a form (a deep copy of its
    # fields) for every order.
    fields = OrderForm.base_fields
    try:
        cleaned = {
            name: field.clean(field.widget.value_from_datadict(data, {}, name))
            for name, field in fields.items()
        }
    except ValidationError:
        return None
    if cleaned["entry"] != TEXT or not (cleaned["text"] or "").strip():
        return None
    return str(cleaned["text"])


@dataclass
class RoundBlock:
    """One round of the Choice form: its roll and its fields, for the template. The card
    fields exist in the Suppenkasper variant only."""

    round: int
    roll: tuple[int, ...]
    kind: forms.BoundField
    value: forms.BoundField
    pairs: list[forms.BoundField]
    errors: list[str] = field(default_factory=list)
    card: forms.BoundField | None = None
    card_value: forms.BoundField | None = None
    card_plate: forms.BoundField | None = None

    @property
    def faces(self) -> str:
        return " ".join("⚀⚁⚂⚃⚄⚅"[value - 1] for value in self.roll)

    @property
    def dice(self) -> str:
        return " ".join(map(str, self.roll))


@dataclass
class SkBlock:
    """The Suppen-Kasper block: the slot, the five numbers eaten and the choice."""

    slot: forms.BoundField
    eat: list[forms.BoundField]
    kind: forms.BoundField
    value: forms.BoundField
    pairs: list[forms.BoundField]
    plate: tuple[int, ...]
    errors: list[str] = field(default_factory=list)

    @property
    def plate_text(self) -> str:
        return " ".join(map(str, self.plate)) if self.plate else "empty"


KIND_LABELS = {"W": "Wurfel", "F": "free ride"}
NO_DIE = ("", "\N{EN DASH}")
DIE_CHOICES = [NO_DIE] + [(str(value), str(value)) for value in range(1, 7)]
FACES = range(1, 7)
# The card words of a round line (rules/choice.md 9.1) with the card's name.
ROUND_CARDS = {
    "flip": "flip (Upside Down)",
    "half": "half (Half Portion)",
    "double": "double (Double Portion)",
    "refuse": "refuse (Refusal)",
    "swap": "swap (From the Plate)",
}
# The most numbers a card can put on the plate in its round (rules/choice.md 7.3).
PLATE_GAIN = {"flip": 1, "half": 2, "double": 2, "refuse": 1, "swap": 0, "sk": 0}
PAIR_LETTERS = "abcd"


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


def _die_field(label: str, initial: Any, invalid: str) -> forms.ChoiceField:
    return forms.ChoiceField(
        label=label,
        choices=DIE_CHOICES,
        required=False,
        initial="" if initial is None else str(initial),
        error_messages={"invalid_choice": invalid},
    )


def _kind_field(
    kinds: set[str], initial: str | None, where: str, plain: set[str]
) -> forms.ChoiceField:
    kind_choices = [(kind, KIND_LABELS[kind]) for kind in ("W", "F") if kind in kinds]
    preferred = [kind for kind, _ in kind_choices if kind in plain] or [kind_choices[0][0]]
    return forms.ChoiceField(
        label="Set aside as",
        choices=kind_choices,
        widget=forms.RadioSelect,
        required=False,
        initial=initial or preferred[0],
        error_messages={
            "invalid_choice": f"{where}: choose " + " or ".join(label for _, label in kind_choices)
        },
    )


def _value_field(values: Iterable[int], initial: int | None, where: str) -> forms.ChoiceField:
    return forms.ChoiceField(
        label="Die set aside",
        choices=[NO_DIE] + [(str(v), str(v)) for v in sorted(values)],
        required=False,
        initial="" if initial is None else str(initial),
        error_messages={"invalid_choice": f"{where}: you cannot set aside a %(value)s here"},
    )


def _choice_text(kind: str, value: str, pair: list[str]) -> str:
    a, b, c, d = pair
    return f"{kind}{value} {a}+{b} {c}+{d}"


class ChoiceOrderForm(OrderForm):
    """rules/choice.md 9.3: one block per round of the postal turn; in the Suppenkasper
    variant each block has a card menu, and a Suppen-Kasper block is added while that
    card is unused and the plate could hold five numbers during the turn."""

    def __init__(
        self, data: Any = None, *, state: Any, position: int, step_number: int, current: str = ""
    ) -> None:
        super().__init__(
            data, state=state, position=position, step_number=step_number, current=current
        )
        assert isinstance(state, ChoiceState)
        self.rounds = [(r.number, r.roll) for r in state.rounds]
        sheet = state.sheets[position]
        options = state.options
        left = (
            [card for card in options.cards if card not in sheet.cards_used]
            if options.suppenkasper
            else []
        )
        self.round_cards = [card for card in left if card in ROUND_CARDS]
        self.sk_shown = "sk" in left and plate_could_hold(sheet, options, len(self.rounds))
        self.plate = sheet.plate
        order = state.orders[position]
        order = order if isinstance(order, ChoiceOrder) else None
        lines = {line.round: line for line in order.lines} if order else {}
        rolls = [roll for _, roll in self.rounds]
        cards = [*self.round_cards, "sk"] if self.sk_shown else self.round_cards
        possible = possible_choices(sheet, rolls, cards)
        plain = possible_choices(sheet, rolls)
        for (number, _), (kinds, values), (plain_kinds, _) in zip(
            self.rounds, possible, plain, strict=True
        ):
            self._add_round_fields(number, kinds, values, plain_kinds, lines.get(number))
        if self.sk_shown:
            self._add_sk_fields(order.sk if order else None)

    def _add_round_fields(
        self,
        number: int,
        kinds: set[str],
        values: set[int],
        plain_kinds: set[str],
        line: RoundLine | None,
    ) -> None:
        where = f"round {number}"
        choice = line.choice if line else None
        self.fields[f"r{number}_kind"] = _kind_field(
            kinds, choice.kind if choice else None, where, plain_kinds
        )
        self.fields[f"r{number}_value"] = _value_field(
            values, choice.value if choice else None, where
        )
        pair_dice = (*choice.first, *choice.second) if choice else (None,) * 4
        for letter, initial in zip(PAIR_LETTERS, pair_dice, strict=True):
            self.fields[f"r{number}_{letter}"] = _die_field(
                f"Pair {1 if letter in 'ab' else 2}",
                initial,
                f"{where}: %(value)s is not a die number",
            )
        if not self.round_cards:
            return
        card = line.card if line else None
        self.fields[f"r{number}_card"] = forms.ChoiceField(
            label="Card",
            choices=[("", "no card")] + [(name, ROUND_CARDS[name]) for name in self.round_cards],
            required=False,
            initial=card.name if card else "",
            error_messages={
                "invalid_choice": f"{where}: the %(value)s card is not yours to play now"
            },
        )
        self.fields[f"r{number}_card_value"] = _die_field(
            "Die (flip, swap)", card.value if card else None, f"{where}: %(value)s is not a die"
        )
        self.fields[f"r{number}_card_plate"] = _die_field(
            "Plate number (swap)",
            card.plate if card else None,
            f"{where}: %(value)s is not a plate number",
        )

    def _add_sk_fields(self, sk: SkLine | None) -> None:
        first, last = self.rounds[0][0], self.rounds[-1][0]
        slots = [("", "no Suppen-Kasper round")]
        for after in range(first - 1, last + 1):
            if after < first:
                when = f"before round {first}"
            elif after == last:
                when = f"after round {last}"
            else:
                when = f"between rounds {after} and {after + 1}"
            slots.append((f"{after}.5", f"{after}.5 ({when})"))
        self.fields["sk_slot"] = forms.ChoiceField(
            label="Slot",
            choices=slots,
            required=False,
            initial=f"{sk.after}.5" if sk else "",
            error_messages={
                "invalid_choice": "Suppen-Kasper: %(value)s is not a slot of this turn"
            },
        )
        eaten = sk.eat if sk else (None,) * SK_EATS
        for index, initial in enumerate(eaten, start=1):
            self.fields[f"sk_eat{index}"] = _die_field(
                f"Number {index}", initial, "Suppen-Kasper: %(value)s is not a die number"
            )
        choice = sk.choice if sk else None
        self.fields["sk_kind"] = _kind_field(
            {"W", "F"}, choice.kind if choice else None, "Suppen-Kasper", {"W"}
        )
        self.fields["sk_value"] = _value_field(
            FACES, choice.value if choice else None, "Suppen-Kasper"
        )
        pair_dice = (*choice.first, *choice.second) if choice else (None,) * 4
        for letter, initial in zip(PAIR_LETTERS, pair_dice, strict=True):
            self.fields[f"sk_{letter}"] = _die_field(
                f"Pair {1 if letter in 'ab' else 2}",
                initial,
                "Suppen-Kasper: %(value)s is not a die number",
            )

    def _names(self, number: int) -> list[str]:
        names = [f"r{number}_{part}" for part in ("kind", "value", *PAIR_LETTERS)]
        if self.round_cards:
            names += [f"r{number}_{part}" for part in ("card", "card_value", "card_plate")]
        return names

    def _sk_names(self) -> list[str]:
        eat = [f"sk_eat{index}" for index in range(1, SK_EATS + 1)]
        return ["sk_slot", *eat, "sk_kind", "sk_value", *(f"sk_{x}" for x in PAIR_LETTERS)]

    def _errors_of(self, names: Iterable[str]) -> list[str]:
        return [str(error) for name in names for error in self.errors.get(name, [])]

    @property
    def blocks(self) -> list[RoundBlock]:
        blocks = []
        for number, roll in self.rounds:
            names = self._names(number)
            cards: list[forms.BoundField | None] = [self[name] for name in names[6:]]
            cards += [None] * (3 - len(cards))
            blocks.append(
                RoundBlock(
                    round=number,
                    roll=tuple(roll),
                    kind=self[names[0]],
                    value=self[names[1]],
                    pairs=[self[name] for name in names[2:6]],
                    errors=self._errors_of(names),
                    card=cards[0],
                    card_value=cards[1],
                    card_plate=cards[2],
                )
            )
        return blocks

    @property
    def sk_block(self) -> SkBlock | None:
        if not self.sk_shown:
            return None
        return SkBlock(
            slot=self["sk_slot"],
            eat=[self[f"sk_eat{index}"] for index in range(1, SK_EATS + 1)],
            kind=self["sk_kind"],
            value=self["sk_value"],
            pairs=[self[f"sk_{letter}"] for letter in PAIR_LETTERS],
            plate=self.plate,
            errors=self._errors_of(self._sk_names()),
        )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if cleaned.get("entry") != BLOCKS or self.errors:
            return cleaned
        lines: list[tuple[float, str]] = []
        gap: int | None = None
        for number, _ in self.rounds:
            kind, value, *pair = (cleaned.get(name) or "" for name in self._names(number)[:6])
            card = cleaned.get(f"r{number}_card") or ""
            kinds = self.fields[f"r{number}_kind"].choices  # type: ignore[attr-defined]
            if not kind and len(kinds) == 1:
                kind = kinds[0][0]
            if not value and not any(pair) and not card:
                gap = number if gap is None else gap
                continue
            if gap is not None:
                self.add_error(f"r{gap}_kind", f"round {gap}: fill in this round first")
                return cleaned
            if not value or not all(pair) or not kind:
                self.add_error(
                    f"r{number}_kind",
                    f"round {number}: choose the die you set aside and all four pair dice",
                )
                return cleaned
            card_text = self._card_text(number, card, cleaned)
            if card_text is None:
                return cleaned
            lines.append((number, f"{number}: {card_text}{_choice_text(kind, value, pair)}"))
        if self.sk_shown:
            sk_line = self._sk_line(cleaned)
            if self.errors:
                return cleaned
            if sk_line is not None:
                lines.append(sk_line)
        cleaned["text"] = "\n".join(text for _, text in sorted(lines))
        return cleaned

    def _card_text(self, number: int, card: str, cleaned: dict[str, Any]) -> str | None:
        """The card words of a round line ("" for none, "swap 5 6 " with its numbers);
        None, with the error on the block, when a number is missing."""
        value = cleaned.get(f"r{number}_card_value") or ""
        plate = cleaned.get(f"r{number}_card_plate") or ""
        if card == "flip" and not value:
            self.add_error(f"r{number}_card", f"round {number}: choose the die to flip")
            return None
        if card == "swap" and not (value and plate):
            self.add_error(
                f"r{number}_card",
                f"round {number}: choose the die to swap and the plate number that replaces it",
            )
            return None
        if card == "flip":
            return f"flip {value} "
        if card == "swap":
            return f"swap {value} {plate} "
        return f"{card} " if card else ""

    def _sk_line(self, cleaned: dict[str, Any]) -> tuple[float, str] | None:
        """The Suppen-Kasper line with its place in slot order, or None when the block is
        left empty; errors go on the block."""
        slot, *rest = (cleaned.get(name) or "" for name in self._sk_names())
        eat, (kind, value, *pair) = rest[:SK_EATS], rest[SK_EATS:]
        if not slot:
            if any(eat) or value or any(pair):
                self.add_error(
                    "sk_slot",
                    "Suppen-Kasper: choose the slot of the extra round, or clear its numbers",
                )
            return None
        if not all(eat) or not value or not all(pair) or not kind:
            self.add_error(
                "sk_slot",
                f"slot {slot}: choose the five numbers you eat, the die you set aside "
                "and all four pair dice",
            )
            return None
        line = f"{slot}: SK eat {' '.join(eat)} {_choice_text(kind, value, pair)}"
        return float(slot), line

    def add_order_error(self, message: str) -> None:
        if self.cleaned_data.get("entry") == BLOCKS:
            match = _ROUND_MESSAGE.match(message)
            shown = {number for number, _ in self.rounds}
            if match is not None and int(match.group(1)) in shown:
                self.add_error(f"r{match.group(1)}_kind", message)
                return
            if self.sk_shown and _SLOT_MESSAGE.match(message):
                self.add_error("sk_slot", message)
                return
        super().add_order_error(message)


class _ProbeLimit(Exception):
    pass


class _ProbeDice:
    """Dice for trying an order on a copy of the state: 1, 2, 3, ... by turns, so that
    re-rolls of ties end. Engines check an order before they draw, so an order they refuse
    is refused before any die; one that needs more than a few hundred dice was accepted."""

    LIMIT = 500

    def __init__(self) -> None:
        self.drawn = 0

    def draw(self, sides: int) -> int:
        self.drawn += 1
        if self.drawn > self.LIMIT:
            raise _ProbeLimit
        return (self.drawn - 1) % sides + 1


def legal_choices(engine: Any, state: Any, position: int) -> list[tuple[str, str]]:
    """The engine's candidate one-line orders for ``position`` now (``engine.candidates``)
    that the engine itself accepts, as (order text, label). Engines are pure, so trying an
    order on the state changes nothing."""
    found = []
    for text, label in engine.candidates(state, position):
        try:
            engine.submit(state, position, engine.parse(state, position, text), _ProbeDice())
        except OrderError:
            continue
        except _ProbeLimit:
            pass
        found.append((text, label))
    return found


class MenuOrderForm(OrderForm):
    """Games whose orders are mostly one line: a menu of exactly the legal orders now (a
    button each when there are few, else a select), next to the quick-entry box."""

    engine: Any = None
    BUTTONS = 12

    def __init__(
        self, data: Any = None, *, state: Any, position: int, step_number: int, current: str = ""
    ) -> None:
        if data is not None and data.get("pick_button"):
            # A button of the menu (or a cell of a board) was pressed: it names the order,
            # whatever the select next to it says.
            data = data.copy()
            data["pick"] = data["pick_button"]
        super().__init__(
            data, state=state, position=position, step_number=step_number, current=current
        )
        self.menu = legal_choices(self.engine, state, position)
        self.fields["pick"] = forms.ChoiceField(
            label="Your order",
            required=False,
            choices=[("", "choose…"), *self.menu],
            error_messages={"invalid_choice": "That order is not one of the legal ones now."},
        )

    @property
    def buttons(self) -> bool:
        return 0 < len(self.menu) <= self.BUTTONS

    def clean(self) -> dict[str, Any]:
        if self.data.get("entry") != MENU:
            return super().clean()
        cleaned = forms.Form.clean(self) or {}
        if not cleaned.get("pick") and "pick" not in self.errors:
            self.add_error("pick", "Choose your order first.")
        return cleaned

    def order_text(self) -> str:
        if self.cleaned_data.get("entry") == MENU:
            return str(self.cleaned_data["pick"])
        return super().order_text()

    def add_order_error(self, message: str) -> None:
        if self.cleaned_data.get("entry") == MENU:
            self.add_error("pick", message)
        else:
            super().add_order_error(message)


FORMS: dict[str, type[OrderForm]] = {"choice": ChoiceOrderForm}
_MENU_FORMS: dict[str, type[OrderForm]] = {}


def _has_menu(engine_key: str) -> bool:
    return hasattr(registry.get(engine_key), "candidates")


def form_class(engine_key: str) -> type[OrderForm]:
    if engine_key in FORMS:
        return FORMS[engine_key]
    if not _has_menu(engine_key):
        return OrderForm
    if engine_key not in _MENU_FORMS:
        _MENU_FORMS[engine_key] = type(
            "MenuOrderForm", (MenuOrderForm,), {"engine": registry.get(engine_key)}
        )
    return _MENU_FORMS[engine_key]


def form_templates(engine_key: str) -> list[str]:
    fallback = "games/forms/menu.html" if _has_menu(engine_key) else "games/forms/default.html"
    return [f"games/forms/{engine_key}.html", fallback]


class ReminderChoiceForm(forms.Form):
    """One email per reminder, or one digest a day at an hour of the player's zone."""

    digest = forms.TypedChoiceField(
        label="Reminders",
        choices=[
            ("0", "one email per game, before each deadline"),
            ("1", "one daily digest for all my games"),
        ],
        coerce=lambda value: value == "1",
        widget=forms.RadioSelect,
    )
    hour = forms.TypedChoiceField(
        label="Digest at",
        choices=[(str(hour), f"{hour:02d}:00") for hour in range(24)],
        coerce=int,
        initial="8",
    )
