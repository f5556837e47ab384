"""Delivery tracking through the real anymail tracking webhooks of Postmark and Mailgun:
outbox rows learn what became of them, an unknown row becomes sent without a second send,
a bounce or complaint marks the seat's address and tells the GM once, and a webhook
delivered again changes nothing."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import datetime
from typing import Any

import pytest
from django.test import Client
from pytest_django.fixtures import Settings
from time_machine import TimeMachineFixture

from games import postal
from games.models import Game, Seat
from games.postal import access
from moderator.mail import sending
from moderator.mail.models import DeliveryEvent, OutboundEmail
from tests.factories import seat_page, started_game

pytestmark = pytest.mark.django_db

SECRET = "hook:s3cret"
SIGNING_KEY = "mailgun-signing-key"


@pytest.fixture(autouse=True)
def hooks(settings: Settings, time_machine: TimeMachineFixture, now: datetime) -> None:
    time_machine.move_to(now, tick=False)
    settings.ANYMAIL = {"WEBHOOK_SECRET": [SECRET], "MAILGUN_WEBHOOK_SIGNING_KEY": SIGNING_KEY}


@pytest.fixture
def game(now: datetime) -> Game:
    return started_game(now=now, players=3)


def report_to(name: str) -> OutboundEmail:
    return OutboundEmail.objects.get(kind="report", to=f"{name}@example.org")


def auth() -> dict[str, Any]:
    return {"HTTP_AUTHORIZATION": "Basic " + base64.b64encode(SECRET.encode()).decode()}


def postmark(record: dict[str, Any]) -> int:
    response = Client().post(
        "/mail/webhooks/postmark/tracking/",
        data=json.dumps(record),
        content_type="application/json",
        **auth(),
    )
    return response.status_code


def postmark_delivery(row: OutboundEmail) -> dict[str, Any]:
    return {
        "RecordType": "Delivery",
        "ServerID": 23,
        "MessageStream": "outbound",
        "MessageID": "883953f4-6105-42a2-a16a-77a8eac79483",
        "Recipient": row.to,
        "Tag": "",
        "DeliveredAt": "2026-11-23T18:00:05Z",
        "Details": "Test delivery webhook details",
        "Metadata": {"outbox": str(row.pk)},
    }


def postmark_bounce(row: OutboundEmail, record_type: str = "Bounce") -> dict[str, Any]:
    return {
        "RecordType": record_type,
        "ID": 4323372036854775807,
        "Type": "HardBounce" if record_type == "Bounce" else "SpamComplaint",
        "TypeCode": 1,
        "Name": "Hard bounce",
        "MessageID": "883953f4-6105-42a2-a16a-77a8eac79483",
        "ServerID": 23,
        "MessageStream": "outbound",
        "Description": "The server was unable to deliver your message (ex: unknown user).",
        "Details": "smtp;550 5.1.1 The email account that you tried to reach does not exist.",
        "Email": row.to,
        "From": "moderator@localhost",
        "BouncedAt": "2026-11-23T18:00:05Z",
        "Inactive": True,
        "CanActivate": True,
        "Subject": row.subject,
        "Metadata": {"outbox": str(row.pk)},
    }


def mailgun(event: dict[str, Any], key: str = SIGNING_KEY) -> int:
    timestamp, token = "1795370400", "c8b4c1e7f2a94d3e8b1f0a6d5e4c3b2a1f0e9d8c7b6a5f4e3d"
    signature = hmac.new(key.encode(), f"{timestamp}{token}".encode(), hashlib.sha256)
    body = {
        "signature": {"timestamp": timestamp, "token": token, "signature": signature.hexdigest()},
        "event-data": event,
    }
    response = Client().post(
        "/mail/webhooks/mailgun/tracking/",
        data=json.dumps(body),
        content_type="application/json",
        **auth(),
    )
    return response.status_code


def mailgun_failed(row: OutboundEmail) -> dict[str, Any]:
    return {
        "event": "failed",
        "severity": "permanent",
        "reason": "bounce",
        "id": "G9Bn5sl1TC6nu79C8C0bwg",
        "timestamp": 1795370400.0,
        "recipient": row.to,
        "message": {"headers": {"message-id": "20261123180000.1.ABC@mg.example.org"}},
        "delivery-status": {
            "code": 550,
            "message": "5.1.1 The email account that you tried to reach does not exist.",
            "description": "No such mailbox",
        },
        "user-variables": {"outbox": str(row.pk)},
    }


def test_a_delivery_is_recorded_on_its_row_once(game: Game) -> None:
    row = report_to("ann")
    assert postmark(postmark_delivery(row)) == 200
    assert postmark(postmark_delivery(row)) == 200
    row.refresh_from_db()
    assert (row.delivery, row.delivery_detail) == ("delivered", "Test delivery webhook details")
    assert DeliveryEvent.objects.filter(email=row).count() == 1


def test_an_unknown_row_becomes_sent_when_the_esp_reports_it_and_is_not_sent_again(
    game: Game, now: datetime
) -> None:
    row = report_to("bob")
    OutboundEmail.objects.filter(pk=row.pk).update(state="unknown", attempts=1)
    assert postmark(postmark_delivery(row)) == 200
    row.refresh_from_db()
    assert (row.state, row.delivery, row.attempts) == ("sent", "delivered", 1)
    assert sending.send(row.pk, now=now) == "sent"
    row.refresh_from_db()
    assert row.attempts == 1


def test_a_bounce_marks_the_seat_failing_and_tells_the_gm_once(
    game: Game, client: Client, now: datetime
) -> None:
    row = report_to("cy")
    assert mailgun(mailgun_failed(row)) == 200
    assert mailgun(mailgun_failed(row)) == 200  # the same event again
    row.refresh_from_db()
    assert (row.delivery, row.delivery_detail) == ("bounced", "No such mailbox")
    cy = Seat.objects.get(game=game, position=2)
    assert cy.email_failing == "bounced: No such mailbox"
    (alert,) = OutboundEmail.objects.filter(kind="failing")
    assert alert.to == game.gm.email
    assert alert.subject == "Test Choice: mail to cy <cy@example.org> is not arriving"
    assert "bounced: No such mailbox" in alert.text
    # A later bounce of another email of the same seat tells the GM nothing new.
    assert postmark(postmark_bounce(report_to("cy"))) == 200
    assert OutboundEmail.objects.filter(kind="failing").count() == 1
    # The GM's dashboard shows it; the player still has the web page.
    client.force_login(game.gm)
    game.gm.is_staff = True
    game.gm.save()
    dashboard = client.get("/gm/").content.decode()
    assert "cy &lt;cy@example.org&gt;" in dashboard
    player = Client()
    token = access.mint([cy], now=now)[2]
    player.post(f"/p/{token}/")
    assert player.get(seat_page(game, 2)).status_code == 200


def test_a_complaint_marks_the_seat_failing(game: Game) -> None:
    row = report_to("ann")
    assert postmark(postmark_bounce(row, "SpamComplaint")) == 200
    row.refresh_from_db()
    assert row.delivery == "complained"
    assert Seat.objects.get(game=game, position=0).email_failing.startswith("complained: ")


def test_a_delivered_after_a_bounce_keeps_the_bounce(game: Game) -> None:
    row = report_to("ann")
    postmark(postmark_bounce(row))
    postmark(postmark_delivery(row))
    row.refresh_from_db()
    assert row.delivery == "bounced"


def test_a_new_address_clears_the_failing_mark(game: Game, now: datetime) -> None:
    postmark(postmark_bounce(report_to("ann")))
    postal.replace_player(game.pk, position=0, name="ann", email="ann@example.net", now=now)
    seat = Seat.objects.get(game=game, position=0)
    assert (seat.email_failing, seat.email_failing_at) == ("", None)


def test_postal_marks_the_seats_of_the_game_with_the_address_once(
    game: Game, now: datetime
) -> None:
    """The one writer of seats marks every seat of the game at that address (in any case)
    that is not marked yet, and says which it marked."""
    Seat.objects.filter(game=game, position=1).update(email="Ann@Example.org")
    other = started_game(now=now, players=3)
    marked = postal.mark_email_failing(game.pk, "ann@example.org", "bounced: gone", now=now)
    assert [seat.position for seat in marked] == [0, 1]
    assert postal.mark_email_failing(game.pk, "ann@example.org", "bounced: again", now=now) == []
    failing = Seat.objects.exclude(email_failing="").order_by("game_id", "position")
    assert [(s.game_id, s.position, s.email_failing, s.email_failing_at) for s in failing] == [
        (game.pk, 0, "bounced: gone", now),
        (game.pk, 1, "bounced: gone", now),
    ]
    assert not other.seats.exclude(email_failing="").exists()


def test_a_forged_tracking_signature_changes_nothing(game: Game) -> None:
    row = report_to("cy")
    assert mailgun(mailgun_failed(row), key="forged") == 403
    row.refresh_from_db()
    assert row.delivery == ""
    assert DeliveryEvent.objects.count() == 0


def test_events_of_mail_that_is_not_ours_are_kept_and_change_nothing(game: Game) -> None:
    record = postmark_delivery(report_to("ann"))
    record["Metadata"] = {}
    assert postmark(record) == 200
    assert DeliveryEvent.objects.get().email is None
    assert set(OutboundEmail.objects.values_list("delivery", flat=True)) == {""}
