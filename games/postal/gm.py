"""The GM's actions on the clock and on the step open now: move its deadline, pause and
resume the game, set the actual order of a First Player round, send a seat its report
again, and let a failing step be tried again (``resolving.resolve_now`` resolves it
early). What changes the game is logged for the players with the GM's reason
(``gm_log``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils.translation import gettext

from games.engines import registry
from games.engines import text as engine_text
from games.engines.base import Engine, GameError
from games.lib import schedule
from games.models import Game, GMAction, Step
from games.notify import reports
from games.postal import access
from games.postal.errors import PostalError
from games.postal.gm_log import GMNote, check_shown_step, gm_reason, log_gm
from games.postal.locks import locked, open_step_of, seat_at
from games.postal.steps import advance, close_step, game_dice, record, tell_deadline
from moderator.mail import queueing


def extend_deadline(
    game_id: int,
    *,
    deadline: datetime,
    now: datetime,
    reason: str = "",
    by: int | None = None,
    shown_step: int | None = None,
) -> Step:
    """Move the open step's deadline to ``deadline`` (later than now); logged for the
    players with the GM's ``reason``. ``shown_step``: the step the GM's page showed
    (``check_shown_step``). A deadline the step already has (to the minute, as the GM's
    form writes it: a double click) is refused: nothing is logged, and nobody emailed."""
    note = GMNote(gm_reason(reason), by)
    with transaction.atomic():
        game = locked(game_id)
        check_shown_step(game, shown_step)
        step = open_step_of(game)
        if deadline <= now:
            raise PostalError("the new deadline must be in the future")
        if _to_the_minute(deadline) == _to_the_minute(step.deadline):
            raise PostalError(
                gettext("nothing was done: the deadline of step %(number)d is already %(when)s")
                % {
                    "number": step.number,
                    "when": schedule.local_time(step.deadline, game.time_zone),
                }
            )
        step.deadline = deadline
        step.remind_at = None  # its reminders come again for the new deadline
        # ``at``: the instant itself, so that each reader is told it in their own zone
        # (``schedule.in_zone``).
        moved = engine_text._(
            "The GM moved the deadline to %(when)s",
            when=schedule.moment_words(deadline, game.time_zone),
            at=deadline.isoformat(),
        )
        log_gm(game, GMAction.Kind.DEADLINE, moved, note, now, step)
        step.save(update_fields=["deadline", "remind_at"])
        tell_deadline(game, step, now)
    return step


def allow_bots(game_id: int, *, allowed: bool, by: int | None, now: datetime) -> Game:
    """The GM allows programs to play the game's seats, or forbids them; in a game that has
    started, the GM's log says so. A bot's seat already marked stays marked."""
    with transaction.atomic():
        game = locked(game_id)
        if game.bots_allowed == allowed:
            return game
        game.bots_allowed = allowed
        game.save(update_fields=["bots_allowed"])
        if game.started_at is not None:
            words = (
                engine_text._("The GM allowed bots to play")
                if allowed
                else engine_text._("The GM no longer allows bots to play")
            )
            log_gm(game, GMAction.Kind.BOTS, words, GMNote("", by), now)
    return game


def _to_the_minute(moment: datetime) -> datetime:
    return moment.replace(second=0, microsecond=0)


def pause(game_id: int, *, now: datetime, reason: str = "", by: int | None = None) -> None:
    """Stop the clock: no step resolves and no order is taken until the GM resumes; logged
    for the players with the GM's ``reason``."""
    note = GMNote(gm_reason(reason), by)
    with transaction.atomic():
        game = locked(game_id)
        if game.status != Game.Status.RUNNING:
            raise PostalError(f"only a running game can be paused; this one is {game.status}")
        game.status = Game.Status.PAUSED
        game.paused_at = now
        game.save(update_fields=["status", "paused_at"])
        log_gm(game, GMAction.Kind.PAUSE, engine_text._("The GM paused the game"), note, now)


def resume(game_id: int, *, now: datetime, reason: str = "", by: int | None = None) -> None:
    """Restart the clock; the open step's deadline moves on by the time spent paused;
    logged for the players with the GM's ``reason``."""
    note = GMNote(gm_reason(reason), by)
    with transaction.atomic():
        game = locked(game_id)
        if game.status != Game.Status.PAUSED:
            raise PostalError(f"only a paused game can be resumed; this one is {game.status}")
        paused_for = now - (game.paused_at or now)
        Step.objects.filter(game=game, status=Step.Status.OPEN).update(
            deadline=F("deadline") + paused_for, remind_at=None
        )
        game.status = Game.Status.RUNNING
        game.paused_at = None
        game.needs_gm = ""
        game.save(update_fields=["status", "paused_at", "needs_gm"])
        log_gm(game, GMAction.Kind.RESUME, engine_text._("The GM resumed the game"), note, now)


def resend_report(game_id: int, *, position: int, now: datetime) -> None:
    """Send the seat its current report again, with a fresh link."""
    with transaction.atomic():
        game = locked(game_id)
        seat = seat_at(game, position)
        if game.state is None:
            raise PostalError("the game has not started; there is no report yet")
        token = access.mint([seat], now=now)[position]
        queueing.queue([reports.current_report_email(game, seat, token, now)], urgent=True)


def _capability(game: Game, name: str, without: str) -> tuple[Engine[Any, Any, Any], Any]:
    """The game's engine and its optional method ``name``; PostalError if it has none."""
    engine = registry.get(game.engine)
    method = getattr(engine, name, None)
    if method is None:
        raise PostalError(f"{engine.title} {without}")
    return engine, method


def set_order(
    game_id: int,
    *,
    names: Sequence[str],
    now: datetime,
    reason: str = "",
    by: int | None = None,
    shown_step: int | None = None,
) -> Game:
    """The host enters the actual order of a First Player round (rules F-16) while its gift
    window or rolling is open, because the real game has its own first-player rule; the
    round's transfers still apply and the game moves on as after a reveal. Logged for the
    players with the GM's ``reason``. ``shown_step``: the step the GM's page showed
    (``check_shown_step``)."""
    note = GMNote(gm_reason(reason), by)
    with transaction.atomic():
        game = locked(game_id)
        check_shown_step(game, shown_step)
        engine, host_order = _capability(game, "host_order", "has no order for the host to set")
        if game.status != Game.Status.RUNNING:
            raise PostalError(
                f"the game is {game.status}; the host sets the order of a running game"
            )
        step = open_step_of(game)
        seats = list(game.seats.order_by("position"))
        by_name = {seat.name.lower(): seat.position for seat in seats}
        try:
            order = [by_name[name.strip().lower()] for name in names]
        except KeyError as missing:
            raise PostalError(f"{missing.args[0]!r} is not a player of this game") from None
        try:
            state, events = host_order(engine.state_from_json(game.state), order)
        except GameError as error:
            raise PostalError(error.message) from None
        record(game, step, game_dice(game), events)
        named = engine_text._(
            "The GM set the actual order: %(names)s",
            names=", ".join(seats[position].name for position in order),
        )
        log_gm(game, GMAction.Kind.HOST_ORDER, named, note, now, step)
        # Kept for the record, which replays it (archive.export, docs/records.md).
        step.host_order = order
        step.save(update_fields=["host_order"])
        closed = close_step(step, state, engine, now, Step.Closed.GM)
        advance(game, seats, engine, state, events, now, state_json=closed, closed=step)
        game.save()
    return game


def clear_needs_gm(game_id: int) -> None:
    """The GM has looked at a failing step: let the sweep try it again."""
    with transaction.atomic():
        game = locked(game_id)
        Step.objects.filter(game=game, status=Step.Status.OPEN).update(failures=0)
        game.needs_gm = ""
        game.save(update_fields=["needs_gm"])
