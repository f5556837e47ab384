"""What is kept, and for how long (DESIGN.md section 10): every day the workers remove
what was delivered and is past its use, so the database grows with the game records,
dice and orders, which are never pruned, and little else.

- Outbox bodies, MAIL_RETENTION_DAYS after the email was written, once its sending is
  over (moderator/mail/pruning.py); the rows stay.
- Magic links that have expired (LINK_DAYS after they were minted): such a link opens
  nothing already, so a player who follows it sees the same "not valid" page either way.
- Sessions that have expired (Django's own ``clear_expired``, as ``clearsessions``).
- Players' sign-ins a day after they expired (games.community.players): until then their link says
  it expired rather than that it is unknown.

Events, steps and their states stay: the seat page, the GM's log, the record and the
dice check read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from importlib import import_module

from django.conf import settings
from django.db import transaction

from games.community import players
from games.models import SeatLink
from moderator.mail import pruning


@dataclass(frozen=True)
class Pruned:
    bodies: int
    links: int


def prune(*, now: datetime, batch: int = pruning.BATCH) -> Pruned:
    """Everything past its retention at ``now``, ``batch`` rows to a transaction; safe to
    run twice, or two at once (the second finds nothing, or other rows)."""
    bodies = pruning.prune_bodies(now=now, batch=batch)
    links = prune_links(now=now, batch=batch)
    players.prune_sign_ins(now=now)
    import_module(settings.SESSION_ENGINE).SessionStore.clear_expired()
    return Pruned(bodies=bodies, links=links)


def prune_links(*, now: datetime, batch: int = pruning.BATCH) -> int:
    """Delete the links expired at ``now``, ``batch`` to a transaction; how many."""
    deleted = 0
    while True:
        with transaction.atomic():
            ids = list(
                SeatLink.objects.filter(expires_at__lte=now)
                .order_by("pk")
                .values_list("pk", flat=True)[:batch]
            )
            if not ids:
                return deleted
            count, _ = SeatLink.objects.filter(pk__in=ids).delete()
        deleted += count
