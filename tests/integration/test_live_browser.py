"""Pages that move by themselves, in Chromium at 390 px: a seat's page open in a tab shows
a message to everyone and a resolved step without a reload, keeps what its reader is
typing, and its title says when it is their turn; the GM's page shows a player's order
come in and keeps the fold the GM opened. The poll runs every second here (LIVE_POLL_SECONDS)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from django.test import Client
from django.utils import timezone
from playwright.sync_api import expect
from pytest_django.fixtures import Settings

from games import postal
from games.community import press
from games.models import Game, Seat
from games.postal import access
from tests.browser import axe_violations
from tests.factories import GMFactory, started_game
from tests.integration.every_game import WIDTHS

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

WAIT_MS = 15_000


@pytest.fixture(autouse=True)
def quick_polls(settings: Settings) -> None:
    settings.LIVE_POLL_SECONDS = 1


def open_seat(browser: Browser, server: str, game: Game, position: int) -> Page:
    seat = Seat.objects.get(game=game, position=position)
    token = access.mint([seat], now=timezone.now())[position]
    page = browser.new_context(viewport=WIDTHS["phone"]).new_page()
    page.goto(f"{server}/p/{token}/")
    page.click("button[type=submit]")
    page.wait_for_url(f"{server}/play/{game.pk}/{position}/")
    return page


def order_of(game: Game, position: int) -> str:
    game.refresh_from_db()
    engine = game.rules
    state = engine.state_from_json(game.state)
    return str(engine.canonical(state, position, engine.default(state, position)))


def test_a_seat_page_shows_news_without_a_reload_and_keeps_what_is_typed(
    transactional_db: None, module_server: str, module_browser: Browser
) -> None:
    now = timezone.now()
    game = started_game(now=now)
    page = open_seat(module_browser, module_server, game, 0)
    assert page.title() == f"Your turn · ann: {game.title}"
    # A mark that a reload would lose.
    page.evaluate("window.stayed = true")
    page.locator("#write summary").click()
    typing = page.locator("#press-form").get_by_label("Message")
    typing.fill("half a thought")
    press.send(game_id=game.pk, position=1, to=None, text="Bob says hi", source="web", now=now)
    page.locator("#press-list").get_by_text("Bob says hi").wait_for(timeout=WAIT_MS)
    # The list came in; the message ann is writing stayed, and where she writes it.
    assert typing.input_value() == "half a thought"
    assert page.evaluate("document.activeElement.name") == "text"
    # ann orders from another device: the title no longer asks her; the step resolves:
    # it asks again, and the page names the new step.
    postal.accept_order(game_id=game.pk, position=0, text=order_of(game, 0), source="web", now=now)
    expect(page).to_have_title(f"ann: {game.title}", timeout=WAIT_MS)
    postal.resolve_now(game.pk, now=now)
    expect(page).to_have_title(f"Your turn · ann: {game.title}", timeout=WAIT_MS)
    assert "this is postal turn 2" in page.locator("#seat-name").inner_text()
    assert page.evaluate("window.stayed") is True
    assert typing.input_value() == "half a thought"
    assert axe_violations(page) == []
    page.context.close()


def test_the_gm_page_shows_an_order_come_in(
    transactional_db: None, module_server: str, module_browser: Browser
) -> None:
    now = timezone.now()
    gm = GMFactory.create(is_staff=True)
    game = started_game(now=now, gm=gm)
    signed_in = Client()
    signed_in.force_login(gm)
    context = module_browser.new_context(viewport=WIDTHS["phone"])
    context.add_cookies(
        [{"name": "sessionid", "value": signed_in.cookies["sessionid"].value, "url": module_server}]
    )
    page = context.new_page()
    page.goto(f"{module_server}/gm/{game.pk}/")
    page.evaluate("window.stayed = true")
    page.locator("#gm-log summary").click()
    assert "bob" in page.locator("#owing").inner_text()
    postal.accept_order(game_id=game.pk, position=1, text=order_of(game, 1), source="web", now=now)
    expect(page.locator("#owing")).not_to_contain_text("bob", timeout=WAIT_MS)
    assert page.evaluate("window.stayed") is True
    # The fold the GM opened is open still.
    assert page.locator("#gm-log details").get_attribute("open") == ""
    context.close()


def test_a_seat_page_hears_of_news_from_its_stream_before_its_poll(
    transactional_db: None, module_server: str, module_browser: Browser, settings: Settings
) -> None:
    # No poll for ten minutes: only the seat's event stream can bring the news.
    settings.LIVE_POLL_SECONDS = 600
    settings.API_STREAM_LOOK_SECONDS = 1
    settings.LIVE_STREAMS_PER_SEAT = 3
    now = timezone.now()
    game = started_game(now=now)
    page = open_seat(module_browser, module_server, game, 0)
    assert page.locator("#live").get_attribute("data-stream") == f"/play/{game.pk}/0/stream"
    press.send(game_id=game.pk, position=1, to=None, text="Bob says hi", source="web", now=now)
    page.locator("#press-list").get_by_text("Bob says hi").wait_for(timeout=WAIT_MS)
    page.context.close()
