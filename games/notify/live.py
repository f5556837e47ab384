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

from django.db import connection

from games.community import press
from games.models import Game, Seat


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


def _digest(*parts: object) -> str:
    return hashlib.blake2s(repr(parts).encode(), digest_size=6).hexdigest()


# What changes a page without making it another: a step resolved or opened, a pause, a
# deadline moved, an order, a message, a message hidden, a line of the GM's log.
NEWS = ("step_id", "step_status", "paused_at", "deadline", "order", "message", "hidden", "logged")

# The pulse in one statement, as SQL: the ORM took ten times the statement's own time to
# build and compile its subqueries (3 ms of CPU against 0.3), on every page, every poll and
# every look of a stream (bench/live_pages.py). ``{orders}``: the newest order the page
# shows; ``{seen}``: the messages it shows (``press.seen_by_sql``, or all of them).
_READ = (
    "SELECT g.status, g.needs_gm, g.state IS NOT NULL,"
    " (SELECT s.id FROM games_step s WHERE s.game_id = g.id ORDER BY s.number DESC LIMIT 1),"
    " (SELECT s.status FROM games_step s WHERE s.game_id = g.id"
    " ORDER BY s.number DESC LIMIT 1),"
    " g.paused_at,"
    " (SELECT s.deadline FROM games_step s WHERE s.game_id = g.id"
    " ORDER BY s.number DESC LIMIT 1),"
    " ({orders}),"
    " (SELECT m.id FROM games_message m WHERE m.game_id = g.id{seen}"
    " ORDER BY m.id DESC LIMIT 1),"
    " (SELECT COUNT(*) FROM games_message m WHERE m.game_id = g.id{seen}"
    " AND m.hidden_at IS NOT NULL),"
    " (SELECT a.id FROM games_gmaction a WHERE a.game_id = g.id ORDER BY a.id DESC LIMIT 1)"
    " FROM games_game g WHERE g.id = %s"
)
_SEAT_ORDERS = "SELECT o.id FROM games_order o WHERE o.seat_id = %s ORDER BY o.id DESC LIMIT 1"
_GAME_ORDERS = (
    "SELECT o.id FROM games_order o JOIN games_step s ON s.id = o.step_id"
    " WHERE s.game_id = g.id ORDER BY o.id DESC LIMIT 1"
)


def _read(
    game_id: int, orders: tuple[str, list[Any]], seen: tuple[str, list[Any]]
) -> dict[str, Any]:
    """In one statement: the game's status, pause and wait for its GM, its latest step (id,
    status, deadline), the newest of ``orders``, the newest of the messages ``seen`` lets
    the page show and how many of those are hidden, and the GM's log's newest line. Empty
    for a game that is gone."""
    sql = _READ.format(orders=orders[0], seen=seen[0])
    with connection.cursor() as cursor:
        cursor.execute(sql, [*orders[1], *seen[1], *seen[1], game_id])
        row = cursor.fetchone()
    if row is None:
        return {}
    return dict(zip(("status", "needs_gm", "started", *NEWS), row, strict=True))


def seat_pulse(seat: Seat) -> Pulse:
    """The pulse of ``seat``'s page: its game's status and latest step, that step's
    deadline, the seat's own latest order (sent from another device), the messages it may
    read (newest, and how many are hidden), the GM's log, and the seat's name."""
    row = _read(seat.game_id, (_SEAT_ORDERS, [seat.pk]), press.seen_by_sql(seat))
    if not row:
        return Pulse("gone", "")
    return Pulse(
        _digest(row["status"], row["started"]),
        _digest(seat.name, *(row[part] for part in NEWS)),
    )


def gm_pulse(game: Game) -> Pulse:
    """The pulse of the GM's page of ``game``: as a seat's, with every order of the game
    (who has ordered) and every message, and whether the game waits for its GM."""
    row = _read(game.pk, (_GAME_ORDERS, []), ("", []))
    if not row:
        return Pulse("gone", "")
    return Pulse(
        _digest(row["status"], row["needs_gm"]),
        _digest(*(row[part] for part in NEWS)),
    )
