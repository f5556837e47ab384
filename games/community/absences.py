"""A player's declared absences, and what they do to the deadlines of their games.

A player (an email address) says they are away from one day to another, both included, in
their time zone, for every game of the address or for one. Each game's GM chose what an
absence does there (``Game.absence_policy``): the deadline waits for the absent player up
to ``absence_cap_hours`` in all for the seat, or their missed turns are played as any
missed turn (the NMR default, or the autopilot they chose), or an autopilot plays them.
``games.postal`` reads the absences when a deadline passes; this module writes them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.db import connection, transaction
from django.db.models import Q
from django.utils import dateformat
from django.utils.translation import gettext, gettext_lazy, ngettext, pgettext

from games.lib import schedule
from games.models import Absence, AbsencePolicy, Game, Seat
from games.notify.email_choices import normalise

# The longest absence one declaration may cover, and how far ahead it may start.
LONGEST_DAYS = 92
AHEAD_DAYS = 366
# The games an absence may be declared for alone: not over yet.
LIVE = (Game.Status.RECRUITING, Game.Status.RUNNING, Game.Status.PAUSED)
# Declarations an address may hold at once (past ones do not count).
MOST_AT_ONCE = 20


# What an absence does in a game (Game.absence_policy), told to the player who is away.
WHAT_IT_DOES = {
    AbsencePolicy.EXTEND: gettext_lazy("the deadline waits for you"),
    AbsencePolicy.DEFAULT: gettext_lazy(
        "your missed turns are played as any missed turn (your choice above)"
    ),
    AbsencePolicy.AUTOPILOT: gettext_lazy("an autopilot plays your turns (yours if you chose one)"),
}


def day(value: date) -> str:
    """A day as players read it, in the active language: "1 December 2026"."""
    # Translators: a day in Django's date format (the "date" template filter): j day, F month.
    return dateformat.format(value, pgettext("a day", "j F Y"))


def hours_in_words(hours: int) -> str:
    """``hours`` in days when whole days: "7 days", else "30 hours"."""
    if hours and hours % 24 == 0:
        days = hours // 24
        return ngettext("%(count)d day", "%(count)d days", days) % {"count": days}
    return ngettext("%(count)d hour", "%(count)d hours", hours) % {"count": hours}


class AbsenceError(Exception):
    """A declaration not taken; the message is for the player."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Away:
    """What the pages show of an absence: until which day (in the player's zone)."""

    last_day: date
    ends_at: datetime


def bounds(first_day: date, last_day: date, zone: str) -> tuple[datetime, datetime]:
    """The instants an absence covers: from its first day's midnight to the end of its
    last, in ``zone``."""
    tz = ZoneInfo(zone)
    starts = datetime.combine(first_day, time.min, tzinfo=tz)
    ends = datetime.combine(last_day + timedelta(days=1), time.min, tzinfo=tz)
    return starts, ends


def declare(
    email: str,
    *,
    first_day: date,
    last_day: date,
    zone: str,
    now: datetime,
    game: Game | None = None,
) -> Absence:
    """Record that ``email`` is away; AbsenceError says why it was not taken (and nothing
    is written). ``game``: only that game's seats; None: every game of the address."""
    address = normalise(email)
    try:
        schedule.zone(zone)
    except schedule.ScheduleError as error:
        raise AbsenceError(str(error)) from None
    if last_day < first_day:
        raise AbsenceError(
            gettext("the absence ends (%(last)s) before it starts (%(first)s)")
            % {"last": day(last_day), "first": day(first_day)}
        )
    if (last_day - first_day).days + 1 > LONGEST_DAYS:
        raise AbsenceError(
            gettext("an absence is at most %(count)d days; for longer, ask your GMs to replace you")
            % {"count": LONGEST_DAYS}
        )
    starts_at, ends_at = bounds(first_day, last_day, zone)
    if ends_at <= now:
        raise AbsenceError(gettext("the absence ended already (%(day)s)") % {"day": day(last_day)})
    if starts_at > now + timedelta(days=AHEAD_DAYS):
        raise AbsenceError(
            gettext("an absence may start at most %(count)d days ahead") % {"count": AHEAD_DAYS}
        )
    if game is not None and not game.seats.filter(email__iexact=address).exists():
        raise AbsenceError(gettext("you have no seat in this game"))
    with transaction.atomic():
        current = Absence.objects.select_for_update().filter(email=address, ends_at__gt=now)
        if len(current) >= MOST_AT_ONCE:
            raise AbsenceError(
                gettext("you have %(count)d absences declared already; remove one first")
                % {"count": MOST_AT_ONCE}
            )
        return Absence.objects.create(
            email=address,
            game=game,
            first_day=first_day,
            last_day=last_day,
            zone=zone,
            starts_at=starts_at,
            ends_at=ends_at,
            created_at=now,
        )


def withdraw(email: str, absence_id: int, *, now: datetime) -> None:
    """The player is back, or never left: their absence is removed (one of theirs only)."""
    deleted, _ = Absence.objects.filter(pk=absence_id, email=normalise(email)).delete()
    if not deleted:
        raise AbsenceError(gettext("there is no such absence of yours"))


def declared(email: str, *, now: datetime) -> list[Absence]:
    """The address's absences not over yet, soonest first, with their games."""
    return list(
        Absence.objects.select_related("game")
        .filter(email=normalise(email), ends_at__gt=now)
        .order_by("starts_at", "id")
    )


def away(seats: Iterable[Seat], *, now: datetime) -> dict[int, Away]:
    """Seat id -> until when the seat's player is away, for the seats whose player is
    away now (an absence for all their games or for the seat's game covers ``now``); one
    query. Absences that follow one another without a gap count as one."""
    seats = list(seats)
    if not seats:
        return {}
    addresses = {normalise(seat.email) for seat in seats}
    games = {seat.game_id for seat in seats}
    rows = list(
        Absence.objects.filter(email__in=addresses, ends_at__gt=now)
        .filter(Q(game__isnull=True) | Q(game_id__in=games))
        .order_by("starts_at")
        .values_list("email", "game_id", "starts_at", "ends_at", "last_day")
    )
    result: dict[int, Away] = {}
    for seat in seats:
        address = normalise(seat.email)
        covering: Away | None = None
        for email, game_id, starts_at, ends_at, last_day in rows:
            if email != address or (game_id is not None and game_id != seat.game_id):
                continue
            reaches = now if covering is None else covering.ends_at
            if starts_at <= reaches < ends_at:
                covering = Away(last_day, ends_at)
        if covering is not None:
            result[seat.pk] = covering
    return result


# Each seat of a game, with the last day of its player's absence that covers now (NULL:
# not away): one statement for the seat page, which lists who is away and writes to whom
# its messages may go (the ORM's subquery cost as much to build as the rest of the page's
# queries).
_SEATS_OF_GAME = (
    "SELECT s.id, s.position, s.name, s.bot, MAX(a.last_day) FROM games_seat s"
    " LEFT JOIN games_absence a ON a.email = LOWER(s.email)"
    " AND (a.game_id IS NULL OR a.game_id = s.game_id)"
    " AND a.starts_at <= %s AND a.ends_at > %s"
    " WHERE s.game_id = %s"
    " GROUP BY s.id, s.position, s.name, s.bot ORDER BY s.position"
)


@dataclass(frozen=True)
class GameSeat:
    """A seat of a game as its seat page names it, and the last day its player is away
    (None: not away now)."""

    id: int
    position: int
    name: str
    away_until: date | None
    bot: bool = False


def seats_of_game(game_id: int, *, now: datetime) -> list[GameSeat]:
    """Every seat of the game by position, each with the last day of its player's absence
    that covers now: one query."""
    with connection.cursor() as cursor:
        cursor.execute(_SEATS_OF_GAME, [now, now, game_id])
        rows = cursor.fetchall()
    # SQLite hands the day back as text.
    return [
        GameSeat(
            seat_id,
            position,
            name,
            None if last is None else last if isinstance(last, date) else date.fromisoformat(last),
            bool(bot),
        )
        for seat_id, position, name, bot, last in rows
    ]
