"""What the pages of every audience say and read the same way: a refused form's first
message, a refusal's sentence, and the ``?before=`` of a page that lists older steps or
messages. No view lives here, so the view modules share these without importing one
another."""

from __future__ import annotations

from django import forms
from django.http import HttpRequest
from django.utils.translation import gettext

from moderator.numbers import STEPS_MOST, whole_number

# The largest message number a ``?before=`` reads.
MESSAGES_MOST = 10**12 - 1


def first_error(form: forms.Form) -> str:
    """The first message of an invalid form, named by its field."""
    for field, errors in form.errors.items():
        if field == "__all__" or form.fields[field].widget.is_hidden:
            # A hidden field's message speaks for itself (``gm.forms.ShownStep``).
            return str(errors[0])
        return f"{form.fields[field].label or field}: {errors[0]}"
    return "the form is not valid"


def nothing_changed(message: object) -> str:
    """A refusal as a page says it: the message, and that nothing was changed."""
    return gettext("%(message)s Nothing was changed.") % {"message": message}


def refused(message: str) -> str:
    """A domain refusal ("the game ...") as a page says it: a sentence, and that nothing
    was changed."""
    return nothing_changed(f"{message[:1].upper()}{message[1:]}.")


def history_before(request: HttpRequest) -> int | None:
    """The step the page's history reads older steps before (``?before=N``), or None for
    the newest steps; anything that is not a step number shows the newest."""
    return whole_number(request.GET.get("before"), most=STEPS_MOST)


def messages_before(request: HttpRequest) -> int | None:
    """The message a page lists older ones before (``?before=N``); anything that is not a
    message's number shows the newest."""
    return whole_number(request.GET.get("before"), most=MESSAGES_MOST)
