"""The games and players of bench/game_month.py: the mix of kinds of games, their
schedules and seats, the players' time zones and ways (web, email, never), and when a
player answers a prompt.

Imported after ``bench.configure`` (it reads the engines' registry)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.test import Client

from games.engines import registry
from games.engines.dice import SEED_BYTES
from games.lib.schedule import WEEKDAYS

# The month begins on a Monday at midnight, UTC.
START = datetime(2026, 11, 2, 0, 0, tzinfo=UTC)
# A player does nothing between these hours of their night; what they owe then waits for
# their morning (and a deadline in it passes).
NIGHT = (23, 7)


@dataclass(frozen=True)
class Kind:
    """A kind of game in the mix: its engine and options, its seats, its cadence
    ("weekly": one deadline a week, on a day and at an evening hour of the GM's; "daily": a
    day for every step; "hours": 4, 6 or 8 hours for every step, deadlines out of the
    players' nights), its share of the games by default, and how long its players take to
    answer, on average (hours: an exponential distribution)."""

    key: str
    title: str
    engine: str
    options: dict[str, Any]
    seats: tuple[int, int]
    cadence: str
    share: float
    answer_hours: float


KINDS = (
    Kind("choice", "Choice", "choice", {}, (3, 6), "weekly", 27, 36),
    Kind("suppenkasper", "Choice: Suppenkasper", "choice", {"variant": "suppenkasper"},
         (3, 5), "weekly", 8, 36),
    Kind("liars-dice", "Liar's Dice: classic", "liars-dice", {}, (3, 6), "daily", 21, 6),
    Kind("death-match", "Liar's Dice: Death Match", "liars-dice", {"profile": "genius_dm"},
         (2, 2), "daily", 4.5, 6),
    Kind("team", "Liar's Dice: team", "liars-dice", {"profile": "genius_team"}, (4, 4),
         "daily", 4.5, 6),
    Kind("drop-shy", "Drop-Shy", "drop-shy", {}, (3, 6), "hours", 20, 1.5),
    Kind("dice-survivor", "Dice Survivor", "dice-survivor", {}, (3, 6), "hours", 15, 1.5),
)  # fmt: skip
# Where the GMs and their players live (a game's players share its zone), by weight.
ZONES = (
    ("Europe/Berlin", 35),
    ("Europe/London", 15),
    ("America/New_York", 25),
    ("America/Los_Angeles", 10),
    ("Asia/Tokyo", 5),
    ("Australia/Sydney", 5),
    ("UTC", 5),
)


def parse_mix(text: str) -> dict[str, float]:
    """``choice=27,drop-shy=20``: the shares of the kinds named (the others keep theirs)."""
    known = {kind.key for kind in KINDS}
    shares = {}
    for part in filter(None, (piece.strip() for piece in text.split(","))):
        key, _, value = part.partition("=")
        if key not in known:
            raise SystemExit(f"--mix: no kind {key!r}; the kinds: {', '.join(sorted(known))}")
        shares[key] = float(value)
    return shares


@dataclass
class Player:
    """A seat's player: how they answer ("web", "email", or "never"), whether they chose a
    daily digest of their reports, their zone, their address for the rate limits, and on
    the web their browser and when it last opened a link."""

    name: str
    email: str
    way: str
    digest: bool
    zone: ZoneInfo
    address: str
    browser: Client | None = None
    opened: datetime = START


@dataclass(frozen=True)
class Plan:
    """A new game's zone, schedule and players, and its dice's seed (drawn with the
    month's other choices, so that a run with the same seed plays the same month)."""

    zone: str
    schedule: dict[str, Any]
    avoid_nights: bool
    seed: bytes
    players: list[Player] = field(default_factory=list)


class Mix:
    """The kinds of games by share, and every random choice of the month (one seed)."""

    def __init__(
        self, shares: dict[str, float], *, email: float, never: float, digest: float, seed: int
    ) -> None:
        self.kinds = list(KINDS)
        self.shares = {kind.key: shares.get(kind.key, kind.share) for kind in KINDS}
        self.email, self.never, self.digest = email, never, digest
        self.random = random.Random(seed)
        self.seated = 0

    def counts(self, games: int) -> dict[str, int]:
        """How many games of each kind, by share, rounded so that they add up."""
        total = sum(self.shares.values())
        exact = {key: games * share / total for key, share in self.shares.items()}
        counts = {key: int(value) for key, value in exact.items()}
        by_remainder = sorted(exact, key=lambda key: counts[key] - exact[key])
        for key in by_remainder[: games - sum(counts.values())]:
            counts[key] += 1
        return counts

    def first_games(self, games: int) -> list[tuple[Kind, datetime]]:
        """The games running when the month begins, each started within the day before
        (so the fast ones are at every stage of their game, the others' first deadlines
        anywhere in their first week or day)."""
        counts = self.counts(games)
        starts = [
            (START - timedelta(seconds=self.random.uniform(60, 86400)), kind)
            for kind in self.kinds
            for _ in range(counts[kind.key])
        ]
        return [(kind, at) for at, kind in sorted(starts, key=lambda pair: pair[0])]

    def plan(self, kind: Kind) -> Plan:
        """A new game's zone, schedule and players."""
        pick = self.random
        zone = pick.choices([z for z, _ in ZONES], weights=[w for _, w in ZONES])[0]
        if kind.cadence == "weekly":
            clock = f"{pick.randint(18, 21):02d}:{pick.choice((0, 30)):02d}"
            schedule: dict[str, Any] = {"kind": "weekly", "days": [pick.choice(WEEKDAYS)]}
            schedule["time"] = clock
        elif kind.cadence == "daily":
            schedule = {"kind": "interval", "seconds": 86400}
        else:
            schedule = {"kind": "interval", "seconds": pick.choice((4, 6, 8)) * 3600}
        plan = Plan(zone, schedule, kind.cadence == "hours", pick.randbytes(SEED_BYTES))
        for seat in range(pick.randint(*kind.seats)):
            self.seated += 1
            number = self.seated
            address = f"10.{number // 65536 % 256}.{number // 256 % 256}.{number % 256}"
            plan.players.append(
                Player(
                    name=f"player{seat + 1}",
                    email=f"p{number}@players.example.org",
                    way=self.way(pick.random()),
                    digest=pick.random() < self.digest,
                    zone=ZoneInfo(zone),
                    address=address,
                )
            )
        return plan

    def way(self, draw: float) -> str:
        """How a player answers, for a ``draw`` in [0, 1): never, by email or on the web."""
        if draw < self.never:
            return "never"
        return "email" if draw < self.never + self.email else "web"

    def answer_at(
        self, kind: Kind, player: Player, opened: datetime, deadline: datetime
    ) -> datetime | None:
        """When ``player`` answers a prompt of a step opened at ``opened``: after their
        kind's usual while, at least a minute, never in their night (then in their
        morning); None if they never answer, or not before the deadline."""
        if player.way == "never":
            return None
        pick = self.random
        at = opened + timedelta(minutes=1, hours=pick.expovariate(1 / kind.answer_hours))
        local = at.astimezone(player.zone)
        late, early = NIGHT
        if local.hour >= late or local.hour < early:
            morning = local if local.hour < early else local + timedelta(days=1)
            morning = morning.replace(hour=early, minute=0, second=0, microsecond=0)
            at = (morning + timedelta(minutes=pick.uniform(0, 120))).astimezone(UTC)
        return at if at < deadline - timedelta(minutes=1) else None


def order_text(engine_key: str, state_json: Any, position: int) -> str:
    """What the player sends: their game's first autopilot's choice (else its no-moves
    default), as they would type it."""
    engine = registry.get(engine_key)
    state = engine.state_from_json(state_json)
    strategies = registry.strategies(engine_key)
    order = strategies[0].play(state, position) if strategies else engine.default(state, position)
    return str(engine.canonical(state, position, order))
