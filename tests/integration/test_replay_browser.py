"""A spectator in Chromium, at phone (390 px) and desktop (1280 px) widths: finds a
finished Liar's Dice match in the archive by a player's name, opens its public page and
steps through its replay to the end, every roll checked and every cup shown; each page
passes axe and has no repeated id."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING

import pytest
from django.core.cache import cache
from time_machine import TimeMachineFixture

from games.models import DiceRoll
from tests.browser import axe_violations, duplicate_ids
from tests.games.records.test_spectators import finished_match
from tests.integration.every_game import WIDTHS

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


@pytest.fixture(params=list(WIDTHS))
def spectator(module_browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    cache.clear()
    context = module_browser.new_context(viewport=WIDTHS[request.param])
    yield context.new_page()
    context.close()


def problems(page: Page) -> list[str]:
    return axe_violations(page) + duplicate_ids(page)


def test_a_spectator_finds_a_match_and_steps_through_its_replay(
    transactional_db: None,
    now: datetime,
    time_machine: TimeMachineFixture,
    module_server: str,
    spectator: Page,
) -> None:
    game = finished_match(now, time_machine)
    last = game.steps.count()
    page = spectator
    found: list[str] = []

    page.goto(f"{module_server}/games/archive/")
    found += problems(page)
    page.get_by_role("link", name="Liar's Dice", exact=True).click()
    page.get_by_label("Player's name").fill("BOB")
    page.get_by_role("button", name="Search").click()
    found += problems(page)
    assert page.locator("#archive tbody tr").count() == 1
    page.get_by_role("link", name="Match", exact=True).click()
    assert page.locator("h1").inner_text() == "Match"
    found += problems(page)
    page.get_by_role("link", name="Replay the game step by step").click()

    for number in range(1, last + 1):
        assert (
            page.locator("#where")
            .inner_text()
            .startswith(f"Liar's Dice: Death Match. Postal turn {number} of {last}")
        )
        rolls = DiceRoll.objects.filter(game=game, step__number=number).count()
        assert page.get_by_text("✓ matches").count() == rolls
        assert page.locator("#hidden h3").all_inner_texts() == ["Ann", "Bob"]
        found += problems(page)
        if number < last:
            page.get_by_role("navigation", name="Postal turns", exact=True).get_by_role(
                "link", name=f"Next: postal turn {number + 1}"
            ).click()
    assert page.get_by_role("link", name=f"Next: postal turn {last + 1}").count() == 0
    page.get_by_role("navigation", name="Postal turns", exact=True).get_by_role(
        "link", name=f"Previous: postal turn {last - 1}"
    ).click()
    assert page.url.endswith(f"?step={last - 1}")
    assert found == []
