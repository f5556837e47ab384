"""Messages between players in Chromium, at phone (390 px) and desktop (1280 px) widths:
ann writes to everyone and privately to bob, bob answers her privately, cy reads the
public message and neither private one; the GM reads them all and hides one, which cy
then sees only as hidden. Every page passes axe and has no repeated id."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from django.core.cache import cache
from django.utils import timezone

from games.models import Game, Message, Seat
from games.postal import access
from tests.browser import axe_violations, duplicate_ids
from tests.factories import started_game
from tests.integration.every_game import WIDTHS, gm_user, sign_in

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


@pytest.fixture(params=list(WIDTHS))
def width(request: pytest.FixtureRequest) -> str:
    cache.clear()  # rate-limit counters of earlier tests
    return str(request.param)


@pytest.fixture
def contexts(module_browser: Browser, width: str) -> Iterator[list[BrowserContext]]:
    """A browser of its own for ann, bob, cy and the GM."""
    opened = [module_browser.new_context(viewport=WIDTHS[width]) for _ in range(4)]
    yield opened
    for context in opened:
        context.close()


def problems(page: Page) -> list[str]:
    return axe_violations(page) + duplicate_ids(page)


def open_seat(context: BrowserContext, server: str, game: Game, position: int) -> Page:
    """The seat's page, opened with its magic link."""
    seat = Seat.objects.get(game=game, position=position)
    token = access.mint([seat], now=timezone.now())[position]
    page = context.new_page()
    page.goto(f"{server}/p/{token}/")
    page.click("button[type=submit]")
    page.wait_for_url(f"{server}/play/{game.pk}/{position}/")
    return page


def write(page: Page, to: str, text: str) -> None:
    page.locator("#write summary").click()  # the seat page folds the form
    form = page.locator("#press-form")
    form.get_by_label("To").select_option(label=to)
    form.get_by_label("Message").fill(text)
    with page.expect_navigation():
        form.get_by_role("button", name="Send").click()


def shown(page: Page) -> list[str]:
    """Each message of the page's list: who to whom, then its text (or that it is hidden)."""
    items = page.locator("#messages .press-item")
    return [
        " | ".join(
            [
                item.locator(".press-head strong").inner_text(),
                item.locator(".press-text, .press-hidden").inner_text(),
            ]
        )
        for item in items.all()
    ]


def test_two_players_write_publicly_and_privately_a_third_reads_only_the_public_one(
    transactional_db: None, module_server: str, contexts: list[BrowserContext]
) -> None:
    server = module_server
    gm = gm_user("host")
    game = started_game(now=timezone.now(), players=3, gm=gm)
    ann_context, bob_context, cy_context, gm_context = contexts
    found: list[str] = []

    ann = open_seat(ann_context, server, game, 0)
    assert ann.locator("#press-notice").inner_text().startswith("Messages between the players")
    write(ann, "Everyone", "Hello everyone, see https://example.org/rules")
    assert ann.locator(".messages li").inner_text() == "Your message to everyone is sent."
    write(ann, "bob", "Just you, bob: shall we?")
    assert ann.locator(".messages li").inner_text() == "Your private message to bob is sent."
    found += problems(ann)

    bob = open_seat(bob_context, server, game, 1)
    assert shown(bob) == [
        "ann to everyone | Hello everyone, see https://example.org/rules",
        "ann to you (private) | Just you, bob: shall we?",
    ]
    assert bob.get_by_role("link", name="https://example.org/rules").get_attribute("rel") == (
        "nofollow"
    )
    write(bob, "ann", "Deal, ann.")
    found += problems(bob)

    cy = open_seat(cy_context, server, game, 2)
    assert shown(cy) == ["ann to everyone | Hello everyone, see https://example.org/rules"]
    cy.goto(f"{server}/play/{game.pk}/2/messages/")
    assert shown(cy) == ["ann to everyone | Hello everyone, see https://example.org/rules"]
    found += problems(cy)

    admin = gm_context.new_page()
    sign_in(admin, server)
    admin.goto(f"{server}/gm/{game.pk}/")
    admin.get_by_role("link", name="Read every message, hide one, or send an announcement").click()
    admin.wait_for_url(f"{server}/gm/{game.pk}/messages/")
    assert shown(admin) == [
        "ann to everyone | Hello everyone, see https://example.org/rules",
        "ann to bob (private) | Just you, bob: shall we?",
        "bob to ann (private) | Deal, ann.",
    ]
    found += problems(admin)
    first = Message.objects.get(text__startswith="Hello everyone")
    item = admin.locator(f"#message-{first.pk}")
    item.get_by_text("Hide this message").click()
    item.get_by_label("Reason (players see it)").fill("links go in the rules thread")
    with admin.expect_navigation():
        item.get_by_role("button", name="Hide").click()
    assert admin.locator(".messages li").inner_text() == (
        "The message is hidden: players see that the GM hid it, never its text."
    )
    found += problems(admin)

    cy.goto(f"{server}/play/{game.pk}/2/")
    assert shown(cy) == [
        "ann to everyone | A message hidden by the GM. Reason: links go in the rules thread"
    ]
    assert "Hello everyone" not in cy.content()
    found += problems(cy)
    assert found == []
