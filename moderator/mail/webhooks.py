"""What the ESPs' webhooks bring in, through django-anymail: inbound emails and tracking
events. This module keeps them (once each) and reads them; what they mean for a game is
``games.notify.replies``.

The URLs (``urls``) are anymail's own views for every ESP anymail takes inbound email from,
behind one more check: a webhook answers 403 unless ``ANYMAIL["WEBHOOK_SECRET"]`` is set, so
no URL ever takes posts from anyone. A post without the basic-auth secret (any of the listed
ones, for rotation), or with a wrong one, answers 401 with a Basic challenge, before anymail
looks at it; a post whose ESP signature does not hold (Mailgun's, Mandrill's, MailerSend's
and Postal's; SendGrid's, Mailtrap's and Resend's when their key is set) answers 403; a
payload that cannot be read answers 400; a webhook whose ESP setting anymail needs is
missing, or whose package is not installed (the ``esp`` extra's: boto3 for Amazon SES,
cryptography for Postal's and SendGrid's signatures, svix for Resend's), answers 503. None
of them stores anything.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import logging
import re
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from email.utils import parseaddr
from typing import Any, cast

from anymail import signals
from anymail.exceptions import (
    AnymailAPIError,
    AnymailConfigurationError,
    AnymailWebhookValidationFailure,
)
from anymail.utils import get_request_basic_auth
from django.conf import settings
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.urls import URLPattern, path
from django.utils import timezone
from django.utils.crypto import constant_time_compare
from django.views.decorators.csrf import csrf_exempt

from moderator.mail import inbound, reading
from moderator.mail.models import DeliveryEvent, InboundMessage, OutboundEmail

log = logging.getLogger(__name__)

Delivery = OutboundEmail.Delivery
State = OutboundEmail.State

# anymail's normalized event types -> what the outbox row records. Others (opened,
# clicked, unsubscribed, unknown) are kept as events but change no row.
DELIVERY_OF_EVENT = {
    "queued": Delivery.QUEUED,
    "sent": Delivery.QUEUED,
    "deferred": Delivery.DEFERRED,
    "delivered": Delivery.DELIVERED,
    "bounced": Delivery.BOUNCED,
    "rejected": Delivery.REJECTED,
    "failed": Delivery.REJECTED,
    "complained": Delivery.COMPLAINED,
}
# The deliveries that mean the address does not take our mail.
FAILING = frozenset({Delivery.BOUNCED, Delivery.REJECTED, Delivery.COMPLAINED})
# A later event does not undo a worse one: a "delivered" after a complaint stays a complaint.
_RANK = {
    "": 0,
    Delivery.QUEUED: 1,
    Delivery.DEFERRED: 2,
    Delivery.DELIVERED: 3,
    Delivery.BOUNCED: 4,
    Delivery.REJECTED: 4,
    Delivery.COMPLAINED: 5,
}


# --- the URLs -----------------------------------------------------------------------------


def _secrets() -> list[str]:
    """The basic-auth secrets a post may carry: one string, or a list while one is rotated
    out (as anymail reads ``WEBHOOK_SECRET``)."""
    configured = cast("str | list[str]", settings.ANYMAIL.get("WEBHOOK_SECRET") or [])
    return [configured] if isinstance(configured, str) else list(configured)


def _unauthorized() -> HttpResponse:
    response = HttpResponse("the webhook's credentials are missing or wrong", status=401)
    response["WWW-Authenticate"] = 'Basic realm="webhooks", charset="UTF-8"'
    return response


def _not_set_up(request: HttpRequest, error: AnymailConfigurationError) -> HttpResponse:
    reason = " ".join(str(error).split())
    log.error("%s is not set up: %s", request.path, reason)
    return HttpResponse(f"this webhook is not set up: {reason}", status=503)


def _secret_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """``view`` behind the basic-auth secret, checked before anymail builds its view (which
    may need settings or packages): a post without it, or with a wrong one, answers 401 and
    a Basic challenge, which basic-auth clients (Amazon SNS among them) expect. A HEAD, with
    which Mandrill checks a URL before it shows the key to sign with, stays open: it answers
    nothing. A webhook whose ESP setting (or package) anymail needs is missing answers 503,
    not 500 with a traceback: the ESP retries, and the mail arrives once it is set."""

    def guarded(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        secrets = _secrets()
        if not secrets:
            return HttpResponseForbidden("webhooks are off: ANYMAIL_WEBHOOK_SECRET is not set")
        if request.method == "POST":
            given = get_request_basic_auth(request)
            if given is None or not any(constant_time_compare(given, s) for s in secrets):
                return _unauthorized()
        try:
            return view(request, *args, **kwargs)
        except AnymailConfigurationError as error:
            return _not_set_up(request, error)

    return csrf_exempt(guarded)


# What anymail raises for a payload it cannot read: bad JSON or form data, a missing or
# ill-typed field, a header with a line break, or an event posted to the other URL.
_UNREADABLE = (ValueError, TypeError, KeyError, IndexError, AttributeError)


class _PayloadChecked:
    """Mixed into anymail's views: a payload anymail cannot read answers 400 (anymail's
    validation failure, a SuspiciousOperation). Such a post fails the same way every time,
    so a 500 would only make the ESP retry it; a failure while handling the events it
    carries still answers 500, and the ESP's retry handles them."""

    esp_name: str

    def parse_events(self, request: HttpRequest) -> Any:
        try:
            return cast(Any, super()).parse_events(request)
        except (*_UNREADABLE, AnymailConfigurationError) as error:
            raise AnymailWebhookValidationFailure(
                f"{self.esp_name} webhook: unreadable payload ({type(error).__name__}: {error})"
            ) from error


class _Refused(Exception):
    """A post whose signature does not hold, answered ``response``."""

    def __init__(self, response: HttpResponse) -> None:
        super().__init__(response.status_code)
        self.response = response


class _SignatureChecked:
    """Mixed into anymail's views: anymail's own validators (the basic-auth secret again,
    the ESP's signature where it signs its posts) run as anymail runs them, but a post they
    refuse answers 403 (anymail answers 400: its validation failure is a
    SuspiciousOperation), and one whose body they cannot read to check it answers 400. A
    setting the check needs that is missing reaches ``_secret_required``: 503."""

    esp_name: str

    def run_validators(self, request: HttpRequest) -> None:
        try:
            cast(Any, super()).run_validators(request)
        except AnymailWebhookValidationFailure as failure:
            forbidden = HttpResponseForbidden("the ESP's signature of this post does not hold")
            raise _Refused(forbidden) from failure
        except (*_UNREADABLE, AnymailAPIError) as error:
            raise AnymailWebhookValidationFailure(
                f"{self.esp_name} webhook: unreadable payload ({type(error).__name__}: {error})"
            ) from error

    webhook: str
    takes_inbound: bool

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            if self.takes_inbound:
                # Kept as posted and read by a worker (moderator/mail/inbound.py).
                answer = inbound.keep(request, self, self.webhook, now=timezone.now())
                if isinstance(answer, HttpResponse):
                    return answer
                # Tracking events on Mandrill's combined URL, or Amazon SNS's handshake.
                return cast(HttpResponse, cast(Any, super()).post(answer, *args, **kwargs))
            return cast(HttpResponse, cast(Any, super()).post(request, *args, **kwargs))
        except _Refused as refused:
            return refused.response


def _payload_checked(view_class: type[Any], webhook: str) -> type[Any]:
    takes_inbound = view_class.signal is signals.inbound or webhook == "mandrill"
    attributes = {"webhook": webhook, "takes_inbound": takes_inbound}
    return type(view_class.__name__, (_SignatureChecked, _PayloadChecked, view_class), attributes)


# Every ESP anymail takes inbound email from: anymail's module and the names of its inbound
# and its tracking view. A view's module is imported when the view is first used: some pull
# in an ESP's SDK (Amazon's boto3, Resend's svix), and a process that never reads that ESP's
# posts (a web process, a worker, a command) need not start slower for it.
_ESPS = [
    ("amazon_ses", "AmazonSESInboundWebhookView", "AmazonSESTrackingWebhookView"),
    ("brevo", "BrevoInboundWebhookView", "BrevoTrackingWebhookView"),
    ("mailersend", "MailerSendInboundWebhookView", "MailerSendTrackingWebhookView"),
    ("mailgun", "MailgunInboundWebhookView", "MailgunTrackingWebhookView"),
    ("mailjet", "MailjetInboundWebhookView", "MailjetTrackingWebhookView"),
    ("mailtrap", "MailtrapInboundWebhookView", "MailtrapTrackingWebhookView"),
    ("postal", "PostalInboundWebhookView", "PostalTrackingWebhookView"),
    ("postmark", "PostmarkInboundWebhookView", "PostmarkTrackingWebhookView"),
    ("resend", "ResendInboundWebhookView", "ResendTrackingWebhookView"),
    ("sendgrid", "SendGridInboundWebhookView", "SendGridTrackingWebhookView"),
    ("sparkpost", "SparkPostInboundWebhookView", "SparkPostTrackingWebhookView"),
]

# URL name -> (route under /mail/webhooks/, anymail's module, its view's name).
_ROUTES: dict[str, tuple[str, str, str]] = {
    f"{esp}_{kind}": (f"{esp}/{kind}/", esp, name)
    for esp, inbound_view, tracking_view in _ESPS
    for kind, name in (("inbound", inbound_view), ("tracking", tracking_view))
}
# Mandrill posts inbound emails and tracking events to one URL, signed with one key.
_ROUTES["mandrill"] = ("mandrill/", "mandrill", "MandrillCombinedWebhookView")


@functools.cache
def view_class(name: str) -> type[Any]:
    """The checked view of the webhook URL called ``name`` (anymail's, imported now)."""
    _, module, class_name = _ROUTES[name]
    view = getattr(importlib.import_module(f"anymail.webhooks.{module}"), class_name)
    return _payload_checked(view, name)


class _Views(Mapping[str, type[Any]]):
    """The views a worker reads a kept post with, by the name of the URL that took it."""

    def __getitem__(self, name: str) -> type[Any]:
        if name not in _ROUTES:
            raise KeyError(name)
        return view_class(name)

    def __iter__(self) -> Iterator[str]:
        return iter(_ROUTES)

    def __len__(self) -> int:
        return len(_ROUTES)


VIEWS: Mapping[str, type[Any]] = _Views()


def _view(name: str) -> Callable[..., HttpResponse]:
    """The view function of the webhook URL called ``name``, built at its first request."""

    @functools.cache
    def built() -> Callable[..., HttpResponse]:
        return cast("Callable[..., HttpResponse]", view_class(name).as_view())

    def view(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return built()(request, *args, **kwargs)

    return view


urlpatterns: list[URLPattern] = [
    path(route, _secret_required(_view(name)), name=name) for name, (route, _, _) in _ROUTES.items()
]


# --- inbound ------------------------------------------------------------------------------


def _plain(value: Any) -> str:
    """``value`` as text PostgreSQL can store: a NUL character means nothing in an email,
    and a byte a header's charset could not read (kept by Python as a lone surrogate)
    becomes U+FFFD."""
    text = str(value or "").replace("\x00", "")
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace") if text else text


def _header(message: Any, name: str) -> str:
    return " ".join(_plain(message.get(name, "")).split())


def message_key(message: Any) -> str:
    """The email's Message-ID, or a digest of what it says when it has none."""
    message_id = _header(message, "Message-ID")
    if message_id:
        return message_id[:300]
    text = "\n".join(
        [_header(message, "From"), _header(message, "Subject"), reading.body_text(message)]
    )
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


_AUTO_PRECEDENCE = {"bulk", "junk", "list", "auto_reply", "auto-reply"}
_AUTO_SENDER = re.compile(r"^(mailer-daemon|postmaster|noreply|no-reply|bounce[s]?)@", re.I)
_AUTO_SUBJECT = re.compile(
    r"^\s*(auto(matic)?[ -]?(reply|response)|out of (the )?office|autoreply|abwesenheit"
    r"|undeliver(ed|able)|delivery status notification|mail delivery failed|returned mail)",
    re.I,
)


def auto_reply_reason(message: Any) -> str | None:
    """Why ``message`` was written by a machine (RFC 3834 and what mail servers do in
    practice), or None for a person's email."""
    auto_submitted = _header(message, "Auto-Submitted").lower()
    if auto_submitted and auto_submitted != "no":
        return f"Auto-Submitted: {auto_submitted}"
    for name in ("X-Autoreply", "X-Autorespond", "X-Autoresponder", "X-Auto-Reply"):
        if _header(message, name):
            return f"{name} header"
    precedence = _header(message, "Precedence").lower()
    if precedence in _AUTO_PRECEDENCE:
        return f"Precedence: {precedence}"
    if _header(message, "Return-Path") == "<>":
        return "empty Return-Path (a bounce)"
    content_type = _header(message, "Content-Type").lower()
    if content_type.startswith("multipart/report"):
        return "a delivery report"
    sender = parseaddr(_header(message, "From"))[1]
    if _AUTO_SENDER.match(sender):
        return f"sent by {sender}"
    if _AUTO_SUBJECT.match(_header(message, "Subject")):
        return "an automatic reply's subject"
    return None


def keep_inbound(
    message: Any, esp: str, now: datetime, kept: InboundMessage | None = None
) -> InboundMessage:
    """Store ``message`` before anything is done with it; a message with the same
    Message-ID kept before (the ESP delivered it again) is that row. ``kept``: the row the
    webhook kept the post in, which now names the email; when the email was kept before
    (the ESP posted it again), ``kept`` goes and the earlier row is returned."""
    recipient = _plain(getattr(message, "envelope_recipient", ""))
    fields = {
        "message_id": message_key(message),
        "esp": esp[:40],
        "recipient": recipient[:254],
        "sender": parseaddr(_header(message, "From"))[1][:254],
        "subject": _header(message, "Subject")[:300],
        "text": reading.body_text(message),
    }
    if kept is not None:
        earlier = InboundMessage.objects.filter(message_id=fields["message_id"]).first()
        if earlier is None:
            for name, value in fields.items():
                setattr(kept, name, value)
            try:
                with transaction.atomic():
                    kept.save(update_fields=list(fields))
                    return kept
            except IntegrityError:
                earlier = InboundMessage.objects.get(message_id=fields["message_id"])
        kept.delete()  # the same email posted again: the earlier row is the one
        return earlier
    row = InboundMessage(**fields, received_at=now)
    try:
        with transaction.atomic():
            row.save()
    except IntegrityError:
        return InboundMessage.objects.get(message_id=row.message_id)
    return row


def recipients(message: Any) -> list[str]:
    """Every address the email was sent to: the envelope first, then To and Cc."""
    found = [str(getattr(message, "envelope_recipient", "") or "")]
    for name in ("Delivered-To", "X-Original-To", "To", "Cc"):
        for value in message.get_all(name) or []:
            found += [address for _, address in _addresses(str(value))]
    return [address for address in found if address]


def _addresses(value: str) -> list[tuple[str, str]]:
    from email.utils import getaddresses

    return getaddresses([value])


# --- tracking -----------------------------------------------------------------------------


def _event_id(event: Any, esp: str) -> str:
    if getattr(event, "event_id", None):
        return _plain(event.event_id)[:200]
    parts = [
        esp,
        event.event_type,
        str(event.message_id),
        str(event.recipient),
        str(event.timestamp),
    ]
    return "sha256:" + hashlib.sha256("|".join(parts).encode()).hexdigest()


def _row_of(event: Any) -> OutboundEmail | None:
    metadata = getattr(event, "metadata", None)
    outbox_id = _plain(metadata.get("outbox")) if isinstance(metadata, dict) else ""
    rows = OutboundEmail.objects.select_for_update()
    if outbox_id.isascii() and outbox_id.isdigit() and len(outbox_id) <= 18:
        row = rows.filter(pk=int(outbox_id)).first()
        if row is not None:
            return row
    if event.message_id:
        return rows.filter(esp_message_id=_plain(event.message_id)).first()
    return None


def record_delivery(event: Any, esp: str, now: datetime) -> tuple[OutboundEmail | None, bool]:
    """Record one tracking event once; returns the row it concerns (None if it is not one
    of ours) and whether this event made the row's address failing (a first bounce,
    complaint or rejection). A row whose send was never confirmed (unknown) becomes sent
    when the ESP reports it: the ESP has it, so it is not sent again."""
    delivery = DELIVERY_OF_EVENT.get(str(event.event_type))
    detail = " ".join(_plain(event.description or event.mta_response).split())[:2000]
    with transaction.atomic():
        row = _row_of(event)
        try:
            with transaction.atomic():
                DeliveryEvent.objects.create(
                    esp=esp[:40],
                    event_id=_event_id(event, esp),
                    event_type=_plain(event.event_type)[:30],
                    email=row,
                    recipient=_plain(event.recipient)[:254],
                    detail=detail,
                    received_at=now,
                )
        except IntegrityError:
            return row, False  # delivered again: changes nothing
        if row is None or delivery is None:
            return row, False
        fields = []
        if row.state in (State.UNKNOWN, State.SENDING):
            row.state = State.SENT
            row.sent_at = row.sent_at or now
            fields += ["state", "sent_at"]
        if event.message_id and not row.esp_message_id:
            row.esp_message_id = _plain(event.message_id)[:200]
            fields.append("esp_message_id")
        newly_failing = False
        if _RANK[delivery] >= _RANK[row.delivery]:
            newly_failing = delivery in FAILING and row.delivery not in FAILING
            row.delivery, row.delivery_detail, row.delivery_at = delivery, detail, now
            fields += ["delivery", "delivery_detail", "delivery_at"]
        row.save(update_fields=fields)
    return row, newly_failing
