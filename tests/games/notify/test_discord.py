"""One Discord message per game (games.notify.discord), against a server on this machine
that speaks Discord's webhook message API: a post with ``?wait=true`` answers the message
with its id, ``PATCH .../messages/<id>`` edits it (404 once it was deleted), a plain post
adds a message."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import pytest
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks, Settings

from games import postal
from games.models import Game, WebhookDelivery, WebhookMessage
from games.notify import discord, reminders, webhooks
from tests.factories import SEED, choice_game

pytestmark = pytest.mark.django_db

PATH = "/api/webhooks/4242/secret-token"


class Discord(ThreadingHTTPServer):
    """Discord's webhook API for one webhook: its channel's messages by id, and every
    request as (method, path with query)."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server_address[1]}{PATH}"
        self.messages: dict[str, str] = {}
        self.requests: list[tuple[str, str]] = []
        self.next_id = 1000

    def add(self, content: str) -> str:
        message_id = str(self.next_id)
        self.next_id += 1
        self.messages[message_id] = content
        return message_id


class Handler(BaseHTTPRequestHandler):
    server: Discord

    def log_message(self, *args: Any) -> None:
        pass

    def content(self) -> str:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        assert body["allowed_mentions"] == {"parse": []}
        return str(body["content"])

    def do_POST(self) -> None:
        self.server.requests.append(("POST", self.path))
        parts = urlsplit(self.path)
        if parts.path != PATH:  # not a webhook of Discord's: a plain 200
            self.content()
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")
            return None
        message_id = self.server.add(self.content())
        if parts.query == "wait=true":
            return self.answer(200, {"id": message_id, "content": self.server.messages[message_id]})
        return self.answer(204, None)

    def do_PATCH(self) -> None:
        self.server.requests.append(("PATCH", self.path))
        message_id = self.path.removeprefix(f"{PATH}/messages/")
        content = self.content()
        if message_id not in self.server.messages:
            return self.answer(404, {"message": "Unknown Message", "code": 10008})
        self.server.messages[message_id] = content
        return self.answer(200, {"id": message_id, "content": content})

    def answer(self, status: int, data: Any) -> None:
        body = b"" if data is None else json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def server(settings: Settings) -> Iterator[Discord]:
    settings.WEBHOOK_ALLOW_LOCAL_HTTP = True
    settings.SITE_URL = "https://dice.example.org"
    running = Discord()
    thread = threading.Thread(target=running.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield running
    running.shutdown()
    running.server_close()


@pytest.fixture
def commit(
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> Callable[[], AbstractContextManager[Any]]:
    return lambda: django_capture_on_commit_callbacks(execute=True)


def results(game: Game) -> str:
    """The public events of the game's latest step, as its message lists them."""
    latest = WebhookDelivery.objects.filter(game=game, event="step.opened").latest("id")
    return "\n".join(f"- {text}" for text in latest.payload["events"])


def test_one_message_per_game_is_edited_in_place_as_the_game_moves(
    now: datetime, server: Discord, commit: Callable[[], AbstractContextManager[Any]]
) -> None:
    game = choice_game(3, title="Tuesday Choice")
    webhooks.set_for_game(game.pk, url=server.url, format="discord", active=True)
    check = f"Dice check: https://dice.example.org/games/{game.public_id}/verify/"
    with commit():
        postal.start_game(game.pk, now=now, seed=SEED)
    assert server.messages == {
        "1000": (
            "**Tuesday Choice**\npostal turn 1, open until 2026-11-25 18:00 UTC.\n"
            f"Orders owed by ann, bob, cy.\nLast result:\n{results(game)}\n{check}"
        )
    }
    with commit():
        reminders.send_reminders(datetime.fromisoformat("2026-11-24T18:00:00+00:00"))
    assert "Orders owed by ann, bob, cy.\nReminded: ann, bob, cy.\n" in server.messages["1000"]

    with commit():
        postal.resolve_now(game.pk, now=now + timedelta(hours=1))
    assert list(server.messages) == ["1000"]
    assert server.messages["1000"] == (
        "**Tuesday Choice**\npostal turn 2, open until 2026-11-25 19:00 UTC.\n"
        f"Orders owed by ann, bob, cy.\nLast result:\n{results(game)}\n{check}"
    )
    assert server.requests == [
        ("POST", f"{PATH}?wait=true"),
        *[("PATCH", f"{PATH}/messages/1000")] * 4,
    ]

    # Someone deleted the message in the channel: the next step posts it anew.
    server.messages.clear()
    with commit():
        postal.resolve_now(game.pk, now=now + timedelta(hours=2))
    assert list(server.messages) == ["1001"]
    assert server.requests[-2:] == [
        ("PATCH", f"{PATH}/messages/1000"),
        ("POST", f"{PATH}?wait=true"),
    ]
    assert WebhookMessage.objects.get(game=game).message_id == "1001"
    assert set(WebhookDelivery.objects.values_list("state", flat=True)) == {"sent"}


def test_the_end_of_the_game_is_a_new_message_and_the_last_edit(
    now: datetime, server: Discord, commit: Callable[[], AbstractContextManager[Any]]
) -> None:
    data = {
        "version": 1,
        "event": "game.finished",
        "game": {"id": "x", "title": "Tuesday", "url": "https://dice.example.org/games/x/verify/"},
        "events": ["bob scores 40"],
        "standings": [
            {"seat": "bob", "place": 1, "score": 40},
            {"seat": "ann", "place": 2, "score": 12},
        ],
    }
    assert discord.needs_someone(data) == (
        "Tuesday is over. bob won. Dice check: https://dice.example.org/games/x/verify/"
    )
    assert discord.text(discord.advanced({}, data)) == (
        "**Tuesday**\nThe game is over.\n1. bob (40)\n2. ann (12)\nLast result:\n"
        "- bob scores 40\nDice check: https://dice.example.org/games/x/verify/"
    )


def test_a_turn_that_is_not_everybodys_is_a_new_message() -> None:
    game = {"id": "x", "title": "Liar's night", "url": "https://dice.example.org/games/x/verify/"}
    step = {"number": 7, "name": "turn 7", "deadline": "2026-11-25T18:00:00Z"}
    turn = {"event": "step.opened", "game": game, "seats": ["ann", "bob", "cy"], "events": []}
    assert discord.needs_someone(turn | {"step": step | {"owed": ["bob"]}}) == (
        "Liar's night: bob, your turn (turn 7, until 2026-11-25 18:00 UTC)."
    )
    everybody = turn | {"step": step | {"owed": ["ann", "bob", "cy"]}}
    assert discord.needs_someone(everybody) is None


def test_a_delivery_posted_late_never_takes_the_message_back(
    now: datetime, server: Discord, commit: Callable[[], AbstractContextManager[Any]]
) -> None:
    game = choice_game(3, title="Tuesday Choice")
    webhooks.set_for_game(game.pk, url=server.url, format="discord", active=True)
    with commit():
        postal.start_game(game.pk, now=now, seed=SEED)
        postal.resolve_now(game.pk, now=now + timedelta(hours=1))
    first, second = WebhookDelivery.objects.order_by("id")
    shown = server.messages["1000"]
    assert "postal turn 2" in shown
    WebhookDelivery.objects.filter(pk=first.pk).update(state="pending", next_attempt_at=None)
    assert webhooks.send_batch([first.pk], now=now) == {first.pk: "sent"}
    assert server.messages["1000"] == shown
    assert WebhookMessage.objects.get(game=game).delivery_id == second.pk


def test_an_answer_that_is_not_a_message_fails_the_delivery(
    now: datetime, server: Discord, commit: Callable[[], AbstractContextManager[Any]]
) -> None:
    game = choice_game(3)
    # A plain receiver, not Discord: the post answers no message.
    webhooks.set_for_game(game.pk, url=server.url + "/plain", format="discord", active=True)
    with commit():
        postal.start_game(game.pk, now=now, seed=SEED)
    row = WebhookDelivery.objects.get()
    assert (row.state, row.last_error) == (
        "failed",
        "the answer was not a message (JSONDecodeError)",
    )
