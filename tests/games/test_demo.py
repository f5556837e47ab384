from __future__ import annotations

import re

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone
from pytest_django.fixtures import Settings

from games.models import Game
from games.postal import access

pytestmark = pytest.mark.django_db


def test_the_demo_is_created_once_and_prints_working_links(
    capsys: pytest.CaptureFixture[str], settings: Settings
) -> None:
    settings.DEBUG = True
    call_command("demo")
    call_command("demo")
    out = capsys.readouterr().out
    game = Game.objects.get()
    assert (game.title, game.status, game.gm.username) == (
        "Demo: Choice for three",
        "running",
        "gm",
    )
    assert game.gm.check_password("gm") is True
    links = re.findall(r"^  (ann|bob|cy) +http://127\.0\.0\.1:8000/p/(\S+)/$", out, re.M)
    assert [name for name, _ in links] == ["ann", "bob", "cy"] * 2
    for name, token in links:
        seat = access.seat_for(token, now=timezone.now())
        assert seat is not None and seat.name == name and seat.game == game


def test_the_demo_refuses_to_run_outside_the_embedded_default(settings: Settings) -> None:
    settings.DEBUG = False
    with pytest.raises(CommandError, match="the demo is for the embedded default"):
        call_command("demo")
    assert Game.objects.count() == 0
