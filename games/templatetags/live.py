"""``{% live_seat seat %}`` and ``{% live_gm game %}``: the poll that keeps a seat's page
and the GM's page of a game up to date without a reload (games.web.live), with htmx (its
script served from django-htmx's static files) and ``games/live.js``. Without JavaScript
the page is a plain page."""

from __future__ import annotations

from typing import Any

from django import template
from django.conf import settings
from django.urls import reverse

from games.models import Game, Seat
from games.notify import live

register = template.Library()

# The parts of each page a poll draws again, by id; ``live`` (the poll itself, with its
# new token) last: games/live.js keeps the old token when it left a part alone.
SEAT_PARTS = (
    "seat-name",
    "now",
    "order",
    "report",
    "gm-log",
    "board-section",
    "private-section",
    "press-list",
    "history",
    "dice",
    "live",
)
GM_PARTS = ("badges", "status", "seats", "gm-log", "emails", "log", "seat-views", "live")


def _poll(context: Any, token: str, parts: tuple[str, ...], stream: str = "") -> dict[str, Any]:
    request = context["request"]
    return {
        "url": request.path,
        # Where the page hears of news at once (games/web/play/stream.py): a seat's.
        "stream": stream,
        "token": token,
        "parts": ",".join(f"#{part}" for part in parts),
        "every": settings.LIVE_POLL_SECONDS,
        "csp_nonce": getattr(request, "csp_nonce", None),
    }


@register.inclusion_tag("games/live.html", takes_context=True)
def live_seat(context: Any, seat: Seat) -> dict[str, Any]:
    stream = reverse("games:seat_stream", args=[seat.game_id, seat.position])
    return _poll(context, live.seat_pulse(seat).token, SEAT_PARTS, stream)


@register.inclusion_tag("games/live.html", takes_context=True)
def live_gm(context: Any, game: Game) -> dict[str, Any]:
    return _poll(context, live.gm_pulse(game).token, GM_PARTS)
