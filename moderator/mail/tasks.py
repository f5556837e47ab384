"""Thin Celery entry points. Retries are not Celery's: a failed attempt is written on the
row with its next_attempt_at, and the sweep hands it out again when it is due."""

from __future__ import annotations

from collections import Counter

from celery import shared_task
from django.utils import timezone

from moderator.mail import inbound, sending, webhooks
from moderator.mail.queueing import SEND_EMAILS, SEND_URGENT_EMAILS


@shared_task(name=SEND_EMAILS, acks_late=True, reject_on_worker_lost=True)
def send_emails(*, outbound_ids: list[int]) -> dict[str, int]:
    """A batch of rows over one connection; returns how many rows ended in each state."""
    states = sending.send_batch(outbound_ids, now=timezone.now())
    return dict(Counter(states.values()))


@shared_task(name=SEND_URGENT_EMAILS, acks_late=True, reject_on_worker_lost=True)
def send_urgent_emails(*, outbound_ids: list[int]) -> dict[str, int]:
    """send_emails for email a person waits for, routed to the urgent queue (settings)."""
    return send_emails(outbound_ids=outbound_ids)


# One row per task, as enqueued before batches: kept for the tasks still in a broker
# while a release with batches rolls out.
@shared_task(name="mail.send_email", acks_late=True, reject_on_worker_lost=True)
def send_email(*, outbound_id: int) -> str:
    return sending.send(outbound_id, now=timezone.now())


@shared_task(name=inbound.READ_INBOUND, acks_late=True, reject_on_worker_lost=True)
def read_inbound(*, inbound_id: int) -> str | None:
    """Read one inbound post the webhook kept (moderator/mail/inbound.py); its state."""
    return inbound.read(inbound_id, now=timezone.now(), views=webhooks.VIEWS)
