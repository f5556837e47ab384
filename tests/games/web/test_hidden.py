"""Hidden information, tested pairwise (DESIGN.md section 7): for every ordered pair of
seats (A, B), nothing private of B appears in anything A can read: A's pages and every
email sent to A. Games with hidden information reuse ``assert_secrets_stay_private`` with
their own secrets (a cup, a sealed order, a private roll)."""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping, Sequence
from datetime import datetime
from html import escape
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from time_machine import TimeMachineFixture

from games import postal
from games.community import tokens
from games.engines.choice.rules import ChoiceEngine, RoundLine, legal_choices, play_round
from games.models import Game, Seat
from games.postal import access
from moderator.mail.models import OutboundEmail
from tests.factories import seat_page, started_game

pytestmark = pytest.mark.django_db

CHOICE = ChoiceEngine()


@pytest.fixture(autouse=True)
def frozen(time_machine: TimeMachineFixture, now: datetime) -> None:
    time_machine.move_to(now, tick=False)


def readable_by(game: Game, position: int, now: datetime) -> str:
    """Everything the seat can read now: the link's Continue page, its game list, its
    seat's page and that page's JSON (opened with a fresh link in a fresh browser), every
    email sent to it, and every read of the API with a token for all its player's seats."""
    seat = Seat.objects.get(game=game, position=position)
    browser = Client(REMOTE_ADDR=f"10.{secrets.randbelow(256)}.{secrets.randbelow(256)}.1")
    token = access.mint([seat], now=now)[position]
    parts = [browser.get(f"/p/{token}/").content.decode()]
    assert browser.post(f"/p/{token}/").status_code == 302
    page = seat_page(game, position)
    for url in ("/play/", page, f"{page}view.json"):
        response = browser.get(url)
        assert response.status_code == 200, url
        parts.append(response.content.decode())
    for email in OutboundEmail.objects.filter(to=seat.email):
        parts += [email.subject, email.text, email.html]
        parts += [attachment["content"] for attachment in email.attachments]
    parts.append(
        browser.get(access.calendar_url(seat).removeprefix(settings.SITE_URL)).content.decode()
    )
    raw = tokens.mint(name="reader", scope="seats", access="read", email=seat.email, now=now)[1]
    api = f"/api/v1/seats/{game.pk}/{position}"
    for path in (
        "/api/v1/me",
        "/api/v1/seats",
        api,
        f"{api}/moves",
        f"{api}/messages",
        f"{api}/events",
    ):
        response = Client().get(path, HTTP_AUTHORIZATION=f"Bearer {raw}")
        assert response.status_code == 200, path
        read = response.json()
        if path.endswith("/moves"):
            # What each autopilot would play is worked out from this seat's own view (the
            # Strategy contract): from the same public dice it may well choose what another
            # seat chose, which says nothing of that seat's order.
            read.pop("autopilots")
        # As a program reads it: the JSON decoded, every string as written.
        parts.append(json.dumps(read, ensure_ascii=False))
    return "\n".join(parts)


def assert_secrets_stay_private(
    game: Game, secrets_of: Mapping[int, Sequence[str]], now: datetime
) -> None:
    """For every ordered pair (A, B) of seats: no secret of B in what A can read, neither
    as written nor HTML-escaped. Each seat does see its own secrets, so the secrets are
    real strings the pages and emails render, and their absence means something."""
    positions = sorted(secrets_of)
    assert len(positions) >= 2
    for a in positions:
        seen = readable_by(game, a, now)
        for secret in secrets_of[a]:
            assert escape(secret) in seen or secret in seen, (a, secret)
        for b in positions:
            if b == a:
                continue
            for secret in secrets_of[b]:
                assert secret not in seen, f"seat {a} can read seat {b}'s secret {secret!r}"
                assert escape(secret) not in seen, f"seat {a} can read {secret!r} escaped"


def distinct_orders(game: Game) -> dict[int, list[tuple[int, Any]]] | None:
    """For each seat a legal order whose choice differs from every other seat's choice in
    every round (seat i takes the i-th legal choice); None when the rolls offer too few
    choices for that."""
    state = CHOICE.state_from_json(game.state)
    orders: dict[int, list[tuple[int, Any]]] = {}
    for position, sheet in enumerate(state.sheets):
        picked = []
        for round_ in state.rounds:
            options = legal_choices(sheet, round_.roll)
            if len(options) <= position:
                return None
            choice = options[position]
            picked.append((round_.number, choice))
            line = RoundLine(round_.number, choice)
            sheet = play_round(sheet, round_.roll, line, state.options)
        orders[position] = picked
    return orders


def test_no_seat_reads_another_seats_sealed_order_before_the_step_resolves(now: datetime) -> None:
    # The rolls follow the seed and the game's id: the first of a few seeds whose rolls
    # give each seat a choice of its own.
    for seed in range(8):
        game = started_game(now=now, seed=bytes([seed]) * 32, players=3, early_processing=False)
        found = distinct_orders(game)
        if found is not None:
            break
    assert found is not None, "none of the seeds gives each seat a choice of its own"
    orders = found
    secrets_of: dict[int, list[str]] = {}
    for position, picked in orders.items():
        text = "\n".join(f"{number}: {choice.text()}" for number, choice in picked)
        postal.accept_order(game_id=game.pk, position=position, text=text, source="web", now=now)
        # The whole order, each line as the engine writes it, and each bare choice.
        secrets_of[position] = [
            text,
            *text.splitlines(),
            *(choice.text() for _, choice in picked),
        ]
    for a in orders:
        for b in orders:
            if a != b:
                assert not set(secrets_of[a]) & set(secrets_of[b])
    assert_secrets_stay_private(game, secrets_of, now)

    # Once the step resolves the orders are public: the same strings reach everybody.
    postal.resolve_now(game.pk, now=now)
    game.refresh_from_db()
    for position in orders:
        seen = readable_by(game, position, now)
        for other, picked in orders.items():
            for number, choice in picked:
                name = game.seats.get(position=other).name
                assert f"{name}, round {number}: {choice.text()} (sums " in seen
