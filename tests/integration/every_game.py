"""What the browser tests of every game share: one game of each engine and profile, started
with known dice, and a player's way in (the magic link and its Continue button)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib.auth.models import User
from django.utils import timezone

from games import postal
from games.models import Game, Seat
from games.postal import access
from tests.factories import NAMES, seat_page

if TYPE_CHECKING:
    from playwright.sync_api import Page, ViewportSize

PHONE: ViewportSize = {"width": 390, "height": 844}
DESKTOP: ViewportSize = {"width": 1280, "height": 900}
WIDTHS = {"phone": PHONE, "desktop": DESKTOP}
SEED = bytes(range(32))
PASSWORD = "secret-pass-1"
# One game of each engine and profile: (title, engine, players, options).
GAMES = [
    ("Choice for three", "choice", 3, {}),
    ("Suppenkasper night", "choice", 3, {"variant": "suppenkasper"}),
    ("Liar's Dice at the pub", "liars-dice", 3, {}),
    ("Death Match", "liars-dice", 2, {"profile": "genius_dm"}),
    ("Team Liar's Dice", "liars-dice", 4, {"profile": "genius_team"}),
    ("Drop-Shy", "drop-shy", 3, {}),
    ("Dice Survivor", "dice-survivor", 3, {}),
    ("The First Player", "first-player", 3, {}),
]


def started(gm: User, title: str, engine: str, players: int, options: dict[str, Any]) -> Game:
    game = postal.create_game(
        gm=gm,
        engine_key=engine,
        title=title,
        players=[postal.Player(name, f"{name}@example.org") for name in NAMES[:players]],
        options=options,
        schedule_spec={"kind": "interval", "seconds": 48 * 3600},
    )
    return postal.start_game(game.pk, now=timezone.now(), seed=SEED)


def owing(game: Game) -> Seat:
    """The first seat the open step asks for an order (the one on turn, in a game of
    turns)."""
    step = game.steps.get(number=Game.objects.get(pk=game.pk).step_number)
    return game.seats.get(position=step.prompts[0]["seat"])


def open_link(page: Page, web_server: str, seat: Seat) -> None:
    """The seat's magic link opened and continued: the page is the seat's page."""
    token = access.mint([seat], now=timezone.now())[seat.position]
    page.goto(f"{web_server}/p/{token}/")
    with page.expect_navigation(url=f"{web_server}{seat_page(seat.game, seat.position)}"):
        page.click("main button[type=submit]")


def gm_user(username: str = "host") -> User:
    user = User.objects.create_user(username, f"{username}@example.org", PASSWORD)
    user.is_staff = True
    user.save()
    return user


def sign_in(page: Page, web_server: str, username: str = "host") -> None:
    """The GM signs in through the admin's login form, which sends them to the GM panel."""
    page.goto(f"{web_server}/admin/login/?next=/gm/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    with page.expect_navigation(url=f"{web_server}/gm/"):
        page.click("input[type=submit]")
