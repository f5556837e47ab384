"""Every kind of email the service sends, made by the flows that send it and read back as
a mail program reads it (Python's email parser, policy.default): who it is from and to,
the threading headers of a seat's emails, List-Id of a game's, Auto-Submitted on every
one, List-Unsubscribe on the mail a player may stop, and the same links in the text and
the HTML parts."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy
from email.message import EmailMessage
from html import unescape
from pathlib import Path

import pytest
from django.conf import settings
from pytest_django.fixtures import Settings
from time_machine import TimeMachineFixture

from games import postal, tasks
from games.community import players, press, signups
from games.engines.choice.rules import ChoiceEngine
from games.models import Game, Seat
from games.notify import digests, reminders, replies
from games.postal import access
from moderator.mail import building, sending
from moderator.mail.models import OutboundEmail
from tests.campaigns.test_postal import league_of, play_out
from tests.factories import SEED, choice_game, started_game
from tests.games.notify.test_replies import SECRET, auth, post_postmark, postmark_payload
from tests.moderator.mail.test_outbox import BACKEND, ScriptedBackend, refused

pytestmark = pytest.mark.django_db

CHOICE = ChoiceEngine()
KINDS = sorted(
    path.name
    for path in (Path(settings.BASE_DIR) / "templates" / "emails").iterdir()
    if (path / "subject.txt").exists()
)
# The mail a player may stop in one click (games.postal.access.stop_headers).
# (A handover's welcome holds the seat's current report, with that report's way to stop.)
STOPPABLE = {"report", "reminder", "digest", "daily", "press", "welcome"}
# Sent to a seat of a game, in the seat's thread.
THREADED = {
    "invite",
    "link",
    "report",
    "final",
    "deadline",
    "receipt",
    "refused",
    "reminder",
    "note-passed",
    "command",
}


@pytest.fixture(autouse=True)
def site(settings: Settings, time_machine: TimeMachineFixture, now: datetime) -> None:
    time_machine.move_to(now, tick=False)
    settings.SITE_URL = "https://games.example.org"
    settings.MAIL_DOMAIN = "games.example.org"
    settings.INBOUND_ADDRESS = "orders@in.example.org"
    settings.ANYMAIL = {"WEBHOOK_SECRET": SECRET}


def owed_text(game: Game, position: int) -> str:
    game.refresh_from_db()
    state = CHOICE.state_from_json(game.state)
    return CHOICE.canonical(state, position, CHOICE.default(state, position))


def send_every_kind(now: datetime, settings: Settings) -> None:
    """Each flow that sends mail, once."""
    game = choice_game(3, early_processing=False)
    postal.invite(game.pk, now=now)  # invite
    game = postal.start_game(game.pk, now=now, seed=SEED)  # report
    postal.rotate_link(game.pk, position=0, now=now)  # link
    postal.replace_player(
        game.pk, position=2, name="Dee", email="dee@example.org", now=now
    )  # replaced, welcome
    postal.send_lost_links("bob@example.org", now=now)  # lost-links
    open_game = choice_game(1, title="Open Choice", signup="first", seats_wanted=3)
    zed = signups.sign_up(open_game.pk, name="zed", email="zed@example.org", now=now)
    signups.confirm(zed.token, now=now)  # signup-confirm, signup
    players.ask("bob@example.org", browser="a-browser", now=now)  # signin
    postal.accept_order(
        game_id=game.pk, position=0, text=owed_text(game, 0), source="email", now=now
    )
    tasks.write_receipts()  # receipt
    bob = Seat.objects.get(game=game, position=1)
    reply = postmark_payload(access.reply_address(bob) or "", "W9 1+1 1+1")
    assert post_postmark(reply, **auth(SECRET)).status_code == 200  # refused
    hello = press.send(
        game_id=game.pk, position=0, to=None, text="Hello, all.", source="web", now=now
    )  # press
    empty = postmark_payload(
        access.press_address(bob, hello.pk) or "", "> Hello, all.", message_id="<p@example.net>"
    )
    assert post_postmark(empty, **auth(SECRET)).status_code == 200  # press-refused
    note = postmark_payload(
        access.reply_address(bob) or "", "Could we play a bit slower please?", "<n@example.net>"
    )
    assert post_postmark(note, **auth(SECRET)).status_code == 200  # gm-note, note-passed
    status = postmark_payload(access.reply_address(bob) or "", "status", "<c@example.net>")
    assert post_postmark(status, **auth(SECRET)).status_code == 200  # command
    stranger = postmark_payload(
        access.reply_address(bob) or "", "W5 1+3 3+4", "<s@example.net>", sender="eve@example.net"
    )
    assert post_postmark(stranger, **auth(SECRET)).status_code == 200  # held
    step = game.steps.get(number=1)
    postal.extend_deadline(game.pk, deadline=step.deadline + timedelta(days=1), now=now)  # deadline
    assert reminders.send_reminders(step.deadline) >= 1  # reminder
    reminders.choose(Seat.objects.get(game=game, position=2), way=reminders.DIGEST, hour=8)
    assert reminders.send_digests(datetime(2026, 11, 24, 8, tzinfo=UTC)) == 1  # digest
    postal.choose_reports(game.pk, position=1, choice="digest", everywhere=False)
    postal.resolve_now(game.pk, now=now)
    assert digests.send_daily_digests(datetime(2026, 11, 24, 8, tzinfo=UTC)) == 1  # daily
    report = OutboundEmail.objects.filter(kind="report", game=game).first()
    assert report is not None
    report.delivery, report.delivery_detail = "bounced", "550 no such mailbox"
    replies.mark_failing(report, now=now)  # failing
    settings.EMAIL_BACKEND = BACKEND
    ScriptedBackend.script = [refused(550)]
    assert sending.send(report.pk, now=now) == "failed"  # alert
    ScriptedBackend.script = []
    stale = now - timedelta(seconds=settings.MAIL_SENDING_TIMEOUT_SECONDS + 1)
    OutboundEmail.objects.filter(pk=report.pk).update(
        state="sending", sending_since=stale, handed_over_at=stale
    )
    assert sending.mark_unknown(now) == 1  # unconfirmed
    missed = postal.MissedTurns(civil_disorder_after=1)
    unruly = started_game(now=now, players=3, title="Unruly", missed=missed)
    first = unruly.steps.get(number=1)
    assert postal.resolve_due_step(first.pk, now=first.deadline)  # civil-disorder
    league = league_of(now)
    from campaigns import postal as campaigns

    entry = campaigns.start_league_game(league.pk, now=now, seed=SEED)
    play_out(entry.game, now)  # final, league


def read(row: OutboundEmail) -> EmailMessage:
    message = message_from_bytes(
        building.email_message(row).message().as_bytes(), policy=policy.default
    )
    assert isinstance(message, EmailMessage)
    return message


def links(text: str) -> set[str]:
    return {unescape(url).rstrip(".,)") for url in re.findall(r"https?://[^\s\"'<>]+", text)}


def test_every_kind_of_email_reads_back_with_its_headers_and_both_parts(
    now: datetime, settings: Settings
) -> None:
    send_every_kind(now, settings)
    made = sorted(set(OutboundEmail.objects.values_list("kind", flat=True)))
    assert made == KINDS
    for kind in KINDS:
        row = OutboundEmail.objects.filter(kind=kind).order_by("id").first()
        assert row is not None
        message = read(row)
        where = f"the {kind} email"
        assert message["Auto-Submitted"] == "auto-generated", where
        assert message["X-Auto-Response-Suppress"] == "All", where
        assert message["To"] == row.to and message["Subject"] == row.subject, where
        assert message["From"] == settings.DEFAULT_FROM_EMAIL, where
        assert message["Message-ID"] == row.message_id, where
        assert row.message_id.endswith("@games.example.org>"), where
        root = f"<{row.thread}@games.example.org>"
        threading = (message["In-Reply-To"], message["References"])
        if kind in THREADED:
            assert row.thread.startswith(f"game-{row.game_id}-seat-"), where
            assert threading == (root, root), where
        elif not row.thread:
            assert threading == (None, None), where
        if row.game_id is not None:
            assert message["List-Id"] == f"<game-{row.game_id}.games.example.org>", where
        if kind in STOPPABLE:
            stop = str(message["List-Unsubscribe"])
            assert re.fullmatch(
                r"\s*<https://games\.example\.org/email/stop/[a-z-]+/[0-9a-z-]+/>, "
                r"<mailto:orders\+stop-[a-z-]+-[0-9a-z-]+@in\.example\.org\?subject=stop>",
                stop,
            ), (where, stop)
            assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click", where
        else:
            assert message["List-Unsubscribe"] is None, where
        text = message.get_body(("plain",))
        html = message.get_body(("html",))
        assert text is not None and html is not None, where
        text_links, html_links = links(text.get_content()), links(html.get_content())
        assert text_links == html_links, (where, text_links ^ html_links)
        # Every email ends with the link to what the service keeps (the privacy page).
        privacy = "https://games.example.org/privacy/"
        assert text.get_content().endswith(
            f"\n\n-- \nYour data: what this service keeps, and why: {privacy}\n"
        ), where
        assert (
            html.get_content()
            .rstrip()
            .endswith(
                f'<a href="{privacy}" style="color:#1d4f91">'
                "Your data: what this service keeps, and why</a></div>\n</body></html>"
            )
        ), where
