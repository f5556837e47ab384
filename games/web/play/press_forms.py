"""The forms of messages between players (games.community.press): a seat's message and its choice of
email, the GM's announcement and hiding a message.
They turn what was typed into the arguments of one ``games.community.press`` function and say,
next to the field, what is wrong. The game's private-message setting is a GM form
(``games.web.gm.forms.PrivatePressForm``)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from games.community import press
from games.models import GM_REASON_LENGTH, MESSAGE_LENGTH, Game, PressEmail, Seat

# The value of "To" that writes to every seat; a seat is chosen by its position.
EVERYONE = "all"
# Where the sender goes back to: the seat's page, or its messages page.
BACK = (("seat", "seat"), ("messages", "messages"))


class MessageText(forms.CharField):
    """A message's text, as ``press.clean_text`` keeps it."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            required=False,
            strip=False,
            widget=forms.Textarea(attrs={"rows": 4, "maxlength": MESSAGE_LENGTH}),
            **kwargs,
        )

    def clean(self, value: Any) -> str:
        try:
            return press.clean_text(str(value or ""))
        except press.PressError as error:
            raise ValidationError(error.message) from None


class MessageForm(forms.Form):
    """A seat's message: to everyone, or (when the game allows it) to one other seat."""

    # "To" of an absence's days is another word in German (Bis): this one is An.
    to = forms.ChoiceField(label=pgettext_lazy("recipient", "To"))
    text = MessageText(label=_("Message"))
    back = forms.ChoiceField(choices=BACK, required=False, widget=forms.HiddenInput)
    most = MESSAGE_LENGTH

    def __init__(
        self, *args: Any, others: list[tuple[int, str]], private: bool, **kwargs: Any
    ) -> None:
        """``others``: (position, name) of every other seat of the game. Its fields' ids
        begin with ``press_``: the seat's page has an order form's text box too."""
        kwargs.setdefault("auto_id", "press_%s")
        super().__init__(*args, **kwargs)
        choices: list[tuple[str, str]] = [(EVERYONE, str(_("Everyone")))]
        if private:
            choices += [(str(position), name) for position, name in others]
        to = self.fields["to"]
        assert isinstance(to, forms.ChoiceField)
        to.choices = choices
        to.initial = EVERYONE
        self.private = private

    def recipient(self) -> int | None:
        """The position written to (None: every seat), once the form is valid."""
        to: str = self.cleaned_data["to"]
        return None if to == EVERYONE else int(to)


def message_form(
    game: Game, seat: Seat, seats: list[tuple[int, int, str]], **kwargs: Any
) -> MessageForm:
    """The message form of ``seat``; ``seats``: (id, position, name) of every seat of the
    game."""
    others = [(position, name) for seat_id, position, name in seats if seat_id != seat.pk]
    return MessageForm(others=others, private=game.private_press, **kwargs)


class PressEmailForm(forms.Form):
    """How the seat is emailed its game's messages."""

    press_email = forms.ChoiceField(
        choices=PressEmail.choices,
        widget=forms.RadioSelect,
        label=_("Email me the other players' messages"),
    )


class AnnounceForm(forms.Form):
    """The GM's announcement to every seat."""

    text = MessageText(label=_("Announcement to every player"))


class HideForm(forms.Form):
    """The GM hides a message, with a reason the players see."""

    reason = forms.CharField(
        required=False,
        max_length=GM_REASON_LENGTH,
        label=_("Reason (players see it)"),
    )
