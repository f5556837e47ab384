"""Drop-Shy in a real browser on a phone-sized screen: the player opens the emailed link,
taps a highlighted cell of the board, and the die is placed there."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from django.utils import timezone
from pytest_django.fixtures import Settings

from games.models import Game, Order, Seat, Step
from games.postal import access
from tests.factories import seat_page, started_game

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


def test_a_tap_on_a_highlighted_cell_places_the_die_there(
    web_server: str, browser: Browser, settings: Settings
) -> None:
    settings.SITE_URL = web_server
    game = started_game(
        "drop-shy",
        now=timezone.now(),
        players=2,
        title="Shy by post",
        options={"dice_per_player": 3},
    )
    step = Step.objects.get(game=game, number=game.step_number)
    seat = Seat.objects.get(game=game, position=step.prompts[0]["seat"])
    token = access.mint([seat], now=timezone.now())[seat.position]

    page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    page.goto(f"{web_server}/p/{token}/")
    page.click("button[type=submit]")
    page.wait_for_url(f"{web_server}{seat_page(game, seat.position)}")
    cells = page.locator("#menu-form button.cell-button")
    values = sorted(cells.evaluate_all("buttons => buttons.map(b => b.value)"))
    state = game.rules.state_from_json(game.state)
    legal = game.rules.view(state, seat.position)["legal"]
    assert values == sorted(f"place {x} {y}" for x, y in legal)
    highlighted = page.locator("#menu-form svg rect.legal")
    assert highlighted.count() == len(legal)

    target = cells.last
    value = target.get_attribute("value")
    assert value is not None
    match = re.fullmatch(r"place (-?\d+) (-?\d+)", value)
    assert match is not None
    x, y = int(match[1]), int(match[2])
    with page.expect_navigation():
        target.click()
    page.wait_for_url(f"{web_server}{seat_page(game, seat.position)}")
    assert f"Your order is accepted: place {x} {y}." in page.content()
    order = Order.objects.get(seat=seat)
    assert (order.source, order.canonical) == ("web", f"place {x} {y}")
    after = game.rules.state_from_json(Game.objects.get(pk=game.pk).state)
    assert (x, y) in {(placed.x, placed.y) for placed in after.board}
