"""A send whose outcome is unknown (the connection lost after the server may have kept the
message) is "unknown": never sent again by itself, the GM sends it again. A connection
lost before the server could take anything is retried as before. With a real SMTP server
(aiosmtpd) and a real HTTP server in the place of an ESP's API (anymail's Postmark
backend)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from email import message_from_bytes
from typing import TYPE_CHECKING, Any

import pytest
from django.test import Client
from django.urls import reverse
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks, Settings
from time_machine import TimeMachineFixture

from games import tasks as game_tasks
from moderator.mail import queueing, sending
from moderator.mail.models import OutboundEmail
from tests.browser import data_of, free_port, serving_smtp
from tests.factories import GameFactory, GMFactory

if TYPE_CHECKING:
    from aiosmtpd.smtp import SMTP, Envelope, Session

pytestmark = pytest.mark.django_db

LATER = timedelta(days=1)
NEVER_CONFIRMED = (
    "handed to the mail server, never confirmed: OutcomeUnknown: the connection to the mail "
    "server was lost after the message was sent, before the server confirmed it "
    "(Connection unexpectedly closed)"
)


def row(name: str, **kwargs: Any) -> OutboundEmail:
    fields = {
        "dedupe_key": f"test:{name}",
        "kind": "report",
        "to": f"{name}@example.org",
        "subject": f"Step 1 for {name}",
        "text": "Hello",
        "message_id": f"<{name}@localhost>",
    } | kwargs
    return OutboundEmail.objects.create(**fields)


def state_of(email: OutboundEmail) -> tuple[str, int, str]:
    email.refresh_from_db()
    return email.state, email.attempts, email.last_error


def hang_up(server: SMTP) -> None:
    """Close the client's connection from the server's side, without a reply."""
    assert server.transport is not None
    server.transport.close()


class Server:
    """aiosmtpd that keeps every message it is given (``received``: their Message-IDs) and
    misbehaves once for each entry of ``faults``, in turn, one per message: "MAIL" and
    "RCPT" drop the connection instead of answering that command (nothing was taken);
    "DATA" keeps the message and drops the connection instead of answering 250; "GARBLED"
    keeps it and answers with no reply code."""

    def __init__(self) -> None:
        self.faults: list[str] = []
        self.received: list[str] = []

    def _fault(self, stage: str) -> bool:
        if self.faults[:1] == [stage]:
            self.faults.pop(0)
            return True
        return False

    async def handle_MAIL(
        self,
        server: SMTP,
        session: Session,
        envelope: Envelope,
        address: str,
        mail_options: list[str],
    ) -> str:
        if self._fault("MAIL"):
            hang_up(server)
        envelope.mail_from = address
        return "250 OK"

    async def handle_RCPT(
        self,
        server: SMTP,
        session: Session,
        envelope: Envelope,
        address: str,
        rcpt_options: list[str],
    ) -> str:
        if self._fault("RCPT"):
            hang_up(server)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        self.received.append(str(message_from_bytes(data_of(envelope))["Message-ID"]))
        if self._fault("DATA"):
            hang_up(server)
        if self._fault("GARBLED"):
            return "OK, queued"
        return "250 OK"


@pytest.fixture
def smtp(settings: Settings) -> Iterator[Server]:
    server = Server()
    with serving_smtp(server, settings):
        yield server


def test_a_connection_lost_after_the_message_leaves_it_unknown_and_the_rest_goes_on(
    smtp: Server, now: datetime
) -> None:
    ann, bob = row("ann"), row("bob")
    smtp.faults = ["DATA"]

    assert sending.send_batch([ann.pk, bob.pk], now=now) == {ann.pk: "unknown", bob.pk: "sent"}

    assert smtp.received == ["<ann@localhost>", "<bob@localhost>"]
    assert state_of(ann) == ("unknown", 1, NEVER_CONFIRMED)
    assert state_of(bob) == ("sent", 1, "")
    ann.refresh_from_db()
    assert ann.next_attempt_at is None


def test_connections_lost_after_the_hand_over_tell_the_gm_once_per_game(
    smtp: Server, now: datetime
) -> None:
    game = GameFactory.create(seats=2, gm=GMFactory.create(username="gina"), title="Dice at Dawn")
    ann, bob, cy = (row(name, game=game) for name in ("ann", "bob", "cy"))
    smtp.faults = ["DATA", "DATA"]
    assert sending.send_batch([ann.pk, bob.pk, cy.pk], now=now) == {
        ann.pk: "unknown",
        bob.pk: "unknown",
        cy.pk: "sent",
    }
    told = OutboundEmail.objects.filter(kind="unconfirmed")
    assert list(told.values_list("to", "subject")) == [
        ("gina@example.org", "Dice at Dawn: 2 emails may not have arrived")
    ]
    assert [line for line in told[0].text.splitlines() if line.startswith("- ")] == [
        "- report to ann@example.org: Step 1 for ann",
        "- report to bob@example.org: Step 1 for bob",
    ]


def test_an_unreadable_reply_to_the_message_leaves_it_unknown(smtp: Server, now: datetime) -> None:
    ann = row("ann")
    smtp.faults = ["GARBLED"]
    assert sending.send_batch([ann.pk], now=now) == {ann.pk: "unknown"}
    assert smtp.received == ["<ann@localhost>"]
    assert state_of(ann) == (
        "unknown",
        1,
        "handed to the mail server, never confirmed: OutcomeUnknown: the mail server's reply "
        "to the message could not be read (queued)",
    )


def test_an_unknown_email_is_not_sent_again_by_the_sweep(
    smtp: Server, now: datetime, time_machine: TimeMachineFixture
) -> None:
    ann = row("ann")
    smtp.faults = ["DATA"]
    assert sending.send_batch([ann.pk], now=now) == {ann.pk: "unknown"}

    later = now + LATER
    assert queueing.pending_ids(100, older_than=later, now=later) == []
    assert sending.send_batch([ann.pk], now=later) == {}
    time_machine.move_to(later, tick=False)
    assert game_tasks.sweep() == {
        "mails": 0,
        "unknown": 0,
        "inbound": 0,
        "reminders": 0,
        "digests": 0,
        "daily": 0,
        "webhooks": 0,
        "pushes": 0,
        "player_posts": 0,
    }

    assert smtp.received == ["<ann@localhost>"]
    assert state_of(ann) == ("unknown", 1, NEVER_CONFIRMED)


def test_the_gm_sends_an_unknown_email_again_and_it_arrives_once_more(
    smtp: Server, now: datetime, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    gm = GMFactory.create(is_staff=True)
    game = GameFactory.create(seats=3, gm=gm)
    ann = row("ann", game=game)
    smtp.faults = ["DATA"]
    assert sending.send_batch([ann.pk], now=now) == {ann.pk: "unknown"}
    client = Client()
    client.force_login(gm)
    page = client.get(reverse("gm:game", args=[game.pk]))
    button = f'action="{reverse("gm:send_again", args=[game.pk, ann.pk])}"'
    assert page.content.decode().count(button) == 1

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("gm:send_again", args=[game.pk, ann.pk]), follow=True)

    assert [str(m) for m in response.context["messages"]] == [
        "The report email to ann@example.org is queued to be sent again."
    ]
    # The eager task sent it at once: the same message, with the same Message-ID.
    assert smtp.received == ["<ann@localhost>", "<ann@localhost>"]
    ann.refresh_from_db()
    assert (ann.state, ann.attempts, ann.next_attempt_at) == ("sent", 1, None)


@pytest.mark.parametrize("stage", ["MAIL", "RCPT"])
def test_a_connection_lost_before_the_message_is_retried_and_it_arrives_once(
    smtp: Server, stage: str, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("moderator.mail.sending.random.uniform", lambda low, high: 1.0)
    ann = row("ann")
    smtp.faults = [stage]

    assert sending.send_batch([ann.pk], now=now) == {ann.pk: "pending"}
    assert smtp.received == []
    ann.refresh_from_db()
    assert (ann.state, ann.attempts, ann.next_attempt_at) == (
        "pending",
        1,
        now + timedelta(seconds=30),
    )
    assert ann.last_error == "SMTPServerDisconnected: Connection unexpectedly closed"

    later = now + LATER
    assert queueing.pending_ids(100, older_than=later, now=later) == [ann.pk]
    assert sending.send_batch([ann.pk], now=later) == {ann.pk: "sent"}
    assert smtp.received == ["<ann@localhost>"]
    assert state_of(ann) == ("sent", 2, "SMTPServerDisconnected: Connection unexpectedly closed")


# --- an ESP's API (anymail) -----------------------------------------------------------------


class Api:
    """A local HTTP server in the place of Postmark's API, one connection at a time: it
    reads each request whole (``requests`` counts them) and then, by ``fault``, closes the
    connection without answering ("drop") or answers nothing until the client gives up
    ("silent")."""

    def __init__(self, fault: str) -> None:
        self.fault = fault
        self.requests = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        # accept() wakes up now and then to see whether the test is over.
        self.listener.settimeout(0.1)
        self.port = self.listener.getsockname()[1]
        self.over = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.over.is_set():
            try:
                connection, _ = self.listener.accept()
            except TimeoutError:
                continue
            with connection:
                connection.settimeout(10)
                self._read_request(connection)
                self.requests += 1
                if self.fault == "silent":
                    connection.recv(1)  # until the client gives up and closes its end

    @staticmethod
    def _read_request(connection: socket.socket) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            data += connection.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        while len(body) < length:
            body += connection.recv(65536)

    def close(self) -> None:
        self.over.set()
        self.thread.join(timeout=10)
        self.listener.close()


def use_postmark(settings: Settings, port: int) -> None:
    settings.EMAIL_BACKEND = "anymail.backends.postmark.EmailBackend"
    settings.ANYMAIL = {
        "POSTMARK_SERVER_TOKEN": "server-token",
        "POSTMARK_API_URL": f"http://127.0.0.1:{port}/",
        "REQUESTS_TIMEOUT": 0.5,
    }


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        (
            "drop",
            "requests.exceptions.ConnectionError: ('Connection aborted.', "
            "RemoteDisconnected('Remote end closed connection without response'))",
        ),
        (
            "silent",
            "requests.exceptions.ReadTimeout: HTTPConnectionPool(host='127.0.0.1', "
            "port={port}): Read timed out. (read timeout=0.5)",
        ),
    ],
    ids=["dropped", "never answered"],
)
def test_an_esp_request_sent_and_never_answered_leaves_the_email_unknown(
    settings: Settings, fault: str, reason: str, now: datetime
) -> None:
    api = Api(fault)
    try:
        use_postmark(settings, api.port)
        ann = row("ann")
        later = now + LATER

        assert sending.send_batch([ann.pk], now=now) == {ann.pk: "unknown"}
        assert queueing.pending_ids(100, older_than=later, now=later) == []
        assert sending.send_batch([ann.pk], now=later) == {}
    finally:
        api.close()
    assert api.requests == 1
    state, attempts, last_error = state_of(ann)
    assert (state, attempts) == ("unknown", 1)
    assert last_error == (
        "handed to the mail server, never confirmed: AnymailRequestsAPIError: Error posting "
        f"to http://127.0.0.1:{api.port}/email: " + reason.format(port=api.port)
    )


def test_an_esp_that_cannot_be_reached_is_tried_again(
    settings: Settings, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("moderator.mail.sending.random.uniform", lambda low, high: 1.0)
    use_postmark(settings, free_port())  # nothing listens there
    ann = row("ann")
    assert sending.send_batch([ann.pk], now=now) == {ann.pk: "pending"}
    ann.refresh_from_db()
    assert (ann.state, ann.attempts, ann.next_attempt_at) == (
        "pending",
        1,
        now + timedelta(seconds=30),
    )
