"""The one email builder and the outbox sender.

Every email is rendered from three templates, ``emails/<kind>/subject.txt``, ``body.txt``
and ``body.html``, into an ``OutboundEmail`` row written in the same transaction as the
change it reports. Sending claims the row (pending -> sending) so that a row is handed to
the backend once, whoever asks.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.db.models import F
from django.template.loader import render_to_string
from django.utils import timezone

from moderator.mail.models import OutboundEmail

log = logging.getLogger(__name__)


class HeaderInjection(ValueError):
    pass


def clean_header(value: str, what: str) -> str:
    if "\r" in value or "\n" in value:
        raise HeaderInjection(f"{what} must be a single line")
    return value


def build(
    kind: str,
    *,
    to: str,
    dedupe_key: str,
    context: Mapping[str, Any],
    headers: Mapping[str, str] | None = None,
) -> OutboundEmail:
    """An unsaved outbox row for email ``kind`` rendered with ``context``."""
    subject = " ".join(render_to_string(f"emails/{kind}/subject.txt", context).split())
    return OutboundEmail(
        dedupe_key=dedupe_key,
        kind=kind,
        to=clean_header(to, "the address"),
        subject=clean_header(subject, "the subject"),
        text=render_to_string(f"emails/{kind}/body.txt", context),
        html=render_to_string(f"emails/{kind}/body.html", context),
        headers={name: clean_header(value, name) for name, value in (headers or {}).items()},
    )


def queue(rows: list[OutboundEmail]) -> list[OutboundEmail]:
    """Write the rows (one query) and hand them to the sender once the transaction commits."""
    created = OutboundEmail.objects.bulk_create(rows, ignore_conflicts=False)
    ids = [row.pk for row in created if row.pk is not None]
    if ids:
        transaction.on_commit(lambda: enqueue(ids))
    return created


def enqueue(ids: list[int]) -> None:
    from moderator.mail.tasks import send_email

    for outbound_id in ids:
        send_email.delay(outbound_id=outbound_id)


def pending_ids(limit: int, *, older_than: datetime) -> list[int]:
    """Pending rows created before ``older_than``: those whose enqueue may have been lost."""
    return list(
        OutboundEmail.objects.filter(state=OutboundEmail.State.PENDING, created_at__lt=older_than)
        .order_by("id")
        .values_list("id", flat=True)[:limit]
    )


def send(outbound_id: int) -> str:
    """Send one outbox row if it is still pending; returns the row's state afterwards."""
    claimed = OutboundEmail.objects.filter(
        pk=outbound_id, state=OutboundEmail.State.PENDING
    ).update(state=OutboundEmail.State.SENDING, attempts=F("attempts") + 1)
    if not claimed:
        state = OutboundEmail.objects.filter(pk=outbound_id).values_list("state", flat=True)
        return state.first() or "missing"
    row = OutboundEmail.objects.get(pk=outbound_id)
    try:
        message = _message(row)
        message.send()
    except Exception as error:  # every failure is recorded on the row
        log.warning("sending outbox row %s failed: %s", outbound_id, error)
        OutboundEmail.objects.filter(pk=outbound_id).update(
            state=OutboundEmail.State.FAILED, last_error=str(error)[:2000]
        )
        return OutboundEmail.State.FAILED
    esp_id = getattr(message, "anymail_status", None)
    OutboundEmail.objects.filter(pk=outbound_id).update(
        state=OutboundEmail.State.SENT,
        sent_at=timezone.now(),
        esp_message_id=str(getattr(esp_id, "message_id", "") or "")[:200],
    )
    return OutboundEmail.State.SENT


def _message(row: OutboundEmail) -> EmailMultiAlternatives:
    """The message for ``row``; headers are checked again, whatever was stored."""
    message = EmailMultiAlternatives(
        subject=clean_header(row.subject, "the subject"),
        body=row.text,
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[clean_header(row.to, "the address")],
        headers={name: clean_header(value, name) for name, value in row.headers.items()},
    )
    if row.html:
        message.attach_alternative(row.html, "text/html")
    return message
