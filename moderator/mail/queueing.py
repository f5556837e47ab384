"""Queueing: outbox rows are written in the transaction of the change they report, and
handed to the mail workers once it commits (``transaction.on_commit``). Nothing is lost
if the hand-over is: the sweep hands out pending rows that are due (``pending_ids``).

The mail workers' task is published by its name through Celery's task registry, not
imported: the task module imports the sending domain, which queues (a GM's alert) and
enqueues (rows handed back), so importing the task here would close an import loop. The
registry holds the task once its module is imported: by the worker's autodiscovery, and in
every other process by the mail app's ``ready()``. Looked up there, the task is the same
object its module defines, so eager mode and a test's stand-in for ``delay`` apply as they
would to a direct import.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from functools import partial

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import BooleanField, Func, Q
from django.utils import timezone

from moderator.mail.models import OutboundEmail

log = logging.getLogger(__name__)

State = OutboundEmail.State
# The tasks that send a batch of rows (moderator/mail/tasks.py): the same work, routed to
# the mail queue, or to the urgent queue for email a person waits for (settings).
SEND_EMAILS = "mail.send_emails"
SEND_URGENT_EMAILS = "mail.send_urgent_emails"


class OnTheRow(Func):
    """``(condition) IS TRUE``: the same rows as ``condition``, which no index answers.

    A batch's rows are claimed and recorded by primary key (new rows found by their
    dedupe key), their state checked on the row.
    Left to choose, PostgreSQL finds them through outbox_due by their state whenever its
    statistics say that few rows are pending or sending, which is what they say just after
    a burst of reports (the sweep resolving many steps): it then reads every entry of that
    state, dead row versions too, for each group, where the primary key finds each row at
    once."""

    template = "(%(expressions)s) IS TRUE"
    output_field = BooleanField()


def queue(rows: list[OutboundEmail], *, urgent: bool = False) -> list[OutboundEmail]:
    """Write the rows (one query) and hand them to the sender once the transaction commits.
    ``urgent``: email a person is waiting for (a receipt, a link), sent ahead of a rush of
    reports."""
    OutboundEmail.objects.bulk_create(rows)
    if rows:
        transaction.on_commit(partial(enqueue, [row.pk for row in rows], urgent=urgent))
    return rows


def queue_once(rows: list[OutboundEmail], *, urgent: bool = False) -> list[int]:
    """Write the rows whose dedupe key is new, skip the others, and hand every one of them
    that is still pending to the sender once the transaction commits (two queries)."""
    OutboundEmail.objects.bulk_create(rows, ignore_conflicts=True)
    ids = list(
        OutboundEmail.objects.filter(
            OnTheRow(Q(state=State.PENDING)), dedupe_key__in=[row.dedupe_key for row in rows]
        )
        .order_by("id")
        .values_list("id", flat=True)
    )
    if ids:
        transaction.on_commit(partial(enqueue, ids, urgent=urgent))
    return ids


# Rows whose hand-over waits for the end of an enqueue_after() block (None: no block).
_held: ContextVar[list[int] | None] = ContextVar("outbox_held", default=None)


@contextmanager
def enqueue_after() -> Iterator[None]:
    """Rows enqueued inside the block (committed: enqueue runs after each commit) are
    handed to the mail workers once, when it ends, in MAIL_BATCH tasks: a worker resolving
    ten steps publishes one mail task, not ten. Should the process die first, the rows are
    pending in the database and the sweep hands them out."""
    token = _held.set([])
    try:
        yield
    finally:
        ids = _held.get() or []
        _held.reset(token)
        enqueue(ids)


def enqueue(ids: list[int], *, urgent: bool = False) -> None:
    """Hand the rows to the mail workers, one task per MAIL_BATCH rows (``urgent``: on the
    urgent queue, not held by enqueue_after). With the broker away (Redis stopped) nothing
    is lost: the rows stay pending and the sweep hands them out once the broker is back, so
    the person whose request wrote them is not told of an error that is not theirs."""
    held = _held.get()
    if held is not None and not urgent:
        held.extend(ids)
        return

    send_emails = current_app.tasks[SEND_URGENT_EMAILS if urgent else SEND_EMAILS]
    size = settings.MAIL_BATCH
    for start in range(0, len(ids), size):
        try:
            send_emails.delay(outbound_ids=ids[start : start + size])
        except Exception:
            log.warning(
                "could not enqueue outbox rows %s; the sweep will send them",
                ids[start:],
                exc_info=True,
            )
            return


def pending_ids(limit: int, *, older_than: datetime, now: datetime | None = None) -> list[int]:
    """Pending rows that are due: a retry whose time has come, or a first attempt created
    before ``older_than`` (its enqueue may have been lost)."""
    now = now or timezone.now()
    return list(
        OutboundEmail.objects.filter(state=State.PENDING)
        .filter(
            Q(next_attempt_at__isnull=True, created_at__lt=older_than) | Q(next_attempt_at__lte=now)
        )
        .order_by("id")
        .values_list("id", flat=True)[:limit]
    )


def withdraw(game_id: int, kinds: Sequence[str]) -> int:
    """Take back the rows of ``kinds`` about game ``game_id`` not yet handed to a sender
    (pending: never sent, or waiting to be tried again): what they say is no longer true
    (a reminder of a deadline in a game now over). Their tasks find nothing to send.
    Returns how many."""
    withdrawn, _ = OutboundEmail.objects.filter(
        game_id=game_id, kind__in=list(kinds), state=State.PENDING
    ).delete()
    if withdrawn:
        log.info("withdrew %d unsent %s emails of game %d", withdrawn, "/".join(kinds), game_id)
    return withdrawn
