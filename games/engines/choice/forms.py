"""Choice's order form (rules/choice.md 9.3): one block of fields per round of the postal
turn, and in the Suppenkasper variant the card menus and the Suppen-Kasper block. It writes
the plain order text, which goes through the same parser and checks as an emailed order."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from django import forms
from django.utils.translation import gettext, gettext_lazy

from games.engines.base import Engine
from games.engines.choice.menus import FACES, plate_could_hold, possible_choices
from games.engines.choice.rules import SK_EATS, ChoiceOrder, ChoiceState, RoundLine, SkLine
from games.web.forms import BLOCKS, OrderForm

# "round 21: ..." or "slot 21.5: ...": the engine's messages start with what they concern.
_ROUND_MESSAGE = re.compile(r"round (\d+):")
_SLOT_MESSAGE = re.compile(r"slot \d+\.5\b")


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
        return " ".join(map(str, self.plate)) if self.plate else gettext("empty")


PAIR_LETTERS = "abcd"
KIND_LABELS = {"W": gettext_lazy("Wurfel"), "F": gettext_lazy("free ride")}
NO_DIE = ("", "\N{EN DASH}")
DIE_CHOICES = [NO_DIE] + [(str(value), str(value)) for value in range(1, 7)]
# The card words of a round line (rules/choice.md 9.1) with the card's name.
ROUND_CARDS = {
    "flip": gettext_lazy("flip (Upside Down)"),
    "half": gettext_lazy("half (Half Portion)"),
    "double": gettext_lazy("double (Double Portion)"),
    "refuse": gettext_lazy("refuse (Refusal)"),
    "swap": gettext_lazy("swap (From the Plate)"),
}


def _die_field(label: str, initial: Any, invalid: str) -> forms.ChoiceField:
    return forms.ChoiceField(
        label=label,
        choices=DIE_CHOICES,
        required=False,
        initial="" if initial is None else str(initial),
        error_messages={"invalid_choice": invalid},
    )


def _named_die_field(label: str, initial: Any, invalid: str) -> forms.ChoiceField:
    """A die of a pair, or a number eaten: the form shows these in a row after one word
    ("Pair 1", "Eat"), so each select carries its own name for screen readers."""
    field = _die_field(label, initial, invalid)
    field.widget.attrs["aria-label"] = label
    return field


def _pair_label(letter: str) -> str:
    pair = 1 if letter in "ab" else 2
    if letter in "ac":
        return gettext("Pair %(pair)d, first die") % {"pair": pair}
    return gettext("Pair %(pair)d, second die") % {"pair": pair}


def _kind_field(
    kinds: set[str], initial: str | None, where: str, plain: set[str]
) -> forms.ChoiceField:
    kind_choices = [(kind, KIND_LABELS[kind]) for kind in ("W", "F") if kind in kinds]
    preferred = [kind for kind, _ in kind_choices if kind in plain] or [kind_choices[0][0]]
    return forms.ChoiceField(
        label=gettext_lazy("Set aside as"),
        choices=kind_choices,
        widget=forms.RadioSelect,
        required=False,
        initial=initial or preferred[0],
        error_messages={
            "invalid_choice": gettext("%(where)s: choose %(kinds)s")
            % {
                "where": where,
                "kinds": gettext(" or ").join(str(label) for _, label in kind_choices),
            }
        },
    )


def _value_field(values: Iterable[int], initial: int | None, where: str) -> forms.ChoiceField:
    return forms.ChoiceField(
        label=gettext_lazy("Die set aside"),
        choices=[NO_DIE] + [(str(v), str(v)) for v in sorted(values)],
        required=False,
        initial="" if initial is None else str(initial),
        error_messages={
            "invalid_choice": gettext("%(where)s: you cannot set aside a %%(value)s here")
            % {"where": where}
        },
    )


def _choice_text(kind: str, value: str, pair: list[str]) -> str:
    a, b, c, d = pair
    return f"{kind}{value} {a}+{b} {c}+{d}"


class ChoiceOrderForm(OrderForm):
    """rules/choice.md 9.3: one block per round of the postal turn; in the Suppenkasper
    variant each block has a card menu, and a Suppen-Kasper block is added while that
    card is unused and the plate could hold five numbers during the turn."""

    def __init__(
        self,
        data: Any = None,
        *,
        engine: Engine[Any, Any, Any] | None = None,
        state: Any,
        position: int,
        step_number: int,
        current: str = "",
    ) -> None:
        super().__init__(
            data,
            engine=engine,
            state=state,
            position=position,
            step_number=step_number,
            current=current,
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
        if self.is_bound and self.data.get("entry") != BLOCKS:
            # The typed box was posted: the blocks still show the order that counts (or the
            # choices they offer first), as on the page the player came from.
            data = self.data.dict() if hasattr(self.data, "dict") else dict(self.data)
            for name, block_field in self.fields.items():
                if name not in OrderForm.base_fields:
                    data.setdefault(name, block_field.initial)
            self.data = data

    def _add_round_fields(
        self,
        number: int,
        kinds: set[str],
        values: set[int],
        plain_kinds: set[str],
        line: RoundLine | None,
    ) -> None:
        where = gettext("round %(number)d") % {"number": number}
        choice = line.choice if line else None
        self.fields[f"r{number}_kind"] = _kind_field(
            kinds, choice.kind if choice else None, where, plain_kinds
        )
        self.fields[f"r{number}_value"] = _value_field(
            values, choice.value if choice else None, where
        )
        pair_dice = (*choice.first, *choice.second) if choice else (None,) * 4
        for letter, initial in zip(PAIR_LETTERS, pair_dice, strict=True):
            self.fields[f"r{number}_{letter}"] = _named_die_field(
                _pair_label(letter),
                initial,
                gettext("%(where)s: %%(value)s is not a die number") % {"where": where},
            )
        if not self.round_cards:
            return
        card = line.card if line else None
        self.fields[f"r{number}_card"] = forms.ChoiceField(
            label=gettext_lazy("Card"),
            choices=[("", gettext("no card"))]
            + [(name, ROUND_CARDS[name]) for name in self.round_cards],
            required=False,
            initial=card.name if card else "",
            error_messages={
                "invalid_choice": gettext("%(where)s: the %%(value)s card is not yours to play now")
                % {"where": where}
            },
        )
        self.fields[f"r{number}_card_value"] = _die_field(
            gettext("Die (flip, swap)"),
            card.value if card else None,
            gettext("%(where)s: %%(value)s is not a die") % {"where": where},
        )
        self.fields[f"r{number}_card_plate"] = _die_field(
            gettext("Plate number (swap)"),
            card.plate if card else None,
            gettext("%(where)s: %%(value)s is not a plate number") % {"where": where},
        )

    def _add_sk_fields(self, sk: SkLine | None) -> None:
        first, last = self.rounds[0][0], self.rounds[-1][0]
        slots = [("", gettext("no Suppen-Kasper round"))]
        for after in range(first - 1, last + 1):
            if after < first:
                when = gettext("before round %(number)d") % {"number": first}
            elif after == last:
                when = gettext("after round %(number)d") % {"number": last}
            else:
                when = gettext("between rounds %(number)d and %(next)d") % {
                    "number": after,
                    "next": after + 1,
                }
            slots.append((f"{after}.5", f"{after}.5 ({when})"))
        self.fields["sk_slot"] = forms.ChoiceField(
            label=gettext_lazy("Slot"),
            choices=slots,
            required=False,
            initial=f"{sk.after}.5" if sk else "",
            error_messages={
                "invalid_choice": gettext_lazy(
                    "Suppen-Kasper: %(value)s is not a slot of this turn"
                )
            },
        )
        eaten = sk.eat if sk else (None,) * SK_EATS
        for index, initial in enumerate(eaten, start=1):
            self.fields[f"sk_eat{index}"] = _named_die_field(
                gettext("Eat, number %(index)d") % {"index": index},
                initial,
                gettext("Suppen-Kasper: %(value)s is not a die number"),
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
            self.fields[f"sk_{letter}"] = _named_die_field(
                _pair_label(letter),
                initial,
                gettext("Suppen-Kasper: %(value)s is not a die number"),
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
            # A ChoiceField (_kind_field), whose choices Django keeps as a list of pairs.
            kind_field = cast(forms.ChoiceField, self.fields[f"r{number}_kind"])
            kinds = cast(list[tuple[str, str]], kind_field.choices)
            if not kind and len(kinds) == 1:
                kind = kinds[0][0]
            if not value and not any(pair) and not card:
                gap = number if gap is None else gap
                continue
            if gap is not None:
                self.add_error(
                    f"r{gap}_kind",
                    gettext("round %(number)d: fill in this round first") % {"number": gap},
                )
                return cleaned
            if not value or not all(pair) or not kind:
                self.add_error(
                    f"r{number}_kind",
                    gettext("round %(number)d: choose the die you set aside and all four pair dice")
                    % {"number": number},
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
            self.add_error(
                f"r{number}_card",
                gettext("round %(number)d: choose the die to flip") % {"number": number},
            )
            return None
        if card == "swap" and not (value and plate):
            self.add_error(
                f"r{number}_card",
                gettext(
                    "round %(number)d: choose the die to swap and the plate number that replaces it"
                )
                % {"number": number},
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
                    gettext(
                        "Suppen-Kasper: choose the slot of the extra round, or clear its numbers"
                    ),
                )
            return None
        if not all(eat) or not value or not all(pair) or not kind:
            self.add_error(
                "sk_slot",
                gettext(
                    "slot %(slot)s: choose the five numbers you eat, the die you set aside and "
                    "all four pair dice"
                )
                % {"slot": slot},
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
