"""What the browser tests of every game share: one game of each engine and profile, started
with known dice, and a player's way in (the magic link and its Continue button)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from django.contrib.auth.models import User
from django.utils import timezone

from games import postal
from games.engines import registry
from games.models import Game, Order, Seat
from games.postal import access
from tests.factories import seat_page

if TYPE_CHECKING:
    from playwright.sync_api import Page, ViewportSize

PHONE: ViewportSize = {"width": 390, "height": 844}
DESKTOP: ViewportSize = {"width": 1280, "height": 900}
WIDTHS = {"phone": PHONE, "desktop": DESKTOP}
PASSWORD = "secret-pass-1"


class Spec(TypedDict):
    """A game for ``started_game(now=..., gm=..., **spec)``."""

    engine_key: str
    title: str
    players: int
    options: dict[str, Any]


# One game of each engine and profile.
GAMES = [
    Spec(engine_key="choice", title="Choice for three", players=3, options={}),
    Spec(
        engine_key="choice",
        title="Suppenkasper night",
        players=3,
        options={"variant": "suppenkasper"},
    ),
    Spec(engine_key="liars-dice", title="Liar's Dice at the pub", players=3, options={}),
    Spec(engine_key="liars-dice", title="Death Match", players=2, options={"profile": "genius_dm"}),
    Spec(
        engine_key="liars-dice",
        title="Team Liar's Dice",
        players=4,
        options={"profile": "genius_team"},
    ),
    Spec(engine_key="drop-shy", title="Drop-Shy", players=3, options={}),
    Spec(engine_key="dice-survivor", title="Dice Survivor", players=3, options={}),
    Spec(engine_key="first-player", title="The First Player", players=3, options={}),
]


def owing(game: Game) -> Seat:
    """The first seat the open step asks for an order (the one on turn, in a game of
    turns)."""
    step = game.steps.get(number=Game.objects.get(pk=game.pk).step_number)
    return game.seats.get(position=step.prompts[0]["seat"])


def mid_game(game: Game, steps: int) -> Game:
    """``game`` (started with early processing) played on by ``steps`` steps, each seat
    owing an order sending what its game's first autopilot would play (the NMR default
    where the game has none), as a player would from the page."""
    for _ in range(steps):
        game.refresh_from_db()
        number = game.step_number
        while game.step_number == number and game.status == Game.Status.RUNNING:
            engine = game.rules
            state = engine.state_from_json(game.state)
            sent = set(
                Order.objects.filter(step__game=game, step__number=number).values_list(
                    "seat__position", flat=True
                )
            )
            position = next(p.seat for p in engine.prompts(state) if p.seat not in sent)
            autopilots = registry.strategies(game.engine)
            order = (
                autopilots[0].play(state, position)
                if autopilots
                else engine.default(state, position)
            )
            postal.accept_order(
                game_id=game.pk,
                position=position,
                text=engine.canonical(state, position, order),
                source=Order.Source.WEB,
                now=timezone.now(),
                step_number=number,
            )
            game.refresh_from_db()
    return game


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
    """The GM opens the panel, which sends them to its sign-in page; signed in, they are
    back at the panel."""
    page.goto(f"{web_server}/gm/")
    page.wait_for_url(f"{web_server}/gm/sign-in/?next=/gm/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    with page.expect_navigation(url=f"{web_server}/gm/"):
        page.get_by_role("button", name="Sign in", exact=True).click()
