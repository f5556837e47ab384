"""The one email builder and the outbox sender.

Every email is rendered from three templates, ``emails/<kind>/subject.txt``, ``body.txt``
and ``body.html``, into an ``OutboundEmail`` row written in the same transaction as the
change it reports. Sending claims the row (pending -> sending) so that a row is handed to
the backend once, whoever asks.

The row's life::

    pending --claim--> sending --> sent
       ^                  |------> pending again, with next_attempt_at (transient failure)
       |                  |------> failed, and the GM is told (permanent, or out of attempts)
       |                  '------> unknown (the sweep: never confirmed; maybe delivered)
       '---- send_again <-------- failed / unknown (a human's decision, never automatic)

Retries are driven by the row's ``next_attempt_at`` and picked up by the sweep; nothing
waits in the broker.
"""

from __future__ import annotations

import enum
import logging
import random
import re
import smtplib
from collections.abc import Mapping
from datetime import datetime, timedelta
from email.utils import getaddresses, make_msgid
from typing import TYPE_CHECKING, Any

from anymail.exceptions import (
    AnymailAPIError,
    AnymailInvalidAddress,
    AnymailRecipientsRefused,
)
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import BadHeaderError, EmailMultiAlternatives
from django.core.validators import validate_email
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.template.loader import render_to_string
from django.utils import timezone

from moderator.mail.models import OutboundEmail

if TYPE_CHECKING:
    from games.models import Game

log = logging.getLogger(__name__)

State = OutboundEmail.State
THREAD_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
# Too many requests, request timeout: the ESP asks us to come back later.
RETRY_LATER_STATUS = frozenset({408, 429})


class HeaderInjection(ValueError):
    pass


# --- building ---------------------------------------------------------------------------


# Every character str.splitlines() breaks at: some mail libraries and ESP APIs fold or
# split header values on these too, not only on CR and LF.
LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def clean_header(value: str, what: str) -> str:
    if any(char in LINE_BREAKS for char in value):
        raise HeaderInjection(f"{what} must be a single line")
    if any(ord(char) < 32 or ord(char) == 127 for char in value):
        raise HeaderInjection(f"{what} must not hold control characters")
    return value


def clean_address(value: str, what: str) -> str:
    """``value`` if it is exactly one valid address (``a@b`` or ``Name <a@b>``)."""
    clean_header(value, what)
    addresses = getaddresses([value])
    if len(addresses) != 1:
        raise HeaderInjection(f"{what} must be one address")
    try:
        validate_email(addresses[0][1])
    except ValidationError:
        raise HeaderInjection(f"{what} must be one address") from None
    return value


def clean_thread(value: str) -> str:
    if value and not THREAD_KEY.fullmatch(value):
        raise HeaderInjection("the thread key must be letters, digits, '.', '_' or '-'")
    return value


def build(
    kind: str,
    *,
    to: str,
    dedupe_key: str,
    context: Mapping[str, Any],
    headers: Mapping[str, str] | None = None,
    game: Game | None = None,
    thread: str | None = None,
    reply_to: str | None = None,
    attachments: list[dict[str, str]] | None = None,
) -> OutboundEmail:
    """An unsaved outbox row for email ``kind`` rendered with ``context``.

    Every header value is checked here, at input, and again when the message is built."""
    email = OutboundEmail(
        dedupe_key=dedupe_key,
        kind=kind,
        game=game,
        to=clean_address(to, "the address"),
        reply_to=clean_address(reply_to, "the reply address") if reply_to else "",
        thread=clean_thread(thread or ""),
        headers={
            clean_header(name, "a header name"): clean_header(value, name)
            for name, value in (headers or {}).items()
        },
        attachments=[
            {
                "filename": clean_header(item["filename"], "an attachment's name"),
                "content": item["content"],
                "mimetype": clean_header(item["mimetype"], "an attachment's type"),
            }
            for item in attachments or []
        ],
    )
    subject = " ".join(render_to_string(f"emails/{kind}/subject.txt", context).split())
    email.subject = clean_header(subject, "the subject")
    email.text = render_to_string(f"emails/{kind}/body.txt", context)
    email.html = render_to_string(f"emails/{kind}/body.html", context)
    return email


def _message(row: OutboundEmail) -> EmailMultiAlternatives:
    """The message for ``row``: the one place headers are set. Whatever was stored is
    checked again; a line break anywhere raises HeaderInjection."""
    domain = settings.MAIL_DOMAIN
    ours = {"Message-ID": clean_header(row.message_id, "the Message-ID")}
    if row.thread:
        root = f"<{clean_thread(row.thread)}@{domain}>"
        ours |= {"In-Reply-To": root, "References": root}
    if row.game_id is not None:
        ours["List-Id"] = f"<game-{row.game_id}.{domain}>"
    taken = {name.lower() for name in ours} | {"reply-to", "to", "from", "subject"}
    headers = {
        clean_header(name, "a header name"): clean_header(value, name)
        for name, value in row.headers.items()
        if name.lower() not in taken
    } | ours
    message = EmailMultiAlternatives(
        subject=clean_header(row.subject, "the subject"),
        body=row.text,
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[clean_address(row.to, "the address")],
        reply_to=[clean_address(row.reply_to, "the reply address")] if row.reply_to else None,
        headers=headers,
    )
    if row.html:
        message.attach_alternative(row.html, "text/html")
    for item in row.attachments:
        message.attach(
            clean_header(item["filename"], "an attachment's name"),
            item["content"],
            clean_header(item["mimetype"], "an attachment's type"),
        )
    # ESPs echo metadata in their tracking events: a row whose send was never confirmed
    # ("unknown") is still found when the ESP reports it (anymail; other backends ignore it).
    message.metadata = {"outbox": str(row.pk)}  # type: ignore[attr-defined]
    return message


# --- queueing ---------------------------------------------------------------------------


def queue(rows: list[OutboundEmail]) -> list[OutboundEmail]:
    """Write the rows (one query) and hand them to the sender once the transaction commits."""
    created = OutboundEmail.objects.bulk_create(rows, ignore_conflicts=False)
    ids = [row.pk for row in created if row.pk is not None]
    if ids:
        transaction.on_commit(lambda: enqueue(ids))
    return created


def queue_once(rows: list[OutboundEmail]) -> list[int]:
    """Write the rows whose dedupe key is new, skip the others, and hand every one of them
    that is still pending to the sender once the transaction commits (two queries)."""
    OutboundEmail.objects.bulk_create(rows, ignore_conflicts=True)
    ids = list(
        OutboundEmail.objects.filter(
            dedupe_key__in=[row.dedupe_key for row in rows], state=State.PENDING
        )
        .order_by("id")
        .values_list("id", flat=True)
    )
    if ids:
        transaction.on_commit(lambda: enqueue(ids))
    return ids


def enqueue(ids: list[int]) -> None:
    """Hand the rows to the mail workers. With the broker away (Redis stopped) nothing is
    lost: the rows stay pending and the sweep hands them out once the broker is back, so
    the person whose request wrote them is not told of an error that is not theirs."""
    from moderator.mail.tasks import send_email

    for outbound_id in ids:
        try:
            send_email.delay(outbound_id=outbound_id)
        except Exception:
            log.warning(
                "could not enqueue outbox rows %s; the sweep will send them", ids, exc_info=True
            )
            return


def _due(now: datetime) -> Q:
    return Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now)


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


# --- sending ----------------------------------------------------------------------------


class Failure(enum.Enum):
    TRANSIENT = "transient"
    PERMANENT = "permanent"


def classify(error: BaseException) -> Failure:
    """Whether a send that raised ``error`` may succeed if tried again later.

    Transient: the connection or the server had a problem (socket errors, a dropped SMTP
    connection, SMTP 4xx replies, an ESP's 5xx or unreachable API, or its "slow down").
    Permanent: the message or the address is refused (SMTP 5xx, refused recipients, the
    ESP's 4xx, invalid addresses, header injection) and anything we do not recognise: a
    retry would fail the same way, and a human should look."""
    if isinstance(error, HeaderInjection | BadHeaderError | AnymailInvalidAddress):
        return Failure.PERMANENT
    if isinstance(error, AnymailRecipientsRefused):
        return Failure.PERMANENT
    if isinstance(error, AnymailAPIError):
        status = error.status_code
        if status is None or status >= 500 or status in RETRY_LATER_STATUS:
            return Failure.TRANSIENT
        return Failure.PERMANENT
    if isinstance(error, smtplib.SMTPRecipientsRefused):
        codes = [code for code, _ in error.recipients.values()]
        every_4xx = bool(codes) and all(400 <= code < 500 for code in codes)
        return Failure.TRANSIENT if every_4xx else Failure.PERMANENT
    if isinstance(error, smtplib.SMTPResponseException):
        return Failure.PERMANENT if 500 <= error.smtp_code < 600 else Failure.TRANSIENT
    if isinstance(error, smtplib.SMTPNotSupportedError):
        return Failure.PERMANENT
    if isinstance(error, OSError):  # sockets, timeouts, SMTPServerDisconnected
        return Failure.TRANSIENT
    return Failure.PERMANENT


def retry_delay(attempts: int, *, jitter: float | None = None) -> timedelta:
    """How long to wait after failed attempt number ``attempts`` (1, 2, ...): exponential,
    capped, and spread by a random factor in [0.5, 1.0] so that a burst of failures does
    not come back all at once."""
    base = settings.MAIL_RETRY_BASE_SECONDS
    seconds = min(settings.MAIL_RETRY_CAP_SECONDS, base * 2 ** max(attempts - 1, 0))
    factor = random.uniform(0.5, 1.0) if jitter is None else jitter
    return timedelta(seconds=seconds * factor)


def send(outbound_id: int, *, now: datetime | None = None) -> str:
    """Send one outbox row if it is pending and due; returns the row's state afterwards."""
    now = now or timezone.now()
    claimed = (
        OutboundEmail.objects.filter(pk=outbound_id, state=State.PENDING)
        .filter(_due(now))
        .update(state=State.SENDING, attempts=F("attempts") + 1, sending_since=now)
    )
    if not claimed:
        state = OutboundEmail.objects.filter(pk=outbound_id).values_list("state", flat=True)
        return state.first() or "missing"
    row = OutboundEmail.objects.select_related("game__gm").get(pk=outbound_id)
    if not row.message_id:
        row.message_id = make_msgid(domain=settings.MAIL_DOMAIN)
        row.save(update_fields=["message_id"])
    try:
        message = _message(row)
        message.send()
    except Exception as error:  # every failure is recorded on the row
        return _failed_attempt(row, error, now)
    status = getattr(message, "anymail_status", None)
    esp_id = getattr(status, "message_id", None)
    _attempt(row).update(
        state=State.SENT,
        sent_at=now,
        esp_message_id="" if esp_id is None else str(esp_id)[:200],
        next_attempt_at=None,
    )
    return State.SENT


def _attempt(row: OutboundEmail) -> QuerySet[OutboundEmail]:
    """The row, if it is still in the attempt we claimed: the sweep may have called it
    unknown meanwhile (then we know better now); a human may have asked for a new one."""
    return OutboundEmail.objects.filter(
        pk=row.pk, state__in=[State.SENDING, State.UNKNOWN], sending_since=row.sending_since
    )


def _failed_attempt(row: OutboundEmail, error: Exception, now: datetime) -> str:
    reason = describe(error)
    transient = classify(error) is Failure.TRANSIENT
    if transient and row.attempts < settings.MAIL_MAX_ATTEMPTS:
        log.info("outbox row %s: attempt %s failed, will retry: %s", row.pk, row.attempts, reason)
        _attempt(row).update(
            state=State.PENDING,
            last_error=reason,
            next_attempt_at=now + retry_delay(row.attempts),
        )
        return State.PENDING
    if transient:
        reason = f"gave up after {row.attempts} attempts; the last one: {reason}"
    log.warning("outbox row %s failed: %s", row.pk, reason)
    with transaction.atomic():
        if _attempt(row).update(state=State.FAILED, last_error=reason, next_attempt_at=None):
            _alert_gm(row, reason)
    return State.FAILED


def describe(error: BaseException) -> str:
    """``error`` in one line for the row and the GM (some ESP errors cannot say themselves)."""
    try:
        text = str(error)
    except Exception:
        text = repr(error.args)
    return " ".join(f"{type(error).__name__}: {text}".split())[:2000]


def _alert_gm(row: OutboundEmail, reason: str) -> None:
    """Tell the game's GM that ``row`` will not arrive (in the caller's transaction)."""
    game = row.game
    gm_email = getattr(getattr(game, "gm", None), "email", "")
    if game is None or row.kind == "alert" or not gm_email:
        return  # nobody to tell, or an alert about an alert: the log has it
    alert = build(
        "alert",
        to=gm_email,
        dedupe_key=f"alert:failed:{row.pk}",
        context={"game": game, "email": row, "reason": reason},
        game=game,
    )
    queue_once([alert])


def mark_unknown(now: datetime) -> int:
    """Rows handed to the backend longer than MAIL_SENDING_TIMEOUT_SECONDS ago and never
    confirmed become unknown: the worker may have died after the server took the message,
    so they are never sent again automatically. Returns how many."""
    stale = now - timedelta(seconds=settings.MAIL_SENDING_TIMEOUT_SECONDS)
    return (
        OutboundEmail.objects.filter(state=State.SENDING)
        .filter(Q(sending_since__lt=stale) | Q(sending_since__isnull=True))
        .update(state=State.UNKNOWN, last_error="handed to the mail server, never confirmed")
    )


def send_again(outbound_id: int) -> bool:
    """A human's decision: send a failed or unknown row again, with a fresh set of attempts
    and the same Message-ID (a client that got the first one shows it once). False if the
    row is in no such state."""
    with transaction.atomic():
        moved = OutboundEmail.objects.filter(
            pk=outbound_id, state__in=[State.FAILED, State.UNKNOWN]
        ).update(state=State.PENDING, attempts=0, next_attempt_at=None, sending_since=None)
        if moved:
            transaction.on_commit(lambda: enqueue([outbound_id]))
    return bool(moved)
