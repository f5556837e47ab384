"""Messages between players (games.community.press, docs/players.md "Messages"): who may write to
whom, what a message keeps of its text, who is emailed it and how (each message, the daily
digest, never; the GM's announcements always), the rate limits, the GM hiding one, and
what never sees a message (webhooks)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
from django.utils import translation
from pytest_django.fixtures import Settings
from time_machine import TimeMachineFixture

from games import postal
from games.community import press
from games.models import (
    Game,
    GMAction,
    Message,
    PressEmail,
    Seat,
    Webhook,
    WebhookDelivery,
)
from games.notify import digests
from moderator.mail.models import OutboundEmail
from tests.factories import GameFactory, started_game
from tests.games.playing import QUICK_CHOICE, play_out

pytestmark = pytest.mark.django_db

ANN, BOB, CY = 0, 1, 2


@pytest.fixture
def game(now: datetime) -> Game:
    """A running Choice game of ann, bob and cy."""
    return started_game(now=now, players=3)


def send(
    game: Game, position: int | None, text: str, now: datetime, to: int | None = None
) -> Message:
    return press.send(game_id=game.pk, position=position, to=to, text=text, source="web", now=now)


def press_emails() -> list[tuple[str, str]]:
    """(recipient, subject) of every message email, in the order written."""
    return list(
        OutboundEmail.objects.filter(kind="press").order_by("id").values_list("to", "subject")
    )


def seat(game: Game, position: int) -> Seat:
    return Seat.objects.get(game=game, position=position)


NAMES_OF = {ANN: "ann", BOB: "bob", CY: "cy"}


def read_by(game: Game, position: int) -> list[tuple[str, str]]:
    """(heading, text) of every message the seat may read, oldest first."""
    reader = seat(game, position)
    names = dict(game.seats.values_list("pk", "name"))
    page = press.for_seat(reader, names, limit=press.PAGE_MESSAGES)
    return [(message.heading, message.text) for message in page.messages]


# --- who writes to whom -------------------------------------------------------------------


def test_a_public_message_is_read_by_every_seat_and_emailed_to_the_others(
    game: Game, now: datetime
) -> None:
    message = send(game, ANN, "Hello, all.", now)
    assert (message.step_number, message.sender, message.recipient, message.source) == (
        1,
        seat(game, ANN),
        None,
        "web",
    )
    assert read_by(game, ANN) == [("You to everyone", "Hello, all.")]
    assert read_by(game, BOB) == [("ann to everyone", "Hello, all.")]
    assert read_by(game, CY) == [("ann to everyone", "Hello, all.")]
    assert press_emails() == [
        ("bob@example.org", "Test Choice: a message from ann to everyone"),
        ("cy@example.org", "Test Choice: a message from ann to everyone"),
    ]


def test_a_private_message_is_read_by_its_two_seats_only_and_emailed_to_its_recipient(
    game: Game, now: datetime
) -> None:
    send(game, ANN, "Just between us, bob.", now, to=BOB)
    assert read_by(game, ANN) == [("You to bob (private)", "Just between us, bob.")]
    assert read_by(game, BOB) == [("ann to you (private)", "Just between us, bob.")]
    assert read_by(game, CY) == []
    assert press_emails() == [("bob@example.org", "Test Choice: a private message from ann")]


def test_the_gms_announcement_is_emailed_to_every_seat_whatever_it_chose(
    game: Game, now: datetime
) -> None:
    press.choose_email(game.pk, position=BOB, choice=PressEmail.NONE)
    press.choose_email(game.pk, position=CY, choice=PressEmail.DIGEST)
    send(game, None, "Deadlines move to Fridays.", now)
    assert read_by(game, BOB) == [
        ("The GM to everyone (announcement)", "Deadlines move to Fridays.")
    ]
    assert press_emails() == [
        (f"{name}@example.org", "Test Choice: an announcement from the GM")
        for name in ("ann", "bob", "cy")
    ]


def test_each_seat_is_emailed_as_it_chose(game: Game, now: datetime) -> None:
    press.choose_email(game.pk, position=BOB, choice=PressEmail.NONE)
    press.choose_email(game.pk, position=CY, choice=PressEmail.DIGEST)
    send(game, ANN, "To all.", now)
    send(game, ANN, "To cy alone.", now, to=CY)
    send(game, CY, "To all, from cy.", now)
    assert press_emails() == [("ann@example.org", "Test Choice: a message from cy to everyone")]


@pytest.mark.parametrize(
    ("position", "to", "reason"),
    [
        (ANN, ANN, "There is no such player to write to in this game."),
        (ANN, 7, "There is no such player to write to in this game."),
        (7, None, "There is no such seat in this game."),
        (None, BOB, "The GM's announcements go to every player."),
    ],
)
def test_a_message_to_nobody_in_the_game_is_refused_and_nothing_is_written(
    game: Game, now: datetime, position: int | None, to: int | None, reason: str
) -> None:
    with pytest.raises(press.PressError) as refused:
        send(game, position, "Hello?", now, to=to)
    assert refused.value.message == reason
    assert (Message.objects.count(), press_emails()) == (0, [])


def test_with_private_messages_off_only_public_ones_are_taken(game: Game, now: datetime) -> None:
    press.set_private(game.pk, allowed=False, by=None, now=now)
    with pytest.raises(press.PressError) as refused:
        send(game, ANN, "Psst.", now, to=BOB)
    assert refused.value.message == (
        "Private messages are off in this game (the GM's choice): write to everyone instead."
    )
    assert Message.objects.count() == 0
    send(game, ANN, "Out loud, then.", now)
    assert read_by(game, CY) == [("ann to everyone", "Out loud, then.")]


def test_turning_private_messages_off_is_in_the_gms_log_once_the_game_runs(
    game: Game, now: datetime
) -> None:
    draft = GameFactory.create(seats=3)
    press.set_private(draft.pk, allowed=False, by=None, now=now)
    assert GMAction.objects.filter(game=draft).count() == 0
    press.set_private(game.pk, allowed=False, by=None, now=now)
    press.set_private(game.pk, allowed=False, by=None, now=now)  # no change: not logged
    press.set_private(game.pk, allowed=True, by=None, now=now)
    assert list(GMAction.objects.filter(game=game).values_list("kind", "words", "step_number")) == [
        ("press", "The GM turned private messages between players off", 1),
        ("press", "The GM allowed private messages between players", 1),
    ]


def test_the_next_game_keeps_the_private_message_setting(now: datetime) -> None:
    game = started_game(now=now, players=["ann", "bob"], title="Short", **QUICK_CHOICE)
    press.set_private(game.pk, allowed=False, by=None, now=now)
    play_out(game, sending={"ann", "bob"})
    assert postal.play_again(game.pk, now=now).private_press is False


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        (
            Game.Status.FINISHED,
            "The game is over, so messages are closed: nothing was sent. Everything said "
            "stays readable on your page.",
        ),
        (
            Game.Status.RECRUITING,
            "The game has not started yet: messages open when it does. Nothing was sent.",
        ),
    ],
)
def test_messages_are_taken_only_while_the_game_runs_or_is_paused(
    game: Game, now: datetime, status: str, reason: str
) -> None:
    Game.objects.filter(pk=game.pk).update(status=Game.Status.PAUSED)
    send(game, ANN, "While paused.", now)
    Game.objects.filter(pk=game.pk).update(status=status)
    with pytest.raises(press.PressError) as refused:
        send(game, BOB, "Too late.", now)
    assert refused.value.message == reason
    assert list(Message.objects.values_list("text", flat=True)) == ["While paused."]


# --- the text -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "kept"),
    [
        ("  Hello  \r\n\r\n  world  \r\n\n", "  Hello\n\n  world"),
        ("tab\there\x00\x07 bell", "tab\there bell"),
        ("line\u2028break\x85next", "line\nbreak\nnext"),
        ("right-to-left \u200fmarks\u200e stay", "right-to-left \u200fmarks\u200e stay"),
        ("<script>alert(1)</script>", "<script>alert(1)</script>"),
        ("x" * 2000, "x" * 2000),
    ],
)
def test_a_message_keeps_plain_text_without_control_characters(typed: str, kept: str) -> None:
    assert press.clean_text(typed) == kept


@pytest.mark.parametrize(
    ("typed", "reason"),
    [
        ("", "The message is empty: write something to send."),
        (" \n\t \x00\n", "The message is empty: write something to send."),
        ("x" * 2001, "A message has at most 2000 characters; this one has 2001."),
        (
            "evil \u202egnp.exe\u202c here",
            "The message holds an invisible character that changes the direction of the "
            "text (U+202E RIGHT-TO-LEFT OVERRIDE): delete it and write it again",
        ),
        (
            "score \u2066\u2067 7",
            "The message holds an invisible character that changes the direction of the "
            "text (U+2066 LEFT-TO-RIGHT ISOLATE): delete it and write it again",
        ),
    ],
)
def test_an_empty_too_long_or_reversed_message_is_refused_and_nothing_is_written(
    game: Game, now: datetime, typed: str, reason: str
) -> None:
    with pytest.raises(press.PressError) as refused:
        send(game, ANN, typed, now)
    assert refused.value.message == reason
    assert (Message.objects.count(), press_emails()) == (0, [])


# --- rate limits --------------------------------------------------------------------------


def test_a_seat_over_its_rate_limit_sends_nothing(
    game: Game, now: datetime, settings: Settings
) -> None:
    settings.RATES = {**settings.RATES, "press-seat": "2/h"}
    send(game, ANN, "One.", now)
    send(game, ANN, "Two.", now, to=BOB)
    with pytest.raises(press.Limited) as refused:
        send(game, ANN, "Three.", now)
    assert refused.value.message == (
        "Too many messages: each player may send 2 messages an hour, and a game 100 in all. "
        "Nothing was sent; try again later."
    )
    assert list(Message.objects.order_by("id").values_list("text", flat=True)) == ["One.", "Two."]
    assert len(press_emails()) == 3
    send(game, BOB, "bob still may.", now)


def test_a_game_over_its_rate_limit_sends_nothing_from_any_seat(
    game: Game, now: datetime, settings: Settings
) -> None:
    settings.RATES = {**settings.RATES, "press-game": "3/h"}
    for position in (ANN, BOB, CY):
        send(game, position, f"From {position}.", now)
    with pytest.raises(press.Limited):
        send(game, ANN, "Once more.", now)
    assert Message.objects.count() == 3
    send(game, None, "The GM is not limited.", now)
    assert Message.objects.count() == 4


# --- replies by email ---------------------------------------------------------------------


def test_a_reply_to_a_private_message_goes_privately_to_its_sender(
    game: Game, now: datetime
) -> None:
    private = send(game, ANN, "Ally with me?", now, to=BOB)
    answer = press.reply(seat(game, BOB), private.pk, "Yes, gladly.", now=now)
    assert (answer.sender, answer.recipient, answer.answers, answer.source) == (
        seat(game, BOB),
        seat(game, ANN),
        private,
        "email",
    )
    assert read_by(game, CY) == []


@pytest.mark.parametrize("sender", [ANN, None], ids=["public", "announcement"])
def test_a_reply_to_a_public_message_or_an_announcement_goes_to_everyone(
    game: Game, now: datetime, sender: int | None
) -> None:
    public = send(game, sender, "Who leads?", now)
    answer = press.reply(seat(game, CY), public.pk, "I do.", now=now)
    assert (answer.sender, answer.recipient, answer.answers) == (seat(game, CY), None, public)
    assert read_by(game, BOB)[-1] == ("cy to everyone", "I do.")


def test_a_reply_to_a_private_message_with_private_messages_off_is_refused(
    game: Game, now: datetime
) -> None:
    private = send(game, ANN, "Ally with me?", now, to=BOB)
    press.set_private(game.pk, allowed=False, by=None, now=now)
    with pytest.raises(press.PressError):
        press.reply(seat(game, BOB), private.pk, "Yes.", now=now)
    assert Message.objects.count() == 1


# --- the GM hides a message ---------------------------------------------------------------


def test_a_hidden_message_is_shown_to_nobody_but_the_gm_and_logged_without_its_text(
    game: Game, now: datetime, time_machine: TimeMachineFixture
) -> None:
    public = send(game, ANN, "Something rude.", now)
    private = send(game, BOB, "Something ruder.", now, to=CY)
    later = now + timedelta(minutes=5)
    press.hide(game.pk, public.pk, reason="be kind", by=game.gm_id, now=later)
    press.hide(game.pk, private.pk, reason="", by=game.gm_id, now=later)
    public.refresh_from_db()
    assert (public.hidden_at, public.hidden_reason, public.text) == (
        later,
        "be kind",
        "Something rude.",
    )
    for position in (ANN, BOB, CY):
        reader = seat(game, position)
        names = dict(game.seats.values_list("pk", "name"))
        shown = press.for_seat(reader, names, limit=20).messages
        assert [(m.text, m.hidden, m.hidden_reason) for m in shown] == (
            [("", True, "be kind")] + ([("", True, "")] if position in (BOB, CY) else [])
        )
    names = dict(game.seats.values_list("pk", "name"))
    gm = press.for_gm(game, names, limit=20).messages
    assert [(m.heading, m.text, m.hidden) for m in gm] == [
        ("ann to everyone", "Something rude.", True),
        ("bob to cy (private)", "Something ruder.", True),
    ]
    assert list(GMAction.objects.filter(game=game).values_list("kind", "words", "reason")) == [
        ("hide-message", "The GM hid a message of ann to everyone", "be kind"),
        ("hide-message", "The GM hid a private message", ""),
    ]
    # A German player reads the GM's log in German.
    with translation.override("de"):
        assert [str(action.said) for action in GMAction.objects.order_by("id")] == [
            "Der Spielleiter hat eine Nachricht von ann an alle ausgeblendet",
            "Der Spielleiter hat eine private Nachricht ausgeblendet",
        ]


def test_hiding_drops_the_emails_not_yet_sent_and_keeps_those_sent(
    game: Game, now: datetime
) -> None:
    message = send(game, ANN, "Oops.", now)
    OutboundEmail.objects.filter(to="bob@example.org", kind="press").update(
        state=OutboundEmail.State.SENT
    )
    press.hide(game.pk, message.pk, reason="posted by mistake", by=None, now=now)
    assert list(OutboundEmail.objects.filter(kind="press").values_list("to", "state")) == [
        ("bob@example.org", "sent")
    ]


def test_hiding_twice_or_with_a_bad_reason_changes_nothing(game: Game, now: datetime) -> None:
    message = send(game, ANN, "Oops.", now)
    with pytest.raises(press.PressError) as refused:
        press.hide(game.pk, message.pk, reason="two\nlines", by=None, now=now)
    assert refused.value.message == "The reason must be a single line without control characters."
    message.refresh_from_db()
    assert (message.hidden_at, GMAction.objects.count(), len(press_emails())) == (None, 0, 2)
    press.hide(game.pk, message.pk, reason="", by=None, now=now)
    with pytest.raises(press.PressError) as again:
        press.hide(game.pk, message.pk, reason="", by=None, now=now)
    assert again.value.message == "This message is hidden already."
    other = GameFactory.create(seats=2)
    with pytest.raises(press.PressError):
        press.hide(other.pk, message.pk, reason="", by=None, now=now)
    assert GMAction.objects.count() == 1


# --- pages of messages --------------------------------------------------------------------


def test_a_page_holds_the_latest_messages_and_the_id_to_read_older_ones(
    game: Game, now: datetime
) -> None:
    sent = [send(game, ANN if n % 2 else BOB, f"Message {n}.", now) for n in range(25)]
    reader = seat(game, CY)
    names = dict(game.seats.values_list("pk", "name"))
    latest = press.for_seat(reader, names, limit=20)
    assert [m.text for m in latest.messages] == [f"Message {n}." for n in range(5, 25)]
    assert (latest.total, latest.older, latest.paged) == (25, sent[5].pk, False)
    older = press.for_seat(reader, names, limit=20, before=latest.older)
    assert [m.text for m in older.messages] == [f"Message {n}." for n in range(5)]
    assert (older.total, older.older, older.paged) == (5, None, True)


# --- the daily digest ---------------------------------------------------------------------


def test_a_seat_on_the_digest_gets_the_messages_since_its_last_one_once(
    game: Game, now: datetime
) -> None:
    send(game, ANN, "Before the choice.", now)
    press.choose_email(game.pk, position=CY, choice=PressEmail.DIGEST)
    send(game, ANN, "After the choice.", now)
    send(game, BOB, "For cy alone.", now, to=CY)
    send(game, BOB, "For ann alone.", now, to=ANN)
    hidden = send(game, BOB, "Soon hidden.", now)
    press.hide(game.pk, hidden.pk, reason="", by=None, now=now)
    send(game, CY, "cy's own.", now)
    send(game, None, "Emailed already.", now)
    at_eight = now + timedelta(hours=14)  # 08:00 UTC the next day, cy's digest hour
    assert digests.send_daily_digests(at_eight) == 1
    (digest,) = OutboundEmail.objects.filter(kind="daily")
    assert digest.to == "cy@example.org"
    part = digest.text[digest.text.index("MESSAGES SINCE YOUR LAST DIGEST") :]
    assert part.splitlines()[:7] == [
        "MESSAGES SINCE YOUR LAST DIGEST",
        "  Postal turn 1, ann to everyone:",
        "    After the choice.",
        "  Postal turn 1, bob to you (private):",
        "    For cy alone.",
        "  The GM can read every message of this game, private ones too.",
        "  To answer, write on your page.",
    ]
    assert "WHAT YOU OWE" not in digest.text  # cy's reports come each step
    assert seat(game, CY).press_told == Message.objects.get(text="For cy alone.").pk
    assert digests.send_daily_digests(at_eight + timedelta(days=1)) == 0


def test_a_seat_on_the_digest_for_both_reads_reports_and_messages_in_one_email(
    game: Game, now: datetime
) -> None:
    postal.choose_reports(game.pk, position=CY, choice="digest", everywhere=False)
    press.choose_email(game.pk, position=CY, choice=PressEmail.DIGEST)
    send(game, ANN, "Hello cy.", now)
    assert digests.send_daily_digests(now + timedelta(hours=14)) == 1
    (digest,) = OutboundEmail.objects.filter(kind="daily")
    text = digest.text
    assert text.index("WHAT YOU OWE") < text.index("MESSAGES SINCE YOUR LAST DIGEST")
    assert "    Hello cy." in text.splitlines()


# --- what never hears of a message --------------------------------------------------------


def test_no_webhook_delivery_holds_a_message(now: datetime) -> None:
    game = started_game(now=now, players=["ann", "bob"], title="Short", **QUICK_CHOICE)
    Webhook.objects.create(game=game, url="https://hooks.example.org/game", format="json")
    send(game, 0, "Public words 1a2b.", now)
    send(game, 1, "Private words 3c4d.", now, to=0)
    play_out(game, sending={"ann", "bob"})
    payloads = json.dumps(list(WebhookDelivery.objects.values_list("payload", flat=True)))
    assert WebhookDelivery.objects.count() > 0
    assert ("1a2b" in payloads, "3c4d" in payloads) == (False, False)
