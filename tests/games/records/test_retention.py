"""Pruning what is past its retention (games.records.retention, moderator.mail.pruning): outbox
bodies MAIL_RETENTION_DAYS after they were written, once their sending is over; expired
links; expired sessions. Game records, dice, orders, events and step states are kept, and
every page that showed them still does."""

from __future__ import annotations

import re
import secrets
from datetime import datetime, timedelta
from typing import Any

import pytest
from celery.schedules import crontab
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import include, path, reverse
from pytest_django.fixtures import Settings
from time_machine import TimeMachineFixture

from games import postal, tasks
from games.models import (
    DiceRoll,
    Event,
    Game,
    Order,
    PlayerPost,
    PlayerWebhook,
    PushDelivery,
    PushSubscription,
    Seat,
    SeatLink,
    SignUp,
    Step,
    Webhook,
    WebhookDelivery,
)
from games.postal import access
from games.records import archive, retention
from moderator.mail import sending
from moderator.mail.models import OutboundEmail
from tests.factories import GameFactory, GMFactory, started_game

pytestmark = pytest.mark.django_db

# The site's URLs with the local mailbox, which moderator.urls mounts only when DEBUG is on
# at import (the mailbox test uses them).
urlpatterns = [
    path("mailbox/", include("moderator.mail.urls")),
    path("", include("moderator.urls")),
]

DAY = timedelta(days=1)


def finished_game(now: datetime, time_machine: TimeMachineFixture, gm: User | None = None) -> Game:
    """A Choice game of three played to its end by deadlines (no-moves defaults), every
    email written at its step's time and sent; the clock is left at the end."""
    game = started_game(now=now, players=3, gm=gm)
    while game.status == Game.Status.RUNNING:
        step = game.steps.get(status=Step.Status.OPEN)
        time_machine.move_to(step.deadline, tick=False)
        assert postal.resolve_due_step(step.pk, now=step.deadline)
        game.refresh_from_db()
    assert game.finished_at is not None
    emails = OutboundEmail.objects.filter(game=game).values_list("pk", flat=True)
    for start in range(0, len(emails), settings.MAIL_CLAIM):
        sending.send_batch(list(emails)[start : start + settings.MAIL_CLAIM], now=game.finished_at)
    assert set(OutboundEmail.objects.values_list("state", flat=True)) == {"sent"}
    return game


def record(game: Game) -> dict[str, Any]:
    """Everything of a game that pruning must leave as it is."""
    return {
        "game": Game.objects.filter(pk=game.pk).values().get(),
        "seats": list(Seat.objects.filter(game=game).order_by("pk").values()),
        "steps": list(Step.objects.filter(game=game).order_by("pk").values()),
        "orders": list(Order.objects.filter(step__game=game).order_by("pk").values()),
        "dice": list(DiceRoll.objects.filter(game=game).order_by("pk").values()),
        "events": list(Event.objects.filter(game=game).order_by("pk").values()),
    }


def bodies() -> list[tuple[str, bool, bool, int, datetime | None]]:
    return [
        (row.dedupe_key, bool(row.text), bool(row.html), len(row.attachments), row.pruned_at)
        for row in OutboundEmail.objects.order_by("pk")
    ]


def test_bodies_are_kept_until_the_retention_has_passed_then_pruned(
    now: datetime, time_machine: TimeMachineFixture
) -> None:
    game = finished_game(now, time_machine)
    kept = record(game)
    emails = OutboundEmail.objects.order_by("pk")
    first, last = emails.first(), emails.last()
    assert first is not None and last is not None
    kept_for = timedelta(days=settings.MAIL_RETENTION_DAYS)
    before = bodies()
    rows = list(emails.values_list("state", "subject", "to", "message_id", "dedupe_key"))

    # Exactly the retention after the first email: nothing is older than it yet.
    assert retention.prune(now=first.created_at + kept_for) == retention.Pruned(0, 0)
    assert bodies() == before

    # A moment later the emails written at the start (the first step's reports) go.
    later = first.created_at + kept_for + timedelta(seconds=1)
    started = list(emails.filter(created_at=first.created_at).values_list("pk", flat=True))
    assert retention.prune(now=later) == retention.Pruned(len(started), 0)
    assert [pk for pk, pruned in emails.values_list("pk", "pruned_at") if pruned] == started

    # Past the retention of the last one, every body is gone and each row stays.
    end = last.created_at + kept_for + timedelta(seconds=1)
    assert retention.prune(now=end) == retention.Pruned(emails.count() - len(started), 0)
    assert bodies() == [
        (key, False, False, 0, later if pk in started else end)
        for pk, key in emails.values_list("pk", "dedupe_key")
    ]
    assert list(emails.values_list("state", "subject", "to", "message_id", "dedupe_key")) == rows
    assert record(game) == kept


def test_game_records_dice_orders_and_events_are_never_pruned(
    now: datetime, time_machine: TimeMachineFixture
) -> None:
    game = finished_game(now, time_machine)
    before = record(game)
    exported = archive.export(game)
    assert 0 not in {len(before[part]) for part in ("steps", "orders", "dice", "events")}
    emails, links = OutboundEmail.objects.count(), SeatLink.objects.count()

    pruned = retention.prune(now=now + timedelta(days=10 * 365))

    assert pruned == retention.Pruned(bodies=emails, links=links)
    assert SeatLink.objects.count() == 0
    assert record(game) == before
    assert archive.export(game) == exported
    assert archive.verify(game).problems == []


def test_only_email_whose_sending_is_over_is_pruned(now: datetime) -> None:
    game = GameFactory.create(seats=2)
    for state in OutboundEmail.State.values:
        OutboundEmail.objects.create(
            dedupe_key=state,
            kind="report",
            game=game,
            to="ann@example.org",
            subject=state,
            text="Hello",
            html="<p>Hello</p>",
            attachments=[{"filename": "a.ics"}],
            state=state,
        )

    far = now + timedelta(days=settings.MAIL_RETENTION_DAYS + 1)
    assert retention.prune(now=far).bodies == 3

    assert sorted(OutboundEmail.objects.values_list("state", "text", "html", "pruned_at")) == [
        ("failed", "", "", far),
        ("pending", "Hello", "<p>Hello</p>", None),
        ("sending", "Hello", "<p>Hello</p>", None),
        ("sent", "", "", far),
        ("unknown", "", "", far),
    ]


def test_the_retention_is_a_setting(now: datetime, settings: Settings) -> None:
    OutboundEmail.objects.create(
        dedupe_key="k", kind="report", to="ann@example.org", text="Hello", state="sent"
    )
    settings.MAIL_RETENTION_DAYS = 5
    assert retention.prune(now=now + 5 * DAY).bodies == 0
    assert retention.prune(now=now + 5 * DAY + timedelta(seconds=1)).bodies == 1


def test_pruning_runs_in_batches_and_twice_changes_nothing(now: datetime) -> None:
    OutboundEmail.objects.bulk_create(
        OutboundEmail(dedupe_key=f"k{n}", kind="report", to="a@example.org", text="x", state="sent")
        for n in range(5)
    )
    seat = Seat.objects.get(game=GameFactory.create(seats=2), position=0)
    access.mint_each([seat] * 5, now=now - timedelta(days=settings.LINK_DAYS))
    fresh = access.mint([seat], now=now)[0]
    far = now + timedelta(days=settings.MAIL_RETENTION_DAYS + 1)

    with CaptureQueriesContext(connection) as queries:
        assert retention.prune(now=far, batch=2) == retention.Pruned(bodies=5, links=5)
    statements = [query["sql"].split()[0] for query in queries.captured_queries]
    # Three batches of bodies and of links (2, 2, 1), and the empty look that ends each.
    assert statements.count("UPDATE") == 3
    # And the expired sign-ins' one (games.community.players) and the expired sessions' one.
    assert statements.count("DELETE") == 3 + 1 + 1

    pruned = list(OutboundEmail.objects.order_by("pk").values_list("text", "pruned_at"))
    assert pruned == [("", far)] * 5
    assert list(SeatLink.objects.values_list("seat", flat=True)) == [seat.pk]
    assert access.seat_for(fresh, now=now) == seat

    assert retention.prune(now=far + DAY, batch=2) == retention.Pruned(0, 0)
    assert list(OutboundEmail.objects.order_by("pk").values_list("text", "pruned_at")) == pruned


def test_expired_links_are_deleted_and_open_nothing_either_way(
    client: Client, now: datetime, time_machine: TimeMachineFixture
) -> None:
    seat = Seat.objects.get(game=GameFactory.create(seats=2), position=0)
    old = access.mint([seat], now=now)[0]
    later = now + timedelta(days=settings.LINK_DAYS)
    time_machine.move_to(later, tick=False)
    new = access.mint([seat], now=later)[0]

    expired_page = client.get(f"/p/{old}/")
    assert retention.prune(now=later) == retention.Pruned(bodies=0, links=1)
    pruned_page = client.get(f"/p/{old}/")

    assert expired_page.status_code == pruned_page.status_code == 404
    assert expired_page.content == pruned_page.content
    assert b"Open the link in the latest email about your game" in pruned_page.content
    assert access.seat_for(new, now=later) == seat


def test_expired_sessions_are_cleared(now: datetime) -> None:
    Session.objects.create(session_key="old", session_data="", expire_date=now - DAY)
    Session.objects.create(session_key="live", session_data="", expire_date=now + DAY)
    retention.prune(now=now)
    assert list(Session.objects.values_list("session_key", flat=True)) == ["live"]


# --- the pages after pruning --------------------------------------------------------------


@pytest.fixture
def client() -> Client:
    # A client address of its own: the link rate limit counts per address.
    return Client(REMOTE_ADDR=f"10.{secrets.randbelow(256)}.{secrets.randbelow(256)}.9")


def text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_a_seat_page_of_a_long_finished_game_reads_the_same_after_pruning(
    client: Client, now: datetime, time_machine: TimeMachineFixture
) -> None:
    game = finished_game(now, time_machine)
    end = game.finished_at
    assert end is not None
    seat = game.seats.get(position=0)
    old = access.mint([seat], now=end)[0]
    assert client.post(f"/p/{old}/").status_code == 302
    page = f"/play/{game.pk}/0/"
    before = client.get(page)

    days = max(settings.LINK_DAYS, settings.MAIL_RETENTION_DAYS) + 1
    far = end + timedelta(days=days)
    time_machine.move_to(far, tick=False)
    emails, links = OutboundEmail.objects.count(), SeatLink.objects.count()
    assert retention.prune(now=far) == retention.Pruned(bodies=emails, links=links)
    # The old link is gone: the "not valid" help, as for any expired link.
    gone = Client(REMOTE_ADDR="10.0.0.10").post(f"/p/{old}/")
    assert gone.status_code == 404
    assert b"ask your game master for a new one" in gone.content
    # A link minted now (the GM's new link) opens the page as it was.
    new = access.mint([seat], now=far)[0]
    later = Client(REMOTE_ADDR="10.0.0.11")
    assert later.post(f"/p/{new}/").status_code == 302
    after = later.get(page)

    assert (before.status_code, after.status_code) == (200, 200)
    assert text(after.content.decode()) == text(before.content.decode())


def gm_client(gm: User) -> Client:
    client = Client()
    client.force_login(gm)
    return client


def email_row(content: bytes, email: OutboundEmail) -> str:
    found = re.search(rf'<tr id="email-{email.pk}"[^>]*>(.*?)</tr>', content.decode(), re.S)
    assert found is not None, f"no row for email {email.pk}"
    return found[1]


def test_the_gm_page_says_which_bodies_were_pruned_and_offers_no_send_again(
    now: datetime, time_machine: TimeMachineFixture
) -> None:
    gm = GMFactory.create(is_staff=True)
    game = GameFactory.create(seats=2, gm=gm)
    rows = {
        state: OutboundEmail.objects.create(
            dedupe_key=state,
            kind="report",
            game=game,
            to="ann@example.org",
            subject=f"Subject {state}",
            text="Hello",
            state=state,
            attempts=1,
        )
        for state in ("sent", "failed", "unknown")
    }
    fresh = OutboundEmail.objects.create(
        dedupe_key="fresh",
        kind="report",
        game=game,
        to="bob@example.org",
        subject="Subject fresh",
        text="Hello",
        state="failed",
        attempts=1,
    )
    far = now + timedelta(days=settings.MAIL_RETENTION_DAYS, seconds=1)
    time_machine.move_to(far, tick=False)
    OutboundEmail.objects.filter(pk=fresh.pk).update(created_at=far)
    assert retention.prune(now=far).bodies == 3

    response = gm_client(gm).get(reverse("gm:game", args=[game.pk]))

    assert response.context["mail_trouble"] is True  # the fresh failure only
    content = response.content
    assert text(email_row(content, rows["sent"])) == (
        "23 Nov 18:00 report ann@example.org Subject sent sent Text removed after 30 days. 1"
    )
    assert text(email_row(content, rows["failed"])) == (
        "23 Nov 18:00 report ann@example.org Subject failed failed Text removed after 30 days: "
        "it cannot be sent again. 1"
    )
    assert text(email_row(content, rows["unknown"])) == (
        "23 Nov 18:00 report ann@example.org Subject unknown unknown Text removed after 30 "
        "days: it cannot be sent again. 1"
    )
    for row in rows.values():
        assert "send_again" not in email_row(content, row) and "<form" not in email_row(
            content, row
        )
    assert "<form" in email_row(content, fresh)
    assert b"The text of an email is removed 30 days after it was written" in content


def test_a_pruned_email_cannot_be_sent_again_and_the_gm_is_told_why(
    now: datetime, time_machine: TimeMachineFixture
) -> None:
    gm = GMFactory.create(is_staff=True)
    game = GameFactory.create(seats=2, gm=gm)
    failed = OutboundEmail.objects.create(
        dedupe_key="f",
        kind="report",
        game=game,
        to="ann@example.org",
        subject="S",
        text="Hello",
        state="failed",
        attempts=8,
    )
    far = now + timedelta(days=31)
    time_machine.move_to(far, tick=False)
    retention.prune(now=far)

    assert sending.send_again(failed.pk) is False
    response = gm_client(gm).post(reverse("gm:send_again", args=[game.pk, failed.pk]), follow=True)

    assert [str(m) for m in response.context["messages"]] == [
        "The report email to ann@example.org cannot be sent again: its text was removed 30 "
        'days after it was written. "Re-send the report" sends a player the game as it '
        "stands."
    ]
    failed.refresh_from_db()
    assert (failed.state, failed.attempts, failed.text) == ("failed", 8, "")


@pytest.mark.urls(__name__)
def test_the_local_mailbox_says_a_body_was_pruned(
    client: Client, now: datetime, settings: Settings
) -> None:
    settings.DEBUG = True
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    row = OutboundEmail.objects.create(
        dedupe_key="k",
        kind="report",
        to="ann@example.org",
        subject="S",
        text="Hello",
        html="<p>Hello</p>",
        state="sent",
    )
    retention.prune(now=now + timedelta(days=31))

    page = client.get(reverse("mail:row", args=[row.pk]))

    assert page.status_code == 200
    assert page.context["letter"].text == (
        "(The text of this email was removed 30 days after it was written: MAIL_RETENTION_DAYS.)"
    )
    assert page.context["letter"].html == ""


# --- the task, beat and the command --------------------------------------------------------


def test_the_task_prunes_and_beat_runs_it_daily(
    now: datetime, time_machine: TimeMachineFixture
) -> None:
    OutboundEmail.objects.create(
        dedupe_key="k", kind="report", to="ann@example.org", text="Hello", state="sent"
    )
    time_machine.move_to(now + timedelta(days=31), tick=False)
    assert tasks.prune.apply().get() == {
        "bodies": 1,
        "links": 0,
        "sign_ins": 0,
        "sign_ups": 0,
        "posts": 0,
        "subscriptions": 0,
    }
    assert settings.CELERY_BEAT_SCHEDULE["prune"]["task"] == tasks.prune.name == "games.prune"
    assert settings.CELERY_BEAT_SCHEDULE["prune"]["schedule"] == crontab(hour=3, minute=30)


def test_the_command_prunes_and_says_how_much(
    now: datetime, time_machine: TimeMachineFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    OutboundEmail.objects.create(
        dedupe_key="k", kind="report", to="ann@example.org", text="Hello", state="sent"
    )
    time_machine.move_to(now + timedelta(days=31), tick=False)
    call_command("prune")
    assert capsys.readouterr().out == (
        "Pruned the bodies of 1 emails older than 30 days and 0 expired links.\n"
        "Also 0 expired sign-ins, 0 lapsed sign-ups, the payloads of 0 webhook posts and "
        "pushes, and 0 failing push subscriptions.\n"
    )


# --- the other kinds: sign-ups, posts out of the service, push subscriptions --------------


def other_kinds(now: datetime) -> dict[str, Any]:
    """One row of each kind the daily prune removes besides bodies and links, written at
    ``now``, beside one of each that it keeps."""
    game = started_game(now=now, players=2)
    hook = Webhook.objects.create(game=game, url="https://hooks.example.org/x")
    player_hook = PlayerWebhook.objects.create(
        email="ann@example.org", url="https://hooks.example.org/ann", created_at=now
    )
    failing = PushSubscription.objects.create(
        email="ann@example.org", endpoint="https://push.example.org/a", p256dh="k", auth="a",
        created_at=now, last_failed_at=now,
    )  # fmt: skip
    working = PushSubscription.objects.create(
        email="bob@example.org", endpoint="https://push.example.org/b", p256dh="k", auth="a",
        created_at=now, last_failed_at=now, last_sent_at=now + timedelta(seconds=1),
    )  # fmt: skip
    over = {"state": "sent", "created_at": now, "payload": {"text": "ann's news"}}
    waiting = {"state": "pending", "created_at": now, "payload": {"text": "ann's news"}}
    for n, fields in enumerate([over, waiting]):
        WebhookDelivery.objects.create(
            webhook=hook, game=game, dedupe_key=f"w{n}", event="step", **fields
        )
        PushDelivery.objects.create(subscription=working, game=game, dedupe_key=f"p{n}", **fields)
        PlayerPost.objects.create(hook=player_hook, game=game, dedupe_key=f"h{n}", **fields)
    for state in ("unconfirmed", "waiting"):
        SignUp.objects.create(
            game=game, name=state, email=f"{state}@example.org", state=state,
            token_hash=secrets.token_hex(32), created_at=now,
        )  # fmt: skip
    return {"failing": failing, "working": working}


def counts(now: datetime) -> dict[str, int]:
    return {kind: rows.count() for kind, rows in retention.overdue(now).items()}


def test_lapsed_sign_ups_old_posts_and_failing_browsers_are_pruned_on_schedule(
    now: datetime, settings: Settings
) -> None:
    rows = other_kinds(now)
    nothing = dict.fromkeys(["email_bodies", "links", "sign_ins", "sign_ups",
                             "webhook_deliveries", "pushes", "player_posts",
                             "push_subscriptions"], 0)  # fmt: skip
    assert counts(now) == nothing
    # The sign-up's link lapses after SIGNUP_CONFIRM_HOURS (48), and says so for a day.
    lapsed = now + timedelta(hours=settings.SIGNUP_CONFIRM_HOURS) + DAY
    assert counts(lapsed - timedelta(seconds=1))["sign_ups"] == 0
    assert counts(lapsed)["sign_ups"] == 1
    # Posts out of the service keep their payload MAIL_RETENTION_DAYS (30), as emails.
    month = now + timedelta(days=settings.MAIL_RETENTION_DAYS, seconds=1)
    expected = {
        **nothing, "sign_ups": 1, "webhook_deliveries": 1, "pushes": 1,
        "player_posts": 1, "push_subscriptions": 1,
    }  # fmt: skip
    assert counts(month) == expected  # the failing browser: 30 days without a push
    pruned = retention.prune(now=month)
    assert pruned == retention.Pruned(0, 0, 0, sign_ups=1, posts=3, subscriptions=1)
    assert counts(month) == nothing
    assert retention.prune(now=month) == retention.Pruned(0, 0)
    assert list(SignUp.objects.values_list("state", flat=True)) == ["waiting"]
    kept: list[type[WebhookDelivery | PushDelivery | PlayerPost]] = [
        WebhookDelivery,
        PushDelivery,
        PlayerPost,
    ]
    assert [sorted(model.objects.values_list("dedupe_key", "payload")) for model in kept] == [
        [("w0", {}), ("w1", {"text": "ann's news"})],
        [("p0", {}), ("p1", {"text": "ann's news"})],
        [("h0", {}), ("h1", {"text": "ann's news"})],
    ]
    assert list(PushSubscription.objects.values_list("pk", flat=True)) == [rows["working"].pk]
