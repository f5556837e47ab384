"""Deadlines in a game's time zone, stored in UTC.

A schedule is JSON data, one of
    {"kind": "interval", "seconds": 172800}                 every 48 hours
    {"kind": "daily", "time": "18:00"}                       daily at 18:00
    {"kind": "weekly", "days": ["mon", "thu"], "time": "20:00"}
``parse`` reads the GM's words ("every 48 hours", "daily at 18:00",
"mondays and thursdays at 20:00") into that form; ``next_deadline`` computes the first
deadline after a moment. A local time that does not exist (the hour skipped when clocks go
forward) falls on the moment after the gap; a repeated local time takes its first instance.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from django.utils import dateformat
from django.utils.translation import gettext, ngettext, pgettext, pgettext_lazy

from games.engines import text as engine_text

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_DAY_WORDS = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3,
    "friday": 4, "saturday": 5, "sunday": 6,
}  # fmt: skip
_DAY_ABBREVIATIONS = {name[:3]: name for name in _DAY_WORDS}
_DAY_NAMES = ("Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays", "Sundays")
MIN_INTERVAL = 1


class ScheduleError(ValueError):
    pass


def zone(name: str) -> ZoneInfo:
    """The IANA time zone ``name``; ScheduleError for a name that is not one."""
    if not name or name not in _zone_names():
        raise ScheduleError(f"{name!r} is not a time zone; use a name such as Europe/Berlin")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(f"{name!r} is not a time zone") from None


_ZONES: set[str] = set()


def _zone_names() -> set[str]:
    if not _ZONES:
        _ZONES.update(available_timezones())
    return _ZONES


def _clock(text: str) -> time:
    match = re.fullmatch(r"([01]?\d|2[0-3]):([0-5]\d)", text.strip())
    if not match:
        raise ScheduleError(f"{text!r} is not a time of day; write it as HH:MM, e.g. 18:00")
    return time(int(match[1]), int(match[2]))


def parse(text: str) -> dict[str, Any]:
    """The schedule in the GM's words, as JSON data; ScheduleError with what would be legal."""
    words = " ".join(text.lower().replace(",", " ").split())
    match = re.fullmatch(r"every (\d+) (days?|hours?|minutes?|seconds?)", words)
    if match:
        unit = {"day": 86400, "hour": 3600, "minute": 60, "second": 1}[match[2].rstrip("s")]
        return validate({"kind": "interval", "seconds": int(match[1]) * unit})
    match = re.fullmatch(r"daily at (\S+)", words)
    if match:
        return validate({"kind": "daily", "time": match[1]})
    match = re.fullmatch(r"(.+) at (\S+)", words)
    if match:
        days: list[str] = []
        for word in match[1].replace(" and ", " ").split():
            day = _DAY_WORDS.get(_DAY_ABBREVIATIONS.get(word, word.rstrip("s")))
            if day is None:
                raise ScheduleError(f"{word!r} is not a day of the week")
            days.append(WEEKDAYS[day])
        return validate({"kind": "weekly", "days": days, "time": match[2]})
    raise ScheduleError(
        f"{text!r} is not a schedule; write e.g. 'every 48 hours', 'daily at 18:00' "
        "or 'mondays and thursdays at 20:00'"
    )


def validate(schedule: Any) -> dict[str, Any]:
    """The schedule normalised; ScheduleError if it is not one of the three forms."""
    if not isinstance(schedule, dict):
        raise ScheduleError("a schedule must be an object with a 'kind'")
    kind = schedule.get("kind")
    if kind == "interval":
        seconds = schedule.get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, int) or seconds < MIN_INTERVAL:
            raise ScheduleError(
                f"an interval must be a whole number of seconds, at least {MIN_INTERVAL}"
            )
        return {"kind": "interval", "seconds": seconds}
    if kind == "daily":
        return {"kind": "daily", "time": _clock(str(schedule.get("time", ""))).strftime("%H:%M")}
    if kind == "weekly":
        days = schedule.get("days")
        if not isinstance(days, list) or not days or any(day not in WEEKDAYS for day in days):
            raise ScheduleError(f"weekly days must be a list drawn from {', '.join(WEEKDAYS)}")
        ordered = sorted(set(days), key=WEEKDAYS.index)
        clock = _clock(str(schedule.get("time", ""))).strftime("%H:%M")
        return {"kind": "weekly", "days": ordered, "time": clock}
    raise ScheduleError("a schedule's kind must be interval, daily or weekly")


def describe(schedule: dict[str, Any]) -> str:
    """The schedule in the GM's words, as ``parse`` reads them back: "every 48 hours",
    "daily at 18:00", "Mondays and Thursdays at 20:00"."""
    if schedule["kind"] == "interval":
        seconds = schedule["seconds"]
        # Hours up to three days (GMs say "every 48 hours"), whole days beyond.
        long = seconds > 3 * 86400 and seconds % 86400 == 0
        for unit, size in (("day", 86400 if long else 0), ("hour", 3600), ("minute", 60)):
            if size and seconds % size == 0:
                count = seconds // size
                return f"every {count} {unit}{'' if count == 1 else 's'}"
        return f"every {seconds} second{'' if seconds == 1 else 's'}"
    if schedule["kind"] == "daily":
        return f"daily at {schedule['time']}"
    names = [_DAY_NAMES[WEEKDAYS.index(day)] for day in schedule["days"]]
    days = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return f"{days} at {schedule['time']}"


# The days of a weekly schedule as players read them, in the active language.
_DAYS_SHOWN = (
    pgettext_lazy("every week on", "Mondays"),
    pgettext_lazy("every week on", "Tuesdays"),
    pgettext_lazy("every week on", "Wednesdays"),
    pgettext_lazy("every week on", "Thursdays"),
    pgettext_lazy("every week on", "Fridays"),
    pgettext_lazy("every week on", "Saturdays"),
    pgettext_lazy("every week on", "Sundays"),
)


def in_words(schedule: dict[str, Any]) -> str:
    """The schedule as players read it, in the active language: in English what
    ``describe`` writes (the GM's words), in German "alle 48 Stunden", "täglich um 18:00"."""
    if schedule["kind"] == "interval":
        seconds = schedule["seconds"]
        long = seconds > 3 * 86400 and seconds % 86400 == 0
        if long:
            days = seconds // 86400
            return ngettext("every %(count)d day", "every %(count)d days", days) % {"count": days}
        if seconds % 3600 == 0:
            hours = seconds // 3600
            return ngettext("every %(count)d hour", "every %(count)d hours", hours) % {
                "count": hours
            }
        if seconds % 60 == 0:
            minutes = seconds // 60
            return ngettext("every %(count)d minute", "every %(count)d minutes", minutes) % {
                "count": minutes
            }
        return ngettext("every %(count)d second", "every %(count)d seconds", seconds) % {
            "count": seconds
        }
    if schedule["kind"] == "daily":
        return gettext("daily at %(time)s") % {"time": schedule["time"]}
    names = [str(_DAYS_SHOWN[WEEKDAYS.index(day)]) for day in schedule["days"]]
    days = names[0]
    if len(names) > 1:
        days = gettext("%(days)s and %(last)s") % {"days": ", ".join(names[:-1]), "last": names[-1]}
    return gettext("%(days)s at %(time)s") % {"days": days, "time": schedule["time"]}


def _local(day: datetime, clock: time, tz: ZoneInfo) -> datetime:
    """The moment of ``clock`` on the date of ``day`` in ``tz``.

    With fold=0 (PEP 495) a skipped local time maps through the offset before the change,
    which is the moment just after the gap, and a repeated one to its first instance.
    """
    return datetime.combine(day.date(), clock).replace(tzinfo=tz).astimezone(UTC)


def next_deadline(schedule: dict[str, Any], time_zone: str, after: datetime) -> datetime:
    """The first deadline of ``schedule`` strictly after ``after`` (aware), in UTC."""
    if after.tzinfo is None:
        raise ValueError("after must be an aware datetime")
    schedule = validate(schedule)
    if schedule["kind"] == "interval":
        return (after + timedelta(seconds=schedule["seconds"])).astimezone(UTC)
    tz = zone(time_zone)
    clock = _clock(schedule["time"])
    days = (
        set(range(7))
        if schedule["kind"] == "daily"
        else {WEEKDAYS.index(day) for day in schedule["days"]}
    )
    local_after = after.astimezone(tz)
    for offset in range(8):
        day = local_after + timedelta(days=offset)
        if day.weekday() not in days:
            continue
        moment = _local(day, clock, tz)
        if moment > after:
            return moment
    raise AssertionError("a weekly schedule always has a day within eight days")


def local_time(moment: datetime, time_zone: str) -> str:
    """``moment`` in ``time_zone`` and in UTC, in the words of the active language:
    'Mon 23 Nov 2026 19:00 CET (18:00 UTC)', 'Mo., 23. November 2026, 19:00 CET (18:00 UTC)'."""
    local = moment.astimezone(ZoneInfo(time_zone))
    utc = moment.astimezone(UTC)
    # Translators: a deadline's date and time, in Django's date format (the docs of the
    # "date" template filter): D weekday, d day, M month (abbreviated), F month, Y year.
    shown = dateformat.format(local, pgettext("moment", "D d M Y H:i"))
    if local.utcoffset() == utc.utcoffset():
        return f"{shown} UTC"
    return f"{shown} {local.tzname()} ({utc:%H:%M} UTC)"


def zone_names() -> list[str]:
    """Every IANA time zone name this machine knows, sorted: what a zone may be."""
    return sorted(_zone_names())


# A moment's weekday and month as schedule.local_time writes them, in the reader's language.
# The weekdays are Django's own words for its "D" date format: their German is Django's.
WEEKDAYS_SHORT = (
    engine_text._("Mon"),
    engine_text._("Tue"),
    engine_text._("Wed"),
    engine_text._("Thu"),
    engine_text._("Fri"),
    engine_text._("Sat"),
    engine_text._("Sun"),
)
MONTHS_SHORT = (
    engine_text._("Jan"),
    engine_text._("Feb"),
    engine_text._("Mar"),
    engine_text._("Apr"),
    engine_text._("May"),
    engine_text._("Jun"),
    engine_text._("Jul"),
    engine_text._("Aug"),
    engine_text._("Sep"),
    engine_text._("Oct"),
    engine_text._("Nov"),
    engine_text._("Dec"),
)


def moment_words(moment: datetime, time_zone: str) -> engine_text.Text:
    """``moment`` as ``schedule.local_time`` writes it ('Fri 27 Nov 2026 19:00 CET (18:00
    UTC)'), to be said in each reader's language ('Fr., 27. November 2026, 19:00 CET')."""
    local, utc = moment.astimezone(zone(time_zone)), moment.astimezone(UTC)
    when = engine_text._(
        "%(weekday)s %(day)02d %(month)s %(year)d %(time)s",
        weekday=WEEKDAYS_SHORT[local.weekday()],
        day=local.day,
        month=MONTHS_SHORT[local.month - 1],
        year=local.year,
        time=f"{local:%H:%M}",
    )
    if local.utcoffset() == utc.utcoffset():
        return engine_text._("%(when)s UTC", when=when)
    return engine_text._(
        "%(when)s %(zone)s (%(utc)s UTC)", when=when, zone=local.tzname(), utc=f"{utc:%H:%M}"
    )


def in_zone(message: Any, time_zone: str) -> engine_text.Text | None:
    """Words stored with the instant they name (an ``at`` argument beside their ``when``,
    as ``moment_words`` wrote it) said again with that instant in ``time_zone``: a GM's log
    line in its reader's zone. None for words that name no instant."""
    if not isinstance(message, dict) or "t" not in message:
        return None
    args = message.get("a") or {}
    at = args.get("at")
    if not isinstance(at, str) or "when" not in args:
        return None
    loaded = {key: engine_text.load(value) for key, value in args.items()}
    loaded["when"] = moment_words(datetime.fromisoformat(at), time_zone)
    return engine_text._(message["t"], **loaded)
