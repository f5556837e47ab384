"""First Player campaigns and leagues through campaigns.postal: members bring their dice,
nights seat tables whose games run through the postal layer, every movement lands in the
ledger, the counts rebuild from it, the totals are conserved, the tracker reads it."""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta
from typing import Any

import pytest
import time_machine
from django.db.models import Sum
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from campaigns import postal
from campaigns.models import Campaign, LedgerEntry, Member, Night
from games import postal as games_postal
from games.engines.first_player.rules import FirstPlayerEngine
from games.models import Game, Seat
from moderator.mail.models import OutboundEmail
from tests.conftest import NOW
from tests.factories import GMFactory

pytestmark = pytest.mark.django_db

ENGINE = FirstPlayerEngine()
NAMES = ["ann", "bob", "cy", "dee", "eve", "fay", "gus", "hal"]


def players(count: int) -> list[games_postal.Player]:
    return [games_postal.Player(name, f"{name}@example.org") for name in NAMES[:count]]


def campaign_of(count: int, now: datetime, **options: Any) -> Campaign:
    return postal.create_campaign(
        host=GMFactory.create(),
        kind=Campaign.Kind.FIRST_PLAYER,
        name="Thursday group",
        members=players(count),
        options={"order_mode": "free", **options},
        now=now,
    )


def ids(campaign: Campaign, *names: str) -> list[int]:
    members = dict(campaign.members.values_list("name", "pk"))
    return [members[name] for name in names]


def play_out(game: Game, now: datetime) -> None:
    """Every step resolved at its deadline: the no-moves defaults play the night."""
    for _ in range(100):
        game.refresh_from_db()
        if game.status == Game.Status.FINISHED:
            return
        games_postal.resolve_now(game.pk, now=now)
    pytest.fail("the night did not end")


def assert_ledger_consistent(campaign: Campaign) -> None:
    campaign.refresh_from_db()
    members, reserve = postal.counts_from_ledger(campaign)
    cached = {m.pk: m.dice for m in campaign.members.all()}
    assert {pk: members.get(pk, 0) for pk in cached} == cached
    assert reserve == campaign.reserve
    assert LedgerEntry.objects.filter(campaign=campaign).aggregate(total=Sum("delta")) == {
        "total": 0
    }
    brought = 3 * campaign.members.count()
    assert sum(cached.values()) + campaign.reserve == brought


def test_members_bring_three_dice_each_from_the_box(now: datetime) -> None:
    campaign = campaign_of(3, now)
    assert list(campaign.members.values_list("name", "dice")) == [("ann", 3), ("bob", 3), ("cy", 3)]
    box = LedgerEntry.objects.filter(campaign=campaign, holder="box")
    assert list(box.values_list("delta", "reason")) == [(-3, "new member")] * 3
    assert_ledger_consistent(campaign)


def test_a_night_at_one_table_is_played_and_written_to_the_ledger(now: datetime) -> None:
    campaign = campaign_of(3, now)
    night = postal.open_night(
        campaign.pk, day=date(2026, 11, 26), tables=[ids(campaign, "ann", "bob", "cy")], now=now
    )
    (table,) = night.tables.all()
    game = table.game
    assert (game.engine, game.status) == ("first-player", Game.Status.RUNNING)
    assert game.options == {
        "order_mode": "free",
        "dice": {"ann": 3, "bob": 3, "cy": 3},
        "absent": [],
        "reserve": 0,
    }
    assert OutboundEmail.objects.filter(kind="report", game=game).count() == 3
    play_out(game, now)
    night.refresh_from_db()
    assert night.status == Night.Status.CLOSED
    state = ENGINE.state_from_json(Game.objects.get(pk=game.pk).state)
    assert dict(campaign.members.values_list("name", "dice")) == {
        name: state.counts[seat] for seat, name in enumerate(state.players)
    }
    # The winner gave a die to the last player: one movement, two entries.
    moved = LedgerEntry.objects.filter(campaign=campaign, night=night, unit="dice")
    assert moved.count() == 2 * sum(1 for m in state.movements if m.unit == "dice")
    assert_ledger_consistent(campaign)
    sheet = postal.tracker(campaign)
    assert sheet.totals == [9]
    assert [cell.shown for row in sheet.rows for cell in row.cells] == [
        str(state.counts[seat]) for seat in range(3)
    ]


def test_an_absence_moves_a_die_to_the_reserve_and_the_tracker_notes_it(now: datetime) -> None:
    campaign = campaign_of(4, now)
    night = postal.open_night(
        campaign.pk, day=date(2026, 11, 26), tables=[ids(campaign, "ann", "bob", "cy")], now=now
    )
    play_out(night.tables.get().game, now)
    campaign.refresh_from_db()
    assert (campaign.reserve, campaign.members.get(name="dee").dice) == (1, 2)
    sheet = postal.tracker(campaign)
    assert [(row.name, row.cells[0].shown) for row in sheet.rows][3] == ("dee", "3(-1)")
    assert sheet.rows[3].cells[0].count == 2
    assert (sheet.reserve.cells[0].shown, sheet.totals) == ("1", [12])
    csv = postal.tracker_csv(campaign).splitlines()
    assert csv[0] == ",2026-11-26"
    assert csv[4] == "dee,3(-1)"
    assert csv[5:] == ["Reserved dice,1", "Total,12"]
    assert_ledger_consistent(campaign)


def test_two_tables_play_apart_and_only_the_first_holds_the_reserve(now: datetime) -> None:
    campaign = campaign_of(5, now)
    first = postal.open_night(
        campaign.pk, day=date(2026, 11, 19), tables=[ids(campaign, "ann", "bob", "cy")], now=now
    )
    play_out(first.tables.get().game, now)
    later = now + timedelta(days=7)
    second = postal.open_night(
        campaign.pk,
        day=date(2026, 11, 26),
        tables=[ids(campaign, "ann", "bob"), ids(campaign, "cy", "dee", "eve")],
        now=later,
    )
    one, two = second.tables.order_by("number")
    assert (one.game.options["reserve"], two.game.options["reserve"]) == (2, 0)
    assert (one.has_reserve, two.has_reserve) == (True, False)
    play_out(two.game, later)
    second.refresh_from_db()
    assert second.status == Night.Status.OPEN  # table 1 still plays
    play_out(one.game, later)
    second.refresh_from_db()
    assert second.status == Night.Status.CLOSED
    assert postal.tracker(campaign).totals == [15, 15]
    assert_ledger_consistent(campaign)


@pytest.mark.parametrize(
    ("tables", "message"),
    [
        ([["ann"]], "table 1 needs at least 2 players"),
        ([["ann", "bob"], ["bob", "cy"]], "a member sits at two tables"),
        ([], "seat the players at one table or more"),
    ],
)
def test_a_night_that_cannot_be_seated_is_refused_and_changes_nothing(
    now: datetime, tables: list[list[str]], message: str
) -> None:
    campaign = campaign_of(3, now)
    with pytest.raises(postal.CampaignError) as refused:
        postal.open_night(
            campaign.pk,
            day=date(2026, 11, 26),
            tables=[ids(campaign, *table) for table in tables],
            now=now,
        )
    assert refused.value.message == message
    assert (Night.objects.count(), Game.objects.count()) == (0, 0)


def test_one_night_at_a_time(now: datetime) -> None:
    campaign = campaign_of(3, now)
    postal.open_night(
        campaign.pk, day=date(2026, 11, 26), tables=[ids(campaign, "ann", "bob")], now=now
    )
    with pytest.raises(postal.CampaignError) as refused:
        postal.open_night(
            campaign.pk, day=date(2026, 11, 27), tables=[ids(campaign, "ann", "bob")], now=now
        )
    assert refused.value.message == "a night is open already; it closes when its tables finish"


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    members=st.integers(min_value=2, max_value=8),
    nights=st.integers(min_value=1, max_value=3),
    choices=st.randoms(use_true_random=False),
)
def test_random_nights_keep_the_ledger_consistent_and_the_dice_conserved(
    members: int, nights: int, choices: random.Random
) -> None:
    # Hypothesis calls this once per example: the clock is held at the fixed moment here
    # (as the ``now`` fixture holds it for the other tests).
    with time_machine.travel(NOW, tick=False):
        random_nights(members, nights, choices)


def random_nights(members: int, nights: int, choices: random.Random) -> None:
    now = NOW
    campaign = campaign_of(members, now, tokens=choices.random() < 0.5)
    everyone = list(campaign.members.order_by("id"))
    for number in range(nights):
        when = now + timedelta(days=7 * number)
        present = [m for m in everyone if choices.random() < 0.85]
        if len(present) < 2:
            present = everyone[:2]
        choices.shuffle(present)
        split = len(present) // 2 if len(present) >= 4 and choices.random() < 0.5 else 0
        tables = [present[split:], present[:split]] if split else [present]
        # Nobody may sit down with no dice on a table where nobody has any.
        if any(sum(m.dice for m in table) == 0 for table in tables):
            tables = [present]
        night = postal.open_night(
            campaign.pk,
            day=date(2026, 11, 26) + timedelta(days=7 * number),
            tables=[[m.pk for m in table] for table in tables],
            now=when,
            rounds=choices.randint(1, 2),
        )
        for table in night.tables.all():
            play_out(table.game, when)
        night.refresh_from_db()
        assert night.status == Night.Status.CLOSED
        assert_ledger_consistent(campaign)
        everyone = list(Member.objects.filter(campaign=campaign).order_by("id"))
    sheet = postal.tracker(campaign)
    assert sheet.totals == [3 * members] * nights


def league_of(now: datetime) -> Campaign:
    return postal.create_campaign(
        host=GMFactory.create(),
        kind=Campaign.Kind.LEAGUE,
        name="Winter league",
        members=players(3),
        options={"engine": "choice", "points": [5, 3, 1]},
        now=now,
    )


def test_a_league_adds_points_per_place_and_emails_the_standings(now: datetime) -> None:
    league = league_of(now)
    entry = postal.start_league_game(league.pk, now=now, seed=bytes(range(32)))
    assert entry.game.title == "Winter league: game 1"
    assert list(entry.game.seats.values_list("name", flat=True)) == ["ann", "bob", "cy"]
    play_out(entry.game, now)
    game = Game.objects.get(pk=entry.game.pk)
    engine = game.rules
    standings = engine.standings(engine.state_from_json(game.state))
    points = {0: 0, 1: 0, 2: 0}
    for standing in standings:
        points[standing.seat] = [5, 3, 1][standing.place - 1]
    games, rows = postal.league_standings(league)
    assert [entry.number for entry in games] == [1]
    assert {row.name: row.points for row in rows} == {
        name: points[seat] for seat, name in enumerate(["ann", "bob", "cy"])
    }
    assert [row.played for row in rows] == [1, 1, 1]
    emails = OutboundEmail.objects.filter(kind="league").order_by("to")
    assert [email.to for email in emails] == [f"{n}@example.org" for n in ("ann", "bob", "cy")]
    assert emails[0].subject == "Winter league: the standings after game 1"
    best = rows[0]
    assert f" 1. {best.name:<16} {best.points:4d} points  (1 played" in emails[0].text
    # A second game: the standings add up, each game once.
    second = postal.start_league_game(league.pk, now=now, seed=bytes(range(1, 33)))
    play_out(second.game, now)
    _, rows = postal.league_standings(league)
    assert [row.played for row in rows] == [2, 2, 2]
    assert OutboundEmail.objects.filter(kind="league").count() == 6


@pytest.mark.parametrize(
    ("kind", "options", "message"),
    [
        ("league", {"engine": "first-player"}, "a league plays one of"),
        ("league", {"engine": "choice", "points": [3, -1]}, "points must be a list"),
        ("first-player", {"order_mode": "sideways"}, "options: "),
        ("first-player", {"colour": "red"}, "unknown option 'colour'"),
    ],
)
def test_bad_campaign_options_are_refused(
    now: datetime, kind: str, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(postal.CampaignError) as refused:
        postal.create_campaign(
            host=GMFactory.create(),
            kind=kind,
            name="X",
            members=players(2),
            options=options,
            now=now,
        )
    assert refused.value.message.startswith(message)
    assert Campaign.objects.count() == 0


def test_a_league_member_whose_seat_speaks_german_gets_the_standings_in_german(
    now: datetime,
) -> None:
    league = league_of(now)
    entry = postal.start_league_game(league.pk, now=now, seed=bytes(range(32)))
    Seat.objects.filter(game=entry.game, name="bob").update(language="de")
    play_out(entry.game, now)
    german = OutboundEmail.objects.get(kind="league", to="bob@example.org")
    english = OutboundEmail.objects.get(kind="league", to="ann@example.org")
    assert german.subject == "Winter league: der Stand nach Spiel 1"
    assert english.subject == "Winter league: the standings after game 1"
    assert german.text.splitlines()[:4] == [
        "Hallo bob,",
        "",
        'Spiel 1 der Liga "Winter league" (Winter league: game 1) ist vorbei.',
        "Der Stand der Liga nach 1 Spiel:",
    ]
    assert "Punkte je Platz: 5, 3, 1; gleiche Plätze teilen sich die Punkte des Platzes." in (
        german.text
    )
    assert '<html lang="de">' in german.html and "<th" in german.html
