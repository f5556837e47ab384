"""Inbound email kept as the ESP posted it, and read by a mail worker within bounds
(docs/email.md, "Inbound mail: kept, then read").

In the request (``keep``), after the basic-auth secret and the ESP's signature:

- a post larger than INBOUND_MAX_BYTES is refused, 413, read no further than that (never
  Django's RequestDataTooBig, which would answer 500 and the ESP would retry it for days);
  when the part read names a seat, the seat is told why (``refused`` signal);
- the recipient is looked for in the post as it is, without reading the email: an address
  ``<local>+<token>@<domain>`` of INBOUND_ADDRESS whose token names a seat
  (``recipient_found`` signal, which games answers), or INBOUND_ADDRESS itself (a command
  to the commands address). A post that names neither is kept as a small row, "ignored",
  and never read;
- otherwise the post is kept whole (``InboundMessage.payload``), a worker is handed it
  once the row commits, and the webhook answers 200 at once.

In the worker (``read``): a post of more MIME parts than INBOUND_MAX_PARTS is refused
before it is parsed (its ``Content-Type`` headers are counted in the bytes); then
anymail's own view parses it (``parse_events``, from the kept bytes), and an email of more
parts than INBOUND_MAX_PARTS or nested deeper than INBOUND_MAX_DEPTH (or too deeply for
Python's parser: RecursionError) is refused too, each with an answer to the seat. Every
email read is handed on by anymail's ``inbound`` signal, as anymail's view would, with
the row it was kept in (``kept``). The sweep hands out rows whose hand-over was lost; a
post whose reading failed READ_ATTEMPTS times is refused as unreadable.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Mapping
from datetime import datetime
from email.parser import BytesHeaderParser
from email.policy import HTTP
from typing import Any, cast
from urllib.parse import unquote_to_bytes

from anymail.signals import inbound
from celery import current_app
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.db.models import Q
from django.dispatch import Signal
from django.http import HttpRequest, HttpResponse, QueryDict
from django.utils.datastructures import MultiValueDict
from django.utils.http import parse_header_parameters

from moderator.mail import charsets
from moderator.mail.models import InboundMessage

log = logging.getLogger(__name__)

READ_INBOUND = "mail.read_inbound"
READ_ATTEMPTS = 3
Inbound = InboundMessage.State

# ``recipient_found.send(sender=None, addresses=[...])``: a receiver answers the seat one
# of the addresses names (an order, message or stop address), or None.
recipient_found = Signal()
# ``refused.send(sender=None, row=..., reason=...)``: an email that could not be read
# within bounds; a receiver tells the row's seat why and records it (the row's state).
refused = Signal()


# Why the worker refused an email unread (``games.notify.replies`` tells the seat, in its words).
Reason = InboundMessage.Reason


# --- the post, kept and rebuilt -----------------------------------------------------------


class KeptRequest(HttpRequest):
    """A webhook post rebuilt from what was kept: what anymail's views read of a request
    (headers, body, form fields and files), from bytes already read within
    INBOUND_MAX_BYTES, so Django's in-memory bound for other views
    (DATA_UPLOAD_MAX_MEMORY_SIZE) does not apply to them a second time."""

    def __init__(self, body: bytes, content_type: str, headers: dict[str, str]):
        super().__init__()
        self.method = "POST"
        self.path = self.path_info = headers.get("PATH_INFO", "/")
        self._kept_scheme = headers.get("SCHEME", "https")
        self.META = {
            **headers,
            "REQUEST_METHOD": "POST",
            "CONTENT_TYPE": content_type,
            "CONTENT_LENGTH": str(len(body)),
        }
        self.content_type, self.content_params = parse_header_parameters(content_type)
        self._kept_body = body
        fields, self.FILES = form_of(body, content_type)
        self.POST = cast(Any, fields)

    @property
    def body(self) -> bytes:
        return self._kept_body

    @property
    def scheme(self) -> str:
        return self._kept_scheme


class FormTooLarge(ValueError):
    pass


def form_of(body: bytes, content_type: str) -> tuple[QueryDict, MultiValueDict[str, Any]]:
    """The fields and files of a form post: url-encoded, or multipart/form-data split at
    its boundary (at most DATA_UPLOAD_MAX_NUMBER_FIELDS parts), each part's headers read
    with the email package; anything else has none."""
    kind, params = parse_header_parameters(content_type)
    fields = QueryDict(mutable=True)
    files: MultiValueDict[str, Any] = MultiValueDict()
    if kind == "application/x-www-form-urlencoded":
        return QueryDict(body), files  # at most DATA_UPLOAD_MAX_NUMBER_FIELDS
    boundary = params.get("boundary", "").encode("ascii", "replace")
    if kind != "multipart/form-data" or not boundary:
        return fields, files
    delimiter = b"\r\n--" + boundary
    pieces = (b"\r\n" + body).split(delimiter)
    most = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS or 1000
    if len(pieces) > most + 2:
        raise FormTooLarge(f"a form of more than {most} parts")
    for piece in pieces[1:]:
        if piece.startswith(b"--"):
            break  # the closing delimiter
        head, _, content = piece.partition(b"\r\n\r\n")
        headers = BytesHeaderParser(policy=HTTP).parsebytes(head.lstrip(b" \t\r\n") + b"\r\n")
        disposition = headers.get("Content-Disposition", "")
        _, disposition_params = parse_header_parameters(str(disposition))
        name = disposition_params.get("name")
        if not name:
            continue
        filename = disposition_params.get("filename")
        if filename is not None:
            kind_of_file = str(headers.get("Content-Type", "application/octet-stream"))
            files.appendlist(name, SimpleUploadedFile(filename, content, kind_of_file))
        else:
            _, part_params = parse_header_parameters(str(headers.get("Content-Type", "")))
            fields.appendlist(name, charsets.decode(content, part_params.get("charset")))
    return fields, files


def _headers_of(request: HttpRequest) -> dict[str, str]:
    """What a view may read of the request again besides its body: its HTTP headers but
    its credentials, and where it was posted (a signature may cover the URL)."""
    headers = {
        key: str(value)
        for key, value in request.META.items()
        if key.startswith("HTTP_") and key not in ("HTTP_AUTHORIZATION", "HTTP_COOKIE")
    }
    for key in ("SERVER_NAME", "SERVER_PORT", "QUERY_STRING"):
        headers[key] = str(request.META.get(key, ""))
    headers["PATH_INFO"], headers["SCHEME"] = request.path, str(request.scheme)
    return headers


def read_body(request: HttpRequest, most: int) -> bytes | None:
    """The request's body, read from its stream no further than ``most`` bytes; None when
    it is larger (by its Content-Length, or by what came)."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length > most:
        return None
    body = request.read(most + 1)
    return None if len(body) > most else body


# --- the recipient, found without reading the email ---------------------------------------

# How many distinct addresses of the inbound domain a post is searched for, at most.
CANDIDATES = 20


def addresses_in(payload: bytes, content_type: str) -> list[str]:
    """The addresses of INBOUND_ADDRESS with a token (``<local>+<token>@<domain>``) the
    post holds anywhere, as it is (url-encoded forms decoded first), first ones first."""
    if not settings.INBOUND_ADDRESS:
        return []
    local, domain = settings.INBOUND_ADDRESS.lower().split("@")
    if "urlencoded" in content_type:
        payload = unquote_to_bytes(payload.replace(b"+", b" "))
    pattern = re.compile(
        re.escape(local.encode()) + rb"\+([a-z0-9-]{1,120})@" + re.escape(domain.encode()),
        re.IGNORECASE,
    )
    found: list[str] = []
    for match in pattern.finditer(payload):
        address = f"{local}+{match[1].decode('ascii').lower()}@{domain}"
        if address not in found:
            found.append(address)
            if len(found) >= CANDIDATES:
                break
    return found


def to_commands_address(payload: bytes, content_type: str) -> bool:
    """Whether the post holds INBOUND_ADDRESS itself, with no token: an email to the
    commands address (``help``, ``status``, ...), answered to the sender's own seats."""
    if not settings.INBOUND_ADDRESS:
        return False
    if "urlencoded" in content_type:
        payload = unquote_to_bytes(payload.replace(b"+", b" "))
    address = re.escape(settings.INBOUND_ADDRESS.lower().encode())
    return re.search(rb"(?<![\w.+-])" + address + rb"(?![\w-])", payload, re.IGNORECASE) is not None


def seat_named(payload: bytes, content_type: str) -> Any | None:
    addresses = addresses_in(payload, content_type)
    if not addresses:
        return None
    for _, seat in recipient_found.send(sender=None, addresses=addresses):
        if seat is not None:
            return seat
    return None


# --- in the request -----------------------------------------------------------------------

# ESPs that post only a notification naming the email, which anymail fetches from their
# API: the recipient cannot be looked for in the post, and the fetch is the worker's.
NOTIFYING = frozenset({"Resend", "Mailtrap"})


def _post_key(payload: bytes) -> str:
    return "post:sha256:" + hashlib.sha256(payload).hexdigest()


def keep(
    request: HttpRequest, view: Any, webhook: str, *, now: datetime
) -> HttpResponse | KeptRequest:
    """Keep an inbound post of anymail's ``view`` (its validators run here, on the kept
    bytes) and answer it; None when it is not an inbound post (Mandrill's combined URL
    with tracking events), which anymail's view then handles as it does."""
    body = read_body(request, settings.INBOUND_MAX_BYTES)
    if body is None:
        return _too_large(request, view, webhook, now=now)
    content_type = request.META.get("CONTENT_TYPE", "")
    credentials = {"HTTP_AUTHORIZATION": str(request.META.get("HTTP_AUTHORIZATION", ""))}
    kept = KeptRequest(body, content_type, _headers_of(request) | credentials)
    view.run_validators(kept)  # a forged signature answers 403, as before
    if webhook == "mandrill" and not _mandrill_inbound(kept):
        return kept
    if webhook == "amazon_ses_inbound" and _sns_type(body) != "Notification":
        return kept  # Amazon SNS's subscription handshake: anymail's view answers it
    if parse_header_parameters(content_type)[0] == "application/json":
        try:
            json.loads(body)
        except ValueError:
            return HttpResponse("the payload is not JSON", status=400)
    seat = None if view.esp_name in NOTIFYING else seat_named(body, content_type)
    found = (
        seat is not None or view.esp_name in NOTIFYING or to_commands_address(body, content_type)
    )
    row = InboundMessage(
        message_id=_post_key(body),
        esp=view.esp_name[:40],
        received_at=now,
        webhook=webhook,
        seat=seat,
        game_id=getattr(seat, "game_id", None),
    )
    if found:
        row.payload, row.content_type = body, content_type[:200]
        row.headers = _headers_of(request)
    else:
        row.state, row.note = Inbound.IGNORED, "no valid reply address in the post: not read"
    with transaction.atomic():
        if InboundMessage.objects.filter(message_id=row.message_id).exists():
            return HttpResponse()  # posted again: kept once
        row.save()
        if found:
            transaction.on_commit(lambda: hand_out([row.pk]))
    return HttpResponse()


def _sns_type(body: bytes) -> str:
    try:
        message = json.loads(body)
    except ValueError:
        return ""
    return str(message.get("Type", "")) if isinstance(message, dict) else ""


def _mandrill_inbound(request: HttpRequest) -> bool:
    try:
        events = json.loads(request.POST.get("mandrill_events", "[]"))
        return any(isinstance(event, dict) and event.get("event") == "inbound" for event in events)
    except ValueError:
        return False


def _too_large(request: HttpRequest, view: Any, webhook: str, *, now: datetime) -> HttpResponse:
    """A post over INBOUND_MAX_BYTES: refused unread (413), logged; its first bytes are
    searched for the seat it was sent to, who is told."""
    head = request.read(256 * 1024)
    content_type = request.META.get("CONTENT_TYPE", "")
    seat = seat_named(head, content_type)
    log.warning(
        "inbound post to %s refused: larger than INBOUND_MAX_BYTES (%s bytes)",
        request.path,
        settings.INBOUND_MAX_BYTES,
    )
    if seat is not None:
        row = InboundMessage(
            message_id=_post_key(head),
            esp=view.esp_name[:40],
            received_at=now,
            webhook=webhook,
            seat=seat,
            game_id=seat.game_id,
        )
        with transaction.atomic():
            if not InboundMessage.objects.filter(message_id=row.message_id).exists():
                row.save()
                refused.send(sender=None, row=row, reason=Reason.TOO_LARGE)
    megabytes = settings.INBOUND_MAX_BYTES / 1024 / 1024
    return HttpResponse(
        f"the email is larger than this service takes ({megabytes:g} MB)", status=413
    )


def hand_out(ids: list[int]) -> None:
    """Hand kept posts to the mail workers; with the broker away, the sweep does later."""
    task = current_app.tasks[READ_INBOUND]
    for pk in ids:
        try:
            task.delay(inbound_id=pk)
        except Exception:
            log.warning("could not enqueue inbound %s; the sweep will", pk, exc_info=True)
            return


def unread_ids(limit: int, *, older_than: datetime) -> list[int]:
    """Posts kept and not yet read since before ``older_than``: for the sweep."""
    rows = InboundMessage.objects.filter(
        Q(state=Inbound.RECEIVED) & Q(received_at__lt=older_than) & ~Q(webhook="")
    )
    return list(rows.order_by("received_at").values_list("pk", flat=True)[:limit])


# --- in the worker ------------------------------------------------------------------------

_CONTENT_TYPE = re.compile(rb"content-?type", re.IGNORECASE)


def shape(message: Any) -> tuple[int, int]:
    """(how many MIME parts, how deeply nested) ``message`` is, walked without recursion
    and no further than one past the bounds."""
    parts, deepest = 0, 0
    stack = [(message, 1)]
    while stack:
        part, depth = stack.pop()
        parts, deepest = parts + 1, max(deepest, depth)
        if parts > settings.INBOUND_MAX_PARTS or deepest > settings.INBOUND_MAX_DEPTH:
            break
        payload = part.get_payload() if part.is_multipart() else None
        if isinstance(payload, list):
            stack.extend((child, depth + 1) for child in payload)
    return parts, deepest


def read(inbound_id: int, *, now: datetime, views: Mapping[str, type[Any]]) -> str | None:
    """Read a kept post once: its emails handed on (anymail's ``inbound`` signal) or
    refused. Returns the row's state, or None when it was read already (or is being)."""
    with transaction.atomic():
        row = (
            InboundMessage.objects.select_for_update(skip_locked=True)
            .filter(pk=inbound_id, state=Inbound.RECEIVED)
            .first()
        )
        if row is None or row.payload is None:
            return None
        row.attempts += 1
        row.save(update_fields=["attempts"])
    with transaction.atomic():
        row = (
            InboundMessage.objects.select_for_update(skip_locked=True)
            .filter(pk=inbound_id, state=Inbound.RECEIVED)
            .first()
        )
        if row is None:
            return None
        if row.attempts > READ_ATTEMPTS:
            log.error("inbound %s could not be read in %s attempts", row.pk, READ_ATTEMPTS)
            return _refuse(row, Reason.UNREADABLE)
        return _read(row, views, now=now)


def _refuse(row: InboundMessage, reason: str) -> str:
    row.payload = None
    row.save(update_fields=["payload"])
    refused.send(sender=None, row=row, reason=reason)
    row.refresh_from_db(fields=["state"])
    return row.state


def _read(row: InboundMessage, views: Mapping[str, type[Any]], *, now: datetime) -> str:
    payload = bytes(row.payload or b"")
    if len(payload) > settings.INBOUND_MAX_BYTES:
        return _refuse(row, Reason.TOO_LARGE)
    # Every MIME part has at most one Content-Type, and a post repeats an email's headers
    # at most a few times: far more of them than parts allowed is too many parts.
    if len(_CONTENT_TYPE.findall(payload)) > 3 * settings.INBOUND_MAX_PARTS + 10:
        return _refuse(row, Reason.TOO_MANY_PARTS)
    view_class = views[row.webhook]
    view = view_class()
    request = KeptRequest(payload, row.content_type, dict(row.headers))
    try:
        events = view.parse_events(request)
    except RecursionError:
        return _refuse(row, Reason.TOO_DEEP)
    except Exception:
        log.exception("inbound %s: the %s post could not be read", row.pk, row.esp)
        return _refuse(row, Reason.UNREADABLE)
    emails = [event for event in events if getattr(event, "message", None) is not None]
    if not emails:
        # An ESP's test of the URL (Mailtrap's), a notification naming no email: nothing
        # was sent to anyone, and nothing is kept.
        row.delete()
        return "no email"
    first = True
    for event in emails:
        parts, depth = shape(event.message)
        kept = row if first else None
        first = False
        if parts > settings.INBOUND_MAX_PARTS or depth > settings.INBOUND_MAX_DEPTH:
            many = parts > settings.INBOUND_MAX_PARTS
            if kept is not None:
                _refuse(kept, Reason.TOO_MANY_PARTS if many else Reason.TOO_DEEP)
            else:
                log.warning("inbound %s: a further email of the post is out of bounds", row.pk)
            continue
        inbound.send(sender=view_class, event=event, esp_name=view.esp_name, kept=kept)
    InboundMessage.objects.filter(pk=row.pk).update(payload=None)
    # Gone when its email was kept before (posted again): the earlier row holds it.
    state = InboundMessage.objects.filter(pk=row.pk).values_list("state", flat=True).first()
    return state or "posted again"
