"""The only code that changes a campaign (like ``games.postal`` for a game).

A First Player campaign meets for game nights. Opening a night marks who came and splits
them into tables; each table plays one First Player game
(``games.engines.first_player.rules``) through ``games.postal``, so every player plays from
their phone through the usual magic links.
The first table holds the campaign's reserve and takes the night's absences. When a
table's game finishes, its dice movements are written to the ledger in the same
transaction (``on_game_finished``); when every table has finished, the night closes and
the tracker has a new column.

A league is a series of postal games of one engine with the same members; each finished
game adds points per place to the standings, and every member is emailed them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.db.models import Sum
from django.utils import translation

from campaigns import dates
from campaigns.models import Attendance, Campaign, LeagueGame, LedgerEntry, Member, Night, Table
from games import postal as games_postal
from games.engines import registry
from games.engines.base import OptionsError, competition_places
from games.engines.first_player.rules import FirstPlayerEngine
from games.lib import schedule
from games.models import Game
from moderator import bidi
from moderator.mail import building, queueing
from moderator.spreadsheets import csv_text

FIRST_PLAYER = FirstPlayerEngine()
NEW_MEMBER_DICE = 3
DEFAULT_POINTS = [10, 6, 4, 3, 2, 1]
DEFAULT_NIGHT_SCHEDULE = {"kind": "interval", "seconds": 3600}
FIRST_PLAYER_KEYS = ("order_mode", "tokens", "reserve_to_second_last", "rounds")
Holder = LedgerEntry.Holder


class CampaignError(Exception):
    """A request that cannot be carried out; the message is for the host."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# --- creating -----------------------------------------------------------------------------


def _checked_options(kind: str, options: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(options, dict):
        raise CampaignError("options must be an object of option keys and values")
    checked = dict(options)
    spec = checked.pop("schedule", None)
    zone = checked.pop("time_zone", "UTC")
    locale = checked.pop("locale", "")
    if locale and not (isinstance(locale, str) and dates.known_locale(locale)):
        raise CampaignError(
            f"locale: {locale!r} is no language we write dates for; write a code such as "
            '"en-GB" or "de", or leave it out for dates as 2026-11-25'
        )
    try:
        schedule.zone(zone)
        spec = schedule.validate(spec or DEFAULT_NIGHT_SCHEDULE)
    except schedule.ScheduleError as error:
        raise CampaignError(f"schedule: {error}") from None
    if kind == Campaign.Kind.FIRST_PLAYER:
        unknown = sorted(set(checked) - set(FIRST_PLAYER_KEYS))
        if unknown:
            raise CampaignError(
                f"unknown option {unknown[0]!r}; the options are {', '.join(FIRST_PLAYER_KEYS)}"
            )
        try:
            FIRST_PLAYER.options(checked)
        except OptionsError as error:
            raise CampaignError(f"options: {error.message}") from None
    elif kind == Campaign.Kind.LEAGUE:
        engine = checked.get("engine")
        if engine == FIRST_PLAYER.key or engine not in registry.ENGINES:
            games = ", ".join(key for key in registry.ENGINES if key != FIRST_PLAYER.key)
            raise CampaignError(f"a league plays one of {games}, not {engine!r}")
        try:
            games_postal.check_options(engine, checked.setdefault("game_options", {}))
        except games_postal.PostalError as error:
            raise CampaignError(error.message) from None
        points = checked.setdefault("points", DEFAULT_POINTS)
        if (
            not isinstance(points, list)
            or not points
            or not all(isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in points)
        ):
            raise CampaignError("points must be a list of whole numbers, first place first")
        unknown = sorted(set(checked) - {"engine", "game_options", "points"})
        if unknown:
            raise CampaignError(f"unknown option {unknown[0]!r}")
    else:
        raise CampaignError(f"there is no kind of campaign {kind!r}")
    return {**checked, "schedule": spec, "time_zone": zone} | ({"locale": locale} if locale else {})


def _single_line(value: str, what: str) -> str:
    value = value.strip()
    if not value or "\x00" in value or any(char in building.LINE_BREAKS for char in value):
        raise CampaignError(f"{what} must be one line of text")
    if (refused := bidi.refusal(value, what)) is not None:
        raise CampaignError(refused)
    return value


def create_campaign(
    *,
    host: Any,
    kind: str,
    name: str,
    members: Sequence[games_postal.Player],
    options: dict[str, Any] | None = None,
    now: datetime,
) -> Campaign:
    checked = _checked_options(kind, options or {})
    with transaction.atomic():
        campaign = Campaign.objects.create(
            name=_single_line(name, "the name"), kind=kind, host=host, options=checked
        )
        for player in members:
            _add(campaign, player, now)
    return campaign


def add_member(campaign_id: int, player: games_postal.Player, *, now: datetime) -> Member:
    """A new member; in a First Player campaign they bring their 3 dice (from the box)."""
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign_id)
        return _add(campaign, player, now)


def _add(campaign: Campaign, player: games_postal.Player, now: datetime) -> Member:
    name = _single_line(player.name, "a member's name")
    email = _single_line(player.email, f"the email of {name}")
    try:
        validate_email(email)
    except ValidationError:
        raise CampaignError(f"{email!r} is not one email address") from None
    if name.lower() == "reserve" or campaign.members.filter(name__iexact=name).exists():
        raise CampaignError(f"{name!r} cannot be a member's name: it is taken")
    member = Member.objects.create(
        campaign=campaign, name=name, email=email, time_zone=player.time_zone, joined_at=now
    )
    if campaign.kind == Campaign.Kind.FIRST_PLAYER:
        _post(campaign, [(None, member, NEW_MEMBER_DICE, "dice", "new member", 0)], now)
    return member


# --- the ledger ---------------------------------------------------------------------------

Movement = tuple[Member | str | None, Member | str | None, int, str, str, int]


def _holder(who: Member | str | None) -> tuple[str, Member | None]:
    if isinstance(who, Member):
        return Holder.MEMBER, who
    if who == "reserve":
        return Holder.RESERVE, None
    return Holder.BOX, None


def _post(
    campaign: Campaign,
    movements: Sequence[tuple[Member | str | None, Member | str | None, int, str, str, int]],
    now: datetime,
    night: Night | None = None,
    table: Table | None = None,
) -> None:
    """Write each movement (giver, receiver, count, unit, reason, round) as two entries and
    bring the cached counts up to date from the ledger."""
    entries = []
    for giver, receiver, count, unit, reason, round_ in movements:
        for who, delta in ((giver, -count), (receiver, count)):
            holder, member = _holder(who)
            entries.append(
                LedgerEntry(
                    campaign=campaign,
                    night=night,
                    table=table,
                    holder=holder,
                    member=member,
                    unit=unit,
                    delta=delta,
                    round=round_,
                    reason=reason[:60],
                    created_at=now,
                )
            )
    LedgerEntry.objects.bulk_create(entries)
    _refresh_counts(campaign)


def counts_from_ledger(campaign: Campaign) -> tuple[dict[int, int], int]:
    """Every member's dice and the reserve, rebuilt from the ledger alone."""
    dice = LedgerEntry.objects.filter(campaign=campaign, unit="dice")
    members = dict(
        dice.filter(holder=Holder.MEMBER).values_list("member").annotate(total=Sum("delta"))
    )
    reserve = dice.filter(holder=Holder.RESERVE).aggregate(total=Sum("delta"))["total"] or 0
    return {member: total or 0 for member, total in members.items()}, reserve


def _refresh_counts(campaign: Campaign) -> None:
    members, reserve = counts_from_ledger(campaign)
    for member in campaign.members.all():
        count = members.get(member.pk, 0)
        if member.dice != count:
            member.dice = count
            member.save(update_fields=["dice"])
    campaign.reserve = reserve
    campaign.save(update_fields=["reserve"])


# --- game nights --------------------------------------------------------------------------


def open_night(
    campaign_id: int,
    *,
    day: date,
    tables: Sequence[Sequence[int]],
    now: datetime,
    rounds: int | None = None,
    seed: bytes | None = None,
) -> Night:
    """Open a game night: ``tables`` lists, per table, the member ids seated there; every
    other member is absent. Each table's game starts at once and emails its players."""
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign_id)
        if campaign.kind != Campaign.Kind.FIRST_PLAYER:
            raise CampaignError("only a First Player campaign has game nights")
        if campaign.nights.filter(status=Night.Status.OPEN).exists():
            raise CampaignError("a night is open already; it closes when its tables finish")
        members = {member.pk: member for member in campaign.members.all()}
        seated: list[list[Member]] = []
        for number, ids in enumerate(tables, start=1):
            table = [members[i] for i in ids if i in members]
            if len(table) != len(ids):
                raise CampaignError(f"table {number} seats someone who is not a member")
            if len(table) < 2:
                raise CampaignError(f"table {number} needs at least 2 players")
            seated.append(table)
        present = [member for table in seated for member in table]
        if not seated:
            raise CampaignError("seat the players at one table or more")
        if len({member.pk for member in present}) != len(present):
            raise CampaignError("a member sits at two tables")
        absent = [member for member in members.values() if member not in present]
        night = Night.objects.create(
            campaign=campaign,
            number=campaign.nights.count() + 1,
            date=day,
            opened_at=now,
        )
        Attendance.objects.bulk_create(
            Attendance(night=night, member=member, present=member in present, had=member.dice)
            for member in members.values()
        )
        for number, table in enumerate(seated, start=1):
            _start_table(
                campaign, night, number, table, absent if number == 1 else [], now, rounds, seed
            )
    return night


def _start_table(
    campaign: Campaign,
    night: Night,
    number: int,
    players: list[Member],
    absent: list[Member],
    now: datetime,
    rounds: int | None,
    seed: bytes | None,
) -> Table:
    options = {key: campaign.options[key] for key in FIRST_PLAYER_KEYS if key in campaign.options}
    if rounds is not None:
        options["rounds"] = rounds
    options["dice"] = {member.name: member.dice for member in [*players, *absent]}
    options["absent"] = [member.name for member in absent]
    options["reserve"] = campaign.reserve if number == 1 else 0
    try:
        game = games_postal.create_game(
            gm=campaign.host,
            engine_key=FIRST_PLAYER.key,
            title=f"{campaign.name}: night {night.number}, table {number}",
            players=[games_postal.Player(m.name, m.email, m.time_zone) for m in players],
            options=options,
            time_zone=campaign.options.get("time_zone", "UTC"),
            schedule_spec=campaign.options.get("schedule", DEFAULT_NIGHT_SCHEDULE),
        )
        table = Table.objects.create(night=night, number=number, game=game, has_reserve=number == 1)
        games_postal.start_game(game.pk, now=now, seed=seed)
    except games_postal.PostalError as error:
        raise CampaignError(f"table {number}: {error.message}") from None
    return table


def on_game_finished(sender: Any, game: Game, state: Any, now: datetime, **kwargs: Any) -> None:
    """A table's game or a league game has finished (inside its transaction)."""
    table = Table.objects.filter(game=game).select_related("night__campaign").first()
    if table is not None:
        _ledger_table(table, state, now)
    entry = LeagueGame.objects.filter(game=game).select_related("campaign").first()
    if entry is not None:
        _email_league_standings(entry, now)


def _ledger_table(table: Table, state: Any, now: datetime) -> None:
    """Write the table's dice movements to the ledger, once; close the night when its last
    table has finished. The counts the ledger gives must be the engine's: any difference
    raises, and the step stays open for the GM (nothing half-written)."""
    night = Night.objects.select_for_update().get(pk=table.night_id)
    table = Table.objects.select_for_update().get(pk=table.pk)
    if table.ledgered:
        return
    campaign = Campaign.objects.select_for_update().get(pk=night.campaign_id)
    members = {member.name: member for member in campaign.members.all()}

    def who(name: str | None) -> Member | str | None:
        if name is None or name == "reserve":
            return name
        return members[name]

    _post(
        campaign,
        [
            (who(m.giver), who(m.receiver), m.count, m.unit, m.reason, m.round)
            for m in state.movements
        ],
        now,
        night=night,
        table=table,
    )
    expected = {name: state.counts[seat] for seat, name in enumerate(state.players)}
    expected |= {absentee.name: absentee.count for absentee in state.absent}
    got = {member.name: member.dice for member in campaign.members.filter(name__in=expected)}
    if got != expected or (table.has_reserve and campaign.reserve != state.reserve):
        raise RuntimeError(f"the ledger of {table} disagrees with the game: {got} != {expected}")
    table.ledgered = True
    table.save(update_fields=["ledgered"])
    if not night.tables.filter(ledgered=False).exists():
        night.status, night.closed_at = Night.Status.CLOSED, now
        night.save(update_fields=["status", "closed_at"])


# --- the tracker sheet --------------------------------------------------------------------


@dataclass
class TrackerCell:
    count: int | None
    note: str = ""

    @property
    def shown(self) -> str:
        if self.count is None:
            return ""
        return self.note or str(self.count)


@dataclass
class TrackerRow:
    name: str
    cells: list[TrackerCell] = field(default_factory=list)


@dataclass
class Tracker:
    nights: list[Night]
    rows: list[TrackerRow]
    reserve: TrackerRow
    totals: list[int]


def tracker(campaign: Campaign) -> Tracker:
    """Members by closed night: each count after the night, "4(-1)" where an absence moved
    a die to the reserve (had 4, now 3), the reserve row and the column totals."""
    nights = list(campaign.nights.filter(status=Night.Status.CLOSED).order_by("number"))
    members = list(campaign.members.order_by("joined_at", "id"))
    entries = list(
        LedgerEntry.objects.filter(campaign=campaign, unit="dice")
        .exclude(holder=Holder.BOX)
        .values_list("holder", "member_id", "delta", "created_at", "night_id", "reason")
    )
    absences = {
        (member_id, night_id)
        for holder, member_id, delta, _, night_id, reason in entries
        if holder == Holder.MEMBER and reason == "absence" and delta < 0
    }
    had = {(a.member_id, a.night_id): a.had for a in Attendance.objects.filter(night__in=nights)}
    rows = [TrackerRow(member.name) for member in members]
    reserve = TrackerRow("Reserved dice")
    totals = []
    for night in nights:
        assert night.closed_at is not None
        held: dict[int, int] = defaultdict(int)
        in_reserve = 0
        for holder, member_id, delta, created_at, _, _ in entries:
            if created_at > night.closed_at:
                continue
            if holder == Holder.RESERVE:
                in_reserve += delta
            else:
                held[member_id] += delta
        for row, member in zip(rows, members, strict=True):
            if member.joined_at > night.closed_at:
                row.cells.append(TrackerCell(None))
                continue
            note = ""
            if (member.pk, night.pk) in absences:
                note = f"{had[(member.pk, night.pk)]}(-1)"
            row.cells.append(TrackerCell(held[member.pk], note))
        reserve.cells.append(TrackerCell(in_reserve))
        totals.append(sum(held.values()) + in_reserve)
    return Tracker(nights, rows, reserve, totals)


def tracker_csv(campaign: Campaign) -> str:
    """The tracker as CSV; a name that would be a spreadsheet formula is written as text."""
    sheet = tracker(campaign)
    rows = [[row.name, *(cell.shown for cell in row.cells)] for row in [*sheet.rows, sheet.reserve]]
    header = ["", *(night.date.isoformat() for night in sheet.nights)]
    return csv_text([header, *rows, ["Total", *sheet.totals]])


# --- leagues ------------------------------------------------------------------------------


def start_league_game(campaign_id: int, *, now: datetime, seed: bytes | None = None) -> LeagueGame:
    """The league's next game, with every member, started at once."""
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign_id)
        if campaign.kind != Campaign.Kind.LEAGUE:
            raise CampaignError("only a league has league games")
        members = list(campaign.members.order_by("joined_at", "id"))
        number = campaign.games.count() + 1
        options = campaign.options
        try:
            game = games_postal.create_game(
                gm=campaign.host,
                engine_key=options["engine"],
                title=f"{campaign.name}: game {number}",
                players=[games_postal.Player(m.name, m.email, m.time_zone) for m in members],
                options=options.get("game_options", {}),
                time_zone=options.get("time_zone", "UTC"),
                schedule_spec=options.get("schedule"),
            )
            entry = LeagueGame.objects.create(campaign=campaign, number=number, game=game)
            games_postal.start_game(game.pk, now=now, seed=seed)
        except games_postal.PostalError as error:
            raise CampaignError(error.message) from None
    return entry


@dataclass
class LeagueRow:
    place: int
    name: str
    points: int
    played: int
    places: list[int | None]


def league_standings(campaign: Campaign) -> tuple[list[LeagueGame], list[LeagueRow]]:
    """Cumulative points per place over the league's finished games (shared places share
    the points of the place); members with equal points share a place."""
    entries = list(campaign.games.select_related("game").order_by("number"))
    members = list(campaign.members.order_by("joined_at", "id"))
    points_table: list[int] = campaign.options.get("points", DEFAULT_POINTS)
    points = {member.name: 0 for member in members}
    played = {member.name: 0 for member in members}
    places: dict[str, list[int | None]] = {member.name: [] for member in members}
    for entry in entries:
        game = entry.game
        placed: dict[str, int] = {}
        if game.status == Game.Status.FINISHED and game.state is not None:
            engine = game.rules
            names = dict(game.seats.values_list("position", "name"))
            for standing in engine.standings(engine.state_from_json(game.state)) or []:
                placed[names[standing.seat]] = standing.place
        for name in places:
            place = placed.get(name)
            places[name].append(place)
            if place is not None:
                played[name] += 1
                points[name] += points_table[place - 1] if place <= len(points_table) else 0
    order = competition_places([(i, -points[m.name]) for i, m in enumerate(members)])
    rows = [
        LeagueRow(
            place,
            members[i].name,
            points[members[i].name],
            played[members[i].name],
            places[members[i].name],
        )
        for i, place in order
    ]
    return entries, rows


def _email_league_standings(entry: LeagueGame, now: datetime) -> None:
    campaign = entry.campaign
    games, rows = league_standings(campaign)
    # Each member in the language of their seat in the game just over, else the game's.
    speaks = {seat.email.lower(): seat.speaks for seat in entry.game.seats.all()}
    emails = []
    for member in campaign.members.all():
        with translation.override(speaks.get(member.email.lower(), entry.game.language)):
            emails.append(
                building.build(
                    "league",
                    to=member.email,
                    dedupe_key=f"league:{entry.game_id}:{member.pk}",
                    context={
                        "campaign": campaign,
                        "member": member,
                        "entry": entry,
                        "games": games,
                        "rows": rows,
                    },
                    game=entry.game,
                )
            )
    queueing.queue_once(emails)
