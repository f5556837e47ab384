"""Factories without surprises: every default is visible here."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User

from games import postal
from games.models import Game

NAMES = ["ann", "bob", "cy", "dee", "eve", "fay", "gus", "hal"]


class GMFactory(factory.django.DjangoModelFactory[User]):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"gm{n}")
    email = factory.LazyAttribute(lambda gm: f"{gm.username}@example.org")


def seat_page(game: Game, position: int) -> str:
    """The address of a seat's page (``games:seat``): every seat of a game has its own,
    and a magic link's POST redirects to it."""
    return f"/play/{game.pk}/{position}/"


def choice_game(players: int = 3, gm: User | None = None, **kwargs: Any) -> Game:
    """A Choice game, not started, for ``players`` seats named ann, bob, cy, ..."""
    kwargs.setdefault("schedule_spec", {"kind": "interval", "seconds": 48 * 3600})
    return postal.create_game(
        gm=gm or GMFactory.create(),
        engine_key="choice",
        title=kwargs.pop("title", "Test Choice"),
        players=[postal.Player(name=name, email=f"{name}@example.org") for name in NAMES[:players]],
        **kwargs,
    )


def survivor_game(now: datetime, seed: bytes = bytes(range(32))) -> Game:
    """A started Dice Survivor game of ann, bob and cy, hourly steps, dice from ``seed``."""
    game = postal.create_game(
        gm=GMFactory.create(),
        engine_key="dice-survivor",
        title="Survivors",
        players=[postal.Player(name, f"{name}@example.org") for name in ("ann", "bob", "cy")],
        schedule_spec={"kind": "interval", "seconds": 3600},
    )
    return postal.start_game(game.pk, now=now, seed=seed)
