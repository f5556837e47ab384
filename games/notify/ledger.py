"""The ledger (docs/players.md, "Decided for you"): every decision taken for a player without
them is a row (``Decision``): a missed turn played by the game's default or by an
autopilot, an automatic extension spent, a deadline held for an absence, civil disorder, a
reminder moved out of the player's night, a reminder sent by another channel than the
ladder's. Each row is written in the transaction of the decision, and said in the reader's
language when shown: what was decided, by which rule or setting, and what the player can do
about it. The player sees their seat's rows on its page, the GM every seat's on the game's
page."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from games.engines import registry
from games.lib import schedule, words
from games.models import Decision, Game, Seat
from games.notify import ladder

Kind = Decision.Kind
# How many rows a page shows, newest first.
SHOWN = 20


def note(
    game: Game, seat: Seat, kind: str, now: datetime, step: int | None = None, **details: Any
) -> Decision:
    """An unsaved row: the caller writes it (``write``) in its transaction."""
    return Decision(
        game=game, seat=seat, kind=kind, step_number=step, details=details, created_at=now
    )


def write(rows: list[Decision]) -> None:
    if rows:
        Decision.objects.bulk_create(rows)


@dataclass(frozen=True)
class Said:
    """A row in words: when, whose seat, what was decided, by which rule or setting, and
    what the player can do about it."""

    when: str
    seat: str
    what: str
    why: str
    then: str


def _step(game: Game, number: int | None) -> str:
    return str(words.Said(words.step_words(game.rules.step_word, number or 0)))


def said(row: Decision, zone: str) -> Said:
    """The row in the active language, its times in ``zone``."""
    game, details = row.game, row.details
    step = _step(game, row.step_number)
    what, why, then = _words(row.kind, game, step, details, zone)
    return Said(schedule.local_time(row.created_at, zone), row.seat.name, what, why, then)


def _autopilot(game: Game, key: str) -> str:
    strategy = registry.strategy(game.engine, key)
    return key if strategy is None else str(words.Said(strategy.title))


def _words(
    kind: str, game: Game, step: str, details: dict[str, Any], zone: str
) -> tuple[str, str, str]:
    missed = _(
        "Send your order before the deadline; what plays a missed turn is yours to choose under "
        "“If you miss a deadline” in your settings."
    )
    if kind == Kind.DEFAULT:
        return (
            _("%(step)s: the game's no-moves-received default played for you: %(order)s")
            % {"step": step, "order": details.get("order", "")},
            _("No order from you had come by the deadline."),
            missed,
        )
    if kind == Kind.AUTOPILOT:
        why = (
            _("Your setting: this autopilot plays your missed turns.")
            if details.get("chosen")
            else _("You are away, and this game plays absent players' turns by autopilot.")
        )
        return (
            _("%(step)s: your autopilot (%(autopilot)s) played for you: %(order)s")
            % {
                "step": step,
                "autopilot": _autopilot(game, details.get("autopilot", "")),
                "order": details.get("order", ""),
            },
            why,
            missed,
        )
    if kind == Kind.EXTENSION:
        return (
            _(
                "%(step)s: one of your automatic extensions moved the deadline by %(hours)s "
                "hours; %(left)s left"
            )
            % {"step": step, "hours": details.get("hours"), "left": details.get("left")},
            ngettext(
                "This game gives each seat %(count)d automatic extension: a missed deadline "
                "spends it.",
                "This game gives each seat %(count)d automatic extensions: a missed deadline "
                "spends one.",
                int(details.get("total", 0)),
            )
            % {"count": int(details.get("total", 0))},
            _("Send your order before the new deadline."),
        )
    if kind == Kind.ABSENCE:
        until = datetime.fromisoformat(details["until"])
        return (
            _("%(step)s: the deadline waited for you until %(until)s")
            % {"step": step, "until": schedule.local_time(until, zone)},
            _(
                "You declared an absence, and this game waits for absent players (%(hours)s hours "
                "at most per seat)."
            )
            % {"hours": details.get("cap")},
            _("Change or end your absence on the Away page."),
        )
    if kind == Kind.CIVIL_DISORDER:
        return (
            ngettext(
                "%(step)s: your seat fell into civil disorder after %(count)d missed turn",
                "%(step)s: your seat fell into civil disorder after %(count)d missed turns in a "
                "row",
                int(details.get("count", 0)),
            )
            % {"step": step, "count": int(details.get("count", 0))},
            ngettext(
                "This game's rule: a seat that misses a turn is in civil disorder.",
                "This game's rule: a seat that misses %(count)d turns in a row is in civil "
                "disorder.",
                int(details.get("count", 0)),
            )
            % {"count": int(details.get("count", 0))},
            _("An order from you ends it, unless the seat was given to another player."),
        )
    if kind == Kind.HELD:
        at = datetime.fromisoformat(details["at"])
        return (
            _("%(step)s: the reminder %(before)s came at %(at)s")
            % {
                "step": step,
                "before": ladder.before(float(details["hours"])),
                "at": schedule.local_time(at, zone),
            },
            _("Your quiet hours: %(night)s.") % {"night": details.get("night", "")},
            _("Change your quiet hours under “Deadlines and reminders” in your settings."),
        )
    if kind == Kind.CONDITIONAL:
        return _conditional(step, details)
    by = str(ladder.CHANNELS.get(details.get("to", ""), details.get("to", "")))
    if details.get("meant") == ladder.WEBHOOK:
        why = _("Your webhook is not set, or its last post failed.")
        then = _("Set your webhook, or send it a test, under “How you are reached”.")
    elif details.get("to") == ladder.EMAIL:
        why = _("No browser took pushes for this seat.")
        then = _("Turn push on, or send yourself a test, under “Notifications on this device”.")
    else:
        why = _("Mail to your address is not arriving: %(reason)s") % {
            "reason": details.get("reason", "")
        }
        then = _("Ask the GM to change your address; push reaches you meanwhile.")
    return (
        _("%(step)s: the reminder %(before)s came as %(by)s")
        % {"step": step, "before": ladder.before(float(details["hours"])), "by": by},
        why,
        then,
    )


def _conditional(step: str, details: dict[str, Any]) -> tuple[str, str, str]:
    if details.get("played"):
        return (
            _("%(step)s: your conditional order “%(words)s” played %(order)s")
            % {"step": step, "words": details["words"], "order": details["played"]},
            _("You left it for your turn, and its condition met the game."),
            _(
                "Leave another on your seat's page, by email or through the API, while it is "
                "not your turn."
            ),
        )
    reason = str(words.Said(details.get("reason", ""), details.get("reason_message")))
    return (
        _("%(step)s: your conditional order “%(words)s” was disarmed: %(reason)s")
        % {"step": step, "words": details["words"], "reason": reason},
        _("The situation it assumed was gone when your turn came."),
        _("Your turn is yours to play: send your order before the deadline."),
    )


def of_seat(seat: Seat) -> list[Said]:
    """The seat's rows, newest first, in its zone."""
    rows = list(Decision.objects.filter(seat=seat)[:SHOWN])
    for row in rows:
        row.game, row.seat = seat.game, seat
    return [said(row, seat.zone) for row in rows]


def of_game(game: Game) -> list[Said]:
    """Every seat's rows of the game, newest first, in the game's zone."""
    rows = list(Decision.objects.filter(game=game).select_related("seat")[:SHOWN])
    for row in rows:
        row.game = game
    return [said(row, game.time_zone) for row in rows]
