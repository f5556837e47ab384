from __future__ import annotations

import smtplib
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy
from typing import Any

import pytest
from django.core import mail
from django.core.mail import EmailMessage, EmailMultiAlternatives
from django.core.mail.backends.base import BaseEmailBackend
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks, Settings

from moderator.mail import building, queueing, sending, tasks
from moderator.mail.models import OutboundEmail
from tests.factories import GameFactory, GMFactory, without_footer

pytestmark = pytest.mark.django_db

BACKEND = "tests.moderator.mail.test_outbox.ScriptedBackend"


def row(**kwargs: Any) -> OutboundEmail:
    fields = {
        "dedupe_key": "test:1",
        "kind": "report",
        "to": "ann@example.org",
        "subject": "Step 1",
        "text": "Hello",
        "html": "<p>Hello</p>",
        "headers": {"X-Game": "1"},
    } | kwargs
    return OutboundEmail.objects.create(**fields)


class ScriptedBackend(BaseEmailBackend):
    """Takes every message into ``mail.outbox`` (as a server would see it), then raises the
    next error of ``script``, or accepts when the script is empty."""

    script: list[Exception] = []

    def send_messages(self, messages: Sequence[EmailMessage]) -> int:
        mail.outbox.extend(messages)
        if ScriptedBackend.script:
            raise ScriptedBackend.script.pop(0)
        return len(messages)


class SlowBackend(ScriptedBackend):
    """So slow that the sweep (at ``sweep_at``) calls the row unknown while it sends."""

    sweep_at = datetime(2026, 1, 1, tzinfo=UTC)

    def send_messages(self, messages: Sequence[EmailMessage]) -> int:
        assert sending.mark_unknown(SlowBackend.sweep_at) == 1
        return super().send_messages(messages)


@pytest.fixture
def scripted(settings: Settings) -> Iterator[list[Exception]]:
    settings.EMAIL_BACKEND = BACKEND
    ScriptedBackend.script = []
    yield ScriptedBackend.script
    ScriptedBackend.script = []


@pytest.fixture
def fixed_jitter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("moderator.mail.sending.random.uniform", lambda low, high: 0.5)


def refused(code: int) -> smtplib.SMTPRecipientsRefused:
    return smtplib.SMTPRecipientsRefused({"ann@example.org": (code, b"5.1.1 no such mailbox")})


# --- sending ------------------------------------------------------------------------------


def test_a_pending_row_is_sent_once_with_text_html_and_headers(now: datetime) -> None:
    email = row()
    assert sending.send(email.pk, now=now) == "sent"
    assert sending.send(email.pk, now=now) == "sent"
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert isinstance(message, EmailMultiAlternatives)
    assert (message.to, message.subject, message.body) == (["ann@example.org"], "Step 1", "Hello")
    assert message.alternatives[0][0] == "<p>Hello</p>"
    email.refresh_from_db()
    assert message.extra_headers == {
        "X-Game": "1",
        "Message-ID": email.message_id,
        "Auto-Submitted": "auto-generated",
        "X-Auto-Response-Suppress": "All",
    }
    assert (email.state, email.attempts, email.sent_at) == ("sent", 1, now)


def test_the_esp_message_id_is_recorded(settings: Settings, now: datetime) -> None:
    settings.EMAIL_BACKEND = "anymail.backends.test.EmailBackend"
    email = row()
    assert sending.send(email.pk, now=now) == "sent"
    email.refresh_from_db()
    # anymail's test backend answers with the message's index in mail.outbox.
    assert (email.state, email.esp_message_id) == ("sent", "0")


def test_a_transient_failure_goes_back_to_pending_with_a_backoff(
    scripted: list[Exception], fixed_jitter: None, now: datetime
) -> None:
    scripted.append(smtplib.SMTPServerDisconnected("Connection unexpectedly closed"))
    email = row()
    assert sending.send(email.pk, now=now) == "pending"
    email.refresh_from_db()
    assert (email.state, email.attempts) == ("pending", 1)
    assert email.next_attempt_at == now + timedelta(seconds=15)
    assert email.last_error == "SMTPServerDisconnected: Connection unexpectedly closed"


def test_a_retry_waits_for_its_time_and_reuses_the_message_id(
    scripted: list[Exception], fixed_jitter: None, now: datetime
) -> None:
    scripted.append(smtplib.SMTPDataError(451, b"4.3.0 try again later"))
    email = row()
    sending.send(email.pk, now=now)
    early = now + timedelta(seconds=14)
    assert queueing.pending_ids(10, older_than=early, now=early) == []
    assert sending.send(email.pk, now=early) == "pending"
    assert len(mail.outbox) == 1
    due = now + timedelta(seconds=15)
    assert queueing.pending_ids(10, older_than=now, now=due) == [email.pk]
    assert sending.send(email.pk, now=due) == "sent"
    first, second = mail.outbox
    assert first.extra_headers["Message-ID"] == second.extra_headers["Message-ID"]
    email.refresh_from_db()
    assert (email.state, email.attempts, email.message_id) == (
        "sent",
        2,
        first.extra_headers["Message-ID"],
    )


def test_after_the_last_attempt_the_row_fails_and_the_gm_is_told(
    scripted: list[Exception], settings: Settings, now: datetime
) -> None:
    settings.MAIL_MAX_ATTEMPTS = 3
    game = GameFactory.create(seats=2, gm=GMFactory.create(username="gina"))
    email = row(game=game)
    scripted.extend(ConnectionRefusedError(111, "Connection refused") for _ in range(3))
    states = []
    for attempt in range(3):
        clock = now + timedelta(hours=attempt)
        states.append(sending.send(email.pk, now=clock))
    assert states == ["pending", "pending", "failed"]
    email.refresh_from_db()
    assert (email.state, email.attempts, email.next_attempt_at) == ("failed", 3, None)
    reason = (
        "gave up after 3 attempts; the last one: "
        "ConnectionRefusedError: [Errno 111] Connection refused"
    )
    assert email.last_error == reason
    alert = OutboundEmail.objects.get(kind="alert")
    assert (alert.to, alert.dedupe_key, alert.game_id) == (
        "gina@example.org",
        f"alert:failed:{email.pk}",
        game.pk,
    )
    assert f"Why: {reason}\n" in alert.text


def test_a_permanent_failure_fails_at_once_and_alerts_the_gm(
    scripted: list[Exception],
    now: datetime,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    game = GameFactory.create(seats=2, gm=GMFactory.create(username="gina"), title="Dice at Dawn")
    email = row(game=game, subject="Dice at Dawn: step 1")
    scripted.append(refused(550))
    with django_capture_on_commit_callbacks(execute=True):
        assert sending.send(email.pk, now=now) == "failed"
    email.refresh_from_db()
    reason = "SMTPRecipientsRefused: {'ann@example.org': (550, b'5.1.1 no such mailbox')}"
    assert (email.state, email.attempts, email.last_error) == ("failed", 1, reason)
    alert = OutboundEmail.objects.get(kind="alert")
    assert alert.state == "sent"  # enqueued on commit, sent by the (eager) task
    assert [m.to for m in mail.outbox] == [["ann@example.org"], ["gina@example.org"]]
    assert mail.outbox[1].subject == "Dice at Dawn: an email to ann@example.org could not be sent"
    assert alert.text.splitlines()[4:9] == [
        "To: ann@example.org",
        "Subject: Dice at Dawn: step 1",
        "Kind: report",
        "Attempts: 1",
        f"Why: {reason}",
    ]


def test_a_failure_without_a_game_or_of_an_alert_alerts_nobody(
    scripted: list[Exception], now: datetime
) -> None:
    game = GameFactory.create(seats=2)
    plain = row(dedupe_key="plain")
    alert = row(dedupe_key="alert", kind="alert", game=game)
    scripted.extend([refused(550), refused(550)])
    assert [sending.send(plain.pk, now=now), sending.send(alert.pk, now=now)] == ["failed"] * 2
    assert OutboundEmail.objects.count() == 2


def test_the_gm_is_alerted_once_per_row(scripted: list[Exception], now: datetime) -> None:
    email = row(game=GameFactory.create(seats=2))
    scripted.extend([refused(550), refused(550)])
    sending.send(email.pk, now=now)
    assert sending.send_again(email.pk) is True
    assert sending.send(email.pk, now=now) == "failed"
    assert OutboundEmail.objects.filter(kind="alert").count() == 1


# --- headers ------------------------------------------------------------------------------


def test_headers_thread_a_game_and_name_its_list(settings: Settings, now: datetime) -> None:
    settings.MAIL_DOMAIN = "games.example.org"
    game = GameFactory.create(seats=2)
    email = building.build(
        "alert",
        to="ann@example.org",
        dedupe_key="k",
        context={"game": game, "email": row(), "reason": "r"},
        headers={"X-Game": "1", "message-id": "<forged@example.org>"},
        game=game,
        thread="game-5-seat-0",
        reply_to="GM Gina <gina@example.org>",
    )
    email.save()
    sending.send(email.pk, now=now)
    email.refresh_from_db()
    assert email.message_id.endswith("@games.example.org>")
    message = mail.outbox[0]
    assert message.extra_headers == {
        "X-Game": "1",
        "Message-ID": email.message_id,
        "In-Reply-To": "<game-5-seat-0@games.example.org>",
        "References": "<game-5-seat-0@games.example.org>",
        "List-Id": f"<game-{game.pk}.games.example.org>",
        "Auto-Submitted": "auto-generated",
        "X-Auto-Response-Suppress": "All",
    }
    assert message.reply_to == ["GM Gina <gina@example.org>"]
    sent = message.message()
    assert (sent["Reply-To"], sent["Message-ID"]) == (
        "GM Gina <gina@example.org>",
        email.message_id,
    )


def test_a_message_with_an_attachment_reads_back_whole(now: datetime) -> None:
    email = row(
        attachments=[
            {"filename": "a.ics", "content": "BEGIN:VCALENDAR", "mimetype": "text/calendar"}
        ]
    )
    sending.send(email.pk, now=now)
    sent = message_from_bytes(mail.outbox[0].message().as_bytes(), policy=policy.default)
    assert [part.get_content_type() for part in sent.walk() if part.is_multipart()] == [
        "multipart/mixed",
        "multipart/alternative",
    ]
    assert [
        (part.get_content_type(), part.get_content())
        for part in sent.walk()
        if not part.is_multipart()
    ] == [
        ("text/plain", "Hello"),
        ("text/html", "<p>Hello</p>"),
        ("text/calendar", "BEGIN:VCALENDAR"),
    ]


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("subject", "Step 1\r\nBcc: everyone@example.org", "the subject must be a single line"),
        ("to", "ann@example.org\nBcc: b@example.org", "the address must be a single line"),
        ("to", "ann@example.org, bob@example.org", "the address must be one address"),
        ("reply_to", "gm@example.org\r\nX-Spam: 1", "the reply address must be a single line"),
        ("reply_to", "a@example.org, b@example.org", "the reply address must be one address"),
        ("headers", {"X-Game": "1\r\nBcc: b@example.org"}, "X-Game must be a single line"),
        ("headers", {"X-Bad\nBcc": "1"}, "a header name must be a single line"),
        ("thread", "game-1>\r\nBcc: b@example.org", "the thread key must be letters, digits"),
        ("message_id", "<a@b>\nBcc: b@example.org", "the Message-ID must be a single line"),
    ],
)
def test_a_stored_header_with_a_line_break_fails_and_nothing_is_sent(
    field: str, value: str | dict[str, str], error: str, now: datetime
) -> None:
    email = row(game=GameFactory.create(seats=2), **{field: value})
    assert sending.send(email.pk, now=now) == "failed"
    assert mail.outbox == []
    email.refresh_from_db()
    assert email.last_error.startswith(f"HeaderInjection: {error}")
    assert OutboundEmail.objects.filter(kind="alert").count() == 1


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"to": "a@example.org\nBcc: b@example.org"}, "the address must be a single line"),
        ({"to": "a@example.org, b@example.org"}, "the address must be one address"),
        ({"to": "not an address"}, "the address must be one address"),
        ({"reply_to": "a@example.org\r\n"}, "the reply address must be a single line"),
        ({"headers": {"X-Game": "1\n2"}}, "X-Game must be a single line"),
        ({"thread": "game 1"}, "the thread key must be letters, digits, '.', '_' or '-'"),
    ],
)
def test_the_builder_refuses_bad_headers_at_input(change: dict[str, Any], error: str) -> None:
    kwargs: dict[str, Any] = {"to": "a@example.org", "dedupe_key": "k", "context": {}} | change
    with pytest.raises(building.HeaderInjection) as refused_:
        building.build("final", **kwargs)
    assert str(refused_.value) == error


# Every way to start a new header line: CR/LF, and the characters str.splitlines() (and the
# mail libraries that use it) break at.
BREAKS = ["\r\n", "\r", "\n", "\x0b", "\x0c", "\x1c", "\x1e", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("field", ["subject", "to", "reply_to", "headers", "attachments"])
@pytest.mark.parametrize("brk", BREAKS, ids=repr)
def test_no_line_break_stored_in_a_row_reaches_a_message(
    field: str, brk: str, now: datetime
) -> None:
    injected = f"{brk}Bcc: x@y.org"
    value = {
        "subject": f"Step 1{injected}",
        "to": f"ann@example.org{injected}",
        "reply_to": f"gm@example.org{injected}",
        "headers": {"X-Game": f"1{injected}"},
        "attachments": [{"filename": f"a.ics{injected}", "content": "x", "mimetype": "text/plain"}],
    }[field]
    email = row(**{field: value})
    assert sending.send(email.pk, now=now) == "failed"
    assert mail.outbox == []
    email.refresh_from_db()
    what = {
        "subject": "the subject",
        "to": "the address",
        "reply_to": "the reply address",
        "headers": "X-Game",
        "attachments": "an attachment's name",
    }[field]
    assert email.last_error == f"HeaderInjection: {what} must be a single line"


@pytest.mark.parametrize("char", ["\x01", "\x07", "\x1b", "\x7f"], ids=repr)
def test_a_control_character_stored_in_a_header_fails_the_row(char: str, now: datetime) -> None:
    email = row(headers={"X-Game": f"1{char}2"})
    assert sending.send(email.pk, now=now) == "failed"
    assert mail.outbox == []
    email.refresh_from_db()
    assert email.last_error == "HeaderInjection: X-Game must not hold control characters"


@pytest.mark.parametrize("brk", BREAKS, ids=repr)
def test_the_builder_refuses_every_line_break_in_an_address_or_header(brk: str) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"to": f"a@example.org{brk}Bcc: x@y.org"}, "the address"),
        ({"reply_to": f"gm@example.org{brk}Bcc: x@y.org"}, "the reply address"),
        ({"headers": {"X-Game": f"1{brk}Bcc: x@y.org"}}, "X-Game"),
    ]
    for change, what in cases:
        kwargs = {"to": "a@example.org", "dedupe_key": "k", "context": {}} | change
        with pytest.raises(building.HeaderInjection) as refused_:
            building.build("final", **kwargs)
        assert str(refused_.value) == f"{what} must be a single line"


@pytest.mark.parametrize("brk", BREAKS, ids=repr)
def test_a_title_with_a_line_break_stored_in_the_database_makes_a_one_line_subject(
    brk: str, now: datetime
) -> None:
    game = GameFactory.create(seats=2)
    game.title = f"Friday{brk}Bcc: x@y.org"
    context = {"game": game, "email": row(), "reason": "refused"}
    email = building.build("alert", to="gm@example.org", dedupe_key="k", context=context)
    subject = "Friday Bcc: x@y.org: an email to ann@example.org could not be sent"
    assert email.subject == subject
    email.save()
    assert sending.send(email.pk, now=now) == "sent"
    (message,) = mail.outbox
    assert message.subject == subject
    assert message.recipients() == ["gm@example.org"]
    head = message.message().as_bytes().split(b"\n\n")[0]
    assert [line for line in head.split(b"\n") if line.lower().startswith(b"bcc")] == []


# --- rows that were never confirmed ---------------------------------------------------------


def test_a_row_handed_over_and_sending_for_too_long_becomes_unknown_and_is_never_sent_again(
    settings: Settings, now: datetime
) -> None:
    settings.MAIL_SENDING_TIMEOUT_SECONDS = 300
    since = now - timedelta(seconds=301)
    stale = row(
        dedupe_key="stale", state="sending", attempts=1, sending_since=since, handed_over_at=since
    )
    busy_since = now - timedelta(seconds=299)
    busy = row(
        dedupe_key="busy",
        state="sending",
        attempts=1,
        sending_since=busy_since,
        handed_over_at=busy_since,
    )
    assert sending.mark_unknown(now) == 1
    stale.refresh_from_db()
    busy.refresh_from_db()
    assert (stale.state, stale.last_error) == (
        "unknown",
        "handed to the mail server, never confirmed",
    )
    assert busy.state == "sending"
    later = now + timedelta(days=1)
    assert queueing.pending_ids(10, older_than=later, now=later) == []
    assert sending.send(stale.pk, now=later) == "unknown"
    assert mail.outbox == []


def test_a_row_claimed_and_never_handed_over_is_sent_again_by_itself(
    scripted: list[Exception],
    settings: Settings,
    now: datetime,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
    published: Any,
) -> None:
    """A worker killed after its claim and before the hand-over: the sweep makes the row
    pending again, its attempt not counted, and hands it to the workers; it is sent once."""
    settings.MAIL_SENDING_TIMEOUT_SECONDS = 300
    since = now - timedelta(seconds=301)
    claimed = row(dedupe_key="claimed", state="sending", attempts=1, sending_since=since)
    enqueued = published(tasks.send_emails)
    with django_capture_on_commit_callbacks(execute=True):
        assert sending.mark_unknown(now) == 0
    claimed.refresh_from_db()
    assert (claimed.state, claimed.attempts, claimed.sending_since, claimed.last_error) == (
        "pending",
        0,
        None,
        "",
    )
    assert enqueued == [{"outbound_ids": [claimed.pk]}]
    assert OutboundEmail.objects.count() == 1  # no GM is told of it
    assert sending.send(claimed.pk, now=now) == "sent"
    claimed.refresh_from_db()
    assert (claimed.state, claimed.attempts, [m.to for m in mail.outbox]) == (
        "sent",
        1,
        [["ann@example.org"]],
    )


def unknown_rows(game: Any, count: int, since: datetime) -> list[OutboundEmail]:
    return [
        row(
            dedupe_key=f"report:{game.pk}:{n}",
            game=game,
            to=f"p{n}@example.org",
            subject=f"{game.title}: step 1",
            state="sending",
            attempts=1,
            sending_since=since,
            handed_over_at=since,
        )
        for n in range(count)
    ]


def test_the_gm_is_told_once_per_game_of_the_rows_a_sweep_found_unknown(
    settings: Settings, now: datetime
) -> None:
    settings.MAIL_SENDING_TIMEOUT_SECONDS = 300
    settings.SITE_URL = "https://games.example.org"
    since = now - timedelta(seconds=301)
    dawn = GameFactory.create(seats=2, gm=GMFactory.create(username="gina"), title="Dice at Dawn")
    dusk = GameFactory.create(seats=2, gm=GMFactory.create(username="hal"), title="Dice at Dusk")
    unknown_rows(dawn, 3, since)
    unknown_rows(dusk, 1, since)
    never = row(dedupe_key="never", game=dawn, state="sending", attempts=1, sending_since=since)
    assert sending.mark_unknown(now) == 4
    assert sending.mark_unknown(now + timedelta(minutes=1)) == 0
    alerts = OutboundEmail.objects.filter(kind="unconfirmed").order_by("to")
    assert list(alerts.values_list("to", "game_id", "subject")) == [
        ("gina@example.org", dawn.pk, "Dice at Dawn: 3 emails may not have arrived"),
        ("hal@example.org", dusk.pk, "Dice at Dusk: 1 email may not have arrived"),
    ]
    assert without_footer(alerts[0].text) == (
        "Hello,\n\n"
        '3 emails of your game "Dice at Dawn" were handed to the mail server,\n'
        "but the mail worker stopped before the server confirmed them: each may or may not\n"
        "have arrived, so they are not sent again by themselves.\n\n"
        "- report to p0@example.org: Dice at Dawn: step 1\n"
        "- report to p1@example.org: Dice at Dawn: step 1\n"
        "- report to p2@example.org: Dice at Dawn: step 1\n\n"
        "To send them all again (a player may get a second copy), press\n"
        '"Send the unknown emails again" on the game\'s page:\n\n'
        f"  https://games.example.org/gm/{dawn.pk}/#emails\n"
    )
    never.refresh_from_db()
    assert never.state == "pending"


def test_one_action_sends_every_unknown_email_of_the_game_again(
    settings: Settings,
    now: datetime,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
    published: Any,
) -> None:
    settings.MAIL_SENDING_TIMEOUT_SECONDS = 300
    since = now - timedelta(seconds=301)
    dawn = GameFactory.create(seats=2, title="Dice at Dawn")
    dusk = GameFactory.create(seats=2, title="Dice at Dusk")
    mine = unknown_rows(dawn, 3, since)
    theirs = unknown_rows(dusk, 1, since)
    sending.mark_unknown(now)
    OutboundEmail.objects.filter(pk=mine[2].pk).update(pruned_at=now)
    enqueued = published(tasks.send_emails)
    with django_capture_on_commit_callbacks(execute=True):
        assert sending.send_unknown_again(dawn.pk) == 2
    assert enqueued == [{"outbound_ids": [mine[0].pk]}, {"outbound_ids": [mine[1].pk]}]
    states = dict(
        OutboundEmail.objects.filter(pk__in=[e.pk for e in [*mine, *theirs]]).values_list(
            "pk", "state"
        )
    )
    assert states == {
        mine[0].pk: "pending",
        mine[1].pk: "pending",
        mine[2].pk: "unknown",
        theirs[0].pk: "unknown",
    }
    with django_capture_on_commit_callbacks(execute=True):
        assert sending.send_unknown_again(dawn.pk) == 0


def test_a_send_that_finishes_after_the_sweep_called_it_unknown_is_recorded_sent(
    scripted: list[Exception], settings: Settings, now: datetime
) -> None:
    settings.MAIL_SENDING_TIMEOUT_SECONDS = 1
    settings.EMAIL_BACKEND = "tests.moderator.mail.test_outbox.SlowBackend"
    SlowBackend.sweep_at = now + timedelta(seconds=2)
    email = row()
    assert sending.send(email.pk, now=now) == "sent"
    email.refresh_from_db()
    assert (email.state, email.sent_at) == ("sent", now)


def test_send_again_moves_an_unknown_or_failed_row_back_to_pending(
    now: datetime, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    unknown = row(dedupe_key="u", state="unknown", attempts=8, message_id="<m1@localhost>")
    failed = row(dedupe_key="f", state="failed", attempts=1, message_id="<m2@localhost>")
    sent = row(dedupe_key="s", state="sent", attempts=1)
    with django_capture_on_commit_callbacks(execute=True):
        assert sending.send_again(unknown.pk) is True
        assert sending.send_again(failed.pk) is True
        assert sending.send_again(sent.pk) is False
    # Enqueued on commit; the eager task sent them with their own Message-IDs.
    assert [m.extra_headers["Message-ID"] for m in mail.outbox] == [
        "<m1@localhost>",
        "<m2@localhost>",
    ]
    unknown.refresh_from_db()
    assert (unknown.state, unknown.attempts) == ("sent", 1)


# --- what the sweep hands out ----------------------------------------------------------------


def test_pending_ids_are_the_due_rows_only(now: datetime) -> None:
    fresh = row(dedupe_key="fresh")
    retry_due = row(dedupe_key="due", next_attempt_at=now - timedelta(seconds=1))
    row(dedupe_key="later", next_attempt_at=now + timedelta(seconds=1))
    row(dedupe_key="sending", state="sending")
    row(dedupe_key="unknown", state="unknown")
    # A fresh first attempt was enqueued when it was written: it is not handed out again
    # until it is older than the sweep's interval.
    assert queueing.pending_ids(10, older_than=fresh.created_at, now=now) == [retry_due.pk]
    after = fresh.created_at + timedelta(seconds=1)
    assert queueing.pending_ids(10, older_than=after, now=now) == [fresh.pk, retry_due.pk]
    assert queueing.pending_ids(1, older_than=after, now=now) == [fresh.pk]
