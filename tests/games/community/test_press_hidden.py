"""Hidden information of messages between players, tested pairwise (DESIGN.md section 7):
a private message between two seats is read by those two and the GM only, never by the
third seat, a spectator (the public page, the replay) or a webhook, in any page or email;
a message the GM hid is read by nobody but the GM."""

from __future__ import annotations

from datetime import datetime
from html import escape

import pytest
from django.test import Client
from time_machine import TimeMachineFixture

from games.community import press
from games.models import Game, Publicity, Seat, Webhook, WebhookDelivery
from games.postal import access
from tests.factories import GMFactory, started_game
from tests.games.playing import QUICK_CHOICE, play_out
from tests.games.web.test_hidden import readable_by

pytestmark = pytest.mark.django_db

# Each private message, by its two seats; public and hidden words.
PRIVATE = {(0, 1): "ann-to-bob 7Q2", (1, 2): "bob-to-cy 8R3", (2, 0): "cy-to-ann 9S4"}
PUBLIC = "public words 1P1"
HIDDEN_PUBLIC = "hidden public 5H5"
HIDDEN_PRIVATE = "hidden private 6H6"


@pytest.fixture(autouse=True)
def frozen(time_machine: TimeMachineFixture, now: datetime) -> None:
    time_machine.move_to(now, tick=False)


def with_messages(game: Game, now: datetime) -> None:
    """PRIVATE, PUBLIC, and a public and a private message the GM hid."""
    for (sender, recipient), text in PRIVATE.items():
        press.send(game_id=game.pk, position=sender, to=recipient, text=text, source="web", now=now)
    press.send(game_id=game.pk, position=0, to=None, text=PUBLIC, source="web", now=now)
    for text, to in ((HIDDEN_PUBLIC, None), (HIDDEN_PRIVATE, 2)):
        message = press.send(game_id=game.pk, position=1, to=to, text=text, source="web", now=now)
        press.hide(game.pk, message.pk, reason="off topic", by=None, now=now)


def everything_of(game: Game, position: int, now: datetime) -> str:
    """What the seat can read (``test_hidden.readable_by``: its pages, their JSON, every
    email to it) and its messages page, opened in a fresh browser."""
    seat = Seat.objects.get(game=game, position=position)
    browser = Client(REMOTE_ADDR=f"10.50.0.{position + 1}")
    token = access.mint([seat], now=now)[position]
    assert browser.post(f"/p/{token}/").status_code == 302
    page = browser.get(f"/play/{game.pk}/{position}/messages/")
    assert page.status_code == 200
    return readable_by(game, position, now) + page.content.decode()


def found(text: str, seen: str) -> bool:
    return text in seen or escape(text) in seen


def test_a_private_message_is_read_by_its_two_seats_only_and_a_hidden_one_by_nobody(
    now: datetime,
) -> None:
    game = started_game(now=now, players=3)
    with_messages(game, now)
    for reader in range(3):
        seen = everything_of(game, reader, now)
        assert found(PUBLIC, seen), reader
        for pair, text in PRIVATE.items():
            assert found(text, seen) is (reader in pair), (reader, pair)
        assert (found(HIDDEN_PUBLIC, seen), found(HIDDEN_PRIVATE, seen)) == (False, False)
        # The GM's log names a hidden private message without its seats.
        assert "The GM hid a private message" in seen
        assert "The GM hid a message of bob to everyone" in seen


def test_the_gm_reads_every_message_hidden_ones_too(now: datetime) -> None:
    gm = GMFactory.create(is_staff=True)
    game = started_game(now=now, players=3, gm=gm)
    with_messages(game, now)
    client = Client()
    client.force_login(gm)
    page = client.get(f"/gm/{game.pk}/messages/").content.decode()
    for text in [*PRIVATE.values(), PUBLIC, HIDDEN_PUBLIC, HIDDEN_PRIVATE]:
        assert found(text, page), text


def test_a_spectator_reads_no_message_of_a_running_public_game(now: datetime) -> None:
    game = started_game(now=now, players=3)
    Game.objects.filter(pk=game.pk).update(public=Publicity.YES)
    with_messages(game, now)
    page = Client().get(f"/games/{game.public_id}/")
    assert page.status_code == 200
    for text in [*PRIVATE.values(), PUBLIC, HIDDEN_PUBLIC, HIDDEN_PRIVATE]:
        assert not found(text, page.content.decode()), text


def test_the_replay_and_webhooks_of_a_finished_game_hold_no_message(now: datetime) -> None:
    game = started_game(now=now, players=["ann", "bob", "cy"], **QUICK_CHOICE)
    Webhook.objects.create(game=game, url="https://hooks.example.org/game", format="json")
    with_messages(game, now)
    game = play_out(game, sending={"ann", "bob", "cy"})
    Game.objects.filter(pk=game.pk).update(public=Publicity.YES)
    client = Client()
    pages = [client.get(f"/games/{game.public_id}/").content.decode()]
    for step in range(1, game.step_number + 1):
        response = client.get(f"/games/{game.public_id}/replay/?step={step}")
        assert response.status_code == 200
        pages.append(response.content.decode())
    pages.append(str(list(WebhookDelivery.objects.values_list("payload", flat=True))))
    assert WebhookDelivery.objects.exists()
    seen = "\n".join(pages)
    for text in [*PRIVATE.values(), PUBLIC, HIDDEN_PUBLIC, HIDDEN_PRIVATE]:
        assert not found(text, seen), text
