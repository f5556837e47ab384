from __future__ import annotations

import re
import secrets
from datetime import datetime, timedelta
from html import escape, unescape
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.sessions.backends.base import SessionBase
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.contrib.staticfiles import finders
from django.core import signing
from django.http import HttpResponse
from django.test import Client, RequestFactory
from pytest_django.fixtures import DjangoAssertNumQueries, DjangoCaptureOnCommitCallbacks, Settings
from time_machine import TimeMachineFixture

from games import postal, tasks
from games.engines import colours
from games.engines.base import OrderError
from games.engines.choice.rules import (
    ChoiceEngine,
    ChoiceState,
    RoundLine,
    legal_choices,
    play_round,
)
from games.engines.dice import NoDice
from games.models import DiceRoll, Event, Game, Order, Seat, SeatLink, Step
from games.notify import reports
from games.postal import access
from games.templatetags.dice import svg_die, swatch
from moderator.mail.models import OutboundEmail
from tests.factories import GameFactory, seat_page, started_game
from tests.games.web.test_seat_pages import SEAT_LINE

pytestmark = pytest.mark.django_db

CHOICE = ChoiceEngine()


@pytest.fixture(autouse=True)
def frozen(time_machine: TimeMachineFixture, now: datetime) -> None:
    """The views read the clock: hold it at the tests' ``now``."""
    time_machine.move_to(now, tick=False)


def fresh_ip() -> str:
    """A client address of its own: the link rate limit counts per address in the shared
    cache, across tests and test runs."""
    return f"10.{secrets.randbelow(256)}.{secrets.randbelow(256)}.{secrets.randbelow(256)}"


@pytest.fixture
def client() -> Client:
    return Client(REMOTE_ADDR=fresh_ip())


def token_for(game: Game, position: int, now: datetime) -> str:
    return access.mint([game.seats.get(position=position)], now=now)[position]


def held(client: Client) -> Any:
    """The [seat id, link version] pairs of the browser's seats cookie."""
    return signing.loads(
        client.cookies[access.SEATS_COOKIE].value, salt="games.postal.access.seats"
    )


def log_in(client: Client, game: Game, position: int, now: datetime) -> None:
    response = client.post(f"/p/{token_for(game, position, now)}/")
    assert response.status_code == 302


def state_of(game: Game) -> ChoiceState:
    game.refresh_from_db()
    state: ChoiceState = CHOICE.state_from_json(game.state)
    return state


def choices_for(game: Game, position: int, pick: int = 0) -> list[Any]:
    """A legal choice per round of the open postal turn: the ``pick``-th legal one."""
    state = state_of(game)
    sheet = state.sheets[position]
    picked = []
    for round_ in state.rounds:
        options = legal_choices(sheet, round_.roll)
        choice = options[pick % len(options)]
        picked.append((round_.number, choice))
        sheet = play_round(sheet, round_.roll, RoundLine(round_.number, choice), state.options)
    return picked


def canonical(picked: list[Any]) -> str:
    return "\n".join(f"{number}: {choice.text()}" for number, choice in picked)


def typed_data(position: int, text: str, step: int = 1) -> dict[str, str]:
    """The typed-order form as the page of the seat at ``position`` posts it."""
    return {"step": str(step), "seat": str(position), "entry": "text", "text": text}


def block_data(step: int, picked: list[Any], position: int) -> dict[str, str]:
    """The blocks form as the page of the seat at ``position`` posts it."""
    data = {"step": str(step), "seat": str(position), "entry": "blocks"}
    for number, choice in picked:
        a, b = choice.first
        c, d = choice.second
        data |= {
            f"r{number}_kind": choice.kind,
            f"r{number}_value": str(choice.value),
            f"r{number}_a": str(b),  # the pairs written high die first: the engine sorts
            f"r{number}_b": str(a),
            f"r{number}_c": str(c),
            f"r{number}_d": str(d),
        }
    return data


def snapshot(game: Game) -> tuple[Any, ...]:
    game.refresh_from_db()
    return (
        game.state,
        game.step_number,
        game.dice_drawn,
        Order.objects.count(),
        Step.objects.filter(status=Step.Status.OPEN).count(),
        DiceRoll.objects.count(),
        Event.objects.count(),
        OutboundEmail.objects.count(),
    )


def section(html: str, tag: str, element_id: str) -> str:
    """The markup of the element with ``id`` (elements of that tag do not nest here)."""
    match = re.search(rf'<{tag} id="{element_id}"[^>]*>(.*?)</{tag}>', html, re.S)
    assert match is not None, f"no <{tag} id={element_id}>"
    return match.group(1)


def block_errors(html: str, round_number: int) -> list[str]:
    block = section(html, "fieldset", f"round-{round_number}")
    found = re.search(r'<ul class="errors">(.*?)</ul>', block, re.S)
    return re.findall(r"<li>(.*?)</li>", found.group(1), re.S) if found else []


def top_errors(html: str) -> list[str]:
    found = re.search(r'<ul class="errors" id="form-errors">(.*?)</ul>', html, re.S)
    return re.findall(r"<li>(.*?)</li>", found.group(1), re.S) if found else []


def not_valid_body(client: Client) -> bytes:
    response = client.get("/p/not-a-token/")
    assert response.status_code == 404
    return response.content


# --- magic links ---------------------------------------------------------------------------


def test_get_on_a_link_shows_continue_and_writes_nothing(
    client: Client, now: datetime, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    game = started_game(now=now, players=3)
    token = token_for(game, 1, now)
    before = (Session.objects.count(), SeatLink.objects.count(), snapshot(game))
    with django_assert_num_queries(1):  # the one SELECT that looks the token up
        response = client.get(f"/p/{token}/")
    assert response.status_code == 200
    assert not set(response.cookies) & {settings.SESSION_COOKIE_NAME, access.SEATS_COOKIE}
    assert (Session.objects.count(), SeatLink.objects.count(), snapshot(game)) == before
    html = response.content.decode()
    assert '<form method="post" action="">' in html
    assert 'name="csrfmiddlewaretoken"' in html
    assert "<p>“Test Choice”: you play as <strong>bob</strong>.</p>" in html


def test_post_on_a_link_remembers_the_seat_and_redirects_to_the_token_free_page(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now, players=3)
    token = token_for(game, 1, now)
    response = client.post(f"/p/{token}/")
    assert (response.status_code, response["Location"]) == (302, seat_page(game, 1))
    assert held(client) == [[game.seats.get(position=1).pk, 0]]
    cookie = response.cookies[access.SEATS_COOKIE]
    assert (cookie["max-age"], cookie["path"], cookie["httponly"], cookie["samesite"]) == (
        settings.SESSION_COOKIE_AGE,
        "/",
        True,
        "Lax",
    )
    # The browser holds its seats; the server keeps nothing of them.
    assert settings.SESSION_COOKIE_NAME not in response.cookies
    assert Session.objects.count() == 0
    page = client.get(seat_page(game, 1))
    assert page.status_code == 200
    assert "You play as <strong>bob</strong>" in page.content.decode()
    assert token not in page.content.decode()


def test_a_second_game_joins_the_first_in_the_session_and_the_list(
    client: Client, now: datetime
) -> None:
    first = started_game(now=now, players=2, title="First")
    second = started_game(now=now, players=2, title="Second")
    log_in(client, first, 0, now)
    log_in(client, second, 1, now)
    assert held(client) == [
        [first.seats.get(position=0).pk, 0],
        [second.seats.get(position=1).pk, 0],
    ]
    html = client.get("/play/").content.decode()
    assert re.findall(SEAT_LINE, html) == [
        (seat_page(second, 1), "Second", "bob"),
        (seat_page(first, 0), "First", "ann"),
    ]
    assert client.get(seat_page(first, 0)).status_code == 200
    assert client.get(seat_page(second, 1)).status_code == 200


def test_a_seats_cookie_tampered_with_or_too_old_opens_nothing(
    client: Client, now: datetime, time_machine: TimeMachineFixture
) -> None:
    game = started_game(now=now, players=2)
    log_in(client, game, 0, now)
    signed = client.cookies[access.SEATS_COOKIE].value
    expected = not_valid_body(client)
    theirs = game.seats.get(position=1).pk
    forged = [
        signed[:-1] + ("A" if signed[-1] != "A" else "B"),  # the signature changed
        signing.dumps([[theirs, 0]], salt="another salt"),
        signing.dumps([[theirs, 0]], salt="games.postal.access.seats", key="another key"),
        f"[[{theirs}, 0]]",
    ]
    for value in forged:
        client.cookies[access.SEATS_COOKIE] = value
        for position in (0, 1):
            response = client.get(seat_page(game, position))
            assert (response.status_code, response.content) == (404, expected), value
        typed = typed_data(1, canonical(choices_for(game, 1)))
        assert client.post(seat_page(game, 1), typed).status_code == 404
    assert Order.objects.filter(source=Order.Source.WEB).count() == 0
    client.cookies[access.SEATS_COOKIE] = signed
    assert client.get(seat_page(game, 0)).status_code == 200
    time_machine.move_to(now + timedelta(seconds=settings.SESSION_COOKIE_AGE), tick=False)
    assert client.get(seat_page(game, 0)).status_code == 200
    time_machine.move_to(now + timedelta(seconds=settings.SESSION_COOKIE_AGE + 1), tick=False)
    assert client.get(seat_page(game, 0)).status_code == 404


def test_a_seats_cookie_reads_under_a_new_key_while_the_old_is_a_fallback(
    client: Client, now: datetime, settings: Settings
) -> None:
    game = started_game(now=now, players=1)
    settings.SECRET_KEY = "the key of last year " * 3
    log_in(client, game, 0, now)
    settings.SECRET_KEY = "the key of this year " * 3
    settings.SECRET_KEY_FALLBACKS = ["the key of last year " * 3]
    assert client.get(seat_page(game, 0)).status_code == 200
    settings.SECRET_KEY_FALLBACKS = []
    assert client.get(seat_page(game, 0)).status_code == 404


def test_a_browser_keeps_its_latest_seats_within_a_cookie(
    client: Client, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(access, "SEATS_KEPT", 3)
    games = [started_game(now=now, players=1) for _ in range(4)]
    for game in games:
        log_in(client, game, 0, now)
    log_in(client, games[1], 0, now)  # again: it moves to the end, not twice
    assert held(client) == [
        [game.seats.get(position=0).pk, 0] for game in [games[2], games[3], games[1]]
    ]
    assert client.get(seat_page(games[0], 0)).status_code == 404
    assert client.get(seat_page(games[1], 0)).status_code == 200


def test_the_most_seats_a_browser_keeps_fit_in_a_cookie(rf: RequestFactory) -> None:
    """Browsers keep cookies of 4096 bytes, name and value: SEATS_KEPT of the largest ids
    and link versions must fit."""
    request = rf.get("/")
    response = HttpResponse()
    for seat_id in range(10**12 - access.SEATS_KEPT - 1, 10**12):
        access.remember_seat(request, response, Seat(pk=seat_id, link_version=9999))
        request.COOKIES[access.SEATS_COOKIE] = response.cookies[access.SEATS_COOKIE].value
    value = response.cookies[access.SEATS_COOKIE].value
    assert len(access.browser_links(request)) == access.SEATS_KEPT == 100
    assert len(access.SEATS_COOKIE) + 1 + len(value) < 4000


def test_seats_a_session_held_before_the_cookie_still_open_their_pages(
    client: Client, now: datetime
) -> None:
    """Browsers signed in before the seats cookie kept their seats in the session."""
    first, second = started_game(now=now, players=2), started_game(now=now, players=2)
    session = SessionStore()
    session["seats"] = [[first.seats.get(position=0).pk, 0]]
    session.create()
    assert session.session_key is not None
    client.cookies[settings.SESSION_COOKIE_NAME] = session.session_key
    assert client.get(seat_page(first, 0)).status_code == 200
    assert client.get(seat_page(second, 1)).status_code == 404
    log_in(client, second, 1, now)
    assert held(client) == [
        [first.seats.get(position=0).pk, 0],
        [second.seats.get(position=1).pk, 0],
    ]
    assert "seats" not in SessionStore(session.session_key).load()
    assert client.get(seat_page(first, 0)).status_code == 200
    assert client.get(seat_page(second, 1)).status_code == 200


def test_wrong_rotated_and_expired_links_answer_the_same_404_for_get_and_post(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now, players=3)
    expected = not_valid_body(client)
    assert b"This link is not valid" in expected
    rotated = token_for(game, 0, now)
    postal.rotate_link(game.pk, position=0, now=now)
    expired = token_for(game, 1, now - timedelta(days=settings.LINK_DAYS, seconds=1))
    for token in ("x" * 43, rotated, expired, "a" * 101):
        for method in (client.get, client.post):
            response = method(f"/p/{token}/")
            assert (response.status_code, response.content) == (404, expected), token
    assert settings.SESSION_COOKIE_NAME not in client.cookies
    assert Session.objects.count() == 0


def test_a_rotated_link_also_closes_the_pages_it_opened(client: Client, now: datetime) -> None:
    game = started_game(now=now, players=2)
    log_in(client, game, 0, now)
    assert client.get(seat_page(game, 0)).status_code == 200
    new_token = postal.rotate_link(game.pk, position=0, now=now)
    response = client.get(seat_page(game, 0))
    assert (response.status_code, response.content) == (404, not_valid_body(client))
    # Its orders too: a typed order (the seat is found under the game's lock) and blocks.
    typed = typed_data(0, canonical(choices_for(game, 0)))
    before = snapshot(game)
    for data in (typed, block_data(1, choices_for(game, 0), 0)):
        response = client.post(seat_page(game, 0), data)
        assert (response.status_code, response.content) == (404, not_valid_body(client))
    assert snapshot(game) == before
    client.post(f"/p/{new_token}/")
    assert client.get(seat_page(game, 0)).status_code == 200
    assert client.post(seat_page(game, 0), typed).status_code == 302


def test_a_form_without_its_step_for_a_seat_this_browser_does_not_hold_answers_404(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now, players=2)
    log_in(client, game, 1, now)
    before = snapshot(game)
    for step in ("", "x"):
        response = client.post(seat_page(game, 0), {"seat": "0", "step": step, "entry": "text"})
        assert (response.status_code, response.content) == (404, not_valid_body(client))
    # The seat's own browser is told the form is out of date.
    response = client.post(seat_page(game, 1), {"seat": "1", "step": "", "entry": "text"})
    assert (response.status_code, response["Location"]) == (302, seat_page(game, 1))
    assert snapshot(game) == before


def test_links_are_rate_limited_per_address_for_get_and_post(client: Client, now: datetime) -> None:
    game = started_game(now=now, players=1)
    token = token_for(game, 0, now)
    for _ in range(15):
        assert client.get(f"/p/{token}/").status_code == 200
        assert client.get("/p/wrong/").status_code == 404
    assert client.get(f"/p/{token}/").status_code == 429
    response = client.post(f"/p/{token}/")
    assert response.status_code == 429
    assert b"Too many requests" in response.content
    assert Session.objects.count() == 0
    other = Client(REMOTE_ADDR=fresh_ip())
    assert other.get(f"/p/{token}/").status_code == 200


def test_another_seats_game_and_a_missing_game_answer_404(client: Client, now: datetime) -> None:
    mine = started_game(now=now, players=2)
    theirs = started_game(now=now, players=2)
    log_in(client, mine, 0, now)
    expected = not_valid_body(client)
    for url in (
        seat_page(theirs, 0),
        seat_page(theirs, 1),
        f"/play/{theirs.pk}/",
        f"/play/{theirs.pk + 1000}/0/",
        f"/play/{theirs.pk + 1000}/",
    ):
        response = client.get(url)
        assert (response.status_code, response.content) == (404, expected), url
    response = client.post(seat_page(theirs, 0), typed_data(0, "x"))
    assert (response.status_code, response.content) == (404, expected)
    stranger = Client(REMOTE_ADDR=fresh_ip())
    assert stranger.get(seat_page(mine, 0)).status_code == 404
    assert Order.objects.count() == 0


def test_csrf_is_enforced_on_the_link_and_the_order_form(now: datetime) -> None:
    game = started_game(now=now, players=2)
    token = token_for(game, 0, now)
    browser = Client(enforce_csrf_checks=True, REMOTE_ADDR=fresh_ip())
    assert browser.post(f"/p/{token}/").status_code == 403
    assert Session.objects.count() == 0
    browser.get(f"/p/{token}/")
    csrf = browser.cookies["csrftoken"].value
    response = browser.post(f"/p/{token}/", {"csrfmiddlewaretoken": csrf})
    assert response.status_code == 302
    data = block_data(1, choices_for(game, 0), 0)
    assert browser.post(seat_page(game, 0), data).status_code == 403
    assert Order.objects.count() == 0
    accepted = browser.post(seat_page(game, 0), data | {"csrfmiddlewaretoken": csrf})
    assert accepted.status_code == 302
    assert Order.objects.count() == 1


# --- the order form --------------------------------------------------------------------


def test_the_form_offers_one_block_per_round_with_the_roll_and_only_legal_values(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now, players=2)
    log_in(client, game, 0, now)
    html = client.get(seat_page(game, 0)).content.decode()
    state = state_of(game)
    for round_ in state.rounds:
        block = section(html, "fieldset", f"round-{round_.number}")
        dice = " ".join(map(str, round_.roll))
        assert f"<legend>Round {round_.number}: roll {dice} " in block
        legend = block[: block.index("</legend>")]
        assert re.findall(r'<svg class="die" [^>]*aria-label="(\d)"', legend) == [
            str(value) for value in round_.roll
        ]
        # An empty sheet stores fewer than three values: any die may be the Wurfel (W1).
        assert re.findall(rf'name="r{round_.number}_kind" value="(\w)"', block) == ["W"]
        values = re.search(rf'<select name="r{round_.number}_value".*?</select>', block, re.S)
        assert values is not None
        offered = re.findall(r'<option value="(\d)"', values.group(0))
        assert offered == [str(v) for v in sorted(set(round_.roll))]


def test_a_valid_order_from_the_blocks_is_taken_in_canonical_form(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now, players=3)
    log_in(client, game, 0, now)
    picked = choices_for(game, 0)
    response = client.post(seat_page(game, 0), block_data(1, picked, 0))
    assert (response.status_code, response["Location"]) == (302, seat_page(game, 0))
    order = Order.objects.get()
    assert (order.source, order.canonical, order.seat.position) == ("web", canonical(picked), 0)
    assert order.text == "\n".join(
        f"{n}: {c.kind}{c.value} {c.first[1]}+{c.first[0]} {c.second[0]}+{c.second[1]}"
        for n, c in picked
    )
    html = client.get(seat_page(game, 0)).content.decode()
    accepted = "; ".join(canonical(picked).splitlines())
    assert f'<li class="success">Your order is accepted: {accepted}.</li>' in html
    counting = section(html, "div", "counting")
    assert "<p>The order that counts now, received Mon 23 Nov 2026 18:00 UTC:</p>" in counting
    assert f"<pre>{canonical(picked)}</pre>" in counting


def test_a_valid_order_from_the_quick_box_is_taken_in_canonical_form(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now, players=3)
    log_in(client, game, 2, now)
    picked = choices_for(game, 2, pick=1)
    typed = "\n".join(
        f"{c.kind.lower()} {c.value} {c.first[0]} + {c.first[1]}, {c.second[0]}+{c.second[1]}"
        for _, c in picked
    )
    response = client.post(seat_page(game, 2), typed_data(2, typed))
    assert response.status_code == 302
    order = Order.objects.get()
    assert (order.source, order.text, order.canonical) == ("web", typed, canonical(picked))


def test_an_invalid_order_shows_the_engines_message_at_its_round_and_changes_nothing(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now, players=3)
    log_in(client, game, 0, now)
    picked = choices_for(game, 0)
    data = block_data(1, picked, 0)
    second = picked[1][0]
    data[f"r{second}_a"] = "6" if data[f"r{second}_a"] != "6" else "1"  # not the roll's dice
    state = state_of(game)
    wrong = "\n".join(
        f"{n}: {data[f'r{n}_kind']}{data[f'r{n}_value']} {data[f'r{n}_a']}+{data[f'r{n}_b']} "
        f"{data[f'r{n}_c']}+{data[f'r{n}_d']}"
        for n, _ in picked
    )
    with pytest.raises(OrderError) as caught:
        CHOICE.submit(state, 0, CHOICE.parse(state, 0, wrong), dice=None)  # type: ignore[arg-type]  # submit draws no die
    message = caught.value.message
    assert message.startswith(f"round {second}: the roll is ")
    before = snapshot(game)
    response = client.post(seat_page(game, 0), data)
    assert response.status_code == 200
    html = response.content.decode()
    assert block_errors(html, second) == [escape(message)]
    assert block_errors(html, picked[0][0]) == []
    assert top_errors(html) == []
    assert snapshot(game) == before
    # The block keeps what was chosen, so the player corrects one field.
    block = section(html, "fieldset", f"round-{second}")
    assert f'<option value="{data[f"r{second}_a"]}" selected>' in block


def test_an_unfinished_block_is_named_and_nothing_is_sent(client: Client, now: datetime) -> None:
    game = started_game(now=now, players=3)
    log_in(client, game, 0, now)
    picked = choices_for(game, 0)
    data = block_data(1, picked, 0)
    first = picked[0][0]
    data[f"r{first}_c"] = ""
    before = snapshot(game)
    html = client.post(seat_page(game, 0), data).content.decode()
    assert block_errors(html, first) == [
        f"round {first}: choose the die you set aside and all four pair dice"
    ]
    assert snapshot(game) == before


def test_a_quick_box_error_is_shown_at_the_box(client: Client, now: datetime) -> None:
    game = started_game(now=now, players=3)
    log_in(client, game, 1, now)
    before = snapshot(game)
    html = client.post(seat_page(game, 1), typed_data(1, "W5 1+3")).content.decode()
    found = re.search(r'<ul class="errors" id="text-errors"><li>(.*?)</li>', html)
    assert found is not None
    assert found.group(1) == escape(
        "round 1: cannot read 'w5 1+3'; write W (Wurfel) or F (free ride), the die set aside "
        "and two pairs, e.g. W5 1+3 3+4"
    )
    assert snapshot(game) == before


def test_an_order_after_the_deadline_is_too_late_and_changes_nothing(
    client: Client, now: datetime, time_machine: TimeMachineFixture
) -> None:
    game = started_game(now=now, players=3)
    log_in(client, game, 0, now)
    data = block_data(1, choices_for(game, 0), 0)
    before = snapshot(game)
    time_machine.move_to(now + timedelta(hours=48, seconds=1), tick=False)
    response = client.post(seat_page(game, 0), data)
    assert response.status_code == 200
    assert top_errors(response.content.decode()) == [
        "too late: the deadline passed at Wed 25 Nov 2026 18:00 UTC, so nothing was recorded; "
        "postal turn 1 is being resolved and its report comes by email"
    ]
    assert snapshot(game) == before


RESOLVED_BY_THE_GM = (
    "While your page was open, postal turn 1 was resolved at Mon 23 Nov 2026 18:00 UTC by the "
    "GM; postal turn 2 is open now. Your order was not recorded: new dice were rolled since "
    "you wrote it; read the new report first. It is in the box below: check it, change it if "
    "need be, and send it again."
)


def typed_box(html: str) -> str:
    found = re.search(r'<textarea name="text"[^>]*>\n?(.*?)</textarea>', html, re.S)
    assert found is not None
    return unescape(found.group(1))


def test_an_order_from_a_page_of_a_resolved_step_says_what_happened_and_keeps_it(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now, players=2)
    log_in(client, game, 0, now)
    picked = choices_for(game, 0)
    data = block_data(1, picked, 0)
    postal.resolve_now(game.pk, now=now)
    before = snapshot(game)
    response = client.post(seat_page(game, 0), data)
    assert response.status_code == 200
    html = response.content.decode()
    assert text_errors(html) == [escape(RESOLVED_BY_THE_GM)]
    # The order as the blocks of step 1 wrote it, in the box of the step open now.
    assert typed_box(html) == "\n".join(
        f"{n}: {data[f'r{n}_kind']}{data[f'r{n}_value']} {data[f'r{n}_a']}+{data[f'r{n}_b']} "
        f"{data[f'r{n}_c']}+{data[f'r{n}_d']}"
        for n, _ in picked
    )
    assert re.findall(r'<input type="hidden" name="step" value="(\d+)">', html) == ["2", "2"]
    assert snapshot(game) == before


def text_errors(html: str) -> list[str]:
    found = re.search(r'<ul class="errors" id="text-errors">(.*?)</ul>', html, re.S)
    return re.findall(r"<li>(.*?)</li>", found.group(1), re.S) if found else []


def test_a_typed_order_after_the_deadline_is_too_late_at_the_box(
    client: Client, now: datetime, time_machine: TimeMachineFixture
) -> None:
    game = started_game(now=now, players=3)
    log_in(client, game, 0, now)
    data = typed_data(0, canonical(choices_for(game, 0)))
    before = snapshot(game)
    time_machine.move_to(now + timedelta(hours=48, seconds=1), tick=False)
    response = client.post(seat_page(game, 0), data)
    assert response.status_code == 200
    html = response.content.decode()
    assert text_errors(html) == [
        "too late: the deadline passed at Wed 25 Nov 2026 18:00 UTC, so nothing was recorded; "
        "postal turn 1 is being resolved and its report comes by email"
    ]
    assert top_errors(html) == []
    assert snapshot(game) == before


def test_a_typed_order_for_a_resolved_step_says_what_happened_and_keeps_it(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now, players=2)
    log_in(client, game, 0, now)
    text = canonical(choices_for(game, 0))
    postal.resolve_now(game.pk, now=now)
    before = snapshot(game)
    response = client.post(seat_page(game, 0), typed_data(0, text))
    assert response.status_code == 200
    html = response.content.decode()
    assert text_errors(html) == [escape(RESOLVED_BY_THE_GM)]
    assert typed_box(html) == text
    assert top_errors(html) == []
    assert snapshot(game) == before


def test_a_typed_order_out_of_turn_is_refused_with_the_engines_message(
    client: Client, now: datetime
) -> None:
    game = started_game("dice-survivor", now=now)
    step = game.steps.get()
    (prompt,) = step.prompts
    idle = (prompt["seat"] + 1) % 3
    log_in(client, game, idle, now)
    before = snapshot(game)
    data = typed_data(idle, "pass", step=step.number)
    response = client.post(seat_page(game, idle), data, follow=True)
    assert response.redirect_chain == [(seat_page(game, idle), 302)]
    active = ("ann", "bob", "cy")[prompt["seat"]]
    html = response.content.decode()
    assert f'<li class="error">not your turn: waiting for {active}</li>' in html
    assert snapshot(game) == before


def test_a_game_not_started_shows_the_waiting_page_and_takes_no_order(
    client: Client, now: datetime
) -> None:
    game = GameFactory.create(seats=2)
    log_in(client, game, 0, now)
    typed = typed_data(0, "W5 1+3 3+4")
    for response in (
        client.get(seat_page(game, 0)),
        client.post(seat_page(game, 0), typed),
        client.post(seat_page(game, 0), {"step": "1", "seat": "0", "entry": "blocks"}),
    ):
        assert response.status_code == 200
        html = response.content.decode()
        assert "<p>The game has not started yet. You will get your first turn report" in html
        assert 'id="text-form"' not in html
        assert '<li class="error">' not in html
    assert Order.objects.count() == 0


@pytest.mark.parametrize(
    "engine",
    [
        pytest.param("moderator.sessions", marks=pytest.mark.redis, id="sessions-in-redis"),
        pytest.param("django.contrib.sessions.backends.db", id="sessions-in-db"),
    ],
)
# PostgreSQL's one statement for the seat, its locked game and its open step (SQLite, the
# embedded default, reads them one by one: postal._linked_seat_and_step).
@pytest.mark.postgres
def test_an_order_post_makes_a_fixed_number_of_queries(
    engine: str,
    client: Client,
    now: datetime,
    settings: Settings,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
    django_assert_num_queries: DjangoAssertNumQueries,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings.SESSION_ENGINE = engine
    game = started_game(now=now, players=3, early_processing=False)
    # A player who asked for receipts of the orders made on the page.
    Seat.objects.filter(game=game, position=0).update(web_receipts=True)
    log_in(client, game, 0, now)
    # A browser that also holds a session (a GM's login, say) has it read by no post.
    client.force_login(game.gm)
    sessions_read: list[int] = []
    monkeypatch.setattr(SessionBase, "_get_session", lambda self, **kw: sessions_read.append(1))
    first, revision = choices_for(game, 0, pick=0), choices_for(game, 0, pick=1)
    assert canonical(first) != canonical(revision)
    # No session (the browser's seats are in its signed cookie), and nothing of the page
    # for a typed order that is accepted. Inside the savepoint a test runs it in (a
    # transaction in production): the seat the browser's links open with its game locked
    # and the game's open step, in one statement (the post is counted against the seat's
    # rate limit then), the order (owed its receipt), its event, and the game's new state.
    # The same order again (a double tap) leaves the game's state as it is: instead of the
    # writes, one read of the seat's order that counts finds it the same. Then a revision,
    # written like the first.
    for text, queries in [(first, 6), (first, 4), (revision, 6)]:
        with (
            django_assert_num_queries(queries) as captured,
            django_capture_on_commit_callbacks() as after_commit,
        ):
            response = client.post(seat_page(game, 0), typed_data(0, canonical(text)))
        assert response.status_code == 302
        assert after_commit == []  # nothing is published: the receipt is the workers' run
    assert sessions_read == []
    lock = captured.captured_queries[1]["sql"]
    assert lock.startswith("SELECT s.id, s.game_id, ") and "auth_user" not in lock
    assert lock.endswith("FOR UPDATE OF g FOR NO KEY UPDATE OF st SKIP LOCKED")
    assert "state_before" not in lock
    orders = list(Order.objects.order_by("id"))
    assert [(order.canonical, order.receipt_due, order.source) for order in orders] == [
        (canonical(first), True, "web"),
        (canonical(revision), True, "web"),
    ]
    assert not OutboundEmail.objects.filter(kind="receipt").exists()
    assert tasks.write_receipts() == 2


def test_a_revision_replaces_the_counting_order_and_the_page_says_so(
    client: Client, now: datetime, time_machine: TimeMachineFixture
) -> None:
    game = started_game(now=now, players=2, early_processing=False)
    log_in(client, game, 1, now)
    first, second = choices_for(game, 1, pick=0), choices_for(game, 1, pick=1)
    assert canonical(first) != canonical(second)
    client.post(seat_page(game, 1), block_data(1, first, 1))
    time_machine.move_to(now + timedelta(hours=3, minutes=7), tick=False)
    client.post(seat_page(game, 1), typed_data(1, canonical(second)))
    assert list(Order.objects.order_by("id").values_list("canonical", flat=True)) == [
        canonical(first),
        canonical(second),
    ]
    html = client.get(seat_page(game, 1)).content.decode()
    counting = section(html, "div", "counting")
    assert "<p>The order that counts now, received Mon 23 Nov 2026 21:07 UTC:</p>" in counting
    assert f"<pre>{canonical(second)}</pre>" in counting
    assert canonical(first) not in counting
    private = section(html, "div", "private")
    assert f"{canonical(second)}</pre>" in private
    # The blocks start from the order that counts.
    for number, choice in second:
        block = section(html, "fieldset", f"round-{number}")
        value = re.search(rf'<select name="r{number}_value".*?</select>', block, re.S)
        assert value is not None
        assert f'<option value="{choice.value}" selected>' in value.group(0)
    assert CHOICE.state_from_json(Game.objects.get().state).orders[1] == CHOICE.parse(
        state_of(game), 1, canonical(second)
    )


def test_the_page_shows_report_board_deadline_and_history_newest_first(
    client: Client, now: datetime
) -> None:
    game = started_game(
        now=now,
        players=["ann", postal.Player("bob", "bob@example.org", time_zone="America/New_York")],
        time_zone="Europe/Berlin",
    )
    for position in (0, 1):
        postal.accept_order(
            game_id=game.pk,
            position=position,
            text=canonical(choices_for(game, position)),
            source="email",
            now=now,
        )
    log_in(client, game, 1, now)
    html = client.get(seat_page(game, 1)).content.decode()
    state = state_of(game)
    assert section(html, "p", "owed").endswith(
        "<strong>Deadline: Wed 25 Nov 2026 13:00 EST (18:00 UTC)</strong>"
    )
    rows = re.findall(r"<tr>(.*?)</tr>", section(html, "table", "board"), re.S)
    cells = [re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row) for row in rows]
    assert cells[0] == ["Player", *map(str, range(2, 13)), "Wurfels", "Score"]
    for position, sheet in enumerate(state.sheets):
        stored = " ".join(
            f"{svg_die(value, colours.seat_colour(position))}\N{MULTIPLICATION SIGN}{count}"
            for value, count in sheet.stored
        )
        assert cells[position + 1] == [
            f"{swatch(position)}{state.players[position]}",
            *map(str, sheet.counts),
            stored,
            str(CHOICE.view(state, None)["players"][position]["running_score"]),
        ]
    history = section(html, "section", "history")
    assert re.findall(r"<h3>(.*?)</h3>", history) == ["Postal turn 1, resolved"]
    events = Event.objects.filter(step__number=1).order_by("id")
    visible = [e.text for e in events if e.visible_to(1)]
    assert any(text.startswith("order received") for text in visible)
    step1 = history.split("<h3>Postal turn 1, resolved</h3>")[1]
    assert re.findall(r"<li>(.*?)</li>", step1, re.S) == [escape(text) for text in visible]
    report = section(html, "section", "report")
    assert "bob, round 1: " in report
    assert "postal turn 2, rounds 3-4: round 3 rolls " in report


def test_pages_are_made_for_phones_and_work_without_javascript(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now, players=1)
    log_in(client, game, 0, now)
    html = client.get(seat_page(game, 0)).content.decode()
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html
    # No code of the page's own: htmx and the poll that keep it up to date, deferred (the
    # forms are plain forms: the tests of each post them without a browser).
    scripts = [re.sub(r' nonce="[^"]+"', "", tag) for tag in re.findall(r"<script[^>]*>", html)]
    assert scripts == [
        '<script src="/static/django_htmx/htmx-2.min.js" defer>',
        '<script src="/static/games/live.js" defer>',
    ]
    assert '<link rel="stylesheet" href="/static/moderator/site.css">' in html
    stylesheet = finders.find("moderator/site.css")
    assert isinstance(stylesheet, str)
    assert "min-height: 44px" in Path(stylesheet).read_text()


def chosen(html: str) -> dict[str, str]:
    """What the blocks form shows as chosen: each select's selected option and each
    checked radio."""
    start = html.index('id="blocks-form"')
    form = html[start : html.index("</form>", start)]
    found = {
        name: value
        for name, value in re.findall(
            r'<select name="([^"]+)"[^>]*>.*?<option value="([^"]*)" selected>', form, re.S
        )
    }
    found |= dict(
        re.findall(r'<input type="radio" name="([^"]+)" value="([^"]*)"[^>]*checked', form)
    )
    return found


def test_a_refused_choice_form_comes_back_with_every_choice_kept(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now, players=2)
    log_in(client, game, 0, now)
    data = block_data(1, choices_for(game, 0), 0)
    roll = state_of(game).rounds[1].roll
    data["r2_a"] = str(min(set(range(1, 7)) - set(roll)))  # a die the roll does not show
    before = snapshot(game)
    response = client.post(seat_page(game, 0), data)
    assert response.status_code == 200
    html = response.content.decode()
    written = "\n".join(
        f"{n}: {data[f'r{n}_kind']}{data[f'r{n}_value']} {data[f'r{n}_a']}+{data[f'r{n}_b']} "
        f"{data[f'r{n}_c']}+{data[f'r{n}_d']}"
        for n in (1, 2)
    )
    with pytest.raises(OrderError) as refused:
        CHOICE.submit(state_of(game), 0, CHOICE.parse(state_of(game), 0, written), NoDice())
    assert block_errors(html, 2) == [escape(refused.value.message)]
    assert block_errors(html, 1) == []
    fields = {name: value for name, value in data.items() if name.startswith("r")}
    assert chosen(html) == fields
    assert snapshot(game) == before


def test_a_refused_typed_order_leaves_the_blocks_showing_the_order_that_counts(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now, players=2, early_processing=False)
    log_in(client, game, 0, now)
    data = block_data(1, choices_for(game, 0), 0)
    assert client.post(seat_page(game, 0), data).status_code == 302
    shown = chosen(client.get(seat_page(game, 0)).content.decode())
    assert sorted(shown) == sorted(name for name in data if name.startswith("r"))
    before = snapshot(game)
    response = client.post(seat_page(game, 0), typed_data(0, "W9 1+1 1+1"))
    assert response.status_code == 200
    html = response.content.decode()
    with pytest.raises(OrderError) as refused:
        CHOICE.parse(state_of(game), 0, "W9 1+1 1+1")
    assert text_errors(html) == [escape(refused.value.message)]
    assert chosen(html) == shown
    assert snapshot(game) == before


def test_the_history_shows_the_newest_steps_and_links_the_older_ones(
    client: Client, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reports, "HISTORY_STEPS", 3)
    game = started_game(now=now, players=2, options={"rolls_per_turn": 1})
    for _ in range(6):
        postal.resolve_now(game.pk, now=now)
    game.refresh_from_db()
    assert game.step_number == 7
    log_in(client, game, 0, now)

    def steps_and_links(query: str) -> tuple[list[str], list[str]]:
        html = client.get(seat_page(game, 0) + query).content.decode()
        shown = section(html, "section", "history")
        links = re.findall(r'<a href="([^"]*)"', shown)
        # The history's own links; the glossary's explain its words (test_seat_layout.py).
        return re.findall(r"<h3>(.*?)</h3>", shown), [
            link for link in links if not link.startswith("/glossary/")
        ]

    # Steps 7 (open, nothing reported yet) to 5, then three at a time.
    assert steps_and_links("") == (
        ["Postal turn 6, resolved", "Postal turn 5, resolved"],
        ["?before=5#history"],
    )
    assert steps_and_links("?before=5") == (
        ["Postal turn 4, resolved", "Postal turn 3, resolved", "Postal turn 2, resolved"],
        [f"{seat_page(game, 0)}#history", "?before=2#history"],
    )
    assert steps_and_links("?before=2") == (
        ["Postal turn 1, resolved"],
        [f"{seat_page(game, 0)}#history"],
    )
    assert steps_and_links("?before=x") == steps_and_links("")


def test_the_latest_report_is_the_same_on_every_page_of_the_history(
    client: Client, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reports, "HISTORY_STEPS", 3)
    game = started_game(now=now, players=2, options={"rolls_per_turn": 1})
    for _ in range(6):
        postal.resolve_now(game.pk, now=now)
    game.refresh_from_db()
    for position in (0, 1):
        told = reports.report_events(game, position)
        # Step 6's events, read on their own, and as the newest history page holds them.
        assert told and told == [
            row.text
            for row in Event.objects.filter(step__game=game, step__number=6).order_by("id")
            if row.visible_to(position)
        ]
        for before in (None, 5, 2):
            page = reports.history(game, position, before=before)
            assert reports.report_events(game, position, page) == told
    log_in(client, game, 0, now)
    shown = {
        query: section(client.get(seat_page(game, 0) + query).content.decode(), "section", "report")
        for query in ("", "?before=5")
    }
    assert shown[""] == shown["?before=5"]
    events = shown[""].split('<ul class="events">')[1].split("</ul>")[0]
    assert re.findall(r"<li>(.*?)</li>", events) == [
        escape(text) for text in reports.report_events(game, 0)
    ]
