"""One game's panel for its GM, ``/gm/<game>/``: its status and seats, what each seat sees
through the same per-engine board and private templates as the player page and the
emails (``games.notify.reports``), its log, its outgoing mail (where a failed email or one
of unknown outcome can be sent again: ``games.web.gm.mail``), and the form of every action
(``games.web.gm.actions``). A GM sees their own games only; any other game answers 404.
Superusers, who see everything in the admin, may open any game."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from games import postal
from games.community import absences, openings, press
from games.engines import registry
from games.engines.base import Engine
from games.lib import schedule, words
from games.models import Event, Game, Seat, Step, Webhook, WebhookDelivery
from games.notify import channels, ledger, quiet, reports, webhooks
from games.notify import live as pulse
from games.records import spectators
from games.records.spectators import own_ids
from games.web import live
from games.web.gm.common import Overview, games_of, overview, own_game, with_overview
from games.web.gm.forms import (
    ALLOWED,
    DATETIME_LOCAL,
    OFF,
    BotsForm,
    ExtendForm,
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
    TemplateForm,
    WebhookForm,
)
from games.web.gm.signin import gm_required
from moderator.mail.models import InboundMessage, OutboundEmail

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
        context = reports.seat_context(
            game, seat, cast(Engine[Any, Any, Any], views), state, step, reader="gm"
        )
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


def _logged(
    engine: Engine[Any, Any, Any], event: Event, names: dict[int, str]
) -> tuple[Event, str, list[str] | None]:
    """An event of the game's log as the GM reads it: its words, and the seats it was told
    to (None: everybody). The GM is none of them: an event told to a seat in the second
    person ("your dice are") reads in an onlooker's words ("ann's dice are")."""
    if event.audience is None:
        return event, words.Said(event.text, event.message), None
    seen_by = [names.get(p, str(p)) for p in event.audience]
    return event, words.onlooker(engine, event.text, event.message, seen_by), seen_by


@gm_required
def game_page(request: HttpRequest, game_id: int) -> HttpResponse:
    if live.polling(request):
        polled = own_game(request, game_id, games_of(request).only("id"))
        answer = live.answer(request, lambda: pulse.gm_pulse(polled))
        if answer is not None:
            return answer
    # The page links the previous and the next game by title: their ids and titles only.
    linked = Game.objects.only("id", "title", "previous_id")
    games = with_overview(games_of(request)).prefetch_related(
        Prefetch("previous", queryset=linked), Prefetch("next_games", queryset=linked)
    )
    game = own_game(request, game_id, games)
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
    engine = registry.get(game.engine)
    events = [_logged(engine, event, names) for event in log]
    emails, older_emails = game_emails(game)
    gm_log = reports.gm_log(game, game.time_zone)
    # Each action on the current step names the step shown (``gm.forms.ShownStep``).
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
        "engine": engine,
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
        **nights_context(seats, status.step),
        "unreachable": {seat.pk for seat in channels.unreachable(seats)},
        "decided": ledger.of_game(game),
        "pause_form": ReasonForm(game=game, auto_id="pause_%s"),
        "resume_form": ReasonForm(game=game, auto_id="resume_%s"),
        "resolve_form": ResolveForm(game=game, initial=shown, auto_id="resolve_%s"),
        "rollback_form": RollbackForm(
            game=game, initial={"step": rollback_step}, auto_id="rollback_%s"
        ),
        "rollback_step": rollback_step,
        "seed": game.seed.hex() if game.status == Game.Status.FINISHED and game.seed else None,
        "signups": openings.gm_view(game, seats, timezone.now()),
        **_webhook_context(game),
        "public_form": PublicForm(game=game, initial={"public": game.public}, auto_id="public_%s"),
        "public_url": reverse("games:public", args=[game.public_id]),
        "language_form": LanguageForm(
            game=game, initial={"language": game.language}, auto_id="language_%s"
        ),
        "bots_form": BotsForm(
            game=game, initial={"bots": "yes" if game.bots_allowed else "no"}, auto_id="bots_%s"
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


def nights_context(seats: list[Seat], step: Step | None) -> dict[str, Any]:
    """The players' quiet hours (games.notify.quiet), and whose night the open step's
    deadline falls in, for the GM choosing a deadline."""
    nights = quiet.declared(seats)
    return {
        "nights": [f"{seat.name} ({night.said()})" for seat, night in nights],
        "asleep": quiet.whose_night(step.deadline, nights) if step is not None else "",
    }
