"""Sending: the outbox rows are claimed (pending -> sending) so that a row is handed to the
backend once, whoever asks, sent with the Message-ID the row keeps for every attempt, and
each outcome is recorded on its row.

The workers send in batches (up to MAIL_BATCH rows per task) over one backend connection,
claimed in groups of MAIL_CLAIM: one query claims a group and loads it, and one query
records every message of the group sent; each failure is recorded on its own row. Just
before a row's message goes to the backend, the moment is written on the row
(``handed_over_at``) and committed on its own. A worker killed mid-batch leaves the rows
of the group it had not recorded in "sending"; the sweep (``mark_unknown``) tells them
apart: a row never handed over delivered nothing and is sent again by itself, and only
the row handed over, whose answer was lost, is unknown, its game's GM told once.

The row's life::

    pending --claim--> sending --> sent
       ^                  |------> pending again, with next_attempt_at (transient failure)
       |                  |------> pending again, untried (its batch ran out of time)
       |                  |------> failed, and the GM is told (permanent, or out of attempts)
       |                  |------> unknown (the connection lost after the server may have
       |                  |                 taken the message: maybe delivered)
       |                  |------> unknown (the sweep: handed over, never confirmed; maybe
       |                  |                 delivered; the GM told once per game and sweep)
       |<-----------------'        pending again (the sweep: claimed, never handed over)
       '---- send_again <-------- failed / unknown (a human's decision, never automatic;
                                  send_unknown_again: every unknown row of a game)

Retries are driven by the row's ``next_attempt_at`` and picked up by the sweep; nothing
waits in the broker.
"""

from __future__ import annotations

import enum
import logging
import random
import re
import smtplib
from collections.abc import Sequence
from datetime import datetime, timedelta
from email.utils import make_msgid
from functools import partial
from time import monotonic

import requests
from anymail.exceptions import (
    AnymailAPIError,
    AnymailInvalidAddress,
    AnymailRecipientsRefused,
)
from django.conf import settings
from django.core.mail import BadHeaderError, EmailMessage, get_connection
from django.core.mail.backends.base import BaseEmailBackend
from django.db import connection, transaction
from django.db.models import Case, F, Q, QuerySet, Value, When
from django.urls import reverse
from django.utils import timezone
from urllib3.exceptions import ProtocolError

from moderator.mail.building import HeaderInjection, build, email_message
from moderator.mail.models import OutboundEmail
from moderator.mail.queueing import OnTheRow, enqueue, queue_once
from moderator.mail.smtp import OutcomeUnknown

log = logging.getLogger(__name__)

State = OutboundEmail.State
# Too many requests, request timeout: the ESP asks us to come back later.
RETRY_LATER_STATUS = frozenset({408, 429})
# Why a row is unknown, first words of its last_error.
NEVER_CONFIRMED = "handed to the mail server, never confirmed"
# The emails to a GM about the outbox itself: never the subject of another one.
GM_KINDS = frozenset({"alert", "unconfirmed"})


class Failure(enum.Enum):
    TRANSIENT = "transient"
    PERMANENT = "permanent"
    UNKNOWN = "unknown"


def classify(error: BaseException) -> Failure:
    """Whether a send that raised ``error`` may succeed if tried again later, or may
    already have succeeded.

    Unknown: the connection was lost after the message was handed over and before the
    server answered (SMTP: after the server's 354 to DATA; an ESP's API: the request sent,
    its answer timed out or cut off). The server may have kept it: never sent again by
    itself, a human decides.
    Transient: the connection or the server had a problem before it took the message
    (socket errors, a dropped SMTP connection, SMTP 4xx replies, an ESP's 5xx or
    unreachable API, or its "slow down").
    Permanent: the message or the address is refused (SMTP 5xx, refused recipients, the
    ESP's 4xx, invalid addresses, header injection) and anything we do not recognise: a
    retry would fail the same way, and a human should look."""
    if isinstance(error, OutcomeUnknown):
        return Failure.UNKNOWN
    if isinstance(error, HeaderInjection | BadHeaderError | AnymailInvalidAddress):
        return Failure.PERMANENT
    if isinstance(error, AnymailRecipientsRefused):
        return Failure.PERMANENT
    if isinstance(error, AnymailAPIError):
        if error.status_code is None and _request_sent(error):
            return Failure.UNKNOWN
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


def _request_sent(error: AnymailAPIError) -> bool:
    """Whether the ESP's API may have taken the request that failed with ``error`` (anymail
    raises it from the requests error it got). The request went out when its answer timed
    out, or the connection was aborted once open (urllib3's ProtocolError, "Connection
    aborted."), or the answer was cut off; a connection that could not be made, or timed
    out being made, carried nothing."""
    cause = error.__cause__
    if isinstance(cause, requests.ConnectTimeout):
        return False
    if isinstance(cause, requests.ReadTimeout | requests.exceptions.ChunkedEncodingError):
        return True
    if isinstance(cause, requests.ConnectionError):
        return bool(cause.args) and isinstance(cause.args[0], ProtocolError)
    return False


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
    states = send_batch([outbound_id], now=now or timezone.now())
    if outbound_id in states:
        return states[outbound_id]
    state = OutboundEmail.objects.filter(pk=outbound_id).values_list("state", flat=True)
    return state.first() or "missing"


def send_batch(ids: Sequence[int], *, now: datetime) -> dict[int, str]:
    """Send every row of ``ids`` that is pending and due, over one backend connection;
    returns the state of each row this call claimed (rows it did not claim are absent).

    Rows are claimed, sent and recorded in groups of MAIL_CLAIM: a worker killed in the
    middle leaves at most one group "sending" (later unknown, for a human to send again);
    the rows of later groups are still pending and go out with the next sweep.

    Queries per group: the claim (which loads the rows claimed), a Message-ID for rows
    written without one, the rows sent, and per failed row what ``_failed_attempt``
    writes. Once half of MAIL_SENDING_TIMEOUT_SECONDS has gone by, the rows not yet tried
    are handed back (pending, the attempt not counted) and enqueued again, so that the
    sweep never calls a row unknown that was not handed over."""
    ids = sorted(set(ids))
    deadline = monotonic() + settings.MAIL_SENDING_TIMEOUT_SECONDS / 2
    states: dict[int, str] = {}
    mail = _Connection()
    try:
        for start in range(0, len(ids), settings.MAIL_CLAIM):
            if monotonic() > deadline:
                later = ids[start:]
                log.info("outbox rows %s waited too long in their batch; enqueued again", later)
                enqueue(later)
                break
            group = ids[start : start + settings.MAIL_CLAIM]
            states |= _send_group(group, mail, now, deadline)
    finally:
        mail.close()
    return states


def _send_group(
    ids: Sequence[int], mail: _Connection, now: datetime, deadline: float
) -> dict[int, str]:
    # The game and its GM are loaded for a failed row only (its alert).
    rows = _claim(ids, now)
    if not rows:
        return {}
    _mint_message_ids(rows)
    sent, failed, late = _hand_over(rows, mail, deadline)
    states = dict.fromkeys(sent, State.SENT.value)
    _record_sent(sent, now)
    for row in rows:
        if row.pk in sent:
            _log_outcome(row, "sent", logging.INFO, "email sent")
    for row, error in failed:
        states[row.pk] = _failed_attempt(row, error, now)
    unknown = [row for row, _ in failed if states[row.pk] == State.UNKNOWN]
    if unknown:
        with transaction.atomic():
            _tell_unknown(unknown, now)
    if late:
        states |= dict.fromkeys(_hand_back(late, now), State.PENDING.value)
    return states


def _claim(ids: Sequence[int], now: datetime) -> list[OutboundEmail]:
    """Claim the pending and due rows among ``ids`` and load them, in one statement;
    returns them by id. A row another worker claimed first is no longer pending, so it
    is not returned here. The rows are found by primary key (see ``OnTheRow``).

    One raw statement, as the ORM's ``update()`` returns a count, not the rows it changed:
    UPDATE ... RETURNING claims and loads them at once (PostgreSQL, and SQLite for the
    embedded default)."""
    ids = sorted(set(ids))
    if not ids:
        return []
    at = connection.ops.adapt_datetimefield_value(now)
    sql = (
        'UPDATE "mail_outboundemail" SET state = %s, attempts = attempts + 1, sending_since = %s, '
        "handed_over_at = NULL "
        f"WHERE id IN ({', '.join(['%s'] * len(ids))}) AND (state = %s "
        "AND (next_attempt_at IS NULL OR next_attempt_at <= %s)) IS TRUE RETURNING *"
    )
    params = [State.SENDING.value, at, *ids, State.PENDING.value, at]
    return sorted(OutboundEmail.objects.raw(sql, params), key=lambda row: row.pk)


def _mint_message_ids(rows: list[OutboundEmail]) -> None:
    """Rows written before build() minted the Message-ID get theirs now (one query)."""
    missing = [row for row in rows if not row.message_id]
    for row in missing:
        row.message_id = make_msgid(domain=settings.MAIL_DOMAIN)
    if missing:
        OutboundEmail.objects.bulk_update(missing, ["message_id"])


class _Connection:
    """The batch's one backend connection, opened when first needed and again after a
    failed send (an SMTP error may leave it unusable). Once it cannot be opened, every
    later send fails with that error: the rest of the batch would wait on an unreachable
    server in turn."""

    def __init__(self) -> None:
        self.backend: BaseEmailBackend = get_connection()
        self.is_open = False
        self.unreachable: Exception | None = None

    def open(self) -> None:
        if self.unreachable is not None:
            raise self.unreachable
        if not self.is_open:
            try:
                self.backend.open()
            except Exception as error:
                self.unreachable = error
                raise
            self.is_open = True

    def send(self, message: EmailMessage) -> None:
        self.open()
        try:
            self.backend.send_messages([message])
        except Exception:
            self.close()
            raise

    def close(self) -> None:
        if self.is_open:
            self.is_open = False
            try:
                self.backend.close()
            except Exception:  # the message's own outcome is what matters
                log.info("closing the mail connection failed", exc_info=True)


def _hand_over(
    rows: list[OutboundEmail], mail: _Connection, deadline: float
) -> tuple[dict[int, str], list[tuple[OutboundEmail, Exception]], list[OutboundEmail]]:
    """Hand each row's message to the backend, once its hand-over is written on the row
    (``_handed_over``). Returns the rows sent with their ESP message id ("" when the
    backend gives none), the rows that failed with their error, and the rows not tried
    because ``deadline`` (monotonic) had passed. A row the sweep took back meanwhile (no
    longer in this attempt) is not sent, and in none of them."""
    sent: dict[int, str] = {}
    failed: list[tuple[OutboundEmail, Exception]] = []
    for index, row in enumerate(rows):
        if monotonic() > deadline:
            return sent, failed, rows[index:]
        try:
            message = email_message(row)
            mail.open()
            if not _handed_over(row):
                continue
            mail.send(message)
        except Exception as error:  # every failure is recorded on its row
            failed.append((row, error))
            continue
        status = getattr(message, "anymail_status", None)
        esp_id = getattr(status, "message_id", None)
        sent[row.pk] = "" if esp_id is None else str(esp_id)[:200]
    return sent, failed, []


def _handed_over(row: OutboundEmail) -> bool:
    """Write on the row that its message goes to the backend now, in a statement of its
    own (the worker sends outside any transaction, so it is committed before the send):
    a worker killed from here on may have handed it over. False if the row is no longer
    in the attempt this batch claimed (the sweep took it back to send it again)."""
    # One statement per message sent, so written out rather than compiled by the ORM each
    # time: the row by its primary key, its attempt checked on it (as OnTheRow does).
    table = connection.ops.quote_name(OutboundEmail._meta.db_table)
    ops = connection.ops
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET handed_over_at = %s WHERE id = %s "
            "AND (state = %s AND sending_since = %s) IS TRUE",
            [
                ops.adapt_datetimefield_value(timezone.now()),
                row.pk,
                State.SENDING.value,
                ops.adapt_datetimefield_value(row.sending_since),
            ],
        )
        return bool(cursor.rowcount)


def _log_outcome(row: OutboundEmail, outcome: str, level: int, what: str, reason: str = "") -> None:
    """One line per email and outcome: its outbox row, kind and game (never the address:
    an SMTP server's reason often names it)."""
    if reason and row.to:
        reason = re.sub(re.escape(row.to), "<address>", reason, flags=re.IGNORECASE)
    log.log(
        level,
        "%s: outbox row %s, %s, game %s%s",
        what,
        row.pk,
        row.kind,
        row.game_id,
        f": {reason}" if reason else "",
        extra={
            "event": "email",
            "outbox": row.pk,
            "kind": row.kind,
            "game": row.game_id,
            "outcome": outcome,
            "attempts": row.attempts,
        },
    )


def _record_sent(sent: dict[int, str], now: datetime) -> None:
    """Every row sent, in one query (its ESP message id, when there is one, per row)."""
    if not sent:
        return
    esp_ids = [When(pk=pk, then=Value(esp_id)) for pk, esp_id in sent.items() if esp_id]
    _attempts_claimed_at(now).filter(pk__in=list(sent)).update(
        state=State.SENT,
        sent_at=now,
        esp_message_id=Case(*esp_ids, default=Value("")) if esp_ids else "",
        next_attempt_at=None,
    )


def _hand_back(rows: list[OutboundEmail], now: datetime) -> list[int]:
    """Rows claimed at ``now`` and never tried: pending again, the attempt not counted, and
    to the workers again."""
    ids = [row.pk for row in rows]
    claimed = OutboundEmail.objects.filter(OnTheRow(Q(state=State.SENDING, sending_since=now)))
    claimed.filter(pk__in=ids).update(
        state=State.PENDING, attempts=F("attempts") - 1, sending_since=None
    )
    log.info("outbox rows %s waited too long in their batch; enqueued again", ids)
    enqueue(ids)
    return ids


def _attempt(row: OutboundEmail) -> QuerySet[OutboundEmail]:
    """The row, if it is still in the attempt we claimed: the sweep may have called it
    unknown meanwhile (then we know better now); a human may have asked for a new one."""
    return _attempts_claimed_at(row.sending_since).filter(pk=row.pk)


def _attempts_claimed_at(sending_since: datetime | None) -> QuerySet[OutboundEmail]:
    """The rows still in the attempt claimed at ``sending_since`` (``_attempt`` of a batch),
    to be narrowed by primary key (see ``OnTheRow``)."""
    return OutboundEmail.objects.filter(
        OnTheRow(Q(state__in=[State.SENDING, State.UNKNOWN], sending_since=sending_since))
    )


def _failed_attempt(row: OutboundEmail, error: Exception, now: datetime) -> str:
    reason = describe(error)
    failure = classify(error)
    if failure is Failure.UNKNOWN:
        # As a worker killed mid-send (mark_unknown): the GM sees it and may send it again.
        _log_outcome(row, "unknown", logging.WARNING, "email outcome unknown", reason)
        _attempt(row).update(
            state=State.UNKNOWN,
            last_error=f"{NEVER_CONFIRMED}: {reason}",
            next_attempt_at=None,
        )
        return State.UNKNOWN
    transient = failure is Failure.TRANSIENT
    if transient and row.attempts < settings.MAIL_MAX_ATTEMPTS:
        _log_outcome(row, "retry", logging.INFO, "email attempt failed, will retry", reason)
        _attempt(row).update(
            state=State.PENDING,
            last_error=reason,
            next_attempt_at=now + retry_delay(row.attempts),
        )
        return State.PENDING
    if transient:
        reason = f"gave up after {row.attempts} attempts; the last one: {reason}"
    _log_outcome(row, "failed", logging.WARNING, "email failed", reason)
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
    if game is None or row.kind in GM_KINDS or not gm_email:
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
    """The sweep's recovery of rows claimed longer than MAIL_SENDING_TIMEOUT_SECONDS ago
    and never recorded (their worker died, or hangs). A row never handed to the backend
    (no ``handed_over_at``) delivered nothing: it is pending again, its attempt not
    counted, and handed to the workers, sent again by itself. A row handed over may have
    been delivered: it becomes unknown, never sent again by itself, and each game's GM
    gets one email of this sweep's unknown rows of the game (``_tell_unknown``), whose one
    action sends them all again (``send_unknown_again``). Returns how many became
    unknown."""
    stale = now - timedelta(seconds=settings.MAIL_SENDING_TIMEOUT_SECONDS)
    claimed = OutboundEmail.objects.filter(state=State.SENDING).filter(
        Q(sending_since__lt=stale) | Q(sending_since__isnull=True)
    )
    with transaction.atomic():
        # Locked, so that a worker still sending finds them taken back (``_handed_over``).
        again = list(
            claimed.filter(handed_over_at__isnull=True)
            .select_for_update(skip_locked=True)
            .order_by("id")
            .values_list("id", flat=True)
        )
        OutboundEmail.objects.filter(pk__in=again).update(
            state=State.PENDING, attempts=F("attempts") - 1, sending_since=None
        )
        if again:
            log.info("outbox rows %s were claimed and never handed over; sent again", again)
            transaction.on_commit(partial(enqueue, again))
    with transaction.atomic():
        unknown = list(
            claimed.filter(handed_over_at__isnull=False)
            .select_for_update(skip_locked=True, of=("self",))
            .select_related("game__gm")
            .order_by("id")
        )
        OutboundEmail.objects.filter(pk__in=[row.pk for row in unknown]).update(
            state=State.UNKNOWN, last_error=NEVER_CONFIRMED
        )
        for row in unknown:
            _log_outcome(row, "unknown", logging.WARNING, "email outcome unknown", NEVER_CONFIRMED)
        _tell_unknown(unknown, now)
    return len(unknown)


def _tell_unknown(rows: list[OutboundEmail], now: datetime) -> None:
    """One email to each game's GM (the kind "unconfirmed") of ``rows``, that game's rows
    found unknown at ``now``, by the sweep or by a group of a batch whose connection was
    lost after the hand-over (in the caller's transaction). Rows of no game, or
    of a GM without an address, or alerts themselves, are in the log alone."""
    by_game: dict[int, list[OutboundEmail]] = {}
    for row in rows:
        if row.game_id is not None and row.kind not in GM_KINDS:
            by_game.setdefault(row.game_id, []).append(row)
    alerts = []
    for game_id, emails in by_game.items():
        game = emails[0].game
        gm_email = getattr(getattr(game, "gm", None), "email", "")
        if game is None or not gm_email:
            continue
        alerts.append(
            build(
                "unconfirmed",
                to=gm_email,
                dedupe_key=f"alert:unknown:{game_id}:{emails[0].pk}:{now.isoformat()}",
                context={
                    "game": game,
                    "emails": emails,
                    "count": len(emails),
                    "url": f"{settings.SITE_URL}{reverse('gm:game', args=[game_id])}#emails",
                },
                game=game,
            )
        )
    if alerts:
        queue_once(alerts)


def send_unknown_again(game_id: int) -> int:
    """A GM's decision, in one action: send every unknown row of the game again
    (``send_again`` for each, pruned rows left out); how many."""
    ids = list(
        OutboundEmail.objects.filter(game_id=game_id, state=State.UNKNOWN, pruned_at__isnull=True)
        .order_by("id")
        .values_list("id", flat=True)
    )
    return sum(send_again(outbound_id) for outbound_id in ids)


def send_again(outbound_id: int) -> bool:
    """A human's decision: send a failed or unknown row again, with a fresh set of attempts
    and the same Message-ID (a client that got the first one shows it once). False if the
    row is in no such state, or its body was pruned (moderator/mail/pruning.py)."""
    with transaction.atomic():
        moved = OutboundEmail.objects.filter(
            pk=outbound_id, state__in=[State.FAILED, State.UNKNOWN], pruned_at__isnull=True
        ).update(state=State.PENDING, attempts=0, next_attempt_at=None, sending_since=None)
        if moved:
            transaction.on_commit(partial(enqueue, [outbound_id]))
    return bool(moved)
