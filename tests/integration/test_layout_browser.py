"""Every page type in Chromium at phone width (390 px): nothing scrolls sideways, even with
every collapsed section opened, the header names the place, and the one stylesheet is
applied. And a player orders from a phone with JavaScript off."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

import pytest
from django.core.cache import cache
from django.utils import timezone
from pytest_django.fixtures import Settings

from campaigns import postal as campaigns_postal
from campaigns.models import Campaign
from games import postal
from games.models import Game, Seat
from games.postal import access
from moderator.mail.models import OutboundEmail
from tests.factories import NAMES, SEED, GMFactory, long_game, seat_page, started_game
from tests.integration.every_game import GAMES, PHONE, mid_game, open_link, owing

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

# The header's colour: the stylesheet is loaded and applied.
HEADER = "rgb(29, 79, 145)"


def layout(page: Page, url: str) -> tuple[list[str], int, str]:
    """The places the header names, how wide the page is with every <details> open (390:
    no sideways scroll), and the header's colour."""
    page.goto(url)
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    return (
        page.locator("#place li").all_inner_texts(),
        page.evaluate("document.documentElement.scrollWidth"),
        page.evaluate("getComputedStyle(document.querySelector('.site-header')).backgroundColor"),
    )


@pytest.fixture
def phone(browser: Browser) -> Page:
    cache.clear()  # rate-limit counters of earlier runs
    return browser.new_context(viewport=PHONE).new_page()


def test_the_gm_pages_fit_a_phone_and_name_the_place(
    web_server: str, phone: Page, settings: Settings
) -> None:
    settings.SITE_URL = web_server
    gm = GMFactory.create(username="host", is_staff=True)
    gm.set_password("secret-pass-1")
    gm.save()
    games = [started_game(now=timezone.now(), gm=gm, **spec) for spec in GAMES]
    first = games[0]
    Game.objects.filter(pk=first.pk).update(
        needs_gm="step 1 failed 5 times: ValueError: a very long message without spaces " + "x" * 80
    )
    Seat.objects.filter(game=first, position=1).update(
        email_failing="550 5.1.1 <bob@example.org>: Recipient address rejected: unknown"
    )
    OutboundEmail.objects.filter(game=first).update(
        state="failed", last_error="SMTP 550 5.1.1 " + "mailbox-unavailable-" * 8
    )
    night = Campaign.objects.get(
        pk=campaigns_postal.create_campaign(
            host=gm,
            kind="first-player",
            name="Thursday group",
            members=[postal.Player(name, f"{name}@example.org") for name in NAMES[:4]],
            now=timezone.now(),
        ).pk
    )
    members = list(night.members.order_by("id").values_list("id", flat=True))
    table_game = (
        campaigns_postal.open_night(
            night.pk, day=date(2026, 11, 26), tables=[members[:3]], now=timezone.now(), seed=SEED
        )
        .tables.get()
        .game
    )
    finish(table_game)
    league = campaigns_postal.create_campaign(
        host=gm,
        kind="league",
        name="Winter league",
        members=[postal.Player(name, f"{name}@example.org") for name in NAMES[:3]],
        options={"engine": "choice"},
        now=timezone.now(),
    )
    campaigns_postal.start_league_game(league.pk, now=timezone.now(), seed=SEED)
    phone.goto(f"{web_server}/admin/login/?next=/gm/")
    phone.fill("#id_username", "host")
    phone.fill("#id_password", "secret-pass-1")
    with phone.expect_navigation(url=f"{web_server}/gm/"):
        phone.click("input[type=submit]")

    pages = {
        "/gm/": ["GM panel", "Your games"],
        "/gm/new/": ["GM panel", "New game"],
        "/gm/new/choice/suppenkasper/": ["GM panel", "New game", "Choice: Suppenkasper"],
        "/gm/new/liars-dice/genius_team/": ["GM panel", "New game", "Liar's Dice: team"],
        "/gm/new/first-player/": ["GM panel", "New game", "The First Player"],
        "/gm/campaigns/new/first-player/": ["GM panel", "Campaigns", "New campaign"],
        "/gm/campaigns/new/league/dice-survivor/": ["GM panel", "Campaigns", "New campaign"],
        "/gm/campaigns/": ["GM panel", "Campaigns"],
        f"/gm/campaigns/{night.pk}/": ["GM panel", "Campaigns", "Thursday group"],
        f"/gm/campaigns/{league.pk}/": ["GM panel", "Campaigns", "Winter league"],
        f"/gm/{table_game.pk}/": ["GM panel", "Your games", table_game.title],
        **{f"/gm/{game.pk}/": ["GM panel", "Your games", game.title] for game in games},
    }
    seen = {url: layout(phone, web_server + url) for url in pages}

    assert seen == {url: (places, 390, HEADER) for url, places in pages.items()}
    phone.goto(f"{web_server}/gm/{first.pk}/")
    assert phone.locator("#badges .badge").all_inner_texts() == [
        "Running",
        "needs the GM",
        "email failing: 1 seat",
        "cannot be reached: 1 seat",
    ]


def finish(game: Game) -> None:
    for _ in range(100):
        if Game.objects.get(pk=game.pk).status == Game.Status.FINISHED:
            return
        postal.resolve_now(game.pk, now=timezone.now())
    pytest.fail(f"{game.title} did not finish")


def test_the_players_pages_fit_a_phone_and_name_the_place(
    web_server: str, phone: Page, settings: Settings
) -> None:
    settings.SITE_URL = web_server
    gm = GMFactory.create()
    games = [started_game(now=timezone.now(), gm=gm, **spec) for spec in GAMES]
    choice = games[0]
    token = access.mint([choice.seats.get(position=0)], now=timezone.now())[0]
    continue_page = layout(phone, f"{web_server}/p/{token}/")
    for game in games:
        open_link(phone, web_server, game.seats.get(position=0))
    open_link(phone, web_server, choice.seats.get(position=1))

    pages = {
        "/": ["Home"],
        "/play/": ["Your games"],
        f"/play/{choice.pk}/": ["Your games", choice.title],
        f"/play/{choice.pk}/1/": ["Your games", choice.title, "bob's seat"],
        f"/play/{choice.pk}/1/settings/": ["Your games", choice.title, "Settings"],
        "/glossary/": ["Words of the game"],
        "/privacy/": ["Your data"],
        **{seat_page(game, 0): ["Your games", game.title, "ann's seat"] for game in games},
        f"/games/{choice.public_id}/verify/": ["Check the dice", choice.title],
        "/p/not-a-link/": ["Link not valid"],
    }
    seen = {url: layout(phone, web_server + url) for url in pages}

    assert continue_page == ([choice.title, "Continue"], 390, HEADER)
    assert seen == {url: (places, 390, HEADER) for url, places in pages.items()}


def test_the_refusal_pages_fit_a_phone_and_name_the_place(
    web_server: str, phone: Page, settings: Settings
) -> None:
    GMFactory.create(username="host", is_staff=True)
    settings.AXES_FAILURE_LIMIT = 1
    phone.goto(f"{web_server}/admin/login/")
    phone.fill("#id_username", "host")
    phone.fill("#id_password", "wrong")
    phone.click("input[type=submit]")
    locked = (
        phone.locator("#place li").all_inner_texts(),
        phone.evaluate("document.documentElement.scrollWidth"),
    )
    settings.RATES = {**settings.RATES, "link": "1/m"}
    layout(phone, f"{web_server}/p/not-a-link/")

    too_many = layout(phone, f"{web_server}/p/not-a-link/")

    assert locked == (["Login paused"], 390)
    assert too_many == (["Too many requests"], 390, HEADER)


def test_a_player_orders_from_a_phone_without_javascript(
    web_server: str, browser: Browser, settings: Settings
) -> None:
    settings.SITE_URL = web_server
    cache.clear()
    game = started_game(now=timezone.now(), gm=GMFactory.create(), **GAMES[2])
    page = browser.new_context(viewport=PHONE, java_script_enabled=False).new_page()
    open_link(page, web_server, game.seats.get(position=0))
    value = "bid 2 3"
    page.select_option("#menu-form select[name=quantity]", "2")
    page.check("#menu-form input[name=face][value='3']")
    with page.expect_navigation(url=f"{web_server}{seat_page(game, 0)}"):
        page.click("#menu-form button[value=bid]")

    assert page.locator(".messages li").all_inner_texts() == [f"Your order is accepted: {value}."]
    assert game.steps.get(number=1).orders.get().canonical == value


def first_screen(page: Page) -> dict[str, int]:
    """Where the order's first control and the private block end, and how tall the page
    is, in CSS pixels from the top of the page."""
    bottom = "e => Math.round(e.getBoundingClientRect().bottom + window.scrollY)"
    controls = "button, select, textarea, input:not([type=hidden])"
    return {
        "control": page.locator("#order").locator(controls).first.evaluate(bottom),
        "private": page.locator("#private").evaluate(bottom),
        "height": page.evaluate("document.documentElement.scrollHeight"),
    }


# The steps each game is played on before its seat page is measured: its middle, with a
# latest report of a whole turn (Drop-Shy: every seat's die placed since ann's last turn).
MIDDLE = {
    "Choice for three": 2,
    "Suppenkasper night": 2,
    "Liar's Dice at the pub": 2,
    "Death Match": 2,
    "Team Liar's Dice": 2,
    "Drop-Shy": 4,
    "Dice Survivor": 1,
    "The First Player": 1,
}


def test_the_game_comes_first_on_a_phone(web_server: str, phone: Page, settings: Settings) -> None:
    """At 390 x 844, in the middle of a game of every game and profile, the order's first
    control and the private block are on the first screen, the board below them, and the
    page is no taller than 3,000 px; so is a game of 1,000 steps."""
    settings.SITE_URL = web_server
    gm = GMFactory.create()
    games = [
        mid_game(
            started_game(now=timezone.now(), gm=gm, early_processing=True, **spec),
            MIDDLE[spec["title"]],
        )
        for spec in GAMES
    ]
    long = long_game(
        started_game(now=timezone.now(), gm=gm, engine_key="choice", title="Long Choice"), 1000
    )
    seen = {}
    for game in (*games, long):
        open_link(phone, web_server, owing(game))
        seen[game.title] = first_screen(phone)
        board = phone.locator("#board-section").evaluate("e => e.getBoundingClientRect().top")
        assert board > seen[game.title]["control"]
    # The history is folded, a click away, and a page of it holds 20 steps.
    assert phone.locator("#history details").get_attribute("open") is None
    phone.locator("#history summary").click()
    headings = phone.locator("#history h3").all_inner_texts()
    assert (len(headings), headings[:2]) == (
        20,
        ["Postal turn 1000, open", "Postal turn 999, resolved"],
    )

    fits = {
        title: (
            where["control"] <= PHONE["height"],
            where["private"] <= PHONE["height"],
            where["height"] <= 3000,
        )
        for title, where in seen.items()
    }
    assert fits == {title: (True, True, True) for title in seen}, seen
