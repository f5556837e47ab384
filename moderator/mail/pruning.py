"""Pruning the outbox: the body of an email whose sending is over (sent, failed, or
handed over with its outcome unknown) is removed MAIL_RETENTION_DAYS after the row was
written (DESIGN.md section 10). Reports carry a whole board each, most of what the
database would otherwise keep per step; the row itself stays (to whom, the subject, how
the sending went, its Message-ID and dedupe key), so the GM's mail list still reads, a
reminder or digest written once is still written once, and a webhook still finds its
message. Game records, dice and orders live elsewhere and are never pruned.

A pruned email cannot be sent again (``sending.send_again`` refuses it): there is nothing
left to send.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction

from moderator.mail.models import OutboundEmail

State = OutboundEmail.State
# The states in which nothing will send a row again by itself (outbox_unpruned's too).
OVER = (State.SENT, State.FAILED, State.UNKNOWN)
# Rows pruned per transaction: each batch holds its rows' locks only while it runs.
BATCH = 500


def cutoff(now: datetime) -> datetime:
    """Bodies of rows written before this are pruned."""
    return now - timedelta(days=settings.MAIL_RETENTION_DAYS)


def prune_bodies(*, now: datetime, batch: int = BATCH) -> int:
    """Remove the bodies of the emails past retention, ``batch`` rows to a transaction,
    until none is left; returns how many were pruned. Rows another transaction holds
    (a webhook recording a delivery) are skipped, for the next run."""
    pruned = 0
    while count := _prune_batch(cutoff(now), now, batch):
        pruned += count
    return pruned


def _prune_batch(before: datetime, now: datetime, size: int) -> int:
    with transaction.atomic():
        ids = list(
            OutboundEmail.objects.select_for_update(skip_locked=True)
            .filter(pruned_at__isnull=True, state__in=OVER, created_at__lt=before)
            .order_by("created_at")
            .values_list("pk", flat=True)[:size]
        )
        if not ids:
            return 0
        return OutboundEmail.objects.filter(pk__in=ids).update(
            text="", html="", attachments=[], pruned_at=now
        )
