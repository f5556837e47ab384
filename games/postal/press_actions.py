"""What messages between players change on their seats and their game
(games.community.press keeps the messages themselves): a seat's choice of how its
messages are emailed, the mark of the latest message a digest told a seat of, and the GM's
choice of whether players may write privately.

Each runs in the caller's transaction, which holds the lock the caller took first (the
seat's and its game's, or the game's)."""

from __future__ import annotations

from collections.abc import Mapping

from django.db.models import Max

from games.models import Game, Message, PressEmail, Seat
from games.notify import email_choices


def choose_email(seat: Seat, choice: str) -> None:
    """How ``seat`` (locked) is emailed its game's messages (one of ``PressEmail``). A
    seat that chooses the digest is marked told of every message so far: the digest starts
    from now, at its address's digest hour."""
    if choice == PressEmail.DIGEST and seat.press_email != PressEmail.DIGEST:
        latest = Message.objects.filter(game_id=seat.game_id).aggregate(latest=Max("id"))
        seat.press_told = latest["latest"] or 0
        # The digest follows the address's preferences (its hour, its zone) and is
        # claimed on their row: made with its defaults if the address has none yet.
        email_choices.preference_of(seat.email, time_zone=seat.zone)
    seat.press_email = choice
    seat.save(update_fields=["press_email", "press_told"])


def mark_told(told: Mapping[int, int]) -> None:
    """Seat id -> the latest message a digest told it of (a mark only moves forward)."""
    for seat_id, latest in told.items():
        Seat.objects.filter(pk=seat_id, press_told__lt=latest).update(press_told=latest)


def allow_private(game: Game, allowed: bool) -> None:
    """The GM turns private messages between players on or off for ``game`` (locked)."""
    game.private_press = allowed
    game.save(update_fields=["private_press"])
