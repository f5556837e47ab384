"""Ordering with the keyboard alone in Chromium, at phone and desktop widths: the player
opens the link, moves with Tab, chooses with the arrow keys and sends with Enter (no mouse
click anywhere), and every place the focus stops on the way shows the site's focus ring
(its :focus-visible style)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING

import pytest
from django.core.cache import cache
from django.utils import timezone
from pytest_django.fixtures import Settings

from games.models import Game, Order, Seat
from games.postal import access
from tests.factories import seat_page, started_game
from tests.integration.every_game import GAMES, WIDTHS, gm_user

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

# The focus ring of moderator/static/moderator/site.css, as Chromium computes it.
RING = "rgb(240, 165, 0) solid 3px"
# What the focused element is and how its outline looks, and whether :focus-visible holds.
FOCUSED = """() => {
    const e = document.activeElement;
    const style = getComputedStyle(e);
    return {
        what: e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
            + (['A', 'BUTTON', 'SUMMARY'].includes(e.tagName) ? ' ' + e.textContent.trim() : ''),
        ring: `${style.outlineColor} ${style.outlineStyle} ${style.outlineWidth}`,
        visible: e.matches(':focus-visible'),
    };
}"""


class Keyboard:
    """A page driven by keys only; every focus stop is recorded with its ring."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.stops: list[tuple[str, str, bool]] = []

    def tab_to(self, selector: str, limit: int = 80) -> None:
        """Tab until the element ``selector`` names has the focus."""
        for _ in range(limit):
            self.page.keyboard.press("Tab")
            focused = self.page.evaluate(FOCUSED)
            self.stops.append((focused["what"], focused["ring"], focused["visible"]))
            if self.page.evaluate(f"document.activeElement.matches({selector!r})"):
                return
        pytest.fail(f"{limit} presses of Tab never reached {selector}")

    def choose(self, select: str, value: str) -> None:
        """The focused select moved to ``value`` with the arrow keys."""
        values: list[str] = self.page.locator(select).evaluate(
            "s => [...s.options].map(o => o.value)"
        )
        now = self.page.locator(select).input_value()
        steps = values.index(value) - values.index(now)
        for _ in range(abs(steps)):
            self.page.keyboard.press("ArrowDown" if steps > 0 else "ArrowUp")
        assert self.page.locator(select).input_value() == value

    def enter(self, url: str) -> None:
        with self.page.expect_navigation(url=url):
            self.page.keyboard.press("Enter")

    def without_ring(self) -> list[tuple[str, str, bool]]:
        """The focus stops that did not show the site's ring."""
        return [stop for stop in self.stops if (stop[1], stop[2]) != (RING, True)]


@pytest.fixture(params=list(WIDTHS))
def page(request: pytest.FixtureRequest, module_browser: Browser) -> Iterator[Page]:
    cache.clear()  # rate-limit counters of earlier tests
    context = module_browser.new_context(viewport=WIDTHS[request.param])
    yield context.new_page()
    context.close()


def opened(keys: Keyboard, web_server: str, seat: Seat) -> str:
    """The seat's link opened (as from the email) and continued by keyboard: the seat's
    page address."""
    token = access.mint([seat], now=timezone.now())[seat.position]
    keys.page.goto(f"{web_server}/p/{token}/")
    keys.tab_to("main button[type=submit]")
    url = f"{web_server}{seat_page(seat.game, seat.position)}"
    keys.enter(url)
    return url


def test_the_site_has_a_focus_ring_for_the_keyboard(
    transactional_db: None, module_server: str, page: Page
) -> None:
    page.goto(f"{module_server}/")
    rules: list[str] = page.evaluate(
        """() => [...document.styleSheets].flatMap(sheet => [...sheet.cssRules])
            .filter(rule => (rule.selectorText || '').includes(':focus-visible'))
            .map(rule => rule.style.outline)"""
    )
    keys = Keyboard(page)
    keys.tab_to("a.brand")

    assert rules == ["rgb(240, 165, 0) solid 3px"]
    assert keys.stops == [("a Moderator", RING, True)]


def test_a_liars_dice_bid_is_made_with_the_keyboard_alone(
    transactional_db: None, now: datetime, module_server: str, page: Page, settings: Settings
) -> None:
    settings.SITE_URL = module_server
    game = started_game(now=timezone.now(), gm=gm_user(), **GAMES[2])
    keys = Keyboard(page)
    url = opened(keys, module_server, game.seats.get(position=0))
    quantity = "#menu-form select[name=quantity]"
    bid = "bid 3 2"  # the lowest face (2) is chosen to start with

    keys.tab_to(quantity)
    keys.choose(quantity, "3")
    keys.tab_to("#menu-form button[value=bid]")
    keys.enter(url)

    assert page.locator(".messages li").all_inner_texts() == [f"Your order is accepted: {bid}."]
    assert Order.objects.get(step__game=game, seat__position=0).canonical == bid
    assert Game.objects.get(pk=game.pk).step_number == 2
    assert keys.without_ring() == []


def test_a_choice_turn_is_filled_in_with_the_keyboard_alone(
    transactional_db: None, now: datetime, module_server: str, page: Page, settings: Settings
) -> None:
    settings.SITE_URL = module_server
    game = started_game(now=timezone.now(), gm=gm_user(), **GAMES[0])
    keys = Keyboard(page)
    url = opened(keys, module_server, game.seats.get(position=0))
    state = game.rules.state_from_json(game.state)
    lines = []
    for played in state.rounds:
        number = played.number
        # The kind is chosen already (one radio group, one stop); the die set aside is the
        # first of the roll the menu offers, the other four paired low with low.
        keys.tab_to(f"#round-{number} input[type=radio]")
        offered = page.locator(f"#id_r{number}_value option").evaluate_all(
            "options => options.map(o => o.value)"
        )
        value = next(int(v) for v in offered if v and int(v) in played.roll)
        rest = sorted(played.roll)
        rest.remove(value)
        keys.tab_to(f"#id_r{number}_value")
        keys.choose(f"#id_r{number}_value", str(value))
        for letter, die in zip("abcd", rest, strict=True):
            keys.tab_to(f"#id_r{number}_{letter}")
            keys.choose(f"#id_r{number}_{letter}", str(die))
        kind = page.locator(f"#round-{number} input[type=radio]:checked").get_attribute("value")
        lines.append(f"{number}: {kind}{value} {rest[0]}+{rest[1]} {rest[2]}+{rest[3]}")
    keys.tab_to("#blocks-form button[type=submit]")
    keys.enter(url)

    sent = "\n".join(lines)
    assert page.locator(".messages li").all_inner_texts() == [
        f"Your order is accepted: {'; '.join(lines)}."
    ]
    assert Order.objects.get(step__game=game, seat__position=0).canonical == sent
    assert keys.without_ring() == []
