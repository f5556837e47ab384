"""Every wired webhook URL answers a post without the basic-auth secret, or with a wrong
one, 401 with a Basic challenge; a post whose ESP signature does not hold 403; a payload it
cannot read, with the right credentials, 400; a webhook whose ESP setting is missing 503;
and none of them stores anything. The posts are the ESPs' real payload shapes, which the
same URL takes with the right credentials."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from django.test import Client
from pytest_django.fixtures import Settings

from moderator.mail.models import DeliveryEvent, InboundMessage

pytestmark = [
    pytest.mark.django_db,
    # anymail warns at every SendGrid view that it no longer tests SendGrid.
    pytest.mark.filterwarnings("ignore::anymail.exceptions.AnymailNotSupportedWarning"),
]

SECRET = "hook:s3cret-one"
SIGNING_KEY = "mailgun-signing-key"
CHALLENGE = 'Basic realm="webhooks", charset="UTF-8"'
TIMESTAMP, TOKEN = "1795370400", "a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0"
Post = dict[str, Any]


@pytest.fixture(autouse=True)
def secrets(settings: Settings) -> None:
    settings.ANYMAIL = {
        "WEBHOOK_SECRET": [SECRET, "hook:s3cret-two"],
        "MAILGUN_WEBHOOK_SIGNING_KEY": SIGNING_KEY,
    }


def auth(secret: str = SECRET) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": "Basic " + base64.b64encode(secret.encode()).decode()}


def mailgun_signature(key: str = SIGNING_KEY) -> dict[str, str]:
    digest = hmac.new(key.encode(), f"{TIMESTAMP}{TOKEN}".encode(), hashlib.sha256)
    return {"timestamp": TIMESTAMP, "token": TOKEN, "signature": digest.hexdigest()}


def as_json(body: Any) -> Post:
    return {"data": json.dumps(body), "content_type": "application/json"}


# --- each URL's post, as its ESP makes it ---------------------------------------------------


def postmark_inbound() -> Post:
    return as_json(
        {
            "From": "ann@example.org",
            "FromFull": {"Email": "ann@example.org", "Name": "Ann", "MailboxHash": ""},
            "To": "orders@in.example.org",
            "ToFull": [{"Email": "orders@in.example.org", "Name": "", "MailboxHash": ""}],
            "Subject": "Re: step 1",
            "MessageID": "73e6d360-66eb-11e1-8e72-a8904824019b",
            "Date": "Mon, 23 Nov 2026 18:00:00 +0000",
            "TextBody": "W5 1+3 3+4",
            "HtmlBody": "",
            "Headers": [{"Name": "Message-ID", "Value": "<pm-1@mail.example.net>"}],
            "Attachments": [],
        }
    )


def postmark_tracking() -> Post:
    return as_json(
        {
            "RecordType": "Delivery",
            "MessageID": "883953f4-6105-42a2-a16a-77a8eac79483",
            "Recipient": "ann@example.org",
            "DeliveredAt": "2026-11-23T18:00:05Z",
            "Details": "delivered",
        }
    )


def mailgun_inbound(key: str = SIGNING_KEY) -> Post:
    headers = [["Message-Id", "<mg-1@mail.example.net>"], ["From", "bob@example.org"]]
    return {
        "data": {
            "recipient": "orders@in.example.org",
            "sender": "bob@example.org",
            "from": "bob@example.org",
            "subject": "Re: step 1",
            "body-plain": "W5 1+3 3+4",
            "message-headers": json.dumps(headers),
            **mailgun_signature(key),
        }
    }


def mailgun_tracking(key: str = SIGNING_KEY) -> Post:
    event = {
        "event": "delivered",
        "id": "G9Bn5sl1TC6nu79C8C0bwg",
        "timestamp": 1795370400.0,
        "recipient": "ann@example.org",
        "message": {"headers": {"message-id": "20261123180000.1.ABC@mg.example.org"}},
    }
    return as_json({"signature": mailgun_signature(key), "event-data": event})


def sendgrid_inbound() -> Post:
    headers = "Message-ID: <sg-1@mail.example.net>\nFrom: cy@example.org\nSubject: Re: step 1\n"
    envelope = {"from": "cy@example.org", "to": ["orders@in.example.org"]}
    return {
        "data": {
            "headers": headers,
            "from": "cy@example.org",
            "to": "orders@in.example.org",
            "subject": "Re: step 1",
            "text": "W5 1+3 3+4",
            "envelope": json.dumps(envelope),
        }
    }


def sendgrid_tracking() -> Post:
    event = {
        "email": "ann@example.org",
        "timestamp": 1795370400,
        "event": "delivered",
        "sg_event_id": "sg-event-1",
        "sg_message_id": "sg-message-1",
    }
    return as_json([event])


URLS: dict[str, tuple[str, Callable[[], Post]]] = {
    "postmark inbound": ("/mail/webhooks/postmark/inbound/", postmark_inbound),
    "postmark tracking": ("/mail/webhooks/postmark/tracking/", postmark_tracking),
    "mailgun inbound": ("/mail/webhooks/mailgun/inbound/", mailgun_inbound),
    "mailgun tracking": ("/mail/webhooks/mailgun/tracking/", mailgun_tracking),
    "sendgrid inbound": ("/mail/webhooks/sendgrid/inbound/", sendgrid_inbound),
    "sendgrid tracking": ("/mail/webhooks/sendgrid/tracking/", sendgrid_tracking),
}


def post(url: str, body: Post, **headers: Any) -> Any:
    return Client().post(url, **body, **headers)


def stored() -> tuple[int, int]:
    return InboundMessage.objects.count(), DeliveryEvent.objects.count()


def kept_one(name: str) -> tuple[int, int]:
    return (1, 0) if name.endswith("inbound") else (0, 1)


@pytest.mark.parametrize("name", URLS)
def test_with_the_secret_each_url_takes_its_post(name: str) -> None:
    url, body = URLS[name]
    response = post(url, body(), **auth())
    assert response.status_code == 200
    assert stored() == kept_one(name)


@pytest.mark.parametrize("name", URLS)
@pytest.mark.parametrize(
    "headers",
    [
        {},
        auth("hook:wrong"),
        {"HTTP_AUTHORIZATION": "Bearer " + SECRET},
        {"HTTP_AUTHORIZATION": "Basic not-base64!"},
    ],
    ids=["no secret", "wrong secret", "not basic", "unreadable"],
)
def test_a_post_without_the_secret_answers_401_with_a_challenge_and_stores_nothing(
    name: str, headers: dict[str, str]
) -> None:
    url, body = URLS[name]
    response = post(url, body(), **headers)
    assert (response.status_code, response["WWW-Authenticate"]) == (401, CHALLENGE)
    assert response.content == b"the webhook's credentials are missing or wrong"
    assert stored() == (0, 0)


@pytest.mark.parametrize("name", URLS)
def test_every_url_is_off_until_a_secret_is_set(name: str, settings: Settings) -> None:
    settings.ANYMAIL = {"MAILGUN_WEBHOOK_SIGNING_KEY": SIGNING_KEY}
    url, body = URLS[name]
    response = post(url, body(), **auth())
    assert response.status_code == 403
    assert response.content == b"webhooks are off: ANYMAIL_WEBHOOK_SECRET is not set"
    assert stored() == (0, 0)


def without_signature(body: Post) -> Post:
    if body.get("content_type") == "application/json":
        return as_json({k: v for k, v in json.loads(body["data"]).items() if k != "signature"})
    return {"data": {k: v for k, v in body["data"].items() if k != "signature"}}


@pytest.mark.parametrize(
    ("url", "body"),
    [
        ("/mail/webhooks/mailgun/inbound/", mailgun_inbound(key="forged")),
        ("/mail/webhooks/mailgun/inbound/", without_signature(mailgun_inbound())),
        ("/mail/webhooks/mailgun/tracking/", mailgun_tracking(key="forged")),
        ("/mail/webhooks/mailgun/tracking/", without_signature(mailgun_tracking())),
    ],
    ids=[
        "mailgun inbound forged",
        "mailgun inbound unsigned",
        "mailgun tracking forged",
        "mailgun tracking unsigned",
    ],
)
def test_the_secret_with_a_signature_that_does_not_hold_answers_403_and_stores_nothing(
    url: str, body: Post
) -> None:
    response = post(url, body, **auth())
    assert response.status_code == 403
    assert response.content == b"the ESP's signature of this post does not hold"
    assert stored() == (0, 0)


def unreadable(name: str) -> Post:
    """A post of ``name`` with the right signature whose payload cannot be read."""
    if name == "mailgun inbound":
        return {"data": mailgun_signature()}
    if name == "mailgun tracking":
        return as_json({"signature": mailgun_signature()})
    if name == "sendgrid inbound":
        return {"data": {"subject": "Re: step 1"}}
    return {"data": "{not json", "content_type": "application/json"}


# An inbound form post is read by a mail worker, not in the request (issue 39, section 3):
# the webhook looks only for a seat's address in it, and one that names none is kept as a
# small "ignored" row, never read, and answered 200 (the ESP's retries would change nothing).
UNREAD_FORMS = ("mailgun inbound", "sendgrid inbound")


@pytest.mark.parametrize("name", [name for name in URLS if name not in UNREAD_FORMS])
def test_the_secret_with_a_payload_that_cannot_be_read_answers_400_and_stores_nothing(
    name: str,
) -> None:
    url, _ = URLS[name]
    response = post(url, unreadable(name), **auth())
    assert response.status_code == 400
    assert stored() == (0, 0)


@pytest.mark.parametrize("name", UNREAD_FORMS)
def test_an_inbound_form_naming_no_seat_is_kept_unread_as_ignored(name: str) -> None:
    url, _ = URLS[name]
    response = post(url, unreadable(name), **auth())
    assert (response.status_code, response.content) == (200, b"")
    row = InboundMessage.objects.get()
    assert (row.state, row.note, row.payload) == (
        "ignored",
        "no valid reply address in the post: not read",
        None,
    )
    assert stored() == (1, 0)


@pytest.mark.parametrize("name", ["mailgun inbound", "mailgun tracking"])
def test_a_webhook_whose_esp_setting_is_missing_answers_503_and_stores_nothing(
    name: str, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    settings.ANYMAIL = {"WEBHOOK_SECRET": [SECRET]}
    url, body = URLS[name]
    response = post(url, body(), **auth())
    reason = (
        "You must set ANYMAIL = {'MAILGUN_WEBHOOK_SIGNING_KEY': ...} or "
        "ANYMAIL_MAILGUN_WEBHOOK_SIGNING_KEY in your Django settings"
    )
    assert (response.status_code, response.content) == (
        503,
        f"this webhook is not set up: {reason}".encode(),
    )
    assert caplog.messages[0] == f"{url} is not set up: {reason}"
    assert stored() == (0, 0)


def test_the_secret_is_asked_for_before_a_missing_esp_setting_is_told(settings: Settings) -> None:
    settings.ANYMAIL = {"WEBHOOK_SECRET": [SECRET]}
    url, body = URLS["mailgun inbound"]
    response = post(url, body())
    assert (response.status_code, response["WWW-Authenticate"]) == (401, CHALLENGE)
    assert stored() == (0, 0)


# SendGrid signs its tracking posts with an ECDSA key (P-256, SHA-256) over the timestamp and
# the body; anymail checks them when SENDGRID_TRACKING_WEBHOOK_VERIFICATION_KEY is set (it
# does not check SendGrid's inbound posts).
SENDGRID_KEY = ec.generate_private_key(ec.SECP256R1())
FORGED_SENDGRID_KEY = ec.generate_private_key(ec.SECP256R1())


def sendgrid_verification_key(key: ec.EllipticCurvePrivateKey) -> str:
    """The public half of ``key`` as SendGrid shows it: the DER key in base64."""
    der = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.b64encode(der).decode()


def sendgrid_signed(body: Post, key: ec.EllipticCurvePrivateKey = SENDGRID_KEY) -> Post:
    timestamp = TIMESTAMP
    signature = key.sign(timestamp.encode() + body["data"].encode(), ec.ECDSA(hashes.SHA256()))
    return {
        **body,
        "headers": {
            "X-Twilio-Email-Event-Webhook-Signature": base64.b64encode(signature).decode(),
            "X-Twilio-Email-Event-Webhook-Timestamp": timestamp,
        },
    }


@pytest.fixture
def sendgrid_key(settings: Settings) -> None:
    settings.ANYMAIL = {
        "WEBHOOK_SECRET": [SECRET],
        "SENDGRID_TRACKING_WEBHOOK_VERIFICATION_KEY": sendgrid_verification_key(SENDGRID_KEY),
    }


@pytest.mark.usefixtures("sendgrid_key")
def test_with_sendgrids_verification_key_a_signed_tracking_post_is_taken() -> None:
    response = post(
        "/mail/webhooks/sendgrid/tracking/", sendgrid_signed(sendgrid_tracking()), **auth()
    )
    assert (response.status_code, response.content) == (200, b"")
    assert stored() == (0, 1)


@pytest.mark.usefixtures("sendgrid_key")
@pytest.mark.parametrize(
    "body",
    [
        sendgrid_signed(sendgrid_tracking(), key=FORGED_SENDGRID_KEY),
        sendgrid_tracking(),
        {
            **sendgrid_signed(sendgrid_tracking()),
            "data": sendgrid_signed(sendgrid_tracking())["data"].replace("delivered", "bounce"),
        },
    ],
    ids=["forged", "unsigned", "altered"],
)
def test_with_sendgrids_verification_key_a_post_it_does_not_sign_answers_403(body: Post) -> None:
    response = post("/mail/webhooks/sendgrid/tracking/", body, **auth())
    assert (response.status_code, response.content) == (
        403,
        b"the ESP's signature of this post does not hold",
    )
    assert stored() == (0, 0)


def test_a_signature_anymail_cannot_read_to_check_answers_400_and_stores_nothing() -> None:
    # Anymail's Mailgun check reads the block's fields and fails on a string (TypeError).
    body = json.loads(mailgun_tracking()["data"])
    response = post(
        "/mail/webhooks/mailgun/tracking/", as_json({**body, "signature": "x"}), **auth()
    )
    assert response.status_code == 400
    assert stored() == (0, 0)
