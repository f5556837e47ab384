"""What the postal layer tells the rest of the service.

``game_finished`` is sent inside the transaction that finishes a game, with ``game``,
``state`` (the engine's final state) and ``now``. Receivers (a campaign's ledger, a
league's standings, the ratings of a rated game: ``games.community.ratings``) write what follows
from it in that same transaction: it all commits, or none of it does.
"""

from __future__ import annotations

from django.dispatch import Signal

game_finished = Signal()
