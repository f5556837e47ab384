"""'Play again' from the GM panel: the next game with the same players and options; in
Drop-Shy the previous loser places first and the instigator is recorded as rolled for the
previous winner (rules/drop-shy.md 4.1)."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.contrib.auth.models import User
from django.test import Client

from games import postal
from games.engines.drop_shy.rules import DropShyEngine
from games.models import Game, Step
from moderator.mail.models import OutboundEmail
from tests.factories import GMFactory, started_game

pytestmark = pytest.mark.django_db

ENGINE = DropShyEngine()


@pytest.fixture
def gm() -> User:
    return GMFactory.create(is_staff=True)


def finished_game(gm: User, now: datetime) -> Game:
    game = started_game(
        "drop-shy",
        now=now,
        players=3,
        gm=gm,
        title="Shy",
        options={"dice_per_player": 2},
        time_zone="Europe/Paris",
        schedule_spec={"kind": "daily", "time": "20:00"},
    )
    for _ in range(200):
        game.refresh_from_db()
        if game.status == Game.Status.FINISHED:
            return game
        state = ENGINE.state_from_json(game.state)
        ((text, _), *_) = ENGINE.candidates(state, state.current)
        postal.accept_order(
            game_id=game.pk, position=state.current, text=text, source="web", now=now
        )
    pytest.fail("the game did not end")


def act(client: Client, game: Game, action: str) -> list[str]:
    response = client.post(f"/gm/{game.pk}/{action}/", follow=True)
    return [str(message) for message in response.context["messages"]]


def test_play_again_starts_the_next_game_with_the_loser_first(
    client: Client, gm: User, now: datetime
) -> None:
    game = finished_game(gm, now)
    standings = {
        game.seats.get(position=s.seat).name: s.place
        for s in ENGINE.standings(ENGINE.state_from_json(game.state)) or []
    }
    winner = min(standings, key=lambda name: (standings[name], name))
    loser = max(standings, key=lambda name: standings[name])
    client.force_login(gm)
    page = client.get(f"/gm/{game.pk}/").content.decode()
    assert "Play again with the same players" in page

    messages = act(client, game, "again")
    new = Game.objects.get(previous=game)
    assert messages == [f"Shy, game 2 has started with the same players; {loser} places first."]
    assert new.status == Game.Status.RUNNING
    names = list(new.seats.order_by("position").values_list("name", flat=True))
    assert names[0] == loser and sorted(names) == ["ann", "bob", "cy"]
    assert (new.options["previous_winner"], new.options["previous_loser"]) == (winner, loser)
    assert (new.time_zone, new.schedule) == ("Europe/Paris", {"kind": "daily", "time": "20:00"})
    # The loser has the first turn (played by the moderator when their die fits nowhere).
    view = ENGINE.view(ENGINE.state_from_json(new.state), None)
    first = Step.objects.get(game=new, number=1)
    first_turn = view["history"][0]["seat"] if view["history"] else first.prompts[0]["seat"]
    assert first_turn == 0
    report = OutboundEmail.objects.get(kind="report", game=new, to=f"{loser}@example.org")
    assert f"The instigator was rolled for {winner}." in report.text

    # Once is enough; the old page links the new game.
    assert act(client, game, "again") == [f"the next game, {new.title}, has already started"]
    assert f'<p id="next-game">The next game: <a href="/gm/{new.pk}/">Shy, game 2</a>.</p>' in (
        client.get(f"/gm/{game.pk}/").content.decode()
    )


def test_any_finished_game_plays_again_with_the_same_seats_options_and_rhythm(
    client: Client, gm: User, now: datetime
) -> None:
    options = {"rolls_per_turn": 4, "round_cap": 10}
    game = started_game(
        now=now, players=2, gm=gm, options=options, time_zone="Europe/Berlin", title="Quick"
    )
    while game.status != Game.Status.FINISHED:
        postal.resolve_now(game.pk, now=now)
        game.refresh_from_db()
    client.force_login(gm)
    assert "Play again with the same players" in client.get(f"/gm/{game.pk}/").content.decode()

    assert act(client, game, "again") == ["Quick, game 2 has started with the same players."]
    new = Game.objects.get(previous=game)
    assert (new.engine, new.options, new.status, new.time_zone, new.schedule) == (
        "choice",
        options,
        Game.Status.RUNNING,
        "Europe/Berlin",
        {"kind": "interval", "seconds": 48 * 3600},
    )
    assert list(new.seats.order_by("position").values_list("name", "email")) == [
        ("ann", "ann@example.org"),
        ("bob", "bob@example.org"),
    ]


def test_play_again_waits_for_the_end(client: Client, gm: User, now: datetime) -> None:
    running = started_game("drop-shy", now=now, players=2, gm=gm, title="Still going")
    choice = started_game(now=now, players=2, gm=gm)
    client.force_login(gm)
    assert act(client, running, "again") == [
        "the game is not over yet; the next game follows the final standings"
    ]
    assert act(client, choice, "again") == [
        "the game is not over yet; the next game follows the final standings"
    ]
    assert "Play again" not in client.get(f"/gm/{choice.pk}/").content.decode()
    assert Game.objects.filter(previous__isnull=False).count() == 0
