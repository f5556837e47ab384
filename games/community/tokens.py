"""Tokens of the API (docs/api.md): made by a player for one of their seats or for all of
them, or by a GM for their games; shown once, kept as their SHA-256, listed with their last
use, revoked at will. ``authenticate`` finds the token of a call, and its scope answers
which seats and games the call may read and change. What is done with a token is recorded
(``record``: ``TokenAction``)."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils.translation import gettext as _

from games import postal
from games.models import ApiToken, Game, Seat, TokenAction
from games.notify import email_choices

# Every token starts so: a secret scanner (and a player) knows one when they see one.
PREFIX = "pbp_"
# The characters of a token shown in lists, after PREFIX.
SHOWN = 6
# The last use is written at most this often per token: a bot polling every second costs
# no write per call.
LAST_USE_EVERY = timedelta(minutes=1)
# The most tokens an address (or a GM) may hold unrevoked.
MOST_TOKENS = 20


class TokenError(Exception):
    """A token not made; ``message`` says why, and nothing was written."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def digest(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def mint(
    *,
    name: str,
    scope: str,
    access: str,
    now: datetime,
    bot: bool = False,
    email: str = "",
    seat: Seat | None = None,
    gm: Any = None,
) -> tuple[ApiToken, str]:
    """A new token and its secret, which is shown once and never kept. A seat's token is
    the address's only while the seat is (``seat.email``); a bot's token plays."""
    address = email_choices.normalise(email)
    if scope == ApiToken.Scope.GM:
        if gm is None:
            raise TokenError(_("Only a GM makes a token for their games."))
        held = ApiToken.objects.filter(gm=gm, revoked_at__isnull=True)
    else:
        if not address:
            raise TokenError(_("Sign in to make a token for your seats."))
        if scope == ApiToken.Scope.SEAT and (
            seat is None or email_choices.normalise(seat.email) != address
        ):
            raise TokenError(_("That seat is not one of yours."))
        held = ApiToken.objects.filter(email=address, revoked_at__isnull=True)
    if bot and access != ApiToken.Access.PLAY:
        raise TokenError(_("A bot's token plays: choose “read and play”."))
    if held.count() >= MOST_TOKENS:
        raise TokenError(
            _("You hold %(count)d tokens, the most there may be: revoke one first.")
            % {"count": MOST_TOKENS}
        )
    raw = PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        token = _created(name, scope, access, bot, address, seat, gm, raw, now)
        if bot and seat is not None and scope == ApiToken.Scope.SEAT:
            # Said from now on: the player declared the seat a bot's.
            postal.mark_bot(seat.pk)
    return token, raw


def _created(
    name: str,
    scope: str,
    access: str,
    bot: bool,
    address: str,
    seat: Seat | None,
    gm: Any,
    raw: str,
    now: datetime,
) -> ApiToken:
    return ApiToken.objects.create(
        name=name.strip()[:60] or _("my program"),
        scope=scope,
        access=access,
        bot=bot,
        email="" if scope == ApiToken.Scope.GM else address,
        seat=seat if scope == ApiToken.Scope.SEAT else None,
        gm=gm if scope == ApiToken.Scope.GM else None,
        token_hash=digest(raw),
        prefix=raw[: len(PREFIX) + SHOWN],
        created_at=now,
    )


def authenticate(raw: str, *, now: datetime) -> ApiToken | None:
    """The token whose secret is ``raw``, unrevoked, else None; its last use noted."""
    if not raw.startswith(PREFIX) or len(raw) > 100:
        return None
    token = (
        ApiToken.objects.select_related("gm")
        .filter(token_hash=digest(raw), revoked_at__isnull=True)
        .first()
    )
    if token is None:
        return None
    if token.gm is not None and not token.gm.is_active:
        return None
    if token.last_used_at is None or now - token.last_used_at >= LAST_USE_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


def of_address(email: str) -> QuerySet[ApiToken]:
    """The tokens an address made, newest first, with their seat's game."""
    address = email_choices.normalise(email)
    return ApiToken.objects.filter(email=address).select_related("seat__game")


def of_gm(user: Any) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(gm=user)


# How many of a token's latest actions its list shows.
ACTIONS_SHOWN = 5


def listed(rows: QuerySet[ApiToken]) -> list[dict[str, Any]]:
    """Each token of ``rows`` with its latest actions (``ACTIONS_SHOWN``), as the token
    pages list them: two queries whatever their number."""
    tokens = list(rows)
    recent: dict[int, list[TokenAction]] = {token.pk: [] for token in tokens}
    for action in TokenAction.objects.filter(token__in=tokens).order_by("-at", "-id")[:200]:
        if len(recent[action.token_id]) < ACTIONS_SHOWN:
            recent[action.token_id].append(action)
    return [{"token": token, "actions": recent[token.pk]} for token in tokens]


def revoke(token_id: int, *, email: str = "", gm: Any = None, now: datetime) -> ApiToken | None:
    """Revoke a token of ``email``'s (or of the GM ``gm``'s); the token, or None when it is
    none of theirs. Revoking twice changes nothing."""
    owned = Q(gm=gm) if gm is not None else Q(email=email_choices.normalise(email)) & ~Q(email="")
    token = ApiToken.objects.filter(owned, pk=token_id).first()
    if token is None:
        return None
    if token.revoked_at is None:
        token.revoked_at = now
        token.save(update_fields=["revoked_at"])
    return token


def seats(token: ApiToken) -> QuerySet[Seat]:
    """The seats ``token`` opens: its seat while it is its address's, or every seat of
    its address; none for a GM's token."""
    if token.scope == ApiToken.Scope.GM:
        return Seat.objects.none()
    found = Seat.objects.filter(email__iexact=token.email)
    if token.scope == ApiToken.Scope.SEAT:
        found = found.filter(pk=token.seat_id or 0)
    return found


def opens_seat(token: ApiToken, seat: Seat) -> bool:
    """Whether ``token`` opens ``seat`` now (checked again on the locked seat when it plays)."""
    if token.scope == ApiToken.Scope.GM:
        return False
    if email_choices.normalise(seat.email) != token.email:
        return False
    return token.scope == ApiToken.Scope.SEATS or seat.pk == token.seat_id


def games(token: ApiToken) -> QuerySet[Game]:
    """The games a GM's token runs: the GM's own (a superuser's token too: no others)."""
    if token.scope != ApiToken.Scope.GM:
        return Game.objects.none()
    return Game.objects.filter(gm_id=token.gm_id).defer("seed")


def record(
    token: ApiToken,
    kind: str,
    *,
    game_id: int,
    words: str,
    now: datetime,
    position: int | None = None,
    step_number: int | None = None,
    row_id: int | None = None,
) -> TokenAction:
    """Note a change made with ``token`` (in the transaction of the change)."""
    return TokenAction.objects.create(
        token=token,
        kind=kind,
        game_id=game_id,
        position=position,
        step_number=step_number,
        row_id=row_id,
        words=words[:200],
        at=now,
    )
