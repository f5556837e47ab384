"""The First Player's gift as controls: whom to give to (only the other players), how many
(only as many as the player may give) and, with tokens, dice or tokens; the order written is
the typed one, and a gift the rules refuse changes nothing."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime
from html import unescape
from typing import Any

import pytest
from django.test import Client
from time_machine import TimeMachineFixture

from games.engines.first_player.forms import FirstPlayerOrderForm
from games.engines.first_player.rules import FirstPlayerState
from games.models import Game, Order
from games.postal import access
from tests.factories import seat_page, started_game

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def frozen(time_machine: TimeMachineFixture, now: datetime) -> None:
    time_machine.move_to(now, tick=False)


def browser(game: Game, position: int, now: datetime) -> Client:
    client = Client()
    token = access.mint([game.seats.get(position=position)], now=now)[position]
    assert client.post(f"/p/{token}/").status_code == 302
    return client


def select(html: str, name: str) -> list[tuple[str, str]]:
    found = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', html, re.S)
    assert found is not None, name
    return re.findall(r'<option value="([^"]*)"[^>]*>([^<]*)</option>', found[1])


def buttons(html: str) -> list[str]:
    return re.findall(r'<button type="submit" name="pick_button" value="([^"]*)"', html)


def errors(html: str) -> list[str]:
    return [unescape(e) for e in re.findall(r'<ul class="errors" id="[^"]*"><li>(.*?)</li>', html)]


def gift(**fields: str) -> dict[str, Any]:
    return {"step": "1", "seat": "0", "entry": "menu", "pick": "", "pick_button": "give", **fields}


def state_of(game: Game) -> FirstPlayerState:
    state = game.rules.state_from_json(Game.objects.get(pk=game.pk).state)
    assert isinstance(state, FirstPlayerState)
    return state


def test_a_gift_is_chosen_from_the_other_players_and_what_may_be_given(now: datetime) -> None:
    game = started_game("first-player", now=now)
    assert state_of(game).phase == "gifts"
    client = browser(game, 0, now)
    html = client.get(seat_page(game, 0)).content.decode()
    # ann holds 3 dice and keeps one: she may give 1 or 2 dice to bob or cy.
    assert select(html, "to") == [("1", "bob"), ("2", "cy")]
    assert select(html, "count") == [("1", "1"), ("2", "2")]
    assert '<input type="hidden" name="unit" value="dice">' in html
    assert buttons(html) == ["give", "ready"]

    before = Game.objects.get(pk=game.pk).state
    to_herself = client.post(seat_page(game, 0), gift(to="0", count="1", unit="dice"))
    assert errors(to_herself.content.decode()) == ["Choose another player of the game."]
    too_many = client.post(seat_page(game, 0), gift(to="1", count="3", unit="dice"))
    assert errors(too_many.content.decode()) == ["Choose how many from the list."]
    no_one = client.post(seat_page(game, 0), gift(count="1", unit="dice"))
    assert errors(no_one.content.decode()) == ["Choose whom to give to."]
    assert Order.objects.count() == 0
    assert Game.objects.get(pk=game.pk).state == before

    taken = client.post(seat_page(game, 0), gift(to="2", count="2", unit="dice"))
    assert taken.status_code == 302
    order = Order.objects.get()
    assert (order.text, order.canonical) == ("give cy 2 dice", "give cy 2 dice")
    assert state_of(game).counts[:3] == (1, 3, 5)
    # ann keeps one die: nothing more to give; she may still send ready.
    html = client.get(seat_page(game, 0)).content.decode()
    assert 'id="id_to"' not in html
    assert buttons(html) == ["ready"]
    assert "You have nothing you may give: when you are ready," in html


def test_with_tokens_a_gift_is_of_dice_or_of_tokens(now: datetime) -> None:
    game = started_game("first-player", now=now, options={"tokens": True})
    state = replace(state_of(game), tokens=(4, 0, 0))

    def form(**data: str) -> FirstPlayerOrderForm:
        return FirstPlayerOrderForm(
            gift(**data) if data else None,
            engine=game.rules,
            state=state,
            position=0,
            step_number=1,
        )

    unbound = form()
    assert [value for value, _ in unbound.fields["unit"].choices] == ["dice", "token"]  # type: ignore[attr-defined]
    # Up to two dice, up to four tokens.
    assert [value for value, _ in unbound.fields["count"].choices] == ["1", "2", "3", "4"]  # type: ignore[attr-defined]
    three_dice = form(to="1", count="3", unit="dice")
    assert not three_dice.is_valid()
    assert three_dice.errors["count"] == ["You may give at most 2 dice: you keep at least one."]
    tokens = form(to="1", count="3", unit="token")
    assert tokens.is_valid(), tokens.errors
    assert tokens.order_text() == "give bob 3 tokens"
    assert (
        game.rules.canonical(state, 0, game.rules.parse(state, 0, tokens.order_text()))
        == "give bob 3 tokens"
    )


def test_tokens_on_several_dice_are_a_box_per_die(now: datetime) -> None:
    game = started_game("first-player", now=now, options={"tokens": True})
    engine = game.rules
    state = state_of(game)
    for position in range(3):
        state, _ = engine.submit(state, position, engine.parse(state, position, "ready"), _Dice([]))
    state = replace(state, tokens=(2, 0, 0))
    state, _ = engine.submit(state, 0, engine.parse(state, 0, "roll all"), _Dice([6, 3, 2]))
    state, _ = engine.submit(state, 0, engine.parse(state, 0, "arrange 6 3 2"), _Dice([]))

    def form(**data: Any) -> FirstPlayerOrderForm:
        post = {"step": "1", "seat": "0", "entry": "menu", "pick": "", **data}
        return FirstPlayerOrderForm(
            post if data else None, engine=engine, state=state, position=0, step_number=1
        )

    unbound = form()
    # A 6 takes no token: dice 2 and 3 may.
    assert unbound.fields["tokens"].choices == [("2", "die 2 (a 3)"), ("3", "die 3 (a 2)")]  # type: ignore[attr-defined]
    assert not form(pick_button="tokens").is_valid()
    assert form(pick_button="tokens").errors["tokens"] == ["Tick the dice to put a token on first."]
    taken = form(pick_button="tokens", tokens=["3", "2"])
    assert taken.is_valid(), taken.errors
    assert taken.order_text() == "token 2 3"
    assert engine.canonical(state, 0, engine.parse(state, 0, "token 2 3")) == "token 2 3"


class _Dice:
    def __init__(self, values: list[int]) -> None:
        self.values = list(values)

    def draw(self, sides: int) -> int:
        return self.values.pop(0)
