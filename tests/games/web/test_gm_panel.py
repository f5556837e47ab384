"""The GM's panel (issue 41, part 9 and part 5): seat counts checked on the new-game form
in the words of each way to play, a game not yet started changed or deleted, the variant
on the GM's list, the GM's own sign-in page, and "Resolve now" confirmed on a page that
names who has not ordered and what it costs them."""

from __future__ import annotations

import html
import re
from datetime import datetime
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from games import postal
from games.engines.choice.rules import ChoiceEngine
from games.models import Game, Order, Seat, SeatLink, SignUpMode, Step
from tests.factories import GMFactory, new_game, started_game

pytestmark = pytest.mark.django_db

CHOICE = ChoiceEngine()
PASSWORD = "secret-pass-1"


@pytest.fixture
def gm() -> User:
    user = GMFactory.create(is_staff=True, username="host")
    user.set_password(PASSWORD)
    user.save()
    return user


@pytest.fixture
def client(gm: User) -> Client:
    client = Client()
    client.force_login(gm)
    return client


def shown(response: Any) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def form_data(client: Client, url: str, **data: str) -> dict[str, Any]:
    """The new-game form's own initial values, then ``data``: what a GM sends who fills
    in only ``data``."""
    form = client.get(url).context["form"]
    initial = {f.html_name: f.value() for f in form if f.value() not in (None, False, "")}
    return initial | data


def players(*names: str) -> str:
    return "\n".join(f"{name} <{name}@example.org>" for name in names)


# --- seat counts on the form -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "data", "field", "message"),
    [
        (
            "/gm/new/liars-dice/genius_dm/",
            {"players": players("ann", "bob", "cy")},
            "players",
            "Liar's Dice: Death Match takes exactly 2 players, not 3",
        ),
        (
            "/gm/new/liars-dice/genius_team/",
            {"players": players("ann", "bob", "cy")},
            "players",
            "Liar's Dice: team takes exactly 4 players, not 3",
        ),
        (
            "/gm/new/liars-dice/genius_dm/",
            {"signup": "first", "seats_wanted": "3", "players": ""},
            "seats_wanted",
            "Liar's Dice: Death Match takes exactly 2 players, not 3",
        ),
        (
            "/gm/new/liars-dice/classic/",
            {"players": players("ann")},
            "players",
            "Liar's Dice: classic takes 2 to 6 players, not 1",
        ),
    ],
)
def test_a_wrong_seat_count_is_refused_on_the_form_in_the_games_words(
    client: Client, url: str, data: dict[str, str], field: str, message: str
) -> None:
    response = client.post(url, form_data(client, url, title="Duel", **data))
    assert response.status_code == 200
    assert response.context["form"].errors == {field: [message]}
    assert html.escape(message) in response.content.decode()
    assert (Game.objects.count(), Seat.objects.count()) == (0, 0)


def test_the_seats_field_says_how_many_players_the_profile_takes(client: Client) -> None:
    form = client.get("/gm/new/liars-dice/genius_team/").context["form"]
    assert form["seats_wanted"].help_text == (
        "For an open game: how many players it takes (Liar's Dice: team takes exactly 4 "
        "players). It starts when the last seat is taken (first come, first seated) or when "
        "you start it."
    )
    assert (
        form.fields["seats_wanted"].widget.attrs["min"],
        form.fields["seats_wanted"].widget.attrs["max"],
    ) == (4, 4)


def test_a_death_match_of_three_is_refused_by_postal_too(gm: User) -> None:
    with pytest.raises(postal.PostalError) as refused:
        new_game("liars-dice", players=3, gm=gm, options={"profile": "genius_dm"})
    assert refused.value.message == "Liar's Dice: Death Match takes exactly 2 players, not 3"
    assert Game.objects.count() == 0


def test_a_death_match_of_two_is_created_and_starts(client: Client, now: datetime) -> None:
    url = "/gm/new/liars-dice/genius_dm/"
    response = client.post(
        url, form_data(client, url, title="Duel", players=players("ann", "bob")), follow=True
    )
    game = Game.objects.get()
    assert shown(response) == ["Duel is created; invite the players next."]
    postal.start_game(game.pk, now=now)
    assert Game.objects.get().status == Game.Status.RUNNING


# --- a game not yet started, changed or deleted ------------------------------------------------


def test_a_recruiting_game_is_changed_keeping_the_seats_named_again(
    client: Client, gm: User, now: datetime
) -> None:
    game = new_game("liars-dice", players=3, gm=gm, title="Pub night")
    postal.invite(game.pk, now=now)
    bob = game.seats.get(name="bob")
    links = list(SeatLink.objects.filter(seat=bob).values_list("pk", flat=True))
    edit = reverse("gm:edit", args=[game.pk])
    page = client.get(edit)
    assert page.context["form"]["players"].value() == players("ann", "bob", "cy")
    response = client.post(
        edit, {"title": "Pub night, moved", "players": players("bob", "dee")}, follow=True
    )
    assert response.redirect_chain == [(reverse("gm:game", args=[game.pk]), 302)]
    assert shown(response) == ["Pub night, moved is changed."]
    game.refresh_from_db()
    assert game.title == "Pub night, moved"
    assert list(game.seats.order_by("position").values_list("position", "name", "email")) == [
        (0, "bob", "bob@example.org"),
        (1, "dee", "dee@example.org"),
    ]
    assert game.seats.get(name="bob").pk == bob.pk
    assert list(SeatLink.objects.filter(seat=bob).values_list("pk", flat=True)) == links


def test_a_change_with_a_wrong_seat_count_changes_nothing(client: Client, gm: User) -> None:
    game = new_game("liars-dice", players=2, gm=gm, title="Duel", options={"profile": "genius_dm"})
    response = client.post(
        reverse("gm:edit", args=[game.pk]),
        {"title": "Duel of three", "players": players("ann", "bob", "cy")},
    )
    assert response.context["form"].errors == {
        "players": ["Liar's Dice: Death Match takes exactly 2 players, not 3"]
    }
    game.refresh_from_db()
    assert game.title == "Duel"
    assert list(game.seats.values_list("name", flat=True)) == ["ann", "bob"]


def test_an_open_games_seats_are_changed_within_its_counts(client: Client, gm: User) -> None:
    game = new_game(
        "liars-dice", players=1, gm=gm, title="Open pub", signup=SignUpMode.FIRST, seats_wanted=4
    )
    edit = reverse("gm:edit", args=[game.pk])
    refused = client.post(
        edit, {"title": "Open pub", "players": players("ann"), "seats_wanted": "7"}
    )
    assert refused.context["form"].errors == {
        "seats_wanted": ["Liar's Dice: classic takes 2 to 6 players, not 7"]
    }
    client.post(edit, {"title": "Open pub", "players": players("ann"), "seats_wanted": "5"})
    assert Game.objects.get(pk=game.pk).seats_wanted == 5


def test_a_recruiting_game_is_deleted_once_the_box_is_ticked(client: Client, gm: User) -> None:
    game = new_game("choice", players=2, gm=gm, title="Never mind")
    delete = reverse("gm:delete", args=[game.pk])
    response = client.post(delete, {}, follow=True)
    assert shown(response) == ["Nothing was deleted: tick “Yes, delete this game” first."]
    assert Game.objects.filter(pk=game.pk).exists()
    response = client.post(delete, {"confirm": "yes"}, follow=True)
    assert response.redirect_chain == [(reverse("gm:dashboard"), 302)]
    assert shown(response) == ["Never mind is deleted."]
    assert (Game.objects.count(), Seat.objects.count()) == (0, 0)


def test_a_started_game_is_neither_changed_nor_deleted(
    client: Client, gm: User, now: datetime
) -> None:
    game = started_game(now=now, gm=gm, title="Running")
    response = client.get(reverse("gm:edit", args=[game.pk]), follow=True)
    assert shown(response) == ["The game has started: its seats stay; replace a player instead."]
    response = client.post(reverse("gm:delete", args=[game.pk]), {"confirm": "yes"}, follow=True)
    assert response.redirect_chain == [(reverse("gm:game", args=[game.pk]), 302)]
    assert shown(response) == [
        "the game has started: you cannot delete it any more; a player who leaves is "
        "replaced on the game's page"
    ]
    assert Game.objects.get(pk=game.pk).seats.count() == 3
    with pytest.raises(postal.PostalError):
        postal.change_recruiting(game.pk, title="x", players=[], seats_wanted=None)


def test_the_game_page_of_a_recruiting_game_links_its_change_page(client: Client, gm: User) -> None:
    game = new_game("choice", players=2, gm=gm)
    page = client.get(reverse("gm:game", args=[game.pk])).content.decode()
    assert (
        f'<a href="/gm/{game.pk}/edit/" id="edit-link">Change the title or the seats, or '
        "delete the game</a>"
    ) in page


# --- the GM's list ----------------------------------------------------------------------------


def test_the_gms_list_names_each_games_variant(client: Client, gm: User) -> None:
    new_game("liars-dice", players=2, gm=gm, title="Duel", options={"profile": "genius_dm"})
    new_game("choice", players=2, gm=gm, title="Plates", options={"variant": "suppenkasper"})
    page = client.get(reverse("gm:dashboard")).content.decode()
    assert re.findall(r'<span class="muted variant">(.*?)</span>', page) == [
        "Choice: Suppenkasper",
        "Liar&#x27;s Dice: Death Match",
    ]


# --- signing in -------------------------------------------------------------------------------


def test_the_panel_sends_a_stranger_to_its_own_sign_in_page_and_back(gm: User) -> None:
    anonymous = Client()
    response = anonymous.get("/gm/campaigns/")
    assert (response.status_code, response["Location"]) == (
        302,
        "/gm/sign-in/?next=/gm/campaigns/",
    )
    page = anonymous.get(response["Location"]).content.decode()
    assert "<h1>Sign in to run your games</h1>" in page
    assert "Django administration" not in page
    assert '<input type="hidden" name="next" value="/gm/campaigns/">' in page
    signed_in = anonymous.post(
        "/gm/sign-in/", {"username": "host", "password": PASSWORD, "next": "/gm/campaigns/"}
    )
    assert (signed_in.status_code, signed_in["Location"]) == (302, "/gm/campaigns/")
    assert anonymous.get("/gm/campaigns/").status_code == 200


def test_a_wrong_password_or_a_players_account_is_refused_with_what_to_do(gm: User) -> None:
    anonymous = Client()
    wrong = anonymous.post("/gm/sign-in/", {"username": "host", "password": "nope"})
    assert wrong.context["form"].non_field_errors() == [
        "the username or the password is wrong (both are case-sensitive)"
    ]
    player = GMFactory.create(is_staff=False, username="pat")
    player.set_password(PASSWORD)
    player.save()
    refused = anonymous.post("/gm/sign-in/", {"username": "pat", "password": PASSWORD})
    assert refused.context["form"].non_field_errors() == [
        "this account does not run games here: ask the service's admin to mark it as a GM's "
        "(staff) account"
    ]
    assert anonymous.get("/gm/").status_code == 302


def test_signing_out_leads_back_to_the_sign_in_page(client: Client) -> None:
    response = client.post("/gm/sign-out/")
    assert (response.status_code, response["Location"]) == (302, "/gm/sign-in/")
    assert client.get("/gm/")["Location"] == "/gm/sign-in/?next=/gm/"


def test_the_admin_keeps_its_own_sign_in(gm: User) -> None:
    assert Client().get("/admin/login/").status_code == 200


# --- Resolve now, confirmed -------------------------------------------------------------------


def nmr(game: Game, position: int) -> str:
    state = CHOICE.state_from_json(Game.objects.get(pk=game.pk).state)
    return CHOICE.canonical(state, position, CHOICE.default(state, position))


@pytest.fixture
def three(gm: User, now: datetime) -> Game:
    """A Choice game: ann has ordered; bob has missed a turn already and falls into civil
    disorder at the second; cy's autopilot plays. Two extensions per seat."""
    game = started_game(
        now=now,
        gm=gm,
        early_processing=False,
        missed=postal.MissedTurns(extensions=2, civil_disorder_after=2),
    )
    postal.accept_order(
        game_id=game.pk, position=0, text=nmr(game, 0), source=Order.Source.WEB, now=now
    )
    Seat.objects.filter(game=game, name="bob").update(nmr_count=1, missed_in_row=1)
    Seat.objects.filter(game=game, name="cy").update(autopilot="best-score", extensions_used=2)
    return game


def costs_of(page: str) -> list[str]:
    items = re.findall(r'<li id="cost-\d+">(.*?)</li>', page, re.S)
    return [html.unescape(re.sub(r"<[^>]+>", "", item)) for item in items]


def test_resolve_now_asks_to_confirm_naming_who_has_not_ordered_and_the_cost(
    client: Client, three: Game
) -> None:
    response = client.post(
        reverse("gm:act", args=[three.pk, "resolve"]), {"step": "1", "reason": "all in"}
    )
    confirm = reverse("gm:resolve", args=[three.pk])
    assert response["Location"] == f"{confirm}?step=1&reason=all+in"
    assert Game.objects.get(pk=three.pk).step_number == 1
    page = client.get(response["Location"]).content.decode()
    assert "<h1>Resolve step 1 now?</h1>" in page
    assert "<strong>Not ordered yet:</strong> bob, cy." in page
    assert costs_of(page) == [
        f"bob: the NMR default is played for them: {nmr(three, 1)}; it is their 2nd missed "
        "turn (2 in a row); the seat falls into civil disorder (2 missed turns in a row); you "
        "are told by email; they have 2 automatic extensions left, which only a deadline "
        "spends: resolving now does not wait.",
        "cy: their autopilot (Best score: the Wurfels and pairs that score most this postal "
        "turn) plays for them; it is their 1st missed turn (1 in a row).",
    ]
    assert re.search(r'<input type="hidden" name="confirmed" value="yes"', page)
    assert 'value="all in"' in page


def test_only_the_confirmed_post_resolves_and_only_once(client: Client, three: Game) -> None:
    url = reverse("gm:act", args=[three.pk, "resolve"])
    confirmed = {"step": "1", "confirmed": "yes", "reason": ""}
    first = client.post(url, confirmed, follow=True)
    assert shown(first) == ["The step is resolved; missing orders got their NMR defaults."]
    second = client.post(url, confirmed, follow=True)
    assert shown(second) == ["nothing was done: step 1 was already resolved; step 2 is open"]
    assert list(Step.objects.filter(game=three).values_list("number", "status")) == [
        (1, "done"),
        (2, "open"),
    ]
    bob = Seat.objects.get(game=three, name="bob")
    assert (bob.nmr_count, bob.missed_in_row, bob.civil_disorder_at is not None) == (2, 2, True)


def test_the_confirmation_of_a_game_not_running_sends_back_to_its_page(
    client: Client, gm: User
) -> None:
    game = new_game("choice", players=2, gm=gm)
    response = client.get(reverse("gm:resolve", args=[game.pk]), follow=True)
    assert shown(response) == ["Nothing to resolve: the game is recruiting."]
