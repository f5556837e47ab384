"""The reference bot (examples/bot.py) plays a whole game of each kind through the API of a
live server, as a bot's author would run it: a process of its own with one bot's token
per seat, until the game is over. Every order of the game is then the API's, made with
the seat's token, and every seat says it is played by a bot."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from games.community import tokens
from games.models import Game, Order
from tests.factories import started_game

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

BOT = Path(__file__).resolve().parents[2] / "examples" / "bot.py"


@pytest.mark.parametrize(
    ("engine", "players", "options"),
    [
        ("choice", 3, {}),
        ("choice", 3, {"variant": "suppenkasper"}),
        ("liars-dice", 3, {}),
        ("liars-dice", 2, {"profile": "genius_dm"}),
        ("liars-dice", 4, {"profile": "genius_team"}),
        ("drop-shy", 3, {}),
        ("dice-survivor", 3, {}),
        ("first-player", 3, {}),
    ],
    ids=[
        "choice",
        "suppenkasper",
        "liars-dice",
        "death-match",
        "team",
        "drop-shy",
        "dice-survivor",
        "first-player",
    ],
)
def test_the_reference_bot_plays_a_whole_game(
    engine: str,
    players: int,
    options: dict[str, Any],
    module_server: str,
    transactional_db: Any,
    settings: Any,
) -> None:
    # A bot looks several times a second here: the limit is the test's, not the bot's.
    settings.RATES = {**settings.RATES, "api-token": "100000/m"}
    game = started_game(engine, now=timezone.now(), players=players, options=options)
    Game.objects.filter(pk=game.pk).update(bots_allowed=True)
    raws = [
        tokens.mint(
            name="bot",
            scope="seat",
            access="play",
            bot=True,
            email=seat.email,
            seat=seat,
            now=timezone.now(),
        )[1]
        for seat in game.seats.order_by("position")
    ]
    arguments = [sys.executable, str(BOT), "--server", module_server, "--every", "0.02"]
    for raw in raws:
        arguments += ["--token", raw]
    done = subprocess.run(arguments, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    game.refresh_from_db()
    assert game.status == Game.Status.FINISHED, done.stdout[-2000:]
    played = Order.objects.filter(step__game=game).exclude(source=Order.Source.DEFAULT)
    assert played.exists()
    assert set(played.values_list("source", flat=True)) == {"api"}
    assert played.filter(token__isnull=True).count() == 0
    assert list(game.seats.values_list("bot", flat=True)) == [True] * players
    assert "refused" not in done.stdout, done.stdout[-2000:]
