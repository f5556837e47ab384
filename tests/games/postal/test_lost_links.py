"""A player who lost their links asks for them on the home page: one email to the address
with a fresh link to each of its seats in games not over; the page says the same whether
or not the address plays here; requests are limited per email address and per client."""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from typing import Any
from unittest import mock

import pytest
from celery import Task
from django.db import connection
from django.test import Client, TestCase
from django.test.utils import CaptureQueriesContext
from pytest_django.fixtures import Settings

from games import postal, tasks
from games.models import Game, SeatLink
from games.postal import access
from moderator.mail.models import OutboundEmail
from tests.factories import SEED, GameFactory, new_game, started_game, without_footer

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def own_cache(settings: Settings, now: datetime) -> None:
    """Rate-limit counters of this test alone, in one window (the clock is stopped)."""
    settings.CACHES = {
        "default": {**settings.CACHES["default"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"}
    }


def ann_game(title: str, email: str = "ann@example.org") -> Game:
    return new_game(players=[postal.Player("ann", email), "bob"], title=title)


def ask(email: str, address: str = "198.51.100.1") -> Any:
    """Post the home page's form; once its transaction commits, the worker's task runs
    (eagerly, in tests)."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        return Client(REMOTE_ADDR=address).post("/", {"email": email})


def request_path(email: str) -> tuple[list[str], list[tuple[str, dict[str, Any]]]]:
    """What the request alone does for ``email``: its queries, and the tasks it publishes
    once it commits (their names and keyword arguments), none of them run."""
    published: list[tuple[str, dict[str, Any]]] = []

    def publish(task: Task[Any, Any], **kwargs: Any) -> None:
        published.append((task.name, kwargs))

    with (
        mock.patch.object(Task, "delay", autospec=True, side_effect=publish),
        CaptureQueriesContext(connection) as queries,
        TestCase.captureOnCommitCallbacks(execute=True),
    ):
        response = Client(REMOTE_ADDR="198.51.100.1").post("/", {"email": email})
    assert response.status_code == 200
    return [query["sql"] for query in queries.captured_queries], published


def test_the_request_does_the_same_for_an_address_that_plays_and_one_that_does_not(
    now: datetime,
) -> None:
    started_game(now=now, players=2)
    known_queries, known_tasks = request_path("ann@example.org")
    unknown_queries, unknown_tasks = request_path("nobody@example.org")
    assert known_queries == unknown_queries
    # (The page lists the open games and games to watch, counting their seats: never by
    # address.)
    assert [sql for sql in known_queries if '"games_seat"."email"' in sql] == []
    assert (known_tasks, unknown_tasks) == (
        [("games.send_lost_links", {"email": "ann@example.org"})],
        [("games.send_lost_links", {"email": "nobody@example.org"})],
    )
    assert OutboundEmail.objects.filter(kind="lost-links").count() == 0


def test_the_task_sends_the_links_of_an_address_that_plays_and_nothing_else(
    now: datetime,
) -> None:
    started_game(now=now, players=2)
    assert tasks.send_lost_links(email="ann@example.org") == 1
    assert tasks.send_lost_links(email="nobody@example.org") == 0
    assert list(OutboundEmail.objects.filter(kind="lost-links").values_list("to", flat=True)) == [
        "ann@example.org"
    ]


def main_text(response: Any) -> str:
    """The page's <main>, its white space collapsed and its CSRF token blanked."""
    text = " ".join(response.content.decode().split())
    text = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', 'name="csrfmiddlewaretoken"', text)
    return text[text.index("<main>") + len("<main>") : text.index("</main>")].strip()


def links_in(text: str) -> list[str]:
    return re.findall(r"http://testserver/p/([^/\s]+)/", text)


def test_a_known_and_an_unknown_address_get_the_same_page(now: datetime) -> None:
    started_game(now=now, players=2)
    known = ask("ann@example.org")
    unknown = ask("nobody@example.org")
    assert (known.status_code, unknown.status_code) == (200, 200)
    assert main_text(known) == main_text(unknown).replace("nobody@example.org", "ann@example.org")
    assert re.findall(
        r'<div role="status" class="messages"><p[^>]*>(.*?)</p>', main_text(known)
    ) == [
        "If ann@example.org plays in a game here that is not over, an email with a fresh link "
        "to each of its seats is on its way. The links you had before still work."
    ]
    assert list(OutboundEmail.objects.filter(kind="lost-links").values_list("to", flat=True)) == [
        "ann@example.org"
    ]


def test_the_email_links_every_seat_of_games_not_over_and_keeps_the_old_links(
    now: datetime, settings: Settings
) -> None:
    settings.SITE_URL = "http://testserver"
    running = postal.start_game(ann_game("Tuesday Choice").pk, now=now, seed=SEED)
    waiting = ann_game("Friday Choice")
    over = postal.start_game(ann_game("Last Week").pk, now=now, seed=SEED)
    Game.objects.filter(pk=over.pk).update(status=Game.Status.FINISHED)  # as its end would
    old_token = access.mint([running.seats.get(position=0)], now=now)[0]

    assert ask("ann@example.org").status_code == 200

    (email,) = OutboundEmail.objects.filter(kind="lost-links")
    tokens = links_in(email.text)
    assert (email.to, email.subject, email.game_id) == (
        "ann@example.org",
        "Your links to 2 seats",
        None,
    )
    assert without_footer(email.text) == (
        "Hello,\n\n"
        "Someone, probably you, asked on the moderator's home page for the links to your\n"
        "seats. Here is a fresh link to each seat this address has in a game not over:\n\n"
        "Tuesday Choice, you play ann\n"
        f"  http://testserver/p/{tokens[0]}/\n\n"
        "Friday Choice (not started yet), you play ann\n"
        f"  http://testserver/p/{tokens[1]}/\n\n"
        "Keep these links to yourself: each opens its seat without a password, for 60\n"
        "days. Links you had before still work. If you did not ask for this email, you\n"
        "can ignore it: nothing has changed.\n"
    )
    assert re.findall(r'href="http://testserver/p/([^/"]+)/"', email.html) == tokens
    opened = [access.seat_for(token, now=now) for token in [*tokens, old_token]]
    assert [(seat.game_id, seat.position) for seat in opened if seat] == [
        (running.pk, 0),
        (waiting.pk, 0),
        (running.pk, 0),
    ]


def test_an_address_is_found_in_any_case_and_written_as_the_gm_wrote_it(now: datetime) -> None:
    ann_game("Choice", email="Ann.Lee@Example.ORG")
    ask("  ann.lee@example.org ")
    (email,) = OutboundEmail.objects.filter(kind="lost-links")
    assert (email.to, email.subject) == ("Ann.Lee@Example.ORG", "Your link to 1 seat")


def test_an_unknown_address_is_sent_nothing(now: datetime) -> None:
    GameFactory.create(seats=2)
    links = SeatLink.objects.count()
    assert ask("nobody@example.org").status_code == 200
    assert (OutboundEmail.objects.count(), SeatLink.objects.count()) == (0, links)


def test_no_address_is_asked_again_in_the_words_of_a_player(now: datetime) -> None:
    GameFactory.create(seats=2)
    response = ask("ann at example")
    assert response.status_code == 200
    assert re.findall(
        r'<ul class="errors" id="email-errors"><li>(.*?)</li>', main_text(response)
    ) == ["That is not an email address: write it as name@example.org."]
    assert OutboundEmail.objects.count() == 0


def test_requests_for_one_email_are_limited_from_every_client(
    now: datetime, settings: Settings
) -> None:
    GameFactory.create(seats=2)
    settings.RATES = {**settings.RATES, "lost-links-email": "2/h"}
    statuses = [ask("ANN@example.org", f"198.51.100.{n}").status_code for n in range(3)]
    assert statuses == [200, 200, 429]
    assert ask("bob@example.org", "198.51.100.9").status_code == 200
    assert OutboundEmail.objects.filter(kind="lost-links").count() == 2  # one per instant


def test_requests_from_one_client_are_limited_for_every_email(
    now: datetime, settings: Settings
) -> None:
    settings.RATES = {**settings.RATES, "lost-links-address": "2/h"}
    statuses = [ask(f"p{n}@example.org", "198.51.100.20").status_code for n in range(3)]
    assert statuses == [200, 200, 429]
    assert ask("p9@example.org", "198.51.100.21").status_code == 200


def test_a_limited_request_says_when_to_try_again_and_sends_nothing(
    now: datetime, settings: Settings
) -> None:
    GameFactory.create(seats=2)
    settings.RATES = {**settings.RATES, "lost-links-email": "1/h"}
    ask("ann@example.org")
    OutboundEmail.objects.all().delete()
    response = ask("ann@example.org")
    assert response.status_code == 429
    assert re.findall(
        r'<div role="alert" class="messages"><p[^>]*>(.*?)</p>', main_text(response)
    ) == [
        "Too many links were asked for this address, or from your connection, in the last "
        "hour. Nothing was sent this time; try again in an hour. Any email already sent is "
        "on its way, and the links you had before still work."
    ]
    assert OutboundEmail.objects.count() == 0
