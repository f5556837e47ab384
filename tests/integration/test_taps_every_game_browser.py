"""One whole game of every game and profile played in Chromium at 390 px by tapping only: each
order is made with the controls the seat page offers (buttons, boxes, radio buttons, selects,
the board, the dice), never by typing into the order box. Every tap is counted, and the test
prints the taps each kind of move took (``-s`` shows them; docs/orders.md has them)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from django.core.cache import cache
from django.utils import timezone
from pytest_django.fixtures import Settings

from games.models import Game, Order, Step
from tests.factories import seat_page, started_game
from tests.integration.every_game import PHONE, Spec, gm_user, open_link

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

# One small game of each game and profile: few players, few dice, short endings.
GAMES = [
    Spec(engine_key="choice", title="Choice", players=2, options={"end_threshold": 3}),
    Spec(
        engine_key="choice",
        title="Suppenkasper",
        players=2,
        options={"variant": "suppenkasper", "end_threshold": 3},
    ),
    Spec(
        engine_key="liars-dice",
        title="Liar's Dice: classic",
        players=3,
        options={"dice_per_player": 1},
    ),
    Spec(
        engine_key="liars-dice",
        title="Liar's Dice: Death Match",
        players=2,
        options={
            "profile": "genius_dm",
            "fresh_start": True,
            "max_dice": 2,
            "mulligan": True,
            "cheat": True,
        },
    ),
    Spec(
        engine_key="liars-dice",
        title="Liar's Dice: team",
        players=4,
        options={"profile": "genius_team", "dice_per_player": 1},
    ),
    Spec(engine_key="drop-shy", title="Drop-Shy", players=2, options={"dice_per_player": 4}),
    Spec(engine_key="dice-survivor", title="Dice Survivor", players=3, options={"start_pp": 1}),
    Spec(engine_key="first-player", title="The First Player", players=3, options={}),
]

MOST_MOVES = 300


class Taps:
    """A page whose taps are counted: a click, a check or a choice in a select is one."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.count = 0

    def tap(self, selector: str) -> None:
        self.count += 1
        self.page.locator(selector).first.click()

    def send(self, selector: str) -> None:
        """The tap that sends the order: the page reloads."""
        self.count += 1
        with self.page.expect_navigation():
            self.page.locator(selector).first.click()

    def choose(self, selector: str, value: str) -> None:
        self.count += 1
        self.page.select_option(selector, value)

    def has(self, selector: str) -> bool:
        return self.page.locator(selector).count() > 0


def button(taps: Taps, value: str) -> str:
    return f"#menu-form button[name=pick_button][value='{value}']"


def liars_dice(taps: Taps, moves: int) -> None:
    """Mulligan one die every other round, never cheat, do the team action once a turn when
    there is one, challenge once two bids stand, else bid the lowest legal raise."""
    page = taps.page
    if taps.has("#ld-mulligan"):
        if moves % 2:
            taps.tap("#ld-mulligan input[name=reroll]")
            taps.send(button(taps, "mulligan"))
        else:
            taps.send(button(taps, "mulligan none"))
        return
    if taps.has(button(taps, "cheat no")):
        taps.send(button(taps, "cheat no"))
        return
    if taps.has("#ld-action"):
        taps.tap("#ld-action input[name=reveal]")
        taps.tap("#ld-action input[name=then]")
        taps.send(button(taps, "action"))
        return
    bids = page.locator("#board").inner_text().count(" bids ") if taps.has("#board") else 0
    if taps.has(button(taps, "liar")) and (moves % 3 == 2 or bids >= 2):
        taps.send(button(taps, "liar"))
        return
    if taps.has("#ld-bid input[name=show]"):
        taps.tap("#ld-bid input[name=show]")
    taps.send(button(taps, "bid"))


def choice(taps: Taps, game: Game) -> None:
    """Each round's fields: the first die the menu offers that was rolled set aside (one
    of the three values the sheet stores when the roll shows one, as the rules require),
    the other four paired low with low."""
    state = game.rules.state_from_json(Game.objects.get(pk=game.pk).state)
    position = int(taps.page.url.rstrip("/").split("/")[-1])
    stored = set(state.sheets[position].stored_values)
    for played in state.rounds:
        number = played.number
        block = taps.page.locator(f"#round-{number}")
        offered = block.locator(f"#id_r{number}_value option").evaluate_all(
            "options => options.map(o => o.value)"
        )
        rolled = [v for v in offered if v and int(v) in played.roll]
        must = [v for v in rolled if int(v) in stored] if len(stored) >= 3 else []
        value = (must or rolled)[0]
        if len(stored) < 3:
            stored.add(int(value))
        rest = sorted(played.roll)
        rest.remove(int(value))
        taps.choose(f"#id_r{number}_value", value)
        for letter, die in zip("abcd", rest, strict=True):
            taps.choose(f"#id_r{number}_{letter}", str(die))
    taps.send("#blocks-form button[type=submit]")


def first_player(taps: Taps, moves: int) -> None:
    """The first player to move gives the last player a die; then ready in the gift window,
    roll every die, arrange by tapping the dice (in the order dealt), no token."""
    if moves == 0 and taps.has("#fp-gift"):
        last = taps.page.locator("#fp-gift select[name=to] option").last.get_attribute("value")
        assert last is not None
        taps.choose("#fp-gift select[name=to]", last)
        taps.send(button(taps, "give"))
        return
    if taps.has("#fp-arrange:not([hidden])"):
        for index in range(taps.page.locator("#fp-hand .fp-die").count()):
            taps.tap(f"#fp-hand .fp-die >> nth={index}")
        taps.send("#fp-confirm")
        return
    for value in ("ready", "roll all", "token none"):
        if taps.has(button(taps, value)):
            taps.send(button(taps, value))
            return
    menu(taps)


def dice_survivor(taps: Taps) -> None:
    """Accept a result, else challenge the first player offered, else the first button."""
    for prefix in ("accept", "challenge "):
        found = taps.page.locator(f"#menu-form button[name=pick_button][value^='{prefix}']")
        if found.count():
            taps.send(f"#menu-form button[name=pick_button][value^='{prefix}']")
            return
    menu(taps)


def menu(taps: Taps) -> None:
    """The first button of the menu, or the first order of its select and Send."""
    if taps.has("#menu-form button[name=pick_button]"):
        taps.send("#menu-form button[name=pick_button]")
    else:
        value = taps.page.locator("#menu-form select option").nth(1).get_attribute("value")
        assert value is not None
        taps.choose("#menu-form select", value)
        taps.send("#menu-form button[type=submit]")
    if taps.has("#confirm-form"):
        taps.tap("#confirm-form input[name=confirm]")
        taps.send("#confirm-form button[type=submit]")


def move(taps: Taps, game: Game, moves: int) -> None:
    if game.engine == "liars-dice":
        liars_dice(taps, moves)
    elif game.engine == "choice":
        choice(taps, game)
    elif game.engine == "drop-shy":
        taps.send("#menu-form button.cell-button")
    elif game.engine == "first-player":
        first_player(taps, moves)
    elif game.engine == "dice-survivor":
        dice_survivor(taps)
    else:
        menu(taps)


@pytest.fixture
def phone(module_browser: Browser) -> Iterator[Any]:
    cache.clear()
    contexts = []

    def new_page() -> Page:
        context = module_browser.new_context(viewport=PHONE)
        contexts.append(context)
        return context.new_page()

    yield new_page
    for context in contexts:
        context.close()


# The First Player's rolling takes several orders of a seat in one step: roll, then reroll
# or arrange, each applied at once.
MORE_IN_A_STEP = ("roll", "reroll or arrange")


def next_owed(game: Game) -> tuple[Step, int, str] | None:
    """The open step, the first seat it asks for an order that has not given one (or, in
    the First Player's rolling, still owes its arrangement), and the kind of move owed."""
    game = Game.objects.get(pk=game.pk)
    step = Step.objects.get(game=game, number=game.step_number)
    live = {
        prompt.seat: str(prompt.kind)
        for prompt in game.rules.prompts(game.rules.state_from_json(game.state))
    }
    ordered = set(Order.objects.filter(step=step).values_list("seat__position", flat=True))
    for position in step.prompted_seats:
        if position not in ordered or live.get(position) in MORE_IN_A_STEP:
            return step, position, live.get(position, "")
    return None


@pytest.mark.parametrize("spec", GAMES, ids=[spec["title"] for spec in GAMES])
def test_a_whole_game_is_played_by_tapping_only(
    transactional_db: None, module_server: str, phone: Any, settings: Settings, spec: Spec
) -> None:
    settings.SITE_URL = module_server
    game = started_game(now=timezone.now(), gm=gm_user(), **spec)
    pages: dict[int, Taps] = {}
    taps: dict[str, list[int]] = defaultdict(list)
    moves = 0
    while Game.objects.get(pk=game.pk).status != Game.Status.FINISHED:
        assert moves < MOST_MOVES, f"{spec['title']} not over after {moves} moves"
        owed = next_owed(game)
        assert owed is not None, "every seat asked has ordered, and the step is still open"
        step, position, kind = owed
        if position not in pages:
            pages[position] = Taps(phone())
            open_link(pages[position].page, module_server, game.seats.get(position=position))
        else:
            pages[position].page.goto(f"{module_server}{seat_page(game, position)}")
        player = pages[position]
        before = player.count
        move(player, game, moves)
        errors = player.page.locator("ul.errors li").all_inner_texts()
        assert errors == [], errors
        assert (
            player.page.locator(".messages li")
            .first.inner_text()
            .startswith("Your order is accepted: ")
        )
        assert Order.objects.filter(step=step, seat__position=position).exists()
        taps[kind].append(player.count - before)
        moves += 1
    summary = "; ".join(
        f"{kind}: {len(counts)} moves, {min(counts)}-{max(counts)} taps "
        f"(mean {sum(counts) / len(counts):.1f})"
        for kind, counts in taps.items()
    )
    print(f"\n{spec['title']}: {moves} moves by taps. {summary}")
    assert Game.objects.get(pk=game.pk).status == Game.Status.FINISHED
    assert all(count >= 1 for counts in taps.values() for count in counts)
