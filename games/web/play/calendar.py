"""The calendar feeds: a seat's deadlines (``/calendar/<token>.ics``) and a GM's, of every
game they run (``/calendar/gm/<token>.ics``). A calendar app holds no cookie: the feed's
private token is its only key. ``games.notify.calendar`` writes the feeds."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET
from redis.exceptions import RedisError

from games.notify import calendar
from games.postal import access
from games.web.play.common import not_valid
from moderator import ratelimit


def _calendar(body: str) -> HttpResponse:
    response = HttpResponse(body, content_type="text/calendar; charset=utf-8")
    response["Cache-Control"] = f"private, max-age={settings.CALENDAR_CACHE_SECONDS}"
    return response


def _feed(
    request: HttpRequest, kind: str, token: str, build: Callable[[], str | None]
) -> HttpResponse:
    """A calendar feed (``build()``; None for a token that opens nothing), kept in the
    cache for CALENDAR_CACHE_SECONDS under a digest of its token: a calendar app polling
    every minute then costs no query and no rate limit. Only a feed built afresh (or a
    wrong token) counts, in the calendar scope: a calendar never spends its players' links.
    A seat's token retired by a rotation or a new player loses its cached copy at once
    (``calendar.forget_seat_feed``); a copy the calendar app itself keeps lasts until it
    expires (Cache-Control)."""
    key = calendar.cache_key(kind, token)
    try:
        body = cache.get(key)
    except RedisError:  # Redis away: build the feed, as if nothing were cached
        body = None
    if body is None:
        if ratelimit.limited(request, "calendar"):
            return ratelimit.too_many(request, "calendar")
        body = build()
        if body is None:
            return not_valid(request)
        with contextlib.suppress(RedisError):
            cache.set(key, body, settings.CALENDAR_CACHE_SECONDS)
    return _calendar(body)


@require_GET
def seat_calendar(request: HttpRequest, token: str) -> HttpResponse:
    """The seat's private feed: its token is the only key, so every wrong one is the same
    404, and guessing is rate limited."""

    def build() -> str | None:
        seat = access.seat_for_token(token, "calendar")
        return None if seat is None else calendar.seat_feed(seat, now=timezone.now())

    return _feed(request, "seat", token, build)


@require_GET
def gm_calendar(request: HttpRequest, token: str) -> HttpResponse:
    def build() -> str | None:
        user = access.gm_for_calendar_token(token)
        return None if user is None else calendar.gm_feed(user, now=timezone.now())

    return _feed(request, "gm", token, build)
