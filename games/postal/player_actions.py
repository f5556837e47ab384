"""A player's settings carried to their seats (games.community.players keeps the player's
own row): the language and the time zone a player chooses become those of each of their
seats in a game not over. The seats are every seat of the address, whatever its case.

Each runs in the caller's transaction, which holds the player's row locked; no game row
is locked, as a seat's own choices (``postal.choose_language``) lock none either."""

from __future__ import annotations

from django.db.models import QuerySet

from games.models import Game, Seat
from games.notify.email_choices import normalise

OVER = [Game.Status.FINISHED, Game.Status.ABANDONED]


def _playing(email: str) -> QuerySet[Seat]:
    return Seat.objects.filter(email__iexact=normalise(email)).exclude(game__status__in=OVER)


def choose_language(email: str, language: str) -> None:
    """Every seat of ``email`` in a game not over speaks ``language`` ("": each game's
    own; docs/languages.md)."""
    _playing(email).update(language=language)


def choose_time_zone(email: str, time_zone: str) -> None:
    """Every seat of ``email`` in a game not over writes its deadlines in ``time_zone``."""
    _playing(email).update(time_zone=time_zone)
