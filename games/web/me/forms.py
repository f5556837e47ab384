"""The forms of a player's own pages (games.web.me.views): signing in by email, typing the
code, and their settings."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.utils.translation import gettext, gettext_lazy

from games.community import players
from games.lib import schedule
from games.models import Player
from games.notify import email_choices, reminders
from moderator import bidi

EMAIL_ERRORS = {
    "required": gettext_lazy("Write your email address."),
    "invalid": gettext_lazy("That is not an email address: write it as name@example.org."),
}


class SignInForm(forms.Form):
    """The address to email a sign-in link and code to."""

    email = forms.EmailField(
        label=gettext_lazy("Email to sign in with"), max_length=254, error_messages=EMAIL_ERRORS
    )


class CodeForm(forms.Form):
    """The code of a sign-in email, typed with its address."""

    email = forms.EmailField(
        label=gettext_lazy("Your email"), max_length=254, error_messages=EMAIL_ERRORS
    )
    code = forms.CharField(
        label=gettext_lazy("The 6-digit code"),
        max_length=20,
        error_messages={"required": gettext_lazy("Type the 6-digit code of the email.")},
    )

    def clean_code(self) -> str:
        code = players.clean_code(self.cleaned_data["code"])
        if not code:
            raise forms.ValidationError(
                gettext("The code is 6 digits, as the email writes it: type them, spaces or not.")
            )
        return code


# The time zones a player may choose: "" leaves each game's own.
NO_ZONE = ""


class SettingsForm(forms.Form):
    """A player's name, time zone and the email choices of their address. Reports and
    reminders apply only when changed (``changed``): saving the name must not push the
    address's reports choice over a seat's own."""

    name = forms.CharField(
        label=gettext_lazy("Your name"),
        max_length=Player._meta.get_field("name").max_length,
        required=False,
        help_text=gettext_lazy(
            "Filled in when you sign up for a game. Your seats keep the names your GMs gave them."
        ),
    )
    time_zone = forms.ChoiceField(
        label=gettext_lazy("Your time zone"),
        required=False,
        help_text=gettext_lazy(
            "Deadlines are written in it: on your pages, in your reports and reminders, in all "
            "your games not over."
        ),
        error_messages={
            "invalid_choice": gettext_lazy("Choose a time zone of the list, such as Europe/Berlin.")
        },
    )
    language = forms.ChoiceField(
        label=gettext_lazy("My language"),
        required=False,
        widget=forms.RadioSelect,
        help_text=gettext_lazy(
            "Of these pages, and of the pages and emails of all your seats in games not over: "
            "a seat's page can still choose its own."
        ),
        error_messages={"invalid_choice": gettext_lazy("Choose one of the languages of the list.")},
    )
    reports = forms.ChoiceField(
        label=gettext_lazy("Email me the reports of all my games"),
        choices=email_choices.offered(email_choices.ACROSS_GAMES),
        widget=forms.RadioSelect,
        required=False,
        error_messages={
            "invalid_choice": gettext_lazy("Choose one of the ways to get your reports by email.")
        },
    )
    digest = forms.ChoiceField(
        label=gettext_lazy("Reminders before my deadlines"),
        choices=[
            (reminders.EACH, gettext_lazy("one email per game, before each deadline")),
            (reminders.DIGEST, gettext_lazy("one daily digest for all my games")),
            (reminders.NONE, gettext_lazy("none: deadlines pass without a reminder")),
        ],
        widget=forms.RadioSelect,
        error_messages={
            "required": gettext_lazy("Choose how reminders come."),
            "invalid_choice": gettext_lazy("Choose one of the ways reminders come."),
        },
    )
    hour = forms.TypedChoiceField(
        label=gettext_lazy("Digest at"),
        choices=[(str(hour), f"{hour:02d}:00") for hour in range(24)],
        coerce=int,
        error_messages={
            "invalid_choice": gettext_lazy("Choose an hour of the list for the digest.")
        },
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        zones = self.fields["time_zone"]
        assert isinstance(zones, forms.ChoiceField)
        zones.choices = [(NO_ZONE, gettext("each game's own (its GM's)"))] + [
            (name, name) for name in schedule.zone_names()
        ]
        spoken = self.fields["language"]
        assert isinstance(spoken, forms.ChoiceField)
        spoken.choices = [("", gettext("each game's own")), *settings.LANGUAGES]

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"]
        if (refused := bidi.refusal(name, gettext("the name"))) is not None:
            raise forms.ValidationError(refused)
        return name

    def chosen(self) -> players.Chosen:
        """What to save: reports and reminders only if changed here."""
        data = self.cleaned_data
        changed = set(self.changed_data)
        reports = data["reports"] if "reports" in changed else ""
        way = data["digest"] if changed & {"digest", "hour"} else ""
        return players.Chosen(
            name=data["name"].strip(),
            time_zone=data["time_zone"],
            language=data["language"],
            reports=reports,
            reminders=way,
            hour=data["hour"] if way else None,
        )
