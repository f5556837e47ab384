"""The First Player's host override (rules F-16): when the real game has its own
first-player rule, the host enters the actual order instead of the players' rolls; the
round's transfers still apply."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.contrib.auth.models import User
from django.test import Client

from games import postal
from games.engines.first_player.rules import FirstPlayerEngine
from games.models import Game, Step
from tests.factories import GMFactory, started_game

pytestmark = pytest.mark.django_db

ENGINE = FirstPlayerEngine()


# A First Player night in free order mode.
FREE_ORDER = {"order_mode": "free"}


def test_the_host_sets_the_order_and_the_round_resolves_with_its_transfers(now: datetime) -> None:
    game = started_game("first-player", now=now, options=FREE_ORDER)
    postal.set_order(game.pk, names=["Cy", "ann", "bob"], now=now)
    game.refresh_from_db()
    state = ENGINE.state_from_json(game.state)
    assert game.status == Game.Status.FINISHED
    assert [state.players[s] for s in state.history[-1].order] == ["cy", "ann", "bob"]
    # The winner gives a die to the last player.
    assert dict(zip(state.players, state.counts, strict=True)) == {"ann": 3, "bob": 4, "cy": 2}
    assert Step.objects.get(game=game, number=1).closed_by == "gm"
    standings = ENGINE.standings(state) or []
    assert [(state.players[s.seat], s.place) for s in standings] == [
        ("cy", 1), ("ann", 2), ("bob", 3),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (["ann", "bob"], "the actual order must name every player exactly once"),
        (["ann", "bob", "bob"], "the actual order must name every player exactly once"),
        (["ann", "bob", "dee"], "'dee' is not a player of this game"),
    ],
)
def test_a_wrong_order_is_refused_and_changes_nothing(
    now: datetime, names: list[str], message: str
) -> None:
    game = started_game("first-player", now=now, options=FREE_ORDER)
    before = (game.state, game.step_number)
    with pytest.raises(postal.PostalError) as refused:
        postal.set_order(game.pk, names=names, now=now)
    assert refused.value.message == message
    game.refresh_from_db()
    assert (game.state, game.step_number) == before


def test_only_first_player_games_have_an_order_to_set(now: datetime) -> None:
    game = started_game(now=now, players=2)
    with pytest.raises(postal.PostalError) as refused:
        postal.set_order(game.pk, names=["ann", "bob"], now=now)
    assert refused.value.message == "Choice has no order for the host to set"


def test_the_gm_sets_the_order_from_the_game_page(now: datetime) -> None:
    gm: User = GMFactory.create(is_staff=True)
    game = started_game("first-player", now=now, gm=gm, options=FREE_ORDER)
    client = Client()
    client.force_login(gm)
    page = client.get(f"/gm/{game.pk}/").content.decode()
    assert 'id="set-order"' in page
    shown = {"names": "bob, cy, ann", "step": str(game.step_number)}
    assert f'<input type="hidden" name="step" value="{game.step_number}"' in page
    response = client.post(f"/gm/{game.pk}/set-order/", shown, follow=True)
    assert [str(m) for m in response.context["messages"]] == [
        "The actual order is set: bob, cy, ann."
    ]
    # Posted again (a double click): the step it was for is resolved, and nothing changes.
    bad = client.post(f"/gm/{game.pk}/set-order/", shown, follow=True)
    assert [str(m) for m in bad.context["messages"]] == [
        f"nothing was done: step {shown['step']} was already resolved, and the game is over"
    ]
