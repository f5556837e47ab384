"""The settings a seat's player chooses, each a small form posted from the seat's
settings page (``settings``) that changes one thing and goes back to that page with what
it did: how often the reports come by email, the reminders of their address, the
language, the autopilot, an absence; an extension, offered on the seat's page and back to
it; and the one-click stop of an email (``/email/stop/<what>/<token>/``). Thin: each
calls one ``games.postal`` (or ``reminders``, ``absences``) function."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy, ngettext
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from games import postal
from games.community import absences
from games.engines import registry
from games.lib import schedule, words
from games.models import AbsencePolicy, Seat
from games.notify import email_choices, ladder, languages, reminders
from games.postal import access
from games.web.away import away_page
from games.web.common import first_error, nothing_changed, refused
from games.web.forms import (
    AutopilotForm,
    EmailChoiceForm,
    LadderForm,
    LanguageForm,
    QuietHoursForm,
    ReminderChoiceForm,
)
from games.web.play.common import browser_seats, held_seat, not_valid, seat_page, speak
from games.web.play.settings import settings_page


def _posted_seat(request: HttpRequest) -> Seat | None:
    """The seat a form of the address's choices names (``seat``, its id), among those this
    browser holds, its language spoken; None for any other."""
    seat_id = request.POST.get("seat", "")
    seat = next((seat for seat in browser_seats(request) if str(seat.pk) == seat_id), None)
    if seat is not None:
        speak(request, seat)
    return seat


@require_POST
def reminder_choice(request: HttpRequest) -> HttpResponse:
    """A player chooses, for their address and every game it plays, one email per reminder
    or one daily digest."""
    seat = _posted_seat(request)
    if seat is None:
        return not_valid(request)
    form = ReminderChoiceForm(request.POST)
    if not form.is_valid():
        messages.error(request, first_error(form))
    else:
        way = form.cleaned_data["digest"]
        reminders.choose(seat, way=way, hour=form.cleaned_data["hour"])
        said = {"email": seat.email, "zone": seat.zone, "hour": form.cleaned_data["hour"]}
        if way == reminders.DIGEST:
            messages.success(
                request,
                gettext(
                    "Reminders for %(email)s now come as one digest a day at %(hour)02d:00 "
                    "(%(zone)s), for all your games."
                )
                % said,
            )
        elif way == reminders.NONE:
            messages.success(
                request,
                gettext(
                    "%(email)s gets no reminders now, in any game: deadlines pass without "
                    "warning. This page and your reports still show every deadline."
                )
                % said,
            )
        else:
            messages.success(
                request, gettext("Reminders for %(email)s come one email at a time.") % said
            )
    return redirect(settings_page(seat))


@require_POST
def quiet_hours(request: HttpRequest) -> HttpResponse:
    """A player declares their night, for their address and every game it plays: no
    reminder comes in it (``games.notify.quiet``)."""
    seat = _posted_seat(request)
    if seat is None:
        return not_valid(request)
    form = QuietHoursForm(request.POST)
    if not form.is_valid():
        messages.error(request, first_error(form))
    elif form.cleaned_data["quiet"]:
        start, end = form.cleaned_data["start"], form.cleaned_data["end"]
        reminders.choose_quiet(seat, start=start, end=end)
        said = {"email": seat.email, "start": f"{start:%H:%M}", "end": f"{end:%H:%M}"}
        said["zone"] = seat.zone
        messages.success(
            request,
            gettext(
                "No reminder comes to %(email)s from %(start)s to %(end)s (%(zone)s), in any "
                "game: one due in your night waits for the morning, or comes before the night "
                "starts when the deadline falls in it."
            )
            % said,
        )
    else:
        reminders.choose_quiet(seat, start=None, end=None)
        messages.success(
            request,
            gettext("%(email)s has no quiet hours: reminders come when they are due.")
            % {"email": seat.email},
        )
    return redirect(settings_page(seat) + "#quiet-form")


@require_POST
def ladder_choice(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    """The seat's reminder ladder, for it or for every seat of its address; "default"
    takes it back to the default."""
    seat = held_seat(request, game_id, position)
    if seat is None:
        return not_valid(request)
    speak(request, seat)
    form = LadderForm(request.POST)
    if not form.is_valid():
        messages.error(request, first_error(form))
        return redirect(settings_page(seat) + "#ladder-form")
    everywhere = form.cleaned_data["scope"] == "all"
    rungs = None if "default" in request.POST else form.rungs()
    try:
        postal.choose_ladder(seat, rungs, everywhere=everywhere)
    except ladder.BadLadder as error:
        messages.error(request, error.message)
        return redirect(settings_page(seat) + "#ladder-form")
    seat.refresh_from_db()
    chosen, _ = ladder.of_seat(seat, email_choices.saved_preference(seat))
    said = ladder.said(chosen)
    if everywhere:
        messages.success(
            request,
            gettext("Reminders for all your seats: %(ladder)s.") % {"ladder": said},
        )
    else:
        messages.success(
            request, gettext("Reminders for this seat: %(ladder)s.") % {"ladder": said}
        )
    return redirect(settings_page(seat) + "#ladder-form")


# What each one-click unsubscribe stops, as its page says it before the click.
STOPPING = {
    "reports": gettext_lazy("the reports of this seat by email"),
    "all-reports": gettext_lazy(
        "the reports of every seat of your address by email, in every game"
    ),
    "reminders": gettext_lazy("the reminders before your deadlines, in every game"),
    "press": gettext_lazy(
        "the other players' messages in this game by email (the GM's announcements still come)"
    ),
}


@csrf_exempt  # RFC 8058: a mail provider posts the one click without cookies or a form
@require_http_methods(["GET", "POST"])
def stop_email(request: HttpRequest, what: str, token: str) -> HttpResponse:
    """An email's List-Unsubscribe address. GET asks (a link scanner changes nothing);
    POST, the mail provider's one click (``List-Unsubscribe=One-Click``) or the page's
    button, stops that email (``postal.stop_email``). The token is the authority: it
    names the seat and can only stop mail, never send or change an order."""
    seat = access.seat_to_stop(what, token)
    if seat is None:
        return not_valid(request)
    languages.speak(request, seat.speaks)
    context = {"seat": seat, "game": seat.game, "what": what, "stopping": STOPPING[what]}
    if request.method == "GET":
        return render(request, "games/stop_email.html", context)
    # Not rate limited: the tokens are unguessable, and a mail provider posts the clicks
    # of many players from the same few addresses.
    context["done"] = postal.stop_email(seat, what)
    return render(request, "games/stop_email.html", context)


@require_POST
def email_choice(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    """The player chooses how often they get this game's reports by email, and whether
    the orders they make on the page get a receipt by email: for this seat, or for all the
    seats of their address and as their default. A choice that is not one of the form's
    changes nothing and says why."""
    seat = held_seat(request, game_id, position)
    if seat is None:
        return not_valid(request)
    speak(request, seat)
    form = EmailChoiceForm(request.POST)
    if not form.is_valid():
        first = next(iter(form.errors.values()))[0]
        messages.error(request, nothing_changed(first))
        return redirect(settings_page(seat))
    everywhere = form.cleaned_data["scope"] == email_choices.ALL_SEATS
    web_receipts = form.cleaned_data["web_receipts"]
    chosen = postal.choose_reports(
        game_id,
        position=position,
        choice=form.cleaned_data["reports"],
        everywhere=everywhere,
        web_receipts=web_receipts,
    )
    you_get = email_choices.you_get(form.cleaned_data["reports"], seat.game.rules.step_word)
    receipts = (
        gettext("Orders you make on the page are answered by a receipt by email too.")
        if web_receipts
        else gettext(
            "Orders you make on the page get no receipt by email: the page shows them; "
            "orders by email always do."
        )
    )
    if everywhere:
        games = len({other.game_id for other in chosen})
        messages.success(
            request,
            ngettext(
                "Done: %(email)s now gets the reports of its %(count)d game, and of the games "
                "it joins later, %(you_get)s.",
                "Done: %(email)s now gets the reports of its %(count)d games, and of the games "
                "it joins later, %(you_get)s.",
                games,
            )
            % {"email": seat.email, "count": games, "you_get": you_get}
            + " "
            + receipts,
        )
    else:
        messages.success(
            request,
            gettext("Done: you now get this game's reports %(you_get)s.") % {"you_get": you_get}
            + " "
            + receipts,
        )
    return redirect(settings_page(seat))


@require_POST
def language_choice(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    """The player chooses the language of their seat's page and emails: one of its own,
    or its game's (docs/languages.md)."""
    seat = held_seat(request, game_id, position)
    if seat is None:
        return not_valid(request)
    form = LanguageForm(request.POST, game_language=seat.game.language)
    if not form.is_valid():
        speak(request, seat)
        messages.error(request, nothing_changed(first_error(form)))
        return redirect(settings_page(seat))
    seat = postal.choose_language(
        game_id, position=position, language=form.cleaned_data["language"]
    )
    # Said in the language just chosen: the page it goes back to speaks it.
    speak(request, seat)
    messages.success(
        request,
        gettext("Done: this seat's page and emails are in %(language)s.")
        % {"language": languages.NAMES[seat.speaks]},
    )
    return redirect(settings_page(seat))


@require_POST
def autopilot_choice(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    """The player chooses what plays their turn when they miss a deadline."""
    seat = held_seat(request, game_id, position)
    if seat is None:
        return not_valid(request)
    speak(request, seat)
    form = AutopilotForm(request.POST, engine_key=seat.game.engine)
    if not form.is_valid():
        messages.error(request, nothing_changed(first_error(form)))
        return redirect(settings_page(seat))
    try:
        seat = postal.choose_autopilot(
            game_id, position=position, key=form.cleaned_data["autopilot"]
        )
    except postal.PostalError as error:
        messages.error(request, refused(error.message))
        return redirect(settings_page(seat))
    strategy = registry.strategy(seat.game.engine, seat.autopilot)
    if strategy is None:
        messages.success(
            request, gettext("Done: when you miss a deadline, the game's default plays.")
        )
    else:
        messages.success(
            request,
            gettext("Done: when you miss a deadline, your autopilot (%(title)s) plays.")
            % {"title": words.said(strategy.title)},
        )
    return redirect(settings_page(seat))


@require_http_methods(["GET", "POST"])
def away(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    """The seat's player declares an absence (for this game or all the games of their
    address), sees theirs, and takes one back."""
    seat = held_seat(request, game_id, position)
    if seat is None:
        return not_valid(request)
    game = seat.game
    speak(request, seat)
    return away_page(
        request,
        email=seat.email,
        zone=seat.zone,
        games={"game": game},
        context={
            "game": game,
            "seat": seat,
            "policy": absences.WHAT_IT_DOES[AbsencePolicy(game.absence_policy)],
            "cap": absences.hours_in_words(game.absence_cap_hours),
            "left": absences.hours_in_words(max(game.absence_cap_hours - seat.away_hours_used, 0)),
        },
    )


def _shown_deadline(request: HttpRequest) -> int | None:
    """The deadline the page showed when its extension button was pressed (seconds since
    the epoch), or None from a form without it."""
    shown = request.POST.get("deadline", "")
    return int(shown) if shown.isdigit() else None


@require_POST
def extension(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    """The player spends one of their extensions: the deadline moves on for everyone."""
    seat = held_seat(request, game_id, position)
    if seat is None:
        return not_valid(request)
    speak(request, seat)
    try:
        step = postal.use_extension(
            game_id, position=position, now=timezone.now(), shown_deadline=_shown_deadline(request)
        )
    except postal.PostalError as error:
        messages.error(request, refused(error.message))
    else:
        deadline = schedule.local_time(step.deadline, seat.zone)
        messages.success(
            request,
            gettext(
                "Done: the deadline is now %(deadline)s; it is emailed to the players who owe "
                "an order and to those who get every report."
            )
            % {"deadline": deadline},
        )
    return redirect(seat_page(seat))
