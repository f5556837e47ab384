"""A player: an email address and, once they signed in, a ``Player`` (a Django user
without a password). Their seats are every seat of the address, compared whatever its case
(the index ``seat_email_upper``)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from games.email_choices import normalise
from games.models import Player, Seat


def seats_of(email: str) -> QuerySet[Seat]:
    """Every seat of ``email``, in every game."""
    return Seat.objects.filter(email__iexact=normalise(email))


def player_of(user: Any) -> Player | None:
    """The player a signed-in user is; None for a GM without seats or nobody."""
    if not getattr(user, "is_authenticated", False):
        return None
    return Player.objects.filter(user=user).first()
