"""What the ESPs' webhooks mean for the games (anymail signals, connected in apps.py).

- A reply to a report is an order: the Reply-To of every email to a seat carries the
  seat's reply token; the reply's own words (above the quoted report) are taken exactly as
  a web order is (``postal.accept_order``: deadline, revisions, the receipt by email). An
  order that is refused gets a reply that quotes it with the engine's message.
- Each email is kept first (``InboundMessage``, once per Message-ID), so a message
  delivered twice makes one order, and one whose handling failed is still there.
- Auto-replies, bounces and emails to an unknown, rotated or foreign token make no order
  and get no answer: answering a machine, or a stranger, helps nobody.
- A reply to a message between players (its press address, ``access.press_address``)
  is a message (``press.reply``), never an order, and a reply to the order address is
  never a message; an email to both is neither, and is answered so. A message refused
  (empty, too long, over the rate limits, the game over) is answered with the reason.
- An email to a List-Unsubscribe mailto: (``access.stop_address``) stops that email
  (``postal.stop_email``) and gets no answer.
- Tracking events update the outbox rows; a bounce, complaint or rejection marks the
  seat's address as failing and tells the GM.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext_lazy

from games import access, postal, press
from games.engines.base import OrderError, order_lines
from games.models import Game, Order, Seat
from moderator.mail import building, queueing, reading, webhooks
from moderator.mail.models import InboundMessage, OutboundEmail

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

log = logging.getLogger(__name__)

Inbound = InboundMessage.State


def on_inbound(sender: Any, event: Any, esp_name: str, **kwargs: Any) -> None:
    message = getattr(event, "message", None)
    if message is None:
        # Nothing was sent to us: Mailtrap's "Test your integration" post (anymail signals
        # no event for it), a Resend notification that names no email.
        return
    receive(message, esp_name, now=timezone.now())


def on_tracking(sender: Any, event: Any, esp_name: str, **kwargs: Any) -> None:
    track(event, esp_name, now=timezone.now())


def receive(message: Any, esp: str, *, now: datetime) -> InboundMessage | None:
    """Keep ``message`` and act on it, once: None if it was handled before. A message whose
    handling failed (the webhook answered 500) stays "received", and the ESP's next
    delivery of it handles it."""
    kept = webhooks.keep_inbound(message, esp, now)
    with transaction.atomic():
        row = InboundMessage.objects.select_for_update().get(pk=kept.pk)
        if row.state != Inbound.RECEIVED:
            return None
        handle(row, message, now=now)
    return row


def _done(row: InboundMessage, state: str, note: str, order: Order | None = None) -> None:
    row.state, row.note, row.order = state, note[:2000], order
    row.save(update_fields=["state", "note", "order"])


def handle(row: InboundMessage, message: Any, *, now: datetime) -> None:
    recipients = webhooks.recipients(message)
    stop = access.stop_for_address(recipients)
    if stop is not None:
        # An email's List-Unsubscribe mailto: carried out, and not answered (RFC 8058's
        # one click by mail expects no reply); whatever it says is no order.
        return _done(row, Inbound.STOPPED, postal.stop_email(*stop))
    reason = webhooks.auto_reply_reason(message)
    if reason is not None:
        return _done(row, Inbound.IGNORED, f"an automatic email ({reason}): no answer")
    seat = access.seat_for_reply(recipients)
    answering = access.press_for_reply(recipients)
    if answering is not None and seat is not None:
        text = reading.reply_text(message)
        _answer(seat, row, text, BOTH)
        return _done(row, Inbound.REJECTED, "sent to an order address and a message address")
    if answering is not None:
        return _message(row, message, *answering, now=now)
    if seat is None:
        return _done(row, Inbound.IGNORED, "no valid reply address among the recipients")
    text = reading.reply_text(message)
    if _empty(text):
        _answer(seat, row, text, NOT_FOUND)
        return _done(row, Inbound.REJECTED, "no order in the reply")
    try:
        order = postal.accept_order(
            game_id=seat.game_id, position=seat.position, text=text, source="email", now=now
        )
    except postal.PostalError as error:
        partly = isinstance(error, postal.OrderRejected) and error.partly_played
        signed = None if partly else sign_off(seat, text)
        if signed is not None:
            try:
                order = postal.accept_order(
                    game_id=seat.game_id,
                    position=seat.position,
                    text=signed[0],
                    source="email",
                    now=now,
                    ignored=signed[1],
                )
            except postal.PostalError:
                pass  # the order without its sign-off is refused too: the first answer holds
            else:
                note = f"order {order.pk} of {seat}, its sign-off left out"
                return _done(row, Inbound.ORDER, note, order)
        _answer(seat, row, text, error.message, partly_played=partly)
        return _done(row, Inbound.REJECTED, error.message)
    _done(row, Inbound.ORDER, f"order {order.pk} of {seat}", order)


# The answer to an email sent both to a seat's order address and to a message's address:
# it is neither, since an order must never be taken for a message nor a message for one.
BOTH = gettext_lazy(
    "it was sent both to your order address and to the address of a message, so it is "
    "neither an order nor a message, and nothing was recorded or sent. Send an order as a "
    "reply to a report, and a message as a reply to a message, each on its own"
)


def _message(
    row: InboundMessage, message: Any, seat: Seat, answered: int, *, now: datetime
) -> None:
    """A reply to message ``answered``, as emailed to ``seat``: a message (``press.reply``),
    whatever it says; refused with the reason, quoting it, and nothing sent."""
    text = reading.reply_text(message)
    try:
        # Refused in the seat's language, as an order is (postal speaks it).
        with translation.override(seat.speaks):
            sent = press.reply(seat, answered, text, now=now)
    except press.PressError as error:
        _answer(seat, row, text, error.message, answered=answered)
        return _done(row, Inbound.REJECTED, error.message)
    _done(row, Inbound.MESSAGE, f"message {sent.pk} of {seat}")


# At most this many lines after an order, each at most this long, are taken for a sign-off
# written without the "-- " separator ("Thanks,", "Grüße,", "Jürgen", "Merci !").
SIGN_OFF_LINES = 3
SIGN_OFF_LENGTH = 60


def sign_off(seat: Seat, text: str) -> tuple[str, str] | None:
    """(the order, its sign-off) when ``text`` ends with at most SIGN_OFF_LINES short lines
    that the seat's game reads as no order, each on its own, after lines it reads as an
    order; else None. A line that is an order on its own (a mistyped extra round, a second
    bid) is never left out: the order is refused with the game's reason instead."""
    game = Game.objects.get(pk=seat.game_id)
    if game.state is None:
        return None
    engine = game.rules
    state = engine.state_from_json(game.state)

    def reads(lines: list[str]) -> bool:
        try:
            engine.parse(state, seat.position, "\n".join(lines))
        except OrderError:
            return False
        return True

    lines = text.strip().splitlines()
    for cut in range(1, min(SIGN_OFF_LINES, len(lines) - 1) + 1):
        order, tail = lines[:-cut], lines[-cut:]
        if any(len(line) > SIGN_OFF_LENGTH for line in tail):
            return None
        if any(line.strip() and reads([line]) for line in tail):
            return None
        if reads(order):
            return "\n".join(order).strip(), "\n".join(tail).strip()
    return None


# The answer to a reply in which no order could be read (nothing above the quoted report,
# or an HTML email whose words could not be told from the quotation).
NOT_FOUND = gettext_lazy(
    "no order was found in your message, so nothing was recorded. Write the order as the "
    "first lines of your reply, above the quoted report; if your mail program sends "
    "formatted (HTML) email, switch it to plain text for this reply"
)


def _empty(text: str) -> bool:
    """Whether ``text`` holds no order line. A line the games cannot read (too long, a
    control character) is not empty: ``accept_order`` refuses it with the reason."""
    try:
        return not order_lines(text)
    except OrderError:
        return False


def _answer(
    seat: Seat,
    row: InboundMessage,
    text: str,
    reason: StrOrPromise,
    *,
    partly_played: bool = False,
    answered: int | None = None,
) -> None:
    """Tell the seat (at its own address, never the From of the email) why its emailed
    order was refused, quoting what it wrote, in the seat's language; ``partly_played``:
    its first lines stand. ``answered``: the email was a reply to that message, and was
    not sent; a reply to the answer is a reply to the same message."""
    game = seat.game
    kind = "refused" if answered is None else "press-refused"
    with transaction.atomic(), translation.override(seat.speaks):
        token = access.mint([seat], now=row.received_at)[seat.position]
        if answered is None:
            lines, thread = text.splitlines(), f"game-{game.pk}-seat-{seat.position}"
            reply_to = access.reply_address(seat) or game.gm.email or None
        else:
            lines = [piece for pieces in press.email_lines(text) for piece in pieces]
            thread = f"game-{game.pk}-seat-{seat.position}-press"
            reply_to = access.press_address(seat, answered)
        email = building.build(
            kind,
            to=seat.email,
            dedupe_key=f"{kind}:{row.pk}",
            context={
                "game": game,
                "seat": seat,
                "reason": reason,
                "partly_played": partly_played,
                "lines": lines,
                "subject": row.subject,
                "link": access.url(token),
            },
            game=game,
            thread=thread,
            reply_to=reply_to,
        )
        queueing.queue_once([email], urgent=True)


def track(event: Any, esp: str, *, now: datetime) -> OutboundEmail | None:
    row, newly_failing = webhooks.record_delivery(event, esp, now)
    if row is not None and newly_failing and row.game_id is not None:
        mark_failing(row, now=now)
    return row


def mark_failing(row: OutboundEmail, *, now: datetime) -> None:
    """The address of ``row`` bounced, complained or was rejected: every seat of that game
    with the address is marked, and the GM hears of it once per seat."""
    if row.game_id is None:
        return
    with transaction.atomic():
        game = Game.objects.select_related("gm").get(pk=row.game_id)
        reason = f"{row.delivery}: {row.delivery_detail}".rstrip(": ")
        seats = postal.mark_email_failing(game.pk, row.to, reason, now=now)
        if not game.gm.email:
            return
        queueing.queue_once(
            [
                building.build(
                    "failing",
                    to=game.gm.email,
                    dedupe_key=f"failing:{seat.pk}:{row.pk}",
                    context={"game": game, "seat": seat, "email": row, "reason": reason},
                    game=game,
                )
                for seat in seats
            ]
        )
