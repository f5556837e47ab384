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
import re
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext_lazy

from games import postal
from games.community import press
from games.engines import registry
from games.engines.base import OrderError, order_lines
from games.models import Game, Order, Seat
from games.notify import commands, email_choices
from games.postal import access, conditionals
from moderator.mail import building, inbound, queueing, reading, webhooks
from moderator.mail.models import InboundMessage, OutboundEmail

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

log = logging.getLogger(__name__)

Inbound = InboundMessage.State
Held = InboundMessage.Reason


def on_inbound(
    sender: Any, event: Any, esp_name: str, kept: InboundMessage | None = None, **kwargs: Any
) -> None:
    """An email a mail worker read from a kept post (``moderator.mail.inbound``), ``kept``
    the row the post was kept in."""
    message = getattr(event, "message", None)
    if message is None:
        # Nothing was sent to us: Mailtrap's "Test your integration" post (anymail signals
        # no event for it), a Resend notification that names no email.
        return
    receive(message, esp_name, now=timezone.now(), kept=kept, verdict=provider_verdict(event))


def on_recipient(sender: Any, addresses: list[str], **kwargs: Any) -> Seat | None:
    """The seat one of ``addresses`` (found in a post, unread) is an address of: its
    stop, message or order address; the webhook keeps only a post that names one."""
    stop = access.stop_for_address(addresses)
    if stop is not None:
        return stop[0]
    answering = access.press_for_reply(addresses)
    if answering is not None:
        return answering[0]
    return access.seat_for_reply(addresses)


# What the seat is told of an email the worker could not read within its bounds; the
# email (kind ``refused``, ``unread``) then says how to send the order instead.
BOUNDS: dict[str, StrOrPromise] = {
    inbound.Reason.TOO_LARGE: gettext_lazy(
        "it is larger than this service takes, so it was not read and nothing was recorded"
    ),
    inbound.Reason.TOO_MANY_PARTS: gettext_lazy(
        "it is made of more parts (attachments, embedded images, alternatives) than this "
        "service reads, so nothing was recorded"
    ),
    inbound.Reason.TOO_DEEP: gettext_lazy(
        "its parts are nested deeper than this service reads (a message forwarded within "
        "messages), so nothing was recorded"
    ),
    inbound.Reason.UNREADABLE: gettext_lazy("it could not be read, so nothing was recorded"),
}


def on_refused(sender: Any, row: InboundMessage, reason: str, **kwargs: Any) -> None:
    """An email the worker refused unread: its seat (the address it was sent to) is told
    why, and the GM sees it with the reason; without a seat nobody can be told."""
    explained = BOUNDS[reason]
    seat = None
    if row.seat_id is not None:
        seat = Seat.objects.select_related("game").filter(pk=row.seat_id).first()
    row.reason = reason
    row.save(update_fields=["reason"])
    if seat is None:
        return _done(row, Inbound.IGNORED, f"not read: {reason}, and no seat to tell")
    with translation.override(seat.speaks):
        _answer(seat, row, "", explained, unread=True)
    _done(row, Inbound.REJECTED, f"not read: {reason}")


def on_tracking(sender: Any, event: Any, esp_name: str, **kwargs: Any) -> None:
    track(event, esp_name, now=timezone.now())


def receive(
    message: Any,
    esp: str,
    *,
    now: datetime,
    kept: InboundMessage | None = None,
    verdict: str | None = None,
) -> InboundMessage | None:
    """Keep ``message`` and act on it, once: None if it was handled before. A message whose
    handling failed stays "received", and the sweep has a worker read it again.
    ``verdict``: why the ESP's spam or authentication check failed it, if it did."""
    row = webhooks.keep_inbound(message, esp, now, kept)
    with transaction.atomic():
        row = InboundMessage.objects.select_for_update().get(pk=row.pk)
        if row.state != Inbound.RECEIVED:
            return None
        handle(row, message, now=now, verdict=verdict)
    return row


def _done(row: InboundMessage, state: str, note: str, order: Order | None = None) -> None:
    row.state, row.note, row.order = state, note[:2000], order
    row.save(update_fields=["state", "note", "order"])


def _seated(row: InboundMessage, seat: Seat, words: str, answered: int | None = None) -> None:
    """Record on ``row`` the seat it was sent to (its GM sees it), the reply's own words
    and the message it answers."""
    row.seat, row.game_id, row.words, row.answered = seat, seat.game_id, words, answered
    row.save(update_fields=["seat", "game", "words", "answered"])


def handle(row: InboundMessage, message: Any, *, now: datetime, verdict: str | None = None) -> None:
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
        _seated(row, seat, text)
        _answer(seat, row, text, BOTH)
        return _done(row, Inbound.REJECTED, "sent to an order address and a message address")
    if seat is None and answering is None:
        if _to_commands_address(recipients):
            return _bare_command(row, message, now=now, verdict=verdict)
        return _done(row, Inbound.IGNORED, "no valid reply address among the recipients")
    seat_of = answering[0] if answering is not None else seat
    assert seat_of is not None
    text = reading.reply_text(message)
    _seated(row, seat_of, text, answering[1] if answering is not None else None)
    held = _held_because(seat_of, row, verdict)
    if held is not None:
        return _hold(seat_of, row, *held)
    if answering is not None:
        return _message(row, message, *answering, now=now)
    assert seat is not None
    if _empty(text):
        _answer(seat, row, text, NOT_FOUND)
        return _done(row, Inbound.REJECTED, "no order in the reply")
    command = commands.command_in(text)
    if command is not None:
        return _command(row, seat, command, now=now)
    dropped = ", ".join(reading.attachment_names(message))[:2000]
    if _conditional_words(seat, text):
        return _conditional(row, seat, text, now=now, dropped=dropped)
    return _order(row, seat, text, now=now, dropped=dropped)


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _conditional_words(seat: Seat, text: str) -> bool:
    """Whether the reply may be a conditional order (docs/orders.md), in a game that has
    them: its first line starts with "if", or the seat's turn it is not."""
    if seat.game.engine not in registry.CONDITIONS:
        return False
    if _first_line(text).lower().startswith("if "):
        return True
    step = seat.game.steps.filter(number=seat.game.step_number, status="open").first()
    return step is not None and seat.position not in step.prompted_seats


def _conditional(
    row: InboundMessage, seat: Seat, text: str, *, now: datetime, dropped: str = ""
) -> None:
    """A conditional order by email: kept, and the player told so; or refused with why. A
    reply that is no conditional order and does not say "if" is taken as an order (which
    says whose turn it is)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    # Its lines: the condition, and an "else" line after it; a sign-off is no part of it.
    otherwise = len(lines) > 1 and lines[1].lower().startswith(("else", "otherwise"))
    try:
        kept = conditionals.leave(
            game_id=seat.game_id,
            position=seat.position,
            text="\n".join(lines[:2] if otherwise else lines[:1]),
            source="email",
            now=now,
        )
    except conditionals.ConditionalRejected as error:
        if not _first_line(text).lower().startswith("if "):
            return _order(row, seat, text, now=now, dropped=dropped)
        _answer(seat, row, text, error.message)
        return _done(row, Inbound.REJECTED, error.message)
    email = commands.answer(seat, "conditional", key=f"conditional:{row.pk}", now=now, kept=kept)
    queueing.queue_once([email], urgent=True)
    return _done(row, Inbound.COMMAND, f"conditional order {kept.pk} of {seat}")


def _to_commands_address(recipients: list[str]) -> bool:
    address = settings.INBOUND_ADDRESS.lower()
    return bool(address) and any(found.lower() == address for found in recipients)


def _bare_command(row: InboundMessage, message: Any, *, now: datetime, verdict: str | None) -> None:
    """An email to the commands address itself: answered at the sender's address, about
    its own seats only, when it holds a seat in a game not over (any other sender gets no
    answer: no mail to strangers); a text that is no command is answered with ``help``."""
    seats = list(
        Seat.objects.filter(email__iexact=row.sender.strip())
        .exclude(game__status=Game.Status.FINISHED)
        .select_related("game")
        .order_by("-game__started_at", "-pk")
    )
    if not row.sender or not seats:
        return _done(row, Inbound.IGNORED, "to the commands address from no player: no answer")
    if verdict is not None:
        return _done(row, Inbound.IGNORED, f"to the commands address, failed: {verdict}")
    text = reading.reply_text(message)
    _seated(row, seats[0], text)
    return _command(row, seats[0], commands.command_in(text) or "help", now=now)


def _command(row: InboundMessage, seat: Seat, command: str, *, now: datetime) -> None:
    """A command by email (``commands``): answered at the seat's address, no order; over
    the address's limit, not answered."""
    if commands.over_limit(seat):
        return _done(row, Inbound.IGNORED, f"the command {command!r}: over the limit, no answer")
    email = commands.answer(seat, command, key=f"command:{row.pk}", now=now)
    queueing.queue_once([email], urgent=True)
    return _done(row, Inbound.COMMAND, f"the command {command!r}: answered")


def _order(row: InboundMessage, seat: Seat, text: str, *, now: datetime, dropped: str = "") -> None:
    """``text``, emailed by ``seat``'s player, taken as its order; refused with the game's
    reason, and a reply in which the game reads no order line at all passed to the GM."""
    try:
        order = postal.accept_order(
            game_id=seat.game_id,
            position=seat.position,
            text=text,
            source="email",
            now=now,
            dropped=dropped,
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
                    dropped=dropped,
                )
            except postal.PostalError:
                pass  # the order without its sign-off is refused too: the first answer holds
            else:
                note = f"order {order.pk} of {seat}, its sign-off left out"
                return _done(row, Inbound.ORDER, note, order)
        if not partly and isinstance(error, postal.OrderRejected) and _no_order_line(seat, text):
            _to_gm(seat, row, text)
            _answer(seat, row, text, error.message, kind="note-passed")
            return _done(row, Inbound.NOTE, f"no order: passed to the GM ({error.message})")
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
    unread: bool = False,
    kind: str | None = None,
) -> None:
    """Tell the seat (at its own address, never the From of the email) why its emailed
    order was refused, quoting what it wrote, in the seat's language; ``partly_played``:
    its first lines stand; ``unread``: the email was refused unread (``reason`` says why),
    so sending it again as plain text is the answer. ``answered``: the email was a reply
    to that message, and was not sent; a reply to the answer is a reply to the same
    message. ``kind`` "note-passed": no order, the words went to the GM (``reason`` is
    why the game read no order, should it have been one)."""
    game = seat.game
    kind = kind or ("refused" if answered is None else "press-refused")
    text, left_out = quoted(text)
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
                "unread": unread,
                "lines": lines,
                "left_out": left_out,
                "subject": row.subject,
                "link": access.url(token),
            },
            game=game,
            thread=thread,
            reply_to=reply_to,
        )
        queueing.queue_once([email], urgent=True)


def quoted(text: str) -> tuple[str, int]:
    """``text`` cut to at most INBOUND_QUOTE_BYTES of UTF-8 (at a line's end where one is
    near), and how many characters were left out: a refusal quotes a few kilobytes of a
    reply, never all of a long one."""
    most = settings.INBOUND_QUOTE_BYTES
    if len(text.encode()) <= most:
        return text, 0
    cut = text.encode()[:most].decode("utf-8", "ignore")
    if "\n" in cut[most // 2 :]:
        cut = cut[: cut.rindex("\n")]
    return cut, len(text) - len(cut)


# --- who wrote it (issue 39, section 4) ---------------------------------------------------


def provider_verdict(event: Any) -> str | None:
    """Why the ESP's spam or sender-authentication check failed the email, where anymail
    reports it (``spam_detected``; Amazon SES's SPF, DKIM and DMARC verdicts) or the
    receiving server wrote it (the first ``Authentication-Results`` or ``Received-SPF``);
    None when none failed. Only a failure counts: a "pass" anyone could have written."""
    message = getattr(event, "message", None)
    if message is None:
        return None
    if getattr(message, "spam_detected", None) is True:
        return "the mail provider marked it as spam"
    esp_event = getattr(event, "esp_event", None)
    receipt = esp_event.get("receipt") if isinstance(esp_event, dict) else None
    if isinstance(receipt, dict):
        for name in ("spamVerdict", "virusVerdict", "spfVerdict", "dkimVerdict", "dmarcVerdict"):
            verdict = receipt.get(name)
            status = str(verdict.get("status", "")) if isinstance(verdict, dict) else ""
            if status.upper() == "FAIL":
                return f"the mail provider's {name.removesuffix('Verdict').upper()} check failed"
    results = " ".join(str(message.get("Authentication-Results", "")).lower().split())
    for check in ("dmarc", "spf"):
        if f"{check}=fail" in results:
            return f"the receiving server's {check.upper()} check failed"
    if str(message.get("Received-SPF", "")).strip().lower().startswith("fail"):
        return "the receiving server's SPF check failed"
    return None


def _held_because(seat: Seat, row: InboundMessage, verdict: str | None) -> tuple[str, str] | None:
    """Why an email to ``seat``'s address is held for the GM (the reason, and its detail
    for the GM), or None: it did not come from the seat's address, or the provider's
    check failed it."""
    if email_choices.normalise(row.sender) != email_choices.normalise(seat.email):
        return Held.SENDER, f"sent from {row.sender or 'no address'}, not the seat's address"
    if verdict is not None:
        return Held.VERDICT, verdict
    return None


def _hold(seat: Seat, row: InboundMessage, reason: str, why: str) -> None:
    """Hold ``row`` for the GM (who releases it as the seat's or discards it), with the
    reason and who holds the seat now, and tell the seat's player, at the seat's own
    address, that an email was held and why."""
    game = seat.game
    with translation.override(seat.speaks):
        token = access.mint([seat], now=row.received_at)[seat.position]
        email = building.build(
            "held",
            to=seat.email,
            dedupe_key=f"held:{row.pk}",
            context={
                "game": game,
                "seat": seat,
                "sender": row.sender,
                "subject": row.subject,
                "forged": reason == Held.VERDICT,
                "link": access.url(token),
            },
            game=game,
            thread=f"game-{game.pk}-seat-{seat.position}",
            reply_to=access.reply_address(seat) or game.gm.email or None,
        )
        queueing.queue_once([email], urgent=True)
    row.reason, row.tenure = reason, seat.tenure
    row.save(update_fields=["reason", "tenure"])
    _done(row, Inbound.HELD, why)


# A line of prose: at least this many words of letters ("I am away next week").
PROSE_WORDS = 4
_WORD = re.compile(r"[^\W\d_]{2,}")


def _no_order_line(seat: Seat, text: str) -> bool:
    """Whether ``text`` is a note, not a mistyped order: it holds a line of prose (at
    least PROSE_WORDS words of letters) and the game reads no line of it as an order on
    its own."""
    if not any(len(_WORD.findall(line)) >= PROSE_WORDS for line in text.splitlines()):
        return False
    game = Game.objects.get(pk=seat.game_id)
    if game.state is None:
        return False
    engine = game.rules
    state = engine.state_from_json(game.state)
    for line in text.strip().splitlines():
        if not line.strip():
            continue
        try:
            engine.parse(state, seat.position, line)
        except OrderError:
            continue
        return False
    return True


def _to_gm(seat: Seat, row: InboundMessage, text: str) -> None:
    """Pass a player's emailed note (no order) to the GM, by email."""
    game = Game.objects.select_related("gm").get(pk=seat.game_id)
    if not game.gm.email:
        return
    words, left_out = quoted(text)
    queueing.queue_once(
        [
            building.build(
                "gm-note",
                to=game.gm.email,
                dedupe_key=f"gm-note:{row.pk}",
                context={
                    "game": game,
                    "seat": seat,
                    "subject": row.subject,
                    "lines": words.splitlines(),
                    "left_out": left_out,
                    "link": f"{settings.SITE_URL}/gm/{game.pk}/inbound/",
                },
                game=game,
                reply_to=seat.email,
            )
        ]
    )


class NotHeld(Exception):
    """The email is not held (any more): released or discarded already."""


class ChangedHands(Exception):
    """The email's seat has a new player since it was held: it is not theirs to release.
    ``name``: who plays the seat now."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def release(row_id: int, game_id: int, *, now: datetime) -> InboundMessage:
    """The GM takes a held email as its seat's: an order (as if the player had emailed
    it), a command by email (answered at the seat's address) or, sent to a message's
    address, a message. Refused as the player's would be
    (the game's reason, ``postal.PostalError`` or ``press.PressError``), changing
    nothing; NotHeld when it was released or discarded meanwhile; ChangedHands when the
    seat has had a new player since it was held (it was written to the one before)."""
    with transaction.atomic():
        row = (
            InboundMessage.objects.select_for_update()
            .filter(pk=row_id, game_id=game_id, state=Inbound.HELD)
            .first()
        )
        if row is None or row.seat_id is None:
            raise NotHeld
        seat = Seat.objects.select_related("game").get(pk=row.seat_id)
        if row.tenure is not None and row.tenure != seat.tenure:
            raise ChangedHands(seat.name)
        if row.answered is not None:
            with translation.override(seat.speaks):
                sent = press.reply(seat, row.answered, row.words, now=now)
            _done(row, Inbound.MESSAGE, f"released by the GM: message {sent.pk} of {seat}")
            return row
        command = commands.command_in(row.words)
        if command is not None:
            # A command (``commands``): answered at the seat's own address, as the
            # player's would have been.
            _command(row, seat, command, now=now)
            return row
        order = postal.accept_order(
            game_id=seat.game_id, position=seat.position, text=row.words, source="email", now=now
        )
        _done(row, Inbound.ORDER, f"released by the GM: order {order.pk} of {seat}", order)
        return row


def discard(row_id: int, game_id: int) -> InboundMessage:
    """The GM discards a held email: nothing of it is taken."""
    with transaction.atomic():
        row = (
            InboundMessage.objects.select_for_update()
            .filter(pk=row_id, game_id=game_id, state=Inbound.HELD)
            .first()
        )
        if row is None:
            raise NotHeld
        _done(row, Inbound.DISCARDED, f"discarded by the GM; {row.note}")
        return row


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
