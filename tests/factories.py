"""Factories without surprises: every default is visible here.

Two ways to a game. ``GameFactory`` writes a game's row and its seats directly, as
``postal.create_game`` would leave them for addresses with no saved choices (create_game
also gives a new seat its player's default reports and language), for a test that needs a
game but is not about creating or starting one. ``new_game`` and ``started_game`` go through
``postal.create_game`` (and ``postal.start_game``), for a test that needs what they do:
the checks, step 1 with its prompts, dice and reports.

Players are given as a number (the first of ``NAMES``), as names, or as
``postal.Player``; a name's address is name@example.org.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, TypedDict, Unpack

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User

from games import postal
from games.engines import registry
from games.models import Event, Game, Seat, Step

NAMES = ["ann", "bob", "cy", "dee", "eve", "fay", "gus", "hal"]
# The dice seed of every game a test starts, unless it asks for another.
SEED = bytes(range(32))
EVERY_HOUR = {"kind": "interval", "seconds": 3600}
# postal.create_game's own default.
EVERY_TWO_DAYS = {"kind": "interval", "seconds": 48 * 3600}

Players = int | Sequence[str | postal.Player]


class GameSettings(TypedDict, total=False):
    """``postal.create_game``'s settings besides the engine, players and GM; each left
    out takes ``create_game``'s default, and the title is "Test <the engine's title>"."""

    title: str
    options: dict[str, Any]
    time_zone: str
    schedule_spec: dict[str, Any]
    early_processing: bool
    rated: bool
    missed: postal.MissedTurns
    signup: str
    seats_wanted: int | None
    public: str
    private_press: bool
    language: str


class GMFactory(factory.django.DjangoModelFactory[User]):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"gm{n}")
    email = factory.LazyAttribute(lambda gm: f"{gm.username}@example.org")


class SeatFactory(factory.django.DjangoModelFactory[Seat]):
    """A seat row; give it its ``game`` and ``position``."""

    class Meta:
        model = Seat

    name = factory.LazyAttribute(lambda seat: NAMES[seat.position])
    email = factory.LazyAttribute(lambda seat: f"{seat.name}@example.org")


def seat_rows(game: Game, create: bool, players: Players | None, **kwargs: Any) -> None:
    """``GameFactory``'s seats: ``players`` as ``new_game`` takes them, ann, bob and cy
    when None."""
    if not create:
        return
    for position, player in enumerate(players_of(3 if players is None else players)):
        SeatFactory.create(
            game=game,
            position=position,
            name=player.name,
            email=player.email,
            time_zone=player.time_zone,
            language=player.language,
        )


class GameFactory(factory.django.DjangoModelFactory[Game]):
    """A Choice game's row, recruiting (not started), titled as ``new_game`` titles it,
    with seats for ann, bob and cy, written directly: no checks, no step, no report.
    ``seats=`` takes players as ``new_game`` does (``GameFactory.create(seats=2)``,
    ``seats=["ann", "dee"]``)."""

    class Meta:
        model = Game
        skip_postgeneration_save = True

    engine = "choice"
    title = factory.LazyAttribute(lambda game: f"Test {registry.get(game.engine).title}")
    gm = factory.SubFactory(GMFactory)
    status = Game.Status.RECRUITING
    schedule = factory.LazyFunction(lambda: dict(EVERY_TWO_DAYS))

    seats = factory.PostGeneration(seat_rows)


def players_of(players: Players) -> list[postal.Player]:
    """``players`` as ``postal.Player``: a number is the first of ``NAMES``, a name plays
    from name@example.org."""
    if isinstance(players, int):
        players = NAMES[:players]
    return [
        player
        if isinstance(player, postal.Player)
        else postal.Player(player, f"{player}@example.org")
        for player in players
    ]


def new_game(
    engine_key: str = "choice",
    *,
    players: Players = 3,
    gm: User | None = None,
    **settings: Unpack[GameSettings],
) -> Game:
    """A game made by ``postal.create_game``, not started; a new GM unless ``gm`` is given."""
    settings.setdefault("title", f"Test {registry.get(engine_key).title}")
    return postal.create_game(
        gm=gm or GMFactory.create(),
        engine_key=engine_key,
        players=players_of(players),
        **settings,
    )


def started_game(
    engine_key: str = "choice",
    *,
    now: datetime,
    seed: bytes = SEED,
    players: Players = 3,
    gm: User | None = None,
    **settings: Unpack[GameSettings],
) -> Game:
    """``new_game``, started by ``postal.start_game`` at ``now``: step 1 open with its
    dice drawn from ``seed`` and its reports queued."""
    game = new_game(engine_key, players=players, gm=gm, **settings)
    return postal.start_game(game.pk, now=now, seed=seed)


def choice_game(
    players: Players = 3, gm: User | None = None, **settings: Unpack[GameSettings]
) -> Game:
    """``new_game`` of Choice, not started, for ``players`` seats (ann, bob, cy, ...)."""
    return new_game("choice", players=players, gm=gm, **settings)


def seat_page(game: Game, position: int) -> str:
    """The address of a seat's page (``games:seat``): every seat of a game has its own,
    and a magic link's POST redirects to it."""
    return f"/play/{game.pk}/{position}/"


def settings_page(game: Game, position: int) -> str:
    """The address of a seat's settings page (``games:seat_settings``): email, reminders,
    language, calendar, missed turns; each form there goes back to it."""
    return f"/play/{game.pk}/{position}/settings/"


def long_game(game: Game, steps: int) -> Game:
    """A started ``game`` at step 1 made a game at step ``steps``: the steps before it
    written in bulk as resolved (the open step's prompts and state, one public event each),
    the open step renumbered. Cheap (three statements), for the pages whose length must
    not grow with the game's; the steps' states are not a game that was played."""
    opened = game.steps.get(number=1)
    Step.objects.filter(pk=opened.pk).update(number=steps)
    done = Step.objects.bulk_create(
        Step(
            game=game,
            number=number,
            status=Step.Status.DONE,
            opened_at=opened.opened_at,
            deadline=opened.deadline,
            prompts=opened.prompts,
            state_before=opened.state_before,
            state_after=opened.state_before,
            closed_at=opened.opened_at,
            closed_by=Step.Closed.DEADLINE,
        )
        for number in range(1, steps)
    )
    Event.objects.bulk_create(
        Event(game=game, step=step, text=f"step {step.number}: everyone played") for step in done
    )
    Game.objects.filter(pk=game.pk).update(step_number=steps)
    game.refresh_from_db()
    return game


def without_footer(text: str) -> str:
    """An email's text part without the line every email ends with (the privacy page's,
    appended by moderator/mail/building.py after a '-- ' line): its body, ending with one
    line break."""
    body, marker, footer = text.rpartition("\n\n-- \n")
    assert marker and footer.rstrip().endswith("/privacy/"), text[-200:]
    return body + "\n"
