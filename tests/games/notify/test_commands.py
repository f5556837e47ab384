"""Commands by email (games.notify.commands): a reply whose own words are one command word
is answered by email at the seat's address, and is no order."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import pytest
from django.core.cache import cache
from pytest_django.fixtures import Settings
from time_machine import TimeMachineFixture

from games import postal
from games.models import Event, Game, Order
from games.notify import commands, replies
from moderator.mail.models import InboundMessage, OutboundEmail
from tests.factories import started_game, without_footer
from tests.games.notify.test_replies import (
    SECRET,
    auth,
    order_text,
    post_postmark,
    postmark_payload,
    reply_address,
    seat,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def inbound(settings: Settings, time_machine: TimeMachineFixture, now: datetime) -> None:
    time_machine.move_to(now, tick=False)
    settings.INBOUND_ADDRESS = "orders@in.example.org"
    settings.ANYMAIL = {"WEBHOOK_SECRET": [SECRET]}
    cache.clear()


@pytest.fixture
def game(now: datetime) -> Game:
    return started_game(now=now, players=3, early_processing=False, title="Tuesday")


def command(game: Game, position: int, text: str, number: int = 1) -> list[OutboundEmail]:
    """The seat's player replies ``text``; the emails that answer it."""
    before = OutboundEmail.objects.order_by("-id").values_list("id", flat=True).first() or 0
    payload = postmark_payload(
        reply_address(seat(game, position)),
        f"{text}\n\nOn Mon, 23 Nov 2026, Moderator wrote:\n> a report",
        f"<command-{number}@mail.example.net>",
    )
    assert post_postmark(payload, **auth()).status_code == 200
    return list(OutboundEmail.objects.filter(id__gt=before).order_by("id"))


LINK = re.compile(r"http://127\.0\.0\.1:8000/p/[\w-]+/")


def flowed(email: OutboundEmail) -> str:
    """The email's text on one line, each link to a seat written LINK."""
    return LINK.sub("LINK", " ".join(without_footer(email.text).split()))


@pytest.mark.parametrize(
    ("text", "word"),
    [("help", "help"), ("Status", "status"), ("  DEADLINES. ", "deadlines"), ("report?", "report")],
)
def test_a_command_is_one_word_alone_in_any_case(text: str, word: str) -> None:
    assert commands.command_in(f"\n{text}\n\n") == word


@pytest.mark.parametrize("text", ["help me", "status\nW5 1+3 3+4", "W5 1+3 3+4", "", "stats"])
def test_anything_else_is_no_command(text: str) -> None:
    assert commands.command_in(text) is None


def test_help_lists_the_commands_and_records_no_order(game: Game) -> None:
    (answer,) = command(game, 0, "help")
    assert (answer.kind, answer.to, answer.subject) == (
        "command",
        "ann@example.org",
        "Tuesday: commands by email",
    )
    assert answer.reply_to == reply_address(seat(game, 0))
    text = flowed(answer)
    assert text == (
        'Hello ann, Reply to an email of "Tuesday" with one of these words alone, and the '
        "answer comes by email: help these lines status your games not over: what each asks "
        "of you, and by when deadlines the orders you owe, soonest deadline first report the "
        "latest report of this seat again history what happened lately in this game, as far "
        "as you may see it Anything else you write in a reply is your order for this game. "
        "Your seat: LINK"
    )
    assert Order.objects.count() == 0
    row = InboundMessage.objects.get()
    assert (row.state, row.note) == ("command", "the command 'help': answered")


def test_status_and_deadlines_tell_every_game_of_the_address(game: Game, now: datetime) -> None:
    other = started_game(now=now, players=["bob", "ann"], title="Friday", early_processing=False)
    later = started_game(
        now=now,
        players=["ann", "cy"],
        title="Sunday",
        schedule_spec={"kind": "interval", "seconds": 3600},
    )
    postal.accept_order(
        game_id=other.pk, position=1, text=order_text(other, 1), source="web", now=now
    )
    (status,) = command(game, 0, "status")
    assert status.subject == "Your games"
    owes = "You owe: postal turn (rounds 1-2: one line per round, e.g. W5 1+3 3+4)"
    assert flowed(status) == (
        "Hello ann, Your games not over: "
        "Tuesday (you play ann) Your order for postal turn 1 is due Wed 25 Nov 2026 18:00 UTC. "
        f"{owes} LINK "
        "Friday (you play ann) Your order for postal turn 1 is in; you can replace it until "
        "Wed 25 Nov 2026 18:00 UTC. LINK "
        "Sunday (you play ann) Your order for postal turn 1 is due Mon 23 Nov 2026 19:00 UTC. "
        f"{owes} LINK"
    )
    (deadlines,) = command(game, 0, "deadlines", number=2)
    assert deadlines.subject == "Your deadlines"
    assert flowed(deadlines) == (
        "Hello ann, The orders you owe, soonest deadline first: "
        "Sunday (you play ann) Your order for postal turn 1 is due Mon 23 Nov 2026 19:00 UTC. "
        f"{owes} LINK "
        "Tuesday (you play ann) Your order for postal turn 1 is due Wed 25 Nov 2026 18:00 UTC. "
        f"{owes} LINK"
    )
    # Friday's order is in: nothing is owed there. Bob's seat of Friday is not told.
    assert "Friday" not in deadlines.text
    assert "you play bob" not in status.text
    assert later.status == Game.Status.RUNNING


def test_report_sends_the_seats_latest_report_again(game: Game) -> None:
    (report,) = command(game, 1, "report")
    first = OutboundEmail.objects.filter(kind="report", to="bob@example.org").order_by("id")[0]
    assert (report.kind, report.to, report.subject) == ("report", "bob@example.org", first.subject)
    assert report.dedupe_key.startswith("command:")
    # The report of step 1 as the first one was, but for its link.
    link = re.compile(r"http://\S+/p/\S+/")
    assert link.sub("LINK", report.text) == link.sub("LINK", first.text)


def test_history_tells_only_what_the_seat_may_see(game: Game, now: datetime) -> None:
    for position in range(3):
        postal.accept_order(
            game_id=game.pk,
            position=position,
            text=order_text(game, position),
            source="web",
            now=now,
        )
    postal.resolve_now(game.pk, by=None, now=now + timedelta(minutes=1))
    (history,) = command(game, 2, "history")
    assert history.subject == "Tuesday: what happened lately"
    body = history.text.split("the latest first:\n\n")[1].split("\n\nYour seat:")[0]
    events = list(Event.objects.filter(game=game).order_by("id"))
    seen = [event.text for event in events if event.visible_to(2)]
    unseen = [event.text for event in events if not event.visible_to(2)]
    assert body == "\n".join(["Postal turn 1", *(f"  - {text}" for text in seen)])
    # ann's and bob's receipts of their orders are theirs alone: of the three, cy's own.
    assert [text.split(":")[0] for text in unseen] == ["order received for rounds 1-2"] * 2
    assert body.count("order received for rounds 1-2") == 1


def test_an_answer_is_in_the_seats_language(game: Game) -> None:
    s = seat(game, 0)
    s.language = "de"
    s.save(update_fields=["language"])
    (answer,) = command(game, 0, "deadlines")
    assert answer.subject == "Deine Abgabetermine"
    assert flowed(answer) == (
        "Hallo ann, Deine fälligen Züge, der nächste Abgabetermin zuerst: Tuesday (du spielst "
        "ann) Dein Zug für Postzug 1 ist fällig am Mi., 25. November 2026, 18:00 UTC. Fällig: "
        "Zug dieser Runde (Würfe 1-2: eine Zeile pro Wurf, z. B. W5 1+3 3+4) LINK"
    )


def test_over_the_limit_a_command_is_not_answered(game: Game, settings: Settings) -> None:
    settings.RATES = {**settings.RATES, "command-email": "2/h"}
    answers = [len(command(game, 0, "help", number=n)) for n in range(3)]
    assert answers == [1, 1, 0]
    assert InboundMessage.objects.order_by("id").last().note == (  # type: ignore[union-attr]
        "the command 'help': over the limit, no answer"
    )


def test_a_command_from_another_address_is_held_and_answered_once_the_gm_takes_it(
    game: Game, now: datetime
) -> None:
    payload = postmark_payload(
        reply_address(seat(game, 1)), "status", "<held@mail.example.net>", sender="eve@example.net"
    )
    assert post_postmark(payload, **auth()).status_code == 200
    row = InboundMessage.objects.get()
    assert (row.state, OutboundEmail.objects.filter(kind="command").count()) == ("held", 0)
    replies.release(row.pk, game.pk, now=now)
    row.refresh_from_db()
    (answer,) = OutboundEmail.objects.filter(kind="command")
    assert (row.state, answer.to, answer.subject) == ("command", "bob@example.org", "Your games")
    assert Order.objects.count() == 0


# --- to the commands address itself ----------------------------------------------------------


def to_commands(text: str, sender: str, number: int = 1) -> list[OutboundEmail]:
    """An email from ``sender`` to the inbound address itself, with no seat's token."""
    before = OutboundEmail.objects.order_by("-id").values_list("id", flat=True).first() or 0
    payload = postmark_payload(
        "orders@in.example.org", text, f"<bare-{number}@mail.example.net>", sender=sender
    )
    payload["MailboxHash"] = ""
    payload["ToFull"][0]["MailboxHash"] = ""
    assert post_postmark(payload, **auth()).status_code == 200
    return list(OutboundEmail.objects.filter(id__gt=before).order_by("id"))


def test_a_command_to_the_commands_address_answers_the_senders_own_seats(game: Game) -> None:
    (answer,) = to_commands("status", "bob@example.org")
    assert (answer.kind, answer.to, answer.subject) == (
        "command",
        "bob@example.org",
        "Your games",
    )
    assert flowed(answer).startswith("Hello bob, ")
    assert "Tuesday" in answer.text
    row = InboundMessage.objects.get()
    assert (row.state, row.note, row.seat_id) == (
        "command",
        "the command 'status': answered",
        seat(game, 1).pk,
    )
    assert Order.objects.count() == 0


def test_words_to_the_commands_address_that_are_no_command_get_the_help(game: Game) -> None:
    (answer,) = to_commands("W5 1+3 3+4\nplease", "cy@example.org")
    assert (answer.to, answer.subject) == ("cy@example.org", "Tuesday: commands by email")
    assert Order.objects.count() == 0


def test_a_stranger_writing_to_the_commands_address_gets_no_answer(game: Game) -> None:
    assert to_commands("status", "stranger@example.net") == []
    row = InboundMessage.objects.get()
    assert (row.state, row.note) == ("ignored", "to the commands address from no player: no answer")
