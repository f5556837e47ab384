"""A player's record: how reliably they play and where they finished, read from the postal
record of every seat of their address (``games.community.players``). Read only, and a fixed number
of queries whatever the number of games: the seats with their games and turn counts in
one, the seats they left to others in a second, the final states of their finished games
in a third (only when there are any).

What counts (docs/players.md, "Reliability"):

- played: seats in games that started;
- finished: seats in finished games still the player's at the end (not ``REPLACED``);
- running: seats in running or paused games still the player's (counted, never shown);
- abandoned: seats ``REPLACED``, fallen into civil disorder, or left to another player
  (a ``Handover``: the GM replaced the player);
- turns owed: the done steps in which the seat has an order, its own or one played for
  it; turns missed: those whose order was played for it (``DEFAULT``, ``AUTOPILOT``);
  a seat that changed hands counts for each player the orders of the time they held it.

Why orders and not the steps' prompts: every seat a step prompted has an order once the
step is done (postal's resolution writes a default for each prompted seat without one),
and postal takes an order only from a prompted seat, so the steps a seat has orders in are
exactly its turns, found through the index on the orders' seat. A step's ``prompts`` are
rewritten while it is open (a seat acting at its own pace drops out of them), so they may
no longer name a seat that played its turn; and reading them means a JSON search. A
default is written at the resolution, after any order of the seat, and only for a seat
without one: a step with a default of the seat is a step whose latest order is the default.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from decimal import Decimal
from functools import reduce
from typing import Any

from django.db.models import Count, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import formats
from django.utils.translation import gettext, ngettext, pgettext

from games.engines import registry
from games.models import Game, Handover, Order, Seat, Step
from games.notify.email_choices import normalise

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# The sources of an order played for a seat that sent none: a missed turn.
MISSED = (Order.Source.DEFAULT, Order.Source.AUTOPILOT)
RUNNING = (Game.Status.RUNNING, Game.Status.PAUSED)


@dataclass(frozen=True)
class Finish:
    """One finished game of a player, as anyone may see it once it is over."""

    title: str
    engine: str  # the game's key
    profile: str  # the way it was played, in words: "Liar's Dice: classic"
    finished_at: datetime
    place: int
    of: int  # the places in the final standings
    rated: bool


@dataclass(frozen=True)
class Record:
    """How an address has played: see the module's docstring for what each figure counts.
    ``name``: the name of its latest seat ("" without seats); ``finishes``: its finished
    games with their places, the latest first."""

    email: str
    name: str = ""
    played: int = 0
    finished: int = 0
    running: int = 0
    abandoned: int = 0
    owed: int = 0
    missed: int = 0
    finishes: tuple[Finish, ...] = ()

    @property
    def nmr_rate(self) -> float | None:
        """Missed turns per turn owed (no-moves-received rate); None before any turn."""
        return self.missed / self.owed if self.owed else None

    @property
    def missed_in_words(self) -> str:
        """'missed 3 of 120 turns (2.5%)', in the active language."""
        if not self.owed:
            return gettext("no turns owed yet")
        return ngettext(
            "missed %(missed)d of %(owed)d turn (%(percent)s)",
            "missed %(missed)d of %(owed)d turns (%(percent)s)",
            self.owed,
        ) % {"missed": self.missed, "owed": self.owed, "percent": percent(self.missed, self.owed)}


def percent(part: int, whole: int) -> str:
    """'2.5%', '0%', '33.3%': one decimal, none when it is 0; in the active language's
    numbers ('2,5 %')."""
    number = formats.number_format(Decimal(f"{100 * part / whole:.1f}".removesuffix(".0")))
    return pgettext("a percentage", "%(number)s%%") % {"number": number}


def record_of(email: str) -> Record:
    """The record of ``email`` (any case); a record of zeros for an address without seats
    (or no address)."""
    key = normalise(email)
    return records_of([key]).get(key, Record(key))


def records_of(emails: Iterable[str]) -> dict[str, Record]:
    """The record of each address, keyed by the address normalised (``normalise``), in the
    same two queries however many addresses and games."""
    wanted = sorted({normalise(email) for email in emails if email.strip()})
    seats = _seats(wanted) if wanted else []
    left = _left(wanted) if wanted else []
    states = _final_states(seats)
    by_email: dict[str, list[Seat]] = {email: [] for email in wanted}
    for seat in seats:
        by_email[normalise(seat.email)].append(seat)
    left_by: dict[str, list[Handover]] = {email: [] for email in wanted}
    for handover in left:
        left_by[normalise(handover.email)].append(handover)
    return {
        email: _with_left(_record(email, by_email[email], states), left_by[email])
        for email in wanted
    }


def _seats(emails: list[str]) -> list[Seat]:
    """Every seat of ``emails`` in a started game, with its game (not its state) and its
    turns owed and missed, in one query."""
    done = Order.objects.filter(seat=OuterRef("pk"), step__status=Step.Status.DONE).order_by()
    # Only the turns of the time the seat has been this player's.
    done = done.filter(
        Q(seat__held_since__isnull=True) | Q(received_at__gte=OuterRef("held_since"))
    )
    turns = Count("step", distinct=True)
    owed = done.values("seat").annotate(turns=turns).values("turns")
    missed = done.filter(source__in=MISSED).values("seat").annotate(turns=turns).values("turns")
    # As ``players.seats_of``: the address whatever its case, through its index.
    same_address = reduce(operator.or_, (Q(email__iexact=email) for email in emails))
    return list(
        Seat.objects.filter(same_address, game__started_at__isnull=False)
        .select_related("game")
        .defer("game__state", "game__seed")
        .annotate(
            owed=Coalesce(Subquery(owed, output_field=IntegerField()), 0),
            missed=Coalesce(Subquery(missed, output_field=IntegerField()), 0),
        )
        .order_by("-game__started_at", "-game_id", "position")
    )


def _left(emails: list[str]) -> list[Handover]:
    """The seats ``emails`` left to other players, each with the turns owed and missed
    while they held it, in one query."""
    done = Order.objects.filter(
        seat=OuterRef("seat"), step__status=Step.Status.DONE, received_at__lt=OuterRef("left_at")
    ).order_by()
    # From when they took it over (the start: held_since is None) until they left.
    done = done.filter(received_at__gte=Coalesce(OuterRef("held_since"), Value(EPOCH)))
    turns = Count("step", distinct=True)
    owed = done.values("seat").annotate(turns=turns).values("turns")
    missed = done.filter(source__in=MISSED).values("seat").annotate(turns=turns).values("turns")
    same_address = reduce(operator.or_, (Q(email__iexact=email) for email in emails))
    return list(
        Handover.objects.filter(same_address).annotate(
            owed=Coalesce(Subquery(owed, output_field=IntegerField()), 0),
            missed=Coalesce(Subquery(missed, output_field=IntegerField()), 0),
        )
    )


def _with_left(record: Record, left: list[Handover]) -> Record:
    """``record`` with the seats its player left to others: played, abandoned, and the
    turns of their time."""
    if not left:
        return record
    return replace(
        record,
        played=record.played + len(left),
        abandoned=record.abandoned + len(left),
        owed=record.owed + sum(handover.owed for handover in left),  # type: ignore[attr-defined]
        missed=record.missed + sum(h.missed for h in left),  # type: ignore[attr-defined]
    )


def _final_states(seats: list[Seat]) -> dict[int, Any]:
    """The final state (JSON) of each finished game of ``seats`` they finished."""
    finished = {seat.game_id for seat in seats if _finished(seat)}
    if not finished:
        return {}
    return dict(Game.objects.filter(pk__in=finished).values_list("pk", "state"))


def _finished(seat: Seat) -> bool:
    return seat.game.status == Game.Status.FINISHED and seat.status != Seat.Status.REPLACED


def _record(email: str, seats: list[Seat], states: dict[int, Any]) -> Record:
    finished = [seat for seat in seats if _finished(seat)]
    finishes = [finish for seat in finished if (finish := _finish(seat, states)) is not None]
    finishes.sort(key=lambda finish: finish.finished_at, reverse=True)
    return Record(
        email=email,
        name=seats[0].name if seats else "",
        played=len(seats),
        finished=len(finished),
        running=sum(
            seat.game.status in RUNNING and seat.status != Seat.Status.REPLACED for seat in seats
        ),
        abandoned=sum(
            seat.status == Seat.Status.REPLACED or seat.civil_disorder_at is not None
            for seat in seats
        ),
        owed=sum(seat.owed for seat in seats),  # type: ignore[attr-defined]
        missed=sum(seat.missed for seat in seats),  # type: ignore[attr-defined]
        finishes=tuple(finishes),
    )


def _finish(seat: Seat, states: dict[int, Any]) -> Finish | None:
    """The seat's place in its finished game; None when its game is no longer in the
    registry or the final standings do not place the seat."""
    game = seat.game
    if game.engine not in registry.ENGINES or game.finished_at is None:
        return None
    engine = registry.get(game.engine)
    standings = engine.standings(engine.state_from_json(states[game.pk])) or []
    place = next((s.place for s in standings if s.seat == seat.position), None)
    if place is None:
        return None
    return Finish(
        title=game.title,
        engine=game.engine,
        profile=registry.title(game.engine, game.options),
        finished_at=game.finished_at,
        place=place,
        of=len(standings),
        rated=game.rated,
    )
