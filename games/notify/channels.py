"""The channels that reach a seat's player, and whether each works (docs/players.md, "How
you are reached"): email (its last email of the game, and a bounce the provider reported:
``Seat.email_failing``) and push (each browser's last push and last failure). A reminder's
rung goes by a channel that works (``reminders``): a push rung by email when no browser
takes pushes, an email rung by push when the address bounces and a browser does. The GM
sees the seats that no channel reaches."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from django.db import transaction

from games.models import PushSubscription, Seat
from games.notify import push, reports
from games.postal import access
from moderator.mail import queueing
from moderator.mail.models import OutboundEmail


def push_works(subscription: PushSubscription) -> bool:
    """Whether a browser takes pushes: none failed since the last one it took."""
    if subscription.last_failed_at is None:
        return True
    return subscription.last_sent_at is not None and subscription.last_sent_at > (
        subscription.last_failed_at
    )


def pushable(browsers: Iterable[PushSubscription]) -> bool:
    return any(push_works(browser) for browser in browsers)


def reached_by_push(seats: Sequence[Seat]) -> set[int]:
    """The ids of ``seats`` a browser takes pushes for (one query; none without push)."""
    if not push.enabled():
        return set()
    return {seat_id for seat_id, found in push.by_seat(seats).items() if pushable(found)}


def unreachable(seats: Sequence[Seat]) -> list[Seat]:
    """The seats whose address bounces and that no browser takes pushes for."""
    failing = [seat for seat in seats if seat.email_failing]
    if not failing:
        return []
    pushed = reached_by_push(failing)
    return [seat for seat in failing if seat.pk not in pushed]


def email_of(seat: Seat) -> dict[str, Any]:
    """The seat's email channel: its address, the last email of the game sent to it, and
    what the provider last reported of a failure."""
    last = (
        OutboundEmail.objects.filter(
            game_id=seat.game_id, to=seat.email, state=OutboundEmail.State.SENT
        )
        .order_by("-sent_at")
        .values_list("sent_at", flat=True)
        .first()
    )
    return {
        "address": seat.email,
        "last_sent_at": last,
        "failing": seat.email_failing,
        "failing_at": seat.email_failing_at,
    }


def test_email(seat: Seat, now: datetime) -> OutboundEmail:
    """The seat's latest report emailed again, at once: what the email channel brings."""
    with transaction.atomic():
        token = access.mint([seat], now=now)[seat.position]
        email = reports.current_report_email(seat.game, seat, token, now)
        email.dedupe_key = f"test:{seat.pk}:{int(now.timestamp() * 1000)}"
        queueing.queue([email], urgent=True)
    return email
