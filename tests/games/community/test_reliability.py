"""A player's record (games.community.reliability) from games played through postal, and their
public page (games.web.public.standings)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from html import unescape

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from pytest_django import DjangoAssertNumQueries

from games import postal
from games.community.reliability import Finish, Record, percent, record_of, records_of
from games.models import Game, Order, Player, Seat
from games.postal import steps
from tests.factories import GameFactory, started_game
from tests.games.playing import (
    QUICK_CHOICE,
    QUICK_LIARS,
    SeedOnlyDice,
    play_out,
)

pytestmark = pytest.mark.django_db

HOUR = timedelta(hours=1)


@pytest.fixture(autouse=True)
def seed_only_dice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(steps, "VerifiableDice", SeedOnlyDice)


def played_games(now: datetime) -> dict[str, Game]:
    """ann, bob and cy's games, each figure worked out by hand below:

    - "Liars" (finished): ann sends in steps 1 and 4, bob in step 2, cy misses step 3;
      ann places 1st, cy 2nd, bob 3rd;
    - "Choice" (finished a day later): every seat is prompted in both steps; ann and cy
      miss both, bob sends both; everybody shares 1st place;
    - "Handed on" (finished two hours later): ann sends step 1, bob steps 2 and 3, cy
      misses step 4; cy places 1st, bob 2nd, ann 3rd; then ann's seat is marked REPLACED
      (as a hand-over leaves the seat of the player who left): abandoned, not finished;
    - "Cups" (running): ann sends step 1; dee owes step 2;
    - "Later" (not started): counts for nobody.
    """
    liars = play_out(
        started_game(
            "liars-dice", now=now, players=["ann", "bob", "cy"], title="Liars", **QUICK_LIARS
        ),
        sending={"ann", "bob"},
    )
    choice = started_game(
        now=now + 24 * HOUR, players=["ann", "bob", "cy"], title="Choice", **QUICK_CHOICE
    )
    choice = play_out(Game.objects.get(pk=choice.pk), sending={"bob"})
    handed = play_out(
        started_game(
            "liars-dice",
            now=now + 2 * HOUR,
            players=["ann", "bob", "cy"],
            seed=bytes([4]) * 32,
            title="Handed on",
            **QUICK_LIARS,
        ),
        sending={"ann", "bob"},
    )
    Seat.objects.filter(game=handed, name="ann").update(status=Seat.Status.REPLACED)
    cups = started_game(
        "liars-dice", now=now + 48 * HOUR, players=["ann", "dee"], title="Cups", **QUICK_LIARS
    )
    postal.accept_order(
        game_id=cups.pk,
        position=0,
        text="bid 1 2",
        source=Order.Source.WEB,
        now=now + 48 * HOUR,
        step_number=1,
    )
    cups.refresh_from_db()
    later = GameFactory.create(seats=2, title="Later")
    return {"liars": liars, "choice": choice, "handed": handed, "cups": cups, "later": later}


def test_a_record_counts_seats_turns_and_places_exactly(now: datetime) -> None:
    games = played_games(now)
    liars, choice = games["liars"], games["choice"]
    assert [game.finished_at for game in (liars, choice, games["handed"])] == [
        now + HOUR,
        now + 26 * HOUR,
        now + 3 * HOUR,
    ]
    assert games["cups"].step_number == 2
    records = records_of(["ann@example.org", "BOB@example.org", " cy@example.org "])
    assert records == {
        "ann@example.org": Record(
            email="ann@example.org",
            name="ann",
            played=4,
            finished=2,
            running=1,
            abandoned=1,
            owed=6,
            missed=2,
            finishes=(
                Finish("Choice", "choice", "Choice", now + 26 * HOUR, 1, 3, False),
                Finish("Liars", "liars-dice", "Liar's Dice: classic", now + HOUR, 1, 3, False),
            ),
        ),
        "bob@example.org": Record(
            email="bob@example.org",
            name="bob",
            played=3,
            finished=3,
            running=0,
            abandoned=0,
            owed=5,
            missed=0,
            finishes=(
                Finish("Choice", "choice", "Choice", now + 26 * HOUR, 1, 3, False),
                Finish(
                    "Handed on", "liars-dice", "Liar's Dice: classic", now + 3 * HOUR, 2, 3, False
                ),
                Finish("Liars", "liars-dice", "Liar's Dice: classic", now + HOUR, 3, 3, False),
            ),
        ),
        "cy@example.org": Record(
            email="cy@example.org",
            name="cy",
            played=3,
            finished=3,
            running=0,
            abandoned=0,
            owed=4,
            missed=4,
            finishes=(
                Finish("Choice", "choice", "Choice", now + 26 * HOUR, 1, 3, False),
                Finish(
                    "Handed on", "liars-dice", "Liar's Dice: classic", now + 3 * HOUR, 1, 3, False
                ),
                Finish("Liars", "liars-dice", "Liar's Dice: classic", now + HOUR, 2, 3, False),
            ),
        ),
    }
    assert records["ann@example.org"].missed_in_words == "missed 2 of 6 turns (33.3%)"
    assert records["bob@example.org"].missed_in_words == "missed 0 of 5 turns (0%)"
    assert records["cy@example.org"].missed_in_words == "missed 4 of 4 turns (100%)"
    assert records["cy@example.org"].nmr_rate == 1.0


def test_a_record_reads_three_queries_whatever_the_number_of_games(
    now: datetime, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    play_out(
        started_game("liars-dice", now=now, players=["ann", "bob", "cy"], **QUICK_LIARS),
        sending={"ann", "bob"},
    )
    # The seats, the seats left to others, the final states.
    with django_assert_num_queries(3):
        assert record_of("ann@example.org").finished == 1
    played_games(now + 100 * HOUR)
    everybody = ["ann@example.org", "bob@example.org", "cy@example.org", "dee@example.org"]
    with django_assert_num_queries(3):
        records = records_of([*everybody, "nobody@example.org"])
    assert [records[email].played for email in everybody] == [5, 4, 4, 1]
    # Only running games: no final state to read.
    with django_assert_num_queries(2):
        assert record_of("dee@example.org").running == 1
    with django_assert_num_queries(0):
        assert records_of([]) == {}


def test_a_turn_played_by_the_autopilot_is_missed_and_an_open_step_owes_nothing(
    now: datetime,
) -> None:
    game = started_game(now=now, players=["ann", "bob"], **QUICK_CHOICE)
    order = game.rules.default(game.rules.state_from_json(game.state), 0)
    text = game.rules.canonical(game.rules.state_from_json(game.state), 0, order)
    postal.accept_order(
        game_id=game.pk, position=0, text=text, source=Order.Source.WEB, now=now, step_number=1
    )
    assert postal.resolve_due_step(game.steps.get(number=1).pk, now=now + HOUR) is True
    # Step 2 is open with bob's order in: not a turn owed until the step is done.
    state = game.rules.state_from_json(Game.objects.get(pk=game.pk).state)
    postal.accept_order(
        game_id=game.pk,
        position=1,
        text=game.rules.canonical(state, 1, game.rules.default(state, 1)),
        source=Order.Source.WEB,
        now=now + HOUR,
        step_number=2,
    )
    assert records_of(["ann@example.org", "bob@example.org"]) == {
        "ann@example.org": Record("ann@example.org", "ann", played=1, running=1, owed=1),
        "bob@example.org": Record("bob@example.org", "bob", played=1, running=1, owed=1, missed=1),
    }
    # The turn bob missed, played by his autopilot instead of the rules' default.
    Order.objects.filter(seat__name="bob", step__number=1).update(source=Order.Source.AUTOPILOT)
    assert record_of("bob@example.org").missed_in_words == "missed 1 of 1 turn (100%)"


def test_a_seat_in_civil_disorder_is_abandoned(now: datetime) -> None:
    game = started_game("liars-dice", now=now, players=["ann", "bob"], **QUICK_LIARS)
    Seat.objects.filter(game=game, name="bob").update(civil_disorder_at=now)
    assert record_of("bob@example.org") == Record(
        "bob@example.org", "bob", played=1, running=1, abandoned=1
    )
    assert record_of("ann@example.org").abandoned == 0


def test_a_seat_left_to_another_player_is_abandoned_with_the_turns_of_its_time(
    now: datetime,
) -> None:
    game = started_game(now=now, players=["ann", "bob"], **QUICK_CHOICE)
    # Both miss the first step's deadline; then the GM hands bob's seat to cy.
    step = game.steps.get(number=1)
    assert postal.resolve_due_step(step.pk, now=step.deadline) is True
    assert record_of("bob@example.org").missed == 1
    later = step.deadline + timedelta(minutes=1)
    postal.replace_player(game.pk, position=1, name="cy", email="cy@example.org", now=later)
    step = game.steps.get(number=2)
    assert postal.resolve_due_step(step.pk, now=step.deadline) is True
    assert record_of("bob@example.org") == Record(
        "bob@example.org", "", played=1, abandoned=1, owed=1, missed=1
    )
    cy = record_of("cy@example.org")
    assert (cy.played, cy.abandoned, cy.owed, cy.missed) == (1, 0, 1, 1)
    assert record_of("ann@example.org").owed == 2


def test_an_address_is_one_person_whatever_its_case_and_odd_input_has_an_empty_record(
    now: datetime,
) -> None:
    players = [postal.Player("Dee", "Dee@Example.ORG"), postal.Player("Eve", "eve@example.org")]
    started_game(now=now, players=players, title="Capitals")
    dee = Record("dee@example.org", "Dee", played=1, running=1)
    assert record_of("dee@example.org") == dee
    assert record_of("  DEE@example.org ") == dee
    assert records_of(["DEE@EXAMPLE.ORG", "dee@example.org", "", "   "]) == {"dee@example.org": dee}
    assert record_of("nobody@example.org") == Record("nobody@example.org")
    assert record_of("") == Record("")
    assert record_of("not an address") == Record("not an address")
    assert Record("x").missed_in_words == "no turns owed yet"
    assert Record("x").nmr_rate is None


@pytest.mark.parametrize(
    ("part", "whole", "words"),
    [(3, 120, "2.5%"), (1, 3, "33.3%"), (2, 3, "66.7%"), (0, 5, "0%"), (7, 7, "100%")],
)
def test_a_rate_is_a_percentage_with_one_decimal_when_it_has_one(
    part: int, whole: int, words: str
) -> None:
    assert percent(part, whole) == words


# --- the player's page ----------------------------------------------------------------------


def player_for(email: str, now: datetime, name: str = "") -> Player:
    user = get_user_model().objects.create(username=email)
    return Player.objects.create(user=user, email=email, name=name, created_at=now)


def plain(html: str) -> str:
    """Text without tags, its white space collapsed."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def found(pattern: str, html: str) -> str:
    """The first group of the first match of ``pattern`` in ``html``, which must match."""
    match = re.search(pattern, html, re.S)
    assert match is not None, pattern
    return match[1]


def section(html: str, name: str) -> str:
    match = re.search(rf'<section id="{name}".*?</section>', html, re.S)
    assert match is not None, name
    return match[0]


def rows(html: str) -> list[list[str]]:
    """The text of each cell of each body row of the table in ``html``."""
    body = re.search(r"<tbody>(.*?)</tbody>", html, re.S)
    assert body is not None
    return [
        [plain(cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        for row in re.findall(r"<tr>(.*?)</tr>", body[1], re.S)
    ]


def record_line(html: str) -> str:
    return plain(found(r'<p class="record">(.*?)</p>', html))


def test_the_player_page_shows_the_record_and_the_finished_games_never_the_address(
    client: Client, now: datetime
) -> None:
    played_games(now)
    ann = player_for("ann@example.org", now)
    response = client.get(f"/players/{ann.public_id}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert found(r"<h1>(.*?)</h1>", html) == "ann"
    assert record_line(html) == (
        "4 games played · 2 finished · 1 running · 1 abandoned · missed 2 of 6 turns (33.3%)"
    )
    assert rows(section(html, "finished")) == [
        ["Choice Choice", "24 Nov 2026", "1 of 3"],
        ["Liars Liar's Dice: classic", "23 Nov 2026", "1 of 3"],
    ]
    assert plain(section(html, "ratings")) == "Ratings No rated game finished yet."
    assert "@" not in html and "example.org" not in html
    # Not one word of the game still running, nor of the game ann left.
    assert "Cups" not in html and "dee" not in html and "Handed on" not in html
    # The name the player chose is shown instead of their seats'.
    Player.objects.filter(pk=ann.pk).update(name="Annie")
    html = client.get(f"/players/{ann.public_id}/").content.decode()
    assert found(r"<h1>(.*?)</h1>", html) == "Annie"


def test_a_running_game_shows_on_the_player_page_as_a_count_and_nothing_else(
    client: Client, now: datetime
) -> None:
    play_out(
        started_game("liars-dice", now=now, players=["ann", "bob", "cy"], **QUICK_LIARS),
        sending={"ann", "bob"},
    )
    page = f"/players/{player_for('ann@example.org', now).public_id}/"
    before = client.get(page).content.decode()
    cups = started_game(
        "liars-dice",
        now=now + 48 * HOUR,
        players=["ann", "dee"],
        title="Secret cups",
        **QUICK_LIARS,
    )
    postal.accept_order(
        game_id=cups.pk,
        position=0,
        text="bid 1 2",
        source=Order.Source.WEB,
        now=now + 48 * HOUR,
        step_number=1,
    )
    after = client.get(page).content.decode()
    assert record_line(after) == (
        "2 games played · 1 finished · 1 running · 0 abandoned · missed 0 of 3 turns (0%)"
    )
    # Everything else on the page is as it was: no title, name, bid or cup of the game.
    line = re.compile(r'<p class="record">.*?</p>', re.S)
    assert line.sub("", after) == line.sub("", before)


@pytest.mark.parametrize("public_id", ["nobody", "0", "ann"])
def test_an_unknown_player_page_is_a_404(client: Client, now: datetime, public_id: str) -> None:
    player_for("ann@example.org", now, name="ann")
    assert client.get(f"/players/{public_id}/").status_code == 404


def test_a_player_without_seats_has_an_empty_record(client: Client, now: datetime) -> None:
    nobody = player_for("new@example.org", now)
    html = client.get(f"/players/{nobody.public_id}/").content.decode()
    assert found(r"<h1>(.*?)</h1>", html) == "A player"
    assert record_line(html) == "No games played here yet."
    assert plain(section(html, "finished")) == "Finished games No finished game yet."


def test_the_player_page_reads_five_queries_whatever_the_number_of_games(
    client: Client, now: datetime, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    """The player, their seats with turn counts, the seats they left, the final states,
    their ratings."""
    play_out(
        started_game(
            "liars-dice", now=now, players=["ann", "bob", "cy"], rated=True, **QUICK_LIARS
        ),
        sending={"ann", "bob"},
    )
    page = f"/players/{player_for('ann@example.org', now).public_id}/"
    with django_assert_num_queries(5):
        assert client.get(page).status_code == 200
    played_games(now + 100 * HOUR)
    with django_assert_num_queries(5):
        assert client.get(page).status_code == 200
