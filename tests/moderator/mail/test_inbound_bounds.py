"""Inbound mail can neither stall the site nor lose a reply (issue 39, section 3): the
webhook keeps what the ESP posted and answers without parsing it; a mail worker reads it
within bounds (parts, nesting, size) and answers the seat when it refuses; charsets Python
does not know are read; an attachment is dropped and named in the receipt; a refusal
quotes a few kilobytes at most. Posted as Postmark posts a raw email (``RawEmail``)."""

from __future__ import annotations

import base64
import json
from datetime import datetime, timedelta
from typing import Any
from unittest import mock

import pytest
from anymail.inbound import AnymailInboundMessage
from django.contrib.auth.models import User
from django.test import Client
from pytest_django.fixtures import Settings
from time_machine import TimeMachineFixture

from games import tasks as game_tasks
from games.models import Game, Order, Seat
from games.postal import access
from moderator.mail.models import InboundMessage, OutboundEmail
from tests.esps import BID, auth, read_kept

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("esp_settings")]

URL = "/mail/webhooks/postmark/inbound/"


def raw(
    to: str,
    body: list[str],
    *,
    top: str = 'text/plain; charset="utf-8"',
    more: tuple[str, ...] = (),
) -> str:
    lines = [
        "From: Ann <ann@example.org>",
        f"To: {to}",
        "Subject: Re: Liars, step 1",
        "Message-ID: <bounds-1@mail.example.org>",
        "MIME-Version: 1.0",
        f"Content-Type: {top}",
        *more,
        "",
        *body,
    ]
    return "\r\n".join(lines)


def postmark_raw(to: str, raw_email: str) -> dict[str, Any]:
    return {
        "From": "ann@example.org",
        "FromFull": {"Email": "ann@example.org", "Name": "Ann", "MailboxHash": ""},
        "To": to,
        "ToFull": [{"Email": to, "Name": "", "MailboxHash": ""}],
        "OriginalRecipient": to,
        "Subject": "Re: Liars, step 1",
        "MessageID": "73e6d360-66eb-11e1-8e72-a8904824019b",
        "TextBody": "",
        "HtmlBody": "",
        "Headers": [],
        "Attachments": [],
        "RawEmail": raw_email,
    }


def send(payload: dict[str, Any]) -> Any:
    """Postmark's post only: the webhook's answer, before any worker reads it."""
    headers: dict[str, Any] = auth()
    return Client().post(URL, data=json.dumps(payload), content_type="application/json", **headers)


def many_parts(to: str, count: int) -> str:
    parts = []
    for n in range(count):
        parts += ["--b", "Content-Type: text/plain", "", f"part {n} " + "x" * 60]
    return raw(to, [*parts, "--b--", ""], top='multipart/mixed; boundary="b"')


def nested(to: str, depth: int) -> str:
    lines: list[str] = []
    for n in range(depth):
        lines += [f"--b{n}", f'Content-Type: multipart/mixed; boundary="b{n + 1}"', ""]
    lines += [f"--b{depth}", "Content-Type: text/plain", "", BID, f"--b{depth}--"]
    for n in reversed(range(depth)):
        lines += [f"--b{n}--"]
    return raw(to, [*lines, ""], top='multipart/mixed; boundary="b0"')


def only_refusal(seat: Seat) -> OutboundEmail:
    (refused,) = OutboundEmail.objects.filter(kind="refused")
    assert refused.to == seat.email
    return refused


def test_20000_parts_are_kept_unparsed_at_once_and_refused_by_the_worker(on_turn: Seat) -> None:
    address = access.reply_address(on_turn) or ""
    payload = postmark_raw(address, many_parts(address, 20_000))
    assert len(json.dumps(payload)) > 1_500_000  # the real size: about 1.7 MB
    with mock.patch.object(
        AnymailInboundMessage, "parse_raw_mime", side_effect=AssertionError("parsed")
    ) as parse:
        response = send(payload)
    assert (response.status_code, response.content) == (200, b"")
    assert parse.call_count == 0
    row = InboundMessage.objects.get()
    assert (row.state, row.seat_id, row.game_id) == ("received", on_turn.pk, on_turn.game_id)
    assert bytes(row.payload or b"") == json.dumps(payload).encode()

    read_kept()
    row.refresh_from_db()
    assert (row.state, row.note, row.reason, row.payload) == (
        "rejected",
        "not read: too-many-parts",
        "too-many-parts",
        None,
    )
    assert Order.objects.count() == 0
    refused = only_refusal(on_turn)
    assert refused.subject == "Liars: your email could not be read"
    paragraphs = [" ".join(part.split()) for part in refused.text.split("\n\n")]
    assert [paragraphs[2], paragraphs[3].rsplit(" ", 1)[0]] == [
        "it is made of more parts (attachments, embedded images, alternatives) than this "
        "service reads, so nothing was recorded",
        "Nothing has changed: the order that counted before (if any) still counts. Send the "
        "order again as plain text in a reply to this email: only the order's lines, with no "
        "attachments and no forwarded emails. Or use your page:",
    ]
    assert "quoted" not in refused.text
    assert "forwarded emails. Or <a href=" in refused.html
    staff = User.objects.get(pk=Game.objects.get(pk=on_turn.game_id).gm_id)
    staff.is_staff = True
    staff.save()
    gm = Client()
    gm.force_login(staff)
    page = gm.get(f"/gm/{on_turn.game_id}/inbound/").content.decode()
    assert (
        "Not read: made of more parts (attachments, embedded images) than the service reads. "
        "The player was told to send it again as plain text."
    ) in page
    assert "too-many-parts" not in page


def test_3000_nested_multiparts_are_refused_with_an_answer_not_a_recursion_error(
    on_turn: Seat,
) -> None:
    address = access.reply_address(on_turn) or ""
    assert send(postmark_raw(address, nested(address, 3000))).status_code == 200
    read_kept()
    row = InboundMessage.objects.get()
    assert (row.state, row.note) == ("rejected", "not read: too-many-parts")
    assert "more parts" in only_refusal(on_turn).text


def test_an_email_nested_deeper_than_the_bound_is_refused_as_too_deep(
    on_turn: Seat, settings: Settings
) -> None:
    address = access.reply_address(on_turn) or ""
    assert settings.INBOUND_MAX_DEPTH == 8
    assert send(postmark_raw(address, nested(address, 12))).status_code == 200
    read_kept()
    row = InboundMessage.objects.get()
    assert (row.state, row.note) == ("rejected", "not read: too-deep")
    assert "nested deeper than this service reads" in " ".join(only_refusal(on_turn).text.split())


def test_an_email_within_the_bounds_nested_a_little_is_the_order(on_turn: Seat) -> None:
    address = access.reply_address(on_turn) or ""
    assert send(postmark_raw(address, nested(address, 3))).status_code == 200
    read_kept()
    assert [(o.seat_id, o.canonical) for o in Order.objects.all()] == [(on_turn.pk, BID)]


@pytest.mark.parametrize(
    "charset", ["unknown-8bit", "x-user-defined", "iso-8859-8-i", "x-mac-roman"]
)
def test_a_reply_in_a_charset_python_does_not_know_is_read_and_is_the_order(
    on_turn: Seat, charset: str
) -> None:
    address = access.reply_address(on_turn) or ""
    email = raw(
        address,
        [BID, "", "Gr\xfc\xdfe"],  # 8-bit bytes in that charset
        top=f'text/plain; charset="{charset}"',
        more=("Content-Transfer-Encoding: 8bit",),
    )
    assert send(postmark_raw(address, email)).status_code == 200
    read_kept()
    assert [(o.seat_id, o.canonical) for o in Order.objects.all()] == [(on_turn.pk, BID)]
    assert InboundMessage.objects.get().state == "order"


def test_a_reply_with_a_2_mb_photo_is_the_order_and_the_receipt_names_the_dropped_photo(
    on_turn: Seat,
) -> None:
    address = access.reply_address(on_turn) or ""
    photo = base64.encodebytes(bytes(range(256)) * 8192).decode("ascii")  # 2 MiB
    email = raw(
        address,
        [
            "--m",
            'Content-Type: text/plain; charset="utf-8"',
            "",
            BID,
            "--m",
            'Content-Type: image/jpeg; name="photo.jpg"',
            'Content-Disposition: attachment; filename="photo.jpg"',
            "Content-Transfer-Encoding: base64",
            "",
            *photo.splitlines(),
            "--m--",
            "",
        ],
        top='multipart/mixed; boundary="m"',
    )
    payload = postmark_raw(address, email)
    assert len(json.dumps(payload)) > 2_700_000  # past Django's 2.5 MB in-memory bound
    assert send(payload).status_code == 200
    read_kept()
    order = Order.objects.get()
    assert (order.seat_id, order.canonical, order.dropped) == (on_turn.pk, BID, "photo.jpg")
    assert game_tasks.write_receipts() == 1
    (receipt,) = OutboundEmail.objects.filter(kind="receipt")
    assert (
        "Your email's attachments were not kept (orders are read from its text alone): photo.jpg"
    ) in receipt.text
    assert InboundMessage.objects.get().payload is None  # the photo is not kept either


def test_a_refusal_quotes_a_few_kilobytes_of_a_long_reply(on_turn: Seat) -> None:
    address = access.reply_address(on_turn) or ""
    long_line = "bid 9 9 " + "z" * 70
    text = "\n".join([long_line] * 18_500)  # about 1.45 MB
    assert len(text) > 1_440_000
    email = raw(address, text.split("\n"))
    assert send(postmark_raw(address, email)).status_code == 200
    read_kept()
    assert InboundMessage.objects.get().state == "rejected"
    refused = only_refusal(on_turn)
    quoted = [line for line in refused.text.splitlines() if line.startswith("> ")]
    assert 0 < len("\n".join(quoted).encode()) <= 4096 + 2 * len(quoted)
    left = len(text) - sum(len(line) - 2 for line in quoted) - (len(quoted) - 1)
    assert f"[... and {left:,} more characters, not quoted]".replace(
        ",", ""
    ) in refused.text.replace(",", "")
    assert len(refused.text) < 8_000


def test_a_post_over_the_bound_is_refused_413_unread_and_the_seat_told(
    on_turn: Seat, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    settings.INBOUND_MAX_BYTES = 100_000
    address = access.reply_address(on_turn) or ""
    payload = postmark_raw(address, raw(address, [BID, "", "x" * 200_000]))
    response = send(payload)
    assert (response.status_code, response.content) == (
        413,
        b"the email is larger than this service takes (0.0953674 MB)",
    )
    assert (
        "inbound post to /mail/webhooks/postmark/inbound/ refused: larger than "
        "INBOUND_MAX_BYTES (100000 bytes)"
    ) in caplog.messages
    row = InboundMessage.objects.get()
    assert (row.state, row.note, row.seat_id) == ("rejected", "not read: too-large", on_turn.pk)
    assert "it is larger than this service takes" in only_refusal(on_turn).text
    assert Order.objects.count() == 0


def test_a_post_whose_hand_over_was_lost_is_read_by_the_sweep(
    on_turn: Seat, time_machine: TimeMachineFixture, now: datetime
) -> None:
    address = access.reply_address(on_turn) or ""
    assert send(postmark_raw(address, raw(address, [BID]))).status_code == 200
    assert InboundMessage.objects.get().state == "received"  # its task never ran
    time_machine.move_to(now + timedelta(minutes=5), tick=False)
    assert game_tasks.sweep()["inbound"] == 1  # handed out, and read (eager in tests)
    assert InboundMessage.objects.get().state == "order"
    assert game_tasks.sweep()["inbound"] == 0


def test_a_post_naming_no_seat_is_kept_small_and_never_read(on_turn: Seat) -> None:
    email = raw("orders+0-0-aaaaaaaaaaaaaaaaaaaaaaaaaa@in.example.org", [BID])
    with mock.patch.object(
        AnymailInboundMessage, "parse_raw_mime", side_effect=AssertionError("parsed")
    ):
        response = send(postmark_raw("someone@in.example.org", email))
        read_kept()
    assert response.status_code == 200
    row = InboundMessage.objects.get()
    assert (row.state, row.payload, row.seat_id) == ("ignored", None, None)
    assert OutboundEmail.objects.filter(kind="refused").count() == 0
