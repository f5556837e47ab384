"""A game's options as form fields, derived from its settings (``registry.settings``): the
GM picks a game and a profile by name and fills in labelled fields with their defaults; the
form turns them back into the options data the engine reads. The engine's ``options()``
stays the judge; its message lands on the field it names."""

from __future__ import annotations

import contextlib
import re
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from games.engines import registry
from games.engines.base import JSON, Option, OptionsError, Settings

PREFIX = "option_"
_NAMED = re.compile(r"option (?P<key>[a-z_]+)\b ?(?P<rest>.*)", re.DOTALL)
_NAME_COUNT = re.compile(r"(?P<name>.+?)\s+(?P<count>-?\d+)")


def _initial(option: Option, value: JSON) -> Any:
    """The form's initial value for ``value`` as the engine's options hold it."""
    if option.kind in ("choice",):
        return str(value)
    if option.kind == "multi":
        return [str(item) for item in value]
    if option.kind == "name":
        return value or ""
    if option.kind == "names":
        return ", ".join(value)
    if option.kind == "name_counts":
        return "\n".join(f"{name} {count}" for name, count in value)
    return value


def _field(option: Option, initial: Any) -> forms.Field:
    common: dict[str, Any] = {"label": option.label, "help_text": option.help, "initial": initial}
    if option.kind == "int":
        return forms.IntegerField(min_value=option.low, max_value=option.high, **common)
    if option.kind == "choice":
        return forms.ChoiceField(choices=[(str(v), words) for v, words in option.choices], **common)
    if option.kind == "flag":
        return forms.BooleanField(required=False, **common)
    if option.kind == "multi":
        return forms.MultipleChoiceField(
            choices=[(str(v), words) for v, words in option.choices],
            widget=forms.CheckboxSelectMultiple,
            required=False,
            **common,
        )
    if option.kind == "name_counts":
        return forms.CharField(
            widget=forms.Textarea(attrs={"rows": 3}), required=False, max_length=2000, **common
        )
    return forms.CharField(required=False, max_length=600, **common)


def _value(option: Option, cleaned: Any) -> JSON:
    """The options data for what the field cleaned to."""
    if option.kind == "choice":
        return next(value for value, _ in option.choices if str(value) == cleaned)
    if option.kind == "multi":
        return [value for value, _ in option.choices if str(value) in cleaned]
    if option.kind == "name":
        return cleaned.strip() or None
    if option.kind == "names":
        return [name.strip() for name in cleaned.split(",") if name.strip()]
    if option.kind == "name_counts":
        return _name_counts(cleaned)
    return cleaned


def _name_counts(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        match = _NAME_COUNT.fullmatch(line.strip())
        if match is None:
            raise ValidationError(f"line {number}: write a name and a number, e.g. “Ann 4”")
        counts[match["name"]] = int(match["count"])
    return counts


class OptionsFields:
    """The option fields of one game and profile, added to a form by ``add_to``."""

    def __init__(self, game: str, profile: str, only: tuple[str, ...] | None = None) -> None:
        """``only``: the keys of the options to offer (a campaign sets the rest per night)."""
        self.game = game
        self.settings: Settings = registry.settings(game)
        self.profile = self.settings.profile(profile)
        self.options = tuple(
            o for o in self.settings.options_of(profile) if only is None or o.key in only
        )

    def defaults(self) -> Any:
        """The engine's options for this profile with nothing else chosen."""
        return registry.get(self.game).options(self._profile_data())

    def _profile_data(self) -> dict[str, JSON]:
        if not self.settings.profile_key:
            return {}
        return {self.settings.profile_key: self.profile.key}

    def add_to(self, form: forms.Form, chosen: dict[str, JSON] | None = None) -> None:
        """Add a field per option, with the defaults or the values of ``chosen`` (the options
        data of a game played before)."""
        defaults = self.defaults()
        if chosen:
            # A template saved before an option changed keeps the defaults.
            with contextlib.suppress(OptionsError):
                defaults = registry.get(self.game).options({**chosen, **self._profile_data()})
        for option in self.options:
            form.fields[PREFIX + option.key] = _field(
                option, _initial(option, getattr(defaults, option.key))
            )

    def bound(self, form: forms.Form) -> list[forms.BoundField]:
        return [form[PREFIX + option.key] for option in self.options]

    def data(self, form: forms.Form) -> dict[str, JSON] | None:
        """The options data of the form's cleaned fields, or None when a field failed (its
        error is on the field)."""
        data = self._profile_data()
        for option in self.options:
            name = PREFIX + option.key
            if name not in form.cleaned_data:
                return None
            try:
                data[option.key] = _value(option, form.cleaned_data[name])
            except ValidationError as error:
                form.add_error(name, error)
                return None
        return data

    def in_words(self, message: str) -> str:
        """An engine's message with option keys written as the form's labels."""
        for option in self.settings.options:
            message = re.sub(rf"\b{option.key}\b", f"“{option.label}”", message)
        return message

    def check(self, form: forms.Form, data: dict[str, JSON]) -> bool:
        """Ask the engine; its message goes on the field it names, in the form's words."""
        try:
            registry.get(self.game).options(data)
        except OptionsError as error:
            match = _NAMED.fullmatch(error.message)
            message = self.in_words(error.message.removeprefix("option "))
            if match and PREFIX + match["key"] in form.fields:
                form.add_error(PREFIX + match["key"], message)
            else:
                form.add_error(None, message)
            return False
        return True
