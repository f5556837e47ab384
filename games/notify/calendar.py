"""Deadlines in players' calendars: a private iCalendar feed per seat, one per GM for all
their games, and an .ics file with each report.

Every deadline is written as a UTC instant (``DTSTART:20261025T170000Z``): a calendar
shows it at the right local time on both sides of a daylight-saving change, in any zone.
The summary and description name the local time in the seat's zone as well.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import translation
from django.utils.translation import gettext
from redis.exceptions import RedisError

from games.lib import words
from games.lib.schedule import local_time
from games.models import Game, Seat, Step
from games.postal import access

PRODID = "-//Play-by-post moderator//Deadlines//EN"
# A deadline is a moment; calendars want a span: the quarter hour before it.
SPAN = timedelta(minutes=15)


@dataclass(frozen=True)
class Deadline:
    uid: str
    when: datetime
    summary: str
    description: str
    url: str


def _escape(text: str) -> str:
    return (
        text.replace("\\", "\\\\")
        .replace(";", "\\;")
        .replace(",", "\\,")
        .replace("\r\n", "\\n")
        .replace("\n", "\\n")
    )


def _fold(line: str) -> list[str]:
    """RFC 5545 3.1: lines longer than 75 octets continue on lines starting with a space."""
    data = line.encode()
    if len(data) <= 75:
        return [line]
    parts: list[str] = []
    start = 0
    while start < len(data):
        end = min(start + (75 if not parts else 74), len(data))
        while end < len(data) and (data[end] & 0xC0) == 0x80:
            end -= 1  # never split a UTF-8 character
        parts.append(("" if not parts else " ") + data[start:end].decode())
        start = end
    return parts


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def render(name: str, deadlines: Iterable[Deadline], *, now: datetime) -> str:
    lines = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        f"PRODID:{PRODID}",
        "CALSCALE:GREGORIAN",
        "METHOD:PUBLISH",
        f"X-WR-CALNAME:{_escape(name)}",
    ]
    for deadline in deadlines:
        lines += [
            "BEGIN:VEVENT",
            f"UID:{deadline.uid}",
            f"DTSTAMP:{_stamp(now)}",
            f"DTSTART:{_stamp(deadline.when - SPAN)}",
            f"DTEND:{_stamp(deadline.when)}",
            f"SUMMARY:{_escape(deadline.summary)}",
            f"DESCRIPTION:{_escape(deadline.description)}",
            f"URL:{deadline.url}",
            "BEGIN:VALARM",
            "ACTION:DISPLAY",
            f"DESCRIPTION:{_escape(deadline.summary)}",
            "TRIGGER:-PT2H",
            "END:VALARM",
            "END:VEVENT",
        ]
    lines.append("END:VCALENDAR")
    return "".join(f"{part}\r\n" for line in lines for part in _fold(line))


def cache_key(kind: str, token: str) -> str:
    """Where a feed is kept in the cache (``views._feed``): under a digest of its token."""
    return f"calendar:{kind}:{hashlib.sha256(token.encode()).hexdigest()}"


def forget_seat_feed(seat: Seat) -> None:
    """Once the transaction commits, drop the cached feed of the seat's token as it is
    now: called before a rotation or a new player retires the token, so the feed answers
    nobody from then on, not even from the cache."""
    key = cache_key("seat", access.seat_token(seat, "calendar"))

    def forget() -> None:
        with contextlib.suppress(RedisError):
            cache.delete(key)

    transaction.on_commit(forget)


def _play_url(game: Game) -> str:
    return f"{settings.SITE_URL}/play/{game.pk}/"


def seat_deadline(game: Game, seat: Seat, step: Step) -> Deadline:
    """The deadline of ``step`` as the seat's calendar shows it, in the active language."""
    owes = seat.position in step.prompted_seats
    said = {
        "title": game.title,
        "step": words.step_name(game.rules.step_word, step.number),
        "what": gettext("your order is due") if owes else gettext("it resolves"),
        "when": local_time(step.deadline, seat.zone),
        "page": _play_url(game),
    }
    summary = (
        gettext("%(title)s: %(step)s, your order is due")
        if owes
        else gettext("%(title)s: %(step)s resolves")
    )
    return Deadline(
        uid=f"game-{game.pk}-step-{step.number}-seat-{seat.position}@{settings.MAIL_DOMAIN}",
        when=step.deadline,
        summary=summary % said,
        description=gettext(
            "%(title)s, %(step)s: %(what)s at %(when)s. Orders are taken until then; "
            "your page: %(page)s"
        )
        % said,
        url=_play_url(game),
    )


def seat_feed(seat: Seat, *, now: datetime) -> str:
    """The seat's upcoming deadline (the open step of its game), if the game is running,
    in the seat's language."""
    game = seat.game
    deadlines = []
    if game.status in (Game.Status.RUNNING, Game.Status.PAUSED):
        step = game.steps.filter(number=game.step_number, status=Step.Status.OPEN).first()
        if step is not None and step.deadline > now:
            with translation.override(seat.speaks):
                deadlines.append(seat_deadline(game, seat, step))
    return render(f"{game.title} ({seat.name})", deadlines, now=now)


def step_attachment(game: Game, seat: Seat, step: Step, *, now: datetime) -> dict[str, str]:
    """The .ics file of a report: the deadline of the step it opens."""
    word = game.rules.step_word.replace(" ", "-")
    return {
        "filename": f"deadline-{word}-{step.number}.ics",
        "content": render(game.title, [seat_deadline(game, seat, step)], now=now),
        "mimetype": "text/calendar",
    }


def gm_feed(user: Any, *, now: datetime) -> str:
    """Every open deadline of the GM's running games, in the game's own zone, in English
    (the GM panel's language) whatever the calendar app asks."""
    with translation.override(settings.LANGUAGE_CODE):
        return _gm_feed(user, now=now)


def _gm_feed(user: Any, *, now: datetime) -> str:
    steps = (
        Step.objects.filter(
            game__gm=user,
            status=Step.Status.OPEN,
            deadline__gt=now,
            game__status__in=[Game.Status.RUNNING, Game.Status.PAUSED],
        )
        .select_related("game")
        .defer("state_before", "state_after", "game__state")
        .order_by("deadline", "game_id")
    )
    deadlines = [
        Deadline(
            uid=f"game-{step.game_id}-step-{step.number}-gm@{settings.MAIL_DOMAIN}",
            when=step.deadline,
            summary=f"{step.game.title}: step {step.number} resolves",
            description=(
                f"{step.game.title}, step {step.number} resolves at "
                f"{local_time(step.deadline, step.game.time_zone)}."
            ),
            url=f"{settings.SITE_URL}/gm/{step.game_id}/",
        )
        for step in steps
    ]
    return render("Your games' deadlines", deadlines, now=now)
