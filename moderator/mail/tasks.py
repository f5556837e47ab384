"""Thin Celery entry points. Retries are not Celery's: a failed attempt is written on the
row with its next_attempt_at, and the sweep hands it out again when it is due."""

from __future__ import annotations

from collections import Counter

from celery import shared_task
from django.utils import timezone

from moderator.mail import outbox


@shared_task(name="mail.send_emails", acks_late=True, reject_on_worker_lost=True)
def send_emails(*, outbound_ids: list[int]) -> dict[str, int]:
    """A batch of rows over one connection; returns how many rows ended in each state."""
    states = outbox.send_batch(outbound_ids, now=timezone.now())
    return dict(Counter(states.values()))


# One row per task, as enqueued before batches: kept for the tasks still in a broker
# while a release with batches rolls out.
@shared_task(name="mail.send_email", acks_late=True, reject_on_worker_lost=True)
def send_email(*, outbound_id: int) -> str:
    return outbox.send(outbound_id, now=timezone.now())
