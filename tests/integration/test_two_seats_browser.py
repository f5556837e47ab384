"""One browser, two seats of one game (a household sharing a phone): each link opens its
own seat's page, and each page orders for its own seat, in Chromium."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from django.utils import timezone
from pytest_django.fixtures import Settings

from games.engines.choice.rules import ChoiceEngine
from games.models import Game, Order, Seat
from games.postal import access
from tests.factories import started_game

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

CHOICE = ChoiceEngine()


def nmr_text(game: Game, position: int) -> str:
    state = CHOICE.state_from_json(Game.objects.get(pk=game.pk).state)
    return CHOICE.canonical(state, position, CHOICE.default(state, position))


def test_two_seats_of_one_game_order_each_for_their_own_in_one_browser(
    web_server: str, browser: Browser, settings: Settings
) -> None:
    settings.SITE_URL = web_server
    game = started_game(now=timezone.now(), players=3)
    ann, bob = (Seat.objects.get(game=game, position=position) for position in (0, 1))
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    for seat in (ann, bob):
        token = access.mint([seat], now=timezone.now())[seat.position]
        page.goto(f"{web_server}/p/{token}/")
        page.click("button[type=submit]")
        page.wait_for_url(f"{web_server}/play/{game.pk}/{seat.position}/")
        assert page.locator("#seat-name strong").inner_text() == seat.name

    # Both pages open in the one context (two tabs); bob's is the later link.
    ann_page = context.new_page()
    ann_page.goto(f"{web_server}/play/{game.pk}/0/")
    assert ann_page.locator("#seat-name strong").inner_text() == "ann"
    assert ann_page.locator("#other-seats a").inner_text() == "bob's seat"
    for tab, seat in ((ann_page, ann), (page, bob)):
        text = nmr_text(game, seat.position)
        tab.locator("#typed summary").click()
        tab.fill("#text-form textarea", text)
        with tab.expect_navigation():
            tab.click("#text-form button[type=submit]")
        tab.wait_for_url(f"{web_server}/play/{game.pk}/{seat.position}/")
        shown = "; ".join(text.splitlines())
        assert tab.locator(".messages li").inner_text() == f"Your order is accepted: {shown}."

    assert list(
        Order.objects.filter(step__game=game).order_by("id").values_list("seat__name", "canonical")
    ) == [("ann", nmr_text(game, 0)), ("bob", nmr_text(game, 1))]
    context.close()
