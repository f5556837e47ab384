"""What postal raises when a request cannot be carried out: the message is for the person
who made it, and nothing was written (but the first lines of an order that took effect at
once: ``OrderRejected.partly_played``)."""

from __future__ import annotations

from django.utils.translation import gettext


class PostalError(Exception):
    """A request that cannot be carried out; the message is for the person who made it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class RecordRefused(PostalError):
    """A paper record that does not replay (``import_game``); ``source``: the move that
    failed as the GM wrote it, when known."""

    def __init__(self, message: str, source: str = "") -> None:
        super().__init__(message)
        self.source = source


class OrderRejected(PostalError):
    """An order not taken. ``partly_played``: its first lines took effect at once (dice
    were drawn) and stand; only the refused line and those after it were not taken."""

    partly_played = False


class StepMovedOn(OrderRejected):
    """An order written for a step that was resolved while the player's page was open, and
    not taken for the step open now. ``happened`` says what moved the game on, in the
    player's words; ``kept`` whether the order should be offered again (it may still fit:
    the player decides); ``reason`` why it was not taken (or "" when no order is owed
    now)."""

    def __init__(self, happened: str, reason: str, *, kept: bool) -> None:
        said = {"happened": happened, "reason": reason}
        super().__init__(
            gettext("too late: %(happened)s; %(reason)s") % said
            if reason
            else gettext("too late: %(happened)s") % said
        )
        self.happened, self.reason, self.kept = happened, reason, kept


class SeatNotFound(PostalError):
    pass


class NotAdmitted(PostalError):
    """An order its caller's ``admit`` turned away once the seat was known (the web's rate
    limit): nothing was written."""


class StepMovedOnForGM(PostalError):
    """A GM action for a step that is no longer the current one (a double click, two GMs at
    once, an old page): nothing was done. The message says what happened in the GM's
    words."""
