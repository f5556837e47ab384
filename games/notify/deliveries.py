"""The life of a row posted out of the service after its transaction commits: a webhook's
event (games.notify.webhooks) and a browser's push (games.notify.push). Both rows have the
same fields (``state``, ``attempts``, ``last_error``, ``next_attempt_at``,
``sending_since``, ``created_at``, ``sent_at``), and the same life::

    pending --claim--> sending --> sent
                          |------> pending again, with next_attempt_at (5xx, 408, 429,
                          |        no connection)
                          |------> failed (4xx, a redirect, out of attempts, or no
                          |        answer after the post: maybe delivered)
                          '------> failed (the sweep: never confirmed)

A row is posted at most once: it is claimed (pending -> sending) by a conditional UPDATE
before its post, so the sweep and a task racing for it post it once. Retries follow the
email's settings (``MAIL_RETRY_*``, ``MAIL_MAX_ATTEMPTS``)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from functools import partial
from typing import Any, cast

from celery import current_app
from django.conf import settings
from django.db import models, transaction
from django.db.models import F, Q

from moderator.mail.sending import retry_delay

log = logging.getLogger(__name__)

PENDING, SENDING, SENT, FAILED = "pending", "sending", "sent", "failed"
NEVER_CONFIRMED = "posted, never confirmed: it may have arrived, so it is not posted again"
# Too many requests, request timeout: the receiver asks us to come back later.
RETRY_LATER_STATUS = frozenset({408, 429})

Logger = Callable[[Any, str, int, str], None]


class Rows:
    """The rows of ``model`` that a Celery task named ``task`` posts; ``related``: what a
    claimed row is read with; ``said``: one log line for a row's outcome."""

    def __init__(self, model: type[models.Model], task: str, related: str, said: Logger) -> None:
        self.model, self.task, self.related, self.said = model, task, related, said
        # Each of the models declares ``objects`` (the stubs know no manager of a Model).
        self.objects: Any = cast(Any, model).objects

    def write(self, rows: Sequence[Any]) -> list[int]:
        """The rows whose dedupe key is new, written (in the caller's transaction) and
        handed to the workers once it commits; returns the ids of those pending."""
        if not rows:
            return []
        self.objects.bulk_create(rows, ignore_conflicts=True)
        ids = list(
            self.objects.filter(
                state=PENDING, dedupe_key__in=[row.dedupe_key for row in rows]
            ).values_list("id", flat=True)
        )
        if ids:
            transaction.on_commit(partial(self.enqueue, ids))
        return ids

    def enqueue(self, ids: list[int]) -> None:
        """Hand the rows to the workers (one task). With the broker away nothing is lost:
        the rows stay pending and the sweep hands them out."""
        try:
            current_app.tasks[self.task].delay(delivery_ids=ids)
        except Exception:
            log.warning("could not enqueue %s %s; the sweep will", self.task, ids, exc_info=True)

    def pending_ids(self, limit: int, *, older_than: datetime, now: datetime) -> list[int]:
        """Pending rows that are due: a retry whose time has come, or a first attempt
        written before ``older_than`` (its hand-over may have been lost)."""
        return list(
            self.objects.filter(state=PENDING)
            .filter(
                Q(next_attempt_at__isnull=True, created_at__lt=older_than)
                | Q(next_attempt_at__lte=now)
            )
            .order_by("id")
            .values_list("id", flat=True)[:limit]
        )

    def mark_stale(self, now: datetime) -> int:
        """Rows posted longer than MAIL_SENDING_TIMEOUT_SECONDS ago and never confirmed
        (the worker died mid-post) fail: they may have arrived. Returns how many."""
        stale = now - timedelta(seconds=settings.MAIL_SENDING_TIMEOUT_SECONDS)
        return int(
            self.objects.filter(state=SENDING, sending_since__lt=stale).update(
                state=FAILED, last_error=NEVER_CONFIRMED, next_attempt_at=None
            )
        )

    def send_batch(
        self, ids: Sequence[int], post: Callable[[Any], str], *, now: datetime
    ) -> dict[int, str]:
        """``post`` every row of ``ids`` that is pending and due, one after another;
        returns the state of each row this call claimed (the others are absent)."""
        states: dict[int, str] = {}
        for pk in sorted(set(ids)):
            row = self.claim(pk, now)
            if row is not None:
                states[pk] = post(row)
        return states

    def claim(self, pk: int, now: datetime) -> Any:
        due = Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now)
        claimed = self.objects.filter(due, pk=pk, state=PENDING).update(
            state=SENDING, attempts=F("attempts") + 1, sending_since=now
        )
        if not claimed:
            return None
        return self.objects.select_related(self.related).get(pk=pk)

    def attempt(self, row: Any) -> Any:
        """The row as claimed: an update through it does nothing once the sweep has
        failed the row as never confirmed."""
        return self.objects.filter(pk=row.pk, state=SENDING, sending_since=row.sending_since)

    def sent(self, row: Any, now: datetime) -> str:
        self.attempt(row).update(state=SENT, sent_at=now, next_attempt_at=None, last_error="")
        self.said(row, "sent", logging.INFO, "")
        return SENT

    def retry(self, row: Any, reason: str, now: datetime) -> str:
        if row.attempts >= settings.MAIL_MAX_ATTEMPTS:
            return self.fail(row, f"gave up after {row.attempts} attempts; the last one: {reason}")
        self.attempt(row).update(
            state=PENDING, last_error=reason, next_attempt_at=now + retry_delay(row.attempts)
        )
        self.said(row, "retry", logging.INFO, reason)
        return PENDING

    def fail(self, row: Any, reason: str) -> str:
        self.attempt(row).update(state=FAILED, last_error=reason, next_attempt_at=None)
        self.said(row, "failed", logging.WARNING, reason)
        return FAILED

    def answered(self, row: Any, status: int, reason: str, now: datetime) -> str:
        """An answer other than 2xx: tried again later when the server asks for it (5xx,
        408, 429), else failed."""
        said = f"the server answered {status} {reason}"
        transient = status >= 500 or status in RETRY_LATER_STATUS
        return self.retry(row, said, now) if transient else self.fail(row, said)
