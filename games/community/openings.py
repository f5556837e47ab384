"""What is open, for the list of open games and the GM's page (``signups`` changes it):
which games take sign-ups or reserves, how their seats stand, who waits, and the GM's view
of a game's sign-ups. Queries only: nothing here writes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Case, Count, Q, QuerySet, When

from games.community import reliability
from games.engines import registry
from games.lib import schedule
from games.models import Game, Seat, SignUp, SignUpMode
from games.notify.email_choices import normalise

State = SignUp.State
# A game whose seats in civil disorder may be offered to new players.
UNDER_WAY = (Game.Status.RUNNING, Game.Status.PAUSED)


def confirm_window() -> timedelta:
    return timedelta(hours=settings.SIGNUP_CONFIRM_HOURS)


def live(now: datetime) -> Q:
    """The sign-ups that hold an address's place in a game: confirmed and not ended, or
    waiting for their confirmation within its window."""
    return Q(state__in=[State.WAITING, State.ACCEPTED]) | Q(
        state=State.UNCONFIRMED, created_at__gt=now - confirm_window()
    )


def lapsed(signup: SignUp, now: datetime) -> bool:
    """An unconfirmed sign-up whose confirmation link expired."""
    return signup.state == State.UNCONFIRMED and signup.created_at <= now - confirm_window()


def gm_name(game: Game) -> str:
    return game.gm.get_full_name() or game.gm.get_username()


# --- what is open ---------------------------------------------------------------------------


def takes_reserves(game: Game) -> bool:
    """A first-come game under way: a sign-up confirmed now waits as a reserve."""
    return game.signup == SignUpMode.FIRST and game.status in UNDER_WAY


def open_games() -> QuerySet[Game]:
    """The games people may sign up for, those not started first, then those taking
    reserves (``takes_reserves``), each oldest first, with ``invited`` (its seats: the
    invited players, or every seat of a game under way), ``accepted`` (the sign-ups holding
    a seat) and ``reserve_count`` (the sign-ups waiting without a seat) counted."""
    recruiting = Q(status=Game.Status.RECRUITING) & ~Q(signup=SignUpMode.CLOSED)
    reserving = Q(status__in=UNDER_WAY, signup=SignUpMode.FIRST)
    waiting = Q(signups__state=State.WAITING, signups__position__isnull=True)
    return (
        Game.objects.filter(recruiting | reserving)
        .select_related("gm")
        .defer("state", "seed")
        .annotate(
            invited=Count("seats", distinct=True),
            accepted=Count("signups", filter=Q(signups__state=State.ACCEPTED), distinct=True),
            reserve_count=Count("signups", filter=waiting, distinct=True),
        )
        .order_by(Case(When(status=Game.Status.RECRUITING, then=0), default=1), "created_at", "id")
    )


def reserve_count(game: Game) -> int:
    """How many wait on the game's list (``open_games`` counts them in its own query)."""
    counted = getattr(game, "reserve_count", None)
    return reserves(game).count() if counted is None else int(counted)


def reserves(game: Game) -> QuerySet[SignUp]:
    """The game's waiting list, first first (by the time they confirmed): once a FIRST
    game is under way, its reserves."""
    return game.signups.filter(state=State.WAITING, position__isnull=True).order_by(
        "confirmed_at", "id"
    )


def seat_counts(game_ids: list[int]) -> dict[int, int]:
    """How many seats each of the games ``game_ids`` has (one query)."""
    counted = (
        Seat.objects.filter(game_id__in=game_ids)
        .order_by()
        .values("game_id")
        .annotate(n=Count("id"))
        .values_list("game_id", "n")
    )
    return dict(counted)


def offered_seats(game: Game | None = None) -> QuerySet[Seat]:
    """The seats in civil disorder of running games that offer them to a new player (of
    ``game`` only, if given), by game and position."""
    seats = Seat.objects.filter(
        game__status__in=UNDER_WAY,
        game__offer_seats=True,
        civil_disorder_at__isnull=False,
        status=Seat.Status.ACTIVE,
    )
    if game is not None:
        seats = seats.filter(game=game)
    return (
        seats.select_related("game__gm")
        .defer("game__state", "game__seed")
        .order_by("game__created_at", "game_id", "position")
    )


@dataclass(frozen=True)
class Seats:
    """The seats of a game not yet started: how many it has, how many are taken (by an
    invited player or an accepted sign-up)."""

    wanted: int
    invited: int
    accepted: int

    @property
    def taken(self) -> int:
        return self.invited + self.accepted

    @property
    def left(self) -> int:
        return max(self.wanted - self.taken, 0)


def seats(game: Game) -> Seats:
    """The game's seats, counted (two queries; ``open_games`` counts them in its own)."""
    invited = getattr(game, "invited", None)
    if invited is None:
        invited = game.seats.count()
    accepted = getattr(game, "accepted", None)
    if accepted is None:
        accepted = game.signups.filter(state=State.ACCEPTED, position__isnull=True).count()
    return Seats(wanted=game.seats_wanted or invited, invited=invited, accepted=accepted)


def is_open(game: Game) -> bool:
    return game.status == Game.Status.RECRUITING and game.signup != SignUpMode.CLOSED


def is_full(game: Game) -> bool:
    """An open game not yet started whose every seat is taken."""
    return is_open(game) and seats(game).left == 0


def would_wait(game: Game, position: int | None = None) -> bool:
    """Whether a sign-up confirmed now would wait (on the waiting list, or for the GM)
    rather than take a seat at once."""
    return (
        position is not None
        or game.signup != SignUpMode.FIRST
        or game.status != Game.Status.RECRUITING
        or seats(game).left == 0
    )


def waiting_place(signup: SignUp) -> int:
    """The sign-up's place on its game's waiting list (1: the next to get a seat)."""
    ahead = SignUp.objects.filter(
        game_id=signup.game_id, state=State.WAITING, position=signup.position
    ).filter(
        Q(confirmed_at__lt=signup.confirmed_at)
        | Q(confirmed_at=signup.confirmed_at, id__lt=signup.pk)
    )
    return ahead.count() + 1


def is_reserve(game: Game, signup: SignUp) -> bool:
    """A sign-up waiting as a reserve of a FIRST game under way."""
    return takes_reserves(game) and signup.state == State.WAITING and signup.position is None


@dataclass(frozen=True)
class Row:
    """One sign-up on the GM's game page: when it was confirmed (in the game's zone), and
    which of the GM's buttons it has."""

    signup: SignUp
    confirmed: str
    approvable: bool
    declinable: bool
    # How reliably the person has played here (games.community.reliability), for the GM choosing.
    record: reliability.Record | None = None


@dataclass(frozen=True)
class GMView:
    """The sign-ups of a game as its GM's page shows them. ``shown``: the game is or was
    open, or has sign-ups for its seats; ``seats``: the seats of a game not yet started;
    ``rows``: every sign-up but the lapsed ones, those holding a seat first; ``waiting``:
    the waiting list in order (a FIRST game's reserves once it runs); ``startable``: enough
    players seated to start now."""

    shown: bool
    is_open: bool
    seats: Seats | None
    rows: list[Row]
    waiting: list[SignUp]
    min_players: int
    startable: bool
    offered: list[Seat]
    # A first-come game under way: its waiting list is its reserves (``takes_reserves``).
    reserving: bool = False


_ORDER: dict[str, int] = {State.ACCEPTED: 0, State.WAITING: 1, State.UNCONFIRMED: 2}


def gm_view(game: Game, game_seats: list[Seat], now: datetime) -> GMView:
    """What the GM's game page shows of the game's sign-ups (``game_seats``: its seats,
    loaded already)."""
    every = [
        signup for signup in game.signups.order_by("confirmed_at", "id") if not lapsed(signup, now)
    ]
    every.sort(key=lambda signup: _ORDER.get(signup.state, 3))
    recruiting = game.status == Game.Status.RECRUITING
    counted = None
    if recruiting:
        accepted = sum(1 for s in every if s.state == State.ACCEPTED and s.position is None)
        counted = Seats(
            wanted=game.seats_wanted or len(game_seats), invited=len(game_seats), accepted=accepted
        )
    offered = [
        seat
        for seat in game_seats
        if game.offer_seats
        and seat.civil_disorder_at is not None
        and seat.status == Seat.Status.ACTIVE
    ]
    rows = []
    records = reliability.records_of(signup.email for signup in every)
    for signup in every:
        waits = signup.state == State.WAITING
        if signup.position is None:
            approvable = waits and counted is not None and counted.left > 0
            declinable = (
                recruiting and signup.state in (State.WAITING, State.ACCEPTED)
            ) or is_reserve(game, signup)
        else:
            approvable = waits and any(seat.position == signup.position for seat in offered)
            declinable = waits
        confirmed = ""
        if signup.confirmed_at is not None:
            confirmed = schedule.local_time(signup.confirmed_at, game.time_zone)
        record = records.get(normalise(signup.email))
        rows.append(Row(signup, confirmed, approvable, declinable, record))
    fewest = registry.players(game.engine, game.options).low
    return GMView(
        shown=bool(game.signup or every or offered),
        is_open=is_open(game),
        seats=counted,
        rows=rows,
        waiting=[s for s in every if s.state == State.WAITING and s.position is None],
        min_players=fewest,
        startable=counted is not None and counted.taken >= fewest,
        offered=offered,
        reserving=takes_reserves(game),
    )
