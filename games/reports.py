"""What each seat is told, rendered through the one email builder (moderator.mail.outbox).

Every function returns unsaved ``OutboundEmail`` rows; the postal layer writes them in the
same transaction as the change they report.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from games import access
from games.engines import registry
from games.engines.base import Engine, Event
from games.models import Event as EventRow
from games.models import Game, Order, Seat, Step
from moderator.mail import outbox
from moderator.mail.models import OutboundEmail


def local_time(moment: datetime, time_zone: str) -> str:
    """``moment`` in ``time_zone`` and in UTC, e.g. 'Mon 23 Nov 2026 19:00 CET (18:00 UTC)'."""
    local = moment.astimezone(ZoneInfo(time_zone))
    utc = moment.astimezone(UTC)
    if local.utcoffset() == utc.utcoffset():
        return f"{utc:%a %d %b %Y %H:%M} UTC"
    return f"{local:%a %d %b %Y %H:%M} {local.tzname()} ({utc:%H:%M} UTC)"


def _context(game: Game, seat: Seat, token: str, **extra: Any) -> dict[str, Any]:
    return {
        "game": game,
        "seat": seat,
        "engine": registry.get(game.engine),
        "link": access.url(token),
        **extra,
    }


def _report(
    game: Game,
    seat: Seat,
    engine: Engine[Any, Any, Any],
    state: Any,
    events: list[str],
    step: Step | None,
    token: str,
    key: str | None = None,
) -> OutboundEmail:
    context = _context(game, seat, token, step=step, events=events)
    context["view"] = engine.view(state, seat.position)
    if step is None:
        context["standings"] = [
            {"name": game_seat_name(game, s.seat), "place": s.place, "score": s.score}
            for s in engine.standings(state) or []
        ]
        context["seed"] = bytes(game.seed or b"").hex()
        kind, dedupe = "final", f"final:{game.pk}:{seat.position}"
    else:
        context["owed"] = [p for p in step.prompts if p["seat"] == seat.position]
        context["deadline"] = local_time(step.deadline, seat.zone)
        kind, dedupe = "report", f"report:{game.pk}:{step.number}:{seat.position}"
    return outbox.build(kind, to=seat.email, dedupe_key=key or dedupe, context=context)


def game_seat_name(game: Game, position: int) -> str:
    view_names = getattr(game, "_seat_names", None)
    if view_names is None:
        view_names = dict(game.seats.values_list("position", "name"))
        game._seat_names = view_names  # type: ignore[attr-defined]
    return str(view_names[position])


def step_emails(
    game: Game,
    seats: list[Seat],
    engine: Engine[Any, Any, Any],
    state: Any,
    events: list[Event],
    step: Step | None,
    tokens: dict[int, str],
) -> list[OutboundEmail]:
    """One email per seat: the report of a newly opened step, or the game-over email."""
    game._seat_names = {seat.position: seat.name for seat in seats}  # type: ignore[attr-defined]
    return [
        _report(
            game,
            seat,
            engine,
            state,
            [event.text for event in events if event.visible_to(seat.position)],
            step,
            tokens[seat.position],
        )
        for seat in seats
    ]


def current_report_email(game: Game, seat: Seat, token: str, now: datetime) -> OutboundEmail:
    """The seat's latest report again (the GM's re-send), built from the record."""
    engine = registry.get(game.engine)
    state = engine.state_from_json(game.state)
    step = game.steps.filter(number=game.step_number).first()
    if game.status == Game.Status.FINISHED:
        source, step = step, None
    else:
        source = game.steps.filter(number=game.step_number - 1).first() or step
    rows = EventRow.objects.filter(step=source) if source else EventRow.objects.none()
    events = [row.text for row in rows if row.visible_to(seat.position)]
    key = f"resend:{game.pk}:{seat.position}:{now.timestamp():.0f}"
    return _report(game, seat, engine, state, events, step, token, key=key)


def invite_email(game: Game, seat: Seat, token: str, now: datetime) -> OutboundEmail:
    return outbox.build(
        "invite",
        to=seat.email,
        dedupe_key=f"invite:{game.pk}:{seat.position}:{now.timestamp():.0f}",
        context=_context(game, seat, token),
    )


def link_email(game: Game, seat: Seat, token: str) -> OutboundEmail:
    return outbox.build(
        "link",
        to=seat.email,
        dedupe_key=f"link:{game.pk}:{seat.position}:{seat.link_version}",
        context=_context(game, seat, token),
    )


def deadline_email(game: Game, seat: Seat, step: Step, token: str) -> OutboundEmail:
    deadline = local_time(step.deadline, seat.zone)
    return outbox.build(
        "deadline",
        to=seat.email,
        dedupe_key=f"deadline:{game.pk}:{step.number}:{seat.position}:{step.deadline:%s}",
        context=_context(game, seat, token, step=step, deadline=deadline),
    )


def receipt_email(game: Game, seat: Seat, order: Order, token: str) -> OutboundEmail:
    return outbox.build(
        "receipt",
        to=seat.email,
        dedupe_key=f"receipt:{order.pk}",
        context=_context(
            game,
            seat,
            token,
            order=order,
            step=order.step,
            deadline=local_time(order.step.deadline, seat.zone),
        ),
    )
