"""The order forms of the one-line games: a menu of exactly the orders the engine takes
now (buttons when few, a select when many), next to the quick-entry box; Drop-Shy's board
drawn as SVG with a button over each legal cell."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import pytest
from django.test import Client
from time_machine import TimeMachineFixture

from games import postal
from games.models import Game, Order, Seat, Step
from games.postal import access, steps
from games.web.forms import MenuOrderForm, form_class, legal_choices
from tests.factories import seat_page, started_game
from tests.games.playing import SeedOnlyDice

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def frozen(time_machine: TimeMachineFixture, now: datetime) -> None:
    time_machine.move_to(now, tick=False)


def on_turn(game: Game) -> Seat:
    step = Step.objects.get(game=game, number=game.step_number)
    return Seat.objects.get(game=game, position=step.prompts[0]["seat"])


def browser_of(seat: Seat, now: datetime) -> Client:
    client = Client()
    token = access.mint([seat], now=now)[seat.position]
    assert client.post(f"/p/{token}/").status_code == 302
    return client


def options_of(html: str, name: str) -> list[str]:
    select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', html, re.S)
    assert select is not None
    return re.findall(r'<option value="([^"]*)"', select[1])


def menu_post(game: Game, seat: Seat, **fields: str) -> dict[str, Any]:
    """The menu form as the seat's page posts it."""
    return {"step": game.step_number, "seat": str(seat.position), "entry": "menu", **fields}


def buttons_of(html: str) -> list[str]:
    return re.findall(r'<button type="submit" name="pick_button" value="([^"]*)"', html)


def test_dice_survivor_offers_its_legal_actions_as_buttons_and_takes_one(now: datetime) -> None:
    game = started_game("dice-survivor", now=now)
    seat = on_turn(game)
    client = browser_of(seat, now)
    page = client.get(seat_page(game, seat.position)).content.decode()
    others = [name for name in ("ann", "bob", "cy") if name != seat.name]
    assert buttons_of(page) == [
        "pass",
        "extra",
        *(f"challenge {name}" for name in others),
        *(f"challenge {name} double" for name in others),
        *(f"ko {name}" for name in others),
    ]
    response = client.post(
        seat_page(game, seat.position), menu_post(game, seat, pick="", pick_button="extra")
    )
    assert response.status_code == 302
    order = Order.objects.get(seat=seat)
    assert (order.source, order.canonical) == ("web", "extra")


def test_a_menu_order_that_is_not_legal_now_is_refused_and_changes_nothing(now: datetime) -> None:
    game = started_game("dice-survivor", now=now)
    seat = on_turn(game)
    client = browser_of(seat, now)
    before = Game.objects.get(pk=game.pk).state
    response = client.post(
        seat_page(game, seat.position), menu_post(game, seat, pick=f"ko {seat.name}")
    )
    assert response.status_code == 200
    assert re.findall(
        r'<ul class="errors" id="pick-errors"><li>(.*?)</li>', response.content.decode()
    ) == ["That order is not one of the legal ones now: choose one from the menu."]
    assert Order.objects.count() == 0
    assert Game.objects.get(pk=game.pk).state == before
    empty = client.post(seat_page(game, seat.position), menu_post(game, seat))
    assert "Choose your order first." in empty.content.decode()


def test_liars_dice_offers_no_challenge_before_the_first_bid_and_keeps_the_cup_private(
    now: datetime,
) -> None:
    game = started_game("liars-dice", now=now)
    seat = on_turn(game)
    page = browser_of(seat, now).get(seat_page(game, seat.position)).content.decode()
    # The bid has controls of its own (tests/games/web/test_liars_dice_controls.py): the
    # menu holds the moves without a choice in them, and before the first bid there is none.
    assert buttons_of(page) == ["bid"]
    state = game.rules.state_from_json(Game.objects.get(pk=game.pk).state)
    assert legal_choices(game.rules, state, (seat.position + 1) % 3) == []


def test_liars_dice_takes_a_bid_from_its_controls_and_offers_the_challenge_next(
    now: datetime,
) -> None:
    game = started_game("liars-dice", now=now)
    seat = on_turn(game)
    client = browser_of(seat, now)
    client.post(
        seat_page(game, seat.position),
        menu_post(game, seat, pick_button="bid", quantity="3", face="4"),
    )
    assert Order.objects.get(seat=seat).canonical == "bid 3 4"
    game.refresh_from_db()
    following = on_turn(game)
    page = browser_of(following, now).get(seat_page(game, following.position)).content.decode()
    assert buttons_of(page) == ["bid", "liar"]
    assert options_of(page, "quantity")[:2] == ["2", "3"]


def test_drop_shy_draws_the_board_with_a_button_over_each_legal_cell(now: datetime) -> None:
    game = started_game("drop-shy", now=now, options={"dice_per_player": 4})
    seat = on_turn(game)
    client = browser_of(seat, now)
    page = client.get(seat_page(game, seat.position)).content.decode()
    state = game.rules.state_from_json(Game.objects.get(pk=game.pk).state)
    legal = game.rules.view(state, seat.position)["legal"]
    assert sorted(buttons_of(page)) == sorted(f"place {x} {y}" for x, y in legal)
    # The form's drawing and the board section's drawing both highlight exactly those cells.
    highlighted = re.findall(r'<rect class="legal" data-x="(-?\d+)" data-y="(-?\d+)"', page)
    assert sorted(highlighted) == sorted([(str(x), str(y)) for x, y in legal] * 2)
    # Two board drawings; the lines draw every die not yet placed, one SVG each.
    left = sum(len(line) for line in state.lines)
    assert page.count("<svg ") == 2 + left
    assert page.count('<svg class="die" ') == left
    x, y = legal[0]
    response = client.post(
        seat_page(game, seat.position),
        menu_post(game, seat, pick="", pick_button=f"place {x} {y}"),
    )
    assert response.status_code == 302
    assert Order.objects.get(seat=seat).canonical == f"place {x} {y}"
    after = game.rules.state_from_json(Game.objects.get(pk=game.pk).state)
    assert (x, y) in {(placed.x, placed.y) for placed in after.board}


class Counting:
    """A game's engine that counts the orders tried on it."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.tried = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def parse(self, *args: Any) -> Any:
        self.tried += 1
        return self.engine.parse(*args)


def test_a_menu_is_worked_out_once_for_each_state_it_is_shown_in(now: datetime) -> None:
    game = started_game("liars-dice", now=now)
    seat = on_turn(game)
    engine = Counting(game.rules)
    state = engine.state_from_json(game.state)

    def menu_of(state: Any, position: int = seat.position) -> list[tuple[str, str]]:
        form = form_class("liars-dice")(
            engine=engine, state=state, position=position, step_number=game.step_number
        )
        assert isinstance(form, MenuOrderForm)
        return list(form.menu)

    first = menu_of(state)
    assert first == legal_choices(
        game.rules, state, seat.position, keep=lambda text: not text.startswith("bid ")
    )
    probed = engine.tried
    assert probed == len(
        [text for text, _ in engine.candidates(state, seat.position) if not text.startswith("bid ")]
    )
    # The same state again, as an equal value read afresh: nothing is tried again.
    assert menu_of(engine.state_from_json(game.state)) == first
    assert engine.tried == probed
    # Another seat, or the state after a bid, is a menu of its own.
    assert menu_of(state, (seat.position + 1) % 3) == []
    after, _ = game.rules.submit(
        state, seat.position, game.rules.parse(state, seat.position, "bid 3 4"), None
    )
    following = menu_of(after, after.turn)
    assert following == [("liar", "liar: challenge the last bid")]
    assert engine.tried > probed


def test_the_menus_options_escape_what_they_show(
    now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Dice from the seed alone: the seat on turn (not Zoë) whatever games ran before.
    monkeypatch.setattr(steps, "VerifiableDice", SeedOnlyDice)
    game = started_game(
        "dice-survivor",
        now=now,
        players=[
            postal.Player(name, f"p{number}@example.org")
            for number, name in enumerate(("ann", "bob", '<b>"Zoë" & co</b>'))
        ],
    )
    seat = on_turn(game)
    assert seat.name != '<b>"Zoë" & co</b>'
    form = form_class("dice-survivor")(
        engine=game.rules,
        state=game.rules.state_from_json(game.state),
        position=seat.position,
        step_number=game.step_number,
    )
    assert isinstance(form, MenuOrderForm)
    options = str(form.menu_options)
    assert "<b>" not in options
    assert (
        '<option value="challenge &lt;b&gt;&quot;Zoë&quot; &amp; co&lt;/b&gt;">'
        "challenge &lt;b&gt;&quot;Zoë&quot; &amp; co&lt;/b&gt; (stake 1)</option>"
    ) in options
