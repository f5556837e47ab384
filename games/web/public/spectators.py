"""The spectators' pages, no sign-in (docs/players.md, "Spectators and the archive"): a
public game's page ``/games/<public id>/``, the replay of a finished one
``/games/<public id>/replay/?step=N``, and the archive of finished public games
``/games/archive/`` and ``/games/archive/<game>/?player=<name>``, and the public games in
progress ``/games/live/``. A game that is not public
answers 404, the same as one that does not exist. Read only: ``games.records.spectators`` does the
work."""

from __future__ import annotations

from typing import Any

from django.core.paginator import Paginator
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.translation import gettext
from django.views.decorators.http import require_GET

from games.engines import registry
from games.lib import schedule
from games.models import Game
from games.notify import reports
from games.records import spectators
from games.web.common import history_before
from moderator.numbers import PAGES_MOST, STEPS_MOST, whole_number

# The longest player name the archive searches for (a seat's name is at most 60).
SEARCH_LENGTH = 60


def _public_game(public_id: str) -> Game:
    return get_object_or_404(spectators.public_games(), public_id=public_id)


@require_GET
def game_page(request: HttpRequest, public_id: str) -> HttpResponse:
    """What everybody may see of a public game: the public board and events, the step and
    its deadline, and once finished the standings and a link to the replay."""
    game = _public_game(public_id)
    engine = registry.get(game.engine)
    seats = list(game.seats.order_by("position"))
    game.seat_names = {seat.position: seat.name for seat in seats}
    game.bot_names = [seat.name for seat in seats if seat.bot]
    finished = game.status == Game.Status.FINISHED
    step = (
        None
        if finished
        else game.steps.filter(number=game.step_number).defer("state_before", "state_after").first()
    )
    state = None if game.state is None else engine.state_from_json(game.state)
    context: dict[str, Any] = {
        "game": game,
        "seats": seats,
        "rules": reports.rules_in_words(game),
        "step": step,
        "finished": finished,
        "deadline": schedule.local_time(step.deadline, game.time_zone) if step else None,
        "board": "" if state is None else spectators.public_board(game, game.state, step),
        "history": reports.history(game, None, before=history_before(request)),
        "standings": [
            {
                "name": game.seat_names[s.seat],
                "seat": s.seat,
                "place": s.place,
                "score": s.score,
            }
            for s in engine.standings(state) or []
        ]
        if finished and state is not None
        else [],
    }
    return render(request, "games/spectators/game.html", context)


def _step_number(request: HttpRequest) -> int:
    return whole_number(request.GET.get("step"), most=STEPS_MOST) or 1


@require_GET
def replay(request: HttpRequest, public_id: str) -> HttpResponse:
    """Step ``?step=N`` of a finished public game: its board, every event, its rolls
    checked against the revealed seed, and at the end every seat's hidden information."""
    game = _public_game(public_id)
    shown = spectators.replay_step(game, _step_number(request))
    if shown is None:
        raise Http404("the game has no replay yet")
    context = {"game": game, "shown": shown, "rules": reports.rules_in_words(game)}
    return render(request, "games/spectators/replay.html", context)


@require_GET
def archive_index(request: HttpRequest) -> HttpResponse:
    """Every game with its number of finished public games."""
    counts = dict(
        spectators.archive(None)
        .prefetch_related(None)
        .order_by()
        .values("engine")
        .annotate(n=Count("id"))
        .values_list("engine", "n")
    )
    games = [(key, engine.title, counts.get(key, 0)) for key, engine in registry.ENGINES.items()]
    return render(request, "games/spectators/archive_index.html", {"games": games})


@require_GET
def archive(request: HttpRequest, engine: str) -> HttpResponse:
    """One game's finished public games, newest first, a page at a time, searched by a
    player's name (``?player=``, any case, part of a name)."""
    if engine not in registry.ENGINES:
        raise Http404("no such game")
    player = request.GET.get("player", "").strip()
    error = ""
    if len(player) > SEARCH_LENGTH:
        error = gettext(
            "A player's name has at most %(count)d characters; search for part of it."
        ) % {"count": SEARCH_LENGTH}
        player = ""
    games = spectators.archive(engine, player)
    page = Paginator(games, spectators.ARCHIVE_ROWS).get_page(
        whole_number(request.GET.get("page"), most=PAGES_MOST)
    )
    context = {
        "engine": registry.get(engine),
        "key": engine,
        "page": page,
        "player": player,
        "error": error,
    }
    return render(request, "games/spectators/archive.html", context)


@require_GET
def live(request: HttpRequest) -> HttpResponse:
    """The public games in progress, to watch: the latest started first, a page at a time."""
    page = Paginator(spectators.live_games(), spectators.ARCHIVE_ROWS).get_page(
        whole_number(request.GET.get("page"), most=PAGES_MOST)
    )
    return render(request, "games/spectators/live.html", {"page": page})
