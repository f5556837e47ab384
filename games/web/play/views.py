"""Public pages and the players' pages.

A player needs no account: a magic link ``/p/<token>/`` shows a Continue page on GET (email
link scanners must change nothing, so GET writes nothing, not even a cookie) and, on
POST, adds the seat to the browser's signed seats cookie (``access.remember_seat``) and
redirects to the seat's own token-free page, ``/play/<game>/<position>/``. Every player
page is scoped to the seats the browser holds (``access.browser_links``: its links, and
every seat of a player signed in by email, games.web.me.views); anything else answers the
same plain 404.
Views stay thin: ``games.postal.access`` and ``games.postal`` do the work.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy, ngettext
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from redis.exceptions import RedisError

from games import postal
from games.community import absences
from games.engines import registry
from games.lib import schedule, words
from games.models import AbsencePolicy, Game, Order, Seat, Step
from games.notify import calendar, email_choices, languages, reminders, reports
from games.postal import access
from games.records import archive
from games.web.forms import (
    TEXT,
    AbsenceForm,
    AutopilotForm,
    EmailChoiceForm,
    LanguageForm,
    LostLinksForm,
    ReminderChoiceForm,
    form_class,
    form_templates,
    typed_order,
)
from games.web.gm.forms import first_error
from games.web.play import press as press_views
from moderator import ratelimit
from moderator.numbers import STEPS_MOST, whole_number


@require_http_methods(["GET", "POST"])
def home(request: HttpRequest) -> HttpResponse:
    """The home page, where a player who lost their links has them emailed: the answer is
    the same whether or not the address plays here, so nobody learns who does."""
    if request.method == "GET":
        return render(request, "games/home.html", {"form": LostLinksForm()})
    form = LostLinksForm(request.POST)
    if not form.is_valid():
        return render(request, "games/home.html", {"form": form})
    email = form.cleaned_data["email"]
    if ratelimit.lost_links_rate_limited(request, email):
        context = {"form": form, "limited": True}
        return render(request, "games/home.html", context, status=429)
    postal.ask_lost_links(email)
    return render(request, "games/home.html", {"form": LostLinksForm(), "sent_to": email})


def verify(request: HttpRequest, public_id: str) -> HttpResponse:
    """The public dice check: the commitment always, the recomputed rolls once revealed.
    Addressed by the game's random public id, so nobody can list the games by counting."""
    game = get_object_or_404(Game.objects.exclude(status=Game.Status.DRAFT), public_id=public_id)
    verdict = archive.verify(game) if game.seed_revealed else None
    return render(request, "games/verify.html", {"game": game, "verdict": verdict})


def verify_by_number(request: HttpRequest, game_id: int) -> HttpResponse:
    """The dice check's address in emails sent before games had public ids: it still
    opens for the browsers that may know the game (one of its seats, its GM); for anyone
    else it is the same 404 as a game that does not exist."""
    user = request.user
    games = Game.objects.exclude(status=Game.Status.DRAFT).filter(pk=game_id)
    if not (user.is_authenticated and user.is_staff):
        seats = access.browser_links(request)
        games = games.filter(seats__pk__in=list(seats))
    elif not user.is_superuser:
        games = games.filter(gm=user)
    public_id = games.values_list("public_id", flat=True).first()
    if public_id is None:
        return not_valid(request)
    return redirect("games:verify", public_id=public_id)


# --- magic links ---------------------------------------------------------------------------


def not_valid(request: HttpRequest) -> HttpResponse:
    """The one answer for every link or page this browser may not open: no hint of what
    exists."""
    return render(request, "games/not_valid.html", status=404)


@require_http_methods(["GET", "POST"])
def magic_link(request: HttpRequest, token: str) -> HttpResponse:
    # Counted per client address in the links' own scope: no feed or order spends it.
    if ratelimit.limited(request, "link"):
        return ratelimit.too_many(request, "link")
    seat = access.seat_for(token, now=timezone.now())
    if seat is None:
        return not_valid(request)
    if request.method == "GET":
        languages.speak(request, seat.speaks)
        return render(request, "games/continue.html", {"seat": seat, "game": seat.game})
    response = redirect(seat_page(seat))
    access.remember_seat(request, response, seat)
    return response


def _browser_seats(request: HttpRequest, **filters: Any) -> list[Seat]:
    """The seats this browser opened with a link that still works, with their games."""
    versions = access.browser_links(request)
    if not versions:
        return []
    seats = (
        Seat.objects.select_related("game")
        .filter(pk__in=versions, **filters)
        .order_by("game_id", "position")
    )
    return [seat for seat in seats if seat.link_version == versions[seat.pk]]


def seat_page(seat: Seat) -> str:
    """The address of a seat's page: every seat has its own, so a browser that holds
    several seats (a shared phone, a GM trying their own game) shows and orders for the
    one in the address."""
    return reverse("games:seat", args=[seat.game_id, seat.position])


def _speak(request: HttpRequest, seat: Seat) -> None:
    """The rest of the request in the seat's language; the footer names its setting."""
    languages.speak(request, seat.speaks, setting=f"{seat_page(seat)}#language-form")


# --- the player's pages ----------------------------------------------------------------


@require_GET
def play_index(request: HttpRequest) -> HttpResponse:
    seats = sorted(_browser_seats(request), key=lambda seat: (-seat.game.pk, seat.position))
    return render(request, "games/play_index.html", {"seats": seats})


@require_http_methods(["GET", "POST"])
def play_game(request: HttpRequest, game_id: int) -> HttpResponse:
    """A game's address from before seats had their own pages (bookmarks, old pages): a
    browser holding one seat of the game goes to its page; holding several, it chooses.
    A form posted here is out of date and records nothing."""
    seats = _browser_seats(request, game_id=game_id)
    if not seats:
        return not_valid(request)
    if request.method == "POST":
        messages.error(request, OUT_OF_DATE)
    if len(seats) == 1:
        return redirect(seat_page(seats[0]))
    return render(request, "games/play_index.html", {"seats": seats, "game": seats[0].game})


OUT_OF_DATE = gettext_lazy(
    "This form is out of date, so nothing was recorded: send your order again from the current "
    "page."
)


# The answer of ``_posted_seat_refusal`` for a page whose seat this browser does not hold.
NOT_HELD = "not held"


def _posted_seat_refusal(request: HttpRequest, game_id: int, position: int) -> str | None:
    """Why a posted order form may not be taken for the seat at ``position``, or None: the
    form carries the seat it was rendered for, and an order is only ever taken for that
    seat. NOT_HELD when the page's seat is not this browser's (nothing of it is said)."""
    posted = request.POST.get("seat", "")
    if posted == str(position):
        return None
    links = access.browser_links(request)
    readable = posted.isascii() and posted.isdigit() and len(posted) < 5
    rows = Seat.objects.filter(
        game_id=game_id, position__in=[int(posted), position] if readable else [position]
    ).values_list("position", "name", "pk", "link_version")
    names = {row[0]: row[1] for row in rows}
    if not any(row[0] == position and links.get(row[2]) == row[3] for row in rows):
        return NOT_HELD
    if not readable:
        return str(OUT_OF_DATE)
    if int(posted) not in names:
        return str(OUT_OF_DATE)
    return gettext(
        "This order form was for %(posted)s's seat, but this page is %(shown)s's: nothing was "
        "recorded. Send the order again from the right seat's page."
    ) % {"posted": names[int(posted)], "shown": names[position]}


@require_http_methods(["GET", "POST"])
def play(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    refused: postal.OrderRejected | None = None
    step_number: int | None = None
    text: str | None = None
    if request.method == "POST":
        if not access.browser_links(request):
            return not_valid(request)
        step_number = _posted_step(request)
        wrong_seat = _posted_seat_refusal(request, game_id, position)
        if wrong_seat is NOT_HELD:
            return not_valid(request)
        if step_number is None or wrong_seat is not None:
            # A form for the page's own seat without its step: said only to a browser
            # that holds the seat (the check costs a query on this rare path only).
            if wrong_seat is None and not _browser_seats(
                request, game_id=game_id, position=position
            ):
                return not_valid(request)
            messages.error(request, wrong_seat or OUT_OF_DATE)
            return HttpResponseRedirect(request.path)
        text = typed_order(request.POST)
        if text is not None:
            # A typed order needs nothing of the page: the postal layer checks the seat
            # of this address against this browser's links under the game's lock, and an
            # accepted order answers with a redirect. The page is built only to show why
            # an order was refused.
            try:
                order = postal.accept_linked_order(
                    game_id=game_id,
                    position=position,
                    links=access.browser_links(request),
                    text=text,
                    source=Order.Source.WEB,
                    now=timezone.now(),
                    step_number=step_number,
                    # Counted once the seat is known to be this browser's: nobody spends
                    # another seat's posts.
                    admit=lambda seat: not ratelimit.order_rate_limited(request, seat.pk),
                )
            except postal.SeatNotFound:
                return not_valid(request)
            except postal.NotAdmitted:
                return ratelimit.too_many(request, "orders", back=request.path)
            except postal.OrderRejected as error:
                refused = error
            else:
                return _accepted(request, order)
    held = _browser_seats(request, game_id=game_id)
    seat = next((seat for seat in held if seat.position == position), None)
    if seat is None:
        return not_valid(request)
    _speak(request, seat)
    if text is None and step_number is not None and ratelimit.order_rate_limited(request, seat.pk):
        # A post of the menus or blocks, counted as a typed order is.
        return ratelimit.too_many(request, "orders", back=request.path)
    game = seat.game
    if game.state is None:
        return render(request, "games/play.html", {"game": game, "seat": seat, "waiting": True})
    engine = game.rules
    state = engine.state_from_json(game.state)
    step = _open_step(game)
    context = reports.seat_context(game, seat, engine, state, step)
    order_form = form_class(game.engine)
    context.update(order_form.page_context(context["view"]))
    form = None
    if step is not None and seat.position in step.prompted_seats:
        form = order_form(
            request.POST if request.method == "POST" else None,
            engine=engine,
            state=state,
            position=seat.position,
            step_number=step.number,
            current=context["view"].get("you", {}).get("order") or "",
        )
    if step_number is not None:  # a post of an order form
        response, form = _take_order(request, seat, form, step_number, refused)
        if response is not None:
            return response
    history = reports.history(game, seat.position, before=history_before(request))
    seats = absences.seats_of_game(game.pk, now=timezone.now())
    context.update(
        form=form,
        form_templates=form_templates(game.engine),
        report_events=reports.report_events(game, seat.position, history),
        history=history,
        counting=_counting_order(step, seat),
        calendar_url=access.calendar_url(seat),
        **_email_choice_context(seat, engine),
        **_missed_context(game, seat, seats),
        **press_views.seat_section(game, seat, seats),
        language_form=LanguageForm(
            initial={"language": seat.language}, game_language=game.language
        ),
        other_seats=[other for other in held if other.pk != seat.pk],
        gm_log=reports.gm_log(game),
    )
    return render(request, "games/play.html", context)


def history_before(request: HttpRequest) -> int | None:
    """The step the page's history reads older steps before (``?before=N``), or None for
    the newest steps; anything that is not a step number shows the newest."""
    return whole_number(request.GET.get("before"), most=STEPS_MOST)


def _email_choice_context(seat: Seat, engine: Any) -> dict[str, Any]:
    """The seat's choice of how often it gets email and its address's reminders, and the
    forms to change them."""
    choice = email_choices.effective(seat, engine)
    preference = email_choices.saved_preference(seat)
    return {
        "reminder_form": ReminderChoiceForm(initial=reminders.choice_of(preference)),
        "email_form": EmailChoiceForm(initial={"reports": choice}),
        "email_choice": email_choices.YOU_GET[choice],
        "email_default": not seat.reports,
        "game_default": email_choices.YOU_GET[email_choices.game_default(engine)],
        "digest_time": email_choices.digest_time(seat, preference),
    }


def _missed_context(game: Game, seat: Seat, seats: list[absences.GameSeat]) -> dict[str, Any]:
    """What plays the seat's missed turns (the choices, written by the template), its
    extensions left, and who of the game's ``seats`` is away now."""
    away = [
        {"name": other.name, "until": other.away_until, "you": other.position == seat.position}
        for other in seats
        if other.away_until is not None
    ]
    strategies = registry.strategies(game.engine)
    return {
        "autopilots": [(s.key, words.Said(s.title), words.Said(s.summary)) for s in strategies],
        "autopilot": registry.strategy(game.engine, seat.autopilot) if seat.autopilot else None,
        "extensions_left": max(game.extensions - seat.extensions_used, 0),
        "away": away,
        "absence_policy": absences.WHAT_IT_DOES[AbsencePolicy(game.absence_policy)],
    }


@require_GET
def play_game_json(request: HttpRequest, game_id: int) -> HttpResponse:
    """The JSON of a game's address from before seats had their own: one seat of the game
    in this browser goes to its JSON; several are listed (300), each with its address."""
    seats = _browser_seats(request, game_id=game_id)
    if not seats:
        return not_valid(request)
    if len(seats) == 1:
        return redirect(reverse("games:seat_json", args=[game_id, seats[0].position]))
    listed = [
        {"name": seat.name, "position": seat.position, "page": seat_page(seat)} for seat in seats
    ]
    return JsonResponse({"game": game_id, "seats": listed}, status=300)


@require_GET
def play_json(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    """The seat's page as JSON: what the seat in the address may see (the engine's view
    for it), what it owes and until when. Scoped like the page: a seat this browser does
    not hold is the same 404."""
    seats = _browser_seats(request, game_id=game_id, position=position)
    if not seats:
        return not_valid(request)
    seat = seats[0]
    game = seat.game
    data: dict[str, Any] = {"game": game.pk, "title": game.title, "status": game.status}
    data["seat"] = {"position": seat.position, "name": seat.name}
    if game.state is not None:
        engine = game.rules
        step = _open_step(game)
        data["view"] = engine.view(engine.state_from_json(game.state), seat.position)
        if step is not None:
            data["step"] = {
                "number": step.number,
                "deadline": step.deadline.isoformat(),
                "owed": words.owed(step.prompts, seat.position),
            }
    return JsonResponse(data)


def _open_step(game: Game) -> Step | None:
    if game.status == Game.Status.FINISHED:
        return None
    # get(), not first(): (game, number) is unique, and first() would order by the steps'
    # default ordering, which joins the game table. The game's state is the page's; the
    # step's own copies of it are not read.
    try:
        return game.steps.defer("state_before", "state_after").get(number=game.step_number)
    except Step.DoesNotExist:
        return None


def _counting_order(step: Step | None, seat: Seat) -> dict[str, Any] | None:
    """The latest order of the seat for the open step, with when it was received."""
    if step is None:
        return None
    order = (
        Order.objects.filter(step=step, seat=seat)
        .exclude(source=Order.Source.DEFAULT)
        .order_by("-received_at", "-id")
        .first()
    )
    if order is None:
        return None
    return {"order": order, "received": schedule.local_time(order.received_at, seat.zone)}


def _accept(seat: Seat, text: str, step_number: int) -> Order:
    return postal.accept_order(
        game_id=seat.game_id,
        position=seat.position,
        text=text,
        source=Order.Source.WEB,
        now=timezone.now(),
        step_number=step_number,
    )


def _take_order(
    request: HttpRequest,
    seat: Seat,
    form: Any,
    step_number: int,
    refused: postal.OrderRejected | None,
) -> tuple[HttpResponse | None, Any]:
    """Hand a posted order to the postal layer: a redirect when it is accepted (PRG), else
    no response and the form to show, with the reason on it. ``refused``: why the postal
    layer already refused the typed order of this post."""
    if form is None or step_number != form.initial["step"]:
        # Written for another step, or no order is owed now: the postal layer takes it if
        # it still fits the step open now, else says what happened.
        if refused is None:
            try:
                order = _accept(seat, _written_order(request, seat, step_number), step_number)
                return _accepted(request, order), form
            except postal.OrderRejected as error:
                refused = error
        if form is not None and isinstance(refused, postal.StepMovedOn) and refused.kept:
            return None, _offered_again(request, form, seat, step_number, refused)
        messages.error(request, _refusal(refused))
        return redirect(seat_page(seat)), form
    if not form.is_valid():
        return None, form
    if refused is None:
        try:
            return _accepted(request, _accept(seat, form.order_text(), step_number)), form
        except postal.OrderRejected as error:
            refused = error
    form.add_order_error(_refusal(refused))
    return None, form


def _refusal(error: postal.OrderRejected) -> str:
    """Why an order was not taken, as the player's page says it."""
    if not isinstance(error, postal.StepMovedOn):
        return error.message
    text = gettext("While your page was open, %(happened)s.") % {"happened": error.happened}
    if not error.kept:
        return f"{text} {error.reason[0].upper()}{error.reason[1:]}."
    return gettext(
        "%(text)s Your order was not recorded: %(reason)s. It is in the box below: check it, "
        "change it if need be, and send it again."
    ) % {"text": text, "reason": error.reason}


def _written_order(request: HttpRequest, seat: Seat, step_number: int) -> str:
    """The order a form written for step ``step_number`` says, as text: the typed box as
    typed; a menu's or a game's own form's order read by the form of that step ("" when
    it reads none, a once-a-game order not confirmed, say)."""
    if request.POST.get("entry") == TEXT:
        return request.POST.get("text", "")
    step = seat.game.steps.filter(number=step_number).only("state_before").first()
    if step is None:
        return ""
    engine = seat.game.rules
    form = form_class(seat.game.engine)(
        request.POST,
        engine=engine,
        state=engine.state_from_json(step.state_before),
        position=seat.position,
        step_number=step_number,
    )
    return form.order_text() if form.is_valid() else ""


def _offered_again(
    request: HttpRequest, form: Any, seat: Seat, step_number: int, error: postal.StepMovedOn
) -> Any:
    """The form of the step open now with the player's order in its typed box and what
    happened above it: nothing was recorded, and the player decides."""
    written = (
        request.POST.get("text", "")
        if request.POST.get("entry") == TEXT
        else _written_order(request, seat, step_number)
    )
    again = type(form)(
        {"step": form.initial["step"], "entry": TEXT, "text": written},
        engine=form.engine,
        state=form.state,
        position=form.position,
        step_number=form.initial["step"],
    )
    if again.is_valid():
        again.add_order_error(_refusal(error))
        return again
    # Nothing to offer again: the current form as it is, and the message above it.
    messages.error(request, _refusal(error))
    return type(form)(
        engine=form.engine,
        state=form.state,
        position=form.position,
        step_number=form.initial["step"],
        current=form.initial.get("text", ""),
    )


def _posted_step(request: HttpRequest) -> int | None:
    return whole_number(request.POST.get("step"), most=STEPS_MOST)


def _accepted(request: HttpRequest, order: Order) -> HttpResponse:
    """Say which order was taken, as the engine writes it; the page shows what it did.
    Back to the page the order was posted to, the game's page: its address is the
    request's, with nothing to work out (reversing it was 3% of an order's CPU)."""
    canonical = "; ".join(order.canonical.splitlines())
    _speak(request, order.seat)
    if order.carried_over is not None:
        messages.success(
            request,
            gettext(
                "While your page was open, %(happened)s. Your order still fits it and is "
                "accepted: %(order)s."
            )
            % {"happened": order.carried_over, "order": canonical},
        )
    elif order.repeated:
        messages.success(
            request,
            gettext("This is already the order that counts: %(order)s. Nothing new was recorded.")
            % {"order": canonical},
        )
    else:
        messages.success(
            request, gettext("Your order is accepted: %(order)s.") % {"order": canonical}
        )
    return HttpResponseRedirect(request.path)


# --- calendars and reminder choices --------------------------------------------------------


def _calendar(body: str) -> HttpResponse:
    response = HttpResponse(body, content_type="text/calendar; charset=utf-8")
    response["Cache-Control"] = f"private, max-age={settings.CALENDAR_CACHE_SECONDS}"
    return response


def _feed(
    request: HttpRequest, kind: str, token: str, build: Callable[[], str | None]
) -> HttpResponse:
    """A calendar feed (``build()``; None for a token that opens nothing), kept in the
    cache for CALENDAR_CACHE_SECONDS under a digest of its token: a calendar app polling
    every minute then costs no query and no rate limit. Only a feed built afresh (or a
    wrong token) counts, in the calendar scope: a calendar never spends its players' links.
    A seat's token retired by a rotation or a new player loses its cached copy at once
    (``calendar.forget_seat_feed``); a copy the calendar app itself keeps lasts until it
    expires (Cache-Control)."""
    key = calendar.cache_key(kind, token)
    try:
        body = cache.get(key)
    except RedisError:  # Redis away: build the feed, as if nothing were cached
        body = None
    if body is None:
        if ratelimit.limited(request, "calendar"):
            return ratelimit.too_many(request, "calendar")
        body = build()
        if body is None:
            return not_valid(request)
        with contextlib.suppress(RedisError):
            cache.set(key, body, settings.CALENDAR_CACHE_SECONDS)
    return _calendar(body)


@require_GET
def seat_calendar(request: HttpRequest, token: str) -> HttpResponse:
    """The seat's private feed: its token is the only key, so every wrong one is the same
    404, and guessing is rate limited."""

    def build() -> str | None:
        seat = access.seat_for_token(token, "calendar")
        return None if seat is None else calendar.seat_feed(seat, now=timezone.now())

    return _feed(request, "seat", token, build)


@require_GET
def gm_calendar(request: HttpRequest, token: str) -> HttpResponse:
    def build() -> str | None:
        user = access.gm_for_calendar_token(token)
        return None if user is None else calendar.gm_feed(user, now=timezone.now())

    return _feed(request, "gm", token, build)


@require_POST
def reminder_choice(request: HttpRequest) -> HttpResponse:
    """A player chooses, for their address and every game it plays, one email per reminder
    or one daily digest."""
    seats = _browser_seats(request)
    seat_id = request.POST.get("seat", "")
    seat = next((seat for seat in seats if str(seat.pk) == seat_id), None)
    if seat is None:
        return not_valid(request)
    _speak(request, seat)
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
    return redirect(seat_page(seat))


# What each one-click unsubscribe stops, as its page says it before the click.
STOPPING = {
    "reports": gettext_lazy("the step reports of this seat by email"),
    "all-reports": gettext_lazy(
        "the step reports of every seat of your address by email, in every game"
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
    """The player chooses how often they get this game's reports by email: for this seat,
    or for all the seats of their address and as their default. A choice that is not one
    of the form's changes nothing and says why."""
    seats = _browser_seats(request, game_id=game_id, position=position)
    if not seats:
        return not_valid(request)
    seat = seats[0]
    _speak(request, seat)
    form = EmailChoiceForm(request.POST)
    if not form.is_valid():
        first = next(iter(form.errors.values()))[0]
        messages.error(request, nothing_changed(first))
        return redirect(seat_page(seat))
    everywhere = form.cleaned_data["scope"] == email_choices.ALL_SEATS
    chosen = postal.choose_reports(
        game_id, position=position, choice=form.cleaned_data["reports"], everywhere=everywhere
    )
    you_get = email_choices.YOU_GET[form.cleaned_data["reports"]]
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
            % {"email": seat.email, "count": games, "you_get": you_get},
        )
    else:
        messages.success(
            request,
            gettext("Done: you now get this game's reports %(you_get)s.") % {"you_get": you_get},
        )
    return redirect(seat_page(seat))


def nothing_changed(message: object) -> str:
    """A refusal as a page says it: the message, and that nothing was changed."""
    return gettext("%(message)s Nothing was changed.") % {"message": message}


def refused(message: str) -> str:
    """A domain refusal ("the game ...") as a page says it: a sentence, and that nothing
    was changed."""
    return nothing_changed(f"{message[:1].upper()}{message[1:]}.")


@require_POST
def language_choice(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    """The player chooses the language of their seat's page and emails: one of its own,
    or its game's (docs/languages.md)."""
    seats = _browser_seats(request, game_id=game_id, position=position)
    if not seats:
        return not_valid(request)
    seat = seats[0]
    form = LanguageForm(request.POST, game_language=seat.game.language)
    if not form.is_valid():
        _speak(request, seat)
        messages.error(request, nothing_changed(first_error(form)))
        return redirect(seat_page(seat))
    seat = postal.choose_language(
        game_id, position=position, language=form.cleaned_data["language"]
    )
    # Said in the language just chosen: the page it goes back to speaks it.
    _speak(request, seat)
    messages.success(
        request,
        gettext("Done: this seat's page and emails are in %(language)s.")
        % {"language": languages.NAMES[seat.speaks]},
    )
    return redirect(seat_page(seat))


@require_POST
def autopilot_choice(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    """The player chooses what plays their turn when they miss a deadline."""
    seats = _browser_seats(request, game_id=game_id, position=position)
    if not seats:
        return not_valid(request)
    seat = seats[0]
    _speak(request, seat)
    form = AutopilotForm(request.POST, engine_key=seat.game.engine)
    if not form.is_valid():
        messages.error(request, nothing_changed(first_error(form)))
        return redirect(seat_page(seat))
    try:
        seat = postal.choose_autopilot(
            game_id, position=position, key=form.cleaned_data["autopilot"]
        )
    except postal.PostalError as error:
        messages.error(request, refused(error.message))
        return redirect(seat_page(seat))
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
    return redirect(seat_page(seat))


@require_http_methods(["GET", "POST"])
def away(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    """The seat's player declares an absence (for this game or all the games of their
    address), sees theirs, and takes one back."""
    seats = _browser_seats(request, game_id=game_id, position=position)
    if not seats:
        return not_valid(request)
    seat = seats[0]
    game = seat.game
    _speak(request, seat)
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


def away_page(
    request: HttpRequest,
    *,
    email: str,
    zone: str,
    games: dict[str, Game],
    context: dict[str, Any],
) -> HttpResponse:
    """The absences of ``email``: declared (for one of ``games``, by the form's value, or
    for all), listed, and taken back; days in ``zone``. The seat's away page and a
    signed-in player's share it."""
    now = timezone.now()
    choices = [
        (value, gettext("this game only") if value == "game" else game.title)
        for value, game in games.items()
    ]
    form = AbsenceForm(games=choices)
    if request.method == "POST" and "withdraw" in request.POST:
        withdrawn = request.POST["withdraw"]
        try:
            if not (withdrawn.isascii() and withdrawn.isdigit() and len(withdrawn) < 12):
                raise absences.AbsenceError(gettext("there is no such absence of yours"))
            absences.withdraw(email, int(withdrawn), now=now)
        except absences.AbsenceError as error:
            messages.error(request, refused(error.message))
        else:
            messages.success(request, gettext("Done: that absence is removed."))
        return redirect(request.path)
    if request.method == "POST":
        form = AbsenceForm(request.POST, games=choices)
        if form.is_valid():
            data = form.cleaned_data
            try:
                absence = absences.declare(
                    email,
                    first_day=data["first_day"],
                    last_day=data["last_day"],
                    zone=zone,
                    now=now,
                    game=games.get(data["scope"]),
                )
            except absences.AbsenceError as error:
                form.add_error(None, f"{error.message[:1].upper()}{error.message[1:]}.")
            else:
                days = {
                    "first": absences.day(absence.first_day),
                    "last": absences.day(absence.last_day),
                }
                if absence.game:
                    said = gettext(
                        "Done: you are away in %(title)s from %(first)s to %(last)s."
                    ) % {**days, "title": absence.game.title}
                else:
                    said = gettext(
                        "Done: you are away in all your games from %(first)s to %(last)s."
                    )
                    said %= days
                messages.success(request, said)
                return redirect(request.path)
    context = {
        **context,
        "form": form,
        "zone": zone,
        "absences": absences.declared(email, now=now),
    }
    return render(request, "games/away.html", context)


@require_POST
def extension(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    """The player spends one of their extensions: the deadline moves on for everyone."""
    seats = _browser_seats(request, game_id=game_id, position=position)
    if not seats:
        return not_valid(request)
    seat = seats[0]
    _speak(request, seat)
    try:
        step = postal.use_extension(game_id, position=position, now=timezone.now())
    except postal.PostalError as error:
        messages.error(request, refused(error.message))
    else:
        deadline = schedule.local_time(step.deadline, seat.zone)
        messages.success(
            request,
            gettext("Done: the deadline is now %(deadline)s; everyone is told.")
            % {"deadline": deadline},
        )
    return redirect(seat_page(seat))
