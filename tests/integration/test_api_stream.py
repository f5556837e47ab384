"""The API's event stream (games/web/api/stream.py) from a live server, read as a client
reads it: the seat first, then the events it may see with their ids, news as it happens,
a resumption from Last-Event-ID that repeats nothing, and the bound on streams per token."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from typing import Any

import pytest
from django.utils import timezone

from games import postal
from games.community import tokens
from games.models import Game, Order, Seat
from tests.factories import started_game

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


def _open(server: str, game: Game, raw: str, last: int | None = None) -> Any:
    headers = {"Authorization": f"Bearer {raw}"}
    if last is not None:
        headers["Last-Event-ID"] = str(last)
    request = urllib.request.Request(f"{server}/api/v1/seats/{game.pk}/0/stream", headers=headers)
    return urllib.request.urlopen(request, timeout=30)


def _frames(text: str) -> list[dict[str, Any]]:
    frames = []
    for block in text.split("\n\n"):
        fields: dict[str, Any] = {}
        for line in block.splitlines():
            if line.startswith(":") or ":" not in line:
                continue
            name, _, value = line.partition(":")
            fields[name] = value.strip()
        if "event" in fields:
            fields["data"] = json.loads(fields["data"])
            frames.append(fields)
    return frames


@pytest.fixture
def quick(settings: Any) -> None:
    settings.API_STREAM_SECONDS = 3
    settings.API_STREAM_LOOK_SECONDS = 1
    settings.API_STREAMS_PER_TOKEN = 2


def _game() -> tuple[Game, Seat, str]:
    game = started_game("liars-dice", now=timezone.now(), players=2)
    seat = game.seats.get(position=0)
    raw = tokens.mint(
        name="stream", scope="seat", access="read", email=seat.email, seat=seat, now=timezone.now()
    )[1]
    return game, seat, raw


def test_a_stream_says_the_seat_then_its_events_and_resumes_without_repeats(
    module_server: str, transactional_db: Any, quick: None
) -> None:
    game, _, raw = _game()
    with _open(module_server, game, raw) as answer:
        assert answer.headers["Content-Type"] == "text/event-stream"
        frames = _frames(answer.read().decode())
    assert frames[0]["event"] == "seat"
    assert frames[0]["data"]["game"] == game.pk
    told = [int(frame["id"]) for frame in frames if frame["event"] == "game-event"]
    visible = [event.pk for event in game.events.order_by("id") if event.visible_to(0)]
    assert told == visible
    with _open(module_server, game, raw, last=told[-1]) as answer:
        again = _frames(answer.read().decode())
    assert [frame["event"] for frame in again] == ["seat"]


def test_an_order_while_the_stream_is_open_arrives_as_news(
    module_server: str, transactional_db: Any, quick: None, settings: Any
) -> None:
    settings.API_STREAM_SECONDS = 6
    game, _, raw = _game()
    owing = game.steps.get(number=1).prompted_seats[0]
    read: list[str] = []
    said = threading.Event()

    def listen() -> None:
        with _open(module_server, game, raw) as answer:
            for line in answer:
                read.append(line.decode())
                if line.startswith(b"event: seat"):
                    said.set()

    listener = threading.Thread(target=listen)
    listener.start()
    # Once the stream has said the seat as it was, a bid takes the game on.
    assert said.wait(timeout=30)
    order = "bid 1 2"
    postal.accept_order(
        game_id=game.pk, position=owing, text=order, source=Order.Source.WEB, now=timezone.now()
    )
    listener.join(timeout=30)
    frames = _frames("".join(read))
    seats = [frame for frame in frames if frame["event"] == "seat"]
    assert len(seats) == 2
    assert seats[0]["data"]["owes"] is (owing == 0)
    assert seats[1]["data"]["owes"] is (owing != 0)


def test_a_token_holds_a_bounded_number_of_streams(
    module_server: str, transactional_db: Any, quick: None
) -> None:
    game, _, raw = _game()
    held = [_open(module_server, game, raw), _open(module_server, game, raw)]
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:
            _open(module_server, game, raw)
        assert refused.value.code == 429
        assert refused.value.headers["Retry-After"] == "3"
    finally:
        for answer in held:
            answer.read()
            answer.close()
    # Once they ended, a stream opens again.
    with _open(module_server, game, raw) as answer:
        assert _frames(answer.read().decode())[0]["event"] == "seat"
