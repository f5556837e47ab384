"""Names, titles and messages that others read keep the direction their writer typed: an
embedding, override or isolate (U+202A-U+202E, U+2066-U+2069) is refused with the same
words wherever it is typed, and nothing is written (moderator/bidi.py). The press's own
refusal is in test_press.py."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.contrib.auth.models import User
from django.test import Client

from campaigns import postal as campaigns
from campaigns.models import Campaign
from games import postal
from games.community import signups
from games.models import Game, Player, Seat, SignUp
from moderator import bidi
from tests.factories import GMFactory
from tests.games.community.test_signups import open_game
from tests.games.postal.test_gm import CHOICE_FORM, GOOD
from tests.games.web.test_player_pages import signed_in

pytestmark = pytest.mark.django_db

CONTROLS = {
    "\u202a": "LEFT-TO-RIGHT EMBEDDING",
    "\u202b": "RIGHT-TO-LEFT EMBEDDING",
    "\u202c": "POP DIRECTIONAL FORMATTING",
    "\u202d": "LEFT-TO-RIGHT OVERRIDE",
    "\u202e": "RIGHT-TO-LEFT OVERRIDE",
    "\u2066": "LEFT-TO-RIGHT ISOLATE",
    "\u2067": "RIGHT-TO-LEFT ISOLATE",
    "\u2068": "FIRST STRONG ISOLATE",
    "\u2069": "POP DIRECTIONAL ISOLATE",
}
RLO = "\u202e"


def refused(what: str, char: str = RLO) -> str:
    return (
        f"{what} holds an invisible character that changes the direction of the text "
        f"(U+{ord(char):04X} {CONTROLS[char]}): delete it and write it again"
    )


@pytest.mark.parametrize("char", sorted(CONTROLS))
def test_each_override_and_isolate_is_refused_and_the_marks_are_not(char: str) -> None:
    assert bidi.refusal(f"ann{char}gnp.exe", "the name") == refused("the name", char)
    assert bidi.refusal("\u05e9\u05e8\u05d4\u200f 2\u200e \u061c", "the name") is None


@pytest.fixture
def gm() -> User:
    return GMFactory.create(is_staff=True)


@pytest.fixture
def client(gm: User) -> Client:
    client = Client()
    client.force_login(gm)
    return client


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("title", f"Tuesday {RLO}yadsendeW", refused("the title")),
        ("players", f"ann <ann@example.org>\nb{RLO}ob <bob@example.org>", refused("line 2")),
    ],
)
def test_the_gm_new_game_form_refuses_a_title_or_name_turned_around(
    client: Client, field: str, value: str, message: str
) -> None:
    response = client.post(CHOICE_FORM, GOOD | {field: value})
    assert response.status_code == 200
    assert response.context["form"].errors == {field: [message]}
    assert (Game.objects.count(), Seat.objects.count()) == (0, 0)


def test_a_game_created_otherwise_refuses_a_title_or_name_turned_around(gm: User) -> None:
    """The domain refuses it too: an imported record or any caller of create_game."""
    with pytest.raises(postal.PostalError) as error:
        postal.create_game(
            gm=gm,
            engine_key="choice",
            title="Choice",
            players=[postal.Player(f"ann{RLO}", "ann@example.org")],
        )
    assert error.value.message == refused("the name of player 1")
    assert Game.objects.count() == 0


def test_a_sign_up_refuses_a_name_turned_around(now: datetime) -> None:
    game = open_game()
    client = Client()
    response = client.post(
        f"/open/{game.public_id}/", {"name": f"ann{RLO}gnp.exe", "email": "ann@example.org"}
    )
    assert response.status_code == 400
    assert response.context["form"].errors == {"name": [refused("the name")]}
    with pytest.raises(postal.PostalError) as error:
        signups.sign_up(game.pk, name="ann\u2067x", email="ann@example.org", now=now)
    assert error.value.message == refused("the name", "\u2067")
    assert SignUp.objects.count() == 0


def test_a_players_settings_refuse_a_name_turned_around(now: datetime) -> None:
    client = signed_in("ann@example.org")
    before = list(Player.objects.values_list("name", flat=True))
    chosen = {"name": f"Ann{RLO}", "time_zone": "", "reports": "owed", "digest": "1", "hour": "7"}
    response = client.post("/me/settings/", chosen)
    assert response.status_code == 400
    assert response.context["form"].errors == {"name": [refused("the name")]}
    assert list(Player.objects.values_list("name", flat=True)) == before


def test_a_campaign_refuses_a_name_turned_around(gm: User, now: datetime) -> None:
    for name, members, what in [
        (f"Thursday{RLO}", ["ann"], "the name"),
        ("Thursday", [f"ann{RLO}"], "a member's name"),
    ]:
        with pytest.raises(campaigns.CampaignError) as error:
            campaigns.create_campaign(
                host=gm,
                kind=Campaign.Kind.FIRST_PLAYER,
                name=name,
                members=[postal.Player(m, f"m{i}@example.org") for i, m in enumerate(members)],
                options={"order_mode": "free"},
                now=now,
            )
        assert error.value.message == refused(what)
    assert Campaign.objects.count() == 0
