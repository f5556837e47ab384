"""Replies as people write them, through every inbound webhook the service wires up, each
in its ESP's payload shape (tests/esps.py: Postmark's JSON, Mailgun's signed form, the raw
MIME of SES, SparkPost or Postal, Resend's and Mailtrap's fetched from a stand-in API...):
an HTML-only reply, attribution lines wrapped by Gmail or written in other languages, a
stray signature separator, a sign-off without one. Each becomes the order, with its
receipt (which names a sign-off left out); a reply in which no order can be read gets an
answer that says so and quotes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from games import tasks
from games.models import Game, Order, Seat
from games.notify.replies import NOT_FOUND
from games.postal import access
from moderator.mail import reading
from moderator.mail.models import InboundMessage, OutboundEmail
from tests.esps import ESPS, EspApi, auth, post

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("esp_settings")]

SEED = bytes(range(32))
BID = "bid 2 3"
QUOTE = "> Liars, step 1: your bid is due\n> Bid: open with a bid\n"


# Every ESP whose inbound webhook the service wires, each in its own payload shape.
PROVIDERS = ESPS


def send(api: EspApi, provider: str, to: str, text: str, html: str, message_id: str) -> Any:
    """The reply (``text`` or ``html`` empty when it has no such part) as ``provider``
    posts it to its real URL, with the basic-auth secret and the ESP's signature."""
    esp = PROVIDERS[provider]
    return post(esp.url, esp.post(api, to, message_id, text, html), **auth())


GMAIL_HTML = (
    '<div dir="ltr">bid 2 3<br></div><br><div class="gmail_quote"><div dir="ltr" '
    'class="gmail_attr">On Mon, 23 Nov 2026 at 18:00, Moderator &lt;moderator@games.'
    'example.org&gt; wrote:<br></div><blockquote class="gmail_quote" style="margin:0">'
    "<p>Liars, step 1: your bid is due</p><p>Bid: open with a bid</p></blockquote></div>"
)
REPLIES = {
    "html only (Gmail)": ("", GMAIL_HTML),
    "html only (Apple Mail)": (
        "",
        "<html><body><div>bid 2 3</div><div><br></div><div><br><blockquote "
        'type="cite"><div>On 23 Nov 2026, at 18:00, Moderator wrote:</div><div>Liars, step '
        "1</div></blockquote></div></body></html>",
    ),
    "html only (Outlook)": (
        "",
        '<div>bid 2 3</div><div id="appendonsend"></div><hr><div id="divRplyFwdMsg"><b>From:'
        "</b> Moderator<br><b>Sent:</b> Monday<br></div><div>Liars, step 1: your bid is due"
        "</div>",
    ),
    "gmail's attribution wrapped": (
        f"{BID}\n\nOn Mon, 23 Nov 2026 at 18:00, Moderator <\nmoderator@games.example.org> "
        f"wrote:\n\n{QUOTE}",
        "",
    ),
    "spanish": (
        f"{BID}\n\nEl lun, 23 nov 2026 a las 18:00, Moderator (<moderator@games.example.org>)"
        f" escribió:\n{QUOTE}",
        "",
    ),
    "italian": (
        f"{BID}\n\nIl giorno lun 23 nov 2026 alle ore 18:00 Moderator <m@games.example.org> "
        f"ha scritto:\n\n{QUOTE}",
        "",
    ),
    "dutch": (
        f"{BID}\n\nOp ma 23 nov. 2026 om 18:00 schreef Moderator <m@games.example.org>:\n\n{QUOTE}",
        "",
    ),
    "portuguese, no blank line": (
        f"{BID}\nEm seg., 23 de nov. de 2026 às 18:00, Moderator <m@games.example.org> "
        f"escreveu:\n{QUOTE}",
        "",
    ),
    "a stray separator": (f"{BID}\n--\nAnn\n\n{QUOTE}", ""),
    "a signature's separator": (f"{BID}\n-- \nAnn Smith\nLiars since 1990\n", ""),
}


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("written", REPLIES)
def test_a_reply_as_people_write_it_becomes_the_order(
    on_turn: Seat, esp_api: EspApi, provider: str, written: str
) -> None:
    text, html = REPLIES[written]
    address = access.reply_address(on_turn)
    assert address is not None
    response = send(esp_api, provider, address, text, html, f"<{provider}-1@mail.example.net>")
    assert response.status_code == 200
    order = Order.objects.get()
    assert (order.seat_id, order.source, order.text, order.canonical) == (
        on_turn.pk,
        "email",
        BID,
        BID,
    )
    message = InboundMessage.objects.get()
    assert (message.state, message.esp) == ("order", PROVIDERS[provider].esp)
    assert tasks.write_receipts() == 1
    assert OutboundEmail.objects.filter(kind="receipt", to=on_turn.email).count() == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_reply_with_no_readable_order_is_answered_without_an_empty_quote(
    on_turn: Seat, esp_api: EspApi, provider: str
) -> None:
    html = '<div class="gmail_quote"><blockquote>Liars, step 1</blockquote></div>'
    address = access.reply_address(on_turn)
    assert address is not None
    response = send(esp_api, provider, address, "", html, f"<{provider}-2@mail.example.net>")
    assert response.status_code == 200
    assert not Order.objects.exists()
    refused = OutboundEmail.objects.get(kind="refused")
    assert f"  {NOT_FOUND}\n" in refused.text
    assert "What you wrote" not in refused.text and "\n> \n" not in refused.text
    assert "What you wrote" not in refused.html
    assert Game.objects.get(pk=on_turn.game_id).step_number == 1


@pytest.mark.parametrize(
    ("text", "words"),
    [
        # The attribution paragraph goes, the order before it stays.
        ("bid 2 3\n\nOn Mon, Moderator wrote:\n> x", "bid 2 3"),
        ("bid 2 3\nEl lun, 23 nov 2026, Moderator escribió:\n> x", "bid 2 3"),
        # Wrapped: the first half ends at the address's bracket, or holds the date.
        ("bid 2 3\n\nOn Mon, Moderator <\nm@x.org> wrote:\n> x", "bid 2 3"),
        ("bid 2 3\n\nOp ma 23 nov. 2026 om 18:00 schreef\nModerator:\n> x", "bid 2 3"),
        # An order line before a one-line attribution is never taken for half of it.
        ("liar\nModerator wrote:\n> x", "liar"),
        ("W5 1+3 3+4\nW2 2+2 5+6\nModerator a écrit :\n> x", "W5 1+3 3+4\nW2 2+2 5+6"),
        # Outlook's header block, the original message line, a phone's footer.
        ("bid 2 3\n\nFrom: Moderator\nSent: Monday\n\nstep 1", "bid 2 3"),
        ("bid 2 3\n-----Original Message-----\nstep 1", "bid 2 3"),
        ("bid 2 3\n\nSent from my phone", "bid 2 3"),
        # Signatures, with or without the space; nothing quoted at all.
        ("bid 2 3\n--\nAnn", "bid 2 3"),
        ("bid 2 3\n-- \nAnn", "bid 2 3"),
        ("bid 2 3", "bid 2 3"),
        ("> x\n> y", ""),
    ],
)
def test_the_own_words_of_a_reply(text: str, words: str) -> None:
    assert reading.own_words(text) == words


def test_the_text_of_an_html_reply_keeps_lines_and_leaves_quotations_out() -> None:
    html = (
        "<html><head><style>p {color: red}</style></head><body><p>W5 1+3 3+4</p>"
        "<div>W2&nbsp;2+2 5+6<br>Thanks</div><blockquote><p>W1 1+1 1+1</p></blockquote>"
        '<div class="yahoo_quoted">On Monday</div></body></html>'
    )
    assert reading.html_text(html) == "W5 1+3 3+4\n\nW2 2+2 5+6\nThanks"
    # Everything after the first quotation is the quotation's, as in a text reply.
    assert reading.html_text("<p>bid 2 3</p><blockquote>x</blockquote><p>y</p>") == "bid 2 3"


SIGN_OFFS = {
    "german": "Grüße,\nJürgen",
    "french": "Merci !",
    "english, one line": "Thanks, Ann",
    "after a blank line": "\nCheers\nAnn",
}


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("written", SIGN_OFFS)
def test_a_sign_off_without_its_separator_is_left_out_and_named_in_the_receipt(
    on_turn: Seat, esp_api: EspApi, provider: str, written: str
) -> None:
    sign_off = SIGN_OFFS[written]
    address = access.reply_address(on_turn)
    assert address is not None
    text = f"{BID}\n{sign_off}\n\n{QUOTE}"
    response = send(esp_api, provider, address, text, "", f"<{provider}-3@mail.example.net>")
    assert response.status_code == 200
    order = Order.objects.get()
    assert (order.text, order.canonical, order.ignored) == (BID, BID, sign_off.strip())
    assert InboundMessage.objects.get().state == "order"
    assert tasks.write_receipts() == 1
    receipt = OutboundEmail.objects.get(kind="receipt")
    left_out = "".join(f"  > {line}\n" for line in sign_off.strip().splitlines())
    assert (
        "These lines after it were left out, since they are no order (a greeting or a name):"
        f"\n\n{left_out}"
    ) in receipt.text
    assert not OutboundEmail.objects.filter(kind="refused").exists()


@pytest.mark.parametrize(
    "after",
    [
        # An order line on its own: never taken for a sign-off.
        "bid 3 3",
        # Too long for a sign-off: the whole reply is refused, as written.
        "Thanks for running this game, it is the best part of my week, really!",
    ],
)
def test_a_line_that_is_an_order_or_long_is_not_a_sign_off(
    on_turn: Seat, esp_api: EspApi, after: str
) -> None:
    address = access.reply_address(on_turn)
    assert address is not None
    send(esp_api, "postmark", address, f"{BID}\n{after}", "", "<postmark-4@mail.example.net>")
    assert not Order.objects.exists()
    refused = OutboundEmail.objects.get(kind="refused")
    assert f"> {BID}\n> {after}\n" in refused.text
    assert InboundMessage.objects.get().state == "rejected"
