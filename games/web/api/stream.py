"""A seat's events as server-sent events, ``/api/v1/seats/<game>/<position>/stream``
(docs/api.md): first the seat as it is (``event: seat``, the summary ``/seats`` lists),
then every event of the game the seat may see after the cursor (``Last-Event-ID``, else
``?after=``), each with its id, then, as they come, the new events and the seat again
whenever its page's pulse moves (a step resolved, an order, a deadline moved). A comment
every ``API_STREAM_PING_SECONDS`` keeps proxies from closing it. A stream ends after
``API_STREAM_SECONDS``: the client (an ``EventSource`` does it by itself) connects again
with the last id it saw, and misses nothing. A token holds at most
``API_STREAMS_PER_TOKEN`` streams at once, the service ``API_STREAMS_MOST``, and one web
process ``API_STREAMS_PER_PROCESS``: a stream holds one of its process's threads while it
lasts, and the pages need the others."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import close_old_connections
from django.http import HttpRequest, StreamingHttpResponse

from games.models import Seat
from games.notify import live, machine
from games.web.api.base import ERRORS, Error, Refused
from games.web.api.seats import _item, opened, router
from moderator.numbers import whole_number

# How long a stream's count is kept if its process dies without closing it.
COUNT_SECONDS = 3600


def _frame(event: str, data: Any, ident: int | None = None) -> str:
    head = f"id: {ident}\n" if ident is not None else ""
    return f"{head}event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


class _Here:
    """The streams open in this process: each holds one of its threads while it lasts."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.count = 0

    def take(self) -> bool:
        with self.lock:
            if self.count >= settings.API_STREAMS_PER_PROCESS:
                return False
            self.count += 1
            return True

    def give_back(self) -> None:
        with self.lock:
            self.count -= 1


_here = _Here()


class Slots:
    """The streams open now, of one holder (a token, or a seat's page) and in all, counted in
    the shared cache, and in this process."""

    def __init__(self, holder: str, most: int) -> None:
        self.keys = [f"api-streams:{holder}", "api-streams:all"]
        self.most = most
        self.held = False

    def take(self) -> bool:
        # A process whose threads were all held by streams would leave every page it takes
        # waiting until one ends, minutes on: whatever the service's count says.
        if not _here.take():
            return False
        limits = [self.most, settings.API_STREAMS_MOST]
        counts = []
        try:
            for key in self.keys:
                cache.add(key, 0, COUNT_SECONDS)
                counts.append(cache.incr(key))
        except BaseException:
            _here.give_back()
            raise
        self.held = True
        if any(count > limit for count, limit in zip(counts, limits, strict=True)):
            self.give_back()
            return False
        return True

    def give_back(self) -> None:
        if not self.held:
            return
        self.held = False
        _here.give_back()
        for key in self.keys:
            try:
                if cache.decr(key) < 0:
                    cache.set(key, 0, COUNT_SECONDS)
            except ValueError:
                pass  # expired meanwhile


def cursor_of(request: HttpRequest) -> int:
    raw = request.headers.get("Last-Event-ID") or request.GET.get("after") or "0"
    return whole_number(raw.strip(), most=2**62) or 0


def _events(seat: Seat, cursor: int) -> Iterator[str | int]:
    """The frames of the seat's events after ``cursor``, then the new cursor."""
    while True:
        shown, after = machine.events(seat, after=cursor)
        for event in shown:
            yield _frame("game-event", event, event["id"])
        if after == cursor:
            break
        cursor = after
    yield cursor


class Frames:
    """A stream's frames, and its slot given back when the server closes it: whether it
    ended, its client went, or it was closed before it began (a generator not started runs
    no ``finally``)."""

    def __init__(self, frames: Iterator[str], slots: Slots) -> None:
        self.frames = frames
        self.slots = slots

    def __iter__(self) -> Iterator[str]:
        return self.frames

    def close(self) -> None:
        try:
            close = getattr(self.frames, "close", None)
            if close is not None:
                close()
        finally:
            self.slots.give_back()


def events_of(seat: Seat, cursor: int, slots: Slots) -> Frames:
    """The seat's stream from ``cursor`` (the frames this module's docstring says), giving
    its slot back when it ends or its client goes."""
    return Frames(_frames(seat, cursor, slots), slots)


def _frames(seat: Seat, cursor: int, slots: Slots) -> Iterator[str]:
    try:
        yield f"retry: {settings.API_STREAM_RETRY_MS}\n\n"
        ends = time.monotonic() + settings.API_STREAM_SECONDS
        pulse = ""
        pinged = time.monotonic()
        while True:
            now_pulse = live.seat_pulse(seat).token
            if now_pulse != pulse:
                pulse = now_pulse
                seat.refresh_from_db()
                yield _frame("seat", _item(seat))
                for frame in _events(seat, cursor):
                    if isinstance(frame, int):
                        cursor = frame
                    else:
                        yield frame
            if time.monotonic() >= ends:
                yield ": the stream ends here; connect again with Last-Event-ID\n\n"
                return
            if time.monotonic() - pinged >= settings.API_STREAM_PING_SECONDS:
                pinged = time.monotonic()
                yield ": ping\n\n"
            # Each look as a request of its own: the thread's connection is kept as any
            # thread keeps it (DB_CONN_MAX_AGE, health checks), so a stream holds no more
            # connections than the threads do, and a look is one query, not a new
            # PostgreSQL backend (ten times the look's own CPU: bench/live_pages.py).
            close_old_connections()
            time.sleep(settings.API_STREAM_LOOK_SECONDS)
    finally:
        slots.give_back()


@router.get(
    "/seats/{game_id}/{position}/stream",
    response={200: str, 404: Error, **ERRORS},
    summary="The seat's events as server-sent events, resuming from Last-Event-ID",
    openapi_extra={
        "responses": {
            200: {
                "description": "text/event-stream: `seat` and `game-event` events",
                "content": {"text/event-stream": {"schema": {"type": "string"}}},
            }
        }
    },
)
def stream(request: HttpRequest, game_id: int, position: int) -> StreamingHttpResponse:
    token, seat = opened(request, game_id, position)
    slots = Slots(f"token-{token.pk}", settings.API_STREAMS_PER_TOKEN)
    if not slots.take():
        raise Refused(
            429,
            "Too many streams open with this token: close one first.",
            retry_after=settings.API_STREAM_RETRY_MS // 1000,
        )
    return streaming(events_of(seat, cursor_of(request), slots))


def streaming(frames: Frames) -> StreamingHttpResponse:
    response = StreamingHttpResponse(frames, content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    # nginx and the like pass each event on at once.
    response["X-Accel-Buffering"] = "no"
    return response
