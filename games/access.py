"""Who may see a seat: magic links minted for emails and looked up from a request."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from django.conf import settings

from games.models import Seat, SeatLink
from moderator import links


def mint(seats: Iterable[Seat], *, now: datetime, purpose: str = "play") -> dict[int, str]:
    """A new link token for each seat (one query); returns seat position -> token."""
    tokens: dict[int, str] = {}
    rows = []
    expires = now + timedelta(days=settings.LINK_DAYS)
    for seat in seats:
        token = links.new_token()
        tokens[seat.position] = token
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
