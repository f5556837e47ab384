"""The API of a player's token (games/web/api/seats.py): what it reads, what it plays,
and what it refuses, through Django's test client against the real database."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
from django.test import Client

from games.community import tokens
from games.models import ApiToken, Game, Order, Seat, TokenAction
from tests.conftest import NOW
from tests.factories import started_game
from tests.games.records.test_archive import play_to_the_end

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _clock(now: datetime) -> None:
    """The test's clock stopped at NOW: the API reads it for every order."""


def _token(seat: Seat, *, access: str = "play", scope: str = "seat", bot: bool = False) -> str:
    _, raw = tokens.mint(
        name="test", scope=scope, access=access, bot=bot, email=seat.email, seat=seat, now=NOW
    )
    return raw


def _get(client: Client, raw: str, path: str) -> Any:
    return client.get(f"/api/v1{path}", HTTP_AUTHORIZATION=f"Bearer {raw}")


def _post(client: Client, raw: str, path: str, body: Any) -> Any:
    return client.post(
        f"/api/v1{path}",
        data=json.dumps(body) if not isinstance(body, str) else body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )


def _owing(game: Game) -> Seat:
    step = game.steps.get(number=game.step_number)
    return game.seats.get(position=step.prompted_seats[0])


def test_a_seat_token_reads_its_seat_and_no_other(client: Client) -> None:
    game = started_game("liars-dice", now=NOW, players=2)
    ann, _bob = game.seats.order_by("position")
    raw = _token(ann)
    answer = _get(client, raw, f"/seats/{game.pk}/0")
    assert answer.status_code == 200
    data = answer.json()
    assert data["seat"] == {"position": 0, "name": "ann", "bot": False, "autopilot": ""}
    assert data["game"]["id"] == game.pk
    # The engine's view for ann: her own cup, never bob's.
    assert data["view"] == json.loads(
        json.dumps(game.rules.view(game.rules.state_from_json(game.state), 0))
    )
    other = _get(client, raw, f"/seats/{game.pk}/1")
    assert other.status_code == 404
    assert other.json() == {"detail": "No such seat for this token."}
    # A seat that does not exist says the same.
    assert _get(client, raw, f"/seats/{game.pk}/9").json() == other.json()
    assert [item["position"] for item in _get(client, raw, "/seats").json()] == [0]


def test_an_order_through_the_api_is_taken_and_recorded_with_its_token(client: Client) -> None:
    game = started_game("liars-dice", now=NOW, players=2)
    seat = _owing(game)
    raw = _token(seat)
    moves = _get(client, raw, f"/seats/{game.pk}/{seat.position}/moves").json()
    assert moves["owes"] is True and moves["step"] == 1
    first = moves["menu"][0]["order"]
    answer = _post(
        client, raw, f"/seats/{game.pk}/{seat.position}/orders", {"order": first, "step": 1}
    )
    assert answer.status_code == 200, answer.content
    assert answer.json()["accepted"] is True
    order = Order.objects.get(seat=seat)
    token = ApiToken.objects.get()
    assert (order.source, order.token_id, order.text) == ("api", token.pk, first)
    action = TokenAction.objects.get()
    assert (action.kind, action.row_id, action.position) == ("order", order.pk, seat.position)


def test_a_read_token_sends_no_order_and_a_bad_order_changes_nothing(client: Client) -> None:
    game = started_game("liars-dice", now=NOW, players=2)
    seat = _owing(game)
    path = f"/seats/{game.pk}/{seat.position}/orders"
    read = _post(client, _token(seat, access="read"), path, {"order": "liar"})
    assert read.status_code == 403
    raw = _token(seat)
    bad = _post(client, raw, path, {"order": "fly to the moon", "step": 1})
    assert bad.status_code == 422
    assert bad.json()["detail"]
    malformed = _post(client, raw, path, "{not json")
    assert malformed.status_code in (400, 422)
    assert "detail" in malformed.json()
    missing = _post(client, raw, path, {"step": 1})
    assert missing.status_code == 422
    assert missing.json()["detail"].startswith("The request is not as documented")
    assert not Order.objects.exists()


def test_a_revoked_token_and_no_token_get_401(client: Client) -> None:
    game = started_game("liars-dice", now=NOW, players=2)
    seat = game.seats.get(position=0)
    raw = _token(seat)
    assert _get(client, raw, "/me").status_code == 200
    tokens.revoke(ApiToken.objects.get().pk, email=seat.email, now=NOW)
    gone = _get(client, raw, "/me")
    assert gone.status_code == 401
    assert gone["WWW-Authenticate"] == "Bearer"
    assert client.get("/api/v1/me").status_code == 401


def test_a_token_over_its_limit_gets_429_with_retry_after(client: Client, settings: Any) -> None:
    settings.RATES = {**settings.RATES, "api-token": "3/m"}
    game = started_game("liars-dice", now=NOW, players=2)
    raw = _token(game.seats.get(position=0))
    codes = [_get(client, raw, "/me").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    answer = _get(client, raw, "/me")
    assert 1 <= int(answer["Retry-After"]) <= 60


def test_an_all_seats_token_opens_every_seat_of_the_address_and_only_those(client: Client) -> None:
    first = started_game("liars-dice", now=NOW, players=2)
    second = started_game("liars-dice", now=NOW, players=["ann", "dee"])
    ann = first.seats.get(position=0)
    raw = _token(ann, scope="seats")
    listed = {(item["game"], item["position"]) for item in _get(client, raw, "/seats").json()}
    assert listed == {(first.pk, 0), (second.pk, 0)}
    assert _get(client, raw, f"/seats/{second.pk}/1").status_code == 404


def test_a_seat_that_changes_hands_closes_its_token(client: Client) -> None:
    game = started_game("liars-dice", now=NOW, players=2)
    seat = game.seats.get(position=0)
    raw = _token(seat)
    Seat.objects.filter(pk=seat.pk).update(email="newcomer@example.org")
    assert _get(client, raw, f"/seats/{game.pk}/0").status_code == 404


def test_a_bots_token_plays_only_where_bots_are_allowed_and_marks_the_seat(client: Client) -> None:
    game = started_game("liars-dice", now=NOW, players=2)
    seat = _owing(game)
    raw = _token(seat, bot=True)
    path = f"/seats/{game.pk}/{seat.position}/orders"
    first = _get(client, raw, f"/seats/{game.pk}/{seat.position}/moves").json()["menu"][0]["order"]
    refused = _post(client, raw, path, {"order": first, "step": 1})
    assert refused.status_code == 422
    assert refused.json()["detail"] == "the GM of this game does not allow bots"
    Game.objects.filter(pk=game.pk).update(bots_allowed=True)
    assert _post(client, raw, path, {"order": first, "step": 1}).status_code == 200
    seat.refresh_from_db()
    assert seat.bot is True


def test_events_come_after_their_cursor_and_only_those_the_seat_may_see(client: Client) -> None:
    game = started_game("liars-dice", now=NOW, players=2)
    raw = _token(game.seats.get(position=0))
    data = _get(client, raw, f"/seats/{game.pk}/0/events").json()
    seen = [event["id"] for event in data["events"]]
    everything = list(game.events.order_by("id"))
    assert seen == [event.id for event in everything if event.visible_to(0)]
    assert data["cursor"] == everything[-1].id
    assert _get(client, raw, f"/seats/{game.pk}/0/events?after={data['cursor']}").json() == {
        "events": [],
        "cursor": data["cursor"],
    }


def test_the_document_is_published(client: Client) -> None:
    answer = client.get("/api/v1/openapi.json")
    assert answer.status_code == 200
    document = answer.json()
    assert document["openapi"].startswith("3.")
    assert "/api/v1/seats/{game_id}/{position}/orders" in document["paths"]
    page = client.get("/api/v1/docs")
    assert page.status_code == 200
    assert b"swagger-ui" in page.content


def test_an_order_for_a_step_that_moved_on_is_a_409_and_changes_nothing(client: Client) -> None:
    game = started_game("liars-dice", now=NOW, players=2)
    seat = _owing(game)
    raw = _token(seat)
    path = f"/seats/{game.pk}/{seat.position}/orders"
    assert _post(client, raw, path, {"order": "bid 1 2", "step": 1}).status_code == 200
    again = _post(client, raw, path, {"order": "bid 1 3", "step": 1})
    assert again.status_code == 409
    assert again.json()["detail"].startswith("While the order was on its way, ")
    assert list(Order.objects.values_list("canonical", flat=True)) == ["bid 1 2"]


def test_the_seed_is_told_only_once_the_game_is_over(client: Client) -> None:
    game = started_game("choice", now=NOW, players=2)
    seat = game.seats.get(position=0)
    raw = _token(seat, access="read")
    seed = bytes(game.seed or b"").hex()
    api = f"/seats/{game.pk}/0"
    read = "".join(
        _get(client, raw, path).content.decode()
        for path in ("/me", "/seats", api, f"{api}/moves", f"{api}/events", f"{api}/messages")
    )
    assert seed not in read
    assert _get(client, raw, api).json()["seed"] is None
    game = play_to_the_end(game)
    over = _get(client, raw, api).json()
    assert (over["game"]["status"], over["seed"]) == ("finished", seed)
    standings = game.rules.standings(game.rules.state_from_json(game.state)) or []
    assert [(row["position"], row["place"], row["score"]) for row in over["standings"]] == [
        (s.seat, s.place, s.score) for s in standings
    ]
