"""Batches: the rows of one task claimed in one query, sent over one connection and
recorded with as few queries as possible, each failure on its own row."""

from __future__ import annotations

import logging
import smtplib
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from email import message_from_bytes
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import pytest
from django.core import mail
from django.core.mail.backends.base import BaseEmailBackend
from django.db import connection
from django.test.utils import CaptureQueriesContext
from kombu.exceptions import OperationalError
from pytest_django.fixtures import DjangoAssertNumQueries, DjangoCaptureOnCommitCallbacks, Settings

from moderator.mail import building, queueing, sending, tasks
from moderator.mail.models import OutboundEmail
from tests.browser import data_of, serving_smtp
from tests.factories import GameFactory, GMFactory

if TYPE_CHECKING:
    from aiosmtpd.smtp import SMTP, Envelope, Session

pytestmark = pytest.mark.django_db

BACKEND = "tests.moderator.mail.test_batches.LoggingBackend"


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


def rows(*names: str, **kwargs: Any) -> list[OutboundEmail]:
    return [row(name, **kwargs) for name in names]


class LoggingBackend(BaseEmailBackend):
    """Writes what the outbox asks of it to ``events``: "open", "close" and the local part
    of each recipient sent to. ``failing`` (address -> error) refuses a recipient;
    ``unreachable`` fails every open; ``esp_ids`` (address -> id) answers as an ESP."""

    events: list[str] = []
    failing: dict[str, Exception] = {}
    unreachable: Exception | None = None
    esp_ids: dict[str, str] = {}

    def open(self) -> bool:
        LoggingBackend.events.append("open")
        if LoggingBackend.unreachable is not None:
            raise LoggingBackend.unreachable
        return True

    def close(self) -> None:
        LoggingBackend.events.append("close")

    def send_messages(self, email_messages: Any) -> int:
        for message in email_messages:
            (to,) = message.to
            LoggingBackend.events.append(to.partition("@")[0])
            if to in LoggingBackend.failing:
                raise LoggingBackend.failing[to]
            if to in LoggingBackend.esp_ids:
                message.anymail_status = SimpleNamespace(message_id=LoggingBackend.esp_ids[to])
            mail.outbox.append(message)
        return len(email_messages)


@pytest.fixture
def backend(settings: Settings) -> Iterator[type[LoggingBackend]]:
    settings.EMAIL_BACKEND = BACKEND
    LoggingBackend.events, LoggingBackend.failing, LoggingBackend.esp_ids = [], {}, {}
    LoggingBackend.unreachable = None
    yield LoggingBackend
    LoggingBackend.events, LoggingBackend.failing, LoggingBackend.esp_ids = [], {}, {}
    LoggingBackend.unreachable = None


@pytest.fixture
def fixed_jitter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("moderator.mail.sending.random.uniform", lambda low, high: 0.5)


def states(emails: list[OutboundEmail]) -> list[tuple[str, str, int]]:
    by_id = OutboundEmail.objects.in_bulk([email.pk for email in emails])
    return [(by_id[e.pk].to, by_id[e.pk].state, by_id[e.pk].attempts) for e in emails]


def sent_to() -> list[str]:
    return [message.to[0] for message in mail.outbox]


# --- one claim, one connection, one record ------------------------------------------------


def test_a_batch_is_claimed_sent_over_one_connection_and_recorded_in_two_queries(
    backend: type[LoggingBackend], now: datetime, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    emails = rows("ann", "bob", "cy")
    # The claim (which loads the rows), each row's hand-over written before its send, and
    # the rows sent.
    with django_assert_num_queries(2 + 3):
        result = sending.send_batch([e.pk for e in emails], now=now)
    assert result == {e.pk: "sent" for e in emails}
    assert backend.events == ["open", "ann", "bob", "cy", "close"]
    assert [m.extra_headers["Message-ID"] for m in mail.outbox] == [
        "<ann@localhost>",
        "<bob@localhost>",
        "<cy@localhost>",
    ]
    sent = OutboundEmail.objects.filter(pk__in=[e.pk for e in emails])
    assert set(sent.values_list("state", "attempts", "sent_at", "sending_since")) == {
        ("sent", 1, now, now)
    }
    assert sent.filter(handed_over_at__isnull=True).count() == 0


def indexes_used(sql: str, params: Any) -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}", params)
        plan = cursor.fetchone()[0]
    found: set[str] = set()
    nodes = [plan[0]["Plan"]]
    while nodes:
        node = nodes.pop()
        found |= {node["Index Name"]} if "Index Name" in node else set()
        nodes += node.get("Plans", [])
    return found


@pytest.fixture
def burst() -> list[OutboundEmail]:
    """Statistics taken while 2,000 rows were sent, then half of them pending again (a
    burst of reports): PostgreSQL believes few rows are pending."""
    OutboundEmail.objects.bulk_create(
        OutboundEmail(
            dedupe_key=f"test:{n}", kind="report", to=f"p{n}@example.org", subject="Step 1",
            text="Hello", message_id=f"<p{n}@localhost>", state="sent",
        )
        for n in range(2000)
    )  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE mail_outboundemail")
    OutboundEmail.objects.filter(pk__gt=OutboundEmail.objects.order_by("pk")[999].pk).update(
        state="pending"
    )
    return list(OutboundEmail.objects.filter(state="pending").order_by("pk"))


@pytest.mark.postgres
def test_after_a_burst_the_claim_and_the_record_find_their_rows_by_primary_key(
    backend: type[LoggingBackend], now: datetime, burst: list[OutboundEmail]
) -> None:
    """The claim and the record read ten rows by primary key, not every pending (or
    sending) entry of outbox_due (3.5 ms instead of 0.3 ms per group with 1,000 pending)."""
    batch = burst[:10]
    with CaptureQueriesContext(connection) as queries:
        assert sending.send_batch([e.pk for e in batch], now=now) == {e.pk: "sent" for e in batch}
    updates = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("UPDATE")]
    assert len(updates) == 2 + 10  # the claim, each row's hand-over, the record
    for sql in updates:
        assert indexes_used(sql, None) == {"mail_outboundemail_pkey"}, sql


@pytest.mark.postgres
def test_after_a_burst_rows_queued_once_are_found_by_their_dedupe_key(
    burst: list[OutboundEmail], published: Callable[[Any], list[dict[str, Any]]]
) -> None:
    published(tasks.send_emails)
    again = [
        OutboundEmail(dedupe_key=e.dedupe_key, kind="report", to=e.to, subject="x", text="y")
        for e in burst[:3]
    ]
    with CaptureQueriesContext(connection) as queries:
        assert queueing.queue_once(again) == [e.pk for e in burst[:3]]
    (select,) = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("SELECT")]
    assert "outbox_due" not in indexes_used(select, None)
    assert indexes_used(select, None) <= {
        "mail_outboundemail_dedupe_key_key",
        "mail_outboundemail_dedupe_key_3a420cb0_like",
    }


def test_a_batch_is_claimed_and_recorded_in_groups_of_mail_claim_over_one_connection(
    backend: type[LoggingBackend],
    settings: Settings,
    now: datetime,
    django_assert_num_queries: DjangoAssertNumQueries,
) -> None:
    settings.MAIL_CLAIM = 10
    emails = rows(*(f"p{n}" for n in range(25)))
    # Three groups: their claim and record each, and each row's hand-over.
    with django_assert_num_queries(6 + 25):
        result = sending.send_batch([e.pk for e in emails], now=now)
    assert result == {e.pk: "sent" for e in emails}
    assert backend.events == ["open", *(f"p{n}" for n in range(25)), "close"]


def test_a_batch_stopped_by_a_kill_between_groups_leaves_its_later_groups_pending(
    backend: type[LoggingBackend],
    settings: Settings,
    now: datetime,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What a SIGKILL after the first group leaves: the first group sent and recorded, the
    rest never claimed (pending, no attempt counted), for the next sweep."""
    settings.MAIL_CLAIM = 2
    emails = rows("ann", "bob", "cy", "dee", "eve")

    class Killed(BaseException):
        pass

    groups: list[list[int]] = []
    send_group = sending._send_group

    def killed_after_one(ids: Sequence[int], *args: Any) -> dict[int, str]:
        if groups:
            raise Killed
        groups.append(list(ids))
        return send_group(ids, *args)

    monkeypatch.setattr(sending, "_send_group", killed_after_one)
    with pytest.raises(Killed):
        sending.send_batch([e.pk for e in emails], now=now)
    assert backend.events == ["open", "ann", "bob", "close"]
    assert states(emails) == [
        ("ann@example.org", "sent", 1),
        ("bob@example.org", "sent", 1),
        ("cy@example.org", "pending", 0),
        ("dee@example.org", "pending", 0),
        ("eve@example.org", "pending", 0),
    ]


def test_rows_written_without_a_message_id_get_one_in_one_more_query(
    backend: type[LoggingBackend],
    settings: Settings,
    now: datetime,
    django_assert_num_queries: DjangoAssertNumQueries,
) -> None:
    settings.MAIL_DOMAIN = "games.example.org"
    emails = rows("ann", "bob", message_id="")
    with django_assert_num_queries(3 + 2):
        sending.send_batch([e.pk for e in emails], now=now)
    stored = list(OutboundEmail.objects.filter(pk__in=[e.pk for e in emails]).order_by("id"))
    assert [m.extra_headers["Message-ID"] for m in mail.outbox] == [e.message_id for e in stored]
    assert len({e.message_id for e in stored}) == 2
    assert all(e.message_id.endswith("@games.example.org>") for e in stored)


def test_the_builder_mints_the_message_id_so_sending_writes_none(settings: Settings) -> None:
    settings.MAIL_DOMAIN = "games.example.org"
    game = GameFactory.create(seats=2)
    context = {"game": game, "email": row("ann"), "reason": "r"}
    first = building.build("alert", to="gm@example.org", dedupe_key="a", context=context)
    second = building.build("alert", to="gm@example.org", dedupe_key="b", context=context)
    assert first.message_id.endswith("@games.example.org>")
    assert first.message_id != second.message_id


def test_each_esp_message_id_is_recorded_on_its_row_in_the_same_query(
    backend: type[LoggingBackend], now: datetime, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    emails = rows("ann", "bob", "cy")
    backend.esp_ids = {"ann@example.org": "esp-1", "cy@example.org": "esp-3"}
    with django_assert_num_queries(2 + 3):
        sending.send_batch([e.pk for e in emails], now=now)
    recorded = OutboundEmail.objects.filter(pk__in=[e.pk for e in emails]).order_by("id")
    assert list(recorded.values_list("to", "state", "esp_message_id")) == [
        ("ann@example.org", "sent", "esp-1"),
        ("bob@example.org", "sent", ""),
        ("cy@example.org", "sent", "esp-3"),
    ]


def test_an_anymail_backend_sends_the_batch_and_each_row_keeps_its_esp_id(
    settings: Settings, now: datetime
) -> None:
    settings.EMAIL_BACKEND = "anymail.backends.test.EmailBackend"
    emails = rows("ann", "bob")
    assert sending.send_batch([e.pk for e in emails], now=now) == {e.pk: "sent" for e in emails}
    recorded = OutboundEmail.objects.filter(pk__in=[e.pk for e in emails]).order_by("id")
    # anymail's test backend answers with the message's index in mail.outbox.
    assert list(recorded.values_list("esp_message_id", flat=True)) == ["0", "1"]


# --- only the rows this batch claims ---------------------------------------------------------


def test_a_row_claimed_by_another_worker_is_not_sent(
    backend: type[LoggingBackend], now: datetime
) -> None:
    ann, bob, cy = rows("ann", "bob", "cy")
    other = now - timedelta(seconds=5)
    OutboundEmail.objects.filter(pk=bob.pk).update(state="sending", attempts=1, sending_since=other)
    assert sending.send_batch([ann.pk, bob.pk, cy.pk], now=now) == {
        ann.pk: "sent",
        cy.pk: "sent",
    }
    assert backend.events == ["open", "ann", "cy", "close"]
    bob.refresh_from_db()
    assert (bob.state, bob.attempts, bob.sending_since) == ("sending", 1, other)


def test_rows_not_due_or_not_pending_are_left_alone_and_an_empty_batch_opens_nothing(
    backend: type[LoggingBackend], now: datetime, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    later = row("later", next_attempt_at=now + timedelta(seconds=1))
    done = row("done", state="sent", attempts=1)
    unknown = row("unknown", state="unknown", attempts=1)
    with django_assert_num_queries(1):
        assert sending.send_batch([later.pk, done.pk, unknown.pk, 999999], now=now) == {}
    assert backend.events == []
    assert states([later, done, unknown]) == [
        ("later@example.org", "pending", 0),
        ("done@example.org", "sent", 1),
        ("unknown@example.org", "unknown", 1),
    ]


def test_a_batch_sent_twice_sends_each_row_once(
    backend: type[LoggingBackend], now: datetime
) -> None:
    emails = rows("ann", "bob")
    ids = [e.pk for e in emails]
    assert sending.send_batch(ids, now=now) == {e.pk: "sent" for e in emails}
    assert sending.send_batch(ids, now=now + timedelta(seconds=1)) == {}
    assert sent_to() == ["ann@example.org", "bob@example.org"]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_workers_sending_the_same_rows_at_once_send_each_row_once(
    settings: Settings, now: datetime
) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    ids = [e.pk for e in rows(*(f"p{n}" for n in range(40)))]
    start = threading.Barrier(2)
    results: list[dict[int, str]] = []

    def worker(order: list[int]) -> None:
        try:
            start.wait()
            results.append(sending.send_batch(order, now=now))
        finally:
            connection.close()

    threads = [
        threading.Thread(target=worker, args=(ids,)),
        threading.Thread(target=worker, args=(ids[::-1],)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    first, second = results
    assert set(first).isdisjoint(second)
    assert sorted([*first, *second]) == ids
    assert set(first.values()) | set(second.values()) == {"sent"}
    assert sorted(m.extra_headers["Message-ID"] for m in mail.outbox) == sorted(
        f"<p{n}@localhost>" for n in range(40)
    )


# --- each row its own outcome ------------------------------------------------------------------


def test_a_transient_failure_in_the_middle_retries_that_row_and_sends_the_others(
    backend: type[LoggingBackend], fixed_jitter: None, now: datetime
) -> None:
    ann, bob, cy = rows("ann", "bob", "cy")
    backend.failing["bob@example.org"] = smtplib.SMTPDataError(451, b"4.3.0 try again later")
    assert sending.send_batch([ann.pk, bob.pk, cy.pk], now=now) == {
        ann.pk: "sent",
        bob.pk: "pending",
        cy.pk: "sent",
    }
    # The connection a failed send may have broken is closed and a new one opened.
    assert backend.events == ["open", "ann", "bob", "close", "open", "cy", "close"]
    assert sent_to() == ["ann@example.org", "cy@example.org"]
    bob.refresh_from_db()
    assert (bob.state, bob.attempts, bob.next_attempt_at, bob.last_error) == (
        "pending",
        1,
        now + timedelta(seconds=15),
        "SMTPDataError: (451, b'4.3.0 try again later')",
    )
    assert states([ann, cy]) == [("ann@example.org", "sent", 1), ("cy@example.org", "sent", 1)]


def test_a_permanent_failure_in_the_middle_fails_that_row_alerts_its_gm_and_sends_the_others(
    backend: type[LoggingBackend], now: datetime
) -> None:
    game = GameFactory.create(seats=2, gm=GMFactory.create(username="gina"))
    ann, bob, cy = rows("ann", "bob", "cy", game=game)
    backend.failing["bob@example.org"] = smtplib.SMTPRecipientsRefused(
        {"bob@example.org": (550, b"5.1.1 no such mailbox")}
    )
    assert sending.send_batch([ann.pk, bob.pk, cy.pk], now=now) == {
        ann.pk: "sent",
        bob.pk: "failed",
        cy.pk: "sent",
    }
    assert backend.events == ["open", "ann", "bob", "close", "open", "cy", "close"]
    bob.refresh_from_db()
    assert (bob.state, bob.attempts, bob.last_error) == (
        "failed",
        1,
        "SMTPRecipientsRefused: {'bob@example.org': (550, b'5.1.1 no such mailbox')}",
    )
    alert = OutboundEmail.objects.get(kind="alert")
    assert (alert.to, alert.dedupe_key) == ("gina@example.org", f"alert:failed:{bob.pk}")
    assert states([ann, cy]) == [("ann@example.org", "sent", 1), ("cy@example.org", "sent", 1)]


def test_a_row_that_cannot_be_built_fails_without_touching_the_connection(
    backend: type[LoggingBackend], now: datetime
) -> None:
    ann, bob, cy = rows("ann", "bob", "cy")
    OutboundEmail.objects.filter(pk=bob.pk).update(subject="Step 1\r\nBcc: x@y.org")
    assert sending.send_batch([ann.pk, bob.pk, cy.pk], now=now) == {
        ann.pk: "sent",
        bob.pk: "failed",
        cy.pk: "sent",
    }
    assert backend.events == ["open", "ann", "cy", "close"]
    bob.refresh_from_db()
    assert bob.last_error == "HeaderInjection: the subject must be a single line"


def test_a_server_that_cannot_be_reached_is_tried_once_and_every_row_retries(
    backend: type[LoggingBackend], fixed_jitter: None, now: datetime
) -> None:
    emails = rows("ann", "bob", "cy")
    backend.unreachable = ConnectionRefusedError(111, "Connection refused")
    result = sending.send_batch([e.pk for e in emails], now=now)
    assert result == {e.pk: "pending" for e in emails}
    assert backend.events == ["open"]
    recorded = OutboundEmail.objects.filter(pk__in=[e.pk for e in emails])
    assert set(recorded.values_list("state", "attempts", "next_attempt_at", "last_error")) == {
        (
            "pending",
            1,
            now + timedelta(seconds=15),
            "ConnectionRefusedError: [Errno 111] Connection refused",
        )
    }


def test_a_sweep_mid_batch_calls_the_row_handed_over_unknown_and_takes_back_the_rest(
    backend: type[LoggingBackend],
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    now: datetime,
) -> None:
    """A batch that hangs past the sending timeout: the sweep calls the row being handed
    over unknown (the batch then records it sent) and takes back the row waiting behind
    it (pending, its attempt not counted), which the batch then leaves alone."""
    settings.MAIL_SENDING_TIMEOUT_SECONDS = 1
    ann, bob = rows("ann", "bob")
    original = LoggingBackend.send_messages

    def slow(self: LoggingBackend, messages: Any) -> int:
        if messages[0].to == ["ann@example.org"]:  # the sweep runs while ann is sent
            assert sending.mark_unknown(now + timedelta(seconds=2)) == 1
            assert states([ann, bob]) == [
                ("ann@example.org", "unknown", 1),
                ("bob@example.org", "pending", 0),
            ]
        return original(self, messages)

    monkeypatch.setattr(LoggingBackend, "send_messages", slow)
    assert sending.send_batch([ann.pk, bob.pk], now=now) == {ann.pk: "sent"}
    assert backend.events == ["open", "ann", "close"]
    assert states([ann, bob]) == [("ann@example.org", "sent", 1), ("bob@example.org", "pending", 0)]


def test_rows_still_waiting_at_half_the_sending_timeout_are_handed_back_not_sent(
    backend: type[LoggingBackend],
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    now: datetime,
) -> None:
    settings.MAIL_SENDING_TIMEOUT_SECONDS = 10
    clock = [1000.0]
    enqueued: list[list[int]] = []
    monkeypatch.setattr(sending, "monotonic", lambda: clock[0])
    monkeypatch.setattr(sending, "enqueue", enqueued.append)
    original = LoggingBackend.send_messages

    def six_seconds(self: LoggingBackend, messages: Any) -> int:
        clock[0] += 6
        return original(self, messages)

    monkeypatch.setattr(LoggingBackend, "send_messages", six_seconds)
    ann, bob, cy = rows("ann", "bob", "cy")
    assert sending.send_batch([ann.pk, bob.pk, cy.pk], now=now) == {
        ann.pk: "sent",
        bob.pk: "pending",
        cy.pk: "pending",
    }
    assert backend.events == ["open", "ann", "close"]
    assert enqueued == [[bob.pk, cy.pk]]
    assert states([ann, bob, cy]) == [
        ("ann@example.org", "sent", 1),
        ("bob@example.org", "pending", 0),
        ("cy@example.org", "pending", 0),
    ]
    bob.refresh_from_db()
    assert (bob.sending_since, bob.next_attempt_at) == (None, None)


# --- a real SMTP server ------------------------------------------------------------------------


class Server:
    """aiosmtpd that refuses ``ann`` and ``dan`` (at RCPT and at DATA) and notes on which
    connection each recipient came."""

    def __init__(self) -> None:
        self.sessions: list[Any] = []
        self.seen: list[tuple[int, str]] = []  # (connection number, recipient)
        self.received: list[str] = []

    def _connection(self, session: Any) -> int:
        for number, known in enumerate(self.sessions):
            if known is session:
                return number
        self.sessions.append(session)
        return len(self.sessions) - 1

    async def handle_RCPT(
        self,
        server: SMTP,
        session: Session,
        envelope: Envelope,
        address: str,
        rcpt_options: list[str],
    ) -> str:
        self.seen.append((self._connection(session), address.partition("@")[0]))
        if address == "bob@example.org":
            return "550 5.1.1 no such mailbox"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        if envelope.rcpt_tos == ["dan@example.org"]:
            return "451 4.3.0 try again later"
        self.received.append(str(message_from_bytes(data_of(envelope))["Message-ID"]))
        return "250 OK"


@pytest.fixture
def smtp(settings: Settings) -> Iterator[Server]:
    server = Server()
    with serving_smtp(server, settings):
        yield server


def test_over_smtp_a_batch_uses_one_connection_and_a_new_one_after_each_refusal(
    smtp: Server, fixed_jitter: None, now: datetime
) -> None:
    emails = rows("ann", "bob", "cy", "dan", "eve")
    ann, bob, cy, dan, eve = emails
    assert sending.send_batch([e.pk for e in emails], now=now) == {
        ann.pk: "sent",
        bob.pk: "failed",
        cy.pk: "sent",
        dan.pk: "pending",
        eve.pk: "sent",
    }
    assert smtp.seen == [(0, "ann"), (0, "bob"), (1, "cy"), (1, "dan"), (2, "eve")]
    assert smtp.received == ["<ann@localhost>", "<cy@localhost>", "<eve@localhost>"]
    assert states(emails) == [
        ("ann@example.org", "sent", 1),
        ("bob@example.org", "failed", 1),
        ("cy@example.org", "sent", 1),
        ("dan@example.org", "pending", 1),
        ("eve@example.org", "sent", 1),
    ]


# --- the tasks and enqueue ---------------------------------------------------------------------


@pytest.fixture
def sent_tasks(published: Callable[[Any], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return published(tasks.send_emails)


def test_enqueue_publishes_one_task_per_mail_batch_of_rows(
    settings: Settings, sent_tasks: list[dict[str, Any]]
) -> None:
    settings.MAIL_BATCH = 2
    queueing.enqueue([11, 12, 13, 14, 15])
    assert sent_tasks == [
        {"outbound_ids": [11, 12]},
        {"outbound_ids": [13, 14]},
        {"outbound_ids": [15]},
    ]


def test_enqueue_of_nothing_publishes_nothing(sent_tasks: list[dict[str, Any]]) -> None:
    queueing.enqueue([])
    assert sent_tasks == []


def test_with_the_broker_away_enqueue_warns_once_and_the_rows_stay_pending(
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    now: datetime,
) -> None:
    settings.MAIL_BATCH = 2
    emails = rows("ann", "bob", "cy", "dan", "eve")
    ids = [e.pk for e in emails]
    calls: list[list[int]] = []

    def delay(*, outbound_ids: list[int]) -> None:
        calls.append(outbound_ids)
        if len(calls) > 1:
            raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(tasks.send_emails, "delay", delay)
    with caplog.at_level(logging.WARNING, logger="moderator.mail.queueing"):
        queueing.enqueue(ids)
    assert calls == [ids[:2], ids[2:4]]
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("WARNING", f"could not enqueue outbox rows {ids[2:]}; the sweep will send them")
    ]
    assert set(OutboundEmail.objects.values_list("state", flat=True)) == {"pending"}
    later = now + timedelta(days=1)
    assert queueing.pending_ids(10, older_than=later, now=later) == ids


def test_the_batch_task_sends_its_rows_and_counts_their_states(
    backend: type[LoggingBackend], now: datetime
) -> None:
    ann, bob = rows("ann", "bob")
    backend.failing["bob@example.org"] = smtplib.SMTPRecipientsRefused(
        {"bob@example.org": (550, b"5.1.1 no such mailbox")}
    )
    result = tasks.send_emails.delay(outbound_ids=[ann.pk, bob.pk]).get()
    assert result == {"sent": 1, "failed": 1}


def test_a_single_row_task_left_in_the_broker_by_the_last_release_still_sends(
    backend: type[LoggingBackend],
) -> None:
    email = row("ann")
    assert tasks.send_email.delay(outbound_id=email.pk).get() == "sent"
    assert sent_to() == ["ann@example.org"]


def test_rows_queued_in_one_transaction_go_to_the_workers_in_batches(
    backend: type[LoggingBackend],
    settings: Settings,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    settings.MAIL_BATCH = 2
    game = GameFactory.create(seats=3)
    with django_capture_on_commit_callbacks(execute=True):
        queueing.queue(
            [
                building.build(
                    "alert",
                    to=f"{name}@example.org",
                    dedupe_key=name,
                    context={"game": game, "email": row(f"x{name}"), "reason": "r"},
                )
                for name in ("ann", "bob", "cy")
            ]
        )
    # The eager tasks: [ann, bob] over one connection, then [cy].
    assert backend.events == ["open", "ann", "bob", "close", "open", "cy", "close"]
