"""What the postal layer tells the rest of the service.

``game_finished`` is sent inside the transaction that finishes a game, with ``game``,
``state`` (the engine's final state) and ``now``. Receivers (a campaign's ledger, a
league's standings, the ratings of a rated game: ``games.community.ratings``) write what follows
from it in that same transaction: it all commits, or none of it does.

``civil_disorder`` is sent inside the transaction of a resolution, once the step is resolved
and the game saved, with ``game``, ``positions`` (the seats that fell into civil disorder in
it) and ``now``. Its receiver (the reserves of a first-come game:
``games.community.signups``) hands a seat over in that same transaction.
"""

from __future__ import annotations

from django.dispatch import Signal

game_finished = Signal()
civil_disorder = Signal()
