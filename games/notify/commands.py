"""Commands by email (docs/players.md, "Commands by email"), as the Diplomacy judges took
them: a reply to an email of a seat whose own words are one command word is answered by
email, and is no order.

- ``help``: the commands, and how an order is sent by email.
- ``status``: every game not over of the seat's address: what each asks of it and by when.
- ``deadlines``: the orders the address owes, soonest first.
- ``report``: the seat's latest report again.
- ``history``: what the seat may see of its game's latest steps.

Answered at the seat's own address (never the From of the email), about that address's
seats only, in the seat's language; at most ``settings.RATES["command-email"]`` an
address (over it the email is ignored, unanswered: a loop of automatic replies ends)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import translation

from games.lib import schedule, words
from games.models import Game, Order, Seat, Step
from games.notify import reports
from games.postal import access
from moderator import ratelimit
from moderator.mail import building
from moderator.mail.models import OutboundEmail

COMMANDS = ("help", "status", "deadlines", "report", "history")
# Steps of the game ``history`` tells, the latest first.
HISTORY_STEPS = 10


def command_in(text: str) -> str | None:
    """The command ``text`` (a reply's own words) is, or None: one command word alone on
    its only line, in any case, a full stop or a question mark after it allowed."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) != 1:
        return None
    word = lines[0].lower().rstrip(".?!").strip()
    return word if word in COMMANDS else None


def over_limit(seat: Seat) -> bool:
    """Count one command from ``seat``'s address; True once the address is over its limit."""
    return ratelimit.over_limits([("command-email", seat.email.lower())])[0]


def answer(seat: Seat, command: str, *, key: str, now: datetime, kept: Any = None) -> OutboundEmail:
    """The email that answers ``command`` from ``seat``'s player (``key``: the email's
    dedupe key, one answer per email answered), in the seat's language; "conditional":
    the conditional order ``kept`` (games.postal.conditionals) is kept."""
    with translation.override(seat.speaks):
        if command == "report":
            return _report(seat, key, now)
        context: dict[str, Any] = {
            "command": command,
            "seat": seat,
            "game": seat.game,
            "kept": kept,
        }
        if command in ("status", "deadlines"):
            context["games"] = _games(seat, now, owed_only=command == "deadlines")
        elif command == "history":
            context["steps"] = _history(seat)
        if command in ("help", "history", "disarmed"):
            token = access.mint([seat], now=now)[seat.position]
            context["link"] = access.url(token)
        return building.build(
            "command",
            to=seat.email,
            dedupe_key=key,
            context=context,
            game=seat.game,
            reply_to=access.reply_address(seat) or None,
            thread=f"game-{seat.game_id}-seat-{seat.position}",
        )


def _report(seat: Seat, key: str, now: datetime) -> OutboundEmail:
    token = access.mint([seat], now=now)[seat.position]
    email = reports.current_report_email(seat.game, seat, token, now)
    email.dedupe_key = key
    return email


def _games(seat: Seat, now: datetime, *, owed_only: bool) -> list[dict[str, Any]]:
    """Each seat of ``seat``'s address in a game not over: its game, the open step and what
    it owes there (the step's prompts, None when no order is owed or it is in), with its
    deadline in the seat's time zone and a link to it; ``owed_only``: only those that owe,
    soonest first."""
    seats = list(
        Seat.objects.filter(email__iexact=seat.email)
        .exclude(game__status__in=[Game.Status.FINISHED, Game.Status.ABANDONED])
        .select_related("game")
        .defer("game__state", "game__seed")
        .order_by("game_id", "position")
    )
    steps = {
        step.game_id: step
        for step in Step.objects.filter(
            game_id__in=[each.game_id for each in seats], status=Step.Status.OPEN
        ).defer("state_before", "state_after")
    }
    answered = set(
        Order.objects.filter(step__in=steps.values())
        .exclude(source=Order.Source.DEFAULT)
        .values_list("step_id", "seat_id")
    )
    items: list[dict[str, Any]] = []
    for each in seats:
        step = steps.get(each.game_id)
        owes = (
            step is not None
            and each.position in step.prompted_seats
            and (step.pk, each.pk) not in answered
            and each.game.status == Game.Status.RUNNING
        )
        if owed_only and not owes:
            continue
        assert step is not None or not owes
        items.append(
            {
                "game": each.game,
                "seat": each,
                "step": None
                if step is None
                else words.step_name(each.game.rules.step_word, step.number),
                "owes": owes,
                "ordered": step is not None and (step.pk, each.pk) in answered,
                "prompts": words.owed(step.prompts, each.position) if owes and step else [],
                "deadline": None if step is None else schedule.local_time(step.deadline, each.zone),
                "when": None if step is None else step.deadline,
            }
        )
    if owed_only:
        items.sort(key=lambda item: (item["when"], item["game"].pk))
    tokens = access.mint_each([item["seat"] for item in items], now=now)
    for item, token in zip(items, tokens, strict=True):
        item["link"] = access.url(token)
    return items


def _history(seat: Seat) -> list[dict[str, Any]]:
    """What ``seat`` may see of its game's latest ``HISTORY_STEPS`` steps, the latest first:
    each step's number and its events, in the reader's language."""
    word = seat.game.rules.step_word
    told = reports.history(seat.game, seat.position)
    return [
        {
            "step": words.step_name(word, group["step"].number),
            "open": group["step"].closed_at is None,
            "events": group["events"],
        }
        for group in told.groups[:HISTORY_STEPS]
    ]
