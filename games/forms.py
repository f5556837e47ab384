"""Order forms. Every form writes the plain order text, which goes through the same parser
and the same checks as an emailed order (rules/README.md, "Web form").

``FORMS`` maps an engine key to its form class; a game without its own form gets the
quick-entry text box alone. Each form is rendered by ``games/forms/<engine key>.html``
(fallback ``games/forms/default.html``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django import forms

from games.engines.choice import ChoiceOrder, ChoiceState, Sheet, wurfel_rule

BLOCKS = "blocks"
TEXT = "text"
# "round 21: ..." or "slot 21.5: ...": the engine's messages start with what they concern.
_ROUND_MESSAGE = re.compile(r"round (\d+):")


class OrderForm(forms.Form):
    """The part every order form shares: the step it was written for, which entry was
    used, and the quick-entry box that takes the order syntax as typed."""

    step = forms.IntegerField(widget=forms.HiddenInput, min_value=1)
    entry = forms.ChoiceField(
        choices=[(BLOCKS, BLOCKS), (TEXT, TEXT)], widget=forms.HiddenInput, initial=TEXT
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


@dataclass
class RoundBlock:
    """One round of the Choice form: its roll and its fields, for the template."""

    round: int
    roll: tuple[int, ...]
    kind: forms.BoundField
    value: forms.BoundField
    pairs: list[forms.BoundField]
    errors: list[str] = field(default_factory=list)

    @property
    def faces(self) -> str:
        return " ".join("⚀⚁⚂⚃⚄⚅"[value - 1] for value in self.roll)

    @property
    def dice(self) -> str:
        return " ".join(map(str, self.roll))


KIND_LABELS = {"W": "Wurfel", "F": "free ride"}
NO_DIE = ("", "\N{EN DASH}")
DIE_CHOICES = [NO_DIE] + [(str(value), str(value)) for value in range(1, 7)]


def possible_choices(
    sheet: Sheet, rolls: Iterable[tuple[int, ...]]
) -> list[tuple[set[str], set[int]]]:
    """For each round of a postal turn, the kinds (W, F) and the values the player may set
    aside, over every way the earlier rounds of the same order can go: a Wurfel taken in
    round 21 can make round 22 a free ride. With the sheet as it stands, round 1 has
    exactly one kind."""
    reachable = {frozenset(sheet.stored_values)}
    result: list[tuple[set[str], set[int]]] = []
    for roll in rolls:
        kinds: set[str] = set()
        values: set[int] = set()
        following: set[frozenset[int]] = set()
        for stored in reachable:
            rule, allowed = wurfel_rule(Sheet(stored=tuple((v, 1) for v in stored)), roll)
            kind = "F" if rule == "W3" else "W"
            kinds.add(kind)
            values.update(allowed)
            following.update(stored | {v} if kind == "W" else stored for v in allowed)
        result.append((kinds, values))
        reachable = following
    return result


class ChoiceOrderForm(OrderForm):
    """rules/choice.md 9.3: one block per round of the postal turn (standard game)."""

    def __init__(
        self, data: Any = None, *, state: Any, position: int, step_number: int, current: str = ""
    ) -> None:
        super().__init__(
            data, state=state, position=position, step_number=step_number, current=current
        )
        assert isinstance(state, ChoiceState)
        self.rounds = [(r.number, r.roll) for r in state.rounds]
        order = state.orders[position]
        lines = {line.round: line for line in order.lines} if isinstance(order, ChoiceOrder) else {}
        possible = possible_choices(state.sheets[position], (roll for _, roll in self.rounds))
        for (number, _), (kinds, values) in zip(self.rounds, possible, strict=True):
            line = lines.get(number)
            kind_choices = [(kind, KIND_LABELS[kind]) for kind in ("W", "F") if kind in kinds]
            self.fields[f"r{number}_kind"] = forms.ChoiceField(
                label="Set aside as",
                choices=kind_choices,
                widget=forms.RadioSelect,
                required=False,
                initial=line.choice.kind if line else kind_choices[0][0],
                error_messages={
                    "invalid_choice": f"round {number}: choose "
                    + " or ".join(label for _, label in kind_choices)
                },
            )
            self.fields[f"r{number}_value"] = forms.ChoiceField(
                label="Die set aside",
                choices=[NO_DIE] + [(str(v), str(v)) for v in sorted(values)],
                required=False,
                initial=str(line.choice.value) if line else "",
                error_messages={
                    "invalid_choice": f"round {number}: you cannot set aside a %(value)s here"
                },
            )
            pair_dice = (*line.choice.first, *line.choice.second) if line else ("",) * 4
            for letter, initial in zip("abcd", pair_dice, strict=True):
                self.fields[f"r{number}_{letter}"] = forms.ChoiceField(
                    label=f"Pair {1 if letter in 'ab' else 2}",
                    choices=DIE_CHOICES,
                    required=False,
                    initial=str(initial),
                    error_messages={
                        "invalid_choice": f"round {number}: %(value)s is not a die number"
                    },
                )

    def _names(self, number: int) -> list[str]:
        return [f"r{number}_{part}" for part in ("kind", "value", "a", "b", "c", "d")]

    @property
    def blocks(self) -> list[RoundBlock]:
        blocks = []
        for number, roll in self.rounds:
            names = self._names(number)
            errors = [str(e) for name in names for e in self.errors.get(name, [])]
            blocks.append(
                RoundBlock(
                    round=number,
                    roll=tuple(roll),
                    kind=self[names[0]],
                    value=self[names[1]],
                    pairs=[self[name] for name in names[2:]],
                    errors=errors,
                )
            )
        return blocks

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if cleaned.get("entry") != BLOCKS or self.errors:
            return cleaned
        lines: list[str] = []
        gap: int | None = None
        for number, _ in self.rounds:
            kind, value, *pair = (cleaned.get(name) or "" for name in self._names(number))
            kinds = self.fields[f"r{number}_kind"].choices  # type: ignore[attr-defined]
            if not kind and len(kinds) == 1:
                kind = kinds[0][0]
            if not value and not any(pair):
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
            a, b, c, d = pair
            lines.append(f"{number}: {kind}{value} {a}+{b} {c}+{d}")
        cleaned["text"] = "\n".join(lines)
        return cleaned

    def add_order_error(self, message: str) -> None:
        match = _ROUND_MESSAGE.match(message)
        shown = {number for number, _ in self.rounds}
        if (
            self.cleaned_data.get("entry") == BLOCKS
            and match is not None
            and int(match.group(1)) in shown
        ):
            self.add_error(f"r{match.group(1)}_kind", message)
            return
        super().add_order_error(message)


FORMS: dict[str, type[OrderForm]] = {"choice": ChoiceOrderForm}


def form_class(engine_key: str) -> type[OrderForm]:
    return FORMS.get(engine_key, OrderForm)


def form_templates(engine_key: str) -> list[str]:
    return [f"games/forms/{engine_key}.html", "games/forms/default.html"]
