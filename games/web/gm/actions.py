"""The GM's actions on one game, ``/gm/<game>/<action>/``, each a form of the game's panel
and one writer: the form is validated, one ``games.postal`` (or ``signups``, ``press``,
``webhooks``, ``game_templates``) function changes the game, and the panel shows what it
did or why it refused (PRG). ``ACTIONS`` names every action, its form and its writer."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from games import postal
from games.community import press, signups
from games.engines import registry
from games.engines.base import counted
from games.lib import schedule
from games.models import Order, Publicity
from games.notify import languages, quiet, webhooks
from games.postal import game_templates
from games.web.common import first_error
from games.web.gm.common import own_game
from games.web.gm.forms import (
    BotsForm,
    ExtendForm,
    GameForm,
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
)
from games.web.gm.signin import gm_required


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
    said = (
        f"The deadline of step {step.number} is now {when}; the players who owe an order, and "
        "those who get every report, are emailed."
    )
    asleep = quiet.whose_night(step.deadline, quiet.declared(form.game.seats.all()))
    if asleep:
        said += f" It falls in the night of {asleep}: their reminders come before the night starts."
    return said


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
    left = form.game.seats.get(position=form.cleaned_data["seat"])
    seat = postal.replace_player(
        form.game.pk,
        position=form.cleaned_data["seat"],
        name=form.cleaned_data["name"],
        email=form.cleaned_data["email"],
        now=now,
        shown_step=form.shown_step(),
        **_logged(form),
    )
    if left.email.lower() == seat.email.lower():
        return f"Seat {seat.position + 1} is now {seat.name} <{seat.email}>, sent a new link."
    return (
        f"Seat {seat.position + 1} is now played by {seat.name} <{seat.email}>, welcomed with "
        f"the rules, the current report and a link; {left.name} is told."
    )


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


def _bots(form: BotsForm, now: datetime) -> str:
    game = postal.allow_bots(form.game.pk, allowed=form.allowed(), by=form.by, now=now)
    if game.bots_allowed:
        return "Bots may play this game: a seat played by one says so to everyone."
    return "No bots: a bot's token is refused in this game."


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
    "bots": (BotsForm, _bots),
}


@gm_required
@require_POST
def act(request: HttpRequest, game_id: int, action: str) -> HttpResponse:
    """Run one GM action on one game; its message, success or PostalError, shows on the
    game page."""
    if action not in ACTIONS:
        raise Http404("no such action")
    game = own_game(request, game_id)
    form_class, run = ACTIONS[action]
    form = form_class(request.POST, game=game)
    form.by = request.user.pk
    if not form.is_valid():
        messages.error(request, first_error(form))
    elif isinstance(form, ResolveForm) and not form.is_confirmed():
        # Not from the confirmation page: it shows who has not ordered, and what it costs.
        query = urlencode({"step": form.shown_step(), "reason": form.cleaned_data["reason"]})
        return redirect(f"{reverse('gm:resolve', args=[game.pk])}?{query}")
    else:
        try:
            messages.success(request, run(form, timezone.now()))
        except (postal.PostalError, game_templates.TemplateError) as error:
            messages.error(request, error.message)
    return redirect("gm:game", game.pk)
