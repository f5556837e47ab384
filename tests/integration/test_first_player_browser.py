"""The First Player in a real browser on phone-sized screens: three players each open their
own link in their own browser, send ready, roll (one sets a die aside and rerolls), and
arrange by tapping their dice; while someone is still deciding the others see the waiting
view naming them; after the last arrangement every page shows the reveal and the order."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from django.utils import timezone
from pytest_django.fixtures import Settings

from games import postal
from games.engines.first_player.rules import FirstPlayerEngine, FirstPlayerState
from games.models import Game, Order, Seat
from games.postal import access
from tests.factories import seat_page, started_game

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

ENGINE = FirstPlayerEngine()
NAMES = ("ann", "bob", "cy")
PHONE = {"width": 390, "height": 844}


def state_of(game: Game) -> FirstPlayerState:
    state: FirstPlayerState = ENGINE.state_from_json(Game.objects.get(pk=game.pk).state)
    return state


class Phone:
    """One player's browser on their seat's page."""

    def __init__(
        self, browser: Any, web_server: str, game: Game, position: int, script: bool = True
    ) -> None:
        self.url = f"{web_server}{seat_page(game, position)}"
        seat = Seat.objects.get(game=game, position=position)
        token = access.mint([seat], now=timezone.now())[position]
        context = browser.new_context(viewport=PHONE, java_script_enabled=script)
        self.page = context.new_page()
        self.page.goto(f"{web_server}/p/{token}/")
        with self.page.expect_navigation(url=self.url):
            self.page.click("button[type=submit]")

    def fresh(self) -> Any:
        """The page as it stands now (every order opens a new step)."""
        self.page.goto(self.url)
        return self.page

    def tap(self, order: str) -> None:
        page = self.fresh()
        with page.expect_navigation(url=self.url):
            page.click(f'#menu-form button[name=pick_button][value="{order}"]')
        assert page.locator(".messages .success").count() == 1

    def hand(self) -> list[int]:
        dice = self.fresh().locator("#fp-hand .fp-die")
        return [int(value) for value in dice.evaluate_all("ds => ds.map(d => d.dataset.value)")]

    def arrange_by_tapping(self, picks: list[int]) -> str:
        """Tap the dice of the hand at ``picks`` (indexes) in that order and confirm; the
        order the page sent."""
        page = self.fresh()
        confirm = page.locator("#fp-confirm")
        for index in picks:
            assert confirm.is_disabled()
            page.locator("#fp-hand .fp-die").nth(index).click()
        assert confirm.is_enabled()
        sent = page.input_value("#id_text")
        with page.expect_navigation(url=self.url):
            confirm.click()
        assert page.locator(".messages .success").count() == 1
        return str(sent)

    def waiting(self) -> str:
        return str(self.fresh().inner_text("#fp-waiting")).strip()


def test_three_players_roll_and_arrange_by_tapping_on_their_phones(
    web_server: str, browser: Browser, settings: Settings
) -> None:
    settings.SITE_URL = web_server
    game = started_game(
        "first-player",
        now=timezone.now(),
        players=NAMES,
        title="Game night",
        options={"order_mode": "free"},
    )
    ann, bob, cy = (Phone(browser, web_server, game, position) for position in range(3))
    for phone in (ann, bob, cy):
        phone.tap("ready")
    assert state_of(game).phase == "commit"

    ann.tap("roll all")
    rolled = ann.hand()
    assert rolled == list(state_of(game).cups[0].hand)
    ann.tap(f"reroll set-aside {rolled[0]}")
    hand = ann.hand()
    cup = state_of(game).cups[0]
    assert (hand, cup.set_aside) == (list(cup.hand), (rolled[0],))
    bob.tap("roll 3")
    cy.tap("roll 2")
    assert bob.waiting() == "Still deciding: ann bob cy"

    # ann taps her dice right to left; bob changes his mind once, then taps them as dealt.
    assert ann.arrange_by_tapping([1, 0]) == f"arrange {hand[1]} {hand[0]}"
    assert [die.value for die in state_of(game).cups[0].row] == [hand[1], hand[0]]
    bob_hand = bob.hand()
    page = bob.fresh()
    page.locator("#fp-hand .fp-die").nth(2).click()
    page.locator("#fp-row .fp-die").first.click()
    assert page.locator("#fp-row .fp-die").count() == 0
    page.locator("#fp-hand .fp-die").nth(1).click()
    page.click("#fp-clear")
    assert (page.input_value("#id_text"), page.locator("#fp-confirm").is_disabled()) == ("", True)
    assert bob.arrange_by_tapping([0, 1, 2]) == f"arrange {' '.join(map(str, bob_hand))}"
    assert [die.value for die in state_of(game).cups[1].row] == bob_hand

    # cy is the one still deciding: the others' pages say so.
    assert ann.waiting() == "Still deciding: cy"
    assert bob.waiting() == "Still deciding: cy"
    cy_hand = cy.hand()
    high_first = sorted(range(2), key=lambda index: cy_hand[index], reverse=True)
    cy_sent = cy.arrange_by_tapping(high_first)
    assert cy_sent == f"arrange {' '.join(map(str, sorted(cy_hand, reverse=True)))}"
    sent = Order.objects.filter(seat__game=game, seat__position=2).order_by("id").last()
    assert sent is not None and sent.canonical == cy_sent

    # The rows as they stand after any tiebreak roll are strictly ordered: the ranking.
    state = state_of(game)
    assert state.finished
    rows = {seat: [die.value for die in state.cups[seat].row] for seat in range(3)}
    ranking = sorted(range(3), key=lambda seat: rows[seat], reverse=True)
    assert list(state.history[-1].order) == ranking
    order = ", ".join(NAMES[seat] for seat in ranking)
    for phone in (ann, bob, cy):
        page = phone.fresh()
        assert page.locator("#fp-waiting").count() == 0
        assert page.locator("#menu-form").count() == 0
        # Each row drawn as dice, each named by its value.
        assert page.locator("#fp-ranking li").evaluate_all(
            "items => items.map(item => item.firstChild.textContent + Array.from("
            "item.querySelectorAll('svg.die'), die => die.getAttribute('aria-label')).join(' '))"
        ) == [f"{NAMES[seat]}: {' '.join(map(str, rows[seat]))}" for seat in ranking]
        assert page.inner_text("#fp-order").startswith(f"Actual order: {order} (")


def test_a_player_arranges_by_choosing_a_die_for_each_place_without_javascript(
    web_server: str, browser: Browser, settings: Settings
) -> None:
    """With JavaScript off the dice cannot be tapped: a select per place, leftmost first,
    arranges them, by the controls only."""
    settings.SITE_URL = web_server
    game = started_game(
        "first-player", now=timezone.now(), players=NAMES, options={"order_mode": "free"}
    )
    ann = Phone(browser, web_server, game, 0, script=False)
    ann.tap("ready")
    for position in (1, 2):
        postal.accept_order(
            game_id=game.pk, position=position, text="ready", source="web", now=timezone.now()
        )
    ann.tap("roll all")
    hand = sorted(state_of(game).cups[0].hand)
    page = ann.fresh()
    shown = (page.locator("#fp-places").is_visible(), page.locator("#fp-arrange").is_visible())
    for place, value in enumerate(hand, start=1):
        page.get_by_label(f"Place {place}", exact=True).select_option(str(value))
    with page.expect_navigation(url=ann.url):
        page.get_by_role("button", name="Arrange in this order").click()

    low_first = " ".join(map(str, hand))
    assert shown == (True, False)
    assert page.locator(".messages li").all_inner_texts() == [
        f"Your order is accepted: arrange {low_first}."
    ]
    assert " ".join(str(die.value) for die in state_of(game).cups[0].row) == low_first
