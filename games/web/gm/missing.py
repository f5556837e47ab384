"""What "Resolve now" costs the players who have not ordered, for the GM to confirm: what
plays for each (their autopilot or the game's NMR default, as ``postal.missed`` plays it),
the missed turn it counts, whether the seat falls into civil disorder, and what waiting
would have given them that resolving now does not (an automatic extension, an absence).
Read only: ``postal.resolve_now`` writes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from games.community import absences
from games.engines import registry
from games.engines.base import GameError
from games.models import AbsencePolicy, Game, Order, Seat, Step


@dataclass(frozen=True)
class Cost:
    """One seat that has not ordered, and what resolving now does to it, in words."""

    seat: Seat
    plays: str
    missed: str
    disorder: str
    waits: str


def _ordinal(number: int) -> str:
    if 10 <= number % 100 <= 20:
        return f"{number}th"
    return f"{number}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(number % 10, 'th') }"


def _plays(game: Game, engine: Any, state: Any, seat: Seat, away: bool) -> str:
    chosen = registry.strategy(game.engine, seat.autopilot) if seat.autopilot else None
    if chosen is None and away and game.absence_policy == AbsencePolicy.AUTOPILOT:
        offered = registry.strategies(game.engine)
        chosen = offered[0] if offered else None
    if chosen is not None:
        return f"their autopilot ({chosen.title}) plays for them"
    try:
        order = engine.default(state, seat.position)
        return (
            f"the NMR default is played for them: {engine.canonical(state, seat.position, order)}"
        )
    except GameError:
        return "the NMR default is played for them"


def _disorder(game: Game, seat: Seat) -> str:
    if seat.civil_disorder_at is not None:
        return "the seat is in civil disorder already"
    limit = game.civil_disorder_after
    if limit and seat.missed_in_row + 1 >= limit:
        return (
            f"the seat falls into civil disorder ({limit} missed turns in a row); you are "
            "told by email"
        )
    return ""


def _waits(game: Game, seat: Seat, away: absences.Away | None) -> str:
    """What the deadline would have given the seat that resolving now does not."""
    if away is not None and game.absence_policy == AbsencePolicy.EXTEND:
        return f"they are away until {away.last_day:%d %B}: resolving now does not wait for them"
    left = game.extensions - seat.extensions_used
    if game.extensions and left > 0 and seat.civil_disorder_at is None:
        spare = "1 automatic extension" if left == 1 else f"{left} automatic extensions"
        return f"they have {spare} left, which only a deadline spends: resolving now does not wait"
    return ""


def costs(game: Game, step: Step | None, now: datetime) -> list[Cost]:
    """The seats ``step`` (the open step) prompts that have sent no order, each with what
    resolving now costs them; [] when no step is open or everybody has ordered."""
    if step is None or game.state is None:
        return []
    answered = set(
        Order.objects.filter(step=step)
        .exclude(source=Order.Source.DEFAULT)
        .values_list("seat__position", flat=True)
    )
    prompted = [p for p in step.prompted_seats if p not in answered]
    seats = list(game.seats.filter(position__in=prompted).order_by("position"))
    if not seats:
        return []
    engine = registry.get(game.engine)
    state = engine.state_from_json(game.state)
    away = absences.away(seats, now=now)
    rows = []
    for seat in seats:
        gone = away.get(seat.pk)
        count = seat.nmr_count + 1
        in_row = seat.missed_in_row + 1
        missed = f"it is their {_ordinal(count)} missed turn ({in_row} in a row)"
        rows.append(
            Cost(
                seat,
                _plays(game, engine, state, seat, gone is not None),
                missed,
                _disorder(game, seat),
                _waits(game, seat, gone),
            )
        )
    return rows
