"""Quiet hours (docs/players.md): a player's night, declared in their time zone, when no
reminder comes. A reminder due in the night waits for the morning, unless the deadline
falls in that night: then it comes before the night starts. Nights are reckoned on the
local calendar (zoneinfo), so a night across a change of daylight-saving time still starts
and ends at the hours the player chose.

A GM sees whose night a deadline falls in (``asleep_at``), and a game may move a deadline
that would fall in every player's night to the first morning (``outside_every_night``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta

from games.lib import schedule
from games.models import EmailPreference, Seat
from games.notify import email_choices

# The longest a reminder may come before its time: a night's length, at most a day.
LEAD = timedelta(days=1)


@dataclass(frozen=True)
class Night:
    """From ``start`` to ``end`` every night, local times of ``zone``; ``end`` before (or
    at) ``start`` ends the next morning."""

    start: time
    end: time
    zone: str

    def said(self) -> str:
        return f"{self.start:%H:%M} to {self.end:%H:%M} {self.zone}"


def night_of(preference: EmailPreference | None) -> Night | None:
    if preference is None or preference.quiet_from is None or preference.quiet_until is None:
        return None
    if preference.quiet_from == preference.quiet_until:
        return None
    return Night(preference.quiet_from, preference.quiet_until, preference.time_zone)


def nights_of(emails: Iterable[str]) -> dict[str, Night]:
    """Normalised address -> its night, for the addresses of ``emails`` that declared one
    (one query)."""
    wanted = {email_choices.normalise(email) for email in emails}
    if not wanted:
        return {}
    found = {}
    for preference in EmailPreference.objects.filter(
        email__in=wanted, quiet_from__isnull=False, quiet_until__isnull=False
    ):
        night = night_of(preference)
        if night is not None:
            found[preference.email] = night
    return found


def nights_for(seats: Iterable[Seat]) -> dict[str, Night | None]:
    """Each address of ``seats`` (normalised) -> its night, or None without one."""
    seats = list(seats)
    nights = nights_of(seat.email for seat in seats)
    return {
        email_choices.normalise(seat.email): nights.get(email_choices.normalise(seat.email))
        for seat in seats
    }


def _at(day: datetime, clock: time, zone: str) -> datetime:
    """``clock`` on the local date ``day`` of ``zone``, as UTC (fold 0: a skipped time
    lands just after the gap, a repeated one on its first instance)."""
    return datetime.combine(day.date(), clock).replace(tzinfo=schedule.zone(zone)).astimezone(UTC)


def night_around(night: Night, moment: datetime) -> tuple[datetime, datetime] | None:
    """The night (its start and end, UTC) that ``moment`` falls in, or None."""
    local = moment.astimezone(schedule.zone(night.zone))
    for offset in (-1, 0):
        day = local + timedelta(days=offset)
        start = _at(day, night.start, night.zone)
        end_day = day + timedelta(days=1) if night.end <= night.start else day
        end = _at(end_day, night.end, night.zone)
        if start <= moment < end:
            return start, end
    return None


def send_time(nominal: datetime, deadline: datetime, night: Night | None) -> datetime:
    """When a reminder meant for ``nominal`` goes: then, outside the player's night; in it,
    at its end (the morning), unless the deadline comes before the night ends: then at its
    start, before the player sleeps."""
    if night is None:
        return nominal
    span = night_around(night, nominal)
    if span is None:
        return nominal
    start, end = span
    return start if deadline <= end else end


def declared(seats: Iterable[Seat]) -> list[tuple[Seat, Night]]:
    """The seats whose player declared a night, with it, in the seats' order (one query)."""
    seats = list(seats)
    nights = nights_of(seat.email for seat in seats)
    found = [(seat, nights.get(email_choices.normalise(seat.email))) for seat in seats]
    return [(seat, night) for seat, night in found if night is not None]


def asleep_at(moment: datetime, nights: Iterable[tuple[Seat, Night]]) -> list[Seat]:
    """The seats of ``nights`` (``declared``) whose player's night ``moment`` falls in."""
    return [seat for seat, night in nights if night_around(night, moment) is not None]


def whose_night(moment: datetime, nights: Iterable[tuple[Seat, Night]]) -> str:
    """For the GM: the players whose night ``moment`` falls in, by name and night ("" when
    nobody's)."""
    asleep = [
        f"{seat.name} ({night.said()})" for seat, night in nights if night_around(night, moment)
    ]
    return ", ".join(asleep)


def outside_every_night(deadline: datetime, nights: Mapping[str, Night | None]) -> datetime:
    """``deadline``, or, when it falls in the night of every player (each address of
    ``nights`` has one), the first moment after it when one of them is awake."""
    if not nights or any(night is None for night in nights.values()):
        return deadline
    spans = [night_around(night, deadline) for night in nights.values() if night is not None]
    if any(span is None for span in spans):
        return deadline
    return min(span[1] for span in spans if span is not None)
