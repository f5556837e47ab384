from __future__ import annotations

import re
import uuid
from datetime import datetime
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from games import postal
from games.community import players
from games.models import DiceRoll, Event, Game, Order, Seat, SeatLink, Step
from games.postal import access
from moderator.mail.models import OutboundEmail
from tests.factories import SEED, GameFactory, GMFactory, started_game

pytestmark = pytest.mark.django_db

MODELS: dict[str, Any] = {
    "games/game": Game,
    "games/seat": Seat,
    "games/seatlink": SeatLink,
    "games/step": Step,
    "games/order": Order,
    "games/diceroll": DiceRoll,
    "games/event": Event,
    "mail/outboundemail": OutboundEmail,
}


def game_of(record: Any) -> Game:
    if isinstance(record, Game):
        return record
    if isinstance(record, SeatLink):
        return record.seat.game
    if isinstance(record, Order):
        return record.step.game
    game: Game = record.game
    return game


def played(gm: User, now: datetime, title: str) -> Game:
    """A started game with an order, an NMR step and an email of its own."""
    game = started_game(now=now, players=2, gm=gm, title=title)
    postal.resolve_now(game.pk, now=now)
    game.refresh_from_db()
    OutboundEmail.objects.create(
        dedupe_key=f"test:{uuid.uuid4()}", kind="test", to="ann@example.org", subject=title,
        text="hello", game=game,
    )  # fmt: skip
    return game


@pytest.fixture
def games(now: datetime) -> dict[str, Any]:
    mine, theirs = GMFactory.create(is_staff=True), GMFactory.create(is_staff=True)
    return {
        "gm": mine,
        "mine": played(mine, now, "Mine"),
        "theirs": played(theirs, now, "Theirs"),
    }


def logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def changelist(client: Client, model: str) -> list[Any]:
    response = client.get(reverse(f"admin:{model.replace('/', '_')}_changelist"))
    assert response.status_code == 200
    return list(response.context["cl"].queryset)


@pytest.mark.parametrize("model", sorted(MODELS))
def test_a_staff_gm_sees_only_the_records_of_their_own_games(
    games: dict[str, Any], model: str
) -> None:
    rows = changelist(logged_in(games["gm"]), model)
    assert rows
    assert {game_of(row).title for row in rows} == {"Mine"}
    assert len(rows) == MODELS[model].objects.filter(pk__in=[r.pk for r in rows]).count()


@pytest.mark.parametrize("model", sorted(MODELS))
def test_a_superuser_sees_every_record(games: dict[str, Any], model: str) -> None:
    superuser = GMFactory.create(is_staff=True, is_superuser=True)
    rows = changelist(logged_in(superuser), model)
    assert len(rows) == MODELS[model].objects.count()
    assert {game_of(row).title for row in rows if game_of(row)} == {"Mine", "Theirs"}


def test_emails_of_no_game_are_for_superusers_only(games: dict[str, Any]) -> None:
    OutboundEmail.objects.create(
        dedupe_key="alert:1", kind="alert", to="ops@example.org", subject="S", text="T"
    )
    gm_rows = changelist(logged_in(games["gm"]), "mail/outboundemail")
    assert "alert:1" not in [row.dedupe_key for row in gm_rows]
    superuser = logged_in(GMFactory.create(is_staff=True, is_superuser=True))
    assert "alert:1" in [row.dedupe_key for row in changelist(superuser, "mail/outboundemail")]


@pytest.mark.parametrize("model", sorted(MODELS))
def test_another_gms_change_page_is_404_and_ones_own_is_200(
    games: dict[str, Any], model: str
) -> None:
    client = logged_in(games["gm"])
    rows = [row for row in MODELS[model].objects.all() if game_of(row) is not None]
    theirs = next(row for row in rows if game_of(row).title == "Theirs")
    mine = next(row for row in rows if game_of(row).title == "Mine")
    name = f"admin:{model.replace('/', '_')}_change"
    assert client.get(reverse(name, args=[theirs.pk])).status_code == 404
    assert client.get(reverse(name, args=[999_999_999])).status_code == 404
    assert client.get(reverse(name, args=[mine.pk])).status_code == 200


@pytest.mark.parametrize("model", sorted(MODELS))
def test_nobody_adds_or_deletes_records_in_the_admin(games: dict[str, Any], model: str) -> None:
    superuser = logged_in(GMFactory.create(is_staff=True, is_superuser=True))
    mine = MODELS[model].objects.order_by("pk").first()
    admin_name = model.replace("/", "_")
    count = MODELS[model].objects.count()
    assert superuser.get(reverse(f"admin:{admin_name}_add")).status_code == 403
    assert superuser.post(reverse(f"admin:{admin_name}_delete", args=[mine.pk])).status_code == 403
    assert MODELS[model].objects.count() == count


def test_a_staff_user_without_games_sees_the_panel_but_nothing_in_it(games: dict[str, Any]) -> None:
    client = logged_in(GMFactory.create(is_staff=True))
    assert client.get(reverse("admin:index")).status_code == 200
    for model in MODELS:
        assert changelist(client, model) == []


def test_a_user_who_is_not_staff_gets_the_login_page(games: dict[str, Any]) -> None:
    client = logged_in(GMFactory.create(is_staff=False))
    response = client.get(reverse("admin:games_game_changelist"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def test_the_game_change_page_writes_nothing(games: dict[str, Any]) -> None:
    client = logged_in(games["gm"])
    game = games["mine"]
    url = reverse("admin:games_game_change", args=[game.pk])
    before = Game.objects.values().get(pk=game.pk)
    response = client.post(url, {"title": "Renamed", "status": "finished", "state": "{}"})
    assert response.status_code == 302
    assert Game.objects.values().get(pk=game.pk) == before
    page = client.get(url)
    assert page.context["adminform"].form.fields == {}
    assert b'name="_save"' not in page.content


def test_the_seed_is_sealed_in_the_admin_until_the_game_is_finished(now: datetime) -> None:
    gm = GMFactory.create(is_staff=True)
    game = started_game(now=now, players=1, gm=gm, options={"rolls_per_turn": 4, "round_cap": 10})
    client = logged_in(gm)
    url = reverse("admin:games_game_change", args=[game.pk])
    page = client.get(url)
    assert b"sealed until the game is finished" in page.content
    assert SEED.hex().encode() not in page.content
    for _ in range(3):
        postal.resolve_now(game.pk, now=now)
    assert Game.objects.get(pk=game.pk).status == Game.Status.FINISHED
    assert SEED.hex().encode() in client.get(url).content


def test_admin_actions_call_postal_on_own_games_only(games: dict[str, Any]) -> None:
    client = logged_in(games["gm"])
    mine, theirs = games["mine"], games["theirs"]
    response = client.post(
        reverse("admin:games_game_changelist"),
        {"action": "pause", "_selected_action": [mine.pk, theirs.pk]},
        follow=True,
    )
    assert [str(m) for m in response.context["messages"]] == ["Mine: paused"]
    assert Game.objects.get(pk=mine.pk).status == "paused"
    assert Game.objects.get(pk=theirs.pk).status == "running"
    response = client.post(
        reverse("admin:games_game_changelist"),
        {"action": "pause", "_selected_action": [mine.pk]},
        follow=True,
    )
    assert [str(m) for m in response.context["messages"]] == [
        "Mine: only a running game can be paused; this one is paused"
    ]
    client.post(
        reverse("admin:games_game_changelist"), {"action": "resume", "_selected_action": [mine.pk]}
    )
    assert Game.objects.get(pk=mine.pk).status == "running"


@pytest.mark.parametrize(
    "selected",
    ["abc", "", "1.5", "\u0663", "9" * 30, "1\x00", " 1"],
    ids=["letters", "empty", "decimal", "arabic", "huge", "nul", "space"],
)
@pytest.mark.parametrize(
    ("changelist", "action"),
    [
        ("admin:games_game_changelist", "pause"),
        ("admin:games_seat_changelist", "delete_selected"),
        ("admin:mail_outboundemail_changelist", "delete_selected"),
    ],
)
def test_an_action_on_a_selection_that_names_no_row_changes_nothing_and_says_so(
    games: dict[str, Any], selected: str, changelist: str, action: str
) -> None:
    client = logged_in(GMFactory.create(is_staff=True, is_superuser=True))
    mine = games["mine"]
    url = reverse(changelist)
    kept = (list(Game.objects.values_list("pk", "status")), Seat.objects.count())
    response = client.post(
        url, {"action": action, "index": "0", "_selected_action": [mine.pk, selected]}
    )
    assert (response.status_code, response["Location"]) == (302, url)
    page = client.get(url)
    assert [str(m) for m in page.context["messages"]] == [
        f"The selection holds {selected[:40]!r}, which is no row of this list: nothing was "
        "done. Tick the rows in the list, then choose the action again."
    ]
    assert (list(Game.objects.values_list("pk", "status")), Seat.objects.count()) == kept


def test_changelist_filters_and_searches(games: dict[str, Any], now: datetime) -> None:
    superuser = logged_in(GMFactory.create(is_staff=True, is_superuser=True))
    GameFactory.create(seats=2, gm=games["gm"], title="Draft one")

    def titles(query: str) -> list[str]:
        url = f"{reverse('admin:games_game_changelist')}?{query}"
        return sorted(game.title for game in superuser.get(url).context["cl"].queryset)

    assert titles("status__exact=recruiting") == ["Draft one"]
    assert titles("engine__exact=choice") == ["Draft one", "Mine", "Theirs"]
    assert titles("q=theirs") == ["Theirs"]
    assert titles("q=ann@example.org") == ["Draft one", "Mine", "Theirs"]

    def rows(model: str, query: str) -> list[Any]:
        url = f"{reverse(f'admin:{model}_changelist')}?{query}"
        return list(superuser.get(url).context["cl"].queryset)

    assert {seat.email for seat in rows("games_seat", "q=bob")} == {"bob@example.org"}
    assert {order.source for order in rows("games_order", "source__exact=default")} == {"default"}
    assert rows("games_order", "source__exact=web") == []
    key = OutboundEmail.objects.get(game=games["mine"], kind="test").dedupe_key
    assert [email.dedupe_key for email in rows("mail_outboundemail", f"q={key}")] == [key]
    pending = rows("mail_outboundemail", "state__exact=pending")
    assert len(pending) == OutboundEmail.objects.filter(state="pending").count()
    assert {e.kind for e in rows("mail_outboundemail", "kind__exact=test")} == {"test"}


def test_the_game_filter_lists_only_own_games(games: dict[str, Any]) -> None:
    client = logged_in(games["gm"])
    response = client.get(reverse("admin:games_seat_changelist"))
    assert b"Theirs" not in response.content
    assert b"Mine" in response.content


def test_the_outbox_shows_a_gm_no_working_link_or_address_of_a_player(
    now: datetime, settings: Any
) -> None:
    """A player's report in the admin's outbox: its magic link, reply address and stop
    links read [hidden] there, so the GM cannot open the seat or order as its player; the
    link the page shows opens nothing, where the one emailed opens the seat."""
    settings.INBOUND_ADDRESS = "orders@in.example.org"
    settings.SITE_URL = "https://dice.example.org"
    gm = GMFactory.create(is_staff=True)
    game = started_game(now=now, players=2, gm=gm)
    seat = game.seats.get(position=0)
    email = OutboundEmail.objects.get(game=game, to=seat.email)
    (token,) = set(re.findall(r"https://dice\.example\.org/p/([A-Za-z0-9_-]+)/", email.text))
    reply = access.reply_address(seat)
    stop = access.stop_token(seat, "reports")
    secrets = [token, str(reply), stop, access.seat_token(seat, "reply")]
    stored = f"{email.text}{email.html}{email.reply_to}{email.headers}"
    assert all(secret in stored for secret in secrets)

    page = logged_in(gm).get(reverse("admin:mail_outboundemail_change", args=[email.pk]))
    html = page.content.decode()
    assert [secret for secret in secrets if secret in html] == []
    assert "https://dice.example.org/p/[hidden]/" in html
    assert f"orders+{game.pk}-0-[hidden]@in.example.org" in html

    shown = re.findall(r"https://dice\.example\.org(/p/[^/\s\"<]+/)", html)
    assert set(shown) == {"/p/[hidden]/"}
    player = Client()
    assert player.post(shown[0]).status_code == 404
    assert access.seat_for_reply([f"orders+{game.pk}-0-[hidden]@in.example.org"]) is None
    # The link as emailed opens the seat: only the page hides it.
    assert player.post(f"/p/{token}/")["Location"] == f"/play/{game.pk}/0/"


def test_a_sign_in_email_shows_an_admin_neither_its_link_nor_its_code(now: datetime) -> None:
    asked = players.ask("ann@example.org", browser="browser-1", now=now)
    email = OutboundEmail.objects.get(kind="signin")
    assert asked.token in email.text and asked.code in email.text
    superuser = logged_in(GMFactory.create(is_staff=True, is_superuser=True))
    html = superuser.get(reverse("admin:mail_outboundemail_change", args=[email.pk]))
    page = html.content.decode()
    assert (asked.token in page, asked.code in page) == (False, False)
    assert page.count("[hidden]") >= 2
