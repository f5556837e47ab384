"""Orders and receipts cannot flood: the order that counts, sent again, records nothing
and is owed no receipt; a seat's receipts for a step are coalesced to one per
RECEIPT_WINDOW_SECONDS, naming its latest order."""

from __future__ import annotations

import re
import secrets
import threading
from datetime import datetime, timedelta

import pytest
from django.db import connection
from django.test import Client
from pytest_django.fixtures import Settings

from games import postal
from games.engines.choice.rules import ChoiceEngine
from games.models import Game, Order, Seat
from games.postal import access
from moderator.mail.models import OutboundEmail
from tests.factories import seat_page, started_game
from tests.games.web.test_views import block_data, canonical, choices_for, log_in, typed_data

CHOICE = ChoiceEngine()


def texts(game: Game, position: int) -> list[str]:
    """Two different legal orders of the seat for the open postal turn, as the engine
    writes them."""
    game.refresh_from_db()
    state = CHOICE.state_from_json(game.state)
    written = []
    for pick in range(10):
        text = canonical(choices_for(game, position, pick))
        line = CHOICE.canonical(state, position, CHOICE.parse(state, position, text))
        if line not in written:
            written.append(line)
    return written[:2]


def receipts() -> list[tuple[str, str]]:
    """(to, the order the receipt names) of every receipt, oldest first."""
    found = []
    for email in OutboundEmail.objects.filter(kind="receipt").order_by("id"):
        lines = email.text.split("It reads:\n\n", 1)[1].split("\n\n", 1)[0]
        found.append((email.to, "\n".join(line.strip() for line in lines.splitlines())))
    return found


def receipts_asked(game: Game) -> Game:
    """Every seat of ``game`` asked for receipts of the orders made on its page."""
    Seat.objects.filter(game=game).update(web_receipts=True)
    return game


def accept(game: Game, text: str, now: datetime) -> Order:
    return postal.accept_order(game_id=game.pk, position=0, text=text, source="web", now=now)


@pytest.mark.django_db
def test_the_order_that_counts_sent_again_records_nothing_and_owes_no_receipt(
    now: datetime,
) -> None:
    game = receipts_asked(started_game(now=now, players=2))
    text = texts(game, 0)[0]
    first = accept(game, text, now)
    postal.write_receipts(now=now)

    again = accept(game, text, now + timedelta(minutes=30))

    assert (again.pk, again.repeated, first.repeated) == (first.pk, True, False)
    assert list(Order.objects.filter(step__game=game).values_list("pk", "receipt_due")) == [
        (first.pk, False)
    ]
    assert postal.write_receipts(now=now + timedelta(hours=1)) == 0
    assert receipts() == [("ann@example.org", text)]


@pytest.mark.django_db
def test_a_different_order_after_it_is_a_new_revision(now: datetime) -> None:
    game = started_game(now=now, players=2)
    first, second = texts(game, 0)
    accept(game, first, now)
    accept(game, second, now + timedelta(seconds=1))
    accept(game, first, now + timedelta(seconds=2))  # back to the first: it counts again

    assert list(Order.objects.filter(step__game=game).values_list("canonical", flat=True)) == [
        first,
        second,
        first,
    ]


@pytest.mark.django_db
def test_receipts_are_coalesced_to_one_per_seat_and_step_in_the_window(
    now: datetime, settings: Settings
) -> None:
    settings.RECEIPT_WINDOW_SECONDS = 600
    game = receipts_asked(started_game(now=now, players=2))
    first, second = texts(game, 0)
    accept(game, first, now)
    assert postal.write_receipts(now=now + timedelta(seconds=5)) == 1

    accept(game, second, now + timedelta(minutes=1))
    accept(game, first, now + timedelta(minutes=2))
    bob = postal.accept_order(
        game_id=game.pk, position=1, text=texts(game, 1)[0], source="web", now=now
    )
    # bob's first receipt goes at once; ann's revisions wait for her window.
    assert postal.write_receipts(now=now + timedelta(minutes=3)) == 1
    assert postal.write_receipts(now=now + timedelta(minutes=9)) == 0
    assert postal.write_receipts(now=now + timedelta(minutes=10, seconds=6)) == 2
    assert postal.write_receipts(now=now + timedelta(hours=1)) == 0

    assert receipts() == [
        ("ann@example.org", first),
        ("bob@example.org", bob.canonical),
        ("ann@example.org", first),  # the latest of her two revisions
    ]
    assert Order.objects.filter(receipt_due=True).count() == 0


@pytest.mark.django_db
def test_the_page_says_a_repeated_order_is_already_the_one_that_counts(now: datetime) -> None:
    game = started_game(now=now, players=2)
    text = texts(game, 0)[0]
    client = Client(REMOTE_ADDR=f"10.{secrets.randbelow(256)}.{secrets.randbelow(256)}.9")
    seat = Seat.objects.get(game=game, position=0)
    client.post(f"/p/{access.mint([seat], now=now)[0]}/")
    fields = {"step": "1", "seat": "0", "entry": "text", "text": text}
    client.post(f"/play/{game.pk}/0/", fields, follow=True)  # shows "accepted"

    response = client.post(f"/play/{game.pk}/0/", fields, follow=True)

    shown = re.findall(r'<li class="success">(.*?)</li>', response.content.decode(), re.S)
    canonical = "; ".join(text.splitlines())
    assert shown == [
        f"This is already the order that counts: {canonical}. Nothing new was recorded."
    ]
    assert Order.objects.filter(step__game=game).count() == 1


# Twenty posts in threads at once, each waiting on the game's row lock: PostgreSQL's
# (SQLite, the embedded default, takes one writer at a time and answers the others "locked").
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_twenty_identical_posts_at_once_store_one_revision_and_one_receipt(now: datetime) -> None:
    game = receipts_asked(started_game(now=now, players=2))
    text = texts(game, 0)[0]
    browser = Client(REMOTE_ADDR="10.20.20.20")
    seat = Seat.objects.get(game=game, position=0)
    browser.post(f"/p/{access.mint([seat], now=now)[0]}/")
    cookies = browser.cookies
    fields = {"step": "1", "seat": "0", "entry": "text", "text": text}
    start = threading.Barrier(20)
    statuses: list[int] = []

    def post() -> None:
        client = Client(REMOTE_ADDR="10.20.20.20")
        client.cookies = cookies
        start.wait()
        try:
            statuses.append(client.post(f"/play/{game.pk}/0/", fields).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=post) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert statuses == [302] * 20
    assert list(Order.objects.filter(step__game=game).values_list("canonical", flat=True)) == [text]
    assert postal.write_receipts(now=now + timedelta(seconds=5)) == 1
    assert receipts() == [("ann@example.org", text)]


@pytest.mark.django_db
def test_order_posts_past_the_seats_limit_are_refused_and_write_nothing(
    now: datetime, settings: Settings
) -> None:
    """Typed orders and the blocks form alike: the limit counts the posts of a seat the
    browser holds, and a refused post writes nothing."""
    settings.RATES = {**settings.RATES, "order-seat": "3/m", "order-address": "100/m"}
    game = started_game(now=now, players=2, early_processing=False)
    client = Client()
    log_in(client, game, 0, now)
    picks = [choices_for(game, 0, pick=n) for n in range(2)]
    posts = [
        typed_data(0, canonical(picks[0])),
        block_data(1, picks[1], 0),
        typed_data(0, canonical(picks[0])),
        typed_data(0, canonical(picks[1])),
        block_data(1, picks[0], 0),
    ]
    statuses = [client.post(seat_page(game, 0), data).status_code for data in posts]
    assert statuses == [302, 302, 302, 429, 429]
    assert list(Order.objects.order_by("id").values_list("canonical", flat=True)) == [
        canonical(picks[0]),
        canonical(picks[1]),
        canonical(picks[0]),
    ]


@pytest.mark.django_db
def test_a_post_to_a_seat_the_browser_does_not_hold_says_nothing_of_it(now: datetime) -> None:
    mine = started_game(now=now, players=1, title="Mine")
    theirs = started_game(now=now, players=2, title="Theirs")
    client = Client()
    log_in(client, mine, 0, now)
    before = Order.objects.count()
    for seat in ("1", "0", "x"):
        response = client.post(
            seat_page(theirs, 0), typed_data(0, "1: W1 1+1 1+1") | {"seat": seat}
        )
        assert response.status_code == 404
        assert "bob" not in response.content.decode()
    assert Order.objects.count() == before
