"""A player's own webhook (games.notify.player_hooks): set on a seat's settings page, tried
with a test post, posted to by a rung of the reminder ladder; while it fails, the rung goes
by email and the ledger says why."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest
from pytest_django.fixtures import Settings

from games import postal
from games.models import PlayerPost, PlayerWebhook, Seat, Step
from games.notify import ledger, player_hooks, reminders
from games.notify.ladder import WEBHOOK, Rung
from moderator.mail.models import OutboundEmail
from tests.factories import started_game
from tests.games.notify.test_push import browser_of
from tests.games.notify.test_webhooks import Receiver

pytestmark = pytest.mark.django_db


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch, settings: Settings) -> Iterator[Receiver]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    settings.WEBHOOK_ALLOW_LOCAL_HTTP = True
    settings.SITE_URL = "https://dice.example.org"
    server = Receiver()
    yield server
    server.close()


def test_a_rung_posts_to_the_players_own_webhook(now: datetime, receiver: Receiver) -> None:
    game = started_game(now=now, early_processing=False)
    bob = browser_of(game, 1, now)
    page = bob.post(
        f"/play/{game.pk}/1/webhook/", {"url": receiver.url, "format": "json"}, follow=True
    ).content.decode()
    assert (
        "Your webhook is set: http://127.0.0.1:"
        f"{receiver.server.server_port}/…. A rung of your ladder may post to it now."
    ) in page
    seat = Seat.objects.select_related("game").get(game=game, position=1)
    postal.choose_ladder(seat, [Rung(8, WEBHOOK)], everywhere=False)
    deadline = Step.objects.get(game=game).deadline
    reminders.send_reminders(deadline - timedelta(hours=8))
    reminders.send_reminders(deadline - timedelta(hours=7))
    [post] = PlayerPost.objects.all()
    assert post.dedupe_key == (f"player-post:reminder:{game.pk}:1:1:8:{int(deadline.timestamp())}")
    assert not OutboundEmail.objects.filter(kind="reminder", to="bob@example.org").exists()
    assert player_hooks.send_batch([post.pk], now=now) == {post.pk: "sent"}
    assert receiver.posts == [
        {
            "version": 1,
            "event": "player.reminder",
            "title": f"{game.title}: postal turn 1, your order is due Wed 25 Nov 2026 18:00 UTC",
            "body": "Postal turn: rounds 1-2: one line per round, e.g. W5 1+3 3+4",
            "url": f"https://dice.example.org/play/{game.pk}/1/",
            "tag": f"game-{game.pk}-seat-1",
        }
    ]
    assert PlayerWebhook.objects.get().last_sent_at == now


def test_while_the_webhook_fails_the_rung_goes_by_email_and_the_ledger_says_why(
    now: datetime, receiver: Receiver
) -> None:
    game = started_game(now=now, early_processing=False)
    bob = browser_of(game, 1, now)
    bob.post(f"/play/{game.pk}/1/webhook/", {"url": receiver.url, "format": "discord"})
    receiver.answers = [500]
    page = bob.post(f"/play/{game.pk}/1/webhook/", {"test": "1"}, follow=True).content.decode()
    assert "A test post is on its way to your webhook." in page
    [test] = PlayerPost.objects.all()
    assert player_hooks.send_batch([test.pk], now=now) == {test.pk: "pending"}
    assert receiver.posts[0]["content"].startswith(f"**A test from {game.title}**\n")
    page = bob.get(f"/play/{game.pk}/1/settings/").content.decode()
    assert "The last post failed 23 Nov 18:00 UTC: the server answered 500" in page

    seat = Seat.objects.select_related("game").get(game=game, position=1)
    postal.choose_ladder(seat, [Rung(2, WEBHOOK)], everywhere=False)
    deadline = Step.objects.get(game=game).deadline
    reminders.send_reminders(deadline - timedelta(hours=2))
    assert OutboundEmail.objects.filter(kind="reminder", to="bob@example.org").count() == 1
    assert [(row.what, row.why) for row in ledger.of_seat(seat)] == [
        (
            "postal turn 1: the reminder 2 hours before came as an email",
            "Your webhook is not set, or its last post failed.",
        )
    ]


def test_a_webhook_on_a_private_network_is_refused_and_one_is_removed(
    now: datetime, receiver: Receiver, settings: Settings
) -> None:
    game = started_game(now=now)
    bob = browser_of(game, 1, now)
    settings.WEBHOOK_ALLOW_LOCAL_HTTP = False
    page = bob.post(
        f"/play/{game.pk}/1/webhook/",
        {"url": "https://10.0.0.7/hook", "format": "json"},
        follow=True,
    ).content.decode()
    assert (
        "Your webhook was not set: the address leads to this machine or a private network, "
        "where events are not sent."
    ) in page
    assert not PlayerWebhook.objects.exists()
    settings.WEBHOOK_ALLOW_LOCAL_HTTP = True
    bob.post(f"/play/{game.pk}/1/webhook/", {"url": receiver.url, "format": "slack"})
    assert PlayerWebhook.objects.get().format == "slack"
    removed = bob.post(f"/play/{game.pk}/1/webhook/", {"remove": "1"}, follow=True)
    assert "Your webhook is removed." in removed.content.decode()
    assert not PlayerWebhook.objects.exists()
