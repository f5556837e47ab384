"""Mail failures against a real SMTP server (aiosmtpd) and a real worker and beat."""

from __future__ import annotations

import asyncio
import signal
import socket
import threading
from collections import Counter
from collections.abc import Iterator
from email import message_from_bytes
from email.message import Message

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session
from django.utils import timezone

from games import postal
from moderator.mail import sending
from moderator.mail.models import OutboundEmail
from tests.browser import data_of
from tests.factories import GMFactory, choice_game
from tests.integration.conftest import Services, wait_for, wait_for_sweeps

pytestmark = [pytest.mark.integration, pytest.mark.postgres, pytest.mark.redis]


class Mailserver:
    """An SMTP server whose answers each test scripts per recipient."""

    def __init__(self) -> None:
        self.received: list[Message] = []
        self.rcpt: Counter[str] = Counter()
        self.refuse: dict[str, str] = {}  # recipient -> reply to RCPT
        self.busy: Counter[str] = Counter()  # recipient -> how many 451s at DATA are left
        self.stall: set[str] = set()  # recipients whose DATA never gets an answer
        self.stalled = threading.Event()
        self.release = threading.Event()

    async def handle_RCPT(
        self,
        server: SMTP,
        session: Session,
        envelope: Envelope,
        address: str,
        rcpt_options: list[str],
    ) -> str:
        self.rcpt[address] += 1
        if address in self.refuse:
            return self.refuse[address]
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        (to,) = envelope.rcpt_tos
        if self.busy[to] > 0:
            self.busy[to] -= 1
            return "451 4.3.0 try again later"
        if to in self.stall:
            self.stalled.set()
            await asyncio.get_running_loop().run_in_executor(None, self.release.wait)
            return "451 4.3.0 the client has gone"
        self.received.append(message_from_bytes(data_of(envelope)))
        return "250 OK"

    def to(self, address: str) -> list[Message]:
        return [message for message in self.received if message["To"] == address]


@pytest.fixture
def smtp(services: Services) -> Iterator[Mailserver]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = Mailserver()
    controller = Controller(server, hostname="127.0.0.1", port=port)
    controller.start()
    services.env.update(
        EMAIL_BACKEND="moderator.mail.smtp.EmailBackend",
        EMAIL_HOST="127.0.0.1",
        EMAIL_PORT=str(port),
        EMAIL_TIMEOUT="20",
        MAIL_RETRY_BASE_SECONDS="1",
        SWEEP_SECONDS="1",
        STEP_SWEEP_SECONDS="1",
    )
    try:
        yield server
    finally:
        server.release.set()
        controller.stop()


def state(row: OutboundEmail) -> str:
    row.refresh_from_db()
    return row.state


def test_transient_refusals_are_retried_and_each_report_arrives_once(
    services: Services, smtp: Mailserver
) -> None:
    game = choice_game(3)
    players = ["ann@example.org", "bob@example.org", "cy@example.org"]
    for address in players:
        smtp.busy[address] = 2
    services.worker()
    services.beat()
    postal.start_game(game.pk, now=timezone.now())
    reports = OutboundEmail.objects.filter(kind="report")

    def all_sent() -> bool:
        return reports.filter(state="sent").count() == 3

    wait_for(all_sent, 30, "every report to be sent after two 451s each", services)
    assert sorted(reports.values_list("to", "attempts")) == [(p, 3) for p in players]
    arrived = Counter((m["To"], m["Subject"]) for m in smtp.received)
    assert sorted(arrived.values()) == [1, 1, 1]
    assert sorted(to for to, _ in arrived) == players
    # The third attempt carried the same Message-ID the row kept from the first.
    assert sorted(m["Message-ID"] for m in smtp.received) == sorted(
        reports.values_list("message_id", flat=True)
    )
    (ann,) = smtp.to("ann@example.org")
    assert (ann["In-Reply-To"], ann["References"], ann["List-Id"], ann["Reply-To"]) == (
        f"<game-{game.pk}-seat-0@localhost>",
        f"<game-{game.pk}-seat-0@localhost>",
        f"<game-{game.pk}.localhost>",
        game.gm.email,
    )


def test_a_permanent_refusal_fails_the_row_and_the_gm_hears_of_it(
    services: Services, smtp: Mailserver
) -> None:
    game = choice_game(2, gm=GMFactory.create(username="gina"), title="Dice at Dawn")
    smtp.refuse["ann@example.org"] = "550 5.1.1 no such mailbox"
    services.worker()
    services.beat()
    postal.start_game(game.pk, now=timezone.now())
    ann = OutboundEmail.objects.get(kind="report", to="ann@example.org")

    def gm_told() -> bool:
        return len(smtp.to("gina@example.org")) == 1

    wait_for(gm_told, 30, "the GM's alert to arrive", services)
    ann.refresh_from_db()
    assert (ann.state, ann.attempts) == ("failed", 1)
    assert ann.last_error == (
        "SMTPRecipientsRefused: {'ann@example.org': (550, b'5.1.1 no such mailbox')}"
    )
    (alert,) = smtp.to("gina@example.org")
    assert alert["Subject"] == "Dice at Dawn: an email to ann@example.org could not be sent"
    text_part = alert.get_payload(0)  # the text, then the HTML
    assert isinstance(text_part, Message)
    payload = text_part.get_payload(decode=True)
    assert isinstance(payload, bytes)
    text = payload.decode()
    assert f"Why: {ann.last_error}" in text.splitlines()
    assert [m["To"] for m in smtp.received] == ["bob@example.org", "gina@example.org"]
    assert smtp.rcpt["ann@example.org"] == 1
    # The worker records the alert as sent once the server's 250 is in: a moment after
    # the message arrived.
    wait_for(
        lambda: OutboundEmail.objects.get(kind="alert").state == "sent",
        10,
        "the alert to be recorded as sent",
        services,
    )


def test_a_worker_killed_mid_batch_sends_again_what_it_never_handed_over_and_asks_the_gm(
    services: Services, smtp: Mailserver
) -> None:
    game = choice_game(2, gm=GMFactory.create(username="gina"), title="Dice at Dawn")
    smtp.stall.add("ann@example.org")
    services.env["MAIL_SENDING_TIMEOUT_SECONDS"] = "3"
    services.worker()
    postal.start_game(game.pk, now=timezone.now())
    ann = OutboundEmail.objects.get(kind="report", to="ann@example.org")
    bob = OutboundEmail.objects.get(kind="report", to="bob@example.org")
    wait_for(smtp.stalled.is_set, 30, "the server to stall in DATA for ann", services)
    services.stop("worker", signal.SIGKILL)
    # Both reports were one claimed group of the batch (MAIL_CLAIM is 10): ann's was handed
    # over (its moment written first), bob's waited behind it, never handed over.
    assert (state(ann), state(bob)) == ("sending", "sending")
    ann.refresh_from_db()
    bob.refresh_from_db()
    assert (ann.handed_over_at is not None, bob.handed_over_at) == (True, None)

    services.worker()
    services.beat()
    wait_for(
        lambda: (
            (state(ann), len(smtp.to("bob@example.org")), len(smtp.to("gina@example.org")))
            == ("unknown", 1, 1)
        ),
        30,
        "ann's row to become unknown, bob's report and the GM's email to arrive",
        services,
    )
    wait_for_sweeps(4, services)  # none of them sends ann's again, nor tells the GM again
    assert sorted(
        OutboundEmail.objects.filter(kind="report").values_list("to", "state", "attempts")
    ) == [("ann@example.org", "unknown", 1), ("bob@example.org", "sent", 1)]
    assert (smtp.rcpt["ann@example.org"], smtp.rcpt["bob@example.org"]) == (1, 1)
    # Two sends of the new worker, in whichever order its tasks ran.
    assert sorted(m["To"] for m in smtp.received) == ["bob@example.org", "gina@example.org"]
    (told,) = smtp.to("gina@example.org")
    assert told["Subject"] == "Dice at Dawn: 1 email may not have arrived"
    assert OutboundEmail.objects.filter(kind="unconfirmed").count() == 1

    # The GM's one action sends it again, and it arrives once.
    smtp.stall.discard("ann@example.org")
    smtp.release.set()
    assert sending.send_unknown_again(game.pk) == 1
    wait_for(
        lambda: len(smtp.to("ann@example.org")) == 1 and state(ann) == "sent",
        30,
        "ann's report to arrive once it was sent again",
        services,
    )
    assert (smtp.rcpt["ann@example.org"], len(smtp.received)) == (2, 3)
