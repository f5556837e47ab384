"""Thin Celery entry points: keyword-only ids, load, call one domain function."""

from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from games import postal, reminders
from moderator.mail import outbox


@shared_task(name="games.sweep")
def sweep() -> dict[str, int]:
    """What the database says is due, handed to the workers (beat, every SWEEP_SECONDS):
    due steps, due email (first attempts whose enqueue was lost, and retries), email never
    confirmed (marked unknown, not sent again) and reminders."""
    now = timezone.now()
    steps = postal.due_step_ids(now)
    for step_id in steps:
        resolve_step.delay(step_id=step_id)
    lost = now - timedelta(seconds=settings.SWEEP_SECONDS)
    mails = outbox.pending_ids(settings.SWEEP_BATCH, older_than=lost, now=now)
    outbox.enqueue(mails)
    unknown = outbox.mark_unknown(now)
    reminded = reminders.send_reminders(now)
    digests = reminders.send_digests(now)
    return {
        "steps": len(steps),
        "mails": len(mails),
        "unknown": unknown,
        "reminders": reminded,
        "digests": digests,
    }


@shared_task(name="games.resolve_step", acks_late=True, reject_on_worker_lost=True)
def resolve_step(*, step_id: int) -> bool:
    return postal.resolve_due_step(step_id, now=timezone.now())
