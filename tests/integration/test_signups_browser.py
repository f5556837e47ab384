"""Sign-up to an open game in Chromium, at phone (390 px) and desktop (1280 px) widths: a
visitor finds the game on the list of open games, signs up, opens the confirmation link
the service mailed them and confirms; a second visitor takes the last seat, and the game
starts with a first report for each."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING

import pytest
from django.core.cache import cache
from pytest_django.fixtures import Settings

from games.community import signups
from games.models import Game, Seat, SignUp
from moderator.mail.models import OutboundEmail
from tests.browser import axe_violations, duplicate_ids
from tests.factories import new_game
from tests.integration.every_game import WIDTHS, gm_user, sign_in

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


@pytest.fixture(params=list(WIDTHS))
def width(request: pytest.FixtureRequest) -> str:
    cache.clear()  # rate-limit counters of earlier tests
    return str(request.param)


@pytest.fixture
def visitors(module_browser: Browser, width: str) -> Iterator[list[Page]]:
    """Two people, each in a browser of their own."""
    contexts = [module_browser.new_context(viewport=WIDTHS[width]) for _ in range(2)]
    yield [context.new_page() for context in contexts]
    for context in contexts:
        context.close()


def problems(page: Page) -> list[str]:
    """axe's serious and critical findings on the page as it stands, and its repeated ids."""
    return axe_violations(page) + duplicate_ids(page)


def sign_up(page: Page, server: str, title: str, name: str, found: list[str]) -> str:
    """The visitor picks ``title`` on the list of open games and signs up as ``name``
    (name@example.org); the link the service mailed them. The problems of each page on the
    way are added to ``found``."""
    page.goto(f"{server}/open/")
    found += problems(page)
    page.get_by_role("link", name=title, exact=True).click()
    found += problems(page)
    page.get_by_label("Your name in the game").fill(name)
    page.get_by_label("Your email address").fill(f"{name}@example.org")
    page.get_by_role("button", name="Sign up").click()
    assert page.locator("h1").inner_text() == "Check your email"
    found += problems(page)
    (mailed,) = OutboundEmail.objects.filter(kind="signup-confirm", to=f"{name}@example.org")
    links: list[str] = re.findall(rf"{re.escape(server)}/open/confirm/[^/\s]+/", mailed.text)
    assert len(links) == 1
    return links[0]


def confirm(page: Page, link: str, found: list[str]) -> str:
    """The visitor opens their link and confirms; what their sign-up's page then says."""
    page.goto(link)
    assert page.locator("h1").inner_text() == "Confirm your sign-up"
    found += problems(page)
    assert SignUp.objects.filter(state="unconfirmed").exists()
    page.get_by_role("button", name="Confirm my sign-up").click()
    page.wait_for_url(link)
    return page.locator("#state").inner_text()


def test_two_visitors_sign_up_confirm_and_the_last_seat_starts_the_game(
    transactional_db: None,
    now: datetime,
    module_server: str,
    visitors: list[Page],
    settings: Settings,
) -> None:
    settings.SITE_URL = module_server
    game = new_game(players=[], gm=gm_user(), title="Open Choice", signup="first", seats_wanted=2)
    ann, bob = visitors

    found: list[str] = []

    ann_link = sign_up(ann, module_server, "Open Choice", "ann", found)
    assert confirm(ann, ann_link, found) == (
        "You have a seat. The game starts when every seat is taken, or when the GM starts it; "
        "your first turn report comes by email then."
    )
    found += problems(ann)
    assert Game.objects.get(pk=game.pk).status == "recruiting"

    bob_link = sign_up(bob, module_server, "Open Choice", "bob", found)
    assert confirm(bob, bob_link, found) == (
        "You play in this game: it has started, and your first turn report, with the link to "
        "your seat, came by email."
    )
    assert found == []

    assert Game.objects.get(pk=game.pk).status == "running"
    assert list(Seat.objects.filter(game=game).values_list("position", "name")) == [
        (0, "ann"),
        (1, "bob"),
    ]
    reports = OutboundEmail.objects.filter(game=game, kind="report").order_by("to")
    assert [email.to for email in reports] == ["ann@example.org", "bob@example.org"]
    # Started, the first-come game stays on the list: it takes reserves.
    ann.goto(f"{module_server}/open/")
    assert ann.locator("#open-games .reserve-note").all_inner_texts() == [
        "Full, running: join as a reserve. No reserve waits yet."
    ]


def test_the_gm_approves_a_player_from_the_game_page(
    transactional_db: None,
    now: datetime,
    module_server: str,
    visitors: list[Page],
    settings: Settings,
) -> None:
    settings.SITE_URL = module_server
    game = new_game(
        "liars-dice",
        players=["ann"],
        gm=gm_user(),
        title="Approved dice",
        signup="approve",
        seats_wanted=3,
    )
    for name in ("bob", "cy"):
        signed = signups.sign_up(game.pk, name=name, email=f"{name}@example.org", now=now)
        signups.confirm(signed.token, now=now)
    gm = visitors[0]
    sign_in(gm, module_server)
    gm.goto(f"{module_server}/gm/{game.pk}/")
    gm.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    assert problems(gm) == []
    assert gm.locator("#waiting-list li").all_inner_texts() == ["bob", "cy"]

    with gm.expect_navigation():
        gm.get_by_role("button", name="Approve cy").click()
    gm.wait_for_url(f"{module_server}/gm/{game.pk}/")
    assert gm.locator(".messages li").all_inner_texts() == [
        "cy has a seat; they are told by email."
    ]
    assert gm.locator("#seats-taken").inner_text().startswith("Seats taken: 2 of 3")
    with gm.expect_navigation():
        gm.get_by_role("button", name="Start now with 2 players").click()
    gm.wait_for_url(f"{module_server}/gm/{game.pk}/")
    assert list(Seat.objects.filter(game=game).values_list("name", flat=True)) == ["ann", "cy"]
    last = OutboundEmail.objects.filter(to="bob@example.org").order_by("id").last()
    assert last is not None and last.subject == "Approved dice: the game started without you"
