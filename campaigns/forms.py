"""Forms of the host's campaign pages: they turn what the host typed into the arguments of
one ``campaigns.postal`` function; the rules are checked there."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from campaigns.models import Campaign, Member
from games.gm_forms import parse_player

MAX_TABLES = 4
ABSENT = "absent"


class CampaignForm(forms.Form):
    name = forms.CharField(max_length=200)
    kind = forms.ChoiceField(choices=Campaign.Kind.choices)
    members = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text="One member per line: name <email> or name, email.",
    )
    options = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        initial="{}",
        help_text=(
            'First Player: {"order_mode": "free", "tokens": true, "rounds": 2}. '
            'League: {"engine": "choice", "game_options": {}, "points": [10, 6, 4, 3, 2, 1]}. '
            'Both: "schedule" (e.g. {"kind": "interval", "seconds": 3600}), "time_zone" and '
            '"locale" (dates as "en-GB" or "de" write them; without it, 2026-11-25).'
        ),
    )

    def clean_members(self) -> list[Any]:
        lines = [line for line in self.cleaned_data["members"].splitlines() if line.strip()]
        return [parse_player(line, number) for number, line in enumerate(lines, start=1)]

    def clean_options(self) -> dict[str, Any]:
        text = self.cleaned_data["options"].strip() or "{}"
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValidationError(f"not JSON: {error.msg} (line {error.lineno})") from None
        if not isinstance(value, dict):
            raise ValidationError("write the options as a JSON object: {...}")
        return value


class MemberForm(forms.Form):
    member = forms.CharField(max_length=320, label="New member", help_text="name <email>")

    def clean_member(self) -> Any:
        return parse_player(self.cleaned_data["member"], 1)


class NightForm(forms.Form):
    """The night's date and, per member, absent or the table they sit at."""

    date = forms.DateField(widget=forms.DateInput(attrs={"type": "date"}))
    rounds = forms.IntegerField(min_value=1, max_value=10, required=False)

    def __init__(self, *args: Any, members: list[Member], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.members = members
        seats = [(ABSENT, "absent")] + [(str(n), f"table {n}") for n in range(1, MAX_TABLES + 1)]
        for member in members:
            self.fields[f"seat_{member.pk}"] = forms.ChoiceField(
                choices=seats, initial="1", label=f"{member.name} ({member.dice} dice)"
            )

    def seat_fields(self) -> list[forms.BoundField]:
        return [self[f"seat_{member.pk}"] for member in self.members]

    def tables(self) -> list[list[int]]:
        """Member ids per table, tables in order, empty tables left out."""
        seated: dict[int, list[int]] = {}
        for member in self.members:
            choice = self.cleaned_data[f"seat_{member.pk}"]
            if choice != ABSENT:
                seated.setdefault(int(choice), []).append(member.pk)
        return [seated[number] for number in sorted(seated)]
