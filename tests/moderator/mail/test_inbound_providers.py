"""Orders by email reply through the ESPs wired besides Postmark, Mailgun and SendGrid, each
in its own payload shape (taken from django-anymail's tests of that ESP) posted to its real
URL: the reply becomes the order, with its receipt. Without the basic-auth secret a post
answers 401; where the ESP signs its posts (Postal with an RSA key, Resend with svix's
secret, as these tests sign them), a forged or missing signature answers 403; where anymail
needs a setting that is missing, 503; none of them stores anything. The tracking URL of each
of those ESPs takes a delivered or bounced event.

Resend and Mailtrap post only a notification, and anymail fetches the email from their API:
a local HTTP server stands in for that API (the ESP's edge). Amazon SES posts through
Amazon SNS with the email inline, which anymail reads without Amazon's API; the only call
it would make to AWS (confirming an SNS subscription) is mocked at boto3's session, the
edge, and otherwise refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from unittest import mock

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from django.test import Client
from pytest_django.fixtures import Settings

from games import tasks
from games.models import Order, Seat
from games.postal import access
from moderator.mail.models import DeliveryEvent, InboundMessage, OutboundEmail
from tests.conftest import NOW
from tests.esps import (
    BID,
    FETCHED,
    FORGED_POSTAL_KEY,
    INBOUND,
    MAILERSEND_SIGNING_SECRET,
    MAILTRAP_TRACKING_SECRET,
    MANDRILL_KEY,
    POSTAL_KEY,
    RESEND_INBOUND_SECRET,
    RESEND_SIGNING_SECRET,
    SECRET,
    SUBJECT,
    EspApi,
    Post,
    amazon_ses,
    as_json,
    auth,
    brevo,
    mailersend_inbound,
    mailersend_signed,
    mailtrap_notification,
    mailtrap_signed,
    mandrill_inbound,
    mandrill_signed,
    post,
    postal_route,
    postal_signed,
    resend,
    resend_notification,
    sns,
    svix_signed,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("esp_settings")]

SEED = bytes(range(32))


def stored() -> tuple[int, int, int]:
    return InboundMessage.objects.count(), DeliveryEvent.objects.count(), Order.objects.count()


@pytest.mark.parametrize("provider", INBOUND)
def test_a_reply_through_each_esp_becomes_the_order_with_its_receipt(
    on_turn: Seat, esp_api: EspApi, provider: str
) -> None:
    inbound = INBOUND[provider]
    address = access.reply_address(on_turn)
    assert address is not None
    message_id = f"<{provider}-1@mail.example.org>"
    response = post(inbound.url, inbound.post(esp_api, address, message_id), **auth())
    assert (response.status_code, response.content) == (200, b"")
    order = Order.objects.get()
    assert (order.seat_id, order.source, order.text, order.canonical) == (
        on_turn.pk,
        "email",
        BID,
        BID,
    )
    message = InboundMessage.objects.get()
    assert (message.state, message.esp, message.message_id, message.order_id) == (
        "order",
        inbound.esp,
        message_id,
        order.pk,
    )
    assert (message.sender, message.subject) == ("ann@example.org", SUBJECT)
    assert esp_api.asked == FETCHED.get(provider, [])
    assert tasks.write_receipts() == 1
    assert OutboundEmail.objects.filter(kind="receipt", to=on_turn.email).count() == 1


def test_mailtraps_test_payload_is_taken_and_nothing_is_fetched_or_kept(esp_api: EspApi) -> None:
    # Mailtrap's "Test your integration" names inbox 1; anymail signals no email for it.
    response = post("/mail/webhooks/mailtrap/inbound/", mailtrap_notification(inbox_id=1), **auth())
    assert response.status_code == 200
    assert esp_api.asked == []
    assert stored() == (0, 0, 0)


def test_brevos_own_extraction_of_the_reply_is_what_is_read(on_turn: Seat, esp_api: EspApi) -> None:
    # Brevo extracts the message (in Markdown) and its signature itself: the service reads
    # the extraction, so a sign-off Brevo took for the signature never reaches it (and the
    # receipt does not name it).
    address = access.reply_address(on_turn)
    assert address is not None
    text = f"{BID}\nThanks, Ann\n\nOn Mon, 23 Nov 2026, Moderator wrote:\n> Liars, step 1\n"
    body = brevo(esp_api, address, "<brevo-2@mail.example.org>", text, "", extracted=f"{BID}  \n")
    response = post("/mail/webhooks/brevo/inbound/", body, **auth())
    assert (response.status_code, response.content) == (200, b"")
    order = Order.objects.get()
    assert (order.text, order.canonical, order.ignored) == (BID, BID, "")
    assert InboundMessage.objects.get().state == "order"


# --- what each new URL refuses ------------------------------------------------------------


ADDRESS = "orders+1-0-aaaaaaaaaaaaaaaaaaaaaaaaaa@in.example.org"


def brevo_delivered() -> Post:
    return as_json(
        {
            "event": "delivered",
            "email": "ann@example.org",
            "id": 9999999,
            "date": "2026-11-23 19:00:05",
            "ts": 1795374005,
            "ts_event": 1795374005,
            "ts_epoch": 1795370405000,
            "message-id": "<202611231800.27287306012@smtp-relay.mailin.fr>",
            "subject": "Liars, step 1",
            "tags": [],
            "sending_ip": "185.41.28.109",
        }
    )


def mailjet_sent() -> Post:
    return as_json(
        {
            "event": "sent",
            "time": 1795370405,
            "MessageID": 19421777835146490,
            "Message_GUID": "1ab23cd4-e567-8901-2345-6789f0gh1i2j",
            "email": "ann@example.org",
            "mj_campaign_id": 7257,
            "mj_contact_id": 4,
            "customcampaign": "",
            "mj_message_id": "19421777835146490",
            "smtp_reply": "sent (250 2.0.0 OK 1795370405 fm12si1105ejc.199 - gsmtp)",
            "CustomID": "",
            "Payload": "",
        }
    )


def sparkpost_delivery() -> Post:
    event = {
        "type": "delivery",
        "event_id": "92356927693813856",
        "transmission_id": "65832150921904138",
        "message_id": "0e0d94b7-9085-4e3c-ab30-e3f2cd9c273e",
        "raw_rcpt_to": "ann@example.org",
        "rcpt_to": "ann@example.org",
        "timestamp": "1795370405",
        "raw_reason": "250 2.0.0 OK",
        "queue_time": "3534",
        "num_retries": "0",
        "rcpt_meta": {},
    }
    return as_json([{"msys": {"message_event": event}}])


def mandrill_hard_bounce(key: str = MANDRILL_KEY) -> Post:
    event = {
        "event": "hard_bounce",
        "msg": {
            "ts": 1795370400,
            "subject": "Liars, step 1",
            "email": "ann@example.org",
            "sender": "moderator@games.example.org",
            "bounce_description": "bad_mailbox",
            "bgtools_code": 10,
            "diag": "smtp;550 5.1.1 The email account that you tried to reach does not exist.",
            "metadata": {},
            "tags": [],
            "_id": "abcdef012345789abcdef012345789",
        },
        "_id": "abcdef012345789abcdef012345789",
        "ts": 1795370405,
    }
    return mandrill_signed([event], key)


def resend_delivered(secret: str = RESEND_SIGNING_SECRET) -> Post:
    return svix_signed(
        {
            "type": "email.delivered",
            "created_at": "2026-11-23T18:00:05.000Z",
            "data": {
                "created_at": "2026-11-23 18:00:00.372259+00",
                "email_id": "4ef9a417-02e9-4d39-ad75-9611e0fcc33c",
                "from": "Moderator <moderator@games.example.org>",
                "to": ["ann@example.org"],
                "subject": "Liars, step 1",
            },
        },
        secret,
        "msg_2p5Yn8ExBkR4mFT0ZsHzj3WkDdB",
        NOW + timedelta(seconds=5),
    )


def mailersend_delivered(secret: str = MAILERSEND_SIGNING_SECRET) -> Post:
    body = {
        "type": "activity.delivered",
        "domain_id": "7nxe3yjmeq28vp0k",
        "created_at": "2026-11-23T18:00:05.865000Z",
        "webhook_id": "2351ndgwr3j4zqx8",
        "url": "https://moderator.example.org/mail/webhooks/mailersend/tracking/",
        "data": {
            "object": "activity",
            "id": "63fd1c1fcfbe46145d003a7b",
            "type": "delivered",
            "created_at": "2026-11-23T18:00:05.865000Z",
            "email": {
                "object": "email",
                "id": "63fd1c1de225707fa905f0a8",
                "status": "delivered",
                "subject": "Liars, step 1",
                "tags": None,
                "message": {"object": "message", "id": "63fd1c1d5f010335ed07066b"},
                "recipient": {"object": "recipient", "email": "ann@example.org"},
            },
            "morph": None,
            "template_id": "",
        },
    }
    return mailersend_signed(body, secret)


def mailtrap_delivery(secret: str = MAILTRAP_TRACKING_SECRET) -> Post:
    event = {
        "event": "delivery",
        "timestamp": 1795370405,
        "sending_stream": "transactional",
        "category": "report",
        "custom_variables": {},
        "message_id": "1df37d17-0286-4d8b-8edf-bc4ec5be86e6",
        "email": "ann@example.org",
        "event_id": "bede7236-2284-43d6-a953-1fdcafd0fdbc",
    }
    return mailtrap_signed({"events": [event]}, secret)


def amazon_ses_delivery() -> Post:
    delivery = {
        "notificationType": "Delivery",
        "mail": {
            "timestamp": "2026-11-23T18:00:00.000Z",
            "messageId": "0100017e1b8c0d2e-5b1c7a1e-7d55-4c4e-9b6f-2f7a8d0e1c3b-000000",
            "source": "moderator@games.example.org",
            "destination": ["ann@example.org"],
        },
        "delivery": {
            "timestamp": "2026-11-23T18:00:05.000Z",
            "recipients": ["ann@example.org"],
            "smtpResponse": "250 2.0.0 OK",
        },
    }
    return sns(delivery, "SES_Tracking")


def postal_delivery(key: rsa.RSAPrivateKey = POSTAL_KEY) -> Post:
    body = {
        "event": "MessageSent",
        "timestamp": 1795370405.0,
        "uuid": "0d2c6b0a-4a7c-4c8e-9a8c-1f1f7b6c2d10",
        "payload": {
            "status": "Sent",
            "details": "Message for ann@example.org accepted by mx.example.org",
            "output": "250 2.0.0 OK",
            "message": {"id": 1234, "to": "ann@example.org", "direction": "outgoing"},
        },
    }
    return postal_signed(body, key)


def refused_email(post: Callable[[EspApi, str, str], Post]) -> Callable[[EspApi], Post]:
    """``post`` of an email to a reply address nobody holds."""
    return lambda api: post(api, ADDRESS, "<refused@mail.example.org>")


def event(post: Callable[[], Post]) -> Callable[[EspApi], Post]:
    return lambda api: post()


# Every URL wired here, with a post of its ESP's shape.
URLS: dict[str, tuple[str, Callable[[EspApi], Post]]] = {
    **{
        f"{name} inbound": (inbound.url, refused_email(inbound.post))
        for name, inbound in INBOUND.items()
    },
    "brevo tracking": ("/mail/webhooks/brevo/tracking/", event(brevo_delivered)),
    "mailjet tracking": ("/mail/webhooks/mailjet/tracking/", event(mailjet_sent)),
    "sparkpost tracking": ("/mail/webhooks/sparkpost/tracking/", event(sparkpost_delivery)),
    "mandrill tracking": ("/mail/webhooks/mandrill/", event(mandrill_hard_bounce)),
    "resend tracking": ("/mail/webhooks/resend/tracking/", event(resend_delivered)),
    "mailersend tracking": ("/mail/webhooks/mailersend/tracking/", event(mailersend_delivered)),
    "mailtrap tracking": ("/mail/webhooks/mailtrap/tracking/", event(mailtrap_delivery)),
    "amazon_ses tracking": ("/mail/webhooks/amazon_ses/tracking/", event(amazon_ses_delivery)),
    "postal tracking": ("/mail/webhooks/postal/tracking/", event(postal_delivery)),
}


@pytest.mark.parametrize("name", URLS)
@pytest.mark.parametrize("headers", [{}, auth("hook:wrong")], ids=["no secret", "wrong secret"])
def test_a_post_without_the_secret_answers_401_and_stores_nothing(
    name: str, headers: dict[str, str], esp_api: EspApi
) -> None:
    url, body = URLS[name]
    response = post(url, body(esp_api), **headers)
    assert (response.status_code, response["WWW-Authenticate"]) == (
        401,
        'Basic realm="webhooks", charset="UTF-8"',
    )
    assert esp_api.asked == []
    assert stored() == (0, 0, 0)


FORGED: dict[str, tuple[str, Post]] = {
    "mandrill inbound forged": (
        "/mail/webhooks/mandrill/",
        mandrill_inbound(ADDRESS, "<f@x>", key="forged"),
    ),
    "mandrill inbound unsigned": (
        "/mail/webhooks/mandrill/",
        {**mandrill_inbound(ADDRESS, "<f@x>"), "headers": {}},
    ),
    "mandrill tracking forged": ("/mail/webhooks/mandrill/", mandrill_hard_bounce(key="forged")),
    "mailersend inbound forged": (
        "/mail/webhooks/mailersend/inbound/",
        mailersend_inbound(ADDRESS, "<f@x>", secret="forged"),
    ),
    "mailersend inbound unsigned": (
        "/mail/webhooks/mailersend/inbound/",
        {**mailersend_inbound(ADDRESS, "<f@x>"), "headers": {}},
    ),
    "mailersend tracking forged": (
        "/mail/webhooks/mailersend/tracking/",
        mailersend_delivered(secret="forged"),
    ),
    "mailtrap inbound forged": (
        "/mail/webhooks/mailtrap/inbound/",
        mailtrap_notification(secret="forged"),
    ),
    "mailtrap inbound unsigned": (
        "/mail/webhooks/mailtrap/inbound/",
        {**mailtrap_notification(), "headers": {}},
    ),
    "mailtrap tracking forged": ("/mail/webhooks/mailtrap/tracking/", mailtrap_delivery("forged")),
    "resend inbound forged": (
        "/mail/webhooks/resend/inbound/",
        resend_notification(ADDRESS, "<f@x>", secret=RESEND_SIGNING_SECRET),
    ),
    "resend inbound unsigned": (
        "/mail/webhooks/resend/inbound/",
        {**resend_notification(ADDRESS, "<f@x>"), "headers": {}},
    ),
    "resend tracking forged": (
        "/mail/webhooks/resend/tracking/",
        resend_delivered(secret=RESEND_INBOUND_SECRET),
    ),
    "postal inbound forged": (
        "/mail/webhooks/postal/inbound/",
        postal_route(ADDRESS, "<f@x>", key=FORGED_POSTAL_KEY),
    ),
    "postal inbound unsigned": (
        "/mail/webhooks/postal/inbound/",
        {**postal_route(ADDRESS, "<f@x>"), "headers": {}},
    ),
    "postal tracking forged": (
        "/mail/webhooks/postal/tracking/",
        postal_delivery(key=FORGED_POSTAL_KEY),
    ),
}


@pytest.mark.parametrize("name", FORGED)
def test_the_secret_with_a_signature_that_does_not_hold_answers_403_and_stores_nothing(
    name: str, esp_api: EspApi
) -> None:
    url, body = FORGED[name]
    response = post(url, body, **auth())
    assert (response.status_code, response.content) == (
        403,
        b"the ESP's signature of this post does not hold",
    )
    assert esp_api.asked == []
    assert stored() == (0, 0, 0)


def missing(setting: str, *, bare: bool = True) -> str:
    """Anymail's message for a setting it needs and does not find."""
    also = f" or {setting}" if bare else ""
    return (
        f"You must set ANYMAIL = {{'{setting}': ...}} or ANYMAIL_{setting}{also} "
        "in your Django settings"
    )


# Webhooks that cannot work as set up: (URL's post, the setting dropped, why).
NOT_SET_UP: dict[str, tuple[str, str, str]] = {
    "mandrill without its key": (
        "mandrill inbound",
        "MANDRILL_WEBHOOK_KEY",
        missing("MANDRILL_WEBHOOK_KEY"),
    ),
    "mailersend inbound without its secret": (
        "mailersend inbound",
        "MAILERSEND_INBOUND_SECRET",
        missing("MAILERSEND_INBOUND_SECRET", bare=False),
    ),
    "mailersend tracking without its secret": (
        "mailersend tracking",
        "MAILERSEND_SIGNING_SECRET",
        missing("MAILERSEND_SIGNING_SECRET", bare=False),
    ),
    "brevo inbound without its api key": (
        "brevo inbound",
        "BREVO_API_KEY",
        missing("BREVO_API_KEY"),
    ),
    "resend inbound without its api key": (
        "resend inbound",
        "RESEND_API_KEY",
        missing("RESEND_API_KEY"),
    ),
    "mailtrap inbound without its api token": (
        "mailtrap inbound",
        "MAILTRAP_API_TOKEN",
        missing("MAILTRAP_API_TOKEN"),
    ),
    "postal inbound without its key": (
        "postal inbound",
        "POSTAL_WEBHOOK_KEY",
        missing("POSTAL_WEBHOOK_KEY"),
    ),
    "postal tracking without its key": (
        "postal tracking",
        "POSTAL_WEBHOOK_KEY",
        missing("POSTAL_WEBHOOK_KEY"),
    ),
}


@pytest.mark.parametrize("case", NOT_SET_UP)
def test_a_webhook_whose_esp_setting_is_missing_answers_503_and_stores_nothing(
    case: str, settings: Settings, esp_api: EspApi
) -> None:
    name, dropped, reason = NOT_SET_UP[case]
    settings.ANYMAIL = {key: value for key, value in settings.ANYMAIL.items() if key != dropped}
    url, body = URLS[name]
    response = post(url, body(esp_api), **auth())
    assert (response.status_code, response.content) == (
        503,
        f"this webhook is not set up: {reason}".encode(),
    )
    assert esp_api.asked == []
    assert stored() == (0, 0, 0)


def test_mandrill_checks_its_url_with_a_head_before_it_shows_the_key(settings: Settings) -> None:
    settings.ANYMAIL = {"WEBHOOK_SECRET": [SECRET]}
    assert Client().head("/mail/webhooks/mandrill/").status_code == 200


# --- tracking -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Tracked:
    url: str
    esp: str
    post: Callable[[], Post]
    message_id: str  # the ESP's id of the email, which the outbox row recorded at sending
    delivery: str
    detail: str


TRACKING = {
    "brevo": Tracked(
        "/mail/webhooks/brevo/tracking/",
        "Brevo",
        brevo_delivered,
        "<202611231800.27287306012@smtp-relay.mailin.fr>",
        "delivered",
        "",
    ),
    "mailjet": Tracked(
        "/mail/webhooks/mailjet/tracking/",
        "Mailjet",
        mailjet_sent,
        "19421777835146490",
        "delivered",
        "sent (250 2.0.0 OK 1795370405 fm12si1105ejc.199 - gsmtp)",
    ),
    "sparkpost": Tracked(
        "/mail/webhooks/sparkpost/tracking/",
        "SparkPost",
        sparkpost_delivery,
        "65832150921904138",
        "delivered",
        "250 2.0.0 OK",
    ),
    "mandrill": Tracked(
        "/mail/webhooks/mandrill/",
        "Mandrill",
        mandrill_hard_bounce,
        "abcdef012345789abcdef012345789",
        "bounced",
        "smtp;550 5.1.1 The email account that you tried to reach does not exist.",
    ),
    "resend": Tracked(
        "/mail/webhooks/resend/tracking/",
        "Resend",
        resend_delivered,
        "4ef9a417-02e9-4d39-ad75-9611e0fcc33c",
        "delivered",
        "",
    ),
    "mailersend": Tracked(
        "/mail/webhooks/mailersend/tracking/",
        "MailerSend",
        mailersend_delivered,
        "63fd1c1d5f010335ed07066b",
        "delivered",
        "",
    ),
    "mailtrap": Tracked(
        "/mail/webhooks/mailtrap/tracking/",
        "Mailtrap",
        mailtrap_delivery,
        "1df37d17-0286-4d8b-8edf-bc4ec5be86e6",
        "delivered",
        "",
    ),
    "amazon_ses": Tracked(
        "/mail/webhooks/amazon_ses/tracking/",
        "Amazon SES",
        amazon_ses_delivery,
        "0100017e1b8c0d2e-5b1c7a1e-7d55-4c4e-9b6f-2f7a8d0e1c3b-000000",
        "delivered",
        "250 2.0.0 OK",
    ),
    "postal": Tracked(
        "/mail/webhooks/postal/tracking/",
        "Postal",
        postal_delivery,
        "1234",
        "delivered",
        "Message for ann@example.org accepted by mx.example.org",
    ),
}


@pytest.mark.parametrize("provider", TRACKING)
def test_each_esps_tracking_event_updates_the_email_it_concerns(
    on_turn: Seat, provider: str
) -> None:
    tracked = TRACKING[provider]
    report = OutboundEmail.objects.get(kind="report", to="ann@example.org")
    OutboundEmail.objects.filter(pk=report.pk).update(esp_message_id=tracked.message_id)
    response = post(tracked.url, tracked.post(), **auth())
    assert response.status_code == 200
    event = DeliveryEvent.objects.get()
    assert (event.esp, event.email_id, event.recipient, event.detail) == (
        tracked.esp,
        report.pk,
        "ann@example.org",
        tracked.detail,
    )
    report.refresh_from_db()
    assert (report.delivery, report.delivery_detail) == (tracked.delivery, tracked.detail)


# --- what else the ESPs post ----------------------------------------------------------------


def test_resend_without_its_secrets_takes_posts_on_the_basic_auth_secret_alone(
    on_turn: Seat, esp_api: EspApi, settings: Settings
) -> None:
    # The svix secrets are optional: the basic-auth secret is anymail's other check.
    settings.ANYMAIL = {
        key: value
        for key, value in settings.ANYMAIL.items()
        if key not in ("RESEND_INBOUND_SECRET", "RESEND_SIGNING_SECRET")
    }
    address = access.reply_address(on_turn)
    assert address is not None
    unsigned = {**resend(esp_api, address, "<resend-1@mail.example.org>"), "headers": {}}
    response = post("/mail/webhooks/resend/inbound/", unsigned, **auth())
    assert (response.status_code, response.content) == (200, b"")
    order = Order.objects.get()
    assert (order.seat_id, order.source, order.text) == (on_turn.pk, "email", BID)
    assert InboundMessage.objects.get().state == "order"


SUBSCRIPTION_TOPIC = "arn:aws:sns:us-west-2:111111111111:SES_Inbound"
SUBSCRIPTION_TOKEN = "2336412f37fb687f5d51e6e241d638b05824e9e2f6713b42abaeb8607743f5ba91d"


def sns_subscription_confirmation() -> Post:
    """Amazon SNS's first post to a new subscription's URL (from anymail's tests of SES):
    confirm by visiting SubscribeURL, or with the token through SNS's API."""
    confirmation = {
        "Type": "SubscriptionConfirmation",
        "MessageId": "165545c9-2a5c-472c-8df2-7ff2be2b3b1b",
        "Token": SUBSCRIPTION_TOKEN,
        "TopicArn": SUBSCRIPTION_TOPIC,
        "Message": (
            f"You have chosen to subscribe to the topic {SUBSCRIPTION_TOPIC}.\n"
            "To confirm the subscription, visit the SubscribeURL included in this message."
        ),
        "SubscribeURL": (
            "https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription"
            f"&TopicArn={SUBSCRIPTION_TOPIC}&Token={SUBSCRIPTION_TOKEN}"
        ),
        "Timestamp": "2026-11-23T18:00:00.000Z",
        "SignatureVersion": "1",
        "Signature": "EXAMPLE_SIGNATURE==",
        "SigningCertURL": "https://sns.us-west-2.amazonaws.com/SimpleNotificationService-1.pem",
    }
    return {
        "data": json.dumps(confirmation),
        "content_type": "text/plain; charset=UTF-8",
        "headers": {
            "x-amz-sns-message-type": "SubscriptionConfirmation",
            "x-amz-sns-message-id": confirmation["MessageId"],
            "x-amz-sns-topic-arn": SUBSCRIPTION_TOPIC,
        },
    }


@pytest.fixture
def aws() -> Iterator[mock.MagicMock]:
    """Amazon's API, the edge: boto3's session, through which anymail would call it."""
    with mock.patch("anymail.webhooks.amazon_ses.boto3.session.Session", autospec=True) as session:
        yield session


@pytest.mark.parametrize("kind", ["inbound", "tracking"])
def test_an_sns_subscription_confirmation_without_auto_confirm_changes_nothing(
    kind: str, settings: Settings, aws: mock.MagicMock
) -> None:
    settings.ANYMAIL = {**settings.ANYMAIL, "AMAZON_SES_AUTO_CONFIRM_SNS_SUBSCRIPTIONS": False}
    response = post(f"/mail/webhooks/amazon_ses/{kind}/", sns_subscription_confirmation(), **auth())
    assert (response.status_code, response.content) == (200, b"")
    assert aws.mock_calls == []
    assert stored() == (0, 0, 0)


def test_an_sns_subscription_confirmation_with_the_secret_is_confirmed_through_sns(
    aws: mock.MagicMock,
) -> None:
    # Anymail's default: it confirms the subscription in the topic's own region.
    response = post("/mail/webhooks/amazon_ses/inbound/", sns_subscription_confirmation(), **auth())
    assert (response.status_code, response.content) == (200, b"")
    client = aws.return_value.client
    assert client.call_args.args == ("sns",)
    assert client.call_args.kwargs["region_name"] == "us-west-2"
    client.return_value.confirm_subscription.assert_called_once_with(
        TopicArn=SUBSCRIPTION_TOPIC, Token=SUBSCRIPTION_TOKEN, AuthenticateOnUnsubscribe="true"
    )
    assert stored() == (0, 0, 0)


def test_amazon_ses_inbound_never_calls_aws_for_an_email_sent_inline(
    on_turn: Seat, esp_api: EspApi, aws: mock.MagicMock
) -> None:
    address = access.reply_address(on_turn)
    assert address is not None
    body = amazon_ses(esp_api, address, "<amazon_ses-1@mail.example.org>")
    response = post("/mail/webhooks/amazon_ses/inbound/", body, **auth())
    assert (response.status_code, response.content) == (200, b"")
    assert aws.mock_calls == []
    assert Order.objects.get().text == BID


@pytest.mark.parametrize(
    ("value", "read"), [("false", "False"), ("0", "False"), ("true", "True"), ("", "True")]
)
def test_auto_confirm_from_the_environment_is_read_as_true_or_false(value: str, read: str) -> None:
    # From the environment anymail's setting is text, in which "false" is true; empty is
    # anymail's default, true.
    name = "ANYMAIL_AMAZON_SES_AUTO_CONFIRM_SNS_SUBSCRIPTIONS"
    code = (
        "from moderator import settings; "
        "print(settings.ANYMAIL.get('AMAZON_SES_AUTO_CONFIRM_SNS_SUBSCRIPTIONS', 'unset'))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[3],
        env={**os.environ, name: value},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert result.stdout == f"{read}\n"
