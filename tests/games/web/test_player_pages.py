"""A player's own pages (games.web.me.views): signing in by link or code, every refusal
and bad input, the rate limits, My games and its query budget, the settings, signing out,
the header; and, pairwise, that a signed-in player opens their own seats and nothing of
anyone else's."""

from __future__ import annotations

import re
import secrets
import uuid
from datetime import datetime, timedelta
from html import escape
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django.fixtures import Settings
from time_machine import TimeMachineFixture

from games import postal
from games.community import players
from games.engines.liars_dice.rules import LiarsDiceEngine
from games.models import EmailPreference, Game, Order, Player, Seat, SignIn
from games.postal import access
from moderator.mail.models import OutboundEmail
from tests.factories import GMFactory, seat_page, settings_page, started_game
from tests.games.postal.test_liars_dice_postal import cup_secrets, with_distinct_cups

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def own_cache(settings: Settings, now: datetime) -> None:
    """Rate-limit counters of this test alone, in one window (the clock is stopped)."""
    settings.CACHES = {
        "default": {**settings.CACHES["default"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"}
    }


def browser() -> Client:
    return Client(REMOTE_ADDR=f"10.{secrets.randbelow(256)}.{secrets.randbelow(256)}.7")


def main_text(response: Any) -> str:
    """The page's <main>, its white space collapsed and its CSRF token blanked."""
    text = " ".join(response.content.decode().split())
    text = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', 'name="csrfmiddlewaretoken"', text)
    return text[text.index("<main>") + len("<main>") : text.index("</main>")].strip()


def emailed(address: str) -> OutboundEmail:
    return OutboundEmail.objects.filter(kind="signin", to=address).latest("id")


def link_path(address: str) -> str:
    match = re.search(r"https?://[^/\s]+(/signin/[^/\s]+/)", emailed(address).text)
    assert match is not None
    return match[1]


def code_in(address: str) -> str:
    match = re.search(r"^  (\d{6})$", emailed(address).text, re.MULTILINE)
    assert match is not None
    return match[1]


def signed_in(address: str, client: Client | None = None) -> Client:
    """A browser signed in as ``address`` through the sign-in page and its link."""
    client = client or browser()
    assert client.post("/signin/", {"email": address}).status_code == 200
    response = client.post(link_path(address))
    assert (response.status_code, response["Location"]) == (302, "/me/")
    return client


ANN, BOB = postal.Player("Ann", "ann@example.org"), postal.Player("Bob", "bob@example.org")


# --- asking -------------------------------------------------------------------------------


def test_the_sign_in_page_asks_for_an_address(client: Client) -> None:
    response = client.get("/signin/")
    assert response.status_code == 200
    text = main_text(response)
    assert '<label for="id_email">Email to sign in with</label>' in text
    assert '<form method="post" action="/signin/" novalidate>' in text
    assert "Email me a sign-in link" in text


def test_a_known_and_an_unknown_address_get_the_same_page_and_both_an_email(
    now: datetime,
) -> None:
    started_game(now=now, players=[ANN, BOB], title="Choice")
    known = browser().post("/signin/", {"email": "ann@example.org"})
    unknown = browser().post("/signin/", {"email": "nobody@example.org"})
    assert (known.status_code, unknown.status_code) == (200, 200)
    assert main_text(known) == main_text(unknown).replace("nobody@example.org", "ann@example.org")
    assert (
        "A sign-in link and code are on their way to ann@example.org. They work once, for 15 "
        "minutes." in main_text(known)
    )
    assert 'id="code-form"' in main_text(known)
    assert sorted(OutboundEmail.objects.filter(kind="signin").values_list("to", flat=True)) == [
        "ann@example.org",
        "nobody@example.org",
    ]


def test_no_address_is_asked_again_and_nothing_is_sent(client: Client) -> None:
    response = client.post("/signin/", {"email": "ann at example"})
    assert response.status_code == 400
    errors = re.findall(r'<ul class="errors" id="email-errors"><li>(.*?)</li>', main_text(response))
    assert errors == ["That is not an email address: write it as name@example.org."]
    assert not SignIn.objects.exists() and not OutboundEmail.objects.exists()


def test_sign_ins_are_limited_per_address_and_per_client(now: datetime, settings: Settings) -> None:
    settings.RATES = {**settings.RATES, "signin-email": "2/h", "signin-address": "3/h"}
    statuses = [
        Client(REMOTE_ADDR=f"198.51.100.{n}").post("/signin/", {"email": "ANN@example.org"})
        for n in range(3)
    ]
    assert [response.status_code for response in statuses] == [200, 200, 429]
    assert "Too many sign-ins were asked for this address" in main_text(statuses[2])
    one = Client(REMOTE_ADDR="198.51.100.50")
    answers = [one.post("/signin/", {"email": f"p{n}@example.org"}).status_code for n in range(4)]
    assert answers == [200, 200, 200, 429]
    assert SignIn.objects.count() == OutboundEmail.objects.count() == 5


# --- the link ---------------------------------------------------------------------------------


def test_the_links_page_changes_nothing_and_its_button_signs_in(now: datetime) -> None:
    client = browser()
    client.post("/signin/", {"email": "ann@example.org"})
    path = link_path("ann@example.org")
    scanner = browser()
    for visitor in (scanner, scanner, client):
        page = visitor.get(path)
        assert page.status_code == 200
        assert '<button type="submit">Sign in</button>' in main_text(page)
        assert "ann@example.org" in main_text(page)
    assert SignIn.objects.get().used_at is None and not Player.objects.exists()
    assert "sessionid" not in client.cookies or not client.cookies["sessionid"].value
    response = client.post(path)
    assert (response.status_code, response["Location"]) == (302, "/me/")
    assert client.cookies[access.SIGNED_IN_COOKIE].value == "1"
    player = Player.objects.get()
    assert int(client.session["_auth_user_id"]) == player.user_id
    assert client.session[players.SESSION_KEY] == player.pk
    assert client.get("/me/").status_code == 200


def test_a_used_link_says_so_and_offers_a_new_sign_in(now: datetime) -> None:
    client = signed_in("ann@example.org")
    path = link_path("ann@example.org")
    for method in (client.get, client.post, browser().post):
        response = method(path)
        assert response.status_code == 410
        text = main_text(response)
        assert "This sign-in link was used already" in text
        assert '<form method="post" action="/signin/" novalidate>' in text


def test_an_expired_link_says_so(now: datetime, time_machine: TimeMachineFixture) -> None:
    client = browser()
    client.post("/signin/", {"email": "ann@example.org"})
    time_machine.move_to(now + timedelta(minutes=15), tick=False)
    for method in (client.get, client.post):
        response = method(link_path("ann@example.org"))
        assert response.status_code == 410
        assert "This sign-in has expired: a link and its code work for 15 minutes" in main_text(
            response
        )
    assert not Player.objects.exists()


def test_an_unknown_link_is_a_404_with_a_new_form(client: Client) -> None:
    for method in (client.get, client.post):
        response = method("/signin/not-a-token/")
        assert response.status_code == 404
        assert "This sign-in link is not valid" in main_text(response)
    assert not Player.objects.exists()


def test_the_link_goes_where_the_player_was_going(now: datetime) -> None:
    client = browser()
    response = client.get("/me/settings/")
    assert (response.status_code, response["Location"]) == (302, "/signin/?next=/me/settings/")
    page = client.get(response["Location"])
    assert '<input type="hidden" name="next" value="/me/settings/">' in main_text(page)
    client.post("/signin/", {"email": "ann@example.org", "next": "/me/settings/"})
    response = client.post(link_path("ann@example.org"))
    assert response["Location"] == "/me/settings/"


@pytest.mark.parametrize(
    "elsewhere", ["https://evil.example/", "//evil.example/", "/\\evil.example", "me/"]
)
def test_a_next_off_the_site_is_not_followed(now: datetime, elsewhere: str) -> None:
    client = browser()
    client.post("/signin/", {"email": "ann@example.org", "next": elsewhere})
    assert client.post(link_path("ann@example.org"))["Location"] == "/me/"


def test_links_are_rate_limited_per_client(now: datetime, settings: Settings) -> None:
    settings.RATES = {**settings.RATES, "link": "2/m"}
    client = browser()
    client.post("/signin/", {"email": "ann@example.org"})
    path = link_path("ann@example.org")
    assert [client.get(path).status_code for _ in range(3)] == [200, 200, 429]
    assert client.post(path).status_code == 429
    assert SignIn.objects.get().used_at is None


# --- the code ---------------------------------------------------------------------------------


def test_the_typed_code_signs_in(now: datetime) -> None:
    client = browser()
    client.post("/signin/", {"email": "ann@example.org"})
    code = code_in("ann@example.org")
    response = client.post(
        "/signin/code/", {"email": "Ann@example.org", "code": f"{code[:3]} {code[3:]}"}
    )
    assert (response.status_code, response["Location"]) == (302, "/me/")
    assert client.get("/me/").status_code == 200


def test_a_wrong_code_says_how_many_tries_are_left_and_the_fifth_voids(now: datetime) -> None:
    client = browser()
    client.post("/signin/", {"email": "ann@example.org"})
    code = code_in("ann@example.org")
    wrong = f"{(int(code) + 1) % 10**6:06d}"
    said = []
    for _ in range(4):
        response = client.post("/signin/code/", {"email": "ann@example.org", "code": wrong})
        assert response.status_code == 400
        said += re.findall(r'<p class="error" id="wrong-code">(.*?)</p>', main_text(response))
        # The wrong code is cleared from its box, the address kept, the box focused.
        assert re.findall(r'<input [^>]*name="(email|code)"[^>]*>', main_text(response)) == [
            "email",
            "code",
        ]
        assert re.findall(r'name="code" [^>]*value="([^"]*)"', main_text(response)) == [""]
        assert 'value="ann@example.org"' in main_text(response)
        assert 'aria-describedby="wrong-code" autofocus>' in main_text(response)
    assert said == [
        f"That is not the code of the email: nothing was signed in. {left} more "
        f"{'try' if left == 1 else 'tries'} before the sign-in is void."
        for left in (4, 3, 2, 1)
    ]
    response = client.post("/signin/code/", {"email": "ann@example.org", "code": wrong})
    assert response.status_code == 400
    assert "The code of this sign-in was typed wrong 5 times" in main_text(response)
    response = client.post("/signin/code/", {"email": "ann@example.org", "code": code})
    assert "typed wrong 5 times" in main_text(response)
    assert client.post(link_path("ann@example.org")).status_code == 410
    assert client.get("/me/").status_code == 302
    assert not Player.objects.exists()


def test_a_wrong_code_leaves_the_player_on_a_page_that_shows_the_code_form_again(
    now: datetime,
) -> None:
    client = browser()
    client.post("/signin/", {"email": "ann@example.org"})
    code = code_in("ann@example.org")
    wrong = f"{(int(code) + 1) % 10**6:06d}"
    assert (
        client.post("/signin/code/", {"email": "ann@example.org", "code": wrong}).status_code == 400
    )
    # Reloaded, or opened again: the box, not an empty 405.
    response = client.get("/signin/code/")
    assert response.status_code == 200
    text = main_text(response)
    assert '<form method="post" action="/signin/code/" novalidate id="code-form">' in text
    assert "Open the email and follow its link, or type its code here:" in text
    assert "are on their way to" not in text
    response = client.post("/signin/code/", {"email": "ann@example.org", "code": code})
    assert (response.status_code, response["Location"]) == (302, "/me/")


def test_a_next_path_with_a_nul_is_dropped_and_the_sign_in_goes_on(now: datetime) -> None:
    client = browser()
    response = client.post("/signin/", {"email": "ann@example.org", "next": "/me/\x00"})
    assert response.status_code == 200
    assert "A sign-in link and code are on their way to ann@example.org." in main_text(response)
    assert SignIn.objects.get().next == ""
    response = client.post(link_path("ann@example.org"))
    assert (response.status_code, response["Location"]) == (302, "/me/")


@pytest.mark.parametrize(
    ("data", "error_id", "error"),
    [
        ({"email": "ann@example.org", "code": "12 34"}, "code-errors", "The code is 6 digits"),
        ({"email": "ann@example.org", "code": ""}, "code-errors", "Type the 6-digit code"),
        ({"email": "ann", "code": "123456"}, "code-email-errors", "That is not an email address"),
    ],
)
def test_a_code_form_with_an_error_counts_no_attempt(
    now: datetime, data: dict[str, str], error_id: str, error: str
) -> None:
    client = browser()
    client.post("/signin/", {"email": "ann@example.org"})
    response = client.post("/signin/code/", data)
    assert response.status_code == 400
    assert re.search(rf'<ul class="errors" id="{error_id}"><li>{error}', main_text(response))
    assert SignIn.objects.get().attempts == 0


def test_a_code_for_an_address_that_asked_nothing_says_so(client: Client) -> None:
    response = client.post("/signin/code/", {"email": "ann@example.org", "code": "123456"})
    assert response.status_code == 400
    assert "No sign-in was asked for this address" in main_text(response)


def said_to(response: Any) -> list[str]:
    """The refusal a code page shows: a wrong code's, or a sign-in's that signs nobody in."""
    text = main_text(response)
    return re.findall(r'<p class="error" id="wrong-code">(.*?)</p>', text) + re.findall(
        r'<p class="error" id="refused">(.*?)</p>', text
    )


def test_a_strangers_wrong_codes_void_nothing_and_the_players_code_signs_in(
    now: datetime,
) -> None:
    player = browser()
    assert player.post("/signin/", {"email": "ann@example.org"}).status_code == 200
    code = code_in("ann@example.org")
    wrong = f"{(int(code) + 1) % 10**6:06d}"
    stranger = browser()
    answers = [
        stranger.post("/signin/code/", {"email": "ann@example.org", "code": wrong})
        for _ in range(7)
    ]
    assert [response.status_code for response in answers] == [400] * 7
    assert said_to(answers[-1]) == [
        "No sign-in was asked for this address in this browser: a code works only in the "
        "browser where it was asked for (the email&#x27;s link works anywhere). Ask for one "
        "below."
    ]
    # Nor does the right code typed by the stranger sign them in.
    response = stranger.post("/signin/code/", {"email": "ann@example.org", "code": code})
    assert response.status_code == 400
    assert (SignIn.objects.get().attempts, Player.objects.count()) == (0, 0)
    response = player.post("/signin/code/", {"email": "ann@example.org", "code": code})
    assert (response.status_code, response["Location"]) == (302, "/me/")
    assert player.get("/me/").status_code == 200


def test_a_stranger_who_asks_for_the_address_voids_only_their_own_sign_in(
    now: datetime,
) -> None:
    player = browser()
    player.post("/signin/", {"email": "ann@example.org"})
    code = code_in("ann@example.org")
    stranger = browser()
    stranger.post("/signin/", {"email": "ann@example.org"})
    guesses = [f"{n:06d}" for n in range(7) if f"{n:06d}" != code][:6]
    answers = [
        stranger.post("/signin/code/", {"email": "ann@example.org", "code": guess})
        for guess in guesses
    ]
    assert [response.status_code for response in answers] == [400] * 6
    assert "The code of this sign-in was typed wrong 5 times" in said_to(answers[4])[0]
    assert list(SignIn.objects.order_by("id").values_list("attempts", flat=True)) == [0, 5]
    response = player.post("/signin/code/", {"email": "ann@example.org", "code": code})
    assert (response.status_code, response["Location"]) == (302, "/me/")


def test_codes_are_rate_limited_per_client(now: datetime, settings: Settings) -> None:
    settings.RATES = {**settings.RATES, "signin-code": "2/h"}
    client = browser()
    client.post("/signin/", {"email": "ann@example.org"})
    code = code_in("ann@example.org")
    wrong = f"{(int(code) + 1) % 10**6:06d}"
    answers = [
        client.post("/signin/code/", {"email": "ann@example.org", "code": wrong}).status_code
        for _ in range(2)
    ]
    limited = client.post("/signin/code/", {"email": "ann@example.org", "code": code})
    assert [*answers, limited.status_code] == [400, 400, 429]
    assert "Too many codes were typed from your connection" in main_text(limited)
    assert SignIn.objects.get().attempts == 2 and not Player.objects.exists()


def test_the_sign_in_pages_need_csrf(now: datetime) -> None:
    client = Client(enforce_csrf_checks=True)
    assert client.post("/signin/", {"email": "ann@example.org"}).status_code == 403
    assert client.post("/signin/code/", {"email": "a@b.org", "code": "123456"}).status_code == 403
    assert not SignIn.objects.exists()


# --- my games -----------------------------------------------------------------------------------


def test_my_games_needs_signing_in(client: Client) -> None:
    response = client.get("/me/")
    assert (response.status_code, response["Location"]) == (302, "/signin/?next=/me/")


def test_my_games_lists_the_seats_and_opens_them_without_links(now: datetime) -> None:
    first = started_game(now=now, players=[ANN, BOB], title="Tuesday Choice")
    second = started_game(
        now=now, players=[BOB, postal.Player("Annie", "ANN@example.org")], title="Friday Choice"
    )
    client = signed_in("ann@example.org")
    page = main_text(client.get("/me/"))
    assert '<h2 id="group-owed">Waiting for your order (2)</h2>' in page
    for game, position in ((first, 0), (second, 1)):
        assert f'<a href="{seat_page(game, position)}"><strong>{game.title}</strong></a>' in page
        assert client.get(seat_page(game, position)).status_code == 200
        assert client.get(f"{seat_page(game, position)}view.json").status_code == 200
    assert "You play Annie · postal turn 1" in page and "Your order is due by" in page
    assert client.get(seat_page(first, 1)).status_code == 404


def test_a_signed_in_player_orders_from_their_seat_page(now: datetime) -> None:
    game = started_game(now=now, players=[ANN, BOB], title="Choice")
    client = signed_in("ann@example.org")
    state = game.rules.state_from_json(Game.objects.get(pk=game.pk).state)
    text = game.rules.canonical(state, 0, game.rules.default(state, 0))
    response = client.post(
        seat_page(game, 0), {"seat": "0", "step": "1", "entry": "text", "text": text}
    )
    assert (response.status_code, response["Location"]) == (302, seat_page(game, 0))
    assert Order.objects.get().seat.name == "Ann"
    # Bob's seat takes nothing from her.
    response = client.post(
        seat_page(game, 1), {"seat": "1", "step": "1", "entry": "text", "text": text}
    )
    assert response.status_code == 404 and Order.objects.count() == 1


def test_an_address_without_seats_sees_an_empty_list_and_the_open_games(now: datetime) -> None:
    client = signed_in("new@example.org")
    text = main_text(client.get("/me/"))
    assert '<p id="no-games">No game of yours here yet.' in text
    assert '<a href="/open/">join an open game</a>' in text


def test_a_seat_given_to_another_player_leaves_my_games(now: datetime) -> None:
    game = started_game(now=now, players=[ANN, BOB], title="Choice")
    client = signed_in("ann@example.org")
    assert client.get(seat_page(game, 0)).status_code == 200
    postal.replace_player(game.pk, position=0, name="Cy", email="cy@example.org", now=now)
    assert client.get(seat_page(game, 0)).status_code == 404
    assert "Choice" not in main_text(client.get("/me/"))


def test_a_gm_signed_in_is_told_my_games_are_a_players(client: Client, now: datetime) -> None:
    gm = GMFactory.create(is_staff=True, email="ann@example.org")
    game = started_game(now=now, players=[ANN, BOB], title="Choice")
    client.force_login(gm)
    text = main_text(client.get("/me/"))
    assert "You are signed in as a game master, not as a player." in text
    assert "Choice" not in text
    # The GM's session opens no seat of the address.
    assert client.get(seat_page(game, 0)).status_code == 404


@pytest.mark.parametrize("games", [2, 6])
def test_my_games_page_makes_the_same_queries_whatever_the_seats(
    now: datetime, games: int, django_assert_max_num_queries: Any
) -> None:
    for number in range(games):
        game = started_game(now=now, players=[ANN, BOB], title=f"Game {number}")
        if number % 2:
            for _ in range(20):
                if Game.objects.get(pk=game.pk).status == Game.Status.FINISHED:
                    break
                postal.resolve_now(game.pk, now=now)
    client = signed_in("ann@example.org")
    client.get("/me/")  # the CSRF cookie is set once
    # The session (none when Redis has it), the user, the Player, my_games' four, the
    # record's three (seats, seats left to others, final states) and the absences.
    with django_assert_max_num_queries(11):
        assert client.get("/me/").status_code == 200


# --- hidden information, pairwise ------------------------------------------------------------


def test_a_signed_in_player_reads_nothing_of_another_seat(now: datetime) -> None:
    """For each ordered pair (A, B) of a Liar's Dice game: A signed in reads their own cup
    on their seat page and its JSON, and nothing of B's anywhere they can go: B's seat page,
    its JSON and its email choice answer 404, and A's My games holds no cup at all."""
    game = with_distinct_cups(now, {}, 3)
    state = LiarsDiceEngine().state_from_json(game.state)
    emails = dict(game.seats.values_list("position", "email"))
    for a in range(3):
        client = signed_in(emails[a])
        mine = main_text(client.get("/me/"))
        for secret in cup_secrets(state, a):
            assert secret not in mine and escape(secret) not in mine
        seen = "\n".join(
            client.get(url).content.decode()
            for url in ("/play/", seat_page(game, a), f"{seat_page(game, a)}view.json")
        )
        assert any(secret in seen for secret in cup_secrets(state, a))
        for b in range(3):
            if b == a:
                continue
            for url in (seat_page(game, b), f"{seat_page(game, b)}view.json"):
                assert client.get(url).status_code == 404, (a, b, url)
            choice = client.post(
                f"{seat_page(game, b)}email/", {"reports": "none", "scope": "seat"}
            )
            assert choice.status_code == 404
            assert emails[b] not in mine and seat_page(game, b) not in mine
            for secret in cup_secrets(state, b):
                assert secret not in seen and escape(secret) not in seen, (a, b, secret)
    assert set(Seat.objects.values_list("reports", flat=True)) == {""}


# --- signing out, the header -------------------------------------------------------------------


def test_signing_out_closes_the_seats_and_the_links_seats_too(now: datetime) -> None:
    game = started_game(now=now, players=[ANN, BOB], title="Choice")
    client = browser()
    token = access.mint([game.seats.get(position=1)], now=now)[1]
    client.post(f"/p/{token}/")
    signed_in("ann@example.org", client)
    assert client.get(seat_page(game, 0)).status_code == 200
    assert client.get(seat_page(game, 1)).status_code == 200
    assert client.get("/signout/").status_code == 200  # asks, changes nothing
    assert client.get("/me/").status_code == 200
    response = client.post("/signout/")
    assert (response.status_code, response["Location"]) == (302, "/")
    assert client.get("/me/").status_code == 302
    assert client.get(seat_page(game, 0)).status_code == 404
    assert client.get(seat_page(game, 1)).status_code == 404
    assert "You are signed out." in main_text(client.get("/"))


def header(response: Any) -> str:
    text = " ".join(response.content.decode().split())
    return text[text.index("<header") : text.index("</header>")]


def test_the_header_says_sign_in_or_signed_in_and_sign_out(now: datetime) -> None:
    anonymous = header(browser().get("/"))
    assert '<div class="account" id="account"><a href="/signin/">Sign in</a></div>' in anonymous
    assert '<li><a href="/play/">Your games</a></li>' in anonymous
    client = signed_in("ann@example.org")
    for url in ("/", "/me/", "/play/"):
        mine = header(client.get(url))
        assert '<div class="account" id="account"><span>Signed in</span> ·' in mine
        assert '<button type="submit" class="link">Sign out</button>' in mine
        assert "Sign in" not in mine
        assert '<a href="/me/"' in mine and '<a href="/play/"' not in mine


def test_the_gm_panel_keeps_its_own_nav_under_the_sites(client: Client) -> None:
    gm = GMFactory.create(is_staff=True, username="gwen")
    client.force_login(gm)
    page = header(client.get("/gm/"))
    assert 'class="gm-nav"' in page
    assert '<div class="account" id="account"><span>Signed in as GM gwen</span> ·' in page
    assert page.index('class="site-nav"') < page.index('class="gm-nav"')


def test_the_home_page_offers_sign_in_next_to_lost_links(client: Client) -> None:
    text = main_text(client.get("/"))
    assert '<h2 id="sign-in">Sign in</h2>' in text
    assert '<label for="signin-email">Email to sign in with</label>' in text
    assert text.index('id="sign-in"') < text.index('id="lost-links"')


# --- settings --------------------------------------------------------------------------------


def test_the_settings_page_shows_and_saves_the_players_choices(now: datetime) -> None:
    game = started_game(now=now, players=[ANN, BOB], title="Choice")
    client = signed_in("ann@example.org")
    page = client.get("/me/settings/")
    assert page.status_code == 200
    text = main_text(page)
    assert '<option value="Europe/Berlin">Europe/Berlin</option>' in text
    assert '<option value="" selected>' in text
    # For all the player's seats, "every postal turn": the word of every game.
    assert re.findall(r'name="reports" value="(\w+)"[^>]*> ([^<]+)</label>', text) == [
        ("every", "Every postal turn"),
        ("owed", "Only when I owe an order, with what happened since"),
        ("digest", "A daily digest of what happened"),
        ("none", "Never: I read them on my seat&#x27;s page"),
    ]
    response = client.post(
        "/me/settings/",
        {
            "name": "Annie",
            "time_zone": "Europe/Berlin",
            "reports": "owed",
            "digest": "1",
            "hour": "7",
        },
    )
    assert (response.status_code, response["Location"]) == (302, "/me/settings/")
    said = main_text(client.get("/me/settings/"))
    assert (
        "Saved: your name is Annie; your time zone is Europe/Berlin, in all your games; your "
        "reports come only when you owe an order, with what happened since; reminders come in "
        "one daily digest." in said
    )
    player = Player.objects.get()
    assert (player.name, player.time_zone) == ("Annie", "Europe/Berlin")
    preference = EmailPreference.objects.get(email="ann@example.org")
    assert (preference.reports, preference.digest, preference.hour, preference.time_zone) == (
        "owed",
        True,
        7,
        "Europe/Berlin",
    )
    seat = game.seats.get(position=0)
    assert (seat.name, seat.time_zone, seat.reports) == ("Ann", "Europe/Berlin", "owed")
    assert '<option value="Europe/Berlin" selected>' in said
    # The seat's page now writes its deadline in the zone.
    assert "CET" in client.get(seat_page(game, 0)).content.decode()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("time_zone", "Mars/Olympus"),
        ("reports", "sometimes"),
        ("digest", "2"),
        ("hour", "24"),
        ("name", "x" * 61),
    ],
)
def test_bad_settings_change_nothing_and_say_why(now: datetime, field: str, value: str) -> None:
    started_game(now=now, players=[ANN, BOB], title="Choice")
    client = signed_in("ann@example.org")
    data = {"name": "Annie", "time_zone": "Asia/Tokyo", "reports": "none", "digest": "off"}
    data["hour"] = "9"
    data[field] = value
    response = client.post("/me/settings/", data)
    assert response.status_code == 400
    assert "Nothing was changed." in main_text(response)
    assert 'class="errors"' in main_text(response)
    player = Player.objects.get()
    assert (player.name, player.time_zone) == ("", "")
    assert not EmailPreference.objects.exists()
    assert set(Seat.objects.values_list("time_zone", "reports")) == {("", "")}


def test_settings_need_signing_in_and_a_gm_is_no_player(client: Client) -> None:
    assert client.get("/me/settings/")["Location"] == "/signin/?next=/me/settings/"
    client.force_login(GMFactory.create(is_staff=True))
    assert "not as a player" in main_text(client.get("/me/settings/"))
    assert client.post("/me/settings/", {"name": "x"}).status_code == 200
    assert not Player.objects.exists()


def test_a_user_made_inactive_cannot_sign_in(now: datetime) -> None:
    player = players.player_for("ann@example.org", now=now)
    User.objects.filter(pk=player.user_id).update(is_active=False)
    client = browser()
    client.post("/signin/", {"email": "ann@example.org"})
    response = client.post(link_path("ann@example.org"))
    assert response.status_code == 403
    assert "This address may not sign in here" in main_text(response)
    assert client.get("/me/").status_code == 302


# --- away, and the player's own record ---------------------------------------------------


def test_a_signed_in_player_declares_an_absence_for_one_game_or_all(now: datetime) -> None:

    from games.models import Absence, AbsencePolicy

    friday = started_game(now=now, players=[ANN, BOB], title="Friday")
    sunday = started_game(now=now, players=[ANN, BOB], title="Sunday")
    Game.objects.filter(pk=sunday.pk).update(absence_policy=AbsencePolicy.AUTOPILOT)
    client = signed_in("ann@example.org")
    page = client.get("/me/away/").content.decode()
    policies = re.findall(
        r'<td class="card-title">(.*?)</td><td data-label="While you are away">(.*?)</td>', page
    )
    assert policies == [
        ("Friday", "the deadline waits for you"),
        ("Sunday", "an autopilot plays your turns (yours if you chose one)"),
    ]
    response = client.post(
        "/me/away/",
        {"first_day": "2026-12-01", "last_day": "2026-12-03", "scope": str(sunday.pk)},
        follow=True,
    )
    assert "Done: you are away in Sunday from 1 December 2026 to 3 December 2026." in (
        response.content.decode()
    )
    absence = Absence.objects.get()
    assert (absence.email, absence.game_id) == ("ann@example.org", sunday.pk)
    me = client.get("/me/").content.decode()
    assert '<p id="my-away">Away: 1 December to 3 December (Sunday).' in me
    # Another player's game is not a choice: the form says so and nothing is written.
    other = started_game(
        now=now, players=[postal.Player("Cy", "cy@example.org"), BOB], title="Elsewhere"
    )
    response = client.post(
        "/me/away/",
        {"first_day": "2026-12-01", "last_day": "2026-12-03", "scope": str(other.pk)},
    )
    assert "Choose whether you are away from one game or from all your games." in (
        response.content.decode()
    )
    assert Absence.objects.count() == 1
    assert friday.pk != sunday.pk


def test_my_games_shows_my_record_and_links_my_public_page(now: datetime) -> None:
    from games.models import Player

    game = started_game(now=now, players=[ANN, BOB], title="Friday")
    step = game.steps.get(number=1)
    postal.resolve_due_step(step.pk, now=step.deadline)
    client = signed_in("ann@example.org")
    me = client.get("/me/").content.decode()
    player = Player.objects.get(email="ann@example.org")
    assert f'href="/players/{player.public_id}/">My public page</a>' in me
    record = re.findall(r'<p class="record">(.*?)</p>', me)[0]
    assert re.sub(r"<[^>]+>", "", record) == (
        "1 game played · 0 finished · 1 running · 0 abandoned · missed 1 of 1 turn (100%)"
    )


def test_away_needs_signing_in(client: Client) -> None:
    response = client.get("/me/away/")
    assert (response.status_code, response["Location"]) == (302, "/signin/?next=/me/away/")


# --- the time zone the player chose --------------------------------------------------------


def test_away_counts_days_in_the_zone_the_players_games_write_times_in(now: datetime) -> None:
    from games.models import Absence

    started_game(now=now, players=[ANN, BOB], title="Friday", time_zone="Europe/Berlin")
    client = signed_in("ann@example.org")
    page = client.get("/me/away/").content.decode()
    assert '<p class="muted">Days in your time zone (Europe/Berlin).</p>' in page
    client.post("/me/away/", {"first_day": "2026-12-01", "last_day": "2026-12-01", "scope": "all"})
    absence = Absence.objects.get()
    assert (absence.zone, absence.starts_at.isoformat(), absence.ends_at.isoformat()) == (
        "Europe/Berlin",
        "2026-11-30T23:00:00+00:00",
        "2026-12-01T23:00:00+00:00",
    )


def test_away_counts_days_in_the_zone_the_player_chose(now: datetime) -> None:
    started_game(now=now, players=[ANN, BOB], title="Friday", time_zone="Europe/Berlin")
    player = players.player_for("ann@example.org", now=now)
    players.save_settings(
        player,
        players.Chosen(name="", time_zone="Asia/Tokyo", reports="", reminders="", hour=None),
    )
    page = signed_in("ann@example.org").get("/me/away/").content.decode()
    assert '<p class="muted">Days in your time zone (Asia/Tokyo).</p>' in page


def test_the_games_a_player_joins_later_write_times_in_the_zone_they_chose(
    now: datetime,
) -> None:
    from games.models import SignUp
    from games.postal import signup_actions

    player = players.player_for("ann@example.org", now=now)
    players.save_settings(
        player,
        players.Chosen(name="", time_zone="Asia/Tokyo", reports="", reminders="", hour=None),
    )
    invited = started_game(now=now, players=[ANN, BOB], title="Invited")
    recruiting = postal.create_game(
        gm=GMFactory.create(),
        engine_key="choice",
        title="Open",
        players=[postal.Player("bob", "bob@example.org")],
    )
    signup_actions.seat_and_start(
        recruiting,
        [SignUp(game=recruiting, name="ann", email="ann@example.org")],
        now=now,
        seed=b"s",
    )
    zones = dict(
        Seat.objects.filter(email="ann@example.org").values_list("game__title", "time_zone")
    )
    assert zones == {"Invited": "Asia/Tokyo", "Open": "Asia/Tokyo"}
    page = signed_in("ann@example.org").get(settings_page(invited, 0)).content.decode()
    assert "(Asia/Tokyo)" in page
