"""What an open page needs to know to move by itself (docs/players.md, "Pages that move"):
a pulse of its game, a short token that changes whenever something the page shows may
have changed, read in one statement.

A page polls with the token it was drawn with; the answer is "nothing new", "a new page"
(the game started, paused, resumed, finished or needs its GM: the page is loaded again) or
"news" (a step resolved, an order, a message, a deadline moved: the page's sections are
drawn again, any the reader is busy in left as they are). The token is opaque: a seat's
pulse counts only what that seat may see (its own orders, the messages it may read), so a
private message between two other players or another seat's order never moves it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, OuterRef, Q, QuerySet, Subquery

from games.community import press
from games.models import Game, GMAction, Message, Order, Seat, Step


@dataclass(frozen=True)
class Pulse:
    """``page``: what makes it another page (the game's status); ``news``: the rest of
    what the page shows."""

    page: str
    news: str

    @property
    def token(self) -> str:
        return f"{self.page}.{self.news}"

    def answer_to(self, token: str) -> str:
        """What changed since the page drawn with ``token``: "none", "page" or "news"."""
        if token == self.token:
            return "none"
        if token.split(".", 1)[0] != self.page:
            return "page"
        return "news"


def _latest(queryset: QuerySet[Step], field: str) -> Subquery:
    return Subquery(queryset.order_by("-number").values(field)[:1])


def _highest(queryset: QuerySet[Message] | QuerySet[GMAction] | QuerySet[Order]) -> Subquery:
    """The newest row of ``queryset``, by its id."""
    return Subquery(queryset.order_by("-pk").values("pk")[:1])


def _digest(*parts: object) -> str:
    return hashlib.blake2s(repr(parts).encode(), digest_size=6).hexdigest()


def _read(game_id: int, orders: QuerySet[Order], messages: QuerySet[Message]) -> dict[str, Any]:
    """In one statement: the game's status, pause and wait for its GM, its latest step (id,
    status, deadline), the newest of ``orders``, the newest of ``messages`` and how many of
    those are hidden, and the GM's log's newest line. Empty for a game that is gone."""
    steps = Step.objects.filter(game_id=OuterRef("pk"))
    row = (
        Game.objects.filter(pk=game_id)
        .annotate(
            step_id=_latest(steps, "pk"),
            step_status=_latest(steps, "status"),
            deadline=_latest(steps, "deadline"),
            order=_highest(orders),
            message=_highest(messages),
            hidden=Subquery(
                messages.order_by()
                .values("game_id")
                .annotate(n=Count("id", filter=Q(hidden_at__isnull=False)))
                .values("n")[:1]
            ),
            logged=_highest(GMAction.objects.filter(game_id=OuterRef("pk"))),
            started=Q(state__isnull=False),
        )
        .values(*NEWS, "status", "needs_gm", "started")
        .first()
    )
    return row or {}


# What changes a page without making it another: a step resolved or opened, a pause, a
# deadline moved, an order, a message, a message hidden, a line of the GM's log.
NEWS = ("step_id", "step_status", "paused_at", "deadline", "order", "message", "hidden", "logged")


def seat_pulse(seat: Seat) -> Pulse:
    """The pulse of ``seat``'s page: its game's status and latest step, that step's
    deadline, the seat's own latest order (sent from another device), the messages it may
    read (newest, and how many are hidden), the GM's log, and the seat's name."""
    row = _read(
        seat.game_id,
        Order.objects.filter(seat_id=seat.pk),
        Message.objects.filter(press.seen_by(seat), game_id=OuterRef("pk")),
    )
    if not row:
        return Pulse("gone", "")
    return Pulse(
        _digest(row["status"], row["started"]),
        _digest(seat.name, *(row[part] for part in NEWS)),
    )


def gm_pulse(game: Game) -> Pulse:
    """The pulse of the GM's page of ``game``: as a seat's, with every order of the game
    (who has ordered) and every message, and whether the game waits for its GM."""
    row = _read(
        game.pk,
        Order.objects.filter(step__game_id=OuterRef("pk")),
        Message.objects.filter(game_id=OuterRef("pk")),
    )
    if not row:
        return Pulse("gone", "")
    return Pulse(
        _digest(row["status"], row["needs_gm"]),
        _digest(*(row[part] for part in NEWS)),
    )
