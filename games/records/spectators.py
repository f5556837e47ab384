"""What anybody may watch of a game, without a seat (docs/players.md, "Spectators and the
archive"): which games are public, a public game's page, the replay of a finished one step
by step, and the archive of finished public games.

A spectator sees what the engine shows everybody (``engine.view(state, None)``) and the
public events, never a seat's hidden information, until the game is over: then the replay
shows every event and each seat's private view of the final state, as the revealed seed
lets anybody recompute every roll.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.db.models import Prefetch, Q, QuerySet
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

from games.engines import registry
from games.engines.dice import face
from games.lib import words
from games.models import DiceRoll, Event, Game, Publicity, Seat, Step
from games.notify import reports

# A game a GM made public now is watched from its start to its end.
WATCHED = (Game.Status.RUNNING, Game.Status.PAUSED, Game.Status.FINISHED)

# A game in progress, watched as it is played.
UNDER_WAY = (Game.Status.RUNNING, Game.Status.PAUSED)

# The archive, and the list of games to watch, show this many games a page.
ARCHIVE_ROWS = 25


def public_games() -> QuerySet[Game]:
    """Every game anybody may watch: the finished ones whose GM left them public once
    finished (the default), and the started ones the GM made public now."""
    return Game.objects.filter(
        Q(public=Publicity.AUTO, status=Game.Status.FINISHED)
        | Q(public=Publicity.YES, status__in=WATCHED)
    )


def is_public(game: Game) -> bool:
    if game.public == Publicity.AUTO:
        return game.status == Game.Status.FINISHED
    return game.public == Publicity.YES and game.status in WATCHED


def live_games() -> QuerySet[Game]:
    """The games anybody may watch now, in progress: the started ones their GM made public
    now, the latest started first, with their seats (two queries)."""
    return (
        Game.objects.filter(public=Publicity.YES, status__in=UNDER_WAY)
        .defer("state", "seed")
        .order_by("-started_at", "-pk")
        .prefetch_related(Prefetch("seats", queryset=Seat.objects.order_by("position")))
    )


def archive(engine: str | None, player: str = "") -> QuerySet[Game]:
    """The finished public games, newest first: of one game (its registry key) or of
    all, and with ``player`` those where a seat's name holds it (any case)."""
    games = public_games().filter(status=Game.Status.FINISHED)
    if engine is not None:
        games = games.filter(engine=engine)
    if player:
        games = games.filter(pk__in=Seat.objects.filter(name__icontains=player).values("game_id"))
    return games.order_by("-finished_at", "-pk").prefetch_related("seats")


def public_board(game: Game, state_json: Any, step: Step | None) -> str:
    """The board of ``state_json`` as everybody sees it, through the game's templates."""
    engine = registry.get(game.engine)
    context = {
        "game": game,
        "engine": engine,
        "view": words.shown(engine.view(engine.state_from_json(state_json), None)),
        "step": step,
        "finished": step is None,
        "options": reports.options_in_play(game, engine),
    }
    return render_to_string(reports.engine_templates(game.engine, "boards", "html"), context)


_ID = re.compile(r'(?<=\s)id="([^"]*)"')


def own_ids(html: str, prefix: str) -> SafeString:
    """Rendered blocks with every id prefixed: a page showing the blocks of several seats
    one after the other (the GM's game page, the replay's end) names each element once."""
    return mark_safe(_ID.sub(lambda match: f'id="{prefix}{match[1]}"', html))  # ids only


@dataclass(frozen=True)
class Roll:
    """One die of the record with the value the revealed seed gives it; None for a die
    of a game continued from paper that its GM entered (rolled by hand)."""

    index: int
    sides: int
    value: int
    recomputed: int | None

    @property
    def ok(self) -> bool:
        return self.value == self.recomputed

    @property
    def entered(self) -> bool:
        return self.recomputed is None


@dataclass(frozen=True)
class Hidden:
    """One seat's private view of a step, shown once the game is over."""

    name: str
    private: SafeString


@dataclass(frozen=True)
class ReplayStep:
    """Step ``number`` of a finished game as the replay shows it: the board after it, all
    its events (with who saw each, None: everybody), its rolls checked against the seed,
    and each seat's private view while it was played (the game being over, nothing is
    hidden any more)."""

    number: int
    last: int
    board: str
    events: list[tuple[str, list[str] | None]]
    rolls: list[Roll]
    hidden: list[Hidden]

    @property
    def previous(self) -> int | None:
        return self.number - 1 if self.number > 1 else None

    @property
    def next(self) -> int | None:
        return self.number + 1 if self.number < self.last else None


def replay_step(game: Game, number: int) -> ReplayStep | None:
    """Step ``number`` of finished ``game`` (clamped to its steps), or None when the game
    has no step or its seed is not revealed."""
    if game.status != Game.Status.FINISHED or not game.seed_revealed:
        return None
    last = game.steps.count()
    if last == 0:
        return None
    number = min(max(number, 1), last)
    step = game.steps.get(number=number)
    seats = list(game.seats.order_by("position"))
    names = {seat.position: seat.name for seat in seats}
    game.seat_names = names
    engine = registry.get(game.engine)
    events: list[tuple[str, list[str] | None]] = []
    for text, audience, stored in (
        Event.objects.filter(step=step).order_by("id").values_list("text", "audience", "message")
    ):
        if audience is None:
            events.append((words.Said(text, stored), None))
            continue
        # Told to a seat ("your dice are"), read here by anyone: in an onlooker's words.
        seen_by = [names.get(p, str(p)) for p in audience]
        events.append((words.onlooker(engine, text, stored, seen_by), seen_by))
    seed = bytes(game.seed or b"")
    rolls = [
        Roll(
            index,
            sides,
            value,
            face(seed, game.pk, index, sides) if index >= game.paper_dice else None,
        )
        for index, sides, value in DiceRoll.objects.filter(step=step)
        .order_by("index")
        .values_list("index", "sides", "value")
    ]
    state = step.state_after if step.state_after is not None else step.state_before
    board = public_board(game, state, None if number == last else step)
    return ReplayStep(
        number=number,
        last=last,
        board=board,
        events=events,
        rolls=rolls,
        hidden=_hidden_during(game, seats, step),
    )


def _hidden_during(game: Game, seats: list[Seat], step: Step) -> list[Hidden]:
    """Each seat's private block while ``step`` was played (its state before: the cups
    the players held when they gave their orders), through the game's templates."""
    engine = registry.get(game.engine)
    state = engine.state_from_json(step.state_before)
    hidden = []
    for seat in seats:
        # Read by anyone: the block says what the seat saw, never "you".
        context = reports.seat_context(game, seat, engine, state, step, reader="public")
        private = render_to_string(context["private_html"], context)
        # Every seat's block on one page: each id prefixed, so it names one element.
        hidden.append(Hidden(seat.name, own_ids(private, f"seat-{seat.position}-")))
    return hidden
