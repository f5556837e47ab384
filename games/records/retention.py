"""What is kept, and for how long (DESIGN.md section 10): every day the workers remove
what was delivered and is past its use, so the database grows with the game records,
dice and orders, which are never pruned, and little else.

- Outbox bodies, MAIL_RETENTION_DAYS after the email was written, once its sending is
  over (moderator/mail/pruning.py); the rows stay.
- Magic links that have expired (LINK_DAYS after they were minted): such a link opens
  nothing already, so a player who follows it sees the same "not valid" page either way.
- Sessions that have expired (Django's own ``clear_expired``, as ``clearsessions``).
- Players' sign-ins a day after they expired (games.community.players): until then their
  link says it expired rather than that it is unknown.
- Sign-ups never confirmed, a day after their confirmation link lapsed
  (SIGNUP_CONFIRM_HOURS): until then the link says it expired.
- What was posted out of the service (a webhook's event, a push, a post to a player's
  webhook), MAIL_RETENTION_DAYS after it was written, once its sending is over: its
  payload emptied, the row kept, as an email's (its dedupe key keeps a post once).
- Push subscriptions whose latest push failed and that have delivered none for
  PUSH_FAILING_DAYS: the browser was reset or thrown away.

``overdue`` names each kind's rows past retention: what ``prune`` removes, and what
/metrics counts (``moderator_retention_overdue_rows``: above 0 for more than a day, the
daily prune is not running). Events, steps and their states stay: the seat page, the
GM's log, the record and the dice check read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from importlib import import_module
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q, QuerySet

from games.community import openings, players
from games.models import (
    PlayerPost,
    PushDelivery,
    PushSubscription,
    SeatLink,
    SignUp,
    WebhookDelivery,
)
from moderator.mail import pruning
from moderator.mail.models import OutboundEmail

# How long a link that expired still says so, rather than that it is unknown.
GRACE = timedelta(days=1)
# A post out of the service whose sending is over.
POSTED = ("sent", "failed")
POSTS: dict[str, type[WebhookDelivery | PushDelivery | PlayerPost]] = {
    "webhook_deliveries": WebhookDelivery,
    "pushes": PushDelivery,
    "player_posts": PlayerPost,
}


@dataclass(frozen=True)
class Pruned:
    bodies: int
    links: int
    sign_ins: int = 0
    sign_ups: int = 0
    posts: int = 0
    subscriptions: int = 0


def overdue(now: datetime) -> dict[str, QuerySet[Any]]:
    """Each kind of row the daily prune removes -> its rows past retention at ``now``."""
    after_mail = pruning.cutoff(now)
    failing = now - timedelta(days=settings.PUSH_FAILING_DAYS)
    kinds: dict[str, QuerySet[Any]] = {
        "email_bodies": OutboundEmail.objects.filter(
            pruned_at__isnull=True, state__in=pruning.OVER, created_at__lt=after_mail
        ),
        "links": SeatLink.objects.filter(expires_at__lte=now),
        "sign_ins": players.expired_sign_ins(now),
        "sign_ups": SignUp.objects.filter(
            state=SignUp.State.UNCONFIRMED,
            created_at__lte=now - openings.confirm_window() - GRACE,
        ),
    }
    for kind, model in POSTS.items():
        kinds[kind] = model.objects.filter(state__in=POSTED, created_at__lt=after_mail).exclude(
            payload={}
        )
    kinds["push_subscriptions"] = PushSubscription.objects.filter(
        Q(last_sent_at__isnull=True) | Q(last_sent_at__lt=F("last_failed_at")),
        Q(last_sent_at__isnull=True) | Q(last_sent_at__lt=failing),
        last_failed_at__isnull=False,
        created_at__lte=failing,
    )
    return kinds


def prune(*, now: datetime, batch: int = pruning.BATCH) -> Pruned:
    """Everything past its retention at ``now``, ``batch`` rows to a transaction; safe to
    run twice, or two at once (the second finds nothing, or other rows)."""
    bodies = pruning.prune_bodies(now=now, batch=batch)
    links = prune_links(now=now, batch=batch)
    sign_ins = players.prune_sign_ins(now=now)
    kinds = overdue(now)
    sign_ups = _delete(kinds["sign_ups"], batch)
    posts = sum(_empty(kinds[kind], batch) for kind in POSTS)
    subscriptions = _delete(kinds["push_subscriptions"], batch)
    import_module(settings.SESSION_ENGINE).SessionStore.clear_expired()
    return Pruned(bodies, links, sign_ins, sign_ups, posts, subscriptions)


def _delete(rows: QuerySet[Any], batch: int) -> int:
    """Delete ``rows``, ``batch`` to a transaction, in the order of their keys; how many."""
    deleted, last = 0, 0
    while ids := list(rows.filter(pk__gt=last).order_by("pk").values_list("pk", flat=True)[:batch]):
        with transaction.atomic():
            _, counts = rows.model.objects.filter(pk__in=ids).delete()
        deleted += counts.get(rows.model._meta.label, 0)
        last = ids[-1]
    return deleted


def _empty(rows: QuerySet[Any], batch: int) -> int:
    """Empty the payload of ``rows``, ``batch`` to a statement; how many."""
    emptied, last = 0, 0
    while ids := list(rows.filter(pk__gt=last).order_by("pk").values_list("pk", flat=True)[:batch]):
        emptied += rows.model.objects.filter(pk__in=ids).update(payload={})
        last = ids[-1]
    return emptied


def prune_links(*, now: datetime, batch: int = pruning.BATCH) -> int:
    """Delete the links expired at ``now``, ``batch`` to a transaction; how many."""
    return _delete(overdue(now)["links"], batch)
