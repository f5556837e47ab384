"""A player's reminder ladder (docs/email.md, "A reminder ladder"): which channel reminds
them, and how long before a deadline. Each rung is a channel (email, or a push to the
browsers told of the seat) and hours before the deadline. A seat's own ladder wins over its
address's, which wins over the game's default: an email at each of the game's
``reminders`` hours (24 and 2 unless its GM chose others).

At each sweep the rungs whose time has come (moved out of the player's night:
``quiet.send_time``) are due, and the most urgent of them is sent, every channel of it: a
rung passed over while the service was down is not sent late. A rung is sent once (its
dedupe key names the step, the seat, the rung's hours and the deadline), and not at all once
the seat's order is in (the sweep reminds only seats that owe one)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.utils.translation import gettext, gettext_lazy, ngettext

from games.models import EmailPreference, Game, Seat
from games.notify import quiet

EMAIL, PUSH, WEBHOOK = "email", "push", "webhook"
CHANNELS = {
    EMAIL: gettext_lazy("an email"),
    PUSH: gettext_lazy("a push to my browsers"),
    WEBHOOK: gettext_lazy("a post to my webhook"),
}
# The hours a rung may be set to, on the settings page.
HOURS = (72, 48, 24, 12, 8, 6, 4, 3, 2, 1, 0.5)
MOST_RUNGS = 4


@dataclass(frozen=True, order=True)
class Rung:
    hours: float
    channel: str

    def said(self) -> str:
        """The rung in words ("a push to my browsers 8 hours before")."""
        return f"{CHANNELS[self.channel]} {before(self.hours)}"


def before(hours: float) -> str:
    """``hours`` before a deadline, in words ("8 hours before", "30 minutes before")."""
    if hours < 1:
        minutes = int(hours * 60)
        return ngettext("%(count)d minute before", "%(count)d minutes before", minutes) % {
            "count": minutes
        }
    return ngettext("%(count)d hour before", "%(count)d hours before", int(hours)) % {
        "count": int(hours)
    }


class BadLadder(ValueError):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def whole(value: float) -> float:
    """Whole hours as an int (24, not 24.0: the keys and the words say "24")."""
    return int(value) if float(value).is_integer() else float(value)


def parse(rungs: Any) -> list[Rung]:
    """The rungs of stored JSON (``[{"channel": ..., "hours": ...}]``), most urgent last;
    a rung that is not one is left out."""
    if not isinstance(rungs, list):
        return []
    found = {
        Rung(whole(rung["hours"]), rung["channel"])
        for rung in rungs
        if isinstance(rung, dict) and rung.get("channel") in CHANNELS and _number(rung.get("hours"))
    }
    return sorted(found, reverse=True)


def stored(rungs: Iterable[Rung]) -> list[dict[str, Any]]:
    return [
        {"channel": rung.channel, "hours": rung.hours} for rung in sorted(set(rungs), reverse=True)
    ]


def check(rungs: Sequence[Rung]) -> list[Rung]:
    """``rungs`` as a ladder may be, or BadLadder in the player's words."""
    if len(set(rungs)) > MOST_RUNGS:
        raise BadLadder(gettext("A ladder has at most %(count)d rungs.") % {"count": MOST_RUNGS})
    for rung in rungs:
        if rung.channel not in CHANNELS or rung.hours not in HOURS:
            raise BadLadder(gettext("Choose each rung's channel and time from the lists."))
    return sorted(set(rungs), reverse=True)


def said(rungs: Sequence[Rung]) -> str:
    """A ladder in words: "a push to my browsers 8 hours before, then an email 2 hours
    before"; "none" without rungs."""
    if not rungs:
        return gettext("none")
    return gettext(", then ").join(rung.said() for rung in sorted(rungs, reverse=True))


def default(game: Game) -> list[Rung]:
    """The game's reminders, by email."""
    return sorted({Rung(whole(h), EMAIL) for h in game.reminders if _number(h)}, reverse=True)


def of_seat(seat: Seat, preference: EmailPreference | None) -> tuple[list[Rung], str]:
    """The seat's ladder and where it comes from: "seat", "address" or "game"."""
    if seat.ladder is not None:
        return parse(seat.ladder), "seat"
    if preference is not None and preference.ladder is not None:
        return parse(preference.ladder), "address"
    return default(seat.game), "game"


def due(
    rungs: Iterable[Rung],
    *,
    opened_at: datetime,
    deadline: datetime,
    now: datetime,
    night: quiet.Night | None = None,
) -> list[Rung]:
    """The rungs due at ``now``: the most urgent of those whose time (moved out of
    ``night``) has come, each of its channels. A rung whose time, or moved time, came before
    the step opened reminds of nothing."""
    if deadline <= now:
        return []
    came = [
        rung
        for rung, at in _times(rungs, opened_at=opened_at, deadline=deadline, night=night)
        if at <= now
    ]
    if not came:
        return []
    urgent = min(rung.hours for rung in came)
    return sorted(rung for rung in came if rung.hours == urgent)


def moments(
    rungs: Iterable[Rung],
    *,
    opened_at: datetime,
    deadline: datetime,
    night: quiet.Night | None = None,
) -> list[datetime]:
    """When each of ``rungs`` that may remind of a step comes: its time moved out of
    ``night`` (``due`` says which is due at a moment)."""
    return [at for _, at in _times(rungs, opened_at=opened_at, deadline=deadline, night=night)]


def _times(
    rungs: Iterable[Rung], *, opened_at: datetime, deadline: datetime, night: quiet.Night | None
) -> list[tuple[Rung, datetime]]:
    times = []
    for rung in rungs:
        meant = deadline - timedelta(hours=rung.hours)
        at = quiet.send_time(meant, deadline, night)
        if meant > opened_at and at > opened_at:
            times.append((rung, at))
    return times


def longest(game: Game, ladders: Iterable[list[Rung]]) -> float:
    """The most hours before a deadline any rung of the game's seats may come."""
    hours = [rung.hours for rung in default(game)]
    hours += [rung.hours for rungs in ladders for rung in rungs]
    return max(hours, default=0)
