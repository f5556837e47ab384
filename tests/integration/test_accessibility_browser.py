"""axe-core, run by Playwright in Chromium, on every page type at phone (390 px) and desktop
(1280 px) widths, with every collapsed section opened: no serious or critical violation
(docs/accessibility.md)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime
from typing import TYPE_CHECKING

import pytest
from django.core.cache import cache
from django.urls import include, path
from django.utils import timezone
from pytest_django.fixtures import Settings

from campaigns import postal as campaigns_postal
from campaigns.models import Campaign
from games import postal
from games.models import Game, Seat
from games.postal import access
from moderator.mail.models import OutboundEmail
from tests.browser import axe_violations, duplicate_ids
from tests.factories import NAMES, SEED, new_game, seat_page, started_game
from tests.integration.every_game import (
    GAMES,
    WIDTHS,
    gm_user,
    open_link,
    owing,
    sign_in,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

# The site's URLs with the local mailbox, which moderator.urls mounts only when DEBUG is on
# at import.
urlpatterns = [
    path("mailbox/", include("moderator.mail.urls")),
    path("", include("moderator.urls")),
]


@pytest.fixture(params=list(WIDTHS))
def page(request: pytest.FixtureRequest, module_browser: Browser) -> Iterator[Page]:
    cache.clear()  # rate-limit counters of earlier tests
    context = module_browser.new_context(viewport=WIDTHS[request.param])
    yield context.new_page()
    context.close()


@pytest.fixture
def pages(module_browser: Browser) -> Iterator[dict[str, Page]]:
    """A page at each width, each in a browser context of its own (its own cookies and
    session): the tests that seed many games seed them once for both widths."""
    contexts = {width: module_browser.new_context(viewport=WIDTHS[width]) for width in WIDTHS}
    try:
        yield {width: context.new_page() for width, context in contexts.items()}
    finally:
        for context in contexts.values():
            context.close()


def problems(page: Page) -> list[str]:
    """axe's serious and critical findings on the page as it stands, and its repeated ids."""
    return axe_violations(page) + duplicate_ids(page)


def checked(page: Page, url: str) -> list[str]:
    """The page at ``url`` with every <details> open, then its problems."""
    page.goto(url)
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    return problems(page)


def every(page: Page, base: str, urls: list[str]) -> list[str]:
    return [line for url in urls for line in checked(page, base + url)]


def report(violations: list[str]) -> str:
    return "axe found:\n" + "\n".join(violations)


def finish(game: Game) -> None:
    for _ in range(100):
        if Game.objects.get(pk=game.pk).status == Game.Status.FINISHED:
            return
        postal.resolve_now(game.pk, now=timezone.now())
    pytest.fail(f"{game.title} did not finish")


def test_the_gm_pages_have_no_serious_violations(
    transactional_db: None,
    now: datetime,
    module_server: str,
    pages: dict[str, Page],
    settings: Settings,
) -> None:
    settings.SITE_URL = module_server
    gm = gm_user()
    games = [started_game(now=timezone.now(), gm=gm, **spec) for spec in GAMES]
    night = Campaign.objects.get(
        pk=campaigns_postal.create_campaign(
            host=gm,
            kind="first-player",
            name="Thursday group",
            members=[postal.Player(name, f"{name}@example.org") for name in NAMES[:4]],
            now=now,
        ).pk
    )
    members = list(night.members.order_by("id").values_list("id", flat=True))
    table_game = (
        campaigns_postal.open_night(
            night.pk, day=date(2026, 11, 26), tables=[members[:3]], now=now, seed=SEED
        )
        .tables.get()
        .game
    )
    finish(table_game)
    fresh_night = campaigns_postal.create_campaign(
        host=gm,
        kind="first-player",
        name="Friday group",
        members=[postal.Player(name, f"{name}@example.org") for name in NAMES[:3]],
        now=now,
    )
    league = campaigns_postal.create_campaign(
        host=gm,
        kind="league",
        name="Winter league",
        members=[postal.Player(name, f"{name}@example.org") for name in NAMES[:3]],
        options={"engine": "choice"},
        now=now,
    )
    campaigns_postal.start_league_game(league.pk, now=now, seed=SEED)
    draft = new_game(players=3, gm=gm, title="Not started yet")
    # The first game needs the GM, a seat's mail bounces, and its emails can be sent again.
    Game.objects.filter(pk=games[0].pk).update(needs_gm="step 1 failed 5 times: ValueError")
    Seat.objects.filter(game=games[0], position=1).update(email_failing="550 5.1.1 unknown")
    OutboundEmail.objects.filter(game=games[0]).update(state="failed", last_error="SMTP 550")
    urls = [
        "/gm/",
        "/gm/new/",
        "/gm/new/choice/",
        "/gm/new/choice/suppenkasper/",
        "/gm/new/liars-dice/",
        "/gm/new/liars-dice/genius_dm/",
        "/gm/new/liars-dice/genius_team/",
        "/gm/new/drop-shy/",
        "/gm/new/dice-survivor/",
        "/gm/new/first-player/",
        "/gm/import/",
        "/gm/zine/",
        "/gm/campaigns/",
        "/gm/campaigns/new/first-player/",
        "/gm/campaigns/new/league/choice/",
        f"/gm/campaigns/{night.pk}/",
        f"/gm/campaigns/{fresh_night.pk}/",
        f"/gm/campaigns/{league.pk}/",
        f"/gm/{table_game.pk}/",
        f"/gm/{draft.pk}/",
        f"/gm/{draft.pk}/edit/",
        f"/gm/{games[1].pk}/resolve/confirm/?step=1",
        *(f"/gm/{game.pk}/" for game in games),
    ]
    found: list[str] = []
    for page in pages.values():
        cache.clear()  # the rate-limit counters of the other width
        found += gm_pages(page, module_server, urls)

    assert found == [], report(found)


def gm_pages(page: Page, base: str, urls: list[str]) -> list[str]:
    """The GM signed in at ``page``'s width, every page of ``urls`` checked, and the forms
    that come back with their errors: the problems found."""
    sign_in(page, base)
    found = every(page, base, urls)
    # A form that comes back with its errors.
    page.goto(f"{base}/gm/new/choice/")
    with page.expect_navigation():
        page.click("main button[type=submit]")
    assert page.locator(".field.has-errors").count() == 2  # the title and the players
    found += problems(page)
    # A paper record that does not replay: the reason and the move, nothing created.
    page.goto(f"{base}/gm/import/")
    page.fill("#id_title", "From paper")
    page.fill("#id_record", "game: choice\ndice: 1 2 3 4 5 1 2 3 4 5\nann: W6 1+2 3+4")
    page.fill("#id_players", "ann <ann@example.org>")
    with page.expect_navigation():
        page.click("main button[type=submit]")
    assert page.locator("#import-move").inner_text() == "ann: W6 1+2 3+4"
    found += problems(page)

    return found


def test_the_players_pages_have_no_serious_violations(
    transactional_db: None,
    now: datetime,
    module_server: str,
    pages: dict[str, Page],
    settings: Settings,
) -> None:
    settings.SITE_URL = module_server
    gm = gm_user()
    games = [started_game(now=timezone.now(), gm=gm, **spec) for spec in GAMES]
    finished = started_game(now=timezone.now(), gm=gm, **GAMES[2])
    finish(finished)
    # Three rounds a turn: the plate could hold five numbers, so the Suppen-Kasper block shows.
    kasper = started_game(
        "choice",
        now=timezone.now(),
        gm=gm,
        title="Kasper",
        options={"variant": "suppenkasper", "rolls_per_turn": 3},
    )
    found: list[str] = []
    for page in pages.values():
        cache.clear()  # the rate-limit counters of the other width
        found += players_pages(page, module_server, games, finished, kasper)

    assert found == [], report(found)


def players_pages(
    page: Page, base: str, games: list[Game], finished: Game, kasper: Game
) -> list[str]:
    """The players' pages at ``page``'s width, reached through their magic links, and the
    forms that come back with their errors: the problems found."""
    choice = games[0]
    token = access.mint([choice.seats.get(position=0)], now=timezone.now())[0]
    found = checked(page, f"{base}/p/{token}/")
    seats = [owing(game) for game in games]
    for seat in seats:
        open_link(page, base, seat)
    open_link(page, base, choice.seats.get(position=1))
    open_link(page, base, finished.seats.get(position=0))
    open_link(page, base, kasper.seats.get(position=0))
    assert page.locator("#suppen-kasper").count() == 1

    found += every(
        page,
        base,
        [
            "/",
            "/play/",
            "/games/live/",
            f"/play/{choice.pk}/",
            f"/games/{choice.public_id}/verify/",
            f"/games/{finished.public_id}/verify/",
            seat_page(finished, 0),
            seat_page(kasper, 0),
            *(seat_page(seat.game, seat.position) for seat in seats),
            f"/play/{choice.pk}/0/settings/",
            f"/play/{finished.pk}/0/settings/",
            "/glossary/",
            "/privacy/",
        ],
    )
    # The home page's lost-link form, refused and then sent.
    page.goto(f"{base}/")
    page.get_by_label("Your email address").fill("not an address")
    with page.expect_navigation():
        page.get_by_role("button", name="Email me my links").click()
    assert page.locator("#email-errors").count() == 1
    found += problems(page)
    page.get_by_label("Your email address").fill("ann@example.org")
    with page.expect_navigation():
        page.get_by_role("button", name="Email me my links").click()
    assert page.locator("#lost-links ~ [role=status]").count() == 1
    found += problems(page)
    # Dice Survivor's once-a-game KO asks for a tick before it is sent.
    survivor = seats[6]
    page.goto(f"{base}{seat_page(survivor.game, survivor.position)}")
    with page.expect_navigation():
        page.click('#menu-form button[name=pick_button][value^="ko "] >> nth=0')
    assert page.locator("#confirm-form").count() == 1
    found += problems(page)
    # An order refused: the page comes back with the message at the top, focused, and by
    # the field, with what was typed kept, its fold open.
    page.goto(f"{base}{seat_page(choice, 0)}")
    page.get_by_text("Type the order instead").click()
    page.fill("#text-form textarea", "not an order")
    with page.expect_navigation():
        page.click("#text-form button[type=submit]")
    assert page.locator("#text-errors").count() == 1
    assert page.evaluate("document.activeElement.id") == "error-summary"
    assert page.input_value("#text-form textarea") == "not an order"
    assert page.locator("#typed").get_attribute("open") == ""
    found += problems(page)
    return found


def test_the_refusal_pages_have_no_serious_violations(
    transactional_db: None, now: datetime, module_server: str, page: Page, settings: Settings
) -> None:
    gm_user()
    found = checked(page, f"{module_server}/p/not-a-link/")
    # The GM's sign-in page, and with its error.
    found += checked(page, f"{module_server}/gm/sign-in/")
    page.fill("#id_username", "host")
    page.fill("#id_password", "not it")
    with page.expect_navigation():
        page.click("#sign-in button[type=submit]")
    assert page.locator("#sign-in-errors li").count() == 1
    found += problems(page)
    settings.AXES_FAILURE_LIMIT = 1
    page.goto(f"{module_server}/admin/login/")
    page.fill("#id_username", "host")
    page.fill("#id_password", "wrong")
    with page.expect_navigation():
        page.click("input[type=submit]")
    assert page.locator("h1").inner_text() == "Login paused"
    found += problems(page)
    settings.RATES = {**settings.RATES, "link": "1/m"}
    page.goto(f"{module_server}/p/not-a-link/")
    page.goto(f"{module_server}/p/not-a-link/")
    assert page.locator("h1").inner_text() == "Too many requests"
    found += problems(page)

    assert found == [], report(found)


def test_the_mailbox_has_no_serious_violations(
    transactional_db: None, now: datetime, module_server: str, page: Page, settings: Settings
) -> None:
    settings.SITE_URL = module_server
    settings.DEBUG = True
    settings.ROOT_URLCONF = __name__
    started_game(now=timezone.now(), gm=gm_user(), **GAMES[0])

    found = checked(page, f"{module_server}/mailbox/")
    found += checked(page, f"{module_server}/mailbox/?to=ann")
    found += checked(page, f"{module_server}/mailbox/?game=not-a-game")
    page.goto(f"{module_server}/mailbox/")
    with page.expect_navigation():
        page.click("main .mail-list a >> nth=0")
    found += problems(page)

    assert found == [], report(found)
