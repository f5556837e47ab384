"""What each seat is told, rendered through the one email builder (moderator.mail.outbox)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from games.engines.base import Engine, Event
from games.models import Game, Seat, Step
from moderator.mail import outbox
from moderator.mail.models import OutboundEmail


def local_time(moment: datetime, time_zone: str) -> str:
    """``moment`` in ``time_zone`` and in UTC, e.g. 'Mon 23 Nov 2026 19:00 CET (18:00 UTC)'."""
    local = moment.astimezone(ZoneInfo(time_zone))
    utc = moment.astimezone(UTC)
    if local.utcoffset() == utc.utcoffset():
        return f"{utc:%a %d %b %Y %H:%M} UTC"
    return f"{local:%a %d %b %Y %H:%M} {local.tzname()} ({utc:%H:%M} UTC)"


def step_emails(
    game: Game,
    seats: list[Seat],
    engine: Engine[Any, Any, Any],
    state: Any,
    events: list[Event],
    step: Step | None,
) -> list[OutboundEmail]:
    """One email per seat: the report of a newly opened step, or the game-over email."""
    standings = engine.standings(state)
    names = {seat.position: seat.name for seat in seats}
    rows = []
    for seat in seats:
        context: dict[str, Any] = {
            "game": game,
            "seat": seat,
            "step": step,
            "events": [event.text for event in events if event.visible_to(seat.position)],
            "view": engine.view(state, seat.position),
            "engine": engine,
        }
        if step is None:
            context["standings"] = [
                {"name": names[s.seat], "place": s.place, "score": s.score} for s in standings or []
            ]
            context["seed"] = bytes(game.seed or b"").hex()
            kind, key = "final", f"final:{game.pk}:{seat.position}"
        else:
            context["owed"] = [p for p in step.prompts if p["seat"] == seat.position]
            context["deadline"] = local_time(step.deadline, seat.zone)
            kind, key = "report", f"report:{game.pk}:{step.number}:{seat.position}"
        rows.append(outbox.build(kind, to=seat.email, dedupe_key=key, context=context))
    return rows
