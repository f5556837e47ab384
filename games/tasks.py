"""Thin Celery entry points: keyword-only ids, load, call one domain function."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from datetime import datetime, timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from games import postal
from games.notify import digests, player_hooks, push, reminders, webhooks
from games.records import retention
from moderator import queues
from moderator.mail import inbound, queueing, sending


@shared_task(name="games.sweep")
def sweep() -> dict[str, int]:
    """What the database says is due, apart from steps (beat, every SWEEP_SECONDS): due
    email (first attempts whose enqueue was lost, and retries), email claimed and never
    confirmed (sent again if it was never handed over, else unknown and its GM told:
    ``sending.mark_unknown``), inbound posts kept and not yet read, the same of webhook
    posts (``games.notify.webhooks``) and pushes (``games.notify.push``), reminders, and
    the daily digests (of reminders, and of reports) whose hour has come."""
    now = timezone.now()
    lost = now - timedelta(seconds=settings.SWEEP_SECONDS)
    mails = queueing.pending_ids(settings.SWEEP_BATCH, older_than=lost, now=now)
    queueing.enqueue(mails)
    unknown = sending.mark_unknown(now)
    posts = webhooks.pending_ids(settings.SWEEP_BATCH, older_than=lost, now=now)
    if posts:
        webhooks.enqueue(posts)
    webhooks.mark_stale(now)
    pushes = push.pending_ids(settings.SWEEP_BATCH, older_than=lost, now=now)
    if pushes:
        push.ROWS.enqueue(pushes)
    push.mark_stale(now)
    posted = player_hooks.pending_ids(settings.SWEEP_BATCH, older_than=lost, now=now)
    if posted:
        player_hooks.ROWS.enqueue(posted)
    player_hooks.mark_stale(now)
    unread = inbound.unread_ids(settings.SWEEP_BATCH, older_than=lost)
    inbound.hand_out(unread)
    reminded = reminders.send_reminders(now)
    reminder_digests = reminders.send_digests(now)
    daily = digests.send_daily_digests(now)
    return {
        "mails": len(mails),
        "unknown": unknown,
        "inbound": len(unread),
        "webhooks": len(posts),
        "pushes": len(pushes),
        "player_posts": len(posted),
        "reminders": reminded,
        "digests": reminder_digests,
        "daily": daily,
    }


@shared_task(name=webhooks.SEND_WEBHOOKS, acks_late=True, reject_on_worker_lost=True)
def send_webhooks(*, delivery_ids: list[int]) -> dict[str, int]:
    """Post a batch of webhook deliveries; how many rows ended in each state."""
    states = webhooks.send_batch(delivery_ids, now=timezone.now())
    return dict(Counter(states.values()))


@shared_task(name=push.SEND_PUSHES, acks_late=True, reject_on_worker_lost=True)
def send_pushes(*, delivery_ids: list[int]) -> dict[str, int]:
    """Send a batch of pushes; how many rows ended in each state."""
    states = push.send_batch(delivery_ids, now=timezone.now())
    return dict(Counter(states.values()))


@shared_task(name=player_hooks.SEND_PLAYER_POSTS, acks_late=True, reject_on_worker_lost=True)
def send_player_posts(*, delivery_ids: list[int]) -> dict[str, int]:
    """Post a batch of reminders to players' own webhooks; how many rows ended in each
    state."""
    states = player_hooks.send_batch(delivery_ids, now=timezone.now())
    return dict(Counter(states.values()))


@shared_task(name="games.hand_out_steps")
def hand_out_steps() -> int:
    """Due steps to the workers (beat, every STEP_SWEEP_SECONDS, on the urgent queue so
    that a rush of steps never delays it): tasks published; see ``top_up_steps``."""
    return top_up_steps(timezone.now(), waiting=queues.waiting(settings.STEPS_QUEUE))


def top_up_steps(now: datetime, *, waiting: int) -> int:
    """Enough resolve_due_steps tasks for every due step, STEP_BATCH steps to a task,
    counting the ``waiting`` in the steps queue already; returns how many it published.

    The tasks claim their steps when they run (postal.resolve_due_steps), so a rush of
    deadlines goes to the workers as fast as they take it, whatever its size, and a task
    published twice finds nothing left and ends at once. A task's overhead (its message,
    its acknowledgement, the wait for the next one) is paid once per STEP_BATCH steps."""
    size = settings.STEP_BATCH
    due = postal.count_due_steps(now, most=size * settings.STEP_TASKS_MOST)
    missing = -(-due // size) - waiting
    for _ in range(missing):
        resolve_due_steps.delay(limit=size)
    return max(missing, 0)


@shared_task(name="games.resolve_due_steps", acks_late=True, reject_on_worker_lost=True)
def resolve_due_steps(*, limit: int) -> int:
    """Up to ``limit`` due steps, claimed and resolved one after another; how many this
    task resolved. Its steps' reports go to the mail workers together at the end."""
    with queueing.enqueue_after():
        return postal.resolve_due_steps(now=timezone.now(), limit=limit)


@shared_task(name=postal.SEND_LOST_LINKS)
def send_lost_links(*, email: str) -> int:
    """The links of the address's seats, asked for on the home page (its request only
    publishes this task: ``postal.ask_lost_links``); how many seats."""
    return postal.send_lost_links(email, now=timezone.now())


@shared_task(name="games.write_receipts", acks_late=True, reject_on_worker_lost=True)
def write_receipts() -> int:
    """The receipts accepted orders are owed (beat, every RECEIPT_SECONDS), written to the
    outbox and handed to the mail workers; how many this run wrote."""
    return postal.write_receipts(now=timezone.now())


# Published before resolve_due_steps existed: kept for the messages still in a broker while
# a release with claiming rolls out.
@shared_task(name="games.resolve_steps", acks_late=True, reject_on_worker_lost=True)
def resolve_steps(*, step_ids: list[int]) -> int:
    """Each step in its own transaction, one after another; how many this task resolved.
    Delivered again after a worker died, it skips the steps already resolved."""
    with queueing.enqueue_after():
        return sum(postal.resolve_due_step(step_id, now=timezone.now()) for step_id in step_ids)


@shared_task(name="games.resolve_step", acks_late=True, reject_on_worker_lost=True)
def resolve_step(*, step_id: int) -> bool:
    """One step (messages sent before resolve_steps existed, and tools)."""
    return postal.resolve_due_step(step_id, now=timezone.now())


@shared_task(name="games.prune_broker")
def prune_broker() -> int:
    """The messages workers have taken, out of the embedded default's broker (beat, every
    ten minutes, on that broker only: moderator/queues.py); how many."""
    return queues.prune_delivered()


@shared_task(name="games.prune")
def prune() -> dict[str, int]:
    """What is past its retention (beat, daily: games.records.retention); how many of each
    kind were pruned."""
    return asdict(retention.prune(now=timezone.now()))
