"""Ratings (games.community.ratings) from rated games played to their end through postal: each as
openskill's Plackett-Luce model rates the places, once per game, the same whether counted
as games finish or recomputed by ``manage.py rerate``; the ranking pages; the GM's choice."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from openskill.models import PlackettLuce
from pytest_django import DjangoAssertNumQueries

from campaigns import postal as campaigns_postal
from campaigns.models import Campaign
from games import postal
from games.community import ratings
from games.lib import signals
from games.models import Game, Player, Rating, Seat
from games.postal import steps
from games.web.public import standings as standing_views
from tests.factories import GMFactory, started_game
from tests.games.community.test_reliability import found, plain, rows, section
from tests.games.playing import ONE_DIE, QUICK_CHOICE, QUICK_LIARS, SeedOnlyDice, play_out

pytestmark = pytest.mark.django_db

HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
MODEL = PlackettLuce()


@pytest.fixture(autouse=True)
def seed_only_dice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(steps, "VerifiableDice", SeedOnlyDice)


def table() -> list[tuple[Any, ...]]:
    """Every rating row as it is stored."""
    return list(
        Rating.objects.order_by("engine", "email").values_list(
            "engine", "email", "name", "mu", "sigma", "games", "updated_at"
        )
    )


def rated(
    *ranks: int, before: list[tuple[float, float]] | None = None
) -> list[tuple[float, float]]:
    """(mu, sigma) of each player after one game with these ranks, as openskill has it."""
    start = before or [(MODEL.mu, MODEL.sigma)] * len(ranks)
    teams = [[MODEL.rating(mu, sigma)] for mu, sigma in start]
    return [(r.mu, r.sigma) for [r] in MODEL.rate(teams, ranks=[float(rank) for rank in ranks])]


def test_a_rated_game_rates_its_players_by_their_places_when_it_finishes(now: datetime) -> None:
    # ann places 1st, cy 2nd, bob 3rd (tests/games/community/test_reliability.py: "Liars").
    game = play_out(
        started_game(
            "liars-dice", now=now, players=["ann", "bob", "cy"], rated=True, **QUICK_LIARS
        ),
        sending={"ann", "bob"},
    )
    assert game.finished_at == now + HOUR
    (ann, bob, cy) = rated(1, 3, 2)
    assert table() == [
        ("liars-dice", "ann@example.org", "ann", *ann, 1, now + HOUR),
        ("liars-dice", "bob@example.org", "bob", *bob, 1, now + HOUR),
        ("liars-dice", "cy@example.org", "cy", *cy, 1, now + HOUR),
    ]
    assert game.rated_at == now + HOUR
    ranking = ratings.ranking("liars-dice")
    assert [(row.name, ratings.shown(row)) for row in ranking] == [
        ("ann", round(ann[0] - 3 * ann[1])),
        ("cy", round(cy[0] - 3 * cy[1])),
        ("bob", round(bob[0] - 3 * bob[1])),
    ]
    # A second game: the ratings move on from the first, and ann plays under a new name.
    second = started_game(
        "liars-dice",
        now=now + DAY,
        players=["ann", "bob", "cy"],
        seed=bytes([4]) * 32,
        rated=True,
        **QUICK_LIARS,
    )
    Seat.objects.filter(game=second, position=0).update(name="Annie")
    play_out(second, sending={"Annie", "bob"})  # cy 1st, bob 2nd, Annie 3rd
    (ann2, bob2, cy2) = rated(3, 2, 1, before=[ann, bob, cy])
    assert table() == [
        ("liars-dice", "ann@example.org", "Annie", *ann2, 2, now + DAY + HOUR),
        ("liars-dice", "bob@example.org", "bob", *bob2, 2, now + DAY + HOUR),
        ("liars-dice", "cy@example.org", "cy", *cy2, 2, now + DAY + HOUR),
    ]


def test_an_unrated_game_changes_no_rating(now: datetime) -> None:
    game = play_out(
        started_game("liars-dice", now=now, players=["ann", "bob", "cy"], **QUICK_LIARS),
        sending={"ann", "bob"},
    )
    assert (game.rated, game.rated_at, table()) == (False, None, [])
    call_command("rerate", stdout=StringIO())
    game.refresh_from_db()
    assert (game.rated_at, table()) == (None, [])


def test_a_game_counts_once_however_often_it_is_reported_finished(now: datetime) -> None:
    game = play_out(
        started_game(
            "liars-dice", now=now, players=["ann", "bob", "cy"], rated=True, **QUICK_LIARS
        ),
        sending={"ann", "bob"},
    )
    before = table()
    state = game.rules.state_from_json(game.state)
    later = now + DAY
    signals.game_finished.send(sender=Game, game=game, state=state, now=later)
    assert ratings.rate_game(game, state, now=later) is False
    assert table() == before
    assert Game.objects.get(pk=game.pk).rated_at == now + HOUR


def test_shared_places_rate_alike(now: datetime) -> None:
    # Every seat misses both turns of a short Choice game: they share 1st place.
    game = started_game(now=now, players=["ann", "bob", "cy"], rated=True, **QUICK_CHOICE)
    play_out(game, sending=())
    shared = rated(1, 1, 1)
    assert [row[3:5] for row in table()] == shared
    assert shared[0] == shared[1] == shared[2]


def test_a_replaced_seat_is_not_rated_and_two_seats_of_one_address_count_once(
    now: datetime,
) -> None:
    game = started_game(
        "liars-dice", now=now, players=["ann", "bob", "cy"], rated=True, **QUICK_LIARS
    )
    # cy left the game (the seat was handed on): only ann and bob are rated.
    Seat.objects.filter(game=game, name="cy").update(status=Seat.Status.REPLACED)
    play_out(game, sending={"ann", "bob"})  # ann 1st, (cy 2nd), bob 3rd
    (ann, bob) = rated(1, 3)
    assert table() == [
        ("liars-dice", "ann@example.org", "ann", *ann, 1, now + HOUR),
        ("liars-dice", "bob@example.org", "bob", *bob, 1, now + HOUR),
    ]
    Rating.objects.all().delete()
    # bob plays two seats, placed 2nd and 3rd: he counts once, at his best place.
    twice = started_game(
        "liars-dice",
        now=now + DAY,
        players=["ann", "bob", postal.Player("Bob again", "BOB@example.org")],
        title="Twice",
        rated=True,
        **QUICK_LIARS,
    )
    play_out(twice, sending={"ann", "bob"})  # ann 1st, "Bob again" 2nd, bob 3rd
    (ann, bob) = rated(1, 2)
    assert table() == [
        ("liars-dice", "ann@example.org", "ann", *ann, 1, now + DAY + HOUR),
        ("liars-dice", "bob@example.org", "Bob again", *bob, 1, now + DAY + HOUR),
    ]


def test_a_game_of_one_address_rates_nobody(now: datetime) -> None:
    game = started_game(now=now, players=["ann"], rated=True, **QUICK_CHOICE)
    game = play_out(game, sending=())
    assert (game.rated_at, table()) == (now + 2 * HOUR, [])


def play_season(now: datetime) -> list[Game]:
    """Six Liar's Dice games of ann, bob, cy and dee, finishing one after the other: five
    rated (three or four players, different seeds and places), one unrated."""
    games = []
    for number, names in enumerate(
        [
            ["ann", "bob", "cy"],
            ["ann", "bob", "cy", "dee"],
            ["bob", "cy", "dee"],
            ["ann", "bob", "cy", "dee"],
            ["dee", "ann", "cy"],
            ["ann", "bob", "cy", "dee"],
        ]
    ):
        game = started_game(
            "liars-dice",
            now=now + number * DAY,
            players=names,
            seed=bytes([number]) * 32,
            title=f"Game {number + 1}",
            rated=number != 2,
            **QUICK_LIARS,
        )
        games.append(play_out(game, sending={"ann", "bob", "dee"}))
    return games


def rerate(*args: str) -> str:
    out = StringIO()
    call_command("rerate", *args, stdout=out)
    return out.getvalue()


def test_ratings_recomputed_from_the_games_equal_those_counted_as_they_finished(
    now: datetime,
) -> None:
    games = play_season(now)
    counted = table()
    assert [row[1:2] + row[5:6] for row in counted] == [
        ("ann@example.org", 5),
        ("bob@example.org", 4),
        ("cy@example.org", 5),
        ("dee@example.org", 4),
    ]
    assert (
        rerate("--engine", "liars-dice")
        == "liars-dice: 4 players rated from 5 finished rated games\n"
    )
    assert table() == counted
    # From nothing, too.
    Rating.objects.all().delete()
    Game.objects.update(rated_at=None)
    rerate("--engine", "liars-dice")
    assert table() == counted
    assert [game.rated_at for game in Game.objects.order_by("pk")] == [now] * 2 + [None] + [now] * 3
    # A game that no longer counts leaves the ratings; counted again, it comes back in place.
    Game.objects.filter(pk=games[0].pk).update(rated=False)
    assert (
        rerate("--engine", "liars-dice")
        == "liars-dice: 4 players rated from 4 finished rated games\n"
    )
    assert Game.objects.get(pk=games[0].pk).rated_at is None
    assert [row[5] for row in table()] == [4, 3, 4, 4]
    Game.objects.filter(pk=games[0].pk).update(rated=True)
    rerate("--engine", "liars-dice")
    assert table() == counted


def test_rerate_without_an_engine_rates_every_game_and_refuses_an_unknown_one(
    now: datetime,
) -> None:
    play_out(
        started_game(
            "liars-dice", now=now, players=["ann", "bob", "cy"], rated=True, **QUICK_LIARS
        ),
        sending={"ann", "bob"},
    )
    before = table()
    assert rerate() == (
        "choice: 0 players rated from 0 finished rated games\n"
        "dice-survivor: 0 players rated from 0 finished rated games\n"
        "drop-shy: 0 players rated from 0 finished rated games\n"
        "liars-dice: 3 players rated from 1 finished rated game\n"
        "first-player: 0 players rated from 0 finished rated games\n"
    )
    assert table() == before
    with pytest.raises(CommandError) as refused:
        rerate("--engine", "chess")
    assert str(refused.value) == (
        "there is no game 'chess'; the games are choice, dice-survivor, drop-shy, liars-dice, "
        "first-player"
    )
    assert table() == before


def test_a_league_keeps_its_own_standings_when_its_games_are_rated(now: datetime) -> None:
    standings = []
    for is_rated in (False, True):
        league = campaigns_postal.create_campaign(
            host=GMFactory.create(username="host"),
            kind=Campaign.Kind.LEAGUE,
            name="Winter league",
            members=[postal.Player(n, f"{n}@example.org") for n in ("ann", "bob", "cy")],
            options={"engine": "liars-dice", "game_options": ONE_DIE, "points": [5, 3, 1]},
            now=now,
        )
        entry = campaigns_postal.start_league_game(league.pk, now=now, seed=bytes(range(32)))
        Game.objects.filter(pk=entry.game.pk).update(rated=is_rated)
        play_out(entry.game, sending={"ann", "bob"})
        standings.append(
            [
                (row.place, row.name, row.points, row.played, row.places)
                for row in campaigns_postal.league_standings(league)[1]
            ]
        )
    assert (
        standings[0]
        == standings[1]
        == [
            (1, "ann", 5, 1, [1]),
            (2, "cy", 3, 1, [2]),
            (3, "bob", 1, 1, [3]),
        ]
    )
    assert [row[1] for row in table()] == ["ann@example.org", "bob@example.org", "cy@example.org"]


# --- the pages ------------------------------------------------------------------------------


def player_for(email: str, now: datetime, name: str = "") -> Player:
    user = get_user_model().objects.create(username=email)
    return Player.objects.create(user=user, email=email, name=name, created_at=now)


def test_the_ranking_lists_every_rated_player_best_first_linking_players_with_a_page(
    client: Client, now: datetime
) -> None:
    play_season(now)
    ann = player_for("ann@example.org", now)
    bob = player_for("bob@example.org", now, name="Bob the Bold")
    response = client.get("/rankings/liars-dice/")
    assert response.status_code == 200
    html = response.content.decode()
    best_first = list(ratings.ranking("liars-dice"))
    assert [row.name for row in best_first] == ["ann", "cy", "dee", "bob"]
    # bob is named as on his page: the name he chose.
    names = ["ann", "cy", "dee", "Bob the Bold"]
    assert rows(section_of(html, "ranking")) == [
        [f"{rank}. {name}", str(ratings.shown(row)), str(row.games)]
        for rank, (name, row) in enumerate(zip(names, best_first, strict=True), start=1)
    ]
    assert re.findall(r'<a href="(/players/[^"]*)">([^<]*)</a>', html) == [
        (f"/players/{ann.public_id}/", "ann"),
        (f"/players/{bob.public_id}/", "Bob the Bold"),
    ]
    assert "@" not in html and "example.org" not in html
    page_html = client.get("/rankings/").content.decode()
    index = page_html[page_html.index("<main>") :]
    assert [plain(item) for item in re.findall(r"<li>(.*?)</li>", index, re.S)] == [
        "Choice no rated game finished yet",
        "Dice Survivor no rated game finished yet",
        "Drop-Shy no rated game finished yet",
        "Liar's Dice 4 rated players",
        "The First Player no rated game finished yet",
    ]
    # The player's page shows their rating in each game, linked to the ranking.
    page = client.get(f"/players/{ann.public_id}/").content.decode()
    ann_row = Rating.objects.get(email="ann@example.org")
    assert rows(section(page, "ratings")) == [["Liar's Dice", str(ratings.shown(ann_row)), "5"]]
    assert 'href="/rankings/liars-dice/"' in section(page, "ratings")


def section_of(html: str, table_id: str) -> str:
    match = re.search(rf'<table class="stack" id="{table_id}">.*?</table>', html, re.S)
    assert match is not None
    return match[0]


@pytest.mark.parametrize("key", ["chess", "LIARS-DICE", "liars_dice"])
def test_an_unknown_game_has_no_ranking(client: Client, key: str) -> None:
    assert client.get(f"/rankings/{key}/").status_code == 404


def test_a_ranking_page_out_of_range_or_not_a_number_shows_a_page_of_the_ranking(
    client: Client, now: datetime
) -> None:
    play_out(
        started_game(
            "liars-dice", now=now, players=["ann", "bob", "cy"], rated=True, **QUICK_LIARS
        ),
        sending={"ann", "bob"},
    )
    for page in ("abc", "0", "99", "-1", "1.5"):
        response = client.get("/rankings/liars-dice/", {"page": page})
        assert response.status_code == 200
        assert [row[0] for row in rows(section_of(response.content.decode(), "ranking"))] == [
            "1. ann",
            "2. cy",
            "3. bob",
        ]
    assert "Page 1 of" not in response.content.decode()  # one page: no page links


def test_a_long_ranking_is_paged(client: Client, now: datetime, monkeypatch: Any) -> None:
    monkeypatch.setattr(standing_views, "RANKING_PAGE", 2)
    play_out(
        started_game(
            "liars-dice", now=now, players=["ann", "bob", "cy"], rated=True, **QUICK_LIARS
        ),
        sending={"ann", "bob"},
    )
    first = client.get("/rankings/liars-dice/").content.decode()
    second = client.get("/rankings/liars-dice/", {"page": "2"}).content.decode()
    assert [row[0] for row in rows(section_of(first, "ranking"))] == ["1. ann", "2. cy"]
    assert [row[0] for row in rows(section_of(second, "ranking"))] == ["3. bob"]
    pages = found(r'<nav aria-label="Pages of the ranking">(.*?)</nav>', first)
    assert plain(pages) == "Page 1 of 2 Next page"


# --- the GM's choice ----------------------------------------------------------------------


@pytest.fixture
def gm_client() -> tuple[Client, User]:
    gm = GMFactory.create(is_staff=True)
    client = Client()
    client.force_login(gm)
    return client, gm


NEW_GAME = {
    "title": "Rated Choice",
    "option_rolls_per_turn": "1",
    "option_end_threshold": "8",
    "option_tiebreak": "shared",
    "option_round_cap": "200",
    "time_zone": "UTC",
    "schedule": "every 48 hours",
    "players": "ann <ann@example.org>\r\nbob, bob@example.org",
}


@pytest.mark.parametrize(("box", "is_rated"), [({"rated": "on"}, True), ({}, False)])
def test_the_gm_chooses_whether_a_new_game_is_rated_and_its_page_says_so(
    gm_client: tuple[Client, User], box: dict[str, str], is_rated: bool
) -> None:
    client, _ = gm_client
    form = client.get("/gm/new/choice/standard/").content.decode()
    assert (
        '<label class="check"><input type="checkbox" name="rated" '
        'aria-describedby="id_rated_helptext" id="id_rated"> '
        "Rated: the result counts in the game's ranking</label>"
    ) in unescape_quotes(form)
    response = client.post("/gm/new/choice/standard/", NEW_GAME | box)
    game = Game.objects.get()
    assert response.status_code == 302 and game.rated is is_rated
    page = client.get(reverse("gm:game", args=[game.pk])).content.decode()
    words = re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", page)
    assert (("Rated", "yes: the result counts in the game&#x27;s ranking") in words) is is_rated


def unescape_quotes(html: str) -> str:
    return html.replace("&#x27;", "'")


def test_the_next_game_of_a_rated_game_is_rated(now: datetime) -> None:
    game = play_out(
        started_game(
            "liars-dice", now=now, players=["ann", "bob", "cy"], rated=True, **QUICK_LIARS
        ),
        sending={"ann", "bob"},
    )
    assert postal.play_again(game.pk, now=now + DAY).rated is True


def test_the_ranking_page_reads_two_queries_whatever_the_number_of_players(
    client: Client, now: datetime, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    """The count of rated players (for the pages) and one page of them with their pages."""
    play_out(
        started_game(
            "liars-dice", now=now, players=["ann", "bob", "cy"], rated=True, **QUICK_LIARS
        ),
        sending={"ann", "bob"},
    )
    player_for("ann@example.org", now)
    with django_assert_num_queries(2):
        assert client.get("/rankings/liars-dice/").status_code == 200
    play_season(now + 10 * DAY)
    player_for("bob@example.org", now)
    with django_assert_num_queries(2):
        assert client.get("/rankings/liars-dice/").status_code == 200
    with django_assert_num_queries(1):
        assert client.get("/rankings/").status_code == 200
