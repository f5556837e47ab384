"""Who may see a seat: magic links minted for emails and looked up from a request, and
the seats a browser holds once it opened their links."""

from __future__ import annotations

import base64
import hmac
import re
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core import signing
from django.db.models import Subquery
from django.db.models.functions import Upper
from django.http import HttpRequest, HttpResponseBase
from django.utils.crypto import salted_hmac

from games.models import Message, Player, Seat, SeatLink
from moderator import links


def mint(seats: Iterable[Seat], *, now: datetime, purpose: str = "play") -> dict[int, str]:
    """A new link token for each seat of one game (one query); returns seat position ->
    token."""
    seats = list(seats)
    tokens = mint_each(seats, now=now, purpose=purpose)
    return {seat.position: token for seat, token in zip(seats, tokens, strict=True)}


def mint_each(seats: Sequence[Seat], *, now: datetime, purpose: str = "play") -> list[str]:
    """A new link token for each of ``seats``, of any games (one query), in their order."""
    tokens: list[str] = []
    rows = []
    expires = now + timedelta(days=settings.LINK_DAYS)
    for seat in seats:
        token = links.new_token()
        tokens.append(token)
        rows.append(
            SeatLink(
                seat=seat,
                token_hash=links.digest(token),
                purpose=purpose,
                link_version=seat.link_version,
                created_at=now,
                expires_at=expires,
            )
        )
    SeatLink.objects.bulk_create(rows)
    return tokens


def seat_for(token: str, *, now: datetime, purpose: str = "play") -> Seat | None:
    """The seat a token opens, or None for a token that is unknown, expired, rotated or
    minted for another purpose."""
    if not token or len(token) > 100:
        return None
    link = (
        SeatLink.objects.select_related("seat__game")
        .filter(token_hash=links.digest(token), purpose=purpose, expires_at__gt=now)
        .first()
    )
    if link is None or link.link_version != link.seat.link_version:
        return None
    return link.seat


def url(token: str) -> str:
    return f"{settings.SITE_URL}/p/{token}/"


# --- stable seat tokens: reply addresses and calendar feeds ------------------------------
# Unlike magic links these are not stored: the token names the game and the seat and
# carries an HMAC of them with the seat's link version, so it is the same in every email,
# and rotating the seat's link (or replacing its player) retires it. Lower case letters,
# digits and '-' only: email local parts and URLs keep them intact.

_SEAT_TOKEN = re.compile(r"(\d{1,12})-(\d{1,4})-([a-z2-7]{26})")


def _mac(purpose: str, *parts: object) -> str:
    value = ":".join(str(part) for part in parts)
    digest = salted_hmac(f"moderator.seat-token.{purpose}", value, algorithm="sha256").digest()
    return base64.b32encode(digest).decode().lower()[:26]


def seat_token(seat: Seat, purpose: str) -> str:
    mac = _mac(purpose, seat.game_id, seat.position, seat.link_version)
    return f"{seat.game_id}-{seat.position}-{mac}"


def seat_for_token(token: str, purpose: str) -> Seat | None:
    """The seat of a ``seat_token``; None if the token is malformed, unknown, of another
    purpose or retired by a rotation."""
    match = _SEAT_TOKEN.fullmatch(token.strip().lower())
    if match is None:
        return None
    game_id, position, mac = int(match[1]), int(match[2]), match[3]
    seat = Seat.objects.select_related("game").filter(game_id=game_id, position=position).first()
    if seat is None or not hmac.compare_digest(
        mac, _mac(purpose, game_id, position, seat.link_version)
    ):
        return None
    return seat


def reply_address(seat: Seat) -> str | None:
    """Where a reply to this seat's emails goes to become an order; None when orders by
    reply are not set up (INBOUND_ADDRESS)."""
    if not settings.INBOUND_ADDRESS:
        return None
    local, domain = settings.INBOUND_ADDRESS.split("@")
    return f"{local}+{seat_token(seat, 'reply')}@{domain}"


def seat_for_reply(recipients: Iterable[str]) -> Seat | None:
    """The seat whose reply address is among ``recipients`` (the envelope recipient and
    the To and Cc addresses of an inbound email); None if there is none."""
    if not settings.INBOUND_ADDRESS:
        return None
    local, domain = settings.INBOUND_ADDRESS.lower().split("@")
    for recipient in recipients:
        mailbox, _, at = recipient.strip().lower().rpartition("@")
        base, plus, token = mailbox.partition("+")
        if at == domain and base == local and plus:
            seat = seat_for_token(token, "reply")
            if seat is not None:
                return seat
    return None


# --- replies to a message between players (games.community.press) ---------------------------------
# Each message's email carries a reply address of its own, ``<local>+press-<token>@<domain>``:
# the token names the message and the seat it was emailed to, with an HMAC of them and the
# seat's link version (the game is the message's). It never reads as an order address
# (``seat_for_reply`` wants the bare seat token) and the order address never reads as one
# of these: a reply to a message is a message, a reply to a report is an order.

_PRESS_TOKEN = re.compile(r"press-(\d{1,12})-(\d{1,4})-([a-z2-7]{26})")


def press_token(seat: Seat, message_id: int) -> str:
    mac = _mac("press", message_id, seat.game_id, seat.position, seat.link_version)
    return f"press-{message_id}-{seat.position}-{mac}"


def press_address(seat: Seat, message_id: int) -> str | None:
    """Where a reply to message ``message_id``, as emailed to ``seat``, goes to become a
    message; None when replies by email are not set up (INBOUND_ADDRESS)."""
    if not settings.INBOUND_ADDRESS:
        return None
    local, domain = settings.INBOUND_ADDRESS.split("@")
    return f"{local}+{press_token(seat, message_id)}@{domain}"


def press_for_reply(recipients: Iterable[str]) -> tuple[Seat, int] | None:
    """(the seat, the message it answers) when one of ``recipients`` is a ``press_address``
    that still holds: a rotated link or a new player in the seat retires it."""
    if not settings.INBOUND_ADDRESS:
        return None
    local, domain = settings.INBOUND_ADDRESS.lower().split("@")
    for recipient in recipients:
        mailbox, _, at = recipient.strip().lower().rpartition("@")
        base, _, token = mailbox.partition("+")
        match = _PRESS_TOKEN.fullmatch(token)
        if at != domain or base != local or match is None:
            continue
        message_id, position = int(match[1]), int(match[2])
        game_id = Message.objects.filter(pk=message_id).values("game_id")[:1]
        seat = (
            Seat.objects.select_related("game")
            .filter(game_id=Subquery(game_id), position=position)
            .first()
        )
        if seat is not None and hmac.compare_digest(
            match[3], _mac("press", message_id, seat.game_id, position, seat.link_version)
        ):
            return seat, message_id
    return None


# --- unsubscribing in one click (RFC 8058) -------------------------------------------------
# A report, a reminder or a digest carries List-Unsubscribe: an address on the site that
# a mail provider posts to in one click, and a mailto: of the inbound address. The token
# is a stable seat token of its purpose, so a rotated link or a new player retires it.
# What it stops: this seat's reports ("reports"), the reports of every seat of the
# address ("all-reports", from the daily digest), the address's reminders ("reminders"),
# this seat's messages from other players ("press").
STOPS = ("reports", "all-reports", "reminders", "press")


def stop_token(seat: Seat, what: str) -> str:
    return seat_token(seat, f"stop-{what}")


def stop_url(seat: Seat, what: str) -> str:
    return f"{settings.SITE_URL}/email/stop/{what}/{stop_token(seat, what)}/"


def stop_address(seat: Seat, what: str) -> str | None:
    """The mailto: address that stops ``what`` for ``seat``; None without INBOUND_ADDRESS."""
    if not settings.INBOUND_ADDRESS:
        return None
    local, domain = settings.INBOUND_ADDRESS.split("@")
    return f"{local}+stop-{what}-{stop_token(seat, what)}@{domain}"


def stop_headers(seat: Seat, what: str) -> dict[str, str]:
    """The List-Unsubscribe headers of an email to ``seat`` that ``what`` stops."""
    links = [f"<{stop_url(seat, what)}>"]
    address = stop_address(seat, what)
    if address is not None:
        links.append(f"<mailto:{address}?subject=stop>")
    return {
        "List-Unsubscribe": ", ".join(links),
        "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
    }


def seat_to_stop(what: str, token: str) -> Seat | None:
    """The seat of a stop token for ``what``; None for anything else."""
    return seat_for_token(token, f"stop-{what}") if what in STOPS else None


def stop_for_address(recipients: Iterable[str]) -> tuple[Seat, str] | None:
    """(seat, what) when one of ``recipients`` is a mailto: of ``stop_headers``."""
    if not settings.INBOUND_ADDRESS:
        return None
    local, domain = settings.INBOUND_ADDRESS.lower().split("@")
    for recipient in recipients:
        mailbox, _, at = recipient.strip().lower().rpartition("@")
        base, _, token = mailbox.partition("+")
        if at != domain or base != local or not token.startswith("stop-"):
            continue
        for what in STOPS:
            if token.startswith(f"stop-{what}-"):
                seat = seat_to_stop(what, token.removeprefix(f"stop-{what}-"))
                if seat is not None:
                    return seat, what
    return None


def calendar_url(seat: Seat) -> str:
    return f"{settings.SITE_URL}/calendar/{seat_token(seat, 'calendar')}.ics"


def gm_calendar_token(user: Any) -> str:
    """The GM's feed of all their games; a new password retires it."""
    return f"{user.pk}-{_mac('gm-calendar', user.pk, user.password)}"


def gm_for_calendar_token(token: str) -> Any | None:
    from django.contrib.auth import get_user_model

    user_id, _, mac = token.strip().lower().partition("-")
    if not (user_id.isascii() and user_id.isdigit()) or len(user_id) > 12 or len(mac) != 26:
        return None
    user = get_user_model().objects.filter(pk=int(user_id), is_active=True).first()
    if user is None or not hmac.compare_digest(mac, _mac("gm-calendar", user.pk, user.password)):
        return None
    return user


def gm_calendar_url(user: Any) -> str:
    return f"{settings.SITE_URL}/calendar/gm/{gm_calendar_token(user)}.ics"


# --- the seats a browser holds -------------------------------------------------------------
# A browser that opened a seat's magic link holds a signed, timestamped cookie of
# [seat id, link version] pairs: a rotated link or a replaced player (the seat's link
# version moves on) closes every browser opened with an older link, and a pair nobody
# signed, or older than SESSION_COOKIE_AGE, is no pair. The server keeps nothing: a
# player's page or order reads no session (a round trip to Redis or the database that
# was a tenth of an order post's CPU), and Redis being down costs a player nothing. (A
# player who signed in by email is known by their session: below.)

SEATS_COOKIE = "seats"
SEATS_KEPT = 100  # the most recent links a browser keeps (a cookie holds about 4 kB)
_SEATS_SALT = "games.postal.access.seats"
# What sessions held before the cookie: read while such sessions live.
_SESSION_SEATS = "seats"


def _pairs(value: Any) -> list[tuple[int, int]]:
    if not isinstance(value, list):
        return []
    return [
        (entry[0], entry[1])
        for entry in value
        if isinstance(entry, list) and len(entry) == 2 and all(type(part) is int for part in entry)
    ]


def browser_links(request: HttpRequest) -> dict[int, int]:
    """Seat id -> the link version of the link that opened it in this browser, and every
    seat of a signed-in player's address at its link version now (``player_links``): the
    one answer to which seats a browser may open, for every player page and order post."""
    links = cookie_links(request)
    signed_in = player_links(request)
    return {**links, **signed_in} if signed_in else links


def cookie_links(request: HttpRequest) -> dict[int, int]:
    """The seats this browser opened with their magic links (its seats cookie)."""
    signed = request.COOKIES.get(SEATS_COOKIE)
    if signed is not None:
        try:
            value = signing.loads(signed, salt=_SEATS_SALT, max_age=settings.SESSION_COOKIE_AGE)
        except signing.BadSignature:  # tampered with, expired or signed with another key
            return {}
        return dict(_pairs(value))
    if settings.SESSION_COOKIE_NAME in request.COOKIES:
        return dict(_pairs(request.session.get(_SESSION_SEATS)))
    return {}


# --- the seats of a signed-in player ---------------------------------------------------------
# A player who signed in by email (games.community.players) opens every seat of their
# address without
# its link: the address is theirs, proven by the sign-in. Who the player is comes from the
# session's user and their Player row, and the seats from the Player's address now: a seat
# given to another player (``replace_player``) is no longer theirs, and signing out ends it
# all. A cookie set at sign-in (``SIGNED_IN_COOKIE``, which holds nothing) only says that
# there is something to look for: without it, no session is read, so a GM's browser and
# every browser of magic links reads no session on a player page or an order post, as
# before players could sign in.

SIGNED_IN_COOKIE = "signedin"
PLAYER_SESSION_KEY = "player"
_PLAYER_LINKS = "_player_seat_links"  # the request's attribute: read once a request


def signed_in_hint(request: HttpRequest) -> bool:
    """Whether this browser may be a signed-in player's (nothing read yet)."""
    return SIGNED_IN_COOKIE in request.COOKIES and settings.SESSION_COOKIE_NAME in request.COOKIES


def _set_cookie(response: HttpResponseBase, name: str, value: str) -> None:
    """A cookie of the player's browser, kept as the session's is (its age, path, domain,
    secure and same-site settings), never read by scripts."""
    response.set_cookie(
        name,
        value,
        max_age=settings.SESSION_COOKIE_AGE,
        path=settings.SESSION_COOKIE_PATH,
        domain=settings.SESSION_COOKIE_DOMAIN,
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite=settings.SESSION_COOKIE_SAMESITE,
    )


def mark_signed_in(response: HttpResponseBase) -> None:
    _set_cookie(response, SIGNED_IN_COOKIE, "1")


def forget_signed_in(response: HttpResponseBase) -> None:
    """The browser forgets the player and the seats its links opened (signing out)."""
    for name in (SIGNED_IN_COOKIE, SEATS_COOKIE):
        response.delete_cookie(
            name,
            path=settings.SESSION_COOKIE_PATH,
            domain=settings.SESSION_COOKIE_DOMAIN,
            samesite=settings.SESSION_COOKIE_SAMESITE,
        )


def player_links(request: HttpRequest) -> dict[int, int]:
    """Seat id -> current link version of every seat of the signed-in player's address
    (a session read and one query, once a request); {} for anybody else."""
    cached: dict[int, int] | None = getattr(request, _PLAYER_LINKS, None)
    if cached is not None:
        return cached
    found: dict[int, int] = {}
    if signed_in_hint(request) and request.session.get(PLAYER_SESSION_KEY):
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            found = seat_links_of_user(user.pk)
    setattr(request, _PLAYER_LINKS, found)
    return found


def seat_links_of_user(user_id: int) -> dict[int, int]:
    """Seat id -> link version of every seat of the address of the user's Player (none for
    a user who is no player), in one query."""
    # Compared as ``email__iexact`` compares (by the index seat_email_upper), which takes
    # no subquery.
    address = Player.objects.filter(user_id=user_id).values(upper=Upper("email"))[:1]
    return dict(
        Seat.objects.alias(upper=Upper("email"))
        .filter(upper=Subquery(address))
        .order_by()
        .values_list("pk", "link_version")
    )


def remember_seat(request: HttpRequest, response: HttpResponseBase, seat: Seat) -> None:
    """Add ``seat``, as its link opens it now, to the seats this browser holds (set on
    ``response``), the most recent last."""
    links = [
        (seat_id, version)
        for seat_id, version in cookie_links(request).items()
        if seat_id != seat.pk
    ]
    links = [*links, (seat.pk, seat.link_version)][-SEATS_KEPT:]
    value = signing.dumps([list(pair) for pair in links], salt=_SEATS_SALT, compress=True)
    _set_cookie(response, SEATS_COOKIE, value)
    if settings.SESSION_COOKIE_NAME in request.COOKIES:
        request.session.pop(_SESSION_SEATS, None)  # the cookie holds them now
