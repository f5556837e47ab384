"""The host's campaign pages: create, add members, open a night by seating members at
tables, run it, read the tracker as a page, CSV and chart; leagues; other hosts see
nothing."""

from __future__ import annotations

import csv
import io
import re
from datetime import datetime
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from time_machine import TimeMachineFixture

from campaigns import postal
from campaigns.models import Campaign, Member, Night
from campaigns.web.forms import NightForm
from games import postal as games_postal
from games.models import Game
from tests.factories import GMFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def frozen(time_machine: TimeMachineFixture, now: datetime) -> None:
    time_machine.move_to(now, tick=False)


@pytest.fixture
def host() -> User:
    return GMFactory.create(is_staff=True)


@pytest.fixture
def client_of(host: User) -> Client:
    client = Client()
    client.force_login(host)
    return client


def messages_of(response: Any) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def create(client: Client, url: str = "/gm/campaigns/new/first-player/", **data: Any) -> Any:
    """The new-campaign form as the host fills it in: its defaults, then ``data``."""
    shown = client.get(url).context["form"]
    defaults = {f.html_name: f.value() for f in shown if f.value() not in (None, False)}
    form = defaults | {
        "name": "Thursday group",
        "members": "ann <ann@example.org>\nbob, bob@example.org\ncy <cy@example.org>",
        "option_order_mode": "free",
        **data,
    }
    return client.post(url, form, follow=True)


def finish(game: Game, now: datetime) -> None:
    for _ in range(100):
        game.refresh_from_db()
        if game.status == Game.Status.FINISHED:
            return
        games_postal.resolve_now(game.pk, now=now)


def test_a_host_creates_a_campaign_and_reads_its_members(client_of: Client, host: User) -> None:
    response = create(client_of)
    campaign = Campaign.objects.get()
    assert (campaign.host, campaign.kind) == (host, "first-player")
    assert messages_of(response) == ["Thursday group is created."]
    page = response.content.decode()
    assert "<tr><td>ann</td><td>ann@example.org</td><td>3</td></tr>" in page
    assert "<tr><td>Reserve</td><td></td><td>0</td></tr>" in page


def test_a_first_player_campaign_keeps_its_options_and_shows_them_in_words(
    client_of: Client,
) -> None:
    response = create(client_of, option_rounds="2", option_tokens="on", schedule="daily at 21:00")
    campaign = Campaign.objects.get()
    assert campaign.options == {
        "order_mode": "free",
        "rounds": 2,
        "tokens": True,
        "reserve_to_second_last": False,
        "schedule": {"kind": "daily", "time": "21:00"},
        "time_zone": "UTC",
    }
    assert response.context["rules"] == (
        "The First Player",
        [
            ("The real game's order", "by the full ranking"),
            ("Real games tonight", "2"),
            ("+1 tokens", "yes"),
            ("Reserve die to the second-to-last", "no"),
            ("Deadlines", "daily at 21:00"),
            ("Time zone", "UTC"),
        ],
    )
    assert "{&#x27;" not in response.content.decode()


def test_the_campaigns_page_offers_a_first_player_campaign_and_a_league_of_each_game(
    client_of: Client,
) -> None:
    page = client_of.get("/gm/campaigns/")
    assert [(profile.title, url) for profile, url in page.context["leagues"]] == [
        ("Choice", "/gm/campaigns/new/league/choice/standard/"),
        ("Choice: Suppenkasper", "/gm/campaigns/new/league/choice/suppenkasper/"),
        ("Dice Survivor", "/gm/campaigns/new/league/dice-survivor/"),
        ("Drop-Shy", "/gm/campaigns/new/league/drop-shy/"),
        ("Liar's Dice: classic", "/gm/campaigns/new/league/liars-dice/classic/"),
        ("Liar's Dice: Death Match", "/gm/campaigns/new/league/liars-dice/genius_dm/"),
        ("Liar's Dice: team", "/gm/campaigns/new/league/liars-dice/genius_team/"),
    ]
    for _, url in page.context["leagues"]:
        assert client_of.get(url).status_code == 200
    assert client_of.get("/gm/campaigns/new/league/choice/").context["title"] == (
        "A league of Choice"
    )
    assert client_of.get("/gm/campaigns/new/league/first-player/").status_code == 404
    assert client_of.get("/gm/campaigns/new/league/chess/").status_code == 404


@pytest.mark.parametrize(
    ("data", "errors"),
    [
        (
            {"members": "ann ann@example.org"},
            {
                "members": [
                    "line 1: write 'name <email>' or 'name, email', not 'ann ann@example.org'"
                ]
            },
        ),
        (
            {"option_order_mode": "sideways"},
            {
                "option_order_mode": [
                    "Select a valid choice. sideways is not one of the available choices."
                ]
            },
        ),
        (
            {"schedule": '{"kind": "interval", "seconds": 3600}'},
            {
                "schedule": [
                    '\'{"kind": "interval", "seconds": 3600}\' is not a schedule; write '
                    "e.g. 'every 48 hours', 'daily at 18:00' or 'mondays and thursdays at 20:00'"
                ]
            },
        ),
    ],
)
def test_a_bad_campaign_form_says_what_is_wrong_and_creates_nothing(
    client_of: Client, data: dict[str, str], errors: dict[str, list[str]]
) -> None:
    response = create(client_of, **data)
    assert response.status_code == 200
    assert response.context["form"].errors == errors
    assert Campaign.objects.count() == 0


def test_a_night_is_opened_from_the_seating_form_and_the_tracker_follows(
    client_of: Client, now: datetime
) -> None:
    create(client_of)
    campaign = Campaign.objects.get()
    added = client_of.post(
        f"/gm/campaigns/{campaign.pk}/members/",
        {"name": "dee", "email": "dee@example.org"},
        follow=True,
    )
    assert messages_of(added) == ["dee joins the campaign."]
    members = {m.name: m.pk for m in campaign.members.all()}
    form = {
        "date": "2026-11-26",
        "rounds": "1",
        f"seat_{members['ann']}": "1",
        f"seat_{members['bob']}": "1",
        f"seat_{members['cy']}": "1",
        f"seat_{members['dee']}": "absent",
    }
    response = client_of.post(f"/gm/campaigns/{campaign.pk}/nights/", form, follow=True)
    assert messages_of(response) == [
        "Night 1 is open: 1 table(s); every player has their link by email."
    ]
    night = Night.objects.get()
    (table,) = night.tables.all()
    assert list(table.game.seats.values_list("name", flat=True)) == ["ann", "bob", "cy"]
    page = response.content.decode()
    assert "Absent: dee (3 dice)" in page
    assert f'<a href="/gm/{table.game.pk}/">Thursday group: night 1, table 1</a>' in page

    finish(table.game, now)
    page = client_of.get(f"/gm/campaigns/{campaign.pk}/").content.decode()
    sheet = postal.tracker(campaign)
    cells = [cell.shown for row in sheet.rows for cell in row.cells]
    assert cells[3] == "3(-1)"
    assert "<tr><th>Total</th><td>12</td></tr>" in page
    assert re.search(r'<td title="had 3, moved 1 to the reserve: 2">3\(-1\)</td>', page)
    csv = client_of.get(f"/gm/campaigns/{campaign.pk}/tracker.csv")
    assert csv["Content-Type"] == "text/csv; charset=utf-8"
    assert csv.content.decode() == postal.tracker_csv(campaign)
    svg = client_of.get(f"/gm/campaigns/{campaign.pk}/tracker.svg").content.decode()
    names = re.findall(r'<polyline class="series" data-name="([^"]+)"', svg)
    assert names == ["ann", "bob", "cy", "dee", "Reserved dice"]


def test_a_seating_the_rules_refuse_is_reported_and_opens_nothing(client_of: Client) -> None:
    create(client_of)
    campaign = Campaign.objects.get()
    form = {"date": "2026-11-26"} | {f"seat_{m.pk}": "absent" for m in campaign.members.all()}
    first = campaign.members.first()
    assert first is not None
    form[f"seat_{first.pk}"] = "1"
    response = client_of.post(f"/gm/campaigns/{campaign.pk}/nights/", form, follow=True)
    assert messages_of(response) == ["table 1 needs at least 2 players"]
    assert Night.objects.count() == 0


def test_a_league_starts_its_games_from_its_page(client_of: Client) -> None:
    create(
        client_of,
        "/gm/campaigns/new/league/choice/standard/",
        name="Winter league",
        points="5, 3, 1",
        option_rolls_per_turn="1",
    )
    campaign = Campaign.objects.get()
    assert campaign.options == {
        "engine": "choice",
        "game_options": {
            "variant": "standard",
            "rolls_per_turn": 1,
            "end_threshold": 8,
            "tiebreak": "shared",
            "round_cap": 200,
        },
        "points": [5, 3, 1],
        "schedule": {"kind": "interval", "seconds": 48 * 3600},
        "time_zone": "UTC",
    }
    bad = create(client_of, "/gm/campaigns/new/league/choice/standard/", points="ten")
    assert bad.context["form"].errors == {
        "points": ["write whole numbers separated by commas, e.g. 10, 6, 4"]
    }
    response = client_of.post(f"/gm/campaigns/{campaign.pk}/games/", follow=True)
    assert messages_of(response) == ["Winter league: game 1 has started."]
    assert campaign.games.get().game.status == Game.Status.RUNNING
    page = response.content.decode()
    assert '<a href="/gm/' in page and ">G1</a>" in page


def test_another_host_sees_nothing_of_a_campaign(client_of: Client) -> None:
    create(client_of)
    campaign = Campaign.objects.get()
    other = Client()
    stranger: Any = GMFactory.create(is_staff=True)
    other.force_login(stranger)
    for url in ("", "tracker.csv", "tracker.svg"):
        assert other.get(f"/gm/campaigns/{campaign.pk}/{url}").status_code == 404
    assert other.post(f"/gm/campaigns/{campaign.pk}/games/").status_code == 404
    assert "Thursday group" not in other.get("/gm/campaigns/").content.decode()
    assert Client().get(f"/gm/campaigns/{campaign.pk}/").status_code == 302


def night_one(client: Client, campaign: Campaign, now: datetime) -> Night:
    """Night 1 on 2026-11-25 with every member at table 1, played to its end."""
    form = {"date": "2026-11-25", "rounds": "1"}
    form |= {f"seat_{member.pk}": "1" for member in campaign.members.all()}
    client.post(f"/gm/campaigns/{campaign.pk}/nights/", form)
    night = Night.objects.get(campaign=campaign)
    finish(night.tables.get().game, now)
    return night


def history(page: str) -> list[str]:
    """The entries of the page's list of nights, their tags and white space collapsed."""
    section = page[page.index('<section id="history">') :]
    section = section[: section.index("</section>")]
    items = re.findall(r"<li[^>]*>(.*?)</li>", section, re.S)
    return [" ".join(re.sub(r"<[^>]+>", " ", item).split()) for item in items]


def test_dates_are_iso_and_a_closed_night_stays_in_the_history(
    client_of: Client, now: datetime
) -> None:
    create(client_of)
    campaign = Campaign.objects.get()
    night = night_one(client_of, campaign, now)
    night.refresh_from_db()
    assert night.status == Night.Status.CLOSED
    page = client_of.get(f"/gm/campaigns/{campaign.pk}/").content.decode()
    assert re.findall(r'<th scope="col"[^>]*>([^<]*)</th>', page) == ["2026-11-25"]
    game = night.tables.get().game
    assert history(page) == [
        f"Night 1, 2026-11-25 : closed 2026-11-23 Table 1: {game.title} (finished) Absent: nobody"
    ]
    svg = client_of.get(f"/gm/campaigns/{campaign.pk}/tracker.svg").content.decode()
    assert re.findall(r'<text class="night"[^>]*>([^<]*)</text>', svg) == ["2026-11-25"]


def test_a_campaign_with_a_locale_writes_its_dates_so(client_of: Client, now: datetime) -> None:
    create(client_of, locale="de")
    campaign = Campaign.objects.get()
    night_one(client_of, campaign, now)
    page = client_of.get(f"/gm/campaigns/{campaign.pk}/").content.decode()
    assert re.findall(r'<th scope="col"[^>]*>([^<]*)</th>', page) == ["25.11.2026"]
    assert re.findall(r"<strong>(Night 1, [^<]*)</strong>", page) == ["Night 1, 25.11.2026"]
    svg = client_of.get(f"/gm/campaigns/{campaign.pk}/tracker.svg").content.decode()
    assert re.findall(r'<text class="night"[^>]*>([^<]*)</text>', svg) == ["25.11.2026"]


def test_a_locale_nobody_writes_dates_for_is_refused(client_of: Client) -> None:
    response = create(client_of, locale="klingon")
    assert response.context["form"].errors == {
        "locale": [
            "'klingon' is no language we write dates for; write a code such as en-GB or de, "
            "or leave it empty"
        ]
    }
    assert Campaign.objects.count() == 0


def test_the_seating_form_counts_each_members_dice_in_words() -> None:
    members = [Member(pk=1, name="ann", dice=1), Member(pk=2, name="bob", dice=3)]
    form = NightForm(members=members)
    assert [field.label for field in form.seat_fields()] == ["ann (1 die)", "bob (3 dice)"]


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_a_name_that_would_be_a_formula_is_text_in_the_tracker_csv(
    client_of: Client, host: User, now: datetime, start: str
) -> None:
    """A spreadsheet opening the tracker reads such a name as text: a single quote before
    it. Other names and the numbers are written as they are. (A name is stripped when
    entered; one starting with a tab or CR is written here as another path might.)"""
    name = f'{start}HYPERLINK("https://evil.example/","x")'
    campaign = postal.create_campaign(
        host=host,
        kind=Campaign.Kind.FIRST_PLAYER,
        name="Thursday group",
        members=[
            games_postal.Player(name, "ann@example.org"),
            games_postal.Player("bob", "bob@example.org"),
        ],
        options={"order_mode": "free"},
        now=now,
    )
    Member.objects.filter(campaign=campaign, name=name.strip()).update(name=name)
    response = client_of.get(f"/gm/campaigns/{campaign.pk}/tracker.csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows == [[""], [f"'{name}"], ["bob"], ["Reserved dice"], ["Total"]]


def test_the_member_field_asks_for_an_email_address_and_says_what_is_wrong(
    client_of: Client,
) -> None:
    create(client_of)
    campaign = Campaign.objects.get()
    page = client_of.get(f"/gm/campaigns/{campaign.pk}/").content.decode()
    assert '<label for="id_email">Their email address:</label>' in page
    assert re.search(r'<input type="email" name="email"[^>]*placeholder="dee@example.org"', page)
    refused = client_of.post(
        f"/gm/campaigns/{campaign.pk}/members/", {"name": "dee", "email": "dee"}, follow=True
    )
    assert messages_of(refused) == ["'dee' is not one email address"]
    assert sorted(campaign.members.values_list("name", flat=True)) == ["ann", "bob", "cy"]
