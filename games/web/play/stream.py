"""A seat's page hears of news as it happens: ``/play/<game>/<position>/stream`` is the API's
event stream of the seat (``games.web.api.stream``), opened by the browser that holds the
seat (its links, as the page is) rather than by a token. ``games/live.js`` listens to it
and polls the page at once when it says something moved; the poll every
``LIVE_POLL_SECONDS`` stays, for browsers without it and streams refused or dropped."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.views.decorators.http import require_GET

from games.web.api.stream import Slots, cursor_of, events_of, streaming
from games.web.play.common import held_seat, not_valid


@require_GET
def seat_stream(request: HttpRequest, game_id: int, position: int) -> HttpResponseBase:
    seat = held_seat(request, game_id, position)
    if seat is None:
        return not_valid(request)
    slots = Slots(f"seat-{seat.pk}", settings.LIVE_STREAMS_PER_SEAT)
    if not slots.take():
        response = HttpResponse(status=429)
        response["Retry-After"] = str(settings.API_STREAM_RETRY_MS // 1000)
        return response
    return streaming(events_of(seat, cursor_of(request), slots))
