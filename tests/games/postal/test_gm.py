from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine
from django.contrib.auth.models import User
from django.core import mail
from django.db import connection
from django.template.loader import render_to_string
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks

from games import postal
from games.engines.base import OrderError
from games.engines.choice.rules import ChoiceEngine
from games.engines.liars_dice.rules import LiarsDiceEngine
from games.models import DiceRoll, Event, Game, GameTemplate, Order, Seat, SeatLink, Step
from games.notify import reports
from games.records import spectators
from games.web.gm.actions import ACTIONS
from moderator.mail.models import OutboundEmail
from tests.factories import SEED, GameFactory, GMFactory, choice_game, started_game

pytestmark = pytest.mark.django_db

CHOICE = ChoiceEngine()


@pytest.fixture(autouse=True)
def clock(now: datetime) -> Iterator[None]:
    """The views read the wall clock; it stands still at ``now``."""
    with time_machine.travel(now, tick=False):
        yield


def staff_user(**kwargs: Any) -> User:
    return GMFactory.create(is_staff=True, **kwargs)


@pytest.fixture
def gm() -> User:
    return staff_user()


@pytest.fixture
def client(gm: User) -> Client:
    client = Client()
    client.force_login(gm)
    return client


def nmr_text(game: Game, position: int) -> str:
    state = CHOICE.state_from_json(game.state)
    return CHOICE.canonical(state, position, CHOICE.default(state, position))


def snapshot(game: Game) -> tuple[Any, ...]:
    """Everything a GM action could change."""
    game.refresh_from_db()
    return (
        game.status,
        game.state,
        game.step_number,
        game.dice_drawn,
        game.needs_gm,
        game.paused_at,
        list(Seat.objects.order_by("id").values_list("name", "email", "link_version", "nmr_count")),
        list(Step.objects.order_by("id").values_list("status", "deadline")),
        Order.objects.count(),
        DiceRoll.objects.count(),
        Event.objects.count(),
        OutboundEmail.objects.count(),
        SeatLink.objects.count(),
    )


# The actions whose forms name the step the page shows.
SHOWN_STEP_ACTIONS = {"resolve", "extend", "order", "replace", "set-order"}


def act(client: Client, game: Game, action: str, **data: Any) -> list[str]:
    """POST one action; it redirects back to the game page. The messages shown there. An
    action on the current step names the step the page shows, as the page's form does."""
    if action in SHOWN_STEP_ACTIONS:
        data.setdefault("step", str(Game.objects.get(pk=game.pk).step_number))
    page = reverse("gm:game", args=[game.pk])
    if action == "resolve":
        data.setdefault("confirmed", "yes")  # as the confirmation page posts it
    response = client.post(reverse("gm:act", args=[game.pk, action]), data, follow=True)
    assert response.redirect_chain == [(page, 302)]
    return [str(message) for message in response.context["messages"]]


# --- access -------------------------------------------------------------------------------


def test_anonymous_users_are_sent_to_the_gms_sign_in_page(gm: User, now: datetime) -> None:
    game = GameFactory.create(seats=2, gm=gm)
    anonymous = Client()
    for url in (
        reverse("gm:dashboard"),
        reverse("gm:create"),
        reverse("gm:game", args=[game.pk]),
    ):
        response = anonymous.get(url)
        assert (response.status_code, response["Location"]) == (
            302,
            f"{reverse('gm:sign_in')}?next={url}",
        )
    before = snapshot(game)
    response = anonymous.post(reverse("gm:act", args=[game.pk, "start"]))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("gm:sign_in"))
    assert snapshot(game) == before


def test_a_user_who_is_not_staff_is_sent_to_the_login(now: datetime) -> None:
    player = Client()
    player.force_login(GMFactory.create(is_staff=False))
    response = player.get(reverse("gm:dashboard"))
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('gm:sign_in')}?next={reverse('gm:dashboard')}"


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_another_gm_gets_404_for_every_action_and_nothing_changes(
    gm: User, now: datetime, action: str
) -> None:
    game = started_game(now=now, gm=gm)
    intruder = Client()
    intruder.force_login(staff_user())
    before = snapshot(game)
    data = {"seat": "0", "text": nmr_text(game, 0), "name": "zed", "email": "zed@example.org"}
    data["deadline"] = "2026-12-01T12:00"
    response = intruder.post(reverse("gm:act", args=[game.pk, action]), data)
    assert response.status_code == 404
    assert snapshot(game) == before


def test_another_gm_gets_404_for_the_game_page(gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm)
    intruder = Client()
    intruder.force_login(staff_user())
    assert intruder.get(reverse("gm:game", args=[game.pk])).status_code == 404
    assert intruder.get(reverse("gm:game", args=[game.pk + 1000])).status_code == 404


def test_a_superuser_may_open_any_game(gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm)
    admin = Client()
    admin.force_login(staff_user(is_superuser=True))
    assert admin.get(reverse("gm:game", args=[game.pk])).status_code == 200


def test_actions_answer_post_only_and_unknown_actions_are_404(
    client: Client, gm: User, now: datetime
) -> None:
    game = started_game(now=now, gm=gm)
    before = snapshot(game)
    assert client.get(reverse("gm:act", args=[game.pk, "pause"])).status_code == 405
    assert client.post(reverse("gm:act", args=[game.pk, "explode"])).status_code == 404
    assert snapshot(game) == before


def test_actions_need_the_csrf_token(gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm)
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(gm)
    before = snapshot(game)
    assert strict.post(reverse("gm:act", args=[game.pk, "pause"])).status_code == 403
    assert snapshot(game) == before


# --- the dashboard ------------------------------------------------------------------------


def test_dashboard_shows_step_deadline_who_owes_nmrs_and_needs_gm(
    client: Client, gm: User, now: datetime
) -> None:
    game = started_game(now=now, gm=gm, title="Mine", time_zone="Europe/Berlin")
    postal.resolve_now(game.pk, now=now)  # nobody ordered: one NMR each
    game.refresh_from_db()
    postal.accept_order(game_id=game.pk, position=0, text=nmr_text(game, 0), source="web", now=now)
    Seat.objects.filter(game=game, position=2).update(nmr_count=3)
    Game.objects.filter(pk=game.pk).update(needs_gm="step 2 failed 5 times: boom")
    GameFactory.create(seats=2, gm=gm, title="Waiting")
    started_game(now=now, gm=GMFactory.create(is_staff=True), title="Not mine")

    response = client.get(reverse("gm:dashboard"))

    rows = response.context["rows"]
    assert [row.game.title for row in rows] == ["Waiting", "Mine"]
    waiting, mine = rows
    assert (waiting.step, waiting.deadline, waiting.owing, waiting.nmr) == (None, "", [], [])
    assert mine.step.number == 2
    assert mine.deadline == "Wed 25 Nov 2026 19:00 CET (18:00 UTC)"
    assert mine.owing == ["bob", "cy"]
    assert [(seat.name, seat.nmr_count) for seat in mine.nmr] == [("ann", 1), ("bob", 1), ("cy", 3)]
    assert mine.game.needs_gm == "step 2 failed 5 times: boom"
    assert b"Not mine" not in response.content
    assert b"Wed 25 Nov 2026 19:00 CET (18:00 UTC)" in response.content


def test_dashboard_queries_do_not_grow_with_games_or_seats(
    client: Client, gm: User, now: datetime
) -> None:
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(reverse("gm:dashboard")).status_code == 200
        return len(captured)

    for _ in range(2):
        started_game(now=now, gm=gm, players=2)
    few = queries()
    for _ in range(4):
        game = started_game(now=now, gm=gm, players=5)
        postal.accept_order(
            game_id=game.pk, position=1, text=nmr_text(game, 1), source="web", now=now
        )
    assert len(client.get(reverse("gm:dashboard")).context["rows"]) == 6
    assert queries() == few


# --- creating a game ----------------------------------------------------------------------

GOOD = {
    "title": "Autumn Choice",
    "option_rolls_per_turn": "1",
    "option_end_threshold": "8",
    "option_tiebreak": "shared",
    "option_round_cap": "200",
    "time_zone": "Europe/Berlin",
    "schedule": "Mondays and Thursdays at 20:00",
    "players": "ann <ann@example.org>\r\nbob, bob@example.org\r\n\r\n",
}
CHOICE_FORM = "/gm/new/choice/standard/"


def test_create_game_makes_the_game_and_its_seats_then_shows_its_page(
    client: Client, gm: User
) -> None:
    response = client.post(CHOICE_FORM, GOOD, follow=True)
    game = Game.objects.get()
    assert response.redirect_chain == [(reverse("gm:game", args=[game.pk]), 302)]
    assert [str(m) for m in response.context["messages"]] == [
        "Autumn Choice is created; invite the players next."
    ]
    assert (game.gm, game.engine, game.title, game.status) == (
        gm,
        "choice",
        "Autumn Choice",
        "recruiting",
    )
    assert (game.options, game.time_zone, game.early_processing) == (
        {
            "variant": "standard",
            "rolls_per_turn": 1,
            "end_threshold": 8,
            "tiebreak": "shared",
            "round_cap": 200,
        },
        "Europe/Berlin",
        False,
    )
    assert game.schedule == {"kind": "weekly", "days": ["mon", "thu"], "time": "20:00"}
    assert list(game.seats.values_list("position", "name", "email")) == [
        (0, "ann", "ann@example.org"),
        (1, "bob", "bob@example.org"),
    ]


def test_the_new_game_page_offers_every_game_and_profile_by_name(client: Client) -> None:
    response = client.get(reverse("gm:create"))
    assert response.status_code == 200
    assert [(way.profile.title, way.url) for way in response.context["ways"]] == [
        ("Choice", "/gm/new/choice/standard/"),
        ("Choice: Suppenkasper", "/gm/new/choice/suppenkasper/"),
        ("Dice Survivor", "/gm/new/dice-survivor/"),
        ("Drop-Shy", "/gm/new/drop-shy/"),
        ("Liar's Dice: classic", "/gm/new/liars-dice/classic/"),
        ("Liar's Dice: Death Match", "/gm/new/liars-dice/genius_dm/"),
        ("Liar's Dice: team", "/gm/new/liars-dice/genius_team/"),
        ("The First Player", "/gm/new/first-player/"),
    ]
    for way in response.context["ways"]:
        assert client.get(way.url).status_code == 200


@pytest.mark.parametrize("url", ["/gm/new/chess/", "/gm/new/choice/chess/", "/gm/new/choice/x/y/"])
def test_a_game_or_profile_that_does_not_exist_is_404(client: Client, url: str) -> None:
    assert client.get(url).status_code == 404


def test_each_option_is_a_labelled_field_with_its_profiles_default(client: Client) -> None:
    form = client.get("/gm/new/liars-dice/genius_dm/").context["form"]
    fields = [(f.name, f.label, f.initial) for f in form.option_boxes()]
    assert fields == [
        ("option_dice_per_player", "Dice per player", 4),
        ("option_max_dice", "Most dice", 10),
        ("option_reserve", "Round reserve", True),
        ("option_cheat", "Anomaly: Cheat", False),
        ("option_double_face", "Anomaly: Double-Face", False),
        ("option_fresh_start", "Anomaly: Fresh Start", False),
        ("option_mulligan", "Anomaly: Mulligan", False),
        ("option_oracle", "Anomaly: Oracle", False),
        ("option_revelation", "Anomaly: Revelation", False),
        ("option_summation", "Anomaly: Summation", False),
    ]
    page = client.get("/gm/new/choice/suppenkasper/").content.decode()
    assert '<input type="number" name="option_end_threshold" value="7"' in page
    assert page.count('name="option_cards"') == 6
    assert (
        "One player per line, name and email address: <code>Ann &lt;ann@example.org&gt;</code>"
        " or <code>Ann, ann@example.org</code>."
    ) in page


def test_a_death_match_with_anomalies_is_created_from_the_form(client: Client) -> None:
    fields = {
        "title": "Duel",
        "option_dice_per_player": "3",
        "option_max_dice": "6",
        "option_reserve": "on",
        "option_oracle": "on",
        "option_revelation": "on",
        "time_zone": "UTC",
        "schedule": "every 24 hours",
        "early_processing": "on",
        "players": "ann <ann@example.org>\nbob <bob@example.org>",
    }
    assert client.post("/gm/new/liars-dice/genius_dm/", fields).status_code == 302
    assert Game.objects.get().options == {
        "profile": "genius_dm",
        "dice_per_player": 3,
        "max_dice": 6,
        "reserve": True,
        "cheat": False,
        "double_face": False,
        "fresh_start": False,
        "mulligan": False,
        "oracle": True,
        "revelation": True,
        "summation": False,
    }


def test_suppenkasper_cards_and_first_player_lists_are_read_from_their_fields(
    client: Client,
) -> None:
    fields = GOOD | {
        "option_end_threshold": "7",
        "option_cards": ["sk", "half"],
        "option_free_ride_to_plate": "on",
    }
    assert client.post("/gm/new/choice/suppenkasper/", fields).status_code == 302
    game = Game.objects.get()
    assert (game.options["variant"], game.options["cards"], game.options["free_ride_to_plate"]) == (
        "suppenkasper",
        ["half", "sk"],
        True,
    )
    night = {
        "title": "Thursday night",
        "option_order_mode": "free",
        "option_rounds": "2",
        "option_dice": "ann 5\r\nbob 0\r\n",
        "option_reserve": "3",
        "option_absent": "cy, dee",
        "option_campaign": "on",
        "time_zone": "UTC",
        "schedule": "every 1 hour",
        "players": "ann <ann@example.org>\nbob <bob@example.org>",
    }
    assert client.post("/gm/new/first-player/", night).status_code == 302
    assert Game.objects.get(title="Thursday night").options == {
        "order_mode": "free",
        "rounds": 2,
        "tokens": False,
        "reserve_to_second_last": False,
        "dice": {"ann": 5, "bob": 0},
        "reserve": 3,
        "absent": ["cy", "dee"],
        "campaign": True,
    }


@pytest.mark.parametrize(
    ("url", "fields", "errors"),
    [
        (
            CHOICE_FORM,
            {"option_round_cap": "5"},
            {"option_round_cap": ["Ensure this value is greater than or equal to 10."]},
        ),
        (
            CHOICE_FORM,
            {"option_rolls_per_turn": "7"},
            {
                "option_rolls_per_turn": [
                    "Select a valid choice. 7 is not one of the available choices."
                ]
            },
        ),
        (
            "/gm/new/dice-survivor/",
            {
                "option_turn_cap": "7",
                "players": "ann, ann@example.org\nbob, bob@example.org\ncy, cy@example.org",
            },
            {"option_turn_cap": ["“Turn cap” must be 0 (off) or a whole number 20-5000, not 7"]},
        ),
        (
            "/gm/new/liars-dice/genius_dm/",
            {"option_dice_per_player": "5", "option_max_dice": "4"},
            {"option_dice_per_player": ["“Dice per player” (5) must not be above “Most dice” (4)"]},
        ),
        (
            "/gm/new/first-player/",
            {"option_dice": "ann four"},
            {"option_dice": ["line 1: write a name and a number, e.g. “Ann 4”"]},
        ),
        (
            "/gm/new/first-player/",
            {"option_dice": "ann 31"},
            {"option_dice": ["“Dice at the start” of ann must be 0-30, not 31"]},
        ),
        (
            "/gm/new/drop-shy/",
            {"option_previous_winner": "ann", "option_previous_loser": "ANN"},
            {
                "option_previous_winner": [
                    "“Previous game's winner” and “Previous game's loser” are both 'ann'"
                ]
            },
        ),
    ],
)
def test_a_bad_option_is_shown_on_its_field_in_words_and_writes_nothing(
    client: Client, url: str, fields: dict[str, str], errors: dict[str, list[str]]
) -> None:
    base = {k: v for k, v in GOOD.items() if not k.startswith("option_")}
    defaults = {f.html_name: f.value() for f in client.get(url).context["form"].option_boxes()}
    sent = base | {k: v for k, v in defaults.items() if v is not False and v != ""} | fields
    response = client.post(url, sent)
    assert response.status_code == 200
    assert response.context["form"].errors == errors
    assert (Game.objects.count(), Seat.objects.count()) == (0, 0)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        (
            "time_zone",
            "Mars/Olympus",
            "'Mars/Olympus' is not a time zone; use a name such as Europe/Berlin",
        ),
        (
            "schedule",
            "whenever",
            "'whenever' is not a schedule; write e.g. 'every 48 hours', 'daily at 18:00' "
            "or 'mondays and thursdays at 20:00'",
        ),
        (
            "schedule",
            "daily at 25:00",
            "'25:00' is not a time of day; write it as HH:MM, e.g. 18:00",
        ),
        ("title", "two\nlines", "the title must be a single line"),
        ("players", "ann", "line 1: write 'name <email>' or 'name, email', not 'ann'"),
        (
            "players",
            "ann <ann@example.org>\nbob <bob@example.org, eve@example.org>",
            "line 2: 'bob@example.org, eve@example.org' is not one email address",
        ),
        (
            "players",
            "ann, ann@example.org, eve@example.org",
            "line 1: 'ann@example.org, eve@example.org' is not one email address",
        ),
        (
            "players",
            "ann <ann@example.org>\nANN <ann2@example.org>",
            "line 2: two players are called 'ANN'",
        ),
        ("players", "an\x07n <ann@example.org>", "line 1: control characters are not allowed"),
        (
            "players",
            "ann <ann@example.org>\rbob",
            "line 2: write 'name <email>' or 'name, email', not 'bob'",
        ),
        ("players", " <ann@example.org>", "line 1: the name is missing"),
        ("players", f"{'a' * 61} <ann@example.org>", "line 1: a name has at most 60 characters"),
        (
            "players",
            "\n \n",
            "name the players: Choice takes 1 to 20 players; or open the game for sign-up",
        ),
    ],
)
def test_create_game_shows_the_message_next_to_the_field_and_writes_nothing(
    client: Client, field: str, value: str, message: str
) -> None:
    response = client.post(CHOICE_FORM, GOOD | {field: value})
    assert response.status_code == 200
    assert response.context["form"].errors == {field: [message]}
    assert (Game.objects.count(), Seat.objects.count()) == (0, 0)


def test_too_many_players_are_refused_on_their_field(client: Client) -> None:
    players = "\n".join(f"p{n} <p{n}@example.org>" for n in range(21))
    response = client.post(CHOICE_FORM, GOOD | {"players": players})
    assert response.status_code == 200
    assert response.context["form"].errors == {"players": ["Choice takes 1 to 20 players, not 21"]}
    assert b"Choice takes 1 to 20 players, not 21" in response.content
    assert Game.objects.count() == 0


# --- templates ----------------------------------------------------------------------------


def test_a_games_settings_saved_as_a_template_fill_in_the_next_new_game(
    client: Client, gm: User
) -> None:
    options = {"variant": "suppenkasper", "cards": ["sk"], "round_cap": 50}
    game = GameFactory.create(
        seats=2, gm=gm, options=options, time_zone="Europe/Paris", early_processing=False
    )
    assert act(client, game, "save-template", name="  Soup   nights ") == [
        "Saved as the template 'Soup nights': pick it on the new-game page."
    ]
    template = GameTemplate.objects.get()
    assert (template.gm, template.engine, template.options, template.time_zone) == (
        gm,
        "choice",
        options,
        "Europe/Paris",
    )
    assert act(client, game, "save-template", name="soup NIGHTS") == [
        "you already have a template called 'Soup nights'"
    ]
    assert act(client, game, "save-template", name="   ") == [
        "Template name: This field is required."
    ]
    assert GameTemplate.objects.count() == 1

    chooser = client.get(reverse("gm:create"))
    assert [(t.name, title, rhythm) for t, title, _, rhythm in chooser.context["templates"]] == [
        ("Soup nights", "Choice: Suppenkasper", "every 48 hours"),
    ]
    form = client.get(reverse("gm:create_from", args=[template.pk])).context["form"]
    assert {f.name: f.initial for f in form.option_boxes()} == {
        "option_rolls_per_turn": "2",
        "option_end_threshold": 7,
        "option_cards": ["sk"],
        "option_free_ride_to_plate": False,
        "option_tiebreak": "shared",
        "option_round_cap": 50,
    }
    assert (form["schedule"].initial, form["time_zone"].initial) == (
        "every 48 hours",
        "Europe/Paris",
    )
    assert form["early_processing"].initial is False


def test_a_template_is_its_gms_alone_and_can_be_deleted(client: Client, gm: User) -> None:
    game = GameFactory.create(seats=2, gm=gm)
    act(client, game, "save-template", name="Mine")
    template = GameTemplate.objects.get()
    other = Client()
    other.force_login(staff_user())
    assert other.get(reverse("gm:create_from", args=[template.pk])).status_code == 404
    assert other.post(reverse("gm:delete_template", args=[template.pk])).status_code == 404
    assert other.get(reverse("gm:create")).context["templates"] == []
    response = client.post(reverse("gm:delete_template", args=[template.pk]), follow=True)
    assert [str(m) for m in response.context["messages"]] == ["The template 'Mine' is deleted."]
    assert GameTemplate.objects.count() == 0


# --- the game page ------------------------------------------------------------------------


def test_game_page_shows_seats_step_owing_every_seats_hidden_view_and_the_log(
    client: Client, gm: User, now: datetime
) -> None:
    game = started_game(now=now, gm=gm, time_zone="Europe/Berlin")
    order = nmr_text(game, 0)
    postal.accept_order(game_id=game.pk, position=0, text=order, source="web", now=now)
    game.refresh_from_db()

    response = client.get(reverse("gm:game", args=[game.pk]))

    context = response.context
    assert [seat.name for seat in context["seats"]] == ["ann", "bob", "cy"]
    assert context["status"].step.number == 1
    assert context["status"].owing == ["bob", "cy"]
    state = CHOICE.state_from_json(game.state)
    views = [(view.seat.name, view.raw) for view in context["hidden"]]
    assert [name for name, _ in views] == ["ann", "bob", "cy"]
    assert [json.loads(text) for _, text in views] == [CHOICE.view(state, p) for p in range(3)]
    assert json.loads(views[0][1])["you"]["order"] == order
    assert context["public"].seat is None
    assert json.loads(context["public"].raw) == CHOICE.view(state, None)
    log = [(text, audience) for _, text, audience in context["events"]]
    assert log == [
        (row.text, None if row.audience is None else ["ann"])
        for row in Event.objects.filter(game=game).order_by("id")
    ]
    assert log[-1] == (Event.objects.filter(game=game).latest("id").text, ["ann"])
    assert context["extend_form"]["deadline"].value() == "2026-11-25T19:00"
    assert context["seed"] is None
    assert SEED.hex().encode() not in response.content


def test_the_gms_log_tells_each_cup_in_an_onlookers_words_never_your(
    client: Client, gm: User, now: datetime
) -> None:
    game = started_game("liars-dice", now=now, gm=gm)
    state = LiarsDiceEngine().state_from_json(game.state)
    hands = [" ".join(map(str, hand)) for hand in state.hands]

    response = client.get(reverse("gm:game", args=[game.pk]))

    told = [(text, seen) for _, text, seen in response.context["events"] if seen is not None]
    assert told == [
        (f"round 1: {name}'s dice are {hand}", [name])
        for name, hand in zip(["ann", "bob", "cy"], hands, strict=True)
    ]
    log = section(response.content, "log")
    assert f"<li>step 1 (to bob): round 1: bob&#x27;s dice are {hands[1]}</li>" in log
    assert re.findall(r"\byour?\b", log) == []


def test_game_page_reveals_the_seed_once_the_game_is_finished(
    client: Client, gm: User, now: datetime
) -> None:
    game = started_game(now=now, gm=gm, players=1, options={"rolls_per_turn": 4, "round_cap": 10})
    for _ in range(3):
        postal.resolve_now(game.pk, now=now)
    game.refresh_from_db()
    assert game.status == Game.Status.FINISHED
    response = client.get(reverse("gm:game", args=[game.pk]))
    assert response.context["seed"] == SEED.hex()
    assert response.context["status"].step is None


def section(content: bytes, element_id: str) -> str:
    """The inner HTML of the page's ``<section id="element_id">``."""
    found = re.search(rf'<section id="{element_id}"[^>]*>(.*?)</section>', content.decode(), re.S)
    assert found is not None, f"no section {element_id}"
    return found[1]


def text(markup: str) -> str:
    """What a reader sees of ``markup``: its text, whitespace collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


def table_rows(markup: str, table_id: str) -> list[list[str]]:
    found = re.search(rf'<table id="{table_id}"[^>]*>(.*?)</table>', markup, re.S)
    assert found is not None, f"no table {table_id}"
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", found[1], re.S)
    return [
        [text(cell) for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)] for row in rows
    ]


def private_block(markup: str) -> str:
    """The private block of a seat's section (its ids are the seat's own: ``seat-0-private``)."""
    found = re.search(r'<div id="seat-\d+-private".*?</div>', markup, re.S)
    assert found is not None, "no private block"
    return text(found[0])


def details_json(markup: str) -> Any:
    """The JSON inside the one collapsed ``<details>`` of ``markup``."""
    details = re.findall(r"<details>(.*?)</details>", markup, re.S)
    assert len(details) == 1
    found = re.fullmatch(r"\s*<summary>[^<]*</summary>\s*<pre>(.*)</pre>\s*", details[0], re.S)
    assert found is not None
    return json.loads(html.unescape(found[1]))


def outside_details(markup: str) -> str:
    return re.sub(r"<details>.*?</details>", "", markup, flags=re.S)


def board_rows(view: dict[str, Any]) -> list[list[str]]:
    """The sum-track table of a Choice view, as the board template lays it out."""

    def stored(player: dict[str, Any]) -> str:
        # Each Wurfel drawn as a die (its text: the value, then a space), times its count.
        return " ".join(f"{s['value']} \u00d7{s['count']}" for s in player["stored"]) or "none"

    def score(player: dict[str, Any]) -> str:
        if player["active"]:
            return str(player["running_score"])
        return f"{player['score']} (final, round {player['ended_round']})"

    header = ["Player", *[str(total) for total in range(2, 13)], "Wurfels", "Score"]
    return [header] + [
        [p["name"], *[str(c) for c in p["counts"].values()], stored(p), score(p)]
        for p in view["players"]
    ]


def test_game_page_shows_each_seats_private_block_and_board_as_the_player_page_does(
    client: Client, gm: User, now: datetime
) -> None:
    game = started_game(now=now, gm=gm)
    postal.resolve_now(game.pk, now=now)  # the NMR defaults fill the sheets
    game.refresh_from_db()
    order = nmr_text(game, 0)
    postal.accept_order(game_id=game.pk, position=0, text=order, source="web", now=now)
    game.refresh_from_db()
    state = CHOICE.state_from_json(game.state)
    step = game.steps.get(number=game.step_number)
    assert any(sum(p["counts"].values()) for p in CHOICE.view(state, None)["players"])

    content = client.get(reverse("gm:game", args=[game.pk])).content

    sealed = " ".join(order.split())
    # In the GM's words: whose block it is and who sees it, never "you".
    assert [private_block(section(content, f"seat-{p}")) for p in range(3)] == [
        "ann's private part (only ann and the GM see it) "
        f"The sealed order, the one that counts now: {sealed}",
        "bob's private part (only bob and the GM see it) No order sent yet.",
        "cy's private part (only cy and the GM see it) No order sent yet.",
    ]
    for seat in game.seats.order_by("position"):
        markup = section(content, f"seat-{seat.position}")
        view = CHOICE.view(state, seat.position)
        assert text(markup).startswith(f"Seat {seat.position + 1}: {seat.name} ")
        assert table_rows(markup, f"seat-{seat.position}-board") == board_rows(view)
        # Each roll drawn as dice, whose names read as its numbers.
        assert table_rows(markup, f"seat-{seat.position}-rolls") == [
            [f"Round {r['round']}", " ".join(map(str, r["roll"]))] for r in view["rounds"]
        ]
        rolls = re.search(rf'<table id="seat-{seat.position}-rolls".*?</table>', markup, re.S)
        assert rolls is not None
        assert re.findall(r'<svg class="die" [^>]*aria-label="(\d)"', rolls[0]) == [
            str(n) for r in view["rounds"] for n in r["roll"]
        ]
        # The blocks the player's page renders, through the engine's templates, in the GM's
        # words, with ids of the seat's own (the page shows every seat's).
        context = reports.seat_context(game, seat, CHOICE, state, step, reader="gm")
        for part in ("boards", "private"):
            templates = reports.engine_templates("choice", part, "html")
            blocks = render_to_string(templates, context)
            assert spectators.own_ids(blocks, f"seat-{seat.position}-") in markup
    public = section(content, "public-view")
    assert table_rows(public, "board") == board_rows(CHOICE.view(state, None))
    assert "Only you see this" not in public
    assert sealed not in text(public)


def test_game_page_names_whose_cup_the_gm_reads_and_never_says_only_you(
    client: Client, gm: User, now: datetime
) -> None:
    game = started_game("liars-dice", now=now, gm=gm, players=["ann", "bob"])
    hands = LiarsDiceEngine().state_from_json(game.state).hands

    content = client.get(reverse("gm:game", args=[game.pk])).content

    cups = [" ".join(map(str, hand)) for hand in hands]
    assert [private_block(section(content, f"seat-{p}")) for p in range(2)] == [
        f"ann's cup (private: only ann and the GM see it) Cup: {cups[0]}",
        f"bob's cup (private: only bob and the GM see it) Cup: {cups[1]}",
    ]
    seats = " ".join(text(section(content, f"seat-{p}")) for p in range(2))
    assert ("Only you see this" in seats, "Your cup" in seats, "your dice" in seats) == (
        False,
        False,
        False,
    )


def test_game_page_keeps_the_raw_views_inside_collapsed_details(
    client: Client, gm: User, now: datetime
) -> None:
    game = started_game(now=now, gm=gm)
    state = CHOICE.state_from_json(game.state)

    content = client.get(reverse("gm:game", args=[game.pk])).content

    assert b"<details open" not in content
    markups = [section(content, "public-view")] + [section(content, f"seat-{p}") for p in range(3)]
    assert [details_json(markup) for markup in markups] == [
        CHOICE.view(state, None),
        *[CHOICE.view(state, p) for p in range(3)],
    ]
    for markup in markups:
        assert "&quot;" not in outside_details(markup)
        assert "<pre>" not in outside_details(markup)


def test_game_page_before_the_start_shows_no_views(client: Client, gm: User) -> None:
    game = GameFactory.create(seats=2, gm=gm)
    response = client.get(reverse("gm:game", args=[game.pk]))
    assert (response.context["public"], response.context["hidden"]) == (None, [])
    assert b"What each seat sees" not in response.content


def test_game_page_of_a_finished_game_shows_the_final_boards(
    client: Client, gm: User, now: datetime
) -> None:
    game = started_game(now=now, gm=gm, players=2, options={"rolls_per_turn": 4, "round_cap": 10})
    for _ in range(3):
        postal.resolve_now(game.pk, now=now)
    game.refresh_from_db()
    assert game.status == Game.Status.FINISHED
    state = CHOICE.state_from_json(game.state)
    content = client.get(reverse("gm:game", args=[game.pk])).content
    for position in range(2):
        markup = section(content, f"seat-{position}")
        assert table_rows(markup, f"seat-{position}-board") == board_rows(
            CHOICE.view(state, position)
        )
        assert details_json(markup) == CHOICE.view(state, position)


def test_needs_the_gm_is_shown_first_with_the_clear_action(
    client: Client, gm: User, now: datetime
) -> None:
    game = started_game(now=now, gm=gm)
    page = reverse("gm:game", args=[game.pk])
    assert b'id="needs-gm"' not in client.get(page).content
    Game.objects.filter(pk=game.pk).update(needs_gm="step 1 failed 5 times: <boom>")

    content = client.get(page).content.decode()

    top = content[content.index("<h1>") : content.index("<h2>")]
    box = re.search(r'<div id="needs-gm" role="alert".*?</div>', top, re.S)
    assert box is not None
    assert f'action="{reverse("gm:act", args=[game.pk, "clear"])}"' in box[0]
    assert text(box[0]) == (
        "This game needs the GM. The sweep leaves it alone until you clear this: "
        "step 1 failed 5 times: <boom> "
        "Clear “needs the GM” the sweep then tries the open step again"
    )


# --- outgoing mail ------------------------------------------------------------------------


def email_of(game: Game | None, key: str, **fields: Any) -> OutboundEmail:
    defaults = {"kind": "report", "to": "ann@example.org", "subject": f"Subject {key}"}
    return OutboundEmail.objects.create(
        dedupe_key=key, game=game, text="Hello", **(defaults | fields)
    )


def email_row(content: bytes, email: OutboundEmail) -> str:
    found = re.search(rf'<tr id="email-{email.pk}"[^>]*>(.*?)</tr>', content.decode(), re.S)
    assert found is not None, f"no row for email {email.pk}"
    return found[1]


def send_again(client: Client, game: Game, email: OutboundEmail) -> Any:
    return client.post(reverse("gm:send_again", args=[game.pk, email.pk]), follow=True)


def test_game_page_lists_the_games_emails_newest_first(
    client: Client, gm: User, now: datetime
) -> None:
    game = started_game(now=now, gm=gm)
    other = started_game(now=now, gm=gm)
    reports_sent = list(OutboundEmail.objects.filter(game=game).order_by("id"))
    failed = email_of(game, "f", state="failed", attempts=1, last_error="SMTP 550: no such user")
    unknown = email_of(game, "u", state="unknown", attempts=1, to="bob@example.org")
    sent = email_of(game, "s", state="sent", attempts=2)
    email_of(other, "other", state="failed")
    email_of(None, "none", state="failed")

    response = client.get(reverse("gm:game", args=[game.pk]))

    assert response.context["emails"] == [sent, unknown, failed, *reversed(reports_sent)]
    assert response.context["older_emails"] is False
    content = response.content
    button = f'action="{reverse("gm:send_again", args=[game.pk, failed.pk])}"'
    assert button in email_row(content, failed)
    assert text(email_row(content, failed)) == (
        "23 Nov 18:00 report ann@example.org Subject f failed 1 SMTP 550: no such user Send again"
    )
    assert text(email_row(content, unknown)) == (
        "23 Nov 18:00 report bob@example.org Subject u unknown Handed to the mail provider but "
        "never confirmed: it may or may not have been delivered. Sending it again may give the "
        "player a second copy. 1 Send again"
    )
    assert text(email_row(content, sent)) == "23 Nov 18:00 report ann@example.org Subject s sent 2"
    assert "send-again" not in email_row(content, sent)
    assert b"Subject other" not in content
    assert b"Subject none" not in content


def test_game_page_lists_the_newest_50_emails_only(client: Client, gm: User, now: datetime) -> None:
    game = GameFactory.create(seats=2, gm=gm)
    OutboundEmail.objects.bulk_create(
        OutboundEmail(dedupe_key=f"k{n}", kind="invite", game=game, to="ann@example.org")
        for n in range(52)
    )
    newest = list(OutboundEmail.objects.filter(game=game).order_by("-id")[:50])
    response = client.get(reverse("gm:game", args=[game.pk]))
    assert response.context["emails"] == newest
    assert response.context["older_emails"] is True
    assert f"?game__id__exact={game.pk}".encode() in response.content


def test_send_again_queues_a_failed_email_of_the_game(
    client: Client,
    gm: User,
    now: datetime,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    game = started_game(now=now, gm=gm)
    failed = email_of(game, "f", state="failed", attempts=5, last_error="boom")
    mail.outbox.clear()

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = send_again(client, game, failed)

    page = reverse("gm:game", args=[game.pk])
    assert response.redirect_chain == [(f"{page}#emails", 302)]
    assert [str(m) for m in response.context["messages"]] == [
        "The report email to ann@example.org is queued to be sent again."
    ]
    assert len(callbacks) == 1
    # The eager task sent it at once.
    failed.refresh_from_db()
    assert (failed.state, failed.attempts) == ("sent", 1)
    assert [(m.to, m.subject) for m in mail.outbox] == [(["ann@example.org"], "Subject f")]


def test_send_again_works_for_an_unknown_email(client: Client, gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm)
    unknown = email_of(game, "u", state="unknown", attempts=1)
    response = send_again(client, game, unknown)
    assert [str(m) for m in response.context["messages"]] == [
        "The report email to ann@example.org is queued to be sent again."
    ]
    unknown.refresh_from_db()
    assert (unknown.state, unknown.attempts) == ("pending", 0)


def test_one_button_sends_every_unknown_email_of_the_game_again(
    client: Client,
    gm: User,
    now: datetime,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    game = started_game(now=now, gm=gm)
    ann = email_of(game, "u1", state="unknown", attempts=1)
    bob = email_of(game, "u2", state="unknown", attempts=1, to="bob@example.org")
    failed = email_of(game, "f", state="failed", attempts=5)
    elsewhere = email_of(started_game(now=now, gm=gm), "u3", state="unknown", attempts=1)
    page = reverse("gm:game", args=[game.pk])
    action = reverse("gm:send_unknown_again", args=[game.pk])
    form = re.search(
        r'<form method="post" action="([^"]+)" id="send-unknown-again">(.*?)</form>',
        client.get(page).content.decode(),
        re.S,
    )
    assert form is not None and form[1] == action
    assert text(form[2]) == (
        "2 emails of the game were handed to the mail server and never confirmed: each may "
        "or may not have arrived. Send the unknown emails again"
    )
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(action, follow=True)
    assert response.redirect_chain == [(f"{page}#emails", 302)]
    assert [str(m) for m in response.context["messages"]] == [
        "2 emails whose delivery was unknown are queued to be sent again."
    ]
    states = OutboundEmail.objects.filter(pk__in=[ann.pk, bob.pk, failed.pk, elsewhere.pk])
    assert dict(states.values_list("pk", "state")) == {
        ann.pk: "sent",
        bob.pk: "sent",
        failed.pk: "failed",
        elsewhere.pk: "unknown",
    }
    assert sorted(m.to[0] for m in mail.outbox) == ["ann@example.org", "bob@example.org"]
    assert b'id="send-unknown-again"' not in client.get(page).content
    again = client.post(action, follow=True)
    assert [str(m) for m in again.context["messages"]] == [
        "No email of this game has an unknown delivery now: nothing was sent again."
    ]
    intruder = Client()
    intruder.force_login(staff_user())
    assert intruder.post(action).status_code == 404


def test_send_again_answers_404_for_an_email_of_another_game_or_gm(
    client: Client, gm: User, now: datetime
) -> None:
    game = started_game(now=now, gm=gm)
    mine_elsewhere = email_of(started_game(now=now, gm=gm), "mine", state="failed")
    their_game = started_game(now=now, gm=staff_user())
    theirs = email_of(their_game, "theirs", state="failed")
    nobodys = email_of(None, "none", state="failed")
    failed = email_of(game, "f", state="failed")
    intruder = Client()
    intruder.force_login(staff_user())

    before = list(OutboundEmail.objects.order_by("id").values_list("state", "attempts"))
    for email in (mine_elsewhere, theirs, nobodys):
        assert send_again(client, game, email).status_code == 404
    assert send_again(client, their_game, theirs).status_code == 404
    assert send_again(intruder, game, failed).status_code == 404
    assert intruder.get(reverse("gm:send_again", args=[game.pk, failed.pk])).status_code == 405
    assert client.get(reverse("gm:send_again", args=[game.pk, failed.pk])).status_code == 405
    assert list(OutboundEmail.objects.order_by("id").values_list("state", "attempts")) == before


def test_send_again_refuses_an_email_that_was_sent(
    client: Client,
    gm: User,
    now: datetime,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    game = started_game(now=now, gm=gm)
    sent = email_of(game, "s", state="sent", attempts=1, sent_at=now)
    before = OutboundEmail.objects.filter(pk=sent.pk).values().get()

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = send_again(client, game, sent)

    assert [str(m) for m in response.context["messages"]] == [
        "The report email to ann@example.org is sent: only a failed email, or one whose "
        "delivery is unknown, can be sent again."
    ]
    assert callbacks == []
    assert OutboundEmail.objects.filter(pk=sent.pk).values().get() == before


def test_send_again_needs_the_csrf_token(gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm)
    failed = email_of(game, "f", state="failed")
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(gm)
    assert strict.post(reverse("gm:send_again", args=[game.pk, failed.pk])).status_code == 403
    failed.refresh_from_db()
    assert failed.state == "failed"


# --- the game page's queries --------------------------------------------------------------


@pytest.mark.parametrize("finished", [False, True])
def test_game_page_queries_do_not_grow_with_seats(
    client: Client, gm: User, now: datetime, finished: bool
) -> None:
    def game_with(players: int) -> Game:
        options = {"rolls_per_turn": 4, "round_cap": 10} if finished else {}
        game = started_game(now=now, gm=gm, players=players, options=options)
        for _ in range(3 if finished else 1):
            postal.resolve_now(game.pk, now=now)
        game.refresh_from_db()
        assert (game.status == Game.Status.FINISHED) is finished
        if not finished:
            postal.accept_order(
                game_id=game.pk, position=1, text=nmr_text(game, 1), source="web", now=now
            )
        email_of(game, f"failed-{game.pk}", state="failed")
        return game

    def queries(game: Game) -> int:
        with CaptureQueriesContext(connection) as captured:
            response = client.get(reverse("gm:game", args=[game.pk]))
        assert response.status_code == 200
        assert len(response.context["hidden"]) == game.seats.count()
        return len(captured)

    small, large = game_with(3), game_with(8)
    queries(small)  # warm up whatever is cached per process
    assert queries(large) == queries(small)


# --- actions ------------------------------------------------------------------------------


def test_invite_emails_every_seat(client: Client, gm: User) -> None:
    game = choice_game(3, gm=gm)
    assert act(client, game, "invite") == ["Invitations are on their way to 3 players."]
    assert list(OutboundEmail.objects.values_list("kind", flat=True)) == ["invite"] * 3
    assert act(client, choice_game(1, gm=gm), "invite") == [
        "Invitations are on their way to 1 player."
    ]


def test_start_opens_step_one_and_a_second_start_changes_nothing(client: Client, gm: User) -> None:
    game = choice_game(3, gm=gm)
    assert act(client, game, "start") == [
        "The game has started; the first reports are on their way."
    ]
    game.refresh_from_db()
    assert (game.status, game.step_number) == ("running", 1)
    before = snapshot(game)
    assert act(client, game, "start") == [
        "the game is running; only a game not yet started can start"
    ]
    assert act(client, game, "invite") == ["invitations go out before the game starts"]
    assert snapshot(game) == before


def test_extend_moves_the_deadline_typed_in_the_games_zone(
    client: Client, gm: User, now: datetime
) -> None:
    game = started_game(now=now, gm=gm, time_zone="Europe/Berlin")
    messages = act(client, game, "extend", deadline="2026-11-27T20:00")
    assert messages == [
        "The deadline of step 1 is now Fri 27 Nov 2026 20:00 CET (19:00 UTC); the players who "
        "owe an order, and those who get every report, are emailed."
    ]
    assert game.steps.get().deadline == datetime(2026, 11, 27, 19, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("deadline", "message"),
    [
        ("2026-11-23T18:30", "the new deadline must be in the future"),  # 17:30 UTC, past
        ("tomorrow", "deadline: Enter a valid date/time."),
        ("", "deadline: This field is required."),
    ],
)
def test_extend_with_a_bad_deadline_changes_nothing(
    client: Client, gm: User, now: datetime, deadline: str, message: str
) -> None:
    game = started_game(now=now, gm=gm, time_zone="Europe/Berlin")
    before = snapshot(game)
    assert act(client, game, "extend", deadline=deadline) == [message]
    assert snapshot(game) == before


def test_extend_without_an_open_step_changes_nothing(client: Client, gm: User) -> None:
    game = GameFactory.create(seats=2, gm=gm)
    before = snapshot(game)
    assert act(client, game, "extend", deadline="2026-12-01T12:00") == ["the game has no open step"]
    assert snapshot(game) == before


def test_pause_and_resume(client: Client, gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm)
    assert act(client, game, "pause") == ["The game is paused."]
    game.refresh_from_db()
    assert (game.status, game.paused_at) == ("paused", now)
    before = snapshot(game)
    assert act(client, game, "pause") == ["only a running game can be paused; this one is paused"]
    assert act(client, game, "resolve") == ["nothing was resolved: the game is paused"]
    assert snapshot(game) == before
    assert act(client, game, "resume") == [
        "The game runs again; the deadline moved on by the time it was paused."
    ]
    game.refresh_from_db()
    assert game.status == "running"
    before = snapshot(game)
    assert act(client, game, "resume") == ["only a paused game can be resumed; this one is running"]
    assert snapshot(game) == before


def test_resolve_now_plays_the_nmr_defaults_and_opens_the_next_step(
    client: Client, gm: User, now: datetime
) -> None:
    game = started_game(now=now, gm=gm)
    assert act(client, game, "resolve") == [
        "The step is resolved; missing orders got their NMR defaults."
    ]
    assert list(game.steps.values_list("number", "status", "closed_by")) == [
        (1, "done", "gm"),
        (2, "open", ""),
    ]
    assert list(game.seats.values_list("nmr_count", flat=True)) == [1, 1, 1]


def test_the_gm_enters_a_postal_order(client: Client, gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm)
    text = nmr_text(game, 1)
    assert act(client, game, "order", seat="1", text=text.upper()) == [
        f"Order of bob accepted: {text}"
    ]
    order = Order.objects.get()
    assert (order.seat.name, order.source, order.text, order.canonical) == (
        "bob",
        "gm",
        text.upper(),
        text,
    )


def test_an_order_the_engine_rejects_shows_its_message_and_changes_nothing(
    client: Client, gm: User, now: datetime
) -> None:
    game = started_game(now=now, gm=gm)
    state = CHOICE.state_from_json(game.state)
    with pytest.raises(OrderError) as caught:
        CHOICE.parse(state, 0, "W1 1+1")
    before = snapshot(game)
    assert act(client, game, "order", seat="0", text="W1 1+1") == [caught.value.message]
    assert act(client, game, "order", seat="7", text=nmr_text(game, 0)) == [
        "seat: Select a valid choice. 7 is not one of the available choices."
    ]
    assert act(client, game, "order", seat="0", text="  \n") == ["Order: the order is empty"]
    postal.pause(game.pk, now=now)
    before = snapshot(game)
    assert act(client, game, "order", seat="0", text=nmr_text(game, 0)) == [
        "the GM has paused the game, so nothing was recorded; orders are taken again when it "
        "resumes"
    ]
    assert snapshot(game) == before


def test_replace_a_player(client: Client, gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm)
    Seat.objects.filter(game=game, position=1).update(nmr_count=2)
    assert act(client, game, "replace", seat="1", name="bea", email="bea@example.org") == [
        "Seat 2 is now played by bea <bea@example.org>, welcomed with the rules, the current "
        "report and a link; bob is told."
    ]
    seat = game.seats.get(position=1)
    assert (seat.name, seat.email, seat.link_version, seat.nmr_count) == (
        "bea",
        "bea@example.org",
        1,
        0,
    )
    assert list(
        OutboundEmail.objects.filter(to__in=["bea@example.org", "bob@example.org"])
        .filter(kind__in=["welcome", "replaced"])
        .order_by("to")
        .values_list("to", "kind")
    ) == [("bea@example.org", "welcome"), ("bob@example.org", "replaced")]
    assert act(client, game, "replace", seat="1", name="Bea", email="BEA@example.org") == [
        "Seat 2 is now Bea <BEA@example.org>, sent a new link."
    ]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"name": "ann", "email": "x@example.org"}, "another player is already called 'ann'"),
        (
            {"name": "bea", "email": "bea@example.org, eve@example.org"},
            "'bea@example.org, eve@example.org' is not one email address",
        ),
        ({"name": "b\nea", "email": "bea@example.org"}, "the name must be a single line"),
        ({"name": "", "email": "bea@example.org"}, "New name: This field is required."),
        (
            {"seat": "9", "name": "bea", "email": "bea@example.org"},
            "seat: Select a valid choice. 9 is not one of the available choices.",
        ),
    ],
)
def test_a_bad_replacement_changes_nothing(
    client: Client, gm: User, now: datetime, data: dict[str, str], message: str
) -> None:
    game = started_game(now=now, gm=gm)
    before = snapshot(game)
    assert act(client, game, "replace", **({"seat": "1"} | data)) == [message]
    assert snapshot(game) == before


def test_rotate_a_seats_link(client: Client, gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm)
    assert act(client, game, "rotate", seat="2") == [
        "cy has a new link; the old links no longer work."
    ]
    assert game.seats.get(position=2).link_version == 1
    assert OutboundEmail.objects.filter(kind="link", to="cy@example.org").count() == 1
    before = snapshot(game)
    assert act(client, game, "rotate", seat="x") == [
        "seat: Select a valid choice. x is not one of the available choices."
    ]
    assert snapshot(game) == before


def test_resend_a_seats_report(client: Client, gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm)
    emails = OutboundEmail.objects.count()
    assert act(client, game, "resend", seat="0") == ["The current report is sent to ann again."]
    assert OutboundEmail.objects.count() == emails + 1
    assert OutboundEmail.objects.order_by("id").values_list("to", flat=True).last() == (
        "ann@example.org"
    )


def test_resend_before_the_start_changes_nothing(client: Client, gm: User) -> None:
    game = GameFactory.create(seats=2, gm=gm)
    before = snapshot(game)
    assert act(client, game, "resend", seat="0") == [
        "the game has not started; there is no report yet"
    ]
    assert snapshot(game) == before


def test_clear_needs_gm(client: Client, gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm)
    Game.objects.filter(pk=game.pk).update(needs_gm="step 1 failed 5 times: boom")
    Step.objects.filter(game=game).update(failures=5)
    assert act(client, game, "clear") == ["Cleared: the sweep tries the open step again."]
    game.refresh_from_db()
    assert (game.needs_gm, game.steps.get().failures) == ("", 0)


def test_the_deadline_input_is_read_in_the_zone_even_across_a_clock_change(
    client: Client, gm: User, now: datetime
) -> None:
    game = started_game(now=now, gm=gm, time_zone="America/New_York")
    act(client, game, "extend", deadline="2027-03-14T12:00")  # EDT from 14 March 2027
    assert game.steps.get().deadline == datetime(2027, 3, 14, 16, 0, tzinfo=UTC)
    assert game.steps.get().deadline - now > timedelta(days=100)


MISSED = {
    "extensions": "2",
    "extension_hours": "12",
    "absence_policy": "autopilot",
    "absence_cap_days": "3",
    "civil_disorder_after": "4",
    "offer_seats": "on",
}


def test_the_gm_sets_what_missed_turns_and_absences_do(client: Client, now: datetime) -> None:
    form = client.get(CHOICE_FORM).content.decode()
    assert '<fieldset id="missed-turns">' in form
    client.post(CHOICE_FORM, GOOD | MISSED)
    game = Game.objects.get()
    assert postal.MissedTurns.of(game) == postal.MissedTurns(
        extensions=2,
        extension_hours=12,
        absence_policy="autopilot",
        absence_cap_hours=72,
        civil_disorder_after=4,
        offer_seats=True,
    )
    # The next game plays by the same rules.
    finished = postal.start_game(game.pk, now=now, seed=SEED)
    Game.objects.filter(pk=finished.pk).update(status=Game.Status.FINISHED)
    again = postal.play_again(game.pk, now=now)
    assert postal.MissedTurns.of(again) == postal.MissedTurns.of(game)


def test_a_game_created_without_them_takes_the_defaults(client: Client) -> None:
    client.post(CHOICE_FORM, GOOD)
    assert postal.MissedTurns.of(Game.objects.get()) == postal.MissedTurns()


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("extensions", "11", "Ensure this value is less than or equal to 10."),
        ("extension_hours", "0", "Ensure this value is greater than or equal to 1."),
        (
            "absence_policy",
            "sleep",
            "Select a valid choice. sleep is not one of the available choices.",
        ),
        ("absence_cap_days", "-1", "Ensure this value is greater than or equal to 0."),
        ("civil_disorder_after", "x", "Enter a whole number."),
    ],
)
def test_a_wrong_missed_turn_setting_is_said_and_creates_nothing(
    client: Client, field: str, value: str, error: str
) -> None:
    response = client.post(CHOICE_FORM, GOOD | MISSED | {field: value})
    assert response.status_code == 200
    assert response.context["form"].errors[field] == [error]
    assert Game.objects.count() == 0


def test_postal_refuses_missed_turn_settings_out_of_range() -> None:
    with pytest.raises(postal.PostalError, match=r"^extensions must be from 0 to 10, not 12$"):
        postal.MissedTurns(extensions=12).check()
    with pytest.raises(postal.PostalError, match=r"^no such absence policy: 'nap'$"):
        postal.MissedTurns(absence_policy="nap").check()
