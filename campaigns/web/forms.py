"""Forms of the host's campaign pages: they turn what the host typed into the arguments of
one ``campaigns.postal`` function; the rules are checked there."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from campaigns import dates
from campaigns.models import Campaign, Member
from campaigns.postal import DEFAULT_NIGHT_SCHEDULE, DEFAULT_POINTS, FIRST_PLAYER_KEYS
from games.engines.base import counted
from games.engines.first_player.rules import FirstPlayerEngine
from games.lib import schedule
from games.web.gm.forms import (
    EMAIL_LENGTH,
    NAME_LENGTH,
    PLAYERS_HELP,
    DeadlinesForm,
    parse_player,
)
from games.web.options import OptionsFields

FIRST_PLAYER_KEY = FirstPlayerEngine.key

MAX_TABLES = 4
ABSENT = "absent"


class CampaignForm(DeadlinesForm):
    """A new campaign: a First Player campaign (``game`` None) or a league of one game and
    profile. The options are the game's fields (``games.web.options``); the rhythm of
    its games is written in words, as on the new-game form."""

    name = forms.CharField(max_length=200)
    members = forms.CharField(
        widget=forms.Textarea(
            attrs={"rows": 5, "placeholder": "Ann <ann@example.org>\nBob, bob@example.org"}
        ),
        help_text=PLAYERS_HELP,
    )
    schedule = forms.CharField(
        max_length=200,
        label="Schedule",
        help_text="Of each game: 'every 1 hour', 'daily at 18:00' or 'mondays at 20:00'.",
    )
    time_zone = forms.CharField(max_length=64, initial="UTC")
    locale = forms.CharField(
        max_length=20,
        required=False,
        label="Dates written as",
        help_text="A language code such as en-GB or de; empty: 2026-11-25.",
    )

    def __init__(self, *args: Any, game: str | None, profile: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kind = Campaign.Kind.LEAGUE if game else Campaign.Kind.FIRST_PLAYER
        if game is None:
            self.option_fields = OptionsFields(FIRST_PLAYER_KEY, "", only=FIRST_PLAYER_KEYS)
            self.fields["schedule"].initial = schedule.describe(DEFAULT_NIGHT_SCHEDULE)
        else:
            self.option_fields = OptionsFields(game, profile)
            self.fields["schedule"].initial = "every 48 hours"
            self.fields["points"] = forms.CharField(
                max_length=200,
                initial=", ".join(str(p) for p in DEFAULT_POINTS),
                label="Points per place",
                help_text="First place first, separated by commas; places below get none.",
            )
        self.option_fields.add_to(self)

    def option_boxes(self) -> list[forms.BoundField]:
        return self.option_fields.bound(self)

    def clean_members(self) -> list[Any]:
        lines = [line for line in self.cleaned_data["members"].splitlines() if line.strip()]
        return [parse_player(line, number) for number, line in enumerate(lines, start=1)]

    def clean_locale(self) -> str:
        locale: str = self.cleaned_data["locale"].strip()
        if locale and not dates.known_locale(locale):
            raise ValidationError(
                f"{locale!r} is no language we write dates for; write a code such as en-GB "
                "or de, or leave it empty"
            )
        return locale

    def clean_points(self) -> list[int]:
        words = self.cleaned_data["points"].replace(",", " ").split()
        if not words or not all(word.isascii() and word.isdigit() for word in words):
            raise ValidationError("write whole numbers separated by commas, e.g. 10, 6, 4")
        return [int(word) for word in words]

    def clean(self) -> dict[str, Any] | None:
        data = super().clean()
        options = self.option_fields.data(self)
        if data is None or options is None or not self.option_fields.check(self, options):
            return data
        rhythm = {key: data[key] for key in ("schedule", "time_zone", "locale") if data.get(key)}
        if self.kind == Campaign.Kind.LEAGUE:
            options = {
                "engine": self.option_fields.game,
                "game_options": options,
                "points": data.get("points"),
            }
        data["options"] = {**options, **rhythm}
        return data


class MemberForm(forms.Form):
    """A new member: their name and their email address, each in a field of its own (the
    address one a phone offers its @ keyboard for)."""

    name = forms.CharField(
        max_length=NAME_LENGTH,
        label="New member's name",
        widget=forms.TextInput(attrs={"autocomplete": "off", "placeholder": "Dee"}),
    )
    email = forms.CharField(
        max_length=EMAIL_LENGTH,
        label="Their email address",
        help_text="Their link to each game of the campaign is sent there.",
        widget=forms.EmailInput(attrs={"autocomplete": "off", "placeholder": "dee@example.org"}),
    )

    def clean(self) -> dict[str, Any] | None:
        data = super().clean()
        if data is not None and "name" in data and "email" in data:
            try:
                data["member"] = parse_member(data["name"], data["email"])
            except ValidationError as error:
                self.add_error(None, error)
        return data


def parse_member(name: str, email: str) -> Any:
    """The new member's name and address as a player; ValidationError says what is wrong
    (in the words ``parse_player`` uses, without its line number)."""
    if any(char in name for char in "<>"):
        raise ValidationError("the name must not hold < or >")
    try:
        return parse_player(f"{name.strip()} <{email.strip()}>", 1)
    except ValidationError as error:
        raise ValidationError(error.messages[0].removeprefix("line 1: ")) from None


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
                choices=seats,
                initial="1",
                label=f"{member.name} ({counted(member.dice, 'die', 'dice')})",
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
