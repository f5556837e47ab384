"""Every GM action on the current step names the step the GM was shown (issue 39 §2): a
double click, a second GM or an old page changes nothing once the game has moved on, and
says so in the GM's words; the same action twice with the same values, the step not moved,
changes nothing either. docs/reliability.md, "Resolve now resolves once"."""

from __future__ import annotations

import html
import re
import threading
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.urls import reverse

from games import postal
from games.engines.choice.rules import ChoiceEngine
from games.models import DiceRoll, Game, GMAction, Handover, Order, Seat, Step
from moderator.mail.models import OutboundEmail
from tests.factories import GMFactory, started_game

CHOICE = ChoiceEngine()


def gm_client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def nmr_text(game: Game, position: int) -> str:
    game.refresh_from_db()
    state = CHOICE.state_from_json(game.state)
    return CHOICE.canonical(state, position, CHOICE.default(state, position))


def act(client: Client, game: Game, action: str, **data: str) -> list[str]:
    """POST one action as the game page's form does; the messages shown after it."""
    if action == "resolve":
        data.setdefault("confirmed", "yes")  # as the confirmation page posts it
    response = client.post(reverse("gm:act", args=[game.pk, action]), data, follow=True)
    assert response.redirect_chain == [(reverse("gm:game", args=[game.pk]), 302)]
    return [str(message) for message in response.context["messages"]]


def counts(game: Game) -> dict[str, Any]:
    """What a GM action on the step changes: the step, the orders, each seat's missed
    turns, the dice, the GM's log and the outbox."""
    game.refresh_from_db()
    seats = Seat.objects.filter(game=game).order_by("position")
    return {
        "step": game.step_number,
        "status": game.status,
        "steps": list(game.steps.order_by("number").values_list("number", "status")),
        "orders": list(
            Order.objects.filter(step__game=game)
            .order_by("id")
            .values_list("step__number", "seat__position", "source")
        ),
        "missed": list(seats.values_list("nmr_count", "missed_in_row")),
        "dice": DiceRoll.objects.filter(game=game).count(),
        "gm_log": list(GMAction.objects.filter(game=game).order_by("id").values_list("kind")),
        "outbox": OutboundEmail.objects.filter(game=game).count(),
    }


@pytest.fixture
def gm(db: None) -> User:
    return GMFactory.create(is_staff=True)


# --- the page names the step -------------------------------------------------------------------


def hidden_step(page: str, action: str) -> str:
    """The value of the hidden ``step`` field of the page's form for ``action``."""
    form = re.search(rf'<form[^>]*action="/gm/\d+/{action}/".*?</form>', page, re.S)
    assert form is not None, action
    field = re.search(r'<input type="hidden" name="step" value="(\d+)"', form[0])
    assert field is not None, action
    return field[1]


@pytest.mark.django_db
def test_the_game_page_names_the_step_shown_in_each_form_on_the_step(
    gm: User, now: datetime
) -> None:
    game = started_game(now=now, gm=gm, early_processing=False)
    postal.resolve_now(game.pk, now=now)
    page = gm_client(gm).get(reverse("gm:game", args=[game.pk])).content.decode()
    shown = ("resolve/confirm", "extend", "order", "replace")
    assert [hidden_step(page, a) for a in shown] == ["2"] * 4
    # Roll back names the step it offers to roll back.
    assert "Roll back step 1" in page
    assert hidden_step(page, "rollback") == "1"


# --- two posts in a row --------------------------------------------------------------------------


@pytest.mark.django_db
def test_resolve_now_twice_resolves_the_step_shown_once(gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm)
    client = gm_client(gm)
    assert act(client, game, "resolve", step="1") == [
        "The step is resolved; missing orders got their NMR defaults."
    ]
    after = counts(game)
    assert (after["step"], after["steps"]) == (2, [(1, "done"), (2, "open")])
    assert after["missed"] == [(1, 1), (1, 1), (1, 1)]
    assert after["gm_log"] == [("resolve",)]
    assert act(client, game, "resolve", step="1") == [
        "nothing was done: step 1 was already resolved; step 2 is open"
    ]
    assert counts(game) == after


@pytest.mark.django_db
def test_extend_twice_to_the_same_deadline_tells_the_players_once(gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm, time_zone="Europe/Berlin")
    client = gm_client(gm)
    assert act(client, game, "extend", step="1", deadline="2026-11-27T20:00") == [
        "The deadline of step 1 is now Fri 27 Nov 2026 20:00 CET (19:00 UTC); the players who "
        "owe an order, and those who get every report, are emailed."
    ]
    after = counts(game)
    assert after["gm_log"] == [("deadline",)]
    assert act(client, game, "extend", step="1", deadline="2026-11-27T20:00") == [
        "nothing was done: the deadline of step 1 is already Fri 27 Nov 2026 20:00 CET (19:00 UTC)"
    ]
    assert counts(game) == after
    assert game.steps.get(number=1).deadline == datetime.fromisoformat("2026-11-27T19:00Z")


@pytest.mark.django_db
def test_extend_for_a_step_another_gm_resolved_changes_nothing(gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm)
    deadline = game.steps.get(number=1).deadline
    assert act(gm_client(gm), game, "resolve", step="1")
    other = gm_client(GMFactory.create(is_staff=True, is_superuser=True))
    after = counts(game)
    open_until = game.steps.get(number=2).deadline
    assert act(other, game, "extend", step="1", deadline="2026-12-01T12:00") == [
        "nothing was done: step 1 was already resolved; step 2 is open"
    ]
    assert counts(game) == after
    assert (game.steps.get(number=1).deadline, game.steps.get(number=2).deadline) == (
        deadline,
        open_until,
    )


@pytest.mark.django_db
def test_the_same_order_twice_counts_once(gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm)
    client = gm_client(gm)
    text = nmr_text(game, 0)
    assert act(client, game, "order", step="1", seat="0", text=text) == [
        f"Order of ann accepted: {text}"
    ]
    after = counts(game)
    assert after["orders"] == [(1, 0, "gm")]
    assert act(client, game, "order", step="1", seat="0", text=text) == [
        f"nothing was done: ann's order {text} already counts in step 1"
    ]
    assert counts(game) == after


@pytest.mark.django_db
def test_an_order_that_resolved_the_step_entered_again_is_not_taken_for_the_next(
    gm: User, now: datetime
) -> None:
    """The last order owed resolves the step early: the same click again must not enter
    it for the step that just opened."""
    game = started_game(now=now, gm=gm)
    for position in (0, 1):
        postal.accept_order(
            game_id=game.pk, position=position, text=nmr_text(game, position), source="web", now=now
        )
    client = gm_client(gm)
    text = nmr_text(game, 2)
    assert act(client, game, "order", step="1", seat="2", text=text) == [
        f"Order of cy accepted: {text}"
    ]
    after = counts(game)
    assert (after["step"], after["steps"]) == (2, [(1, "done"), (2, "open")])
    assert [o for o in after["orders"] if o[0] == 2] == []
    assert act(client, game, "order", step="1", seat="2", text=nmr_text(game, 2)) == [
        "nothing was done: step 1 was already resolved; step 2 is open"
    ]
    assert counts(game) == after


@pytest.mark.django_db
def test_roll_back_twice_rolls_back_the_step_shown_once(gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm, early_processing=False)
    postal.resolve_now(game.pk, now=now)
    postal.resolve_now(game.pk, now=now + timedelta(hours=1))
    client = gm_client(gm)
    before = counts(game)
    assert (before["step"], before["missed"]) == (3, [(2, 2), (2, 2), (2, 2)])
    assert act(client, game, "rollback", step="2", reason="a wrong order") == [
        "Step 2 is open again until Wed 25 Nov 2026 18:00 UTC; its orders stand and every "
        "player is emailed why."
    ]
    after = counts(game)
    assert (after["step"], after["steps"]) == (2, [(1, "done"), (2, "open")])
    assert after["missed"] == [(1, 1), (1, 1), (1, 1)]
    assert after["dice"] == before["dice"]
    assert act(client, game, "rollback", step="2", reason="a wrong order") == [
        "nothing was done: step 2 was already rolled back; it is open again"
    ]
    assert counts(game) == after


@pytest.mark.django_db
def test_roll_back_of_a_step_no_longer_the_latest_changes_nothing(gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm, early_processing=False)
    postal.resolve_now(game.pk, now=now)
    client = gm_client(gm)
    # The page offered step 1; meanwhile step 2 resolved (its deadline, another GM).
    postal.resolve_now(game.pk, now=now + timedelta(hours=1))
    after = counts(game)
    assert act(client, game, "rollback", step="1", reason="a wrong order") == [
        "nothing was done: step 1 is no longer the latest resolved step; step 3 is open"
    ]
    assert counts(game) == after


@pytest.mark.django_db
def test_replace_twice_with_the_same_player_replaces_once(gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm)
    client = gm_client(gm)
    data = {"step": "1", "seat": "1", "name": "bea", "email": "bea@example.org"}
    assert act(client, game, "replace", **data) == [
        "Seat 2 is now played by bea <bea@example.org>, welcomed with the rules, the current "
        "report and a link; bob is told."
    ]
    after = counts(game)
    seat = game.seats.get(position=1)
    assert (seat.name, seat.email, seat.link_version) == ("bea", "bea@example.org", 1)
    assert act(client, game, "replace", **data) == [
        "nothing was done: bea <bea@example.org> already plays seat 2"
    ]
    assert counts(game) == after
    seat.refresh_from_db()
    assert (seat.name, seat.email, seat.link_version) == ("bea", "bea@example.org", 1)
    assert list(Handover.objects.filter(seat=seat).values_list("name", flat=True)) == ["bob"]
    assert OutboundEmail.objects.filter(to="bea@example.org", kind="welcome").count() == 1


@pytest.mark.django_db
def test_replace_for_a_step_already_resolved_changes_nothing(gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm)
    postal.resolve_now(game.pk, now=now)
    after = counts(game)
    data = {"step": "1", "seat": "1", "name": "bea", "email": "bea@example.org"}
    assert act(gm_client(gm), game, "replace", **data) == [
        "nothing was done: step 1 was already resolved; step 2 is open"
    ]
    assert counts(game) == after
    assert game.seats.get(position=1).name == "bob"


@pytest.mark.django_db
def test_an_action_for_a_step_rolled_back_meanwhile_changes_nothing(
    gm: User, now: datetime
) -> None:
    game = started_game(now=now, gm=gm, early_processing=False)
    postal.resolve_now(game.pk, now=now)
    # The page showed step 2; another GM rolled step 1 back.
    postal.rollback(game.pk, reason="a wrong order", now=now)
    after = counts(game)
    assert act(gm_client(gm), game, "resolve", step="2") == [
        "nothing was done: step 2 is no longer open: step 1 was rolled back and is open again"
    ]
    assert counts(game) == after


@pytest.mark.django_db
def test_resolve_now_of_the_last_step_twice_says_the_game_is_over(gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm)
    Game.objects.filter(pk=game.pk).update(status=Game.Status.FINISHED)
    Step.objects.filter(game=game).update(status=Step.Status.DONE)
    after = counts(game)
    assert act(gm_client(gm), game, "resolve", step="1") == [
        "nothing was done: step 1 was already resolved, and the game is over"
    ]
    assert counts(game) == after


# --- a post that names no step -------------------------------------------------------------------


NO_STEP = (
    "nothing was done: the form did not say which step it was for; reload the game page and "
    "try again"
)
ACTIONS = {
    "resolve": {},
    "extend": {"deadline": "2026-12-01T12:00"},
    "order": {"seat": "0", "text": "W1 1+2 3+4"},
    "replace": {"seat": "1", "name": "bea", "email": "bea@example.org"},
    "rollback": {"reason": "a wrong order"},
}


@pytest.mark.django_db
@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("step", [None, "", "two", "²", "٣", "1.0", "-1", "9" * 20])
def test_a_post_without_a_step_number_changes_nothing(
    gm: User, now: datetime, action: str, step: str | None
) -> None:
    game = started_game(now=now, gm=gm, early_processing=False)
    postal.resolve_now(game.pk, now=now)  # step 2 open, step 1 may be rolled back
    data = dict(ACTIONS[action])
    if step is not None:
        data["step"] = step
    before = counts(game)
    assert act(gm_client(gm), game, action, **data) == [NO_STEP]
    assert counts(game) == before


# --- two GMs at once -----------------------------------------------------------------------------


MESSAGES = re.compile(r'<ul class="messages">\s*<li class="(\w+)">(.*?)</li>')


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_gms_resolving_at_once_resolve_one_step(gm: User, now: datetime) -> None:
    """Two posts of "resolve now" for step 1 at the same moment, each over its own
    database connection (two GMs, or a double click on two gunicorn workers)."""
    game = started_game(now=now, gm=gm)
    clients = [gm_client(gm), gm_client(GMFactory.create(is_staff=True, is_superuser=True))]
    start = threading.Barrier(2)
    said: list[list[tuple[str, str]]] = []

    def post(client: Client) -> None:
        try:
            start.wait()
            url = reverse("gm:act", args=[game.pk, "resolve"])
            data = {"step": "1", "confirmed": "yes"}
            page = client.post(url, data, follow=True).content.decode()
            # Read from the page: the test client's captured context is shared by threads.
            said.append([(tag, html.unescape(text)) for tag, text in MESSAGES.findall(page)])
        finally:
            connection.close()

    threads = [threading.Thread(target=post, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(said) == [
        [("bad", "nothing was done: step 1 was already resolved; step 2 is open")],
        [("ok", "The step is resolved; missing orders got their NMR defaults.")],
    ]
    after = counts(game)
    assert (after["step"], after["steps"]) == (2, [(1, "done"), (2, "open")])
    assert after["missed"] == [(1, 1), (1, 1), (1, 1)]
    assert after["gm_log"] == [("resolve",)]
    assert [o[0] for o in after["orders"]] == [1, 1, 1]
