"""A player signs in by email in Chromium: asks on the sign-in page, reads the email the
outbox holds, follows its link and presses "Sign in" (or types its code), lands on My
games with their seats of two games, and opens one seat's page without its magic link.
axe-core checks every page of the way (docs/accessibility.md)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from django.core.cache import cache
from django.utils import timezone
from pytest_django.fixtures import Settings

from games import postal
from games.models import Game
from moderator.mail.models import OutboundEmail
from tests.browser import axe_violations, duplicate_ids
from tests.factories import GMFactory, seat_page, started_game
from tests.integration.every_game import PHONE

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


@pytest.fixture
def page(module_browser: Browser) -> Iterator[Page]:
    cache.clear()  # rate-limit counters of earlier tests
    context = module_browser.new_context(viewport=PHONE)
    yield context.new_page()
    context.close()


def problems(page: Page) -> list[str]:
    return axe_violations(page) + duplicate_ids(page)


def two_games() -> tuple[Game, Game]:
    """Ann's seats in two games: first in one, second in the other (as "Annie")."""
    gm = GMFactory.create()
    games = []
    for title, people in (
        ("Tuesday Choice", [("Ann", "ann@example.org"), ("Bob", "bob@example.org")]),
        ("Friday Choice", [("Cy", "cy@example.org"), ("Annie", "ann@example.org")]),
    ):
        players = [postal.Player(name, email) for name, email in people]
        games.append(started_game(now=timezone.now(), players=players, gm=gm, title=title))
    return games[0], games[1]


def ask(page: Page, server: str, address: str) -> OutboundEmail:
    """The sign-in page's form, sent; the email the outbox holds for it."""
    page.goto(f"{server}/")
    with page.expect_navigation():
        page.get_by_role("link", name="Sign in").click()
    page.get_by_label("Email to sign in with").fill(address)
    with page.expect_navigation():
        page.get_by_role("button", name="Email me a sign-in link").click()
    assert (
        page.locator("#sent")
        .inner_text()
        .startswith(f"A sign-in link and code are on their way to {address}.")
    )
    return OutboundEmail.objects.filter(kind="signin", to=address).latest("id")


def test_a_player_signs_in_by_the_emailed_link_and_opens_a_seat(
    transactional_db: None, module_server: str, page: Page, settings: Settings
) -> None:
    settings.SITE_URL = module_server
    tuesday, friday = two_games()
    found = []
    email = ask(page, module_server, "ann@example.org")
    found += problems(page)
    link = re.search(r"https?://\S+/signin/\S+/", email.text)
    assert link is not None
    page.goto(link[0])
    assert page.locator("h1").inner_text() == "Sign in"
    found += problems(page)
    with page.expect_navigation(url=f"{module_server}/me/"):
        page.get_by_role("button", name="Sign in").click()
    found += problems(page)
    owed = page.locator("#owed li")
    assert owed.count() == 2
    assert {owed.nth(n).locator("a").inner_text() for n in range(2)} == {
        "Tuesday Choice",
        "Friday Choice",
    }
    assert page.locator("#account").inner_text() == "Signed in · Sign out"
    with page.expect_navigation(url=f"{module_server}{seat_page(friday, 1)}"):
        page.get_by_role("link", name="Friday Choice").click()
    assert page.locator("#seat-name strong").inner_text() == "Annie"
    # My settings, then signing out: the seat closes again.
    page.goto(f"{module_server}/me/settings/")
    found += problems(page)
    page.get_by_label("Your time zone").select_option("Europe/Berlin")
    with page.expect_navigation():
        page.get_by_role("button", name="Save").click()
    assert "your time zone is Europe/Berlin" in page.locator(".messages").inner_text()
    found += problems(page)
    with page.expect_navigation(url=f"{module_server}/"):
        page.locator("#account").get_by_role("button", name="Sign out").click()
    assert page.locator("#account").inner_text() == "Sign in"
    response = page.goto(f"{module_server}{seat_page(tuesday, 0)}")
    assert response is not None and response.status == 404

    assert found == [], "\n".join(found)


def test_a_player_signs_in_by_typing_the_code(
    transactional_db: None, module_server: str, page: Page, settings: Settings
) -> None:
    settings.SITE_URL = module_server
    two_games()
    email = ask(page, module_server, "ann@example.org")
    code = re.search(r"^  (\d{6})$", email.text, re.MULTILINE)
    assert code is not None
    # A wrong code first: the page says so, and the box takes the right one.
    wrong = f"{(int(code[1]) + 1) % 10**6:06d}"
    page.get_by_label("The 6-digit code").fill(wrong)
    with page.expect_navigation():
        page.locator("#code-form").get_by_role("button", name="Sign in").click()
    assert page.locator("#wrong-code").inner_text().startswith("That is not the code")
    found = problems(page)
    page.get_by_label("The 6-digit code").fill(f"{code[1][:3]} {code[1][3:]}")
    with page.expect_navigation(url=f"{module_server}/me/"):
        page.locator("#code-form").get_by_role("button", name="Sign in").click()
    assert page.locator("#owed li").count() == 2
    assert found == [], "\n".join(found)


def test_a_new_address_signs_in_to_an_empty_list(
    transactional_db: None, module_server: str, page: Page, settings: Settings
) -> None:
    settings.SITE_URL = module_server
    email = ask(page, module_server, "new@example.org")
    link = re.search(r"https?://\S+/signin/\S+/", email.text)
    assert link is not None
    page.goto(link[0])
    with page.expect_navigation(url=f"{module_server}/me/"):
        page.get_by_role("button", name="Sign in").click()
    assert page.locator("#no-games").inner_text().startswith("No game of yours here yet.")
    assert page.locator("#no-games a").get_attribute("href") == "/open/"
    assert problems(page) == []
