"""Messages between players by email (docs/email.md, "Messages by reply"): each message's
email, read as text; its reply address, which is never the order address; a reply to it
becoming a message (through Postmark's real inbound webhook), whatever it says; a reply to
a report staying an order; an email to both being neither; refusals answered."""

from __future__ import annotations

import re
from datetime import datetime

import pytest
from pytest_django.fixtures import Settings

from games import postal
from games.community import press
from games.models import Game, Message, Order, PressEmail, Seat
from games.postal import access
from moderator.mail.models import InboundMessage, OutboundEmail
from tests.factories import started_game, without_footer
from tests.games.notify.test_replies import (
    auth,
    inbound,  # noqa: F401 - the inbound address and the webhook secret
    order_text,
    post_postmark,
    postmark_payload,
)

pytestmark = pytest.mark.django_db

ANN, BOB, CY = 0, 1, 2


@pytest.fixture
def game(now: datetime) -> Game:
    return started_game(now=now, players=3, early_processing=False)


def seat(game: Game, position: int) -> Seat:
    return Seat.objects.get(game=game, position=position)


def send(
    game: Game, position: int | None, text: str, now: datetime, to: int | None = None
) -> Message:
    return press.send(game_id=game.pk, position=position, to=to, text=text, source="web", now=now)


def email_of(message: Message, to: str) -> OutboundEmail:
    return OutboundEmail.objects.get(
        kind="press", to=to, dedupe_key__startswith=f"press:{message.pk}:"
    )


def press_address(game: Game, position: int, message: Message) -> str:
    address = access.press_address(seat(game, position), message.pk)
    assert address is not None
    return address


def reply(address: str, text: str, number: int = 1) -> None:
    payload = postmark_payload(address, text, message_id=f"<press-{number}@mail.example.net>")
    assert post_postmark(payload, **auth()).status_code == 200


def quoted(text: str) -> str:
    """A reply as a mail program writes it: the words, then the message quoted."""
    return f"{text}\n\nOn Mon, 23 Nov 2026, Moderator wrote:\n> ann wrote to you privately\n> Ally?"


def tokens_out(text: str) -> str:
    text = re.sub(r"/p/[^/\s]+/", "/p/TOKEN/", text)
    return re.sub(r"/email/stop/press/[^/\s]+/", "/email/stop/press/TOKEN/", text)


def test_a_private_messages_email_reads_as_text_with_its_own_reply_address(
    game: Game, now: datetime
) -> None:
    message = send(game, ANN, "Ally with me?\nWe take the west.", now, to=BOB)
    email = email_of(message, "bob@example.org")
    assert email.subject == "Test Choice: a private message from ann"
    assert email.reply_to == press_address(game, BOB, message)
    assert email.reply_to.startswith(f"orders+press-{message.pk}-1-")
    assert email.reply_to != access.reply_address(seat(game, BOB))
    assert email.thread == f"game-{game.pk}-seat-1-press"
    assert email.headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert tokens_out(without_footer(email.text)) == (
        "Hello bob,\n"
        "\n"
        'ann wrote to you privately in "Test Choice" (postal turn 1, Mon 23 Nov 2026 18:00 UTC):\n'
        "\n"
        "  Ally with me?\n"
        "  We take the west.\n"
        "\n"
        "Reply to this email to answer ann privately: write above the quoted text.\n"
        "A reply to this email is a message, never an order.\n"
        "Send orders from your page or by replying to a report.\n"
        "The GM can read every message of this game, private ones too.\n"
        "\n"
        "Your page: http://127.0.0.1:8000/p/TOKEN/\n"
        "(The link opens your seat without a password; keep it to yourself.)\n"
        "\n"
        "HOW YOU GET MESSAGES\n"
        "  You get the other players' messages by email: each one as it comes.\n"
        '  To change that, see "Messages" on your page.\n'
        "  To stop the players' messages by email in one click:\n"
        "  http://127.0.0.1:8000/email/stop/press/TOKEN/\n"
    )
    assert '#f3f6fa">Ally with me?<br>\nWe take the west.</div>' in email.html


def test_each_seat_reads_a_messages_email_in_its_own_language(game: Game, now: datetime) -> None:
    """bob reads German, cy English, whatever language ann wrote in or the page spoke."""
    Seat.objects.filter(game=game, position=BOB).update(language="de")
    message = send(game, ANN, "Ally with me?", now)
    german = email_of(message, "bob@example.org")
    assert german.subject == "Test Choice: eine Nachricht von ann an alle"
    assert tokens_out(without_footer(german.text)) == (
        "Hallo bob,\n"
        "\n"
        "ann hat in „Test Choice“ an alle geschrieben (Postzug 1, Mo., 23. November 2026, "
        "18:00 UTC):\n"
        "\n"
        "  Ally with me?\n"
        "\n"
        "Mit einer Antwort auf diese E-Mail schreibst du allen zurück, in einer öffentlichen "
        "Nachricht: schreib über den zitierten Text.\n"
        "Eine Antwort auf diese E-Mail wird eine Nachricht, nie ein Zug.\n"
        "Deine Züge gibst du auf deiner Seite ab oder mit einer Antwort auf eine Auswertung.\n"
        "Der Spielleiter kann jede Nachricht dieses Spiels lesen, auch die privaten.\n"
        "\n"
        "Deine Seite: http://127.0.0.1:8000/p/TOKEN/\n"
        "(Der Link öffnet deinen Platz ohne Passwort; behalte ihn für dich.)\n"
        "\n"
        "WIE DU NACHRICHTEN BEKOMMST\n"
        "  Du bekommst die Nachrichten der anderen Spieler per E-Mail: jede einzeln, sobald "
        "sie kommt.\n"
        "  Um das zu ändern, sieh auf deiner Seite unter „Nachrichten“ nach.\n"
        "  Die Nachrichten der Spieler mit einem Klick abbestellen:\n"
        "  http://127.0.0.1:8000/email/stop/press/TOKEN/\n"
    )
    english = email_of(message, "cy@example.org")
    assert english.subject == "Test Choice: a message from ann to everyone"
    assert english.text.startswith('Hello cy,\n\nann wrote to everyone in "Test Choice"')


def test_a_long_message_is_wrapped_in_its_email_within_the_line_limit(
    game: Game, now: datetime
) -> None:
    words = ("word " * 380) + "https://example.org/" + "x" * 60
    message = send(game, ANN, words, now)
    email = email_of(message, "bob@example.org")
    for part in (email.text, email.html):
        assert max(len(line) for line in part.splitlines()) < 998
    body = [line for line in email.text.splitlines() if line.startswith("  word")]
    assert (len(body), body[0]) == (26, "  " + "word " * 14 + "word")
    assert f"  https://example.org/{'x' * 60}" in email.text.splitlines()


def test_an_announcements_email_says_it_always_comes_and_has_no_stop(
    game: Game, now: datetime
) -> None:
    press.choose_email(game.pk, position=CY, choice=PressEmail.NONE)
    message = send(game, None, "Welcome <all>.", now)
    email = email_of(message, "cy@example.org")
    assert email.subject == "Test Choice: an announcement from the GM"
    assert email.headers == {}
    lines = without_footer(email.text).splitlines()
    assert lines[2] == (
        'The GM wrote to everyone in "Test Choice" (postal turn 1, Mon 23 Nov 2026 18:00 UTC):'
    )
    assert lines[4] == "  Welcome <all>."
    assert lines[6] == (
        "Reply to this email to answer everyone, in a public message: write above the quoted text."
    )
    assert lines[-3:] == [
        "  The GM's announcements always come by email.",
        "  You get the other players' messages by email: never, you read them on your page.",
        '  To change that, see "Messages" on your page.',
    ]
    assert "Welcome &lt;all&gt;." in email.html


def test_without_an_inbound_address_a_reply_reaches_the_gm_and_the_email_says_so(
    game: Game, now: datetime, settings: Settings
) -> None:
    settings.INBOUND_ADDRESS = ""
    message = send(game, ANN, "Hello.", now)
    email = email_of(message, "bob@example.org")
    assert email.reply_to == game.gm.email
    assert "To answer, write on your page: a reply to this email reaches the GM only." in (
        email.text.splitlines()
    )
    assert "Reply to this email" not in email.text


def test_a_reply_to_a_private_message_is_a_private_message_to_its_sender(
    game: Game, now: datetime
) -> None:
    message = send(game, ANN, "Ally?", now, to=BOB)
    reply(press_address(game, BOB, message), quoted("Yes, let us.\n\n-- \nbob"))
    answer = Message.objects.get(answers=message)
    assert (answer.sender, answer.recipient, answer.text, answer.source) == (
        seat(game, BOB),
        seat(game, ANN),
        "Yes, let us.",
        "email",
    )
    row = InboundMessage.objects.get()
    assert (row.state, row.note, row.order) == (
        "message",
        f"message {answer.pk} of bob (Test Choice)",
        None,
    )
    assert email_of(answer, "ann@example.org").subject == "Test Choice: a private message from bob"
    assert OutboundEmail.objects.filter(kind="press", to="cy@example.org").count() == 0


def test_a_reply_to_a_public_message_goes_to_everyone(game: Game, now: datetime) -> None:
    message = send(game, ANN, "Who leads?", now)
    reply(press_address(game, CY, message), quoted("I do."))
    answer = Message.objects.get(answers=message)
    assert (answer.sender, answer.recipient) == (seat(game, CY), None)
    assert sorted(
        OutboundEmail.objects.filter(
            kind="press", dedupe_key__startswith=f"press:{answer.pk}:"
        ).values_list("to", flat=True)
    ) == [
        "ann@example.org",
        "bob@example.org",
    ]


def test_an_order_written_to_a_message_address_is_a_message_and_never_an_order(
    game: Game, now: datetime
) -> None:
    message = send(game, ANN, "What will you play?", now)
    order = order_text(game, BOB)
    reply(press_address(game, BOB, message), order)
    assert Order.objects.count() == 0
    assert Message.objects.get(answers=message).text == order
    assert InboundMessage.objects.get().state == "message"


def test_a_message_written_to_the_order_address_is_an_order_and_never_a_message(
    game: Game, now: datetime
) -> None:
    address = access.reply_address(seat(game, BOB))
    assert address is not None
    reply(address, "Hi all, anyone for an alliance?")
    assert Message.objects.count() == 0
    # No order, and no message either: a note, passed to the GM (issue 39, section 4).
    assert InboundMessage.objects.get().state == "note"
    assert OutboundEmail.objects.filter(kind="refused").count() == 0
    (passed,) = OutboundEmail.objects.filter(kind="note-passed")
    assert (passed.to, passed.subject) == (
        "bob@example.org",
        f"{game.title}: your note was passed to your GM",
    )
    (note,) = OutboundEmail.objects.filter(kind="gm-note")
    assert "> Hi all, anyone for an alliance?" in note.text


def to_both_addresses(game: Game, now: datetime) -> None:
    """bob's order, emailed to his message address of ann's private message with his
    order address in Cc."""
    message = send(game, ANN, "Ally?", now, to=BOB)
    order_address = access.reply_address(seat(game, BOB))
    payload = postmark_payload(press_address(game, BOB, message), order_text(game, BOB))
    payload["Cc"] = order_address
    payload["CcFull"] = [{"Email": order_address, "Name": "", "MailboxHash": ""}]
    assert post_postmark(payload, **auth()).status_code == 200


def test_an_email_to_both_addresses_is_neither_and_is_answered(game: Game, now: datetime) -> None:
    to_both_addresses(game, now)
    assert (Order.objects.count(), Message.objects.count()) == (0, 1)
    row = InboundMessage.objects.get()
    assert (row.state, row.note) == ("rejected", "sent to an order address and a message address")
    (refused,) = OutboundEmail.objects.filter(kind="refused")
    assert "so it is neither an order nor a message, and nothing was recorded or sent" in (
        " ".join(refused.text.split())
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("> ann wrote to you\n> Ally?", "The message is empty: write something to send."),
        (
            "Yes.",
            "Too many messages: each player may send 0 messages an hour, and a game 100 in "
            "all. Nothing was sent; try again later.",
        ),
    ],
    ids=["nothing above the quote", "over the rate limit"],
)
def test_a_refused_reply_is_answered_with_the_reason_and_sends_nothing(
    game: Game, now: datetime, settings: Settings, text: str, reason: str
) -> None:
    message = send(game, ANN, "Ally?", now, to=BOB)
    settings.RATES = {**settings.RATES, "press-seat": "0/h"}
    address = press_address(game, BOB, message)
    reply(address, text)
    assert Message.objects.count() == 1
    row = InboundMessage.objects.get()
    assert (row.state, row.note) == ("rejected", reason)
    (answer,) = OutboundEmail.objects.filter(kind="press-refused")
    assert (answer.to, answer.subject, answer.reply_to) == (
        "bob@example.org",
        "Test Choice: your emailed message was not sent",
        address,
    )
    assert f"\n  {reason}\n" in answer.text
    assert "Nothing was sent to anyone." in answer.text


def test_a_german_seats_refused_reply_is_answered_in_german(game: Game, now: datetime) -> None:
    Seat.objects.filter(game=game, position=BOB).update(language="de")
    message = send(game, ANN, "Ally?", now, to=BOB)
    reply(press_address(game, BOB, message), "> ann wrote to you\n> Ally?")

    assert Message.objects.count() == 1
    reason = "Die Nachricht ist leer: schreib etwas, bevor du sie abschickst."
    row = InboundMessage.objects.get()
    assert (row.state, row.note) == ("rejected", reason)
    (answer,) = OutboundEmail.objects.filter(kind="press-refused")
    assert answer.subject == "Test Choice: deine Nachricht per E-Mail wurde nicht gesendet"
    assert f"\n  {reason}\n" in answer.text
    assert "An niemanden wurde etwas gesendet." in answer.text


def test_a_german_seats_email_to_both_addresses_is_answered_in_german(
    game: Game, now: datetime
) -> None:
    Seat.objects.filter(game=game, position=BOB).update(language="de")
    to_both_addresses(game, now)

    assert (Order.objects.count(), Message.objects.count()) == (0, 1)
    (refused,) = OutboundEmail.objects.filter(kind="refused")
    assert (
        "sie ging sowohl an deine Zug-Adresse als auch an die Adresse einer Nachricht, darum "
        "ist sie weder ein Zug noch eine Nachricht, und nichts wurde gespeichert oder "
        "verschickt."
    ) in " ".join(refused.text.split())


def test_a_rotated_link_retires_the_message_address(game: Game, now: datetime) -> None:
    message = send(game, ANN, "Ally?", now, to=BOB)
    address = press_address(game, BOB, message)
    postal.rotate_link(game.pk, position=BOB, now=now)
    forged = address.replace(f"press-{message.pk}-1-", f"press-{message.pk}-2-")
    reply(address, "Yes.", 1)
    reply(forged, "Yes.", 2)
    assert Message.objects.count() == 1
    assert set(InboundMessage.objects.values_list("state", flat=True)) == {"ignored"}


def test_a_mail_to_the_stop_address_of_a_message_email_stops_the_players_messages(
    game: Game, now: datetime
) -> None:
    address = access.stop_address(seat(game, BOB), "press")
    assert address is not None
    reply(address, "stop")
    assert seat(game, BOB).press_email == PressEmail.NONE
    row = InboundMessage.objects.get()
    assert (row.state, row.note) == ("stopped", "bob gets no messages of Test Choice by email")
    send(game, ANN, "Anyone?", now)
    assert list(OutboundEmail.objects.filter(kind="press").values_list("to", flat=True)) == [
        "cy@example.org"
    ]


def test_an_automatic_reply_to_a_message_makes_no_message_and_gets_no_answer(
    game: Game, now: datetime
) -> None:
    message = send(game, ANN, "Ally?", now, to=BOB)
    payload = postmark_payload(
        press_address(game, BOB, message), "I am away.", headers={"Auto-Submitted": "auto-replied"}
    )
    assert post_postmark(payload, **auth()).status_code == 200
    assert Message.objects.count() == 1
    assert InboundMessage.objects.get().state == "ignored"
    assert OutboundEmail.objects.filter(kind="press-refused").count() == 0


def test_a_reply_delivered_twice_is_one_message(game: Game, now: datetime) -> None:
    message = send(game, ANN, "Ally?", now, to=BOB)
    for _ in range(2):
        reply(press_address(game, BOB, message), "Yes.")
    assert list(Message.objects.filter(answers=message).values_list("text", flat=True)) == ["Yes."]
    assert InboundMessage.objects.count() == 1
