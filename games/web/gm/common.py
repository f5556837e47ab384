"""What the GM's pages read the same way: the games a GM may run (their own; every game
for a superuser), one of them or a 404, and a game's overview (its open step, who owes an
order, the seats in trouble) for the dashboard and the game's panel. No view lives here,
so the GM's view modules share these without importing one another."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Prefetch, QuerySet
from django.http import HttpRequest
from django.shortcuts import get_object_or_404

from games.engines import registry
from games.lib import schedule
from games.models import Game, Order, Seat, Step


def games_of(request: HttpRequest) -> QuerySet[Game]:
    """The games ``request.user`` may run: their own, or every game for a superuser. Loaded
    without the seed, sealed until the game is finished: the game page reads a finished
    game's seed on its own."""
    games = Game.objects.defer("seed")
    if request.user.is_superuser:
        return games
    return games.filter(gm_id=request.user.pk)


def with_overview(games: QuerySet[Game]) -> QuerySet[Game]:
    """``games`` with what an overview reads, in three queries whatever their number.

    The prefetches are filtered: ``game.steps.all()`` holds the open step only, and
    ``step.orders.all()`` the orders that were not NMR defaults."""
    answers = Order.objects.exclude(source=Order.Source.DEFAULT).only("id", "step_id", "seat_id")
    open_steps = (
        Step.objects.filter(status=Step.Status.OPEN)
        .defer("state_before", "state_after")
        .prefetch_related(Prefetch("orders", queryset=answers))
    )
    return games.prefetch_related(
        Prefetch("seats", queryset=Seat.objects.order_by("position")),
        Prefetch("steps", queryset=open_steps),
    )


@dataclass(frozen=True)
class Overview:
    game: Game
    # The way it is played, as GMs pick it: "Liar's Dice: Death Match".
    variant: str
    step: Step | None
    deadline: str
    owing: list[str]
    nmr: list[Seat]
    failing: list[Seat]


def overview(game: Game) -> Overview:
    """Status of a game loaded through ``with_overview``: the open step, its deadline in the
    game's zone, who is prompted and has sent no order yet, and the seats with NMRs."""
    seats = list(game.seats.all())
    step = next(iter(game.steps.all()), None)
    owing: list[str] = []
    deadline = ""
    if step is not None:
        answered = {order.seat_id for order in step.orders.all()}
        prompted = set(step.prompted_seats)
        owing = [s.name for s in seats if s.position in prompted and s.pk not in answered]
        deadline = schedule.local_time(step.deadline, game.time_zone)
    return Overview(
        game,
        str(registry.title(game.engine, game.options)),
        step,
        deadline,
        owing,
        [s for s in seats if s.nmr_count],
        [s for s in seats if s.email_failing],
    )


def own_game(request: HttpRequest, game_id: int, games: QuerySet[Game] | None = None) -> Game:
    """The game ``game_id`` of ``games`` (by default ``games_of``); a 404 for any other."""
    return get_object_or_404(games if games is not None else games_of(request), pk=game_id)
