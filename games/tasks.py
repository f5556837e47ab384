"""Thin Celery entry points: keyword-only ids, load, call one domain function."""

from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from games import digests, postal, reminders, retention
from moderator.mail import queueing, sending


@shared_task(name="games.sweep")
def sweep() -> dict[str, int]:
    """What the database says is due, handed to the workers (beat, every SWEEP_SECONDS):
    due steps, due email (first attempts whose enqueue was lost, and retries), email never
    confirmed (marked unknown, not sent again), reminders, and the daily digests (of
    reminders, and of reports) whose hour has come."""
    now = timezone.now()
    steps = postal.due_step_ids(now)
    hand_out_steps(steps)
    lost = now - timedelta(seconds=settings.SWEEP_SECONDS)
    mails = queueing.pending_ids(settings.SWEEP_BATCH, older_than=lost, now=now)
    queueing.enqueue(mails)
    unknown = sending.mark_unknown(now)
    reminded = reminders.send_reminders(now)
    reminder_digests = reminders.send_digests(now)
    daily = digests.send_daily_digests(now)
    return {
        "steps": len(steps),
        "mails": len(mails),
        "unknown": unknown,
        "reminders": reminded,
        "digests": reminder_digests,
        "daily": daily,
    }


def hand_out_steps(step_ids: list[int]) -> None:
    """Due steps to the workers, STEP_BATCH to a task: a task's overhead (its message, its
    acknowledgement, the wait for the next one) is paid once per batch, and every worker
    still gets its share of a large sweep."""
    size = settings.STEP_BATCH
    for start in range(0, len(step_ids), size):
        resolve_steps.delay(step_ids=step_ids[start : start + size])


@shared_task(name="games.write_receipts", acks_late=True, reject_on_worker_lost=True)
def write_receipts() -> int:
    """The receipts accepted orders are owed (beat, every RECEIPT_SECONDS), written to the
    outbox and handed to the mail workers; how many this run wrote."""
    return postal.write_receipts(now=timezone.now())


@shared_task(name="games.resolve_steps", acks_late=True, reject_on_worker_lost=True)
def resolve_steps(*, step_ids: list[int]) -> int:
    """Each step in its own transaction, one after another; how many this task resolved.
    Delivered again after a worker died, it skips the steps already resolved. The reports
    of all of them go to the mail workers together at the end."""
    with queueing.enqueue_after():
        return sum(postal.resolve_due_step(step_id, now=timezone.now()) for step_id in step_ids)


@shared_task(name="games.resolve_step", acks_late=True, reject_on_worker_lost=True)
def resolve_step(*, step_id: int) -> bool:
    """One step (messages sent before resolve_steps existed, and tools)."""
    return postal.resolve_due_step(step_id, now=timezone.now())


@shared_task(name="games.prune")
def prune() -> dict[str, int]:
    """Bodies of delivered email and expired links past their retention (beat, daily);
    how many of each were pruned."""
    pruned = retention.prune(now=timezone.now())
    return {"bodies": pruned.bodies, "links": pruned.links}
