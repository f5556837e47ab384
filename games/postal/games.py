"""A game as a whole: created with its seats, started, its players invited, played again
once finished; the GM's choices of who may watch it and of its language."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction

from games.engines import registry
from games.engines.base import Engine, GameError, OptionsError
from games.engines.dice import commitment, new_seed
from games.lib import schedule
from games.models import AbsencePolicy, Game, Publicity, Seat, SignUpMode
from games.notify import email_choices, languages, reports
from games.postal import access
from games.postal.errors import PostalError
from games.postal.locks import locked
from games.postal.steps import game_dice, open_next_step, queue_reports, record
from moderator import bidi
from moderator.mail import building, queueing


@dataclass(frozen=True)
class Player:
    name: str
    email: str
    time_zone: str = ""
    # The seat's own language ("": the player's, else the game's; docs/languages.md).
    language: str = ""


@dataclass(frozen=True)
class MissedTurns:
    """What a game does about missed deadlines and absences (games.community.absences): each seat's
    automatic extensions and their length, what a declared absence does and how long in
    all it may hold the game for one seat, after how many missed turns in a row a seat is
    in civil disorder (0: never), whether such a seat is offered on the open games, and
    whether a deadline in every player's night moves to the morning (games.notify.quiet)."""

    extensions: int = 0
    extension_hours: int = 24
    absence_policy: str = AbsencePolicy.EXTEND
    absence_cap_hours: int = 168
    civil_disorder_after: int = 3
    offer_seats: bool = False
    avoid_nights: bool = False

    def check(self) -> None:
        """PostalError names the first value out of its range."""
        ranges = {
            "extensions": (self.extensions, 0, MOST_EXTENSIONS),
            "the length of an extension (hours)": (self.extension_hours, 1, 7 * 24),
            "the cap of a seat's absences (hours)": (self.absence_cap_hours, 0, 60 * 24),
            "the missed turns before civil disorder": (self.civil_disorder_after, 0, 50),
        }
        for what, (value, low, high) in ranges.items():
            if not low <= value <= high:
                raise PostalError(f"{what} must be from {low} to {high}, not {value}")
        if self.absence_policy not in AbsencePolicy.values:
            raise PostalError(f"no such absence policy: {self.absence_policy!r}")

    @classmethod
    def of(cls, game: Game) -> MissedTurns:
        return cls(**{field: getattr(game, field) for field in cls.__dataclass_fields__})


MOST_EXTENSIONS = 10


def single_line(value: str, what: str) -> str:
    """``value`` stripped; PostalError unless it is one line others may read (``what``
    names it in the message)."""
    value = value.strip()
    if not value:
        raise PostalError(f"{what} is empty")
    if "\x00" in value or any(char in building.LINE_BREAKS for char in value):
        raise PostalError(f"{what} must be a single line")
    if (refused := bidi.refusal(value, what)) is not None:
        raise PostalError(refused)
    return value


def check_options(engine_key: str, options: dict[str, Any]) -> Engine[Any, Any, Any]:
    try:
        engine = registry.get(engine_key)
    except KeyError:
        known = ", ".join(registry.ENGINES)
        raise PostalError(f"there is no game {engine_key!r}; the games are {known}") from None
    if not isinstance(options, dict):
        raise PostalError("options must be an object of option keys and values")
    try:
        engine.options(options)
    except OptionsError as error:
        raise PostalError(f"options: {error.message}") from None
    return engine


def create_game(
    *,
    gm: Any,
    engine_key: str,
    title: str,
    players: Sequence[Player],
    options: dict[str, Any] | None = None,
    time_zone: str = "UTC",
    schedule_spec: dict[str, Any] | None = None,
    early_processing: bool = True,
    rated: bool = False,
    missed: MissedTurns | None = None,
    signup: str = SignUpMode.CLOSED,
    seats_wanted: int | None = None,
    public: str = Publicity.AUTO,
    private_press: bool = True,
    language: str = settings.LANGUAGE_CODE,
) -> Game:
    """A new game with its seats, not started. PostalError says what is wrong. ``rated``:
    once finished, its result counts in its game's ratings
    (``games.community.ratings``); ``public``:
    who may watch it (``Publicity``, games.records.spectators); ``private_press``: players may
    write private messages to one another (games.community.press); ``language``: of its players'
    pages and emails (docs/languages.md); ``missed``:
    what it does about missed deadlines and absences (the defaults when None).

    ``signup``: how players join (``SignUpMode``). An open game has ``seats_wanted`` seats,
    within its engine's player counts: the ``players`` invited take the first of them (there
    may be none), and people sign up for the others (``games.community.signups``)."""
    options = {} if options is None else options
    missed = MissedTurns() if missed is None else missed
    missed.check()
    engine = check_options(engine_key, options)
    title = single_line(title, "the title")
    check_seats(registry.players(engine.key, options), len(players), signup, seats_wanted)
    check_players(players)
    _zone(time_zone)
    if language not in languages.NAMES:
        raise PostalError(f"{language!r} is not a language of this service")
    try:
        spec = schedule.validate(schedule_spec or {"kind": "interval", "seconds": 48 * 3600})
    except schedule.ScheduleError as error:
        raise PostalError(f"schedule: {error}") from None
    chosen = email_choices.defaults(player.email for player in players)
    spoken = languages.of_addresses(player.email for player in players)
    zones = email_choices.zones(player.email for player in players)
    receipts = email_choices.web_receipt_addresses(player.email for player in players)
    with transaction.atomic():
        game = Game.objects.create(
            engine=engine.key,
            title=title,
            options=options,
            gm=gm,
            time_zone=time_zone,
            schedule=spec,
            early_processing=early_processing,
            status=Game.Status.RECRUITING,
            rated=rated,
            public=public,
            private_press=private_press,
            language=language,
            **dataclasses.asdict(missed),
            signup=signup,
            seats_wanted=seats_wanted if signup != SignUpMode.CLOSED else None,
        )
        Seat.objects.bulk_create(
            Seat(
                game=game,
                position=position,
                name=player.name.strip(),
                email=player.email.strip(),
                time_zone=player.time_zone or zones.get(email_choices.normalise(player.email), ""),
                reports=chosen.get(email_choices.normalise(player.email), ""),
                language=player.language or spoken.get(email_choices.normalise(player.email), ""),
                web_receipts=email_choices.normalise(player.email) in receipts,
            )
            for position, player in enumerate(players)
        )
    return game


def check_players(players: Sequence[Player]) -> None:
    """PostalError unless each player has a single-line name of their own and one email
    address (and a known time zone, if any)."""
    seen: set[str] = set()
    for number, player in enumerate(players, start=1):
        name = single_line(player.name, f"the name of player {number}")
        if name.lower() in seen:
            raise PostalError(f"two players are called {name!r}; names must differ")
        seen.add(name.lower())
        email = single_line(player.email, f"the email of {name}")
        try:
            validate_email(email)
        except ValidationError:
            raise PostalError(f"{email!r} is not one email address") from None
        if player.time_zone:
            _zone(player.time_zone)


def check_seats(
    counts: registry.Players, invited: int, signup: str, seats_wanted: int | None
) -> None:
    """PostalError unless the seats fit the way to play's player counts (``counts``): the
    players of an invitation-only game, the seats of an open one."""
    if signup not in SignUpMode.values:
        raise PostalError(f"{signup!r} is not a way for players to join")
    if signup == SignUpMode.CLOSED:
        if not counts.allows(invited):
            raise PostalError(f"{counts.words()}, not {invited}")
        return
    if seats_wanted is None or not counts.allows(seats_wanted):
        raise PostalError(f"{counts.words()}: choose the number of seats between them")
    if invited >= seats_wanted:
        raise PostalError(
            f"the {invited} players you invite fill all {seats_wanted} seats: leave a seat "
            "to sign up for, or let only the players you invite join"
        )


def _zone(name: str) -> None:
    try:
        schedule.zone(name)
    except schedule.ScheduleError as error:
        raise PostalError(str(error)) from None


def start_game(game_id: int, *, now: datetime, seed: bytes | None = None) -> Game:
    """Commit the dice seed, start the engine and open step 1 with its reports."""
    with transaction.atomic():
        game = Game.objects.select_for_update().get(pk=game_id)
        if game.status not in (Game.Status.DRAFT, Game.Status.RECRUITING):
            raise PostalError(f"the game is {game.status}; only a game not yet started can start")
        seats = list(game.seats.order_by("position"))
        engine = registry.get(game.engine)
        seed = seed or new_seed()
        game.seed = seed
        game.commitment = commitment(seed)
        dice = game_dice(game)
        try:
            state, events = engine.start(
                engine.options(game.options), [seat.name for seat in seats], dice
            )
        except GameError as error:
            raise PostalError(error.message) from None
        game.status = Game.Status.RUNNING
        game.started_at = now
        step = open_next_step(game, seats, engine, state, now)
        if step is None:
            raise PostalError("the game ended before its first step")
        record(game, step, dice, events)
        queue_reports(game, seats, engine, state, events, step, now)
        game.save()
    return game


def invite(game_id: int, *, now: datetime) -> int:
    """Email every seat of a game not yet started its invitation with its link."""
    with transaction.atomic():
        game = locked(game_id)
        if game.status not in (Game.Status.DRAFT, Game.Status.RECRUITING):
            raise PostalError("invitations go out before the game starts")
        seats = list(game.seats.order_by("position"))
        tokens = access.mint(seats, now=now)
        rows = [reports.invite_email(game, seat, tokens[seat.position], now) for seat in seats]
        queueing.queue(rows)
    return len(rows)


def _next_title(title: str) -> str:
    match = re.fullmatch(r"(.*), game (\d+)", title)
    if match:
        return f"{match[1]}, game {int(match[2]) + 1}"
    return f"{title}, game 2"


def play_again(game_id: int, *, now: datetime) -> Game:
    """The next game with the same players and options, started at once, once the game is
    finished. Where the game's rules say how a game follows another (``engine.follow_up``:
    Drop-Shy's loser places first and the instigator is rolled for the winner), they set the
    seats and options; else the seats keep their order. Same schedule, zone, reminders and
    rating (a rated game's next game is rated)."""
    with transaction.atomic():
        game = locked(game_id)
        engine = registry.get(game.engine)
        if game.status != Game.Status.FINISHED:
            raise PostalError("the game is not over yet; the next game follows the final standings")
        if game.next_games.exists():
            raise PostalError(f"the next game, {game.next_games.get().title}, has already started")
        seats = {seat.name: seat for seat in game.seats.order_by("position")}
        follow_up = getattr(engine, "follow_up", None)
        if follow_up is not None:
            names, options = follow_up(engine.state_from_json(game.state))
        else:
            names, options = list(seats), game.options
        new = create_game(
            gm=game.gm,
            engine_key=game.engine,
            title=_next_title(game.title),
            players=[
                Player(
                    seats[name].name, seats[name].email, seats[name].time_zone, seats[name].language
                )
                for name in names
            ],
            options=options,
            time_zone=game.time_zone,
            schedule_spec=game.schedule,
            early_processing=game.early_processing,
            rated=game.rated,
            missed=MissedTurns.of(game),
            private_press=game.private_press,
            language=game.language,
        )
        new.previous, new.reminders = game, game.reminders
        new.save(update_fields=["previous", "reminders"])
        return start_game(new.pk, now=now)


def set_public(game_id: int, public: str) -> Game:
    """The GM's choice of who may watch the game (``Publicity``; games.records.spectators)."""
    if public not in Publicity.values:
        raise PostalError(f"{public!r} is not a choice of who may watch the game")
    with transaction.atomic():
        game = locked(game_id)
        game.public = public
        game.save(update_fields=["public"])
    return game


def set_language(game_id: int, language: str) -> Game:
    """The GM's choice of the language of the game's players' pages and emails; a seat
    that chose its own keeps it (docs/languages.md)."""
    if language not in languages.NAMES:
        raise PostalError(f"{language!r} is not a language of this service")
    with transaction.atomic():
        game = locked(game_id)
        game.language = language
        game.save(update_fields=["language"])
    return game
