"""The front door on a phone (issue 41, part 1): from the home page at 390 px a visitor
follows the header to open games, games to watch, rankings and the archive, taps through to
a game, and no page scrolls sideways."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from django.core.cache import cache
from django.utils import timezone

from games.models import Publicity
from tests.factories import new_game, started_game
from tests.integration.every_game import PHONE

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


def width(page: Page) -> int:
    return int(page.evaluate("document.documentElement.scrollWidth"))


def follow(page: Page, words: str) -> tuple[str, str, int]:
    """Tap the header's link ``words``: the path it led to, the page's heading, its width."""
    with page.expect_navigation():
        page.locator("#site-nav").get_by_role("link", name=words, exact=True).click()
    path = page.url.split("/", 3)[3]
    return f"/{path}", page.locator("h1").inner_text(), width(page)


def test_a_visitor_on_a_phone_finds_every_part_of_the_site_from_the_header(
    web_server: str, browser: Browser
) -> None:
    cache.clear()  # rate-limit counters of earlier runs
    now = timezone.now()
    new_game(
        "liars-dice", title="Friday dice with a rather long title", signup="first", seats_wanted=4
    )
    watched = started_game(
        "liars-dice", now=now, title="Bluffers' table", public=Publicity.YES, players=3
    )
    started_game(now=now, title="Behind closed doors", public=Publicity.NO)
    page = browser.new_context(viewport=PHONE).new_page()

    page.goto(f"{web_server}/")
    assert width(page) == 390
    assert page.locator("#open-games li strong").all_inner_texts() == [
        "Friday dice with a rather long title"
    ]
    assert page.locator("#live-games li strong").all_inner_texts() == ["Bluffers' table"]
    # The header is one compact row of links, not a wall of them.
    tops = page.evaluate(
        "[...document.querySelectorAll('#site-nav a')].map(a => a.getBoundingClientRect().top)"
    )
    assert (len(tops), len(set(tops))) == (5, 1)

    assert follow(page, "Open games") == ("/open/", "Open games", 390)
    assert follow(page, "Watch") == ("/games/live/", "Games to watch", 390)
    with page.expect_navigation():
        page.get_by_role("link", name="Bluffers' table").click()
    assert (page.url, width(page)) == (f"{web_server}/games/{watched.public_id}/", 390)
    assert follow(page, "Rankings") == ("/rankings/", "Rankings", 390)
    assert follow(page, "Archive") == ("/games/archive/", "Archive of finished games", 390)
    assert follow(page, "Your games") == ("/play/", "Your games", 390)
    with page.expect_navigation():
        page.locator(".brand").click()
    assert (page.url, width(page)) == (f"{web_server}/", 390)
