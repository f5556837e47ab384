"""Each ESP's inbound post, in the payload shape the ESP sends (taken from django-anymail's
tests of that ESP), for the tests that post replies to the webhooks' real URLs: the
basic-auth secret, each ESP's signature where it signs (Mandrill, MailerSend and Mailtrap
with an HMAC, Resend with svix's secret, Postal with an RSA key), the settings anymail
needs for each (``esp_settings``), and a local stand-in for the APIs from which anymail
fetches the email a Resend or Mailtrap notification only names (``esp_api``)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import quopri
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import urlencode

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from django.test import Client
from django.test.client import MULTIPART_CONTENT
from pytest_django.fixtures import Settings
from svix.webhooks import Webhook
from time_machine import TimeMachineFixture

from games.models import Seat, Step
from tests.conftest import NOW
from tests.factories import started_game

SECRET = "hook:s3cret-one"
MAILGUN_SIGNING_KEY = "mailgun-signing-key"
MANDRILL_KEY = "mandrill-webhook-key"
MAILERSEND_INBOUND_SECRET = "mailersend-inbound-secret"
MAILERSEND_SIGNING_SECRET = "mailersend-signing-secret"
MAILTRAP_INBOUND_SECRET = "mailtrap-inbound-secret"
MAILTRAP_TRACKING_SECRET = "mailtrap-tracking-secret"
# Resend signs with svix: a webhook's secret is "whsec_" and random bytes in base64.
RESEND_INBOUND_SECRET = "whsec_" + base64.b64encode(b"resend inbound webhook secret").decode()
RESEND_SIGNING_SECRET = "whsec_" + base64.b64encode(b"resend tracking webhook secret").decode()
# Postal signs with its server's RSA key; anymail checks with the public half.
POSTAL_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
FORGED_POSTAL_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
BID = "bid 2 3"
REPLY = (
    f"{BID}\n\nOn Mon, 23 Nov 2026 at 18:00, Moderator <moderator@games.example.org> wrote:\n"
    "> Liars, step 1: your bid is due\n> Bid: open with a bid\n"
)
REPLY_HTML = (
    f'<div dir="ltr">{BID}</div><br><div class="gmail_quote"><div class="gmail_attr">On Mon, '
    "23 Nov 2026 at 18:00, Moderator wrote:</div><blockquote>Liars, step 1</blockquote></div>"
)
SUBJECT = "Re: Liars, step 1"
Post = dict[str, Any]


class EspApi:
    """A stand-in for an ESP's own API on a local port, from which anymail fetches the
    inbound email a webhook only names: ``serve`` a path, read what was ``asked``."""

    def __init__(self) -> None:
        self.files: dict[str, tuple[str, bytes]] = {}
        self.asked: list[tuple[str, str | None]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                api.asked.append((self.path, self.headers.get("Authorization")))
                content_type, body = api.files.get(self.path, ("text/plain", b"not found"))
                self.send_response(200 if self.path in api.files else 404)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()

    def serve(self, path: str, content_type: str, body: bytes) -> str:
        self.files[path] = (content_type, body)
        return self.url + path

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def esp_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[EspApi]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    api = EspApi()
    yield api
    api.close()


@pytest.fixture
def esp_settings(
    settings: Settings, time_machine: TimeMachineFixture, now: datetime, esp_api: EspApi
) -> None:
    """The clock stopped at ``now``, the inbound address, and what anymail needs for each
    ESP's webhooks: the basic-auth secret, the ESPs' keys and secrets, the stand-in API."""
    time_machine.move_to(now, tick=False)
    settings.INBOUND_ADDRESS = "orders@in.example.org"
    settings.ANYMAIL = {
        "WEBHOOK_SECRET": [SECRET],
        "BREVO_API_KEY": "brevo-api-key",
        "MAILGUN_WEBHOOK_SIGNING_KEY": MAILGUN_SIGNING_KEY,
        "MANDRILL_WEBHOOK_KEY": MANDRILL_KEY,
        "MAILERSEND_INBOUND_SECRET": MAILERSEND_INBOUND_SECRET,
        "MAILERSEND_SIGNING_SECRET": MAILERSEND_SIGNING_SECRET,
        "MAILTRAP_API_TOKEN": "mailtrap-api-token",
        "MAILTRAP_API_URL": f"{esp_api.url}/api/",
        "MAILTRAP_INBOUND_SECRET": MAILTRAP_INBOUND_SECRET,
        "MAILTRAP_TRACKING_SECRET": MAILTRAP_TRACKING_SECRET,
        "POSTAL_WEBHOOK_KEY": postal_webhook_key(POSTAL_KEY),
        "RESEND_API_KEY": "re_resend_api_key",
        "RESEND_API_URL": f"{esp_api.url}/",
        "RESEND_INBOUND_SECRET": RESEND_INBOUND_SECRET,
        "RESEND_SIGNING_SECRET": RESEND_SIGNING_SECRET,
    }


@pytest.fixture
def on_turn(now: datetime) -> Seat:
    """The seat that owes the opening bid of a Liar's Dice game, started at ``now``."""
    game = started_game("liars-dice", now=now, title="Liars")
    step = Step.objects.get(game=game, number=1)
    return Seat.objects.get(game=game, position=step.prompts[0]["seat"])


def auth(secret: str = SECRET) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": "Basic " + base64.b64encode(secret.encode()).decode()}


def as_json(body: Any, **headers: str) -> Post:
    return {"data": json.dumps(body), "content_type": "application/json", "headers": headers}


def hmac_sha256(secret: str, body: bytes) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def svix_signed(body: Any, secret: str, svix_id: str, sent: datetime) -> Post:
    """``body`` as Resend posts it through svix: signed with the webhook's secret, over its
    id, the time it was sent and the bytes of the body."""
    data = json.dumps(body)
    headers = {
        "svix-id": svix_id,
        "svix-timestamp": str(int(sent.timestamp())),
        "svix-signature": Webhook(secret).sign(svix_id, sent, data),
    }
    return {"data": data, "content_type": "application/json", "headers": headers}


def postal_webhook_key(key: rsa.RSAPrivateKey) -> str:
    """The public half of ``key`` as Postal shows it and anymail takes it: the PEM block's
    base64 lines, without the BEGIN and END lines."""
    pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return "".join(pem.decode().splitlines()[1:-1])


def postal_signed(body: Any, key: rsa.RSAPrivateKey = POSTAL_KEY) -> Post:
    """``body`` as Postal posts it: the bytes signed with its RSA key (PKCS #1 v1.5 over
    SHA-1), the signature in base64 in X-Postal-Signature."""
    data = json.dumps(body).encode()
    signature = key.sign(data, padding.PKCS1v15(), hashes.SHA1())
    return {
        "data": data,
        "content_type": "application/json",
        "headers": {"X-Postal-Signature": base64.b64encode(signature).decode()},
    }


def raw_email(to: str, message_id: str, text: str = REPLY, html: str = REPLY_HTML) -> str:
    """The reply as it travels (RFC 5322, CRLF lines): what most ESPs hand over as is. With
    a text and an HTML part it is multipart/alternative; a reply with one of them alone (an
    HTML-only reply) is that part alone."""
    parts = [(kind, body) for kind, body in (("plain", text), ("html", html)) if body]
    lines = [
        "Return-Path: <ann@example.org>",
        "Received: from mail.example.org by mx.esp.example.net; Mon, 23 Nov 2026 18:00:01 +0000",
        "MIME-Version: 1.0",
        "From: Ann <ann@example.org>",
        "Date: Mon, 23 Nov 2026 18:00:00 +0000",
        f"Message-ID: {message_id}",
        f"Subject: {SUBJECT}",
        f"To: {to}",
    ]
    if len(parts) == 1:
        lines += [*mime_part(*parts[0]), ""]
    else:
        lines += ['Content-Type: multipart/alternative; boundary="000000000000b1"', ""]
        for kind, body in parts:
            lines += ["--000000000000b1", *mime_part(kind, body), ""]
        lines += ["--000000000000b1--", ""]
    return "\r\n".join(lines)


def mime_part(kind: str, body: str) -> list[str]:
    """The lines of a text/``kind`` part in UTF-8: as written when it is ASCII, else
    quoted-printable, as mail programs send the accents of "escribió" or "Grüße"."""
    if body.isascii():
        return [f'Content-Type: text/{kind}; charset="UTF-8"', "", *body.splitlines()]
    encoded = quopri.encodestring(body.encode()).decode("ascii")
    return [
        f'Content-Type: text/{kind}; charset="UTF-8"',
        "Content-Transfer-Encoding: quoted-printable",
        "",
        *encoded.splitlines(),
    ]


# --- each ESP's inbound post ----------------------------------------------------------------


def postmark(
    api: EspApi, to: str, message_id: str, text: str = REPLY, html: str = REPLY_HTML
) -> Post:
    """Postmark's inbound webhook: parsed JSON, without a stripped reply (the service cuts
    the quotation itself)."""
    return as_json(
        {
            "From": "ann@example.org",
            "FromFull": {"Email": "ann@example.org", "Name": "Ann", "MailboxHash": ""},
            "To": to,
            "ToFull": [{"Email": to, "Name": "", "MailboxHash": ""}],
            "OriginalRecipient": to,
            "Subject": SUBJECT,
            "MessageID": "73e6d360-66eb-11e1-8e72-a8904824019b",
            "Date": "Mon, 23 Nov 2026 18:00:00 +0000",
            "TextBody": text,
            "HtmlBody": html,
            "StrippedTextReply": "",
            "Headers": [{"Name": "Message-ID", "Value": message_id}],
            "Attachments": [],
        }
    )


def mailgun(
    api: EspApi, to: str, message_id: str, text: str = REPLY, html: str = REPLY_HTML
) -> Post:
    """A Mailgun route's forward(), fully parsed and signed, without a stripped text (the
    service cuts the quotation itself)."""
    timestamp, token = "1795370400", "a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0"
    signature = hmac.new(
        MAILGUN_SIGNING_KEY.encode(), f"{timestamp}{token}".encode(), hashlib.sha256
    )
    headers = [["Message-Id", message_id], ["From", "Ann <ann@example.org>"], ["To", to]]
    form = {
        "recipient": to,
        "sender": "ann@example.org",
        "from": "Ann <ann@example.org>",
        "subject": SUBJECT,
        "body-plain": text,
        "body-html": html,
        "message-headers": json.dumps(headers),
        "timestamp": timestamp,
        "token": token,
        "signature": signature.hexdigest(),
    }
    return {"data": form, "content_type": MULTIPART_CONTENT, "headers": {}}


def sendgrid(
    api: EspApi, to: str, message_id: str, text: str = REPLY, html: str = REPLY_HTML
) -> Post:
    """SendGrid's Inbound Parse, parsed (not raw) form."""
    headers = f"Message-ID: {message_id}\nFrom: ann@example.org\nTo: {to}\nSubject: Re: step 1\n"
    form = {
        "headers": headers,
        "from": "ann@example.org",
        "to": to,
        "subject": SUBJECT,
        "text": text,
        "html": html,
        "envelope": json.dumps({"from": "ann@example.org", "to": [to]}),
        "charsets": json.dumps({"text": "utf-8", "html": "utf-8", "subject": "utf-8"}),
    }
    return {"data": form, "content_type": MULTIPART_CONTENT, "headers": {}}


def brevo(
    api: EspApi,
    to: str,
    message_id: str,
    text: str = REPLY,
    html: str = REPLY_HTML,
    extracted: str | None = None,
) -> Post:
    """Brevo's inbound parsing webhook: parsed fields, and the reply Brevo extracted itself
    (in Markdown) when it ``extracted`` one; without it, the service reads the text or HTML
    body as it reads any other ESP's."""
    item = {
        "Uuid": ["3c1e4b9a-6d2f-4e8b-9a1c-5f7e2d4b6a80"],
        "MessageId": message_id,
        "InReplyTo": None,
        "From": {"Name": "Ann", "Address": "ann@example.org"},
        "To": [{"Name": None, "Address": to}],
        "Cc": [],
        "ReplyTo": None,
        "SentAtDate": "Mon, 23 Nov 2026 18:00:00 +0000",
        "Subject": SUBJECT,
        "Attachments": [],
        "Headers": {
            "Received": [
                f"by inbound.brevo.example for <{to}>; Mon, 23 Nov 2026 18:00:01 +0000",
                "from [10.10.1.22] by mail.example.org; Mon, 23 Nov 2026 18:00:00 +0000",
            ],
            "DKIM-Signature": "v=1; a=rsa-sha256; d=example.org; ...",
            "MIME-Version": "1.0",
            "From": "Ann <ann@example.org>",
            "Date": "Mon, 23 Nov 2026 18:00:00 +0000",
            "Message-ID": message_id,
            "Subject": SUBJECT,
            "To": to,
            "Content-Type": "multipart/alternative",
        },
        "SpamScore": 0.4,
        "ExtractedMarkdownMessage": extracted,
        "ExtractedMarkdownSignature": None,
        "RawHtmlBody": html + "\r\n" if html else None,
        "RawTextBody": text.replace("\n", "\r\n") if text else None,
    }
    return as_json({"items": [item]})


def mailjet(
    api: EspApi, to: str, message_id: str, text: str = REPLY, html: str = REPLY_HTML
) -> Post:
    """Mailjet's Parse API: headers (repeated ones as lists) and the text and HTML parts (a
    reply's only part alone)."""
    parts = [
        (
            {
                "Headers": {"Content-Type": ['text/plain; charset="UTF-8"']},
                "ContentRef": "Text-part",
            },
            text,
        ),
        (
            {
                "Headers": {
                    "Content-Type": ['text/html; charset="UTF-8"'],
                    "Content-Transfer-Encoding": ["quoted-printable"],
                },
                "ContentRef": "Html-part",
            },
            html,
        ),
    ]
    return as_json(
        {
            "Sender": "ann@example.org",
            "Recipient": to,
            "Date": "20261123T180000",
            "From": "Ann <ann@example.org>",
            "Subject": SUBJECT,
            "Headers": {
                "Return-Path": ["<ann@example.org>"],
                "Received": [
                    f"from mail.example.org by parse.mailjet.com for <{to}>",
                    "by 10.10.1.71 with HTTP; Mon, 23 Nov 2026 18:00:00 +0000",
                ],
                "MIME-Version": ["1.0"],
                "From": "Ann <ann@example.org>",
                "Date": "Mon, 23 Nov 2026 18:00:00 +0000",
                "Message-ID": message_id,
                "Subject": SUBJECT,
                "To": to,
                "Content-Type": ['multipart/alternative; boundary="boundary0"'],
            },
            "Parts": [part for part, body in parts if body],
            **{name: body for name, body in (("Text-part", text), ("Html-part", html)) if body},
            "SpamAssassinScore": "0.4",
        }
    )


def sparkpost(
    api: EspApi, to: str, message_id: str, text: str = REPLY, html: str = REPLY_HTML
) -> Post:
    """SparkPost's inbound relay webhook: a batch of relay_message events, raw email."""
    event = {
        "protocol": "smtp",
        "rcpt_to": to,
        "msg_from": "ann@example.org",
        "friendly_from": "ann@example.org",
        "webhook_id": "1234567890",
        "customer_id": "1",
        "content": {
            "email_rfc822_is_base64": False,
            "email_rfc822": raw_email(to, message_id, text, html),
            "subject": SUBJECT,
            "to": [to],
        },
    }
    return as_json([{"msys": {"relay_message": event}}])


def mandrill_signed(events: list[dict[str, Any]], key: str = MANDRILL_KEY) -> Post:
    """Mandrill's form post, signed as Mandrill signs it: the URL it was given (with the
    basic-auth secret) followed by each field's name and value."""
    form = {"mandrill_events": json.dumps(events)}
    url = f"http://{SECRET}@testserver/mail/webhooks/mandrill/"
    signed = url + "".join(name + value for name, value in sorted(form.items()))
    digest = hmac.new(key.encode(), signed.encode(), hashlib.sha1).digest()
    return {
        "data": urlencode(form),
        "content_type": "application/x-www-form-urlencoded",
        "headers": {"X-Mandrill-Signature": base64.b64encode(digest).decode()},
    }


def mandrill_inbound(
    to: str,
    message_id: str,
    key: str = MANDRILL_KEY,
    text: str = REPLY,
    html: str = REPLY_HTML,
) -> Post:
    event = {
        "event": "inbound",
        "ts": 1795370400,
        "msg": {
            "raw_msg": raw_email(to, message_id, text, html),
            "email": to,
            "sender": None,
            "from_email": "ann@example.org",
            "from_name": "Ann",
            "subject": SUBJECT,
            "spam_report": {"score": 0.4, "matched_rules": []},
            "tags": [],
        },
    }
    return mandrill_signed([event], key)


def mandrill(
    api: EspApi, to: str, message_id: str, text: str = REPLY, html: str = REPLY_HTML
) -> Post:
    """Mandrill's inbound route: a batch of inbound events, raw email, signed."""
    return mandrill_inbound(to, message_id, text=text, html=html)


def mailersend_signed(body: Any, secret: str) -> Post:
    # MailerSend escapes every "/" in its JSON, and signs the bytes it sends.
    data = json.dumps(body).replace("/", "\\/").encode()
    return {
        "data": data,
        "content_type": "application/json",
        "headers": {"Signature": hmac_sha256(secret, data)},
    }


def mailersend_inbound(
    to: str,
    message_id: str,
    secret: str = MAILERSEND_INBOUND_SECRET,
    text: str = REPLY,
    html: str = REPLY_HTML,
) -> Post:
    body = {
        "type": "inbound.message",
        "inbound_id": "k68zxl2en3kl9j90",
        "url": "https://moderator.example.org/mail/webhooks/mailersend/inbound/",
        "created_at": "2026-11-23T18:00:02.417935Z",
        "data": {
            "object": "message",
            "id": "6402ab57f79d39d7e10f2523",
            "recipients": {
                "rcptTo": [{"email": to}],
                "to": {"raw": to, "data": [{"email": to, "name": ""}]},
            },
            "from": {"email": "ann@example.org", "name": "Ann", "raw": "Ann <ann@example.org>"},
            "sender": {"email": "ann@example.org"},
            "subject": SUBJECT,
            "date": "Mon, 23 Nov 2026 18:00:00 +0000",
            "headers": {"Message-ID": message_id, "From": "Ann <ann@example.org>", "To": to},
            "text": text or None,
            "html": html or None,
            "raw": raw_email(to, message_id, text, html),
            "attachments": [],
            "spf_check": {"code": "+", "value": None},
            "dkim_check": False,
            "created_at": "2026-11-23T18:00:01.525000Z",
        },
    }
    return mailersend_signed(body, secret)


def mailersend(
    api: EspApi, to: str, message_id: str, text: str = REPLY, html: str = REPLY_HTML
) -> Post:
    """MailerSend's inbound route: the parsed email and the raw one, signed."""
    return mailersend_inbound(to, message_id, text=text, html=html)


RESEND_EMAIL_ID = "56761188-7520-42d8-8898-ff6fc54ce618"


def resend_notification(to: str, message_id: str, secret: str = RESEND_INBOUND_SECRET) -> Post:
    body = {
        "type": "email.received",
        "created_at": "2026-11-23T18:00:02.126Z",
        "data": {
            "email_id": RESEND_EMAIL_ID,
            "created_at": "2026-11-23T18:00:01.894719+00:00",
            "from": "Ann <ann@example.org>",
            "to": [to],
            "cc": [],
            "bcc": [],
            "subject": SUBJECT,
            "message_id": message_id,
            "attachments": [],
        },
    }
    return svix_signed(body, secret, "msg_2p5Yn8ExBkR4mFT0ZsHzj3WkDdA", NOW + timedelta(seconds=2))


def resend(
    api: EspApi, to: str, message_id: str, text: str = REPLY, html: str = REPLY_HTML
) -> Post:
    """Resend's email.received notification, signed; the email is fetched from Resend's
    API, which points at the raw email."""
    raw_url = api.serve(
        f"/raw/{RESEND_EMAIL_ID}.eml",
        "message/rfc822",
        raw_email(to, message_id, text, html).encode(),
    )
    received = {
        "object": "email",
        "id": RESEND_EMAIL_ID,
        "from": "Ann <ann@example.org>",
        "to": [to],
        "cc": [],
        "bcc": [],
        "reply_to": [],
        "subject": SUBJECT,
        "html": html or None,
        "text": text or None,
        "headers": {"Message-ID": message_id},
        "message_id": message_id,
        "created_at": "2026-11-23T18:00:01.894719+00:00",
        "attachments": [],
        "raw": {"download_url": raw_url, "expires_at": "2026-11-24T18:00:01+00:00"},
    }
    api.serve(
        f"/emails/receiving/{RESEND_EMAIL_ID}", "application/json", json.dumps(received).encode()
    )
    return resend_notification(to, message_id)


MAILTRAP_MESSAGE_ID = "0000111122223333444"


def mailtrap_signed(body: Any, secret: str) -> Post:
    data = json.dumps(body).encode()
    return {
        "data": data,
        "content_type": "application/json",
        "headers": {"Mailtrap-Signature": hmac_sha256(secret, data)},
    }


def mailtrap_notification(inbox_id: int = 1111, secret: str = MAILTRAP_INBOUND_SECRET) -> Post:
    event = {
        "event": "inbound.message_received",
        "event_id": "2eac365a-a49d-11f1-8c43-0a58a9feac03",
        "timestamp": 1795370402436,
        "inbox_id": inbox_id,
        "message_id": MAILTRAP_MESSAGE_ID,
        "from": "Ann <ann@example.org>",
    }
    return mailtrap_signed({"events": [event]}, secret)


def mailtrap(
    api: EspApi, to: str, message_id: str, text: str = REPLY, html: str = REPLY_HTML
) -> Post:
    """Mailtrap's inbound notification, signed; the message is fetched from Mailtrap's API,
    and the raw email from the URL it gives."""
    raw = raw_email(to, message_id, text, html).encode()
    raw_url = api.serve("/raw/mailtrap.eml", "message/rfc822", raw)
    data = {
        "id": MAILTRAP_MESSAGE_ID,
        "inbox_id": 1111,
        "from": "Ann <ann@example.org>",
        "to": [to],
        "raw_message_url": raw_url,
        "raw_message_expires_at": "2026-11-23T19:00:02.569Z",
    }
    api.serve(
        f"/api/inbound/inboxes/1111/messages/{MAILTRAP_MESSAGE_ID}",
        "application/json",
        json.dumps(data).encode(),
    )
    return mailtrap_notification()


def sns(message: dict[str, Any], topic: str) -> Post:
    """An Amazon SNS notification carrying ``message``, as SNS posts it."""
    notification = {
        "Type": "Notification",
        "MessageId": "8f6dee70-c885-558a-be7d-bd48bbf5335e",
        "TopicArn": f"arn:aws:sns:us-east-1:111111111111:{topic}",
        "Subject": "Amazon SES Email Receipt Notification",
        "Message": json.dumps(message),
        "Timestamp": "2026-11-23T18:00:02.516Z",
        "SignatureVersion": "1",
        "Signature": "EXAMPLE_SIGNATURE==",
        "SigningCertURL": "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-1.pem",
        "UnsubscribeURL": "https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe",
    }
    return {
        "data": json.dumps(notification),
        "content_type": "text/plain; charset=UTF-8",
        "headers": {
            "x-amz-sns-message-type": "Notification",
            "x-amz-sns-message-id": notification["MessageId"],
            "x-amz-sns-topic-arn": notification["TopicArn"],
        },
    }


def amazon_ses(
    api: EspApi, to: str, message_id: str, text: str = REPLY, html: str = REPLY_HTML
) -> Post:
    """An Amazon SES receipt rule's SNS action: the raw email inside the notification."""
    received = {
        "notificationType": "Received",
        "mail": {
            "timestamp": "2026-11-23T18:00:01.636Z",
            "source": "ann@example.org",
            "messageId": "jili9m351il3gkburn7o2f0u6788stij94c8ld01",
            "destination": [to],
        },
        "receipt": {
            "recipients": [to],
            "spamVerdict": {"status": "PASS"},
            "action": {
                "type": "SNS",
                "topicArn": "arn:aws:sns:us-east-1:111111111111:SES_Inbound",
                "encoding": "UTF8",
            },
        },
        "content": raw_email(to, message_id, text, html),
    }
    return sns(received, "SES_Inbound")


def postal_route(
    to: str,
    message_id: str,
    key: rsa.RSAPrivateKey = POSTAL_KEY,
    text: str = REPLY,
    html: str = REPLY_HTML,
) -> Post:
    """Postal's HTTP endpoint for a route: the raw email in base64, signed with the Postal
    server's RSA key."""
    raw = raw_email(to, message_id, text, html).encode()
    body = {
        "id": 233980,
        "rcpt_to": to,
        "mail_from": "ann@example.org",
        "token": "rtmPK3k7",
        "subject": SUBJECT,
        "message": base64.b64encode(raw).decode(),
        "base64": True,
        "size": len(raw),
    }
    return postal_signed(body, key)


def postal_inbound(
    api: EspApi, to: str, message_id: str, text: str = REPLY, html: str = REPLY_HTML
) -> Post:
    return postal_route(to, message_id, text=text, html=html)


class Builds(Protocol):
    """An ESP's post of a reply to ``to``: its text and HTML bodies, either of them empty
    when the reply has no such part."""

    def __call__(
        self, api: EspApi, to: str, message_id: str, text: str = ..., html: str = ...
    ) -> Post: ...


@dataclass(frozen=True)
class Inbound:
    url: str
    esp: str  # anymail's name for it, kept with each email
    post: Builds


# The ESPs besides Postmark, Mailgun and SendGrid whose inbound emails can become orders
# here, each through its real URL.
INBOUND = {
    "brevo": Inbound("/mail/webhooks/brevo/inbound/", "Brevo", brevo),
    "mailjet": Inbound("/mail/webhooks/mailjet/inbound/", "Mailjet", mailjet),
    "sparkpost": Inbound("/mail/webhooks/sparkpost/inbound/", "SparkPost", sparkpost),
    "mandrill": Inbound("/mail/webhooks/mandrill/", "Mandrill", mandrill),
    "mailersend": Inbound("/mail/webhooks/mailersend/inbound/", "MailerSend", mailersend),
    "resend": Inbound("/mail/webhooks/resend/inbound/", "Resend", resend),
    "mailtrap": Inbound("/mail/webhooks/mailtrap/inbound/", "Mailtrap", mailtrap),
    "amazon_ses": Inbound("/mail/webhooks/amazon_ses/inbound/", "Amazon SES", amazon_ses),
    "postal": Inbound("/mail/webhooks/postal/inbound/", "Postal", postal_inbound),
}
# Every ESP whose inbound emails can become orders here.
ESPS = {
    "postmark": Inbound("/mail/webhooks/postmark/inbound/", "Postmark", postmark),
    "mailgun": Inbound("/mail/webhooks/mailgun/inbound/", "Mailgun", mailgun),
    "sendgrid": Inbound("/mail/webhooks/sendgrid/inbound/", "SendGrid", sendgrid),
    **INBOUND,
}
# What each ESP's inbound webhook asked of the ESP's API, and with which credentials.
FETCHED = {
    "resend": [
        (f"/emails/receiving/{RESEND_EMAIL_ID}", "Bearer re_resend_api_key"),
        (f"/raw/{RESEND_EMAIL_ID}.eml", None),
    ],
    "mailtrap": [
        (f"/api/inbound/inboxes/1111/messages/{MAILTRAP_MESSAGE_ID}", "Bearer mailtrap-api-token"),
        ("/raw/mailtrap.eml", None),
    ],
}


def read_kept() -> None:
    """What a mail worker does with the posts the webhooks kept (its task, as handed out
    on commit or by the sweep): each is read, in the order it came."""
    from moderator.mail import tasks as mail_tasks
    from moderator.mail.models import InboundMessage

    unread = InboundMessage.objects.filter(state="received").exclude(webhook="")
    for pk in unread.order_by("id").values_list("pk", flat=True):
        mail_tasks.read_inbound(inbound_id=pk)


def post(url: str, body: Post, **headers: Any) -> Any:
    """The ESP's post, and then the mail worker's reading of what the webhook kept."""
    response = Client().post(url, **body, **headers)
    read_kept()
    return response
