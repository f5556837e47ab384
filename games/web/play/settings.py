"""A seat's settings, ``/play/<game>/<position>/settings/``: how often its reports come by
email, its address's reminders and digest hour, its language, its calendar feed, what
plays a missed turn, and where to declare an absence. Each form posts to its own view in
``choices`` (the URLs they always had), which goes back to this page with what it did; the
seat's page keeps the game, and links here."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from games.community import absences, press
from games.engines import registry
from games.lib import words
from games.models import AbsencePolicy, Game, PressEmail, Seat, Webhook
from games.notify import (
    channels,
    email_choices,
    ladder,
    player_hooks,
    push,
    reminders,
    webhooks,
)
from games.postal import access
from games.web.forms import (
    EmailChoiceForm,
    LadderForm,
    LanguageForm,
    QuietHoursForm,
    ReminderChoiceForm,
    ladder_initial,
)
from games.web.play.common import held_seat, not_valid, speak


def settings_page(seat: Seat) -> str:
    """The address of a seat's settings page."""
    return reverse("games:seat_settings", args=[seat.game_id, seat.position])


@require_GET
def seat_settings(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    """The seat's settings, each a small form, and what each setting does now."""
    seat = held_seat(request, game_id, position)
    if seat is None:
        return not_valid(request)
    speak(request, seat)
    game = seat.game
    context: dict[str, Any] = {
        "game": game,
        "seat": seat,
        "finished": game.status == Game.Status.FINISHED,
        "calendar_url": access.calendar_url(seat),
        "language_form": LanguageForm(
            initial={"language": seat.language}, game_language=game.language
        ),
        "press_open": game.status in press.OPEN,
        "press_email_choices": PressEmail.choices,
        **email_choice_context(seat, game.rules),
        **missed_context(game, seat),
        **push_context(seat),
    }
    return render(request, "games/seat_settings.html", context)


def email_choice_context(seat: Seat, engine: Any) -> dict[str, Any]:
    """The seat's choice of how often it gets email and its address's reminders, and the
    forms to change them."""
    choice = email_choices.effective(seat, engine)
    preference = email_choices.saved_preference(seat)
    return {
        "reminder_form": ReminderChoiceForm(initial=reminders.choice_of(preference)),
        "quiet_form": QuietHoursForm(initial=reminders.quiet_of(preference)),
        **ladder_context(seat, preference),
        "email_form": EmailChoiceForm(
            initial={"reports": choice, "web_receipts": seat.web_receipts},
            step_word=engine.step_word,
        ),
        "email_choice": email_choices.you_get(choice, engine.step_word),
        "email_default": not seat.reports,
        "digest_time": email_choices.digest_time(seat, preference),
    }


def missed_context(game: Game, seat: Seat) -> dict[str, Any]:
    """What plays the seat's missed turns (the choices, written by the template), its
    extensions left, and what an absence does in this game."""
    strategies = registry.strategies(game.engine)
    return {
        "autopilots": [(s.key, words.Said(s.title), words.Said(s.summary)) for s in strategies],
        "autopilot": registry.strategy(game.engine, seat.autopilot) if seat.autopilot else None,
        "extensions_left": max(game.extensions - seat.extensions_used, 0),
        "absence_policy": absences.WHAT_IT_DOES[AbsencePolicy(game.absence_policy)],
    }


def push_context(seat: Seat) -> dict[str, Any]:
    """How the seat is reached: its email channel, whether the service has push, its public
    key for the browser, and the browsers that get the seat's news by push, each with its
    scope, last push and last failure."""
    browsers = push.of_seat(seat)
    return {
        "email_channel": channels.email_of(seat),
        **_player_webhook(seat),
        "webhook_formats": Webhook.Format.choices,
        "push_enabled": push.enabled(),
        "push_key": settings.VAPID_PUBLIC_KEY,
        "push_works": push.enabled() and channels.pushable(browsers),
        "push_browsers": [
            {"row": row, "key": push.endpoint_key(row), "every_seat": row.seat_id is None}
            for row in browsers
        ],
    }


def ladder_context(seat: Seat, preference: Any) -> dict[str, Any]:
    """The seat's reminder ladder in words, where it comes from, and the form to change it."""
    rungs, source = ladder.of_seat(seat, preference)
    return {
        "ladder_said": ladder.said(rungs),
        "ladder_source": source,
        "ladder_form": LadderForm(initial=ladder_initial(rungs, source), auto_id="ladder_%s"),
    }


def _player_webhook(seat: Seat) -> dict[str, Any]:
    hook = player_hooks.of_address(seat.email)
    return {
        "player_webhook": hook,
        "player_webhook_shown": webhooks.shown(hook.url) if hook is not None else "",
        "player_webhook_works": hook is not None and player_hooks.works(hook),
    }
