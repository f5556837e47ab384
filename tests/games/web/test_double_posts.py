"""A double click: the same form posted twice at the same moment, each post over its own
database connection (two gunicorn workers), does its thing once. The sign-up's confirm and
withdraw, the GM's approve and decline of a sign-up, the GM's edit and delete of a game not
yet started, and the seat's settings form."""

from __future__ import annotations

import html
import re
import secrets
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from games import postal
from games.community import signups
from games.models import EmailPreference, Game, Seat, SignUp
from games.postal import access
from moderator.mail.models import OutboundEmail
from tests.factories import GMFactory, new_game, settings_page, started_game

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

MESSAGES = re.compile(r'<ul class="messages">\s*<li class="(\w+)">(.*?)</li>')
REFUSAL = re.compile(r'<div role="alert" class="alert" id="refusal"><p><strong>(.*?)</strong>')


def at_once(post: Callable[[Client], Any], clients: list[Client]) -> list[str]:
    """``post`` by each of ``clients`` at the same moment; what each page said, sorted:
    its status, its flashed messages and its refusal."""
    start = threading.Barrier(len(clients))
    said: list[str] = []

    def run(client: Client) -> None:
        try:
            start.wait()
            response = post(client)
            # Read from the page: the test client's captured context is shared by threads.
            page = " ".join(response.content.decode().split())
            told = [f"{tag}: {html.unescape(text)}" for tag, text in MESSAGES.findall(page)]
            told += [f"refused: {html.unescape(text)}" for text in REFUSAL.findall(page)]
            said.append(f"{response.status_code} {' | '.join(told)}")
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sorted(said)


def twin_browsers(first: Client) -> list[Client]:
    """``first`` and a second client with its cookies: one browser, two posts."""
    second = Client(REMOTE_ADDR=first.defaults.get("REMOTE_ADDR", "127.0.0.1"))
    second.cookies = first.cookies
    return [first, second]


def visitor() -> Client:
    return Client(REMOTE_ADDR=f"10.{secrets.randbelow(256)}.{secrets.randbelow(256)}.7")


def gm_browser() -> tuple[User, list[Client]]:
    gm = GMFactory.create(is_staff=True, first_name="Greta", last_name="Moss")
    client = Client()
    client.force_login(gm)
    return gm, twin_browsers(client)


def kinds_to(address: str) -> list[str]:
    return list(
        OutboundEmail.objects.filter(to=address).order_by("id").values_list("subject", flat=True)
    )


def open_game(gm: User | None = None, mode: str = "first", seats: int = 3) -> Game:
    return new_game(
        "choice",
        players=(),
        gm=gm or GMFactory.create(),
        title="Open Choice",
        signup=mode,
        seats_wanted=seats,
    )


# --- the sign-up's own page -----------------------------------------------------------------------


@pytest.mark.parametrize("running", [False, True], ids=["seat", "reserve"])
def test_confirming_twice_at_once_confirms_once(now: datetime, running: bool) -> None:
    game = open_game(seats=2)
    if running:
        for name in ("ann", "bob"):
            token = signups.sign_up(game.pk, name=name, email=f"{name}@example.org", now=now).token
            signups.confirm(token, now=now)
    token = signups.sign_up(game.pk, name="dan", email="dan@example.org", now=now).token
    url = f"/open/confirm/{token}/"

    said = at_once(
        lambda client: client.post(url, {"action": "confirm"}, follow=True),
        twin_browsers(visitor()),
    )

    assert said == 2 * ["200 ok: Your sign-up is confirmed."]
    expected = "waiting" if running else "accepted"
    assert SignUp.objects.get(name="dan").state == expected
    told = "you are a reserve" if running else "you have a seat"
    assert kinds_to("dan@example.org") == [
        "Open Choice: confirm your sign-up",
        f"Open Choice: {told}",
    ]


def test_withdrawing_twice_at_once_withdraws_once(now: datetime) -> None:
    game = open_game()
    token = signups.sign_up(game.pk, name="dan", email="dan@example.org", now=now).token
    signups.confirm(token, now=now)
    url = f"/open/confirm/{token}/"

    said = at_once(
        lambda client: client.post(url, {"action": "withdraw"}, follow=True),
        twin_browsers(visitor()),
    )

    assert said == [
        "200 ok: You withdrew your sign-up.",
        "409 refused: There is no confirmed sign-up to withdraw: it is withdrawn.",
    ]
    assert SignUp.objects.get(name="dan").state == "withdrawn"
    assert kinds_to("dan@example.org")[-1:] == ["Open Choice: you withdrew"]
    assert kinds_to("dan@example.org").count("Open Choice: you withdrew") == 1


# --- the GM's decisions ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "state", "subject", "done", "refused"),
    [
        (
            "approve",
            "accepted",
            "Open Choice: the GM gave you a seat",
            "dan has a seat; they are told by email.",
            "nothing was done: dan's sign-up is no longer waiting (its state: has a seat)",
        ),
        (
            "decline",
            "declined",
            "Open Choice: the GM declined your sign-up",
            "dan's sign-up is declined; they are told by email.",
            "nothing was done: there is nothing to decline in dan's sign-up (its state: "
            "declined by the GM)",
        ),
    ],
)
def test_the_gms_decision_posted_twice_at_once_is_made_once(
    now: datetime, action: str, state: str, subject: str, done: str, refused: str
) -> None:
    gm, clients = gm_browser()
    game = open_game(gm, mode="approve")
    token = signups.sign_up(game.pk, name="dan", email="dan@example.org", now=now).token
    signups.confirm(token, now=now)
    signup = SignUp.objects.get(name="dan")
    url = f"/gm/{game.pk}/{action}/"

    said = at_once(lambda client: client.post(url, {"signup": signup.pk}, follow=True), clients)

    assert said == sorted([f"200 ok: {done}", f"200 bad: {refused}"])
    assert SignUp.objects.get(name="dan").state == state
    assert kinds_to("dan@example.org").count(subject) == 1


# --- the GM's game not yet started ----------------------------------------------------------------


def test_editing_a_game_twice_at_once_seats_each_player_once(now: datetime) -> None:
    gm, clients = gm_browser()
    game = new_game("choice", players=("ann", "bob"), gm=gm, title="Invited")
    data = {
        "title": "Invited again",
        "players": "ann <ann@example.org>\nbob <bob@example.org>\ncy <cy@example.org>",
    }

    said = at_once(lambda client: client.post(f"/gm/{game.pk}/edit/", data, follow=True), clients)

    assert said == 2 * ["200 ok: Invited again is changed."]
    assert list(
        Seat.objects.filter(game=game).order_by("position").values_list("position", "name")
    ) == [
        (0, "ann"),
        (1, "bob"),
        (2, "cy"),
    ]


def test_deleting_a_game_twice_at_once_deletes_it_once(now: datetime) -> None:
    gm, clients = gm_browser()
    game = new_game("choice", players=("ann", "bob"), gm=gm, title="Gone soon")
    url = f"/gm/{game.pk}/delete/"

    said = at_once(lambda client: client.post(url, {"confirm": "yes"}, follow=True), clients)

    assert said == [
        "200 bad: Nothing was deleted: the game is already deleted.",
        "200 ok: Gone soon is deleted.",
    ]
    assert not Game.objects.filter(pk=game.pk).exists()


# --- the seat's settings --------------------------------------------------------------------------


def test_the_seats_settings_posted_twice_at_once_are_saved_once(now: datetime) -> None:
    game = started_game(now=now, title="Settled")
    seat = Seat.objects.get(game=game, position=0)
    client = visitor()
    client.post(f"/p/{access.mint([seat], now=now)[0]}/")
    url = f"/play/{game.pk}/0/email/"
    data = {"reports": "digest", "scope": "all", "web_receipts": "on"}

    said = at_once(lambda client: client.post(url, data, follow=True), twin_browsers(client))

    done = (
        "200 ok: Done: ann@example.org now gets the reports of its 1 game, and of the games it "
        "joins later, in one daily digest. Orders you make on the page are answered by a "
        "receipt by email too."
    )
    assert said == [done.replace("ok:", "success:")] * 2
    assert list(EmailPreference.objects.values_list("email", "reports", "web_receipts")) == [
        ("ann@example.org", "digest", True)
    ]
    seat.refresh_from_db()
    assert (seat.reports, seat.web_receipts) == ("digest", True)
    assert settings_page(game, 0) == f"/play/{game.pk}/0/settings/"


def test_an_extension_posted_twice_at_once_is_spent_once(now: datetime) -> None:
    game = started_game(
        now=now, title="Late", missed=postal.MissedTurns(extensions=2, extension_hours=6)
    )
    seat = Seat.objects.get(game=game, position=0)
    client = visitor()
    client.post(f"/p/{access.mint([seat], now=now)[0]}/")
    page = client.get(f"/play/{game.pk}/0/").content.decode()
    shown = re.findall(r'<input type="hidden" name="deadline" value="(\d+)">', page)
    step = game.steps.get()
    assert shown == [str(int(step.deadline.timestamp()))]
    url = f"/play/{game.pk}/0/extension/"
    deadline = step.deadline

    said = at_once(
        lambda client: client.post(url, {"deadline": shown[0]}, follow=True),
        twin_browsers(client),
    )

    assert said == [
        "200 error: The deadline moved since your page showed it (an extension already used, "
        "or the GM's change): see the new one. Nothing was changed.",
        "200 success: Done: the deadline is now Thu 26 Nov 2026 00:00 UTC; it is emailed to the "
        "players who owe an order and to those who get every report.",
    ]
    seat.refresh_from_db()
    step.refresh_from_db()
    assert seat.extensions_used == 1
    assert step.deadline == deadline + timedelta(hours=6)
