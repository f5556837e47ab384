"""The public dice check is addressed by a game's random public id: nobody can list the
games by counting. The numbered address of emails sent before still opens for whoever may
know the game (one of its seats in the browser, its GM)."""

from __future__ import annotations

import re
import secrets
from datetime import datetime

import pytest
from django.contrib.auth.models import User
from django.test import Client

from games.models import Game, Seat, new_public_id
from games.notify import reports
from games.postal import access
from tests.factories import GameFactory, GMFactory, choice_game, started_game

pytestmark = pytest.mark.django_db


def anyone() -> Client:
    return Client(REMOTE_ADDR=f"10.{secrets.randbelow(256)}.{secrets.randbelow(256)}.3")


def test_every_game_has_its_own_random_public_id(now: datetime) -> None:
    games = [choice_game(2) for _ in range(3)]
    ids = [game.public_id for game in games]
    assert len(set(ids)) == 3
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{16}", public_id) for public_id in ids)
    assert not any(public_id.isdigit() for public_id in (new_public_id() for _ in range(200)))


def test_the_dice_check_answers_at_the_public_id_and_emails_link_there(now: datetime) -> None:
    game = started_game(now=now, players=2)
    url = f"/games/{game.public_id}/verify/"

    page = anyone().get(url)

    assert page.status_code == 200
    assert game.commitment in page.content.decode()
    assert reports.verify_url(game) == f"http://127.0.0.1:8000{url}"


def test_counting_game_numbers_finds_nothing(now: datetime) -> None:
    games = [started_game(now=now, players=2) for _ in range(3)]
    visitor = anyone()
    for game in games:
        response = visitor.get(f"/games/{game.pk}/verify/")
        assert response.status_code == 404
        assert game.title.encode() not in response.content
    assert visitor.get("/games/not-a-game-id/verify/").status_code == 404


def test_the_numbered_address_opens_for_a_seat_of_the_game_and_its_gm(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now, players=2)
    player = anyone()
    seat = Seat.objects.get(game=game, position=0)
    player.post(f"/p/{access.mint([seat], now=now)[0]}/")
    gm, other_gm = Client(), Client()
    gm.force_login(game.gm)
    other_gm.force_login(User.objects.get(username=GMFactory.create(is_staff=True).username))
    game.gm.is_staff = True
    game.gm.save()

    for browser in (player, gm):
        response = browser.get(f"/games/{game.pk}/verify/")
        assert (response.status_code, response["Location"]) == (
            302,
            f"/games/{game.public_id}/verify/",
        )
    assert other_gm.get(f"/games/{game.pk}/verify/").status_code == 404
    other = started_game(now=now, players=2)
    assert player.get(f"/games/{other.pk}/verify/").status_code == 404


def test_a_draft_game_has_no_dice_check(now: datetime) -> None:
    draft = GameFactory.create(status=Game.Status.DRAFT, seats=2)
    assert anyone().get(f"/games/{draft.public_id}/verify/").status_code == 404
