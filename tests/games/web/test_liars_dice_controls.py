"""Liar's Dice's controls: a bid as a quantity and a face starting at the lowest legal raise,
a box per die for the Death Match's mulligan, the team game's reveal/reroll/learn as choices
of what is legal, and the sum bid; each writes the order the typed syntax gives, and a
combination the rules refuse is refused with their words and changes nothing."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime
from html import unescape
from typing import Any

import pytest
from django.test import Client
from time_machine import TimeMachineFixture

from games.engines.liars_dice import forms as ld_forms
from games.engines.liars_dice.rules import Bid, LiarsDiceState
from games.models import Game, Order, Seat, Step
from games.postal import access
from tests.factories import seat_page, started_game

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def frozen(time_machine: TimeMachineFixture, now: datetime) -> None:
    time_machine.move_to(now, tick=False)


def browser(game: Game, position: int, now: datetime) -> Client:
    client = Client()
    assert (
        client.post(
            f"/p/{access.mint([game.seats.get(position=position)], now=now)[position]}/"
        ).status_code
        == 302
    )
    return client


def on_turn(game: Game) -> Seat:
    step = Step.objects.get(game=game, number=Game.objects.get(pk=game.pk).step_number)
    return game.seats.get(position=step.prompts[0]["seat"])


def select(html: str, name: str) -> tuple[list[str], str | None]:
    """The values of select ``name`` and the one selected."""
    found = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', html, re.S)
    assert found is not None, name
    options = re.findall(r'<option value="([^"]*)"( selected)?', found[1])
    chosen = [value for value, selected in options if selected]
    return [value for value, _ in options], (chosen[0] if chosen else None)


def radios(html: str, name: str) -> tuple[list[str], list[str]]:
    """The values of radio group or boxes ``name`` and the checked ones."""
    inputs = re.findall(rf'<input type="(?:radio|checkbox)" name="{name}"[^>]*>', html)
    values = [re.search(r'value="([^"]*)"', tag)[1] for tag in inputs]  # type: ignore[index]
    return values, [v for v, tag in zip(values, inputs, strict=True) if " checked" in tag]


def labels(html: str, name: str) -> list[str]:
    return [
        unescape(text.strip())
        for text in re.findall(
            rf'<label class="choice"><input type="(?:radio|checkbox)" name="{name}"[^>]*> '
            r"([^<]*)</label>",
            html,
        )
    ]


def buttons(html: str) -> list[str]:
    return re.findall(r'<button type="submit" name="pick_button" value="([^"]*)"', html)


def errors(html: str) -> list[str]:
    return [unescape(e) for e in re.findall(r'<ul class="errors" id="[^"]*"><li>(.*?)</li>', html)]


def post(game: Game, seat: Seat, **fields: str | list[str]) -> dict[str, Any]:
    return {
        "step": str(Game.objects.get(pk=game.pk).step_number),
        "seat": str(seat.position),
        "entry": "menu",
        "pick": "",
        **fields,
    }


def state_of(game: Game) -> LiarsDiceState:
    state = game.rules.state_from_json(Game.objects.get(pk=game.pk).state)
    assert isinstance(state, LiarsDiceState)
    return state


def test_a_classic_opening_bid_starts_at_the_lowest_legal_bid_and_never_on_ones(
    now: datetime,
) -> None:
    game = started_game("liars-dice", now=now)
    seat = on_turn(game)
    html = browser(game, seat.position, now).get(seat_page(game, seat.position)).content.decode()
    # 15 dice in play; with wild ones a round may not open on ones: the face 1 is not offered.
    assert select(html, "quantity") == ([str(q) for q in range(1, 16)], "1")
    assert radios(html, "face") == (["2", "3", "4", "5", "6"], ["2"])
    assert "Chosen to start with: the lowest legal bid, 1 x 2." in html
    # No bid yet: nothing to challenge, so no other button than the bid's.
    assert buttons(html) == ["bid"]


def test_after_three_fives_only_raises_are_offered_and_lower_ones_refused(now: datetime) -> None:
    game = started_game("liars-dice", now=now)
    first = on_turn(game)
    opener = browser(game, first.position, now)
    taken = opener.post(
        seat_page(game, first.position),
        post(game, first, pick_button="bid", quantity="3", face="5"),
    )
    assert taken.status_code == 302
    assert Order.objects.get(seat=first).canonical == "bid 3 5"
    assert Order.objects.get(seat=first).text == "bid 3 5"

    seat = on_turn(game)
    client = browser(game, seat.position, now)
    html = client.get(seat_page(game, seat.position)).content.decode()
    # The ones switch (2 x 1) is the lowest quantity of a legal raise; 3 x 6 the lowest
    # raise of all, chosen to start with.
    assert select(html, "quantity") == ([str(q) for q in range(2, 16)], "3")
    assert radios(html, "face") == (["1", "2", "3", "4", "5", "6"], ["6"])
    assert "Chosen to start with: the lowest legal bid, 3 x 6." in html
    assert buttons(html) == ["bid", "liar"]

    before = Game.objects.get(pk=game.pk).state
    refused = client.post(
        seat_page(game, seat.position), post(game, seat, pick_button="bid", quantity="3", face="4")
    )
    assert refused.status_code == 200
    assert errors(refused.content.decode()) == [
        "bid must raise: after 3 x 5 bid 3 x 6 or 4 or more of any face other than 1, "
        "or at least 2 x 1"
    ]
    # What the player chose is kept.
    assert select(refused.content.decode(), "quantity")[1] == "3"
    assert radios(refused.content.decode(), "face")[1] == ["4"]
    assert Order.objects.filter(seat=seat).count() == 0
    assert Game.objects.get(pk=game.pk).state == before
    # A quantity not offered at all is refused by the form.
    bad = client.post(
        seat_page(game, seat.position), post(game, seat, pick_button="bid", quantity="1", face="6")
    )
    assert errors(bad.content.decode()) == ["Choose a quantity from the list."]
    assert Game.objects.get(pk=game.pk).state == before

    taken = client.post(
        seat_page(game, seat.position), post(game, seat, pick_button="bid", quantity="2", face="1")
    )
    assert taken.status_code == 302
    assert Order.objects.get(seat=seat).canonical == "bid 2 1"


def test_a_palifico_round_offers_only_the_opening_face(now: datetime) -> None:
    game = started_game("liars-dice", now=now)
    state = replace(state_of(game), palifico=True, bids=(Bid(0, 2, 4),), turn=1)
    form = ld_forms.LiarsDiceOrderForm(engine=game.rules, state=state, position=1, step_number=1)
    html = str(form["face"])
    assert re.findall(r'value="(\d)"', html) == ["4"]
    quantity = form.fields["quantity"]
    assert [value for value, _ in quantity.choices] == [str(q) for q in range(3, 16)]  # type: ignore[attr-defined]
    assert form["quantity"].value() == "3"


def test_the_death_match_mulligan_is_a_box_per_die(now: datetime) -> None:
    game = started_game(
        "liars-dice", now=now, players=2, options={"profile": "genius_dm", "mulligan": True}
    )
    cup = state_of(game).hands[0]
    seat = game.seats.get(position=0)
    client = browser(game, 0, now)
    html = client.get(seat_page(game, 0)).content.decode()
    assert radios(html, "reroll") == (["1", "2", "3", "4"], [])
    assert labels(html, "reroll") == [f"die {n}: a {cup[n - 1]}" for n in (1, 2, 3, 4)]
    assert buttons(html) == ["mulligan", "mulligan none"]

    none_ticked = client.post(seat_page(game, 0), post(game, seat, pick_button="mulligan"))
    assert errors(none_ticked.content.decode()) == [
        "Tick the dice to reroll first, or keep every die with mulligan none."
    ]
    assert Order.objects.count() == 0
    no_die = client.post(
        seat_page(game, 0), post(game, seat, pick_button="mulligan", reroll=["2", "5"])
    )
    assert errors(no_die.content.decode()) == ["You have no such die."]
    assert Order.objects.count() == 0

    taken = client.post(
        seat_page(game, 0), post(game, seat, pick_button="mulligan", reroll=["4", "1"])
    )
    assert taken.status_code == 302
    assert Order.objects.get(seat=seat).canonical == "mulligan 1 4"
    other = game.seats.get(position=1)
    kept = browser(game, 1, now).post(
        seat_page(game, 1), post(game, other, pick_button="mulligan none")
    )
    assert kept.status_code == 302
    assert Order.objects.get(seat=other).canonical == "mulligan none"


def test_the_death_match_with_revelation_bids_with_the_die_to_show(now: datetime) -> None:
    game = started_game(
        "liars-dice", now=now, players=2, options={"profile": "genius_dm", "revelation": True}
    )
    seat = game.seats.get(position=0)
    cup = state_of(game).hands[0]
    client = browser(game, 0, now)
    html = client.get(seat_page(game, 0)).content.decode()
    # Ones are not wild: 1 x 1 is the lowest bid, and any face of up to 8 dice.
    assert select(html, "quantity") == ([str(q) for q in range(1, 9)], "1")
    assert radios(html, "face") == (["1", "2", "3", "4", "5", "6"], ["1"])
    assert radios(html, "show") == (["1", "2", "3", "4"], [])
    assert labels(html, "show") == [f"{n} (a {cup[n - 1]})" for n in (1, 2, 3, 4)]
    refused = client.post(
        seat_page(game, 0), post(game, seat, pick_button="bid", quantity="2", face="6")
    )
    assert errors(refused.content.decode()) == [
        "Choose which of your dice your opponent sees with this bid."
    ]
    assert Order.objects.count() == 0
    taken = client.post(
        seat_page(game, 0), post(game, seat, pick_button="bid", quantity="2", face="6", show="3")
    )
    assert taken.status_code == 302
    assert Order.objects.get().canonical == "bid 2 6 show 3"


def test_the_team_action_offers_the_legal_reveals_and_what_follows(now: datetime) -> None:
    game = started_game("liars-dice", now=now, players=4, options={"profile": "genius_team"})
    seat = on_turn(game)
    state = state_of(game)
    watched = (seat.position - 1) % 4
    others = [s for s in range(4) if s not in (seat.position, watched)]
    client = browser(game, seat.position, now)
    html = client.get(seat_page(game, seat.position)).content.decode()
    hand = state.hands[watched]
    assert radios(html, "reveal") == (["1", "2", "3", "4", "5"], [])
    assert labels(html, "reveal") == [f"die {n}: a {hand[n - 1]}" for n in range(1, 6)]
    assert radios(html, "then")[0] == ["reroll", *(f"{t}:{n}" for t in others for n in range(1, 6))]
    assert labels(html, "then") == [
        f"reroll {state.players[watched]}'s other dice",
        *(str(n) for _ in others for n in range(1, 6)),
    ]
    for other in others:
        assert f'aria-label="or learn {state.players[other]}&#x27;s die, in secret:"' in html
    assert buttons(html) == ["action", "bid"]

    missing = client.post(
        seat_page(game, seat.position), post(game, seat, pick_button="action", reveal="2")
    )
    assert errors(missing.content.decode()) == ["Choose what follows the reveal."]
    assert Order.objects.count() == 0

    target = state.players[others[1]]
    taken = client.post(
        seat_page(game, seat.position),
        post(game, seat, pick_button="action", reveal="2", then=f"{others[1]}:3"),
    )
    assert taken.status_code == 302
    assert Order.objects.get().canonical == f"reveal 2 learn {target} 3"
    # The action is done: the same player now bids or challenges, and no action is offered.
    html = client.get(seat_page(game, seat.position)).content.decode()
    assert "reveal" not in re.findall(r'name="([a-z_]+)"', html)
    assert buttons(html) == ["bid"]


def test_the_sum_phase_bids_a_total_from_the_lowest_legal_one(now: datetime) -> None:
    game = started_game("liars-dice", now=now, players=4, options={"profile": "genius_team"})
    state = replace(
        state_of(game),
        counts=(1, 1, 0, 0),
        hands=((3,), (5,), (), ()),
        revealed=((), (), (), ()),
        bids=(Bid(0, 6, 0, sum=True),),
        turn=1,
    )
    assert state.sum_phase
    form = ld_forms.LiarsDiceOrderForm(engine=game.rules, state=state, position=1, step_number=1)
    assert [value for value, _ in form.fields["total"].choices] == [  # type: ignore[attr-defined]
        str(total) for total in range(7, 13)
    ]
    assert form["total"].value() == "7"
    bound = ld_forms.LiarsDiceOrderForm(
        {"step": "1", "entry": "menu", "pick_button": "bid", "total": "9"},
        engine=game.rules,
        state=state,
        position=1,
        step_number=1,
    )
    assert bound.is_valid(), bound.errors
    assert bound.order_text() == "bid sum 9"
