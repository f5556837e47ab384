"""Thin Celery entry points. Retries are not Celery's: a failed attempt is written on the
row with its next_attempt_at, and the sweep hands it out again when it is due."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from moderator.mail import outbox


@shared_task(name="mail.send_email", acks_late=True, reject_on_worker_lost=True)
def send_email(*, outbound_id: int) -> str:
    return outbox.send(outbound_id, now=timezone.now())
