"""The GM's flows in Chromium at phone (390 px) and desktop (1280 px) widths, as a GM who
knows no JSON runs them: every game and profile created from the new-game page's labelled
fields and started; a step resolved now; a player replaced, who opens the link of the
welcome the service mailed them and finds their name on the board."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pytest
from django.core.cache import cache
from django.utils import timezone
from pytest_django.fixtures import Settings

from games.engines import registry
from games.models import Game, GMAction, Seat
from moderator.mail.models import OutboundEmail
from tests.factories import NAMES, seat_page, started_game
from tests.integration.every_game import GAMES, WIDTHS, gm_user, sign_in

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


@dataclass(frozen=True)
class Way:
    """One way to play as the new-game page names it, and the option the GM changes from
    its default: the field's label and the value set."""

    title: str
    engine: str
    profile: dict[str, Any]
    players: int
    label: str
    value: str | bool
    option: dict[str, Any]


WAYS = [
    Way("Choice", "choice", {"variant": "standard"}, 3,
        "Rounds per postal turn", "3", {"rolls_per_turn": 3}),
    Way("Choice: Suppenkasper", "choice", {"variant": "suppenkasper"}, 3,
        "Free rides feed the plate", True, {"free_ride_to_plate": True}),
    Way("Dice Survivor", "dice-survivor", {}, 3,
        "Play points at the start", "7", {"start_pp": 7}),
    Way("Drop-Shy", "drop-shy", {}, 3, "Dice per player", "4", {"dice_per_player": 4}),
    Way("Liar's Dice: classic", "liars-dice", {"profile": "classic"}, 3,
        "Wild ones", False, {"wild_ones": False}),
    Way("Liar's Dice: Death Match", "liars-dice", {"profile": "genius_dm"}, 2,
        "Anomaly: Oracle", True, {"oracle": True}),
    Way("Liar's Dice: team", "liars-dice", {"profile": "genius_team"}, 4,
        "Teams", "adjacent", {"team_seating": "adjacent"}),
    Way("The First Player", "first-player", {}, 3,
        "The real game's order", "free", {"order_mode": "free"}),
]  # fmt: skip


@pytest.fixture(params=list(WIDTHS))
def page(request: pytest.FixtureRequest, module_browser: Browser) -> Iterator[Page]:
    cache.clear()  # rate-limit counters of earlier tests
    context = module_browser.new_context(viewport=WIDTHS[request.param])
    yield context.new_page()
    context.close()


def messages(page: Page) -> list[str]:
    return page.locator(".messages li").all_inner_texts()


def option_labels(page: Page) -> list[str]:
    """The label of each field of the form's options, as the page shows it (a group of
    boxes is named by its legend)."""
    labels: list[str] = page.locator("#options .field").evaluate_all(
        """fields => fields.map(f => {
            const named = f.querySelector(':scope > label, :scope > fieldset > legend');
            return named.textContent.trim();
        })"""
    )
    return labels


def fill_in(page: Page, way: Way) -> None:
    page.get_by_label("Title", exact=True).fill(f"{way.title} by post")
    page.get_by_label("Players", exact=True).fill(
        "\n".join(f"{name} <{name}@example.org>" for name in NAMES[: way.players])
    )
    field = page.get_by_label(way.label, exact=True)
    if isinstance(way.value, bool):
        field.set_checked(way.value)
    elif field.evaluate("f => f.tagName") == "SELECT":
        field.select_option(way.value)
    else:
        field.fill(way.value)


def test_the_gm_creates_and_starts_every_game_and_profile_from_the_form(
    transactional_db: None, now: datetime, module_server: str, page: Page, settings: Settings
) -> None:
    settings.SITE_URL = module_server
    gm_user()
    sign_in(page, module_server)
    page.get_by_role("link", name="New game", exact=True).click()
    page.locator("#ways .way h2").first.wait_for()  # the click navigates: wait for the page
    assert page.locator("#ways .way h2").all_inner_texts() == [way.title for way in WAYS]

    for way in WAYS:
        page.goto(f"{module_server}/gm/new/")
        page.get_by_role("link", name=way.title, exact=True).click()
        assert page.locator("h1").inner_text() == f"New game: {way.title}"
        settings_of = registry.settings(way.engine)
        profile = way.profile.get(settings_of.profile_key, "")
        assert option_labels(page) == [o.label for o in settings_of.options_of(profile)]
        fill_in(page, way)
        with page.expect_navigation():
            page.get_by_role("button", name="Create the game").click()
        game = Game.objects.get(title=f"{way.title} by post")
        page.wait_for_url(f"{module_server}/gm/{game.pk}/")
        assert messages(page) == [f"{way.title} by post is created; invite the players next."]
        with page.expect_navigation():
            page.get_by_role("button", name="Start the game").click()
        page.wait_for_url(f"{module_server}/gm/{game.pk}/")
        assert messages(page) == ["The game has started; the first reports are on their way."]
        assert page.locator("#badges .badge").all_inner_texts() == ["Running"]

        game.refresh_from_db()
        engine = registry.get(way.engine)
        assert (game.engine, game.status, game.step_number) == (way.engine, "running", 1)
        assert engine.options(game.options) == engine.options({**way.profile, **way.option})
        assert (
            list(game.seats.order_by("position").values_list("name", flat=True))
            == (NAMES[: way.players])
        )


def test_the_gm_resolves_a_step_now_and_replaces_a_player(
    transactional_db: None,
    now: datetime,
    module_server: str,
    page: Page,
    module_browser: Browser,
    settings: Settings,
) -> None:
    settings.SITE_URL = module_server
    # Liar's Dice, classic: ann bids first.
    game = started_game(now=timezone.now(), gm=gm_user(), **GAMES[2])
    sign_in(page, module_server)
    page.get_by_role("link", name=game.title, exact=True).click()
    page.wait_for_url(f"{module_server}/gm/{game.pk}/")
    assert page.locator("#owing").inner_text() == "Still owes an order: ann"

    page.get_by_role("button", name="Resolve the step now").click()
    page.wait_for_url(f"{module_server}/gm/{game.pk}/resolve/confirm/?step=1&reason=")
    assert page.locator("h1").inner_text() == "Resolve step 1 now?"
    assert page.locator("#costs li").all_inner_texts() == [
        "ann: the NMR default is played for them: bid 1 2; it is their 1st missed turn "
        "(1 in a row)."
    ]
    # A double click on the confirmation resolves the step once.
    page.get_by_role("button", name="Yes, resolve step 1 now").dblclick()
    page.wait_for_url(f"{module_server}/gm/{game.pk}/")
    page.wait_for_load_state()
    assert Game.objects.get(pk=game.pk).step_number == 2
    assert list(game.steps.order_by("number").values_list("number", "status")) == [
        (1, "done"),
        (2, "open"),
    ]
    assert GMAction.objects.filter(game=game, kind=GMAction.Kind.RESOLVE).count() == 1
    page.goto(f"{module_server}/gm/{game.pk}/")
    assert page.locator("#owing").inner_text() == "Still owes an order: bob"

    # Replacing a player is among the actions folded below the common ones.
    page.locator("#more-actions > summary").click()
    replace = page.locator("form", has=page.get_by_role("button", name="Replace"))
    replace.get_by_label("Seat").select_option(label="cy")
    replace.get_by_label("New name").fill("dee")
    replace.get_by_label("New email").fill("dee@example.org")
    with page.expect_navigation():
        replace.get_by_role("button", name="Replace").click()
    page.wait_for_url(f"{module_server}/gm/{game.pk}/")
    assert messages(page) == [
        "Seat 3 is now played by dee <dee@example.org>, welcomed with the rules, the current "
        "report and a link; cy is told."
    ]
    # (The name's colour swatch reads as a no-break space.)
    cells = page.locator("#seat-table tbody tr").nth(2).locator("td").all_inner_texts()
    assert [cell.strip("\xa0 ") for cell in cells[:3]] == [
        "3",
        "dee",
        "dee@example.org",
    ]
    seat = Seat.objects.get(game=game, position=2)
    assert (seat.name, seat.email) == ("dee", "dee@example.org")

    (told,) = OutboundEmail.objects.filter(to="cy@example.org", kind="replaced")
    assert f"{module_server}/p/" not in told.text
    (mailed,) = OutboundEmail.objects.filter(to="dee@example.org")
    assert mailed.kind == "welcome"
    # The welcome names the link where it offers the order form and where it says how
    # often the player is emailed: one link.
    (link,) = set(re.findall(rf"{re.escape(module_server)}/p/[^/\s]+/", mailed.text))
    phone = module_browser.new_context(viewport=WIDTHS["phone"]).new_page()
    phone.goto(link)
    with phone.expect_navigation(url=f"{module_server}{seat_page(game, 2)}"):
        phone.click("main button[type=submit]")
    assert phone.locator("#seat-name strong").inner_text() == "dee"
    # The board names the new player; what happened before keeps the old name.
    names = phone.locator("#board tr th:first-child").all_inner_texts()
    assert [name.strip("\xa0 ") for name in names] == [
        "Player",
        "ann",
        "bob",
        "dee",
    ]
    assert (
        phone.locator("#gm-log li")
        .first.inner_text()
        .endswith("The GM handed seat 3 from cy to dee")
    )
    phone.context.close()


def test_the_gm_at_390_px_signs_in_fixes_the_seats_changes_and_runs_a_game(
    transactional_db: None, now: datetime, module_server: str, module_browser: Browser
) -> None:
    """A phone: the GM's own sign-in page; a Death Match of three refused on the form in
    its words, then created with two; the recruiting game changed; the list names its
    variant; the running game's page puts its common actions on the first screen."""
    page = module_browser.new_context(viewport=WIDTHS["phone"]).new_page()
    gm = gm_user()
    sign_in(page, module_server)
    assert page.title() == "Your games · GM panel"

    page.goto(f"{module_server}/gm/new/liars-dice/genius_dm/")
    page.get_by_label("Title", exact=True).fill("Duel")
    page.get_by_label("Players", exact=True).fill(
        "ann <ann@example.org>\nbob <bob@example.org>\ncy <cy@example.org>"
    )
    with page.expect_navigation():
        page.get_by_role("button", name="Create the game").click()
    assert page.locator("#field-players .errors li").all_inner_texts() == [
        "Liar's Dice: Death Match takes exactly 2 players, not 3"
    ]
    assert Game.objects.count() == 0
    page.get_by_label("Players", exact=True).fill("ann <ann@example.org>\nbob <bob@example.org>")
    with page.expect_navigation():
        page.get_by_role("button", name="Create the game").click()
    game = Game.objects.get(title="Duel")
    page.wait_for_url(f"{module_server}/gm/{game.pk}/")

    page.get_by_role("link", name="Change the title or the seats, or delete the game").click()
    page.get_by_label("Title", exact=True).fill("Duel at dawn")
    page.get_by_label("Players", exact=True).fill("ann <ann@example.org>\ndee <dee@example.org>")
    with page.expect_navigation():
        page.get_by_role("button", name="Save the changes").click()
    page.wait_for_url(f"{module_server}/gm/{game.pk}/")
    assert messages(page) == ["Duel at dawn is changed."]
    assert list(game.seats.order_by("position").values_list("name", flat=True)) == ["ann", "dee"]

    page.get_by_role("link", name="Your games", exact=True).first.click()
    assert page.locator("#games .variant").all_inner_texts() == ["Liar's Dice: Death Match"]

    running = started_game(now=timezone.now(), gm=gm, **GAMES[2])
    page.goto(f"{module_server}/gm/{running.pk}/")
    resolve = page.get_by_role("button", name="Resolve the step now")
    box = resolve.bounding_box()
    assert box is not None and box["y"] + box["height"] <= WIDTHS["phone"]["height"]
    headings = page.locator("main h2").all_inner_texts()
    assert headings[:3] == ["Actions", "Seats", "More actions"]
    assert page.locator("#actions h3").all_inner_texts() == [
        "Resolve the step now",
        "Extend the deadline",
        "Message the players",
        "Pause the game",
    ]
    page.context.close()
