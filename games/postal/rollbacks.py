"""The GM undoes the last resolution (``rollback``): the step open again with its orders,
its dice kept for the record and marked rolled back."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Concat, Greatest
from django.utils.text import format_lazy
from django.utils.translation import gettext, gettext_lazy

from games.engines import text as engine_text
from games.engines.base import Event
from games.lib import schedule, words
from games.models import Game, GMAction, Order, Seat, Step, WebhookDelivery
from games.notify import reports
from games.postal import access
from games.postal.errors import PostalError, StepMovedOnForGM
from games.postal.gm_log import GMNote, gm_reason, log_gm
from games.postal.locks import locked
from games.postal.steps import event_row, name_seats
from moderator.mail import queueing
from moderator.mail.models import OutboundEmail


def rollback(
    game_id: int,
    *,
    reason: str,
    now: datetime,
    by: int | None = None,
    shown_step: int | None = None,
) -> Step:
    """The GM undoes the resolution of the last resolved step N (a wrong postal order):
    the game is back in the state the resolution started from, the step open again with a
    new deadline and the players' orders standing; the defaults and autopilots' orders of
    the resolution, its events and its missed turns are gone. Its dice stay, marked
    ``rolled_back``, and the next resolution draws the next ones, so every die is still
    verified; the step keeps the range it skips for the record (docs/records.md).

    Only while step N+1 is open and has no order, in a running or paused game, for a step
    resolved by its deadline, early or by the GM (not one closed by an order that took
    effect at once). Every seat is emailed why; logged with the GM's ``reason``
    (required). PostalError, and nothing changed, otherwise. ``shown_step``: the step the
    GM's page offered to roll back; StepMovedOnForGM, and nothing changed, unless it is
    still the latest resolved one (a double click would otherwise roll back the step
    before it too)."""
    note = GMNote(gm_reason(reason), by)
    if not note.reason:
        raise PostalError("give the players a reason for rolling the step back")
    with transaction.atomic():
        game = locked(game_id)
        _check_rollback_shown(game, shown_step)
        done, after = _rollable(game)
        _roll_back(game, done, after, note, now)
    return done


def rollback_offered(game: Game) -> int | None:
    """The number of the step the GM may roll back now (``rollback``), or None (two
    queries; nothing locked: ``rollback`` checks again)."""
    try:
        return _rollable(game)[0].number
    except PostalError:
        return None


def _check_rollback_shown(game: Game, shown: int | None) -> None:
    """StepMovedOnForGM unless ``shown``, the step the GM's page offered to roll back, is
    still the latest resolved step of ``game`` (whose row the caller holds locked)."""
    if shown is None or game.step_number == shown + 1:
        return
    values = {"shown": shown, "current": game.step_number}
    if game.step_number == shown:
        message = gettext(
            "nothing was done: step %(shown)d was already rolled back; it is open again"
        )
    elif game.status == Game.Status.FINISHED:
        message = gettext(
            "nothing was done: step %(shown)d is no longer the latest resolved step, and the "
            "game is over"
        )
    else:
        message = gettext(
            "nothing was done: step %(shown)d is no longer the latest resolved step; step "
            "%(current)d is open"
        )
    raise StepMovedOnForGM(message % values)


def _rollable(game: Game) -> tuple[Step, Step]:
    """The last resolved step of ``game`` and the open one after it, when ``rollback``
    may undo the first; PostalError saying why not otherwise."""
    if game.status not in (Game.Status.RUNNING, Game.Status.PAUSED):
        raise PostalError(
            f"only a running or paused game can be rolled back; this one is {game.status}"
        )
    # Not game.steps: a caller's game may hold a prefetch of its open step only.
    numbers = (game.step_number - 1, game.step_number)
    steps = list(Step.objects.filter(game=game, number__in=numbers).order_by("number"))
    if len(steps) != 2 or steps[0].status != Step.Status.DONE:
        raise PostalError("the game has no resolved step to roll back")
    done, after = steps
    if after.status != Step.Status.OPEN:
        raise PostalError("the game has no open step")
    if done.number <= game.paper_steps:
        raise PostalError(
            f"step {done.number} was played on paper and entered from its record: it cannot "
            "be rolled back"
        )
    if done.resolved_from is None:
        raise PostalError(
            f"step {done.number} was closed by an order that took effect at once (or "
            "before rollbacks existed), not resolved: it cannot be rolled back"
        )
    if after.orders.exists() or after.dice_rolls.exists():
        raise PostalError(
            f"step {after.number} already has orders: a step can be rolled back only "
            "until the next one gets its first order"
        )
    return done, after


def _roll_back(game: Game, done: Step, after: Step, note: GMNote, now: datetime) -> None:
    """``rollback``'s writes, the checks passed and the game locked."""
    start = done.resolved_from or {}
    first = start["die"]
    game.dice_rolls.filter(index__gte=first).update(rolled_back=True)
    played = done.orders.filter(source__in=(Order.Source.DEFAULT, Order.Source.AUTOPILOT))
    missed = list(played.values_list("seat_id", flat=True))
    if missed:
        # The resolution's missed turns, and the civil disorder they brought, are undone.
        # A seat taken over since (replace_player) has its new player's counters, started
        # at 0 after the resolution: the missed turn was the previous holder's, and stays
        # off the new player's record (0 - 1 broke the counters' CHECK constraint).
        Seat.objects.filter(pk__in=missed).update(
            nmr_count=Greatest(F("nmr_count") - 1, 0),
            missed_in_row=Greatest(F("missed_in_row") - 1, 0),
        )
        Seat.objects.filter(pk__in=missed, civil_disorder_at=done.closed_at).update(
            civil_disorder_at=None
        )
        played.delete()
    if start.get("event") is not None:
        done.events.filter(pk__gte=start["event"]).delete()
    # The reports and webhook deliveries of the step that goes keep their rows under a
    # key of their own, so that those of the step that opens in its place are written.
    rolled = f":rolled-back-{len(done.rollbacks or []) + 1}"
    for model, key in (
        (OutboundEmail, f"report:{game.pk}:{after.number}:"),
        (WebhookDelivery, f"step.opened:{game.pk}:{after.number}:"),
    ):
        model.objects.filter(game=game, dedupe_key__startswith=key).update(
            dedupe_key=Concat(F("dedupe_key"), Value(rolled))
        )
    after.delete()
    done.status = Step.Status.OPEN
    done.state_after = None
    done.closed_at = None
    done.closed_by = ""
    done.resolved_from = None
    done.rollbacks = [*(done.rollbacks or []), {"first": first, "count": game.dice_drawn - first}]
    done.deadline = schedule.next_deadline(game.schedule, game.time_zone, now)
    done.remind_at = None  # its reminders come again for the new deadline
    done.failures = 0
    done.last_error = ""
    game.state = start["state"]
    game.step_number = done.number
    # A seat handed to a new player since keeps its new name in the state restored.
    name_seats(game, done)
    game.save(update_fields=["state", "step_number"])
    step_name = words.step_words(game.rules.step_word, done.number)
    rolled_back = engine_text._(
        "The GM rolled back %(step)s: %(reason)s", step=step_name, reason=note.reason
    )
    event_row(game, done, Event(rolled_back)).save()
    # Logged with the step's number, which the step's report reads (gm_acted).
    rolled_back = engine_text._("The GM rolled back %(step)s", step=step_name)
    log_gm(game, GMAction.Kind.ROLLBACK, rolled_back, note, now)
    done.gm_acted = True
    done.save()
    seats = list(game.seats.order_by("position"))
    tokens = access.mint(seats, now=now)
    # Said to each seat in its language (reports.deadline_email).
    why = format_lazy(
        gettext_lazy("the GM rolled back its resolution ({reason}); its orders are open again"),
        reason=note.reason,
    )
    queueing.queue(
        [
            reports.deadline_email(game, seat, done, tokens[seat.position], reason=why)
            for seat in seats
        ]
    )
