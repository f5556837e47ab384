"""An order by email reply with real parts: the report arrives over SMTP, the player
answers it (the order above the quoted report), the reply reaches the inbound webhook over
HTTP as Postmark posts it, becomes the order, and the real worker resolves the step at its
deadline; the next report arrives over SMTP with the order in it."""

from __future__ import annotations

import base64
import json
import urllib.request
from email.message import EmailMessage

import pytest
from django.utils import timezone
from pytest_django.fixtures import Settings

from games import postal
from games.engines.choice.rules import ChoiceEngine
from games.models import Order, Step
from tests.browser import Inbox, text_of
from tests.factories import choice_game
from tests.integration.conftest import Services, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.postgres, pytest.mark.redis]

CHOICE = ChoiceEngine()
DEADLINE_SECONDS = 20
SECRET = "postmark:inbound-secret"


def test_a_reply_to_the_emailed_report_is_the_order_the_worker_resolves(
    services: Services, smtp_server: Inbox, web_server: str, settings: Settings
) -> None:
    settings.SITE_URL = web_server
    settings.INBOUND_ADDRESS = "orders@in.example.org"
    settings.ANYMAIL = {"WEBHOOK_SECRET": [SECRET]}
    services.env.update(
        EMAIL_BACKEND="moderator.mail.smtp.EmailBackend",
        EMAIL_HOST="127.0.0.1",
        EMAIL_PORT=str(smtp_server.port),
        SITE_URL=web_server,
        INBOUND_ADDRESS="orders@in.example.org",
    )
    game = choice_game(2, schedule_spec={"kind": "interval", "seconds": DEADLINE_SECONDS})
    services.worker()
    services.beat()
    game = postal.start_game(game.pk, now=timezone.now())

    wait_for(lambda: len(smtp_server.to("ann@example.org")) == 1, 60, "ann's report", services)
    report = smtp_server.to("ann@example.org")[0]
    reply_to = str(report["Reply-To"])
    assert reply_to.startswith(f"orders+{game.pk}-0-")
    assert any(
        part.get_filename() == "deadline-postal-turn-1.ics" for part in report.iter_attachments()
    )

    state = CHOICE.state_from_json(game.state)
    order = CHOICE.canonical(state, 0, CHOICE.default(state, 0))
    quoted = "\n".join(f"> {line}" for line in text_of(report).splitlines())
    body = f"{order}\n\nOn {report['Date']}, Moderator wrote:\n{quoted}\n"
    payload = {
        "From": "ann@example.org",
        "FromFull": {"Email": "ann@example.org", "Name": "Ann", "MailboxHash": ""},
        "To": reply_to,
        "ToFull": [{"Email": reply_to, "Name": "", "MailboxHash": ""}],
        "OriginalRecipient": reply_to,
        "Subject": f"Re: {report['Subject']}",
        "MessageID": "b7bc2f4a-e38e-4336-af7d-e6c392c2f817",
        "Date": "Mon, 23 Nov 2026 18:00:00 +0000",
        "TextBody": body,
        "HtmlBody": "",
        "Headers": [
            {"Name": "Message-ID", "Value": "<reply-e2e@mail.example.net>"},
            {"Name": "In-Reply-To", "Value": str(report["Message-ID"])},
        ],
        "Attachments": [],
    }
    request = urllib.request.Request(
        f"{web_server}/mail/webhooks/postmark/inbound/",
        data=json.dumps(payload).encode(),
        headers={
            "Content-Type": "application/json",
            "Authorization": "Basic " + base64.b64encode(SECRET.encode()).decode(),
        },
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 200
    # The webhook keeps the post; a mail worker reads it and takes the order.
    wait_for(
        lambda: Order.objects.filter(seat__position=0).exists(), 60, "the emailed order", services
    )
    sent = Order.objects.get(seat__position=0)
    assert (sent.source, sent.canonical) == ("email", order)

    def receipts() -> list[EmailMessage]:
        return [
            m for m in smtp_server.to("ann@example.org") if "received" in str(m["Subject"]).lower()
        ]

    wait_for(lambda: len(receipts()) == 1, 60, "ann's receipt", services)

    def resolved() -> bool:
        return Step.objects.filter(game=game, number=1, status="done").exists()

    wait_for(resolved, DEADLINE_SECONDS + 30, "the worker to resolve step 1", services)
    assert Step.objects.get(game=game, number=1).closed_by == "deadline"

    def reports() -> list[EmailMessage]:
        return [
            m
            for m in smtp_server.to("ann@example.org")
            if "postal turn 2" in str(m["Subject"]).lower()
        ]

    wait_for(lambda: len(reports()) == 1, 60, "ann's second report", services)
    second = text_of(reports()[0])
    for written in order.splitlines():
        number, text = written.split(": ", 1)
        assert f"ann, round {number}: {text}" in second
