"""Pages that move by themselves: an open seat's page, and the GM's page of a game, poll
their own address with the token they were drawn with (games.notify.live,
games.web.live). Nothing new: 204 and no page; news: the page, from which the poll takes
its parts; a new page (the game finished, paused): the browser loads it again. A seat's
token moves only for what that seat may see."""

from __future__ import annotations

import re
import secrets
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.test import Client

from games import postal
from games.community import press
from games.models import Game, Seat
from games.notify import live
from games.postal import access
from tests.factories import GMFactory, started_game

pytestmark = pytest.mark.django_db

POLL = {"HX-Request": "true"}


@pytest.fixture
def client() -> Client:
    return Client(REMOTE_ADDR=f"10.{secrets.randbelow(256)}.{secrets.randbelow(256)}.9")


def open_link(client: Client, game: Game, position: int, now: datetime) -> None:
    seat = Seat.objects.get(game=game, position=position)
    token = access.mint([seat], now=now)[position]
    assert client.post(f"/p/{token}/").status_code == 302


def token_of(page: str) -> str:
    match = re.search(r'<div id="live" hidden hx-get="[^"?]*\?live=([^"]+)"', page)
    assert match is not None, "no poll on the page"
    return match.group(1)


def seat(game: Game, position: int) -> Seat:
    return Seat.objects.select_related("game").get(game=game, position=position)


def test_a_seats_token_moves_for_what_it_may_see_and_nothing_else(now: datetime) -> None:
    game = started_game(now=now)
    before = live.seat_pulse(seat(game, 0))
    assert live.seat_pulse(seat(game, 0)) == before
    # Bob writes to Cid alone: Ann's page has nothing new.
    press.send(game_id=game.pk, position=1, to=2, text="psst", source="web", now=now)
    assert live.seat_pulse(seat(game, 0)) == before
    assert live.seat_pulse(seat(game, 2)).answer_to(live.seat_pulse(seat(game, 2)).token) == "none"
    # Bob's order: Ann does not see it.
    postal.accept_order(game_id=game.pk, position=1, text=order_of(game, 1), source="web", now=now)
    assert live.seat_pulse(seat(game, 0)) == before
    # A message to everyone is news for Ann.
    press.send(game_id=game.pk, position=1, to=None, text="hello all", source="web", now=now)
    news = live.seat_pulse(seat(game, 0))
    assert news.answer_to(before.token) == "news"
    # So is her own order, sent from another device, and a deadline the GM moved.
    postal.accept_order(game_id=game.pk, position=0, text=order_of(game, 0), source="web", now=now)
    ordered = live.seat_pulse(seat(game, 0))
    assert ordered.answer_to(news.token) == "news"
    postal.extend_deadline(game.pk, deadline=now + timedelta(days=5), now=now)
    assert live.seat_pulse(seat(game, 0)).answer_to(ordered.token) == "news"


def test_a_message_the_gm_hides_is_news_for_the_seats_and_the_gm(now: datetime) -> None:
    game = started_game(now=now)
    message = press.send(game_id=game.pk, position=1, to=None, text="oops", source="web", now=now)
    seat_before, gm_before = live.seat_pulse(seat(game, 0)), live.gm_pulse(game)
    press.hide(game.pk, message.pk, reason="spoiler", by=None, now=now)
    assert live.seat_pulse(seat(game, 0)).answer_to(seat_before.token) == "news"
    assert live.gm_pulse(game).answer_to(gm_before.token) == "news"


def test_a_resolved_step_is_news_and_a_paused_game_is_a_new_page(now: datetime) -> None:
    game = started_game(now=now)
    before = live.seat_pulse(seat(game, 0))
    postal.resolve_now(game.pk, now=now)
    resolved = live.seat_pulse(seat(game, 0))
    assert resolved.answer_to(before.token) == "news"
    postal.pause(game.pk, now=now)
    assert live.seat_pulse(seat(game, 0)).answer_to(resolved.token) == "page"


def order_of(game: Game, position: int) -> str:
    game.refresh_from_db()
    engine = game.rules
    state = engine.state_from_json(game.state)
    return str(engine.canonical(state, position, engine.default(state, position)))


def test_a_seat_page_answers_its_poll(client: Client, now: datetime) -> None:
    game = started_game(now=now)
    open_link(client, game, 0, now)
    url = f"/play/{game.pk}/0/"
    page = client.get(url).content.decode()
    token = token_of(page)
    assert 'hx-select-oob="#seat-name,#now,#order,#report,#gm-log,#board-section,' in page
    # Nothing new: no page.
    quiet = client.get(url, {"live": token}, headers=POLL)
    assert (quiet.status_code, quiet.content) == (204, b"")
    # News: the page itself, with a new token.
    press.send(game_id=game.pk, position=None, to=None, text="From the GM", source="web", now=now)
    news = client.get(url, {"live": token}, headers=POLL)
    assert news.status_code == 200
    fresh = news.content.decode()
    assert "From the GM" in fresh and token_of(fresh) not in (token, "")
    assert token_of(client.get(url).content.decode()) == token_of(fresh)
    # Without htmx the parameter is a plain visit: the whole page.
    plain = client.get(url, {"live": token})
    assert plain.status_code == 200 and "From the GM" in plain.content.decode()
    # The game finishes: the browser loads the page again.
    postal.pause(game.pk, now=now)
    again = client.get(url, {"live": token_of(fresh)}, headers=POLL)
    assert (again.status_code, again["HX-Refresh"]) == (200, "true")


def test_a_poll_of_a_seat_this_browser_no_longer_holds_loads_the_page_again(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now)
    response = client.get(f"/play/{game.pk}/0/", {"live": "x.y"}, headers=POLL)
    assert (response.status_code, response["HX-Refresh"]) == (200, "true")
    plain = client.get(f"/play/{game.pk}/0/", {"live": "x.y"})
    assert plain.status_code != 200 or "HX-Refresh" not in plain


def test_a_quiet_poll_costs_two_queries_and_no_page(
    client: Client, now: datetime, django_assert_num_queries: Any
) -> None:
    game = started_game(now=now)
    open_link(client, game, 0, now)
    url = f"/play/{game.pk}/0/"
    token = token_of(client.get(url).content.decode())
    # The seats this browser holds (with the game), and the pulse.
    with django_assert_num_queries(2):
        assert client.get(url, {"live": token}, headers=POLL).status_code == 204


def test_the_seat_page_title_says_whose_turn_it_is(client: Client, now: datetime) -> None:
    game = started_game(now=now)
    open_link(client, game, 0, now)
    url = f"/play/{game.pk}/0/"
    # The page's own title (the drawn dice have titles of their own, later).
    title = re.compile(r"<head>.*?<title>(.*?)</title>", re.S)
    assert title.findall(client.get(url).content.decode()) == [f"Your turn · ann: {game.title}"]
    postal.accept_order(game_id=game.pk, position=0, text=order_of(game, 0), source="web", now=now)
    assert title.findall(client.get(url).content.decode()) == [f"ann: {game.title}"]


def test_the_gm_page_answers_its_poll(client: Client, now: datetime) -> None:
    game = started_game(now=now, gm=GMFactory.create(is_staff=True))
    client.force_login(game.gm)
    url = f"/gm/{game.pk}/"
    page = client.get(url).content.decode()
    token = token_of(page)
    assert client.get(url, {"live": token}, headers=POLL).status_code == 204
    # Bob's order is news for the GM, who sees who has ordered.
    postal.accept_order(game_id=game.pk, position=1, text=order_of(game, 1), source="web", now=now)
    news = client.get(url, {"live": token}, headers=POLL)
    assert news.status_code == 200 and token_of(news.content.decode()) != token
    # Another GM's game is not found, polled or not.
    other = started_game(now=now)
    assert client.get(f"/gm/{other.pk}/", {"live": token}, headers=POLL).status_code == 404
