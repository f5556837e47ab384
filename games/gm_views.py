"""The GM panel: a dashboard of the GM's games, a form to create one, a page per game with
its actions. Thin: each action validates a form and calls one ``games.postal`` function,
then redirects back with its message (PRG). A GM sees their own games only; any other
game answers 404. Superusers, who see everything in the admin, may open any game."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.db.models import Prefetch, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from games import postal, reports
from games.engines import registry
from games.gm_forms import (
    DATETIME_LOCAL,
    CreateGameForm,
    ExtendForm,
    GameForm,
    OrderForm,
    ReplaceForm,
    SeatForm,
    first_error,
)
from games.models import Event, Game, Order, Seat, Step


def games_of(request: HttpRequest) -> QuerySet[Game]:
    """The games ``request.user`` may run: their own, or every game for a superuser."""
    if request.user.is_superuser:
        return Game.objects.all()
    return Game.objects.filter(gm_id=request.user.pk)


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
    step: Step | None
    deadline: str
    owing: list[str]
    nmr: list[Seat]


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
        deadline = reports.local_time(step.deadline, game.time_zone)
    return Overview(game, step, deadline, owing, [s for s in seats if s.nmr_count])


def _game(request: HttpRequest, game_id: int, games: QuerySet[Game] | None = None) -> Game:
    return get_object_or_404(games if games is not None else games_of(request), pk=game_id)


# --- pages ---------------------------------------------------------------------------------


@staff_member_required
def dashboard(request: HttpRequest) -> HttpResponse:
    games = with_overview(Game.objects.filter(gm_id=request.user.pk).defer("state", "seed"))
    rows = [overview(game) for game in games.order_by("-created_at", "-id")]
    return render(request, "games/gm/dashboard.html", {"rows": rows})


@staff_member_required
def create(request: HttpRequest) -> HttpResponse:
    form = CreateGameForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            game = postal.create_game(
                gm=request.user,
                engine_key=data["engine"],
                title=data["title"],
                players=data["players"],
                options=data["options"],
                time_zone=data["time_zone"],
                schedule_spec=data["schedule"],
                early_processing=data["early_processing"],
            )
        except postal.PostalError as error:
            form.add_error(None, error.message)
        else:
            messages.success(request, f"{game.title} is created; invite the players next.")
            return redirect("gm:game", game.pk)
    engines = list(registry.ENGINES.values())
    return render(request, "games/gm/create.html", {"form": form, "engines": engines})


@staff_member_required
def game_page(request: HttpRequest, game_id: int) -> HttpResponse:
    game = _game(request, game_id, with_overview(games_of(request)))
    status = overview(game)
    seats = list(game.seats.all())
    engine = registry.get(game.engine)
    public: str | None = None
    hidden: list[tuple[Seat, str]] = []
    if game.state is not None:
        state = engine.state_from_json(game.state)
        public = json.dumps(engine.view(state, None), indent=2)
        hidden = [(s, json.dumps(engine.view(state, s.position), indent=2)) for s in seats]
    names = {seat.position: seat.name for seat in seats}
    events = [
        (event, None if event.audience is None else [names.get(p, p) for p in event.audience])
        for event in Event.objects.filter(game=game).select_related("step").order_by("id")
    ]
    extend_initial = {}
    if status.step is not None:
        local = status.step.deadline.astimezone(ZoneInfo(game.time_zone))
        extend_initial = {"deadline": local.strftime(DATETIME_LOCAL)}
    context = {
        "game": game,
        "status": status,
        "seats": seats,
        "engine": engine,
        "public": public,
        "hidden": hidden,
        "events": events,
        "rotate_form": SeatForm(game=game, auto_id="rotate_%s"),
        "resend_form": SeatForm(game=game, auto_id="resend_%s"),
        "order_form": OrderForm(game=game, auto_id="order_%s"),
        "replace_form": ReplaceForm(game=game, auto_id="replace_%s"),
        "extend_form": ExtendForm(game=game, initial=extend_initial),
        "seed": game.seed.hex() if game.status == Game.Status.FINISHED and game.seed else None,
    }
    return render(request, "games/gm/game.html", context)


# --- actions -------------------------------------------------------------------------------


def _invite(form: Any, now: datetime) -> str:
    count = postal.invite(form.game.pk, now=now)
    return f"Invitations are on their way to {count} players."


def _start(form: Any, now: datetime) -> str:
    postal.start_game(form.game.pk, now=now)
    return "The game has started; the first reports are on their way."


def _extend(form: ExtendForm, now: datetime) -> str:
    step = postal.extend_deadline(form.game.pk, deadline=form.cleaned_data["deadline"], now=now)
    when = reports.local_time(step.deadline, form.game.time_zone)
    return f"The deadline of step {step.number} is now {when}; every player is told."


def _pause(form: Any, now: datetime) -> str:
    postal.pause(form.game.pk, now=now)
    return "The game is paused."


def _resume(form: Any, now: datetime) -> str:
    postal.resume(form.game.pk, now=now)
    return "The game runs again; the deadline moved on by the time it was paused."


def _resolve(form: Any, now: datetime) -> str:
    if not postal.resolve_now(form.game.pk, now=now):
        raise postal.PostalError(f"nothing was resolved: the game is {form.game.status}")
    return "The step is resolved; missing orders got their NMR defaults."


def _order(form: OrderForm, now: datetime) -> str:
    order = postal.accept_order(
        game_id=form.game.pk,
        position=form.cleaned_data["seat"],
        text=form.cleaned_data["text"],
        source=Order.Source.GM,
        now=now,
    )
    return f"Order of {order.seat.name} accepted: {order.canonical}"


def _replace(form: ReplaceForm, now: datetime) -> str:
    seat = postal.replace_player(
        form.game.pk,
        position=form.cleaned_data["seat"],
        name=form.cleaned_data["name"],
        email=form.cleaned_data["email"],
        now=now,
    )
    return f"Seat {seat.position + 1} is now played by {seat.name} <{seat.email}>; a link is sent."


def _rotate(form: SeatForm, now: datetime) -> str:
    postal.rotate_link(form.game.pk, position=form.cleaned_data["seat"], now=now)
    return f"{form.seat_name()} has a new link; the old links no longer work."


def _resend(form: SeatForm, now: datetime) -> str:
    postal.resend_report(form.game.pk, position=form.cleaned_data["seat"], now=now)
    return f"The current report is sent to {form.seat_name()} again."


def _clear(form: Any, now: datetime) -> str:
    postal.clear_needs_gm(form.game.pk)
    return "Cleared: the sweep tries the open step again."


ACTIONS: dict[str, tuple[type[GameForm], Callable[[Any, datetime], str]]] = {
    "invite": (GameForm, _invite),
    "start": (GameForm, _start),
    "extend": (ExtendForm, _extend),
    "pause": (GameForm, _pause),
    "resume": (GameForm, _resume),
    "resolve": (GameForm, _resolve),
    "order": (OrderForm, _order),
    "replace": (ReplaceForm, _replace),
    "rotate": (SeatForm, _rotate),
    "resend": (SeatForm, _resend),
    "clear": (GameForm, _clear),
}


@staff_member_required
@require_POST
def act(request: HttpRequest, game_id: int, action: str) -> HttpResponse:
    """Run one GM action on one game; its message, success or PostalError, shows on the
    game page."""
    if action not in ACTIONS:
        raise Http404("no such action")
    game = _game(request, game_id)
    form_class, run = ACTIONS[action]
    form = form_class(request.POST, game=game)
    if not form.is_valid():
        messages.error(request, first_error(form))
    else:
        try:
            messages.success(request, run(form, timezone.now()))
        except postal.PostalError as error:
            messages.error(request, error.message)
    return redirect("gm:game", game.pk)
