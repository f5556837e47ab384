"""The receipts orders are owed, written by the workers: claimed in batches, coalesced per
seat and step, each with a new link."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef

from games.models import Order
from games.notify import reports
from games.postal import access
from moderator.mail import queueing


def write_receipts(*, now: datetime) -> int:
    """Write the receipts orders are owed, oldest first, MAIL_BATCH to a transaction, until
    none is left or SWEEP_BATCH are written (the next run takes the rest); returns how
    many. Each goes to the mail workers when its transaction commits."""
    written = 0
    while written < settings.SWEEP_BATCH:
        batch = _write_receipt_batch(now, min(settings.MAIL_BATCH, settings.SWEEP_BATCH - written))
        if not batch:
            break
        written += batch
    return written


def _write_receipt_batch(now: datetime, size: int) -> int:
    """Up to ``size`` orders' receipts, each with a new link, in one transaction; returns
    how many orders it took. The orders are claimed in it (their rows locked, skipped by
    anyone else holding them, their marks cleared), so two runs at once, or a run
    delivered again, write each receipt once.

    Receipts are coalesced: a seat gets at most one receipt per step every
    RECEIPT_WINDOW_SECONDS. Orders of a seat whose receipt for the step went out less than
    that ago wait, marked, until the window has passed; then one receipt names the latest
    of them (with what each did at once, for orders that took effect at once)."""
    recent = Order.objects.filter(
        step=OuterRef("step"),
        seat=OuterRef("seat"),
        receipt_at__gt=now - timedelta(seconds=settings.RECEIPT_WINDOW_SECONDS),
    )
    with transaction.atomic():
        orders = list(
            Order.objects.select_related("seat", "step__game__gm")
            .select_for_update(of=("self",), skip_locked=True)
            .filter(receipt_due=True)
            .exclude(Exists(recent))
            .order_by("id")[:size]
        )
        if not orders:
            return 0
        latest: dict[tuple[int, int], Order] = {}
        results: dict[tuple[int, int], list[str]] = {}
        for order in orders:  # by id: the latest of a seat's orders in a step comes last
            key = (order.step_id, order.seat_id)
            latest[key] = order
            results.setdefault(key, []).extend(order.results)
        Order.objects.filter(pk__in=[order.pk for order in orders]).update(receipt_due=False)
        Order.objects.filter(pk__in=[order.pk for order in latest.values()]).update(receipt_at=now)
        receipted = list(latest.items())
        for _, order in receipted:
            # The seat's zone may be its game's: the game is at hand, not to be queried.
            order.seat.game = order.step.game
        tokens = access.mint_each([order.seat for _, order in receipted], now=now)
        queueing.queue(
            [
                reports.receipt_email(order.step.game, order.seat, order, token, results[key])
                for (key, order), token in zip(receipted, tokens, strict=True)
            ],
            urgent=True,
        )
    return len(orders)
