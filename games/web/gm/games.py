"""The GM's games: the dashboard of the games they run, the new-game page (every game and
profile, and the GM's saved templates), a game's form, and a game continued from paper.
Thin: each form calls one ``games.postal`` function and goes to the new game's panel
(``games.web.gm.game``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from games import postal
from games.community import signups
from games.engines import registry
from games.engines.base import Engine, Profile, counted
from games.lib import schedule
from games.models import Game, GameTemplate, Publicity, SignUp
from games.postal import access, game_templates
from games.web.gm.common import overview, own_game, with_overview
from games.web.gm.forms import OFF, CreateGameForm, EditGameForm, ImportGameForm
from games.web.gm.signin import gm_required


@gm_required
def dashboard(request: HttpRequest) -> HttpResponse:
    games = with_overview(Game.objects.filter(gm_id=request.user.pk).defer("state", "seed"))
    rows = [overview(game) for game in games.order_by("-created_at", "-id")]
    return render(
        request,
        "games/gm/dashboard.html",
        {"rows": rows, "calendar_url": access.gm_calendar_url(request.user)},
    )


@dataclass(frozen=True)
class Way:
    """One way to play on the new-game page: a game's profile and where its form is."""

    profile: Profile
    url: str
    engine: Engine[Any, Any, Any]


def _form_url(game: str, profile: str) -> str:
    if profile:
        return reverse("gm:create_profile", args=[game, profile])
    return reverse("gm:create_game", args=[game])


@gm_required
def create(request: HttpRequest) -> HttpResponse:
    """Pick what to play: every game and profile by name, and the GM's saved templates."""
    ways = [
        Way(profile, _form_url(key, profile.key), registry.get(key))
        for key, profile in registry.profiles()
    ]
    templates = [
        (
            template,
            *registry.describe(template.engine, template.options),
            schedule.describe(template.schedule),
        )
        for template in GameTemplate.objects.filter(gm_id=request.user.pk)
        if template.engine in registry.ENGINES
    ]
    return render(request, "games/gm/choose.html", {"ways": ways, "templates": templates})


@gm_required
def create_game(request: HttpRequest, game: str, profile: str = "") -> HttpResponse:
    """The new-game form of one game and profile."""
    try:
        chosen = registry.settings(game).profile(profile)
    except KeyError:
        raise Http404("no such game") from None
    return _create(request, game, chosen, None)


@gm_required
def create_from(request: HttpRequest, template_id: int) -> HttpResponse:
    """The new-game form filled in from one of the GM's templates."""
    template = get_object_or_404(GameTemplate, gm_id=request.user.pk, pk=template_id)
    if template.engine not in registry.ENGINES:
        raise Http404("no such game")
    profile = registry.settings(template.engine).profile_of(template.options)
    return _create(request, template.engine, profile, template)


def _create(
    request: HttpRequest, game: str, profile: Profile, template: GameTemplate | None
) -> HttpResponse:
    initial: dict[str, Any] = {}
    if template is not None:
        initial = {
            "time_zone": template.time_zone,
            "schedule": schedule.describe(template.schedule),
            "early_processing": template.early_processing,
            "language": template.language,
        }
    form = CreateGameForm(
        request.POST or None,
        game=game,
        profile=profile.key,
        chosen=None if template is None else template.options,
        initial=initial,
    )
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            new = postal.create_game(
                gm=request.user,
                engine_key=game,
                title=data["title"],
                players=data["players"],
                options=data["options"],
                time_zone=data["time_zone"],
                schedule_spec=data["schedule"],
                early_processing=data["early_processing"],
                rated=data["rated"],
                missed=form.missed_turns(),
                signup=data["signup"],
                seats_wanted=data["seats_wanted"],
                public=data["public"] or Publicity.AUTO,
                private_press=data["private_press"] != OFF,
                language=data["language"] or settings.LANGUAGE_CODE,
            )
        except postal.PostalError as error:
            form.add_error(None, error.message)
        else:
            messages.success(request, _created(new))
            return redirect("gm:game", new.pk)
    context = {
        "form": form,
        "profile": profile,
        "engine": registry.get(game),
        "template": template,
    }
    return render(request, "games/gm/create.html", context)


def _created(game: Game) -> str:
    if not game.signup:
        return f"{game.title} is created; invite the players next."
    where = signups.game_url(game)
    if game.seats.exists():
        return f"{game.title} is created and open for sign-up at {where}; invite your players."
    return f"{game.title} is created and open for sign-up at {where}."


@gm_required
def create_from_paper(request: HttpRequest) -> HttpResponse:
    """Continue a game that was running on paper: its history so far, its players and its
    rhythm (``ImportGameForm``); ``postal.import_game`` replays the record first and
    creates nothing if it does not replay, which the form then says."""
    form = ImportGameForm(request.POST or None, request.FILES or None)
    refused = ""
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            game = postal.import_game(
                gm=request.user,
                title=data["title"],
                history=data["history"],
                players=data["players"],
                now=timezone.now(),
                time_zone=data["time_zone"],
                schedule_spec=data["schedule"],
                early_processing=data["early_processing"],
            )
        except postal.PostalError as error:
            form.add_error(None, f"Nothing was created: {error.message}.")
            refused = error.source if isinstance(error, postal.RecordRefused) else ""
        else:
            messages.success(request, _continued(game))
            return redirect("gm:game", game.pk)
    return render(request, "games/gm/import.html", {"form": form, "refused": refused})


def _continued(game: Game) -> str:
    step = game.step_number
    words = (
        f"{game.title} continues from paper: {counted(game.paper_steps, 'step')} and "
        f"{counted(game.paper_dice, 'die', 'dice')} entered; the players are invited and sent "
        f"the report of step {step}."
    )
    rolled = game.dice_drawn - game.paper_dice
    if rolled:
        words += (
            f" The moderator rolled the {counted(rolled, 'die', 'dice')} the record did not hold "
            f"(the opening of step {step}), and rolls every die from now on."
        )
    return words


@gm_required
@require_POST
def delete_template(request: HttpRequest, template_id: int) -> HttpResponse:
    name = game_templates.delete(request.user, template_id)
    if name is None:
        raise Http404("no such template")
    messages.success(request, f"The template {name!r} is deleted.")
    return redirect("gm:create")


def _players_box(game: Game) -> str:
    return "\n".join(f"{seat.name} <{seat.email}>" for seat in game.seats.order_by("position"))


@gm_required
def edit_game(request: HttpRequest, game_id: int) -> HttpResponse:
    """A game not yet started: its title, its invited players and its seats changed, or
    the game deleted (``delete_game``). Once it has started, its page."""
    game = own_game(request, game_id)
    if game.status not in (Game.Status.DRAFT, Game.Status.RECRUITING):
        messages.error(request, "The game has started: its seats stay; replace a player instead.")
        return redirect("gm:game", game.pk)
    initial = {
        "title": game.title,
        "players": _players_box(game),
        "seats_wanted": game.seats_wanted,
    }
    form = EditGameForm(request.POST or None, game=game, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            postal.change_recruiting(
                game.pk,
                title=data["title"],
                players=data["players"],
                seats_wanted=data.get("seats_wanted"),
            )
        except postal.PostalError as error:
            form.add_error(None, error.message)
        else:
            messages.success(request, f"{data['title']} is changed.")
            return redirect("gm:game", game.pk)
    context = {
        "game": game,
        "form": form,
        "variant": registry.title(game.engine, game.options),
        "signed_up": game.signups.filter(
            state__in=[SignUp.State.ACCEPTED, SignUp.State.WAITING]
        ).count(),
    }
    return render(request, "games/gm/edit.html", context)


@gm_required
@require_POST
def delete_game(request: HttpRequest, game_id: int) -> HttpResponse:
    """Delete a game not yet started; the box "delete it" must be ticked."""
    game = own_game(request, game_id)
    if request.POST.get("confirm") != "yes":
        messages.error(request, "Nothing was deleted: tick “Yes, delete this game” first.")
        return redirect("gm:edit", game.pk)
    try:
        title = postal.delete_recruiting(game.pk)
    except postal.GameGone as error:
        messages.error(request, f"{error.message[:1].upper()}{error.message[1:]}.")
        return redirect("gm:dashboard")
    except postal.PostalError as error:
        messages.error(request, error.message)
        return redirect("gm:game", game.pk)
    messages.success(request, f"{title} is deleted.")
    return redirect("gm:dashboard")
