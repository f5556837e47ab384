"""A reserve of a first-come game, in Chromium at phone width (390 px): the game fills and
starts; a fourth person finds it on the list of open games as "Full, running: join as a
reserve", signs up and confirms by the emailed link; a seat falls into civil disorder, and
the reserve, welcomed by email, plays the seat from its link."""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING

import pytest
from django.core.cache import cache
from pytest_django.fixtures import Settings

from games import postal
from games.community import signups
from games.engines import registry
from games.models import Game, Order, Seat, SignUp
from moderator.mail.models import OutboundEmail
from tests.games.community.test_reserves import missing
from tests.integration.every_game import PHONE, gm_user
from tests.integration.test_signups_browser import problems

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


def test_a_reserve_signs_up_from_the_list_and_plays_a_seat_in_civil_disorder(
    transactional_db: None,
    now: datetime,
    module_server: str,
    module_browser: Browser,
    settings: Settings,
) -> None:
    cache.clear()  # rate-limit counters of earlier tests
    settings.SITE_URL = module_server
    game = postal.create_game(
        gm=gm_user(),
        engine_key="choice",
        players=[],
        title="Open Choice",
        signup="first",
        seats_wanted=3,
        early_processing=False,
        missed=postal.MissedTurns(civil_disorder_after=1),
    )
    for name in ("ann", "bob", "cy"):
        signed = signups.sign_up(game.pk, name=name, email=f"{name}@example.org", now=now)
        signups.confirm(signed.token, now=now)
    assert Game.objects.get(pk=game.pk).status == "running"

    context = module_browser.new_context(viewport=PHONE)
    page = context.new_page()
    found: list[str] = []
    page.goto(f"{module_server}/open/")
    found += problems(page)
    assert page.locator("[data-reserves] h3").all_inner_texts() == ["Open Choice"]
    assert page.locator("[data-reserves] .reserve-note").all_inner_texts() == [
        "Full, running: join as a reserve. No reserve waits yet."
    ]
    with page.expect_navigation(url=f"{module_server}/open/{game.public_id}/"):
        page.get_by_role("link", name="Open Choice", exact=True).click()
    found += problems(page)
    assert page.locator("#signup-heading").inner_text() == "Sign up as a reserve"
    page.get_by_label("Your name in the game").fill("dan")
    page.get_by_label("Your email address").fill("dan@example.org")
    with page.expect_navigation():
        page.get_by_role("button", name="Sign up as a reserve").click()
    assert page.locator("h1").inner_text() == "Check your email"
    assert (
        page.locator("#reserve-note")
        .inner_text()
        .startswith(
            "“Open Choice” has started and every seat is taken: confirming makes you a reserve."
        )
    )
    found += problems(page)

    (mailed,) = OutboundEmail.objects.filter(kind="signup-confirm", to="dan@example.org")
    (link,) = re.findall(rf"{re.escape(module_server)}/open/confirm/[^/\s]+/", mailed.text)
    page.goto(link)
    assert page.locator("h1").inner_text() == "Confirm your sign-up"
    found += problems(page)
    with page.expect_navigation(url=link):
        page.get_by_role("button", name="Confirm my sign-up").click()
    assert page.locator("#state").inner_text() == (
        "You are reserve number 1. If a seat falls into civil disorder (its player missed too "
        "many turns in a row), the first reserve takes it and is emailed a link to it; until "
        "then nothing is needed from you, and the link of your sign-up lets you withdraw."
    )
    found += problems(page)
    assert SignUp.objects.get(name="dan").state == "waiting"

    # bob misses the first deadline; his seat falls into civil disorder and dan takes it.
    missing(game, 1)
    welcome = OutboundEmail.objects.get(kind="welcome", to="dan@example.org")
    (seat_link,) = set(re.findall(rf"{re.escape(module_server)}/p/[^/\s]+/", welcome.text))
    page.goto(seat_link)
    with page.expect_navigation(url=f"{module_server}/play/{game.pk}/1/"):
        page.click("main button[type=submit]")
    assert page.locator("#seat-name strong").inner_text() == "dan"
    found += problems(page)
    engine = registry.get("choice")
    state = engine.state_from_json(Game.objects.get(pk=game.pk).state)
    order = engine.canonical(state, 1, engine.default(state, 1))
    page.locator("#typed summary").click()  # the typed order, folded under the controls
    page.fill("#text-form textarea", order)
    with page.expect_navigation(url=f"{module_server}/play/{game.pk}/1/"):
        page.click("#text-form button[type=submit]")
    shown = "; ".join(order.splitlines())
    assert page.locator(".messages li").inner_text() == f"Your order is accepted: {shown}."
    assert found == []

    seat = Seat.objects.get(game=game, position=1)
    assert (seat.name, seat.email, seat.civil_disorder_at) == ("dan", "dan@example.org", None)
    assert list(
        Order.objects.filter(seat=seat, step__number=2).values_list("canonical", flat=True)
    ) == [order]
    context.close()
