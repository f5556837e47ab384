"""The one email builder and the outbox sender.

Every email is rendered from three templates, ``emails/<kind>/subject.txt``, ``body.txt``
and ``body.html``, into an ``OutboundEmail`` row written in the same transaction as the
change it reports, with the Message-ID it keeps for every attempt. Sending claims the rows
(pending -> sending) so that a row is handed to the backend once, whoever asks.

The workers send in batches (up to MAIL_BATCH rows per task) over one backend connection,
claimed in groups of MAIL_CLAIM: one query claims a group and loads it, and one query
records every message of the group sent; each failure is recorded on its own row. A
worker killed mid-batch leaves the rows of the group it had not recorded in "sending",
and the sweep calls them unknown: the price of recording a group at once.

The row's life::

    pending --claim--> sending --> sent
       ^                  |------> pending again, with next_attempt_at (transient failure)
       |                  |------> pending again, untried (its batch ran out of time)
       |                  |------> failed, and the GM is told (permanent, or out of attempts)
       |                  |------> unknown (the connection lost after the server may have
       |                  |                 taken the message: maybe delivered)
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
import secrets
import smtplib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timedelta
from email.generator import BytesGenerator
from email.message import Message
from email.mime.nonmultipart import MIMENonMultipart
from email.policy import Compat32
from email.utils import formatdate, getaddresses, make_msgid
from functools import partial
from io import BytesIO
from time import monotonic
from typing import TYPE_CHECKING, Any

import requests
from anymail.exceptions import (
    AnymailAPIError,
    AnymailInvalidAddress,
    AnymailRecipientsRefused,
)
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import BadHeaderError, EmailMultiAlternatives, get_connection
from django.core.mail.backends.base import BaseEmailBackend
from django.core.mail.message import (
    RFC5322_EMAIL_LINE_LENGTH_LIMIT,
    SafeMIMEMultipart,
    SafeMIMEText,
)
from django.core.mail.utils import DNS_NAME
from django.core.validators import validate_email
from django.db import connection, transaction
from django.db.models import BooleanField, Case, F, Func, Q, QuerySet, Value, When
from django.template import Context
from django.template.loader import select_template
from django.utils import timezone
from urllib3.exceptions import ProtocolError

from moderator.mail.models import OutboundEmail
from moderator.mail.smtp import OutcomeUnknown

if TYPE_CHECKING:
    from games.models import Game

log = logging.getLogger(__name__)

State = OutboundEmail.State
THREAD_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
# Too many requests, request timeout: the ESP asks us to come back later.
RETRY_LATER_STATUS = frozenset({408, 429})
# Why a row is unknown, first words of its last_error.
NEVER_CONFIRMED = "handed to the mail server, never confirmed"


class HeaderInjection(ValueError):
    pass


# --- building ---------------------------------------------------------------------------


# Every character str.splitlines() breaks at: some mail libraries and ESP APIs fold or
# split header values on these too, not only on CR and LF.
LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_LINE_BREAK_CHAR = re.compile(f"[{re.escape(''.join(sorted(LINE_BREAKS)))}]")
_CONTROL_CHAR = re.compile("[\x00-\x1f\x7f]")


def clean_header(value: str, what: str) -> str:
    if _LINE_BREAK_CHAR.search(value):
        raise HeaderInjection(f"{what} must be a single line")
    if _CONTROL_CHAR.search(value):
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
        message_id=make_msgid(domain=settings.MAIL_DOMAIN),
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
    subject = " ".join(render(f"emails/{kind}/subject.txt", context).split())
    email.subject = clean_header(subject, "the subject")
    email.text = render(f"emails/{kind}/body.txt", context)
    email.html = render(f"emails/{kind}/body.html", context)
    return email


# A header value that Compat32 writes as it is: printable ASCII words one space apart.
_UNFOLDED = re.compile(r"[!-~]+(?: [!-~]+)*\Z")
# The longest such subject that email.header.Header(subject).encode() leaves as it is.
_SUBJECT_AS_IT_IS = 76


class _Policy(Compat32):
    """Compat32, the policy Django's messages are written with, without its cost where it
    changes nothing: a header of printable ASCII words one space apart that fits on a line
    is written as it is, which is what Compat32's folding (an ``email.header.Header`` per
    header) writes for it. A third of the time to write a report's message was that folding.
    Every other header is folded by Compat32 itself."""

    def _fold(self, name: str, value: Any, sanitize: bool) -> str:
        fits = isinstance(value, str) and len(name) + 2 + len(value) <= (self.max_line_length or 78)
        if fits and _UNFOLDED.match(value):
            return f"{name}: {value}{self.linesep}"
        return super()._fold(name, value, sanitize)  # type: ignore[misc]


POLICY = _Policy()


class _Generator(BytesGenerator):
    """BytesGenerator writing a text part in one piece, its line breaks (CRLF, CR or LF)
    replaced, instead of two writes per line (a report's HTML has hundreds of lines): the
    same bytes."""

    def _write_lines(self, lines: str) -> None:
        if lines:
            if "\r" in lines:
                lines = lines.replace("\r\n", "\n").replace("\r", "\n")
            self.write(lines.replace("\n", self._NL))  # type: ignore[attr-defined]


def _as_bytes(mime: Any, unixfrom: bool = False, linesep: str = "\n") -> bytes:
    """What Django's ``as_bytes`` writes (no "From " mangling), by _Generator."""
    out = BytesIO()
    _Generator(out, mangle_from_=False).flatten(mime, unixfrom=unixfrom, linesep=linesep)
    return out.getvalue()


_POLICIES = {"\n": POLICY.clone(linesep="\n"), "\r\n": POLICY.clone(linesep="\r\n")}


def _text_parts_as_bytes(mime: Any, unixfrom: bool = False, linesep: str = "\n") -> bytes:
    """_as_bytes for a message _Email._of_text_parts made: what _Generator writes for it,
    written directly. The generator works out each part's type and boundary again by
    parsing the headers just written, and writes each part to a buffer of its own: a
    quarter of the time to build a report's message."""
    if unixfrom:
        return _as_bytes(mime, unixfrom, linesep)
    policy = _POLICIES.get(linesep) or POLICY.clone(linesep=linesep)
    out: list[bytes] = []
    _write_text_parts(mime, policy, linesep, out)
    return b"".join(out)


def _write_text_parts(mime: Any, policy: Any, nl: str, out: list[bytes]) -> None:
    out.extend(policy.fold_binary(name, value) for name, value in mime.raw_items())
    out.append(nl.encode())
    if isinstance(mime, _Multipart):
        for number, part in enumerate(mime.get_payload()):
            out.append(f"{nl if number else ''}--{mime.boundary}{nl}".encode())
            _write_text_parts(part, policy, nl, out)
        out.append(f"{nl}--{mime.boundary}--{nl}".encode())
        return
    lines = mime._payload
    if lines:
        if "\r" in lines:
            lines = lines.replace("\r\n", "\n").replace("\r", "\n")
        out.append(lines.replace("\n", nl).encode("ascii", "surrogateescape"))


class _Multipart(SafeMIMEMultipart):
    """Django's multipart, which knows the boundary _Email.message() gave it."""

    boundary = ""

    def set_boundary(self, boundary: str) -> None:
        super().set_boundary(boundary)
        self.boundary = boundary


class _TextPart(SafeMIMEText):
    """Django's text part (``SafeMIMEText(text, subtype, "utf-8")``) made without its
    cost: Django checks the length of every line in a Python loop, and sets the charset
    by parsing the header it has just written. The same class, so that the part behaves
    as Django's does wherever it is written."""

    def __init__(self, data: bytes, subtype: str) -> None:
        self.encoding = "utf-8"
        MIMENonMultipart.__init__(self, "text", subtype, charset="utf-8")
        self["Content-Transfer-Encoding"] = "7bit" if data.isascii() else "8bit"
        Message.set_payload(self, data.decode("ascii", "surrogateescape"))


def _text_part(text: str, subtype: str) -> SafeMIMEText | None:
    """``text`` as Django's text part; None when a line is longer than 998 bytes: such a
    part is quoted-printable, and Django makes it."""
    data = text.encode("utf-8")
    limit = RFC5322_EMAIL_LINE_LENGTH_LIMIT
    # Django's test (the last) only when the bytes have a line that long: bytes.splitlines()
    # breaks at fewer characters than str.splitlines(), so its lines are never shorter.
    if (
        len(data) > limit
        and max(map(len, data.splitlines())) > limit
        and any(len(line.encode(errors="surrogateescape")) > limit for line in text.splitlines())
    ):
        return None
    return _TextPart(data, subtype)


class _Email(EmailMultiAlternatives):
    """Django's message, written with POLICY by _Generator, with MIME boundaries of 128
    random bits, which no text written before they were drawn holds. Left to itself, the
    email generator draws a boundary and compiles a regular expression per multipart to
    check that the text does not hold it: a fifth of the time a report takes to render.

    A message of text parts (every report, receipt and notice) is put together here from
    _text_part, the same MIME tree Django makes (a test compares them byte for byte); any
    other is Django's own."""

    def message(self, **kwargs: Any) -> Any:
        mime = None if kwargs else self._of_text_parts()
        written = _text_parts_as_bytes
        if mime is None:
            mime, written = super().message(**kwargs), _as_bytes
        mime.policy = POLICY
        mime.as_bytes = partial(written, mime)  # type: ignore[method-assign]
        for part in mime.walk():
            if part.is_multipart():
                part.set_boundary(f"=={secrets.token_hex(16)}==")
        return mime

    def _of_text_parts(self) -> Any:
        """EmailMultiAlternatives.message() for a body, text alternatives and text
        attachments in UTF-8; None for any other message."""
        if (self.encoding or settings.DEFAULT_CHARSET).lower() != "utf-8" or not self.body:
            return None
        texts = [(str(self.body), self.content_subtype)]
        for content, mimetype in self.alternatives:
            basetype, _, subtype = mimetype.partition("/")
            if basetype != "text" or not isinstance(content, str):
                return None
            texts.append((content, subtype))
        for attachment in self.attachments:
            if not isinstance(attachment, tuple) or not isinstance(attachment[1], str):
                return None
            basetype, _, subtype = (attachment[2] or "").partition("/")
            if basetype != "text":
                return None
            texts.append((attachment[1], subtype))
        if not (self.alternatives or self.attachments):
            return None  # a lone text part: Django's own
        parts: list[SafeMIMEText] = []
        for text, subtype in texts:
            part = _text_part(text, subtype)
            if part is None:
                return None  # a line longer than 998 bytes: Django's own
            parts.append(part)
        msg: Any = parts[0]
        if self.alternatives:
            msg = _Multipart(_subtype="alternative", encoding="utf-8")
            for part in parts[: 1 + len(self.alternatives)]:
                msg.attach(part)
        if self.attachments:
            body, msg = msg, _Multipart(_subtype="mixed", encoding="utf-8")
            msg.attach(body)
            for (filename, _, _), part in zip(
                self.attachments, parts[1 + len(self.alternatives) :], strict=True
            ):
                if filename:
                    name = filename if filename.isascii() else ("utf-8", "", filename)
                    part.add_header("Content-Disposition", "attachment", filename=name)
                msg.attach(part)
        # The headers, as EmailMessage.message() sets them (on Django's multipart). A
        # subject of printable ASCII words one space apart that fits on a line is what
        # Django's header check (an email.header.Header encoded) writes for it.
        subject = str(self.subject)
        if len(subject) <= _SUBJECT_AS_IT_IS and _UNFOLDED.match(subject):
            Message.__setitem__(msg, "Subject", subject)
        else:
            msg["Subject"] = subject
        msg["From"] = self.extra_headers.get("From", self.from_email)
        for header, values in (("To", self.to), ("Cc", self.cc), ("Reply-To", self.reply_to)):
            if header in self.extra_headers:
                msg[header] = self.extra_headers[header]
            elif values:
                msg[header] = ", ".join(str(value) for value in values)
        names = {name.lower() for name in self.extra_headers}
        if "date" not in names:
            msg["Date"] = formatdate(localtime=settings.EMAIL_USE_LOCALTIME)
        if "message-id" not in names:
            msg["Message-ID"] = make_msgid(domain=DNS_NAME)
        for name, value in self.extra_headers.items():
            if name.lower() not in {"from", "to", "cc", "reply-to"}:
                msg[name] = value
        return msg


def render(names: str | list[str], context: Mapping[str, Any], *, autoescape: bool = True) -> str:
    """The first of the templates ``names`` that exists, rendered with ``context`` as
    render_to_string would, but numbers written as they are: the service writes English,
    and Django's per-number localization (a language lookup and three format lookups for
    every ``{{ number }}``) was 40% of rendering a board. ``autoescape`` off for a part of
    a plain-text email rendered on its own."""
    template = select_template([names] if isinstance(names, str) else names)
    return template.template.render(Context(dict(context), autoescape=autoescape, use_l10n=False))


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
    message = _Email(
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
    OutboundEmail.objects.bulk_create(rows)
    if rows:
        transaction.on_commit(lambda: enqueue([row.pk for row in rows]))
    return rows


def queue_once(rows: list[OutboundEmail]) -> list[int]:
    """Write the rows whose dedupe key is new, skip the others, and hand every one of them
    that is still pending to the sender once the transaction commits (two queries)."""
    OutboundEmail.objects.bulk_create(rows, ignore_conflicts=True)
    ids = list(
        OutboundEmail.objects.filter(
            _OnTheRow(Q(state=State.PENDING)), dedupe_key__in=[row.dedupe_key for row in rows]
        )
        .order_by("id")
        .values_list("id", flat=True)
    )
    if ids:
        transaction.on_commit(lambda: enqueue(ids))
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


def enqueue(ids: list[int]) -> None:
    """Hand the rows to the mail workers, one task per MAIL_BATCH rows. With the broker
    away (Redis stopped) nothing is lost: the rows stay pending and the sweep hands them out
    once the broker is back, so the person whose request wrote them is not told of an error
    that is not theirs."""
    from moderator.mail.tasks import send_emails

    held = _held.get()
    if held is not None:
        held.extend(ids)
        return

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


# --- sending ----------------------------------------------------------------------------


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
    for row, error in failed:
        states[row.pk] = _failed_attempt(row, error, now)
    if late:
        states |= dict.fromkeys(_hand_back(late, now), State.PENDING.value)
    return states


def _claim(ids: Sequence[int], now: datetime) -> list[OutboundEmail]:
    """Claim the pending and due rows among ``ids`` and load them, in one statement;
    returns them by id. A row another worker claimed first is no longer pending, so it
    is not returned here. The rows are found by primary key (see ``_OnTheRow``)."""
    ids = sorted(set(ids))
    if not ids:
        return []
    at = connection.ops.adapt_datetimefield_value(now)
    quote = connection.ops.quote_name
    columns = ", ".join(quote(str(field.column)) for field in OutboundEmail._meta.concrete_fields)
    sql = (
        f"UPDATE {quote(OutboundEmail._meta.db_table)} "
        "SET state = %s, attempts = attempts + 1, sending_since = %s "
        f"WHERE id IN ({', '.join(['%s'] * len(ids))}) AND (state = %s "
        f"AND (next_attempt_at IS NULL OR next_attempt_at <= %s)) IS TRUE RETURNING {columns}"
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

    def send(self, message: EmailMultiAlternatives) -> None:
        if self.unreachable is not None:
            raise self.unreachable
        if not self.is_open:
            try:
                self.backend.open()
            except Exception as error:
                self.unreachable = error
                raise
            self.is_open = True
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
    """Hand each row's message to the backend. Returns the rows sent with their ESP
    message id ("" when the backend gives none), the rows that failed with their error, and
    the rows not tried because ``deadline`` (monotonic) had passed."""
    sent: dict[int, str] = {}
    failed: list[tuple[OutboundEmail, Exception]] = []
    for index, row in enumerate(rows):
        if monotonic() > deadline:
            return sent, failed, rows[index:]
        try:
            message = _message(row)
            mail.send(message)
        except Exception as error:  # every failure is recorded on its row
            failed.append((row, error))
            continue
        status = getattr(message, "anymail_status", None)
        esp_id = getattr(status, "message_id", None)
        sent[row.pk] = "" if esp_id is None else str(esp_id)[:200]
    return sent, failed, []


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
    claimed = OutboundEmail.objects.filter(_OnTheRow(Q(state=State.SENDING, sending_since=now)))
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
    to be narrowed by primary key (see ``_OnTheRow``)."""
    return OutboundEmail.objects.filter(
        _OnTheRow(Q(state__in=[State.SENDING, State.UNKNOWN], sending_since=sending_since))
    )


class _OnTheRow(Func):
    """``(condition) IS TRUE``: the same rows as ``condition``, which no index answers.

    A batch's rows are claimed and recorded by primary key (new rows found by their
    dedupe key), their state checked on the row.
    Left to choose, PostgreSQL finds them through outbox_due by their state whenever its
    statistics say that few rows are pending or sending, which is what they say just after
    a burst of reports (the sweep resolving many steps): it then reads every entry of that
    state, dead row versions too, for each group. Measured with 1,000 rows pending, the
    statistics taken before: 3.5 ms to claim ten rows, 0.3 ms by primary key."""

    template = "(%(expressions)s) IS TRUE"
    output_field = BooleanField()


def _failed_attempt(row: OutboundEmail, error: Exception, now: datetime) -> str:
    reason = describe(error)
    failure = classify(error)
    if failure is Failure.UNKNOWN:
        # As a worker killed mid-send (mark_unknown): the GM sees it and may send it again.
        log.warning("outbox row %s: outcome unknown, not sent again: %s", row.pk, reason)
        _attempt(row).update(
            state=State.UNKNOWN,
            last_error=f"{NEVER_CONFIRMED}: {reason}",
            next_attempt_at=None,
        )
        return State.UNKNOWN
    transient = failure is Failure.TRANSIENT
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
        .update(state=State.UNKNOWN, last_error=NEVER_CONFIRMED)
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
