"""The pages where tokens are made, listed and revoked: a signed-in player's
``/me/tokens/`` and the GM's ``/gm/tokens/``. A token is shown once, on the answer to the
form, and works at once; revoked, it is refused."""

from __future__ import annotations

import re
from datetime import datetime

import pytest
from django.test import Client

from games.community import players, tokens
from games.models import ApiToken, Game
from tests.factories import GMFactory, started_game
from tests.games.web.test_player_pages import signed_in

pytestmark = pytest.mark.django_db


def _secret(page: str) -> str:
    match = re.search(r'id="token-secret" type="text" readonly value="(pbp_[^"]+)"', page)
    assert match is not None, page
    return match[1]


def test_a_player_makes_a_token_for_one_seat_sees_it_once_and_revokes_it(now: datetime) -> None:
    game = started_game("liars-dice", now=now, players=2)
    Game.objects.filter(pk=game.pk).update(bots_allowed=True)
    seat = game.seats.get(position=0)
    client = signed_in(seat.email)
    page = client.get(f"/me/tokens/?seat={seat.pk}")
    assert page.status_code == 200
    assert f'<option value="{seat.pk}" selected>' in page.content.decode()
    made = client.post(
        "/me/tokens/", {"name": "my bot", "opens": str(seat.pk), "access": "play", "bot": "on"}
    )
    assert made.status_code == 200
    secret = _secret(made.content.decode())
    token = ApiToken.objects.get()
    assert (token.name, token.scope, token.access, token.bot, token.seat_id) == (
        "my bot",
        "seat",
        "play",
        True,
        seat.pk,
    )
    assert token.token_hash != secret and secret not in str(token.__dict__)
    # Declared a bot's: the seat says so from now on.
    seat.refresh_from_db()
    assert seat.bot is True
    # Never shown again: the list names it by its first characters only.
    listed = client.get("/me/tokens/").content.decode()
    assert secret not in listed
    assert f"{token.prefix}…" in listed
    answer = Client().get("/api/v1/me", HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert answer.status_code == 200
    assert answer.json()["seats"][0]["position"] == 0
    revoked = client.post(f"/me/tokens/{token.pk}/revoke/", follow=True)
    assert "is revoked" in revoked.content.decode()
    assert Client().get("/api/v1/me", HTTP_AUTHORIZATION=f"Bearer {secret}").status_code == 401


def test_a_read_only_bot_token_is_refused_with_why_and_nothing_made(now: datetime) -> None:
    game = started_game("liars-dice", now=now, players=2)
    seat = game.seats.get(position=0)
    client = signed_in(seat.email)
    refused = client.post(
        "/me/tokens/", {"name": "", "opens": "all", "access": "read", "bot": "on"}
    )
    assert refused.status_code == 400
    assert "A bot&#x27;s token plays: choose “read and play”." in refused.content.decode()
    assert not ApiToken.objects.exists()


def test_a_player_cannot_revoke_anothers_token(now: datetime) -> None:
    game = started_game("liars-dice", now=now, players=2)
    ann, bob = game.seats.order_by("position")
    client = signed_in(ann.email)
    players.player_for(bob.email, now=now)
    token, _ = tokens.mint(name="bob's", scope="seats", access="read", email=bob.email, now=now)
    answer = client.post(f"/me/tokens/{token.pk}/revoke/", follow=True)
    assert "not one of yours" in answer.content.decode()
    token.refresh_from_db()
    assert token.revoked_at is None


def test_a_gm_makes_a_token_for_their_games(client: Client, now: datetime) -> None:
    gm = GMFactory.create(is_staff=True)
    client.force_login(gm)
    made = client.post("/gm/tokens/", {"name": "league bot", "access": "play"})
    assert made.status_code == 200
    secret = _secret(made.content.decode())
    mine = started_game("liars-dice", now=now, players=2, gm=gm)
    listed = Client().get("/api/v1/gm/games", HTTP_AUTHORIZATION=f"Bearer {secret}").json()
    assert [game["id"] for game in listed] == [mine.pk]
    token = ApiToken.objects.get()
    assert client.post(f"/gm/tokens/{token.pk}/revoke/").status_code == 302
    assert (
        Client().get("/api/v1/gm/games", HTTP_AUTHORIZATION=f"Bearer {secret}").status_code == 401
    )
