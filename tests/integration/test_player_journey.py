"""A new player's whole way, in Chromium at phone width (issue "Players as a community",
done when): they find an open game, sign up and confirm, the game starts; they sign in by
email, see their game in My games, open its seat without a magic link, choose an
autopilot, declare an absence, and see their record, which counts the turn the autopilot
then plays for them. axe-core checks every page of the way."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import pytest
from django.core.cache import cache
from pytest_django.fixtures import Settings

from games import postal
from games.models import Absence, Game, Order, Seat, Step
from moderator.mail.models import OutboundEmail
from tests.browser import axe_violations, duplicate_ids
from tests.factories import new_game
from tests.integration.every_game import PHONE, gm_user
from tests.integration.test_signups_browser import confirm, sign_up

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


def test_a_new_player_finds_a_game_signs_in_and_sets_their_turns(
    transactional_db: None, now: datetime, module_server: str, page: Page, settings: Settings
) -> None:
    settings.SITE_URL = module_server
    game = new_game(
        players=[postal.Player("Ann", "ann@example.org")],
        gm=gm_user(),
        title="Open Choice",
        signup="first",
        seats_wanted=2,
    )
    found: list[str] = []
    # Found on the list of open games, signed up and confirmed: the last seat starts it.
    link = sign_up(page, module_server, "Open Choice", "zoe", found)
    assert confirm(page, link, found).startswith("You play in this game: it has started")
    assert Game.objects.get(pk=game.pk).status == Game.Status.RUNNING

    # Signed in by the emailed link: My games lists the game, waiting for an order.
    page.goto(f"{module_server}/signin/")
    page.get_by_label("Email to sign in with").fill("zoe@example.org")
    page.get_by_role("button", name="Email me a sign-in link").click()
    mailed = OutboundEmail.objects.filter(kind="signin", to="zoe@example.org").latest("id")
    (signin_link,) = set(re.findall(rf"{re.escape(module_server)}/signin/[^/\s]+/", mailed.text))
    page.goto(signin_link)
    found += problems(page)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{module_server}/me/")
    found += problems(page)
    assert "Open Choice" in page.locator("main").inner_text()

    # The seat opens without its magic link; an autopilot is chosen on its settings page.
    page.get_by_role("link", name="Open Choice").click()
    found += problems(page)
    page.get_by_role("link", name="Settings of this seat").click()
    found += problems(page)
    page.get_by_label(re.compile("Autopilot: Best score")).check()
    page.locator("#autopilot-form").get_by_role("button", name="Save").click()
    assert "your autopilot (Best score" in page.locator(".messages").inner_text()
    zoe = Seat.objects.get(game=game, email="zoe@example.org")
    assert zoe.autopilot == "best-score"

    # An absence for all their games, from My games' Away.
    page.goto(f"{module_server}/me/away/")
    found += problems(page)
    page.get_by_label("Away from").fill((now + timedelta(days=10)).strftime("%Y-%m-%d"))
    page.get_by_label("Away until").fill((now + timedelta(days=12)).strftime("%Y-%m-%d"))
    page.get_by_role("button", name="Declare").click()
    assert "Done: you are away in all your games" in page.locator(".messages").inner_text()
    assert Absence.objects.get().email == "zoe@example.org"

    # The deadline passes without Zoe's order: the autopilot plays, the record counts it.
    step = Step.objects.get(game=game, status=Step.Status.OPEN)
    assert postal.resolve_due_step(step.pk, now=step.deadline) is True
    assert Order.objects.get(step=step, seat=zoe).source == Order.Source.AUTOPILOT
    page.goto(f"{module_server}/me/")
    found += problems(page)
    record = page.locator("#my-record .record").inner_text()
    assert record == (
        "1 game played · 0 finished · 1 running · 0 abandoned · missed 1 of 1 turn (100%)"
    )
    assert found == []
