"""The GM's log (``GMAction``): each GM action written for the players, with the GM's
reason, in the transaction of the action; and the check that an action from the GM's page
is for the step open now (``check_shown_step``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.utils.translation import gettext

from games.lib import words
from games.models import GM_REASON_LENGTH, Game, GMAction, Step
from games.postal.errors import PostalError, StepMovedOnForGM


@dataclass(frozen=True)
class GMNote:
    """What a GM action's log entry takes from its caller: the GM's reason, checked, and
    the id of the user who acted (None: the game's GM)."""

    reason: str
    by: int | None


def gm_reason(reason: str) -> str:
    """The GM's reason for an action, stripped; PostalError unless it is one line of at
    most GM_REASON_LENGTH characters without control characters."""
    reason = reason.strip()
    if any(ord(char) < 32 or char in "\x7f\x85\u2028\u2029" for char in reason):
        raise PostalError("the reason must be a single line without control characters")
    if len(reason) > GM_REASON_LENGTH:
        raise PostalError(f"the reason has at most {GM_REASON_LENGTH} characters")
    return reason


def log_gm(
    game: Game,
    kind: str,
    text: str,
    note: GMNote,
    now: datetime,
    step: Step | None = None,
) -> None:
    """Log a GM action for the players, in the caller's transaction, and mark the open step
    (``step``, when the caller holds it) as one the GM acted in. ``text``: the English, made
    with ``games.engines.text`` so each player reads it in their language."""
    GMAction.objects.create(
        game=game,
        step_number=game.step_number,
        kind=kind,
        words=str(text),
        message=words.message(text),
        reason=note.reason,
        at=now,
        gm_id=note.by if note.by is not None else game.gm_id,
    )
    if step is not None:
        step.gm_acted = True
        step.save(update_fields=["gm_acted"])
    else:
        Step.objects.filter(game=game, number=game.step_number, status=Step.Status.OPEN).update(
            gm_acted=True
        )


def log_gm_action(
    game: Game, kind: str, text: str, *, reason: str, by: int | None, now: datetime
) -> str:
    """Log a GM action taken outside postal (games.community.press hides a message) in the
    caller's transaction, which holds the game's lock; PostalError, and nothing logged,
    unless ``reason`` is a reason a GM may give. Returns the reason as logged."""
    note = GMNote(gm_reason(reason), by)
    log_gm(game, kind, text, note, now)
    return note.reason


def check_shown_step(game: Game, shown: int | None, *, until_the_end: bool = True) -> None:
    """StepMovedOnForGM unless ``game``'s current step is ``shown``, the step the GM's page
    showed when the GM acted. Called with the game's row locked, in the transaction of the
    action, so no other resolution or rollback can slip in between. None: the caller names
    no step (code, not a person clicking), and nothing is checked. ``until_the_end``: the
    action is on the step itself, which the game's last resolution closed, so a finished
    game has moved on from it too (its last step keeps its number)."""
    if shown is None:
        return
    ended = until_the_end and game.status == Game.Status.FINISHED
    if game.step_number == shown and not ended:
        return
    values = {"shown": shown, "current": game.step_number}
    if game.step_number >= shown and game.status == Game.Status.FINISHED:
        message = gettext(
            "nothing was done: step %(shown)d was already resolved, and the game is over"
        )
    elif game.step_number > shown:
        message = gettext(
            "nothing was done: step %(shown)d was already resolved; step %(current)d is open"
        )
    else:
        message = gettext(
            "nothing was done: step %(shown)d is no longer open: step %(current)d was rolled "
            "back and is open again"
        )
    raise StepMovedOnForGM(message % values)
