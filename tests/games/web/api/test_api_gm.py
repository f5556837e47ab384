"""The API of a GM's token (games/web/api/gm.py): the GM's games, and the panel's actions
taken by the panel's own forms and writers."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.test import Client

from games.community import press, tokens
from games.models import ApiToken, Game, GMAction, Message, TokenAction
from tests.factories import GMFactory, started_game

pytestmark = pytest.mark.django_db


def _token(gm: Any, now: datetime, access: str = "play") -> str:
    return tokens.mint(name="panel", scope="gm", access=access, gm=gm, now=now)[1]


def _act(client: Client, raw: str, game: Game, action: str, fields: dict[str, Any]) -> Any:
    return client.post(
        f"/api/v1/gm/games/{game.pk}/actions/{action}",
        data=json.dumps({"fields": fields}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )


def test_a_gm_token_lists_the_gms_games_only(client: Client, now: datetime) -> None:
    gm = GMFactory.create()
    mine = started_game("liars-dice", now=now, players=2, gm=gm)
    theirs = started_game("liars-dice", now=now, players=2)
    raw = _token(gm, now)
    listed = client.get("/api/v1/gm/games", HTTP_AUTHORIZATION=f"Bearer {raw}").json()
    assert [item["id"] for item in listed] == [mine.pk]
    detail = client.get(f"/api/v1/gm/games/{mine.pk}", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert [seat["name"] for seat in detail.json()["seats"]] == ["ann", "bob"]
    other = client.get(f"/api/v1/gm/games/{theirs.pk}", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert other.status_code == 404
    # A GM's token opens no seat.
    seat = client.get(f"/api/v1/seats/{mine.pk}/0", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert seat.status_code == 404


def test_a_gm_token_pauses_and_extends_as_the_panel_does(client: Client, now: datetime) -> None:
    gm = GMFactory.create()
    game = started_game("liars-dice", now=now, players=2, gm=gm)
    raw = _token(gm, now)
    paused = _act(client, raw, game, "pause", {"reason": "holiday"})
    assert paused.status_code == 200, paused.content
    assert paused.json() == {"detail": "The game is paused."}
    game.refresh_from_db()
    assert game.status == Game.Status.PAUSED
    logged = GMAction.objects.get(game=game)
    assert (logged.kind, logged.reason, logged.gm_id) == ("pause", "holiday", gm.pk)
    again = _act(client, raw, game, "pause", {})
    assert again.status_code == 422
    assert again.json()["detail"] == "only a running game can be paused; this one is paused"
    assert _act(client, raw, game, "resume", {}).status_code == 200
    later = (now + timedelta(days=5)).strftime("%Y-%m-%dT%H:%M")
    extended = _act(client, raw, game, "extend", {"deadline": later, "step": game.step_number})
    assert extended.status_code == 200, extended.content
    assert extended.json()["detail"].startswith("The deadline of step 1 is now")
    assert list(TokenAction.objects.order_by("id").values_list("kind", flat=True)) == [
        "gm",
        "gm",
        "gm",
    ]


def test_a_read_gm_token_acts_on_nothing(client: Client, now: datetime) -> None:
    gm = GMFactory.create()
    game = started_game("liars-dice", now=now, players=2, gm=gm)
    answer = _act(client, _token(gm, now, access="read"), game, "pause", {})
    assert answer.status_code == 403
    game.refresh_from_db()
    assert game.status == Game.Status.RUNNING
    assert not GMAction.objects.exists()


def test_resolving_asks_for_confirmation(client: Client, now: datetime) -> None:
    gm = GMFactory.create()
    game = started_game("liars-dice", now=now, players=2, gm=gm)
    raw = _token(gm, now)
    unconfirmed = _act(client, raw, game, "resolve", {"step": 1})
    assert unconfirmed.status_code == 422
    assert game.steps.get(number=1).status == "open"
    done = _act(client, raw, game, "resolve", {"step": 1, "confirmed": "yes"})
    assert done.status_code == 200, done.content
    assert game.steps.get(number=1).status != "open"
    assert _act(client, raw, game, "no-such", {}).status_code == 404
    assert ApiToken.objects.get().last_used_at == now


def test_a_gm_token_reads_every_message_and_announces(client: Client, now: datetime) -> None:
    gm = GMFactory.create()
    game = started_game("liars-dice", now=now, players=2, gm=gm)
    press.send(game_id=game.pk, position=0, to=1, text="psst, bob", source="web", now=now)
    raw = _token(gm, now)
    read = client.get(f"/api/v1/gm/games/{game.pk}/messages", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert [(m["sender"], m["recipient"], m["text"]) for m in read.json()["messages"]] == [
        ("ann", "bob", "psst, bob")
    ]
    sent = client.post(
        f"/api/v1/gm/games/{game.pk}/messages",
        data=json.dumps({"text": "Deadline tonight, all."}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    assert sent.json() == {"detail": "Your announcement is sent to every player."}
    announced = Message.objects.get(sender__isnull=True)
    assert (announced.text, announced.source, announced.recipient_id) == (
        "Deadline tonight, all.",
        "api",
        None,
    )
    assert TokenAction.objects.get().words == "announcement to every player"
