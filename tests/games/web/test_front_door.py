"""The front door (issue 41, part 1): the header on every page leads to your games, open
games, games to watch, rankings, the archive and, for a GM, the GM panel, and says truthfully
who is signed in; the home page shows open games and games in progress; the list of games
to watch; "Your games" says what each seat owes and by when; the favicon and the manifest."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

import pytest
from django.contrib.staticfiles import finders
from django.test import Client

from games.models import Game, Publicity, Seat
from games.postal import access
from tests.factories import GameFactory, GMFactory, new_game, seat_page, started_game
from tests.games.web.test_player_pages import browser, header, main_text, signed_in

pytestmark = pytest.mark.django_db

EVERYBODY = [
    ("/play/", "Your games"),
    ("/open/", "Open games"),
    ("/games/live/", "Watch"),
    ("/rankings/", "Rankings"),
    ("/games/archive/", "Archive"),
]


def site_nav(response: Any) -> list[tuple[str, str, bool]]:
    """The header's links: where each leads, its words, and whether it is this page's."""
    text = header(response)
    nav = text[text.index('<ul id="site-nav">') : text.index("</ul></nav>")]
    return [
        (href, words, bool(current))
        for href, current, words in re.findall(
            r'<li><a href="([^"]*)"( aria-current="true")?>([^<]*)</a></li>', nav
        )
    ]


def opened(client: Client, game: Game, position: int, now: datetime) -> None:
    seat = Seat.objects.get(game=game, position=position)
    token = access.mint([seat], now=now)[position]
    assert client.post(f"/p/{token}/").status_code == 302


def test_every_kind_of_page_leads_to_the_same_places_and_marks_its_own(now: datetime) -> None:
    running = started_game(now=now, public=Publicity.YES, title="Watched")
    client = browser()
    opened(client, running, 0, now)
    pages = {
        "/": None,
        "/open/": "/open/",
        "/games/live/": "/games/live/",
        "/rankings/": "/rankings/",
        "/games/archive/": "/games/archive/",
        f"/games/{running.public_id}/": "/games/live/",
        "/play/": "/play/",
        seat_page(running, 0): "/play/",
    }
    for url, current in pages.items():
        response = client.get(url)
        assert response.status_code == 200, url
        assert site_nav(response) == [
            (href, words, href == current) for href, words in EVERYBODY
        ], url


def test_a_gm_has_the_gm_panel_in_the_header_on_the_panel_and_off_it(client: Client) -> None:
    client.force_login(GMFactory.create(is_staff=True, username="gwen"))
    gm = [*EVERYBODY, ("/gm/", "GM panel")]
    assert site_nav(client.get("/gm/")) == [(href, words, href == "/gm/") for href, words in gm]
    assert site_nav(client.get("/open/")) == [(href, words, href == "/open/") for href, words in gm]
    assert "Signed in as GM gwen" in header(client.get("/rankings/"))


def test_signed_in_or_not_is_told_truthfully(now: datetime) -> None:
    game = started_game(now=now)
    links_only = browser()
    opened(links_only, game, 0, now)
    player = signed_in("ann@example.org")
    account = re.compile(r'<div class="account" id="account">(.*?)</div>')
    assert account.findall(header(links_only.get("/"))) == ['<a href="/signin/">Sign in</a>']
    assert site_nav(links_only.get("/"))[0] == ("/play/", "Your games", False)
    (said,) = account.findall(header(player.get("/")))
    assert said.startswith("<span>Signed in</span> · <form")
    assert site_nav(player.get("/"))[0] == ("/me/", "My games", False)
    assert site_nav(player.get("/me/"))[0] == ("/me/", "My games", True)


def games_listed(html: str, section: str) -> list[str]:
    """The titles of the games a section of the page lists, in its order."""
    part = html[html.index(f'id="{section}"') :]
    part = part[: part.index("</section>")] if "</section>" in part else part
    return re.findall(r"<strong>([^<]*)</strong></a>", part)


def test_the_home_page_lists_open_games_and_games_in_progress_not_private_or_over(
    now: datetime,
) -> None:
    new_game(title="Open table", signup="first", seats_wanted=4, players=["ann"])
    new_game(title="Invitation only", players=2)  # sign-up closed
    started_game(now=now, title="Public now", public=Publicity.YES)
    started_game(now=now, title="Private", public=Publicity.NO)
    started_game(now=now, title="Public once over", public=Publicity.AUTO)
    GameFactory.create(title="Over", status=Game.Status.FINISHED, public=Publicity.YES)

    html = " ".join(browser().get("/").content.decode().split())

    assert games_listed(html, "open-games") == ["Open table"]
    assert "Seats left: 3 of 4" in html
    assert games_listed(html, "live-games") == ["Public now"]
    assert "ann, bob, cy · postal turn 1" in html
    assert '<a href="/open/">All open games, and seats looking for a new player</a>' in html
    assert '<a href="/games/live/">All games in progress</a>' in html
    assert 'id="mine"' not in html  # this browser holds no seat


def test_the_home_page_says_what_this_browsers_seats_owe(now: datetime) -> None:
    owing = started_game(now=now, title="Owing")
    client = browser()
    opened(client, owing, 1, now)

    html = main_text(client.get("/"))

    mine = html[html.index('id="mine"') : html.index("</section>")]
    assert re.findall(r"<p class=\"tight\">(.*?)</p>", mine) == [
        f'<a href="{seat_page(owing, 1)}"><strong>Owing</strong></a> · You play bob',
        "Your order is due by Wed 25 Nov 2026 18:00 UTC",
    ]
    assert '<a href="/play/">Your game in this browser</a>' in mine


def test_the_list_of_games_to_watch_holds_public_games_in_progress_only(now: datetime) -> None:
    started_game(now=now, title="First public", public=Publicity.YES)
    started_game(now=now, title="Second public", public=Publicity.YES)
    started_game(now=now, title="Private", public=Publicity.NO)
    GameFactory.create(title="Over", status=Game.Status.FINISHED, public=Publicity.YES)
    GameFactory.create(title="Recruiting", public=Publicity.YES)

    html = " ".join(browser().get("/games/live/").content.decode().split())

    assert games_listed(html, "live-games") == ["Second public", "First public"]


def test_with_nothing_to_watch_the_list_says_so_and_leads_to_the_archive() -> None:
    text = main_text(browser().get("/games/live/"))
    assert (
        '<p id="none">No public game is in progress just now. <a href="/games/archive/">Watch a '
        "finished game again in the archive.</a></p>" in text
    )


def test_your_games_say_what_each_seat_owes_and_by_when(now: datetime) -> None:
    owing = started_game(now=now, title="Owing")
    waiting = new_game(title="Waiting")
    client = browser()
    opened(client, owing, 0, now)
    opened(client, waiting, 2, now)

    text = main_text(client.get("/play/"))

    assert re.findall(r'<h2 id="group-(\w+)">([^<]*)</h2>', text) == [
        ("owed", "Waiting for your order (1)"),
        ("waiting", "Not started yet (1)"),
    ]
    assert '<p class="tight">Your order is due by Wed 25 Nov 2026 18:00 UTC</p>' in text


def test_the_home_page_makes_as_many_queries_for_six_games_as_for_one(
    now: datetime, django_assert_num_queries: Any
) -> None:
    # The open games counted in one query; the games to watch and their seats in two.
    for count in (1, 6):
        for number in range(count):
            new_game(title=f"Open {count}.{number}", signup="first", seats_wanted=4)
            started_game(now=now, title=f"Watched {count}.{number}", public=Publicity.YES)
        with django_assert_num_queries(3):
            assert browser().get("/").status_code == 200


def test_the_pages_name_a_favicon_and_a_manifest_that_are_there() -> None:
    html = browser().get("/").content.decode()
    assert '<link rel="icon" href="/static/moderator/favicon.svg" type="image/svg+xml">' in html
    assert '<link rel="manifest" href="/static/moderator/manifest.webmanifest">' in html
    found = finders.find("moderator/manifest.webmanifest")
    assert isinstance(found, str)
    with open(found, encoding="utf-8") as manifest_file:
        manifest = json.load(manifest_file)
    assert (manifest["short_name"], manifest["start_url"], manifest["display"]) == (
        "Moderator",
        "/",
        "standalone",
    )
    for icon in manifest["icons"]:
        assert finders.find(f"moderator/{icon['src']}") is not None, icon
