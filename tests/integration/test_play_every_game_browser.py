"""One full step of every game and profile played through the web form in Chromium at
desktop width (1280 px), as players play it: each player owing an order opens their magic
link in their own browser, uses the menu, the buttons, the board or the fields the page
offers, sends, and reads the receipt; when the last order is in the step resolves and the
pages show the next one. At phone width (390 px) every game and profile is played whole,
by taps only (test_taps_every_game_browser): a step here at 390 px too would play again
what that test plays."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING

import pytest
from django.core.cache import cache
from django.utils import timezone
from pytest_django.fixtures import Settings

from games.models import Game, Order, Seat, Step
from tests.factories import seat_page, started_game
from tests.integration.every_game import DESKTOP, GAMES, Spec, gm_user, open_link

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


@pytest.fixture
def phones(module_browser: Browser) -> Iterator[Callable[[], Page]]:
    """A fresh browser (context) per player, at desktop width."""
    cache.clear()  # rate-limit counters of earlier tests
    contexts = []

    def new_page() -> Page:
        context = module_browser.new_context(viewport=DESKTOP)
        contexts.append(context)
        return context.new_page()

    yield new_page
    for context in contexts:
        context.close()


def receipt(page: Page) -> list[str]:
    return page.locator(".messages li").all_inner_texts()


def owed(page: Page) -> str:
    """The first line of "What you owe": the kind and hint of the order owed."""
    return page.locator("#owed").inner_text().splitlines()[0]


def prompt_line(step: Step, seat: Seat) -> str:
    (prompt,) = (prompt for prompt in step.prompts if prompt["seat"] == seat.position)
    kind = str(prompt["kind"])
    return f"{kind[:1].upper()}{kind[1:]}: {prompt['hint']}"


def by_menu(page: Page) -> str:
    """The first legal order of the menu: a button when the page offers few, else the
    select and its Send button. The order sent."""
    # The buttons of a game's own controls (a bid, a gift, ...) send what their fields say.
    buttons = page.locator(
        "#menu-form button[name=pick_button]"
        ":not([value=bid]):not([value=give]):not([value=action]):not([value=mulligan])"
    )
    if buttons.count():
        sent = buttons.first.get_attribute("value")
        assert sent is not None
        with page.expect_navigation():
            buttons.first.click()
        return sent
    sent = page.locator("#menu-form select option").nth(1).get_attribute("value")
    assert sent is not None
    page.select_option("#menu-form select", sent)
    with page.expect_navigation():
        page.click("#menu-form button[type=submit]")
    return sent


def by_board(page: Page) -> str:
    """Drop-Shy: a tap on the first highlighted cell of the board."""
    cell = page.locator("#menu-form button.cell-button").first
    sent = cell.get_attribute("value")
    assert sent is not None
    with page.expect_navigation():
        cell.click()
    return sent


def by_fields(page: Page, game: Game) -> str:
    """Choice: in each round's fields, the first die of the roll the menu offers to set
    aside, and the other four paired low with low. The order those fields write."""
    state = game.rules.state_from_json(Game.objects.get(pk=game.pk).state)
    lines = []
    for played in state.rounds:
        number = played.number
        block = page.locator(f"#round-{number}")
        kind = block.locator("input[type=radio]:checked").get_attribute("value")
        offered = block.locator(f"#id_r{number}_value option").evaluate_all(
            "options => options.map(o => o.value)"
        )
        # The first one rolled (with a card, the menu offers dice the card would make).
        value = next(v for v in offered if v and int(v) in played.roll)
        assert kind is not None
        rest = sorted(played.roll)
        rest.remove(int(value))
        page.select_option(f"#id_r{number}_value", value)
        for letter, die in zip("abcd", rest, strict=True):
            page.select_option(f"#id_r{number}_{letter}", str(die))
        lines.append(f"{number}: {kind}{value} {rest[0]}+{rest[1]} {rest[2]}+{rest[3]}")
    with page.expect_navigation():
        page.click("#blocks-form button[type=submit]")
    return "\n".join(lines)


def by_bid(page: Page) -> str:
    """Liar's Dice: the Bid button, with the quantity and face chosen to start with (the
    lowest legal bid). The order sent."""
    quantity = page.locator("#menu-form select[name=quantity]").input_value()
    face = page.locator("#menu-form input[name=face]:checked").get_attribute("value")
    with page.expect_navigation():
        page.click("#menu-form button[value=bid]")
    return f"bid {quantity} {face}"


def order(page: Page, game: Game) -> str:
    if game.engine == "liars-dice" and page.locator("#menu-form button[value=bid]").count():
        return by_bid(page)
    if game.engine == "choice":
        return by_fields(page, game)
    if game.engine == "drop-shy":
        return by_board(page)
    return by_menu(page)


@pytest.mark.parametrize("spec", GAMES, ids=[spec["title"] for spec in GAMES])
def test_one_step_is_played_through_the_web_form(
    transactional_db: None,
    now: datetime,
    module_server: str,
    phones: Callable[[], Page],
    settings: Settings,
    spec: Spec,
) -> None:
    settings.SITE_URL = module_server
    game = started_game(now=timezone.now(), gm=gm_user(), **spec)
    first = Step.objects.get(game=game, number=1)
    owing = [game.seats.get(position=position) for position in first.prompted_seats]
    pages = {}
    for seat in owing:
        page = phones()
        open_link(page, module_server, seat)
        assert owed(page) == prompt_line(first, seat)
        pages[seat.position] = page

    sent = {}
    for seat in owing:
        page = pages[seat.position]
        sent[seat.position] = order(page, game)
        shown = "; ".join(sent[seat.position].splitlines())
        assert receipt(page) == [f"Your order is accepted: {shown}."]

    assert Game.objects.get(pk=game.pk).step_number == 2
    assert {
        position: Order.objects.get(step=first, seat__position=position).canonical
        for position in sent
    } == sent
    second = Step.objects.get(game=game, number=2)
    title = game.rules.title
    for seat in owing:
        page = pages[seat.position]
        page.goto(f"{module_server}{seat_page(game, seat.position)}")
        assert page.locator("#seat-name").inner_text() == (
            f"{title} by post. You play as {seat.name}; this is postal turn 2."
        )
    next_seat = game.seats.get(position=second.prompts[0]["seat"])
    page = pages.get(next_seat.position) or phones()
    if next_seat.position not in pages:
        open_link(page, module_server, next_seat)
    assert owed(page) == prompt_line(second, next_seat)
