"""Thin Celery entry points: keyword-only ids, load, call one domain function."""

from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from games import postal
from moderator.mail import outbox
from moderator.mail.tasks import send_email


@shared_task(name="games.sweep")
def sweep() -> dict[str, int]:
    """Hand every due step and every pending email to the workers (beat, every 30 s)."""
    now = timezone.now()
    steps = postal.due_step_ids(now)
    for step_id in steps:
        resolve_step.delay(step_id=step_id)
    lost = now - timedelta(seconds=settings.SWEEP_SECONDS)
    mails = outbox.pending_ids(settings.SWEEP_BATCH, older_than=lost)
    for outbound_id in mails:
        send_email.delay(outbound_id=outbound_id)
    return {"steps": len(steps), "mails": len(mails)}


@shared_task(name="games.resolve_step", acks_late=True, reject_on_worker_lost=True)
def resolve_step(*, step_id: int) -> bool:
    return postal.resolve_due_step(step_id, now=timezone.now())
