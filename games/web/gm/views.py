"""The GM panel: a dashboard of the GM's games, a form to create one, a page per game with
its actions. Thin: each action validates a form and calls one ``games.postal`` function,
then redirects back with its message (PRG). A GM sees their own games only; any other
game answers 404. Superusers, who see everything in the admin, may open any game.

The game page shows what each seat sees through the same per-engine board and private
templates as the player page and the emails (``games.notify.reports``), and the game's outgoing
mail, where a failed email or one of unknown outcome can be sent again."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast
from zoneinfo import ZoneInfo

from django.conf import settings
from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.db.models import Prefetch, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.http import content_disposition_header
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from games import postal
from games.community import absences, press, signups
from games.engines import registry
from games.engines.base import Engine, Profile, counted
from games.lib import schedule
from games.models import (
    Event,
    Game,
    GameTemplate,
    Order,
    Publicity,
    Seat,
    Step,
    Webhook,
    WebhookDelivery,
)
from games.notify import languages, reports, webhooks
from games.postal import access, game_templates
from games.records import spectators, zine
from games.records.spectators import own_ids
from games.web.gm.forms import (
    ALLOWED,
    DATETIME_LOCAL,
    OFF,
    CreateGameForm,
    ExtendForm,
    GameForm,
    ImportGameForm,
    LanguageForm,
    OrderForm,
    PrivatePressForm,
    PublicForm,
    ReasonForm,
    ReplaceForm,
    ResolveForm,
    RollbackForm,
    SeatForm,
    SetOrderForm,
    SignUpForm,
    TemplateForm,
    WebhookForm,
    first_error,
)
from moderator.mail import sending
from moderator.mail.models import InboundMessage, OutboundEmail
from moderator.numbers import STEPS_MOST, whole_number

# The game page lists this many of the game's emails, newest first; the admin has them all.
MAIL_ROWS = 50
MAIL_FIELDS = (
    "id",
    "kind",
    "to",
    "subject",
    "state",
    "attempts",
    "last_error",
    "created_at",
    "pruned_at",
)
# The states a human may send again (``sending.send_again``).
SENDABLE_AGAIN = (OutboundEmail.State.FAILED, OutboundEmail.State.UNKNOWN)


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
        step,
        deadline,
        owing,
        [s for s in seats if s.nmr_count],
        [s for s in seats if s.email_failing],
    )


def _game(request: HttpRequest, game_id: int, games: QuerySet[Game] | None = None) -> Game:
    return get_object_or_404(games if games is not None else games_of(request), pk=game_id)


# --- pages ---------------------------------------------------------------------------------


@staff_member_required
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


@staff_member_required
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


@staff_member_required
def create_game(request: HttpRequest, game: str, profile: str = "") -> HttpResponse:
    """The new-game form of one game and profile."""
    try:
        chosen = registry.settings(game).profile(profile)
    except KeyError:
        raise Http404("no such game") from None
    return _create(request, game, chosen, None)


@staff_member_required
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


@staff_member_required
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


@dataclass(frozen=True)
class SeatView:
    """What one seat is shown (or, with ``seat`` None, what everybody is shown): the board
    and private blocks rendered by the engine's templates, and the engine's raw view."""

    seat: Seat | None
    board: str
    private: str
    raw: str


def _rendered(context: dict[str, Any], seat: Seat | None, raw: dict[str, Any]) -> SeatView:
    board = render_to_string(context["boards_html"], context)
    if seat is None:
        return SeatView(seat=None, board=board, private="", raw=json.dumps(raw, indent=2))
    prefix = f"seat-{seat.position}-"
    return SeatView(
        seat=seat,
        board=own_ids(board, prefix),
        private=own_ids(render_to_string(context["private_html"], context), prefix),
        raw=json.dumps(raw, indent=2),
    )


def _shown_step(game: Game, status: Overview) -> Step | None:
    """The step the player page shows (``seat_context``'s ``step``): the current step until
    the game is finished, whatever its status; None after."""
    if game.status == Game.Status.FINISHED:
        return None
    if status.step is not None and status.step.number == game.step_number:
        return status.step
    steps = game.steps.defer("state_before", "state_after")
    return steps.filter(number=game.step_number).first()


class _ViewedOnce:
    """An engine whose ``view`` is computed once per seat: the page shows each view twice,
    through the templates (``seat_context`` asks the engine) and raw. Anything else is the
    engine's own."""

    def __init__(self, engine: Engine[Any, Any, Any]) -> None:
        self._engine = engine
        self._views: dict[int | None, dict[str, Any]] = {}

    def view(self, state: Any, seat: int | None) -> dict[str, Any]:
        if seat not in self._views:
            self._views[seat] = self._engine.view(state, seat)
        return self._views[seat]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)


def seat_views(
    game: Game, seats: list[Seat], status: Overview
) -> tuple[SeatView | None, list[SeatView]]:
    """What everybody sees and what each seat sees, rendered as on the player page; no
    query per seat. (None, []) before the game has started."""
    if game.state is None:
        return None, []
    engine = registry.get(game.engine)
    views = _ViewedOnce(engine)
    state = engine.state_from_json(game.state)
    step = _shown_step(game, status)
    game.seat_names = {seat.position: seat.name for seat in seats}
    public_context: dict[str, Any] = {
        "game": game,
        "engine": engine,
        "view": views.view(state, None),
        "step": step,
        "finished": step is None,
        "boards_html": reports.engine_templates(game.engine, "boards", "html"),
    }
    hidden = []
    for seat in seats:
        context = reports.seat_context(game, seat, cast(Engine[Any, Any, Any], views), state, step)
        context["engine"] = engine
        hidden.append(_rendered(context, seat, views.view(state, seat.position)))
    return _rendered(public_context, None, views.view(state, None)), hidden


def sendable_again(email: OutboundEmail) -> bool:
    """A GM may send this email again: it failed or its delivery is unknown, and its
    body is still kept."""
    return email.state in SENDABLE_AGAIN and email.pruned_at is None


def game_emails(game: Game) -> tuple[list[OutboundEmail], bool]:
    """The newest ``MAIL_ROWS`` emails of the game, and whether there are older ones."""
    rows = list(
        OutboundEmail.objects.filter(game=game)
        .only(*MAIL_FIELDS)
        .order_by("-created_at", "-id")[: MAIL_ROWS + 1]
    )
    return rows[:MAIL_ROWS], len(rows) > MAIL_ROWS


@staff_member_required
def game_page(request: HttpRequest, game_id: int) -> HttpResponse:
    # The page links the previous and the next game by title: their ids and titles only.
    linked = Game.objects.only("id", "title", "previous_id")
    games = with_overview(games_of(request)).prefetch_related(
        Prefetch("previous", queryset=linked), Prefetch("next_games", queryset=linked)
    )
    game = _game(request, game_id, games)
    status = overview(game)
    seats = list(game.seats.all())
    # Each seat with its player's absence now and the title of its autopilot.
    away = absences.away(seats, now=timezone.now())
    seat_rows = [
        (seat, away.get(seat.pk), registry.strategy(game.engine, seat.autopilot)) for seat in seats
    ]
    public, hidden = seat_views(game, seats, status)
    names = {seat.position: seat.name for seat in seats}
    # The log reads each event's step number, not the step's (large) states.
    log = (
        Event.objects.filter(game=game)
        .select_related("step")
        .defer("step__state_before", "step__state_after")
        .order_by("id")
    )
    events = [
        (event, None if event.audience is None else [names.get(p, p) for p in event.audience])
        for event in log
    ]
    emails, older_emails = game_emails(game)
    gm_log = reports.gm_log(game)
    # Each action on the current step names the step shown (gm_forms.ShownStep).
    shown = {"step": game.step_number}
    rollback_step = postal.rollback_offered(game)
    extend_initial: dict[str, Any] = dict(shown)
    if status.step is not None:
        local = status.step.deadline.astimezone(ZoneInfo(game.time_zone))
        extend_initial["deadline"] = local.strftime(DATETIME_LOCAL)
    context = {
        "game": game,
        "status": status,
        "seats": seats,
        "seat_rows": seat_rows,
        "engine": registry.get(game.engine),
        "rules": reports.rules_in_words(game),
        "rhythm": schedule.describe(game.schedule),
        "follows_rules": hasattr(registry.get(game.engine), "follow_up"),
        "template_form": TemplateForm(game=game, initial={"name": game.title}),
        "can_set_order": hasattr(registry.get(game.engine), "host_order"),
        "set_order_form": SetOrderForm(game=game, initial=shown, auto_id="set_order_%s"),
        "public": public,
        "hidden": hidden,
        "events": events,
        "gm_log": gm_log,
        "emails": emails,
        "older_emails": older_emails,
        "sendable_again": SENDABLE_AGAIN,
        "unknown_emails": OutboundEmail.objects.filter(
            game=game, state=OutboundEmail.State.UNKNOWN, pruned_at__isnull=True
        ).count(),
        "retention_days": settings.MAIL_RETENTION_DAYS,
        # The mail section opens by itself when an email waits to be sent again.
        "mail_trouble": any(sendable_again(email) for email in emails),
        "rotate_form": SeatForm(game=game, auto_id="rotate_%s"),
        "resend_form": SeatForm(game=game, auto_id="resend_%s"),
        "order_form": OrderForm(game=game, initial=shown, auto_id="order_%s"),
        "replace_form": ReplaceForm(game=game, initial=shown, auto_id="replace_%s"),
        "extend_form": ExtendForm(game=game, initial=extend_initial),
        "pause_form": ReasonForm(game=game, auto_id="pause_%s"),
        "resume_form": ReasonForm(game=game, auto_id="resume_%s"),
        "resolve_form": ResolveForm(game=game, initial=shown, auto_id="resolve_%s"),
        "rollback_form": RollbackForm(
            game=game, initial={"step": rollback_step}, auto_id="rollback_%s"
        ),
        "rollback_step": rollback_step,
        "seed": game.seed.hex() if game.status == Game.Status.FINISHED and game.seed else None,
        "signups": signups.gm_view(game, seats, timezone.now()),
        **_webhook_context(game),
        "public_form": PublicForm(game=game, initial={"public": game.public}, auto_id="public_%s"),
        "public_url": reverse("games:public", args=[game.public_id]),
        "language_form": LanguageForm(
            game=game, initial={"language": game.language}, auto_id="language_%s"
        ),
        "watched": spectators.is_public(game),
        **_press_context(game),
        "inbound_held": InboundMessage.objects.filter(game=game, state="held").count(),
    }
    return render(request, "games/gm/game.html", context)


def _press_context(game: Game) -> dict[str, Any]:
    """The game's messages in numbers, and its private-message setting's form."""
    total, hidden = press.count(game)
    initial = {"private_press": ALLOWED if game.private_press else OFF}
    return {
        "press_total": total,
        "press_hidden": hidden,
        "private_press_form": PrivatePressForm(game=game, initial=initial, auto_id="press_%s"),
    }


def _webhook_context(game: Game) -> dict[str, Any]:
    """The game's webhook form (its address never shown in full: it may hold a secret)
    and its latest deliveries; the section opens by itself when one failed."""
    hook = Webhook.objects.filter(game=game).first()
    initial = {"format": hook.format, "active": hook.active} if hook else {"active": True}
    deliveries = webhooks.latest(game)
    return {
        "webhook": hook,
        "webhook_shown": webhooks.shown(hook.url) if hook else "",
        "webhook_form": WebhookForm(game=game, initial=initial, auto_id="webhook_%s"),
        "webhook_deliveries": deliveries,
        "webhook_trouble": any(d.state == WebhookDelivery.State.FAILED for d in deliveries),
    }


# --- actions -------------------------------------------------------------------------------


def _invite(form: Any, now: datetime) -> str:
    count = postal.invite(form.game.pk, now=now)
    return f"Invitations are on their way to {counted(count, 'player')}."


def _start(form: Any, now: datetime) -> str:
    signups.start(form.game.pk, now=now)
    return "The game has started; the first reports are on their way."


def _approve(form: SignUpForm, now: datetime) -> str:
    signup = signups.approve(form.game.pk, form.cleaned_data["signup"], now=now)
    if signup.position is not None:
        return (
            f"{signup.name} takes over seat {signup.position + 1}; their link is on its way, "
            "and the other sign-ups for the seat are told."
        )
    return f"{signup.name} has a seat; they are told by email."


def _decline(form: SignUpForm, now: datetime) -> str:
    signup = signups.decline(form.game.pk, form.cleaned_data["signup"], now=now)
    return f"{signup.name}'s sign-up is declined; they are told by email."


def _close_signups(form: Any, now: datetime) -> str:
    told = signups.close(form.game.pk, now=now)
    waiting = (
        f"; {counted(told, 'player')} on the waiting list {'was' if told == 1 else 'were'} told"
        if told
        else ""
    )
    return f"Sign-ups are closed: the game left the list of open games{waiting}."


def _logged(form: ReasonForm) -> dict[str, Any]:
    """The arguments that log a GM action for the players: the GM's reason and who acted."""
    return {"reason": form.cleaned_data["reason"], "by": form.by}


def _extend(form: ExtendForm, now: datetime) -> str:
    step = postal.extend_deadline(
        form.game.pk,
        deadline=form.cleaned_data["deadline"],
        now=now,
        shown_step=form.shown_step(),
        **_logged(form),
    )
    when = schedule.local_time(step.deadline, form.game.time_zone)
    return f"The deadline of step {step.number} is now {when}; every player is told."


def _pause(form: ReasonForm, now: datetime) -> str:
    postal.pause(form.game.pk, now=now, **_logged(form))
    return "The game is paused."


def _resume(form: ReasonForm, now: datetime) -> str:
    postal.resume(form.game.pk, now=now, **_logged(form))
    return "The game runs again; the deadline moved on by the time it was paused."


def _resolve(form: ResolveForm, now: datetime) -> str:
    if not postal.resolve_now(form.game.pk, now=now, shown_step=form.shown_step(), **_logged(form)):
        raise postal.PostalError(f"nothing was resolved: the game is {form.game.status}")
    return "The step is resolved; missing orders got their NMR defaults."


def _rollback(form: RollbackForm, now: datetime) -> str:
    step = postal.rollback(form.game.pk, now=now, shown_step=form.shown_step(), **_logged(form))
    when = schedule.local_time(step.deadline, form.game.time_zone)
    return (
        f"Step {step.number} is open again until {when}; its orders stand and every player "
        "is emailed why."
    )


def _order(form: OrderForm, now: datetime) -> str:
    order = postal.accept_order(
        game_id=form.game.pk,
        position=form.cleaned_data["seat"],
        text=form.cleaned_data["text"],
        source=Order.Source.GM,
        now=now,
        shown_step=form.shown_step(),
        **_logged(form),
    )
    if order.repeated:
        # The same order again (a double click): postal wrote nothing.
        raise postal.PostalError(
            _("nothing was done: %(name)s's order %(order)s already counts in step %(step)d")
            % {"name": order.seat.name, "order": order.canonical, "step": order.step.number}
        )
    return f"Order of {order.seat.name} accepted: {order.canonical}"


def _replace(form: ReplaceForm, now: datetime) -> str:
    seat = postal.replace_player(
        form.game.pk,
        position=form.cleaned_data["seat"],
        name=form.cleaned_data["name"],
        email=form.cleaned_data["email"],
        now=now,
        shown_step=form.shown_step(),
        **_logged(form),
    )
    return f"Seat {seat.position + 1} is now played by {seat.name} <{seat.email}>; a link is sent."


def _rotate(form: SeatForm, now: datetime) -> str:
    postal.rotate_link(form.game.pk, position=form.cleaned_data["seat"], now=now)
    return f"{form.seat_name()} has a new link; the old links no longer work."


def _resend(form: SeatForm, now: datetime) -> str:
    postal.resend_report(form.game.pk, position=form.cleaned_data["seat"], now=now)
    return f"The current report is sent to {form.seat_name()} again."


def _again(form: Any, now: datetime) -> str:
    new = postal.play_again(form.game.pk, now=now)
    if not hasattr(registry.get(new.engine), "follow_up"):
        return f"{new.title} has started with the same players."
    first = new.seats.get(position=0).name
    return f"{new.title} has started with the same players; {first} places first."


def _save_template(form: TemplateForm, now: datetime) -> str:
    template = game_templates.save_from(form.game, name=form.cleaned_data["name"])
    return f"Saved as the template {template.name!r}: pick it on the new-game page."


def _set_order(form: SetOrderForm, now: datetime) -> str:
    postal.set_order(
        form.game.pk,
        names=form.cleaned_data["names"],
        now=now,
        shown_step=form.shown_step(),
        **_logged(form),
    )
    return "The actual order is set: " + ", ".join(form.cleaned_data["names"]) + "."


def _webhook(form: WebhookForm, now: datetime) -> str:
    data = form.cleaned_data
    hook = webhooks.set_for_game(
        form.game.pk, url=data["url"], format=data["format"], active=data["active"]
    )
    state = "it gets the game's events" if hook.active else "it is switched off"
    return (
        f"The webhook is set to {webhooks.shown(hook.url)} ({hook.get_format_display()}); {state}."
    )


def _remove_webhook(form: Any, now: datetime) -> str:
    if not webhooks.remove(game_id=form.game.pk):
        raise postal.PostalError("the game has no webhook to remove")
    return "The webhook is removed, with its deliveries."


def _public(form: PublicForm, now: datetime) -> str:
    game = postal.set_public(form.game.pk, form.cleaned_data["public"])
    if game.public == Publicity.NO:
        return "The game is never public: only its players and you see it."
    where = f"{settings.SITE_URL}{reverse('games:public', args=[game.public_id])}"
    if game.public == Publicity.YES:
        return f"The game is public now: anybody may watch it at {where}."
    return f"The game will be public once finished, at {where}."


def _private_press(form: PrivatePressForm, now: datetime) -> str:
    try:
        game = press.set_private(form.game.pk, allowed=form.allowed(), by=form.by, now=now)
    except press.PressError as error:
        raise postal.PostalError(error.message) from None
    if game.private_press:
        return _("Players may write private messages to one another.")
    return _("Private messages are off: every message goes to every player.")


def _language(form: LanguageForm, now: datetime) -> str:
    game = postal.set_language(form.game.pk, form.cleaned_data["language"])
    return (
        f"The players' pages and emails are in {languages.NAMES[game.language]} now, but for "
        "the players who chose their own language."
    )


def _clear(form: Any, now: datetime) -> str:
    postal.clear_needs_gm(form.game.pk)
    return "Cleared: the sweep tries the open step again."


ACTIONS: dict[str, tuple[type[GameForm], Callable[[Any, datetime], str]]] = {
    "invite": (GameForm, _invite),
    "start": (GameForm, _start),
    "extend": (ExtendForm, _extend),
    "pause": (ReasonForm, _pause),
    "resume": (ReasonForm, _resume),
    "resolve": (ResolveForm, _resolve),
    "rollback": (RollbackForm, _rollback),
    "order": (OrderForm, _order),
    "replace": (ReplaceForm, _replace),
    "rotate": (SeatForm, _rotate),
    "resend": (SeatForm, _resend),
    "clear": (GameForm, _clear),
    "again": (GameForm, _again),
    "save-template": (TemplateForm, _save_template),
    "set-order": (SetOrderForm, _set_order),
    "approve": (SignUpForm, _approve),
    "decline": (SignUpForm, _decline),
    "close-signups": (GameForm, _close_signups),
    "webhook": (WebhookForm, _webhook),
    "remove-webhook": (GameForm, _remove_webhook),
    "public": (PublicForm, _public),
    "private-press": (PrivatePressForm, _private_press),
    "language": (LanguageForm, _language),
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
    form.by = request.user.pk
    if not form.is_valid():
        messages.error(request, first_error(form))
    else:
        try:
            messages.success(request, run(form, timezone.now()))
        except (postal.PostalError, game_templates.TemplateError) as error:
            messages.error(request, error.message)
    return redirect("gm:game", game.pk)


@staff_member_required
@require_POST
def delete_template(request: HttpRequest, template_id: int) -> HttpResponse:
    name = game_templates.delete(request.user, template_id)
    if name is None:
        raise Http404("no such template")
    messages.success(request, f"The template {name!r} is deleted.")
    return redirect("gm:create")


@staff_member_required
@require_POST
def send_again(request: HttpRequest, game_id: int, email_id: int) -> HttpResponse:
    """Send one failed or unknown email of the game again (``sending.send_again``); an email
    of another game, or of a game the user does not run, answers 404."""
    game = _game(request, game_id)
    emails = OutboundEmail.objects.filter(game=game).only("id", "kind", "to", "state")
    email = get_object_or_404(emails, pk=email_id)
    if sending.send_again(email.pk):
        messages.success(
            request, f"The {email.kind} email to {email.to} is queued to be sent again."
        )
        return redirect(f"{reverse('gm:game', args=[game.pk])}#emails")
    email.refresh_from_db(fields=["state", "pruned_at"])
    if email.pruned_at is not None:
        messages.error(
            request,
            f"The {email.kind} email to {email.to} cannot be sent again: its text was "
            f"removed {settings.MAIL_RETENTION_DAYS} days after it was written. "
            '"Re-send the report" sends a player the game as it stands.',
        )
    else:
        messages.error(
            request,
            f"The {email.kind} email to {email.to} is {email.state}: only a failed email, "
            "or one whose delivery is unknown, can be sent again.",
        )
    return redirect(f"{reverse('gm:game', args=[game.pk])}#emails")


@staff_member_required
@require_POST
def send_unknown_again(request: HttpRequest, game_id: int) -> HttpResponse:
    """Send every email of the game whose delivery is unknown again, in one action (the
    one the GM's "unconfirmed" email names: ``sending.send_unknown_again``)."""
    game = _game(request, game_id)
    count = sending.send_unknown_again(game.pk)
    if count:
        said = (
            "1 email whose delivery was unknown is"
            if count == 1
            else (f"{count} emails whose delivery was unknown are")
        )
        messages.success(request, f"{said} queued to be sent again.")
    else:
        messages.error(
            request,
            "No email of this game has an unknown delivery now: nothing was sent again.",
        )
    return redirect(f"{reverse('gm:game', args=[game.pk])}#emails")


# --- the zine page ---------------------------------------------------------------------------


def _zine_response(
    request: HttpRequest,
    zines: list[zine.Zine],
    *,
    one: Game | None = None,
    problem: str = "",
    skipped: list[str] | None = None,
    status: int | None = None,
) -> HttpResponse:
    """The zines as the print page, as plain text (``?format=text``) or as a PDF made from
    the print page (``?format=pdf``); a PDF this server cannot make (no Pango) answers 503
    with the print page and why; ``status``: of a ``problem`` (404 unless given)."""
    status = status or (404 if problem else 200)
    wanted = request.GET.get("format")
    if wanted == "text":
        body = zine.wrap(problem) if problem else zine.as_text(zines)
        return HttpResponse(body, content_type="text/plain; charset=utf-8", status=status)
    context = {
        "zines": zines,
        "one": one,
        "problem": problem,
        "skipped": skipped or [],
        "step_param": request.GET.get("step", "") if one else "",
        "pdf": zine.pdf_available(),
    }
    if wanted == "pdf" and not problem:
        if not context["pdf"]:
            context["no_pdf"] = True
            return render(request, "games/gm/zine.html", context, status=503)
        page = render_to_string("games/gm/zine.html", context, request=request)
        response = HttpResponse(
            zine.as_pdf(page, request.build_absolute_uri("/")), content_type="application/pdf"
        )
        response["Content-Disposition"] = content_disposition_header(
            as_attachment=True, filename=_pdf_name(zines, one)
        )
        return response
    return render(request, "games/gm/zine.html", context, status=status)


def _pdf_name(zines: list[zine.Zine], one: Game | None) -> str:
    """A game's zine: its title and step (``choice-club-step-3.pdf``); every game's: the
    day's (``zine-2026-11-23.pdf``)."""
    if one is not None and zines:
        return f"{slugify(one.title) or 'game'}-step-{zines[0].step.number}.pdf"
    return f"zine-{timezone.now():%Y-%m-%d}.pdf"


@staff_member_required
def game_zine(request: HttpRequest, game_id: int) -> HttpResponse:
    """One step of one game as a printable page, a PDF (``?format=pdf``) or plain text
    (``?format=text``): the latest resolved step, or ``?step=N``."""
    game = _game(request, game_id)
    raw = request.GET.get("step", "").strip()
    number: int | None = None
    if raw:
        number = whole_number(raw, most=STEPS_MOST)
        if not number:
            problem = f"“{raw[:20]}” is not a step number: write it in digits 0-9, from 1."
            return _zine_response(request, [], one=game, problem=problem, status=400)
    try:
        made = zine.zine(game, number)
    except zine.NoStep as error:
        return _zine_response(request, [], one=game, problem=str(error))
    return _zine_response(request, [made], one=game)


@staff_member_required
def all_zines(request: HttpRequest) -> HttpResponse:
    """Every running game of the GM at its latest resolved step, one after the other."""
    games = Game.objects.filter(gm_id=request.user.pk, status=Game.Status.RUNNING).defer("seed")
    zines, skipped = [], []
    for game in games.order_by("-created_at", "-id"):
        try:
            zines.append(zine.zine(game))
        except zine.NoStep:
            skipped.append(game.title)
    return _zine_response(request, zines, skipped=skipped)
