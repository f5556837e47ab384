"""Ratings per game (engine) from the finished rated games (``Game.rated``): each
address's skill estimate ``mu`` and its uncertainty ``sigma``, shown as the conservative
ordinal ``mu - 3 sigma``. docs/players.md ("Ratings") says why openskill's Plackett-Luce
model: it rates free-for-all games of any number of players by their finishing places.

A game counts once, when it finishes: ``on_game_finished`` (a receiver of
``games.lib.signals.game_finished``, inside the transaction that finishes the game) claims it
by setting ``Game.rated_at`` where it is still empty, and updates the ratings of its
players in that transaction. ``rerate`` recomputes an engine's ratings from its finished
rated games in finishing order, through the same ``_rated`` step, so the two agree exactly.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import F, QuerySet
from openskill.models import PlackettLuce

from games.engines import registry
from games.models import Game, Rating, Seat
from games.notify.email_choices import normalise

# openskill's defaults: a new player is mu 25, sigma 25/3, so their ordinal starts at 0.
MODEL = PlackettLuce()
# How many sigmas the shown rating stays below mu: 3 is openskill's (and TrueSkill's) own.
SIGMAS = 3


def ordinal(mu: float, sigma: float) -> float:
    """The rating shown: skill low enough that the player is better with 99.7% odds."""
    return mu - SIGMAS * sigma


@dataclass(frozen=True)
class Place:
    """An address's place in a finished game, and the name it played under."""

    email: str
    name: str
    place: int


@dataclass
class Skill:
    """A rating while it is worked out: ``updated_at``, its latest game's end."""

    name: str
    mu: float = MODEL.mu
    sigma: float = MODEL.sigma
    games: int = 0
    updated_at: datetime | None = None


def places(game: Game, state: Any, seats: Iterable[Seat]) -> list[Place]:
    """The places of ``game`` (finished, ``state`` its final state) by address: a seat
    handed to someone else (``REPLACED``) is not rated, and an address holding several
    seats counts once, at its best place. Sorted by address, so every reading of the same
    game rates it the same."""
    engine = registry.get(game.engine)
    by_position = {seat.position: seat for seat in seats if seat.status != Seat.Status.REPLACED}
    best: dict[str, Place] = {}
    for standing in engine.standings(state) or []:
        seat = by_position.get(standing.seat)
        if seat is None:
            continue
        email = normalise(seat.email)
        if email not in best or standing.place < best[email].place:
            best[email] = Place(email, seat.name, standing.place)
    return [best[email] for email in sorted(best)]


def _rated(skills: dict[str, Skill], result: list[Place], when: datetime) -> None:
    """Take one game's ``result`` into ``skills`` (missing addresses start new). A game
    with fewer than two addresses rates nobody: there is nobody to compare with."""
    if len(result) < 2:
        return
    for place in result:
        skills.setdefault(place.email, Skill(place.name))
    teams = [[MODEL.rating(skills[p.email].mu, skills[p.email].sigma)] for p in result]
    after = MODEL.rate(teams, ranks=[float(p.place) for p in result])
    for place, [rating] in zip(result, after, strict=True):
        skill = skills[place.email]
        skill.name, skill.mu, skill.sigma = place.name, rating.mu, rating.sigma
        skill.games += 1
        skill.updated_at = when


# --- when a game finishes -----------------------------------------------------------------


def on_game_finished(sender: Any, game: Game, state: Any, now: datetime, **kwargs: Any) -> None:
    """A game has finished (inside its transaction): if it is rated, count it once."""
    if not game.rated:
        return
    rate_game(game, state, now=now)


def rate_game(game: Game, state: Any, *, now: datetime) -> bool:
    """Take the finished ``game`` (``state``: its final state) into its engine's ratings,
    unless it was counted already; returns whether it was counted now. Run inside the
    transaction that finished the game, which holds its row locked."""
    with transaction.atomic():
        if not Game.objects.filter(pk=game.pk, rated_at__isnull=True).update(rated_at=now):
            return False
        game.rated_at = now  # a later save of this instance keeps the mark
        result = places(game, state, game.seats.all())
        if len(result) < 2:
            return True
        emails = [place.email for place in result]
        # Rows for newcomers first (a game finishing at the same time with the same
        # newcomer waits for this one, then finds its row), then every row locked, in
        # address order so that two games lock their shared players in the same order.
        Rating.objects.bulk_create(
            [
                Rating(
                    engine=game.engine,
                    email=p.email,
                    name=p.name,
                    mu=MODEL.mu,
                    sigma=MODEL.sigma,
                    updated_at=now,
                )
                for p in result
            ],
            ignore_conflicts=True,
        )
        rows = {
            row.email: row
            for row in Rating.objects.select_for_update()
            .filter(engine=game.engine, email__in=emails)
            .order_by("email")
        }
        skills = {email: _skill(row) for email, row in rows.items()}
        _rated(skills, result, now)
        _write(rows, skills)
    return True


def _skill(row: Rating) -> Skill:
    """A row as a skill (a row just inserted holds a new player: no game yet)."""
    return Skill(row.name, row.mu, row.sigma, row.games, row.updated_at)


def _write(rows: dict[str, Rating], skills: dict[str, Skill]) -> None:
    for email, row in rows.items():
        skill = skills[email]
        row.name, row.mu, row.sigma = skill.name, skill.mu, skill.sigma
        row.games, row.updated_at = skill.games, skill.updated_at or row.updated_at
    Rating.objects.bulk_update(list(rows.values()), ["name", "mu", "sigma", "games", "updated_at"])


# --- recomputing ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Rerated:
    games: int
    players: int


def rerate(engine_key: str, *, now: datetime) -> Rerated:
    """Recompute every rating of ``engine_key`` from its finished rated games, in
    finishing order (a rule change or a fix rebuilds them); KeyError for an unknown key.
    The engine's rows are locked before the games are read: a game finishing meanwhile
    either was read, or waits and is then counted on top of the recomputed ratings."""
    registry.get(engine_key)
    with transaction.atomic():
        rows = {
            row.email: row
            for row in Rating.objects.select_for_update()
            .filter(engine=engine_key)
            .order_by("email")
        }
        skills: dict[str, Skill] = {}
        counted = 0
        for game in _rated_games(engine_key):
            engine = registry.get(game.engine)
            state = engine.state_from_json(game.state)
            assert game.finished_at is not None  # a finished game has its end
            _rated(skills, places(game, state, game.seats.all()), game.finished_at)
            counted += 1
        Rating.objects.filter(engine=engine_key).exclude(email__in=list(skills)).delete()
        _write({email: row for email, row in rows.items() if email in skills}, skills)
        Rating.objects.bulk_create(
            Rating(
                engine=engine_key,
                email=email,
                name=skill.name,
                mu=skill.mu,
                sigma=skill.sigma,
                games=skill.games,
                updated_at=skill.updated_at or now,
            )
            for email, skill in skills.items()
            if email not in rows
        )
        finished = Game.objects.filter(engine=engine_key, status=Game.Status.FINISHED)
        finished.filter(rated=True, rated_at__isnull=True).update(rated_at=now)
        finished.filter(rated=False).exclude(rated_at=None).update(rated_at=None)
    return Rerated(games=counted, players=len(skills))


def _rated_games(engine_key: str) -> Iterable[Game]:
    games = Game.objects.filter(engine=engine_key, status=Game.Status.FINISHED, rated=True)
    # A chunk of final states in memory at a time, each chunk's seats in one query.
    return (
        games.order_by("finished_at", "pk")
        .only("pk", "engine", "state", "finished_at")
        .prefetch_related("seats")
        .iterator(chunk_size=200)
    )


# --- reading ----------------------------------------------------------------------------------


def ranking(engine_key: str) -> QuerySet[Rating]:
    """The ratings of a game, best first (by ordinal, then more games, then name)."""
    return (
        Rating.objects.filter(engine=engine_key)
        .annotate(ordinal=F("mu") - SIGMAS * F("sigma"))
        .order_by("-ordinal", "-games", "name", "email")
    )


def shown(rating: Rating) -> int:
    """The ordinal as the pages show it: rounded."""
    return round(ordinal(rating.mu, rating.sigma))
