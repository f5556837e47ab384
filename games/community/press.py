"""Messages between players, "press" in the words of postal Diplomacy (docs/players.md,
"Messages").

A seat writes to every seat (a public message) or to one (a private message, unless the
GM turned private messages off for the game); the GM writes announcements to every seat.
Messages are written on the seat's page or by replying to a message's email: its reply
address is the message's own press address (``access.press_address``), never the order
address, so a reply to a message is a message and a reply to a report an order
(``games.notify.replies``). Each recipient is emailed as their seat chose (``Seat.press_email``:
each message, in the daily digest, or never); the GM's announcements always come.

The GM reads every message of the game, private ones too (the players are told), and may
hide one: it is then shown to nobody but the GM, its emails still waiting are dropped,
and no digest tells of it. Hiding is a GM action in the GM's log.

A message is neither an order nor an event: it changes no game state, so nothing here
locks a game but hiding (a GM action, logged at the game's step), and spectators, the
replay, the zine, webhooks and the game's record never see a message.

What press changes on a seat or its game (a seat's email choice and digest mark, whether
the game allows private messages) is written by ``games.postal.press_actions``.
"""

from __future__ import annotations

import textwrap
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, Q
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from games.engines import text as engine_text
from games.lib import schedule
from games.models import MESSAGE_LENGTH, Game, GMAction, Message, PressEmail, Seat
from games.postal import access, errors, gm_log, press_actions
from moderator import bidi, ratelimit
from moderator.mail import building, queueing
from moderator.mail.models import OutboundEmail

# A seat's page shows its latest messages; the messages page and the GM's show more.
SEAT_PAGE_MESSAGES = 10
PAGE_MESSAGES = 100
# Messages are written while the game runs or is paused; once it is over they stay
# readable and no new one is taken.
OPEN = (Game.Status.RUNNING, Game.Status.PAUSED)

# Characters that break a line, read as one line break (as ``str.splitlines`` does), and
# the bidirectional embeddings, overrides and isolates, which could make a message read
# other than it is written: dropped with the other control characters.
_BREAKS = frozenset("\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


class PressError(Exception):
    """A message not sent, or a GM's action on one not done; ``message`` says why, for the
    person who tried, and nothing was changed."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Limited(PressError):
    """Over a rate limit (``RATES["press-seat"]``, ``RATES["press-game"]``): nothing sent."""


def clean_text(text: str) -> str:
    """``text`` as a message keeps it: line breaks made one kind, control characters
    dropped, trailing spaces and blank lines at either end cut. PressError when it holds a
    bidirectional embedding, override or isolate (``moderator.bidi``), when nothing is
    left, or when it is longer than MESSAGE_LENGTH."""
    if (refused := bidi.refusal(text, _("The message"))) is not None:
        raise PressError(refused)
    kept = []
    for char in text.replace("\r\n", "\n"):
        if char in _BREAKS:
            kept.append("\n")
        elif char in "\n\t" or unicodedata.category(char) != "Cc":
            kept.append(char)
    cleaned = "\n".join(line.rstrip() for line in "".join(kept).split("\n")).strip("\n")
    if not cleaned.strip():
        raise PressError(_("The message is empty: write something to send."))
    if len(cleaned) > MESSAGE_LENGTH:
        raise PressError(
            _("A message has at most %(most)d characters; this one has %(count)d.")
            % {"most": MESSAGE_LENGTH, "count": len(cleaned)}
        )
    return cleaned


# An email's lines are kept short: a text or HTML part with a line longer than 998
# characters (RFC 5322) is sent quoted-printable, and a message may be 2,000 characters
# without a line break.
EMAIL_WIDTH = 76


def email_lines(text: str) -> list[list[str]]:
    """Each line of ``text`` as the pieces an email writes it in, wrapped at the spaces
    (a word longer than the width, a web address, stays whole); [""] for a blank line."""
    return [
        textwrap.wrap(line, EMAIL_WIDTH, break_long_words=False, break_on_hyphens=False) or [""]
        for line in text.splitlines()
    ]


def limits_in_words() -> str:
    """The rate limits, as a player reads them."""
    rates: dict[str, str] = settings.RATES
    return _("each player may send %(seat)s messages an hour, and a game %(game)s in all") % {
        "seat": rates["press-seat"].partition("/")[0],
        "game": rates["press-game"].partition("/")[0],
    }


# What a seat's choice means, in an email's footer: "You get the other players' messages
# by email: ...".
YOU_GET = {
    PressEmail.EACH: gettext_lazy("each one as it comes"),
    PressEmail.DIGEST: gettext_lazy("in your daily digest"),
    PressEmail.NONE: gettext_lazy("never, you read them on your page"),
}


# --- writing --------------------------------------------------------------------------------


def send(
    *,
    game_id: int,
    position: int | None,
    to: int | None,
    text: str,
    source: str,
    now: datetime,
    answers: Message | None = None,
) -> Message:
    """Send a message in game ``game_id`` from the seat at ``position`` (None: the GM's
    announcement) to the seat at ``to`` (None: every seat), and write its emails in the
    same transaction. A seat's message counts in its rate limits once it is known to be
    one that may be sent. PressError, and nothing written, otherwise."""
    text = clean_text(text)
    with transaction.atomic():
        game = Game.objects.select_related("gm").defer("state", "seed").get(pk=game_id)
        if game.status not in OPEN:
            raise PressError(_closed(game))
        seats = list(game.seats.order_by("position"))
        by_position = {seat.position: seat for seat in seats}
        sender = None if position is None else by_position.get(position)
        if position is not None and sender is None:
            raise PressError(_("There is no such seat in this game."))
        recipient = None
        if to is not None:
            if sender is None:
                raise PressError(_("The GM's announcements go to every player."))
            if not game.private_press:
                raise PressError(
                    _(
                        "Private messages are off in this game (the GM's choice): write to "
                        "everyone instead."
                    )
                )
            recipient = by_position.get(to)
            if recipient is None or recipient == sender:
                raise PressError(_("There is no such player to write to in this game."))
        if sender is not None and ratelimit.press_rate_limited(sender.pk, game.pk):
            raise Limited(
                _("Too many messages: %(limits)s. Nothing was sent; try again later.")
                % {"limits": limits_in_words()}
            )
        message = Message.objects.create(
            game=game,
            step_number=game.step_number,
            sender=sender,
            sender_tenure=0 if sender is None else sender.tenure,
            sender_name="" if sender is None else sender.name,
            recipient=recipient,
            recipient_tenure=0 if recipient is None else recipient.tenure,
            recipient_name="" if recipient is None else recipient.name,
            text=text,
            sent_at=now,
            source=source,
            answers=answers,
        )
        _queue_emails(game, seats, message, now)
    return message


def _closed(game: Game) -> str:
    if game.status in (Game.Status.FINISHED, Game.Status.ABANDONED):
        return _(
            "The game is over, so messages are closed: nothing was sent. Everything said "
            "stays readable on your page."
        )
    return _("The game has not started yet: messages open when it does. Nothing was sent.")


def reply(seat: Seat, message_id: int, text: str, *, now: datetime) -> Message:
    """An emailed reply of ``seat`` to message ``message_id`` (its press address): a reply
    to a private message goes privately to the other of the two seats; a reply to a
    public message or an announcement goes to every seat, as a public message.

    A private message is its two players': only the seat's player it was written by or to
    may answer it, and the answer goes to the other of them only while they hold their
    seat (its new player was never written to)."""
    answered = (
        Message.objects.filter(pk=message_id, game_id=seat.game_id)
        .select_related("sender", "recipient")
        .first()
    )
    if answered is None or not _readable(answered, seat):
        raise PressError(_("The message this email answers is not in the game."))
    to = None
    if answered.recipient is not None and answered.sender is not None:
        mine = answered.sender.pk == seat.pk and answered.sender_tenure == seat.tenure
        other, then, name = (
            (answered.recipient, answered.recipient_tenure, answered.recipient_name)
            if mine
            else (answered.sender, answered.sender_tenure, answered.sender_name)
        )
        if other.tenure != then:
            raise PressError(
                _(
                    "%(name)s has left the game, so nothing was sent: %(other)s plays that "
                    "seat now. Write to them from your page."
                )
                % {"name": name or other.name, "other": other.name}
            )
        to = other.position
    return send(
        game_id=seat.game_id,
        position=seat.position,
        to=to,
        text=text,
        source=Message.Source.EMAIL,
        now=now,
        answers=answered,
    )


# --- email ------------------------------------------------------------------------------------


def _readable(message: Message, seat: Seat) -> bool:
    """Whether the player who holds ``seat`` now may read ``message`` (``seen_by``)."""
    if message.recipient_id is None:
        return True
    return (message.recipient_id == seat.pk and message.recipient_tenure == seat.tenure) or (
        message.sender_id == seat.pk and message.sender_tenure == seat.tenure
    )


def emailed_at_once(seat: Seat, message: Message) -> bool:
    """Whether ``message`` is emailed to ``seat`` as it is sent: a recipient other than its
    sender who chose each message, or any recipient of the GM's announcement."""
    if seat.pk == message.sender_id:
        return False
    if message.recipient_id is not None and seat.pk != message.recipient_id:
        return False
    return message.sender_id is None or seat.press_email == PressEmail.EACH


def _queue_emails(game: Game, seats: list[Seat], message: Message, now: datetime) -> None:
    told = [seat for seat in seats if emailed_at_once(seat, message)]
    if not told:
        return
    tokens = access.mint(told, now=now)
    queueing.queue_once([email(game, seat, message, tokens[seat.position]) for seat in told])


def email_key(message: Message, seat: Seat) -> str:
    return f"press:{message.pk}:{seat.position}"


def email(game: Game, seat: Seat, message: Message, token: str) -> OutboundEmail:
    """The email of ``message`` to ``seat``: the message as plain text, who wrote it to
    whom, and where a reply goes (its press address: to the sender alone when it was
    private, else to everyone; without INBOUND_ADDRESS, to the GM, and the email says
    so). It is in the seat's language, whatever the sender's."""
    shown = _shown(message, viewer=seat, text=message.text, hidden=False)
    press_address = access.press_address(seat, message.pk)
    headers = access.stop_headers(seat, "press") if message.sender_id is not None else None
    with translation.override(seat.speaks):
        return building.build(
            "press",
            to=seat.email,
            dedupe_key=email_key(message, seat),
            context={
                "game": game,
                "seat": seat,
                "message": shown,
                "step": message.step_number,
                "sent": schedule.local_time(message.sent_at, seat.zone),
                "link": access.url(token),
                "reply_by_email": press_address is not None,
                "stop_url": access.stop_url(seat, "press") if headers else "",
                "you_get": YOU_GET[PressEmail(seat.press_email)],
            },
            game=game,
            thread=f"game-{game.pk}-seat-{seat.position}-press",
            reply_to=press_address or game.gm.email or None,
            headers=headers,
        )


# --- reading ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shown:
    """A message as one reader may see it: the text is "" when the GM hid it from players
    (``hidden``), and every name is the reader's word for it (None: the GM, or everyone)."""

    pk: int
    step: int
    sent_at: datetime
    sender: str | None  # a seat's name; None: the GM
    recipient: str | None  # a seat's name; None: every seat
    text: str
    hidden: bool
    hidden_reason: str
    source: str
    mine: bool  # written by the reader's seat
    to_me: bool  # written privately to the reader's seat
    sender_position: int | None = None  # the writing seat's position: its colour

    @property
    def private(self) -> bool:
        return self.recipient is not None

    @property
    def lines(self) -> list[list[str]]:
        """The text for an email: each of its lines wrapped (``email_lines``)."""
        return email_lines(self.text)

    @property
    def announcement(self) -> bool:
        return self.sender is None

    @property
    def heading(self) -> str:
        """Who wrote to whom, in the reader's words: "ann to everyone", "you to bob
        (private)", "the GM to everyone"."""
        if self.sender is None:
            return _("The GM to everyone (announcement)")
        sender = _("You") if self.mine else self.sender
        if self.recipient is None:
            return _("%(sender)s to everyone") % {"sender": sender}
        recipient = _("you") if self.to_me else self.recipient
        return _("%(sender)s to %(recipient)s (private)") % {
            "sender": sender,
            "recipient": recipient,
        }


@dataclass(frozen=True)
class Page:
    """Messages as a page lists them, oldest first: ``older`` is the id to read older ones
    before (None: none are older), ``total`` how many the reader may see in all, and
    ``paged`` whether this is an older page."""

    messages: list[Shown]
    total: int
    older: int | None
    paged: bool = False


def seen_by(seat: Seat) -> Q:
    """The messages the player who holds ``seat`` now may read: every public message and
    announcement (those of the seat's earlier players too), and the private ones written
    by or to the seat while they held it (``Seat.tenure``)."""
    return (
        Q(recipient__isnull=True)
        | Q(recipient_id=seat.pk, recipient_tenure=seat.tenure)
        | Q(sender_id=seat.pk, sender_tenure=seat.tenure)
    )


def seen_by_sql(seat: Seat) -> tuple[str, list[int]]:
    """``seen_by`` as SQL on ``games_message m``: a clause to add with AND (it begins with
    one), and its parameters."""
    return _SEEN, [seat.pk, seat.tenure, seat.pk, seat.tenure]


def for_seat(
    seat: Seat, names: Mapping[int, str], *, limit: int, before: int | None = None
) -> Page:
    """The latest ``limit`` messages the player who holds ``seat`` may see (older than
    message ``before``), in one statement; a hidden message's text is not even read."""
    return _page(seat.game_id, seat, names, limit, before)


def for_gm(game: Game, names: Mapping[int, str], *, limit: int, before: int | None = None) -> Page:
    """Every message of the game, hidden ones with their text, as the GM reads them."""
    return _page(game.pk, None, names, limit, before)


# A page of messages in one statement, with how many there are in all (a window over the
# rows the page is taken from): the seat page reads it on every view, and the ORM took
# longer to build its window and CASE than the rest of the page's queries took to run.
# ``seen_by`` as SQL for a seat's page; for a seat, a hidden message's text is not read.
# A seat whose player has changed since (its tenure moved on) is named as it was then.
_PAGE = (
    "SELECT m.id, m.step_number, m.sent_at, m.sender_id, m.recipient_id, {text},"
    " m.hidden_at IS NOT NULL, m.hidden_reason, m.source,"
    " CASE WHEN s.tenure = m.sender_tenure THEN NULL ELSE m.sender_name END,"
    " CASE WHEN r.tenure = m.recipient_tenure THEN NULL ELSE m.recipient_name END,"
    " m.sender_tenure, m.recipient_tenure, s.position, COUNT(*) OVER () FROM games_message m"
    " LEFT JOIN games_seat s ON s.id = m.sender_id"
    " LEFT JOIN games_seat r ON r.id = m.recipient_id"
    " WHERE m.game_id = %s{seen}{before} ORDER BY m.id DESC LIMIT %s"
)
_SEEN = (
    " AND (m.recipient_id IS NULL OR (m.recipient_id = %s AND m.recipient_tenure = %s)"
    " OR (m.sender_id = %s AND m.sender_tenure = %s))"
)
_SEEN_TEXT = "CASE WHEN m.hidden_at IS NULL THEN m.text ELSE '' END"


def _page(
    game_id: int, viewer: Seat | None, names: Mapping[int, str], limit: int, before: int | None
) -> Page:
    sql = _PAGE.format(
        text="m.text" if viewer is None else _SEEN_TEXT,
        seen="" if viewer is None else _SEEN,
        before="" if before is None else " AND m.id < %s",
    )
    params = [game_id]
    if viewer is not None:
        params += seen_by_sql(viewer)[1]
    if before is not None:
        params.append(before)
    params.append(limit)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        found = cursor.fetchall()
    total = found[0][-1] if found else 0
    shown = [
        Shown(
            pk=row[0],
            step=row[1],
            sent_at=_instant(row[2]),
            sender=None if row[3] is None else row[9] or names.get(row[3], "?"),
            recipient=None if row[4] is None else row[10] or names.get(row[4], "?"),
            text=row[5],
            hidden=bool(row[6]),
            hidden_reason=row[7],
            source=row[8],
            mine=viewer is not None and (row[3], row[11]) == (viewer.pk, viewer.tenure),
            to_me=viewer is not None and (row[4], row[12]) == (viewer.pk, viewer.tenure),
            sender_position=row[13],
        )
        for row in reversed(found)
    ]
    older = shown[0].pk if total > len(shown) else None
    return Page(shown, total, older, paged=before is not None)


def _instant(value: datetime | str) -> datetime:
    """A moment as the database hands it back: SQLite's is text, in UTC."""
    if isinstance(value, datetime):
        return value
    return datetime.fromisoformat(value).replace(tzinfo=UTC)


def _named(seat: Seat | None, tenure: int, name: str) -> str | None:
    """The name of a message's seat (None: the GM, or everyone): its player's now, or, if
    it has changed hands since, the name of the player who held it then."""
    if seat is None:
        return None
    return seat.name if seat.tenure == tenure else name or seat.name


def _shown(message: Message, *, viewer: Seat, text: str, hidden: bool) -> Shown:
    """``message`` as the player who holds ``viewer`` reads it (its seats are read)."""
    return Shown(
        pk=message.pk,
        step=message.step_number,
        sent_at=message.sent_at,
        sender=_named(message.sender, message.sender_tenure, message.sender_name),
        recipient=_named(message.recipient, message.recipient_tenure, message.recipient_name),
        text=text,
        hidden=hidden,
        hidden_reason=message.hidden_reason if hidden else "",
        source=message.source,
        mine=(message.sender_id, message.sender_tenure) == (viewer.pk, viewer.tenure),
        to_me=(message.recipient_id, message.recipient_tenure) == (viewer.pk, viewer.tenure),
        sender_position=message.sender.position if message.sender else None,
    )


def count(game: Game) -> tuple[int, int]:
    """(messages, of which hidden) of the game, for the GM's page: one query."""
    found = game.press_messages.aggregate(
        total=Count("id"), hidden=Count("id", filter=Q(hidden_at__isnull=False))
    )
    return found["total"], found["hidden"]


# --- the daily digest --------------------------------------------------------------------------


def for_digest(seat: Seat) -> tuple[list[Shown], int]:
    """What a seat that gets its messages in the daily digest has not been told of: the
    other players' messages it may read since its mark (``Seat.press_told``), not hidden,
    oldest first, and the latest of them (0: none), in one query. The GM's announcements
    came by email already."""
    rows = list(
        Message.objects.filter(seen_by(seat), game_id=seat.game_id, pk__gt=seat.press_told)
        .exclude(sender_id=seat.pk)
        .exclude(sender__isnull=True)
        .filter(hidden_at__isnull=True)
        .select_related("sender", "recipient")
        .order_by("id")
    )
    shown = [_shown(row, viewer=seat, text=row.text, hidden=False) for row in rows]
    return shown, max((row.pk for row in rows), default=0)


# --- the seat's choice ----------------------------------------------------------------------------


def choose_email(game_id: int, *, position: int, choice: str) -> Seat:
    """How the seat at ``position`` is emailed its game's messages (``PressEmail``). A seat
    that chooses the digest is marked told of every message so far: the digest starts
    from now, at its address's digest hour."""
    if choice not in PressEmail.values:
        raise PressError(_("That is not a choice of how to get messages by email."))
    with transaction.atomic():
        seat = (
            Seat.objects.select_for_update()
            .select_related("game")
            .get(game_id=game_id, position=position)
        )
        press_actions.choose_email(seat, choice)
    return seat


# --- the GM -------------------------------------------------------------------------------------


def hide(game_id: int, message_id: int, *, reason: str, by: int | None, now: datetime) -> Message:
    """The GM hides a message from the players: it is shown to the GM only, its emails not
    yet sent are dropped, and no digest tells of it. Logged in the GM's log with the
    reason, never the text; a hidden private message is named there without its sender
    or recipient, which the other players may not know. PressError, and nothing changed,
    otherwise."""
    with transaction.atomic():
        game = Game.objects.select_for_update().defer("state", "seed").get(pk=game_id)
        message = (
            Message.objects.select_for_update(of=("self",))
            .select_related("sender")
            .filter(game=game, pk=message_id)
            .first()
        )
        if message is None:
            raise PressError(_("There is no such message in this game."))
        if message.hidden_at is not None:
            raise PressError(_("This message is hidden already."))
        message.hidden_reason = _logged(
            game, GMAction.Kind.HIDE, _hidden_words(message), reason, by, now
        )
        message.hidden_at = now
        message.save(update_fields=["hidden_at", "hidden_reason"])
        OutboundEmail.objects.filter(
            dedupe_key__startswith=f"press:{message.pk}:", state=OutboundEmail.State.PENDING
        ).delete()
    return message


def _hidden_words(message: Message) -> engine_text.Text:
    # The GM's log is read by each player in their language (games.lib.words).
    if message.sender is None:
        return engine_text._("The GM hid one of their announcements")
    if message.recipient_id is not None:
        return engine_text._("The GM hid a private message")
    name = _named(message.sender, message.sender_tenure, message.sender_name)
    return engine_text._("The GM hid a message of %(name)s to everyone", name=name)


def set_private(game_id: int, *, allowed: bool, by: int | None, now: datetime) -> Game:
    """The GM turns private messages on or off for the game; in a game that has started,
    the GM's log says so. Messages already written stay as they are."""
    with transaction.atomic():
        game = Game.objects.select_for_update().defer("state", "seed").get(pk=game_id)
        if game.private_press == allowed:
            return game
        press_actions.allow_private(game, allowed)
        if game.started_at is not None:
            words = (
                engine_text._("The GM allowed private messages between players")
                if allowed
                else engine_text._("The GM turned private messages between players off")
            )
            _logged(game, GMAction.Kind.PRESS, words, "", by, now)
    return game


def _logged(game: Game, kind: str, words: str, reason: str, by: int | None, now: datetime) -> str:
    """Log a GM action (``postal.log_gm_action``); PressError for a reason the GM may not
    give. Returns the reason as logged."""
    try:
        return gm_log.log_gm_action(game, kind, words, reason=reason, by=by, now=now)
    except errors.PostalError as error:
        raise PressError(f"{error.message[:1].upper()}{error.message[1:]}.") from None
