"""Public pages and the players' pages.

A player has no account: a magic link ``/p/<token>/`` shows a Continue page on GET (email
link scanners must change nothing, so GET writes nothing, not even a cookie) and, on
POST, adds the seat to the browser's signed seats cookie (``access.remember_seat``) and
redirects to the token-free ``/play/<id>/``. Every player page is scoped to the seats the
browser holds; anything else answers the same plain 404. Views stay thin: ``games.access``
and ``games.postal`` do the work.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from games import access, archive, calendar, postal, reminders, reports
from games.forms import ReminderChoiceForm, form_class, form_templates, typed_order
from games.gm_forms import first_error
from games.models import Game, Order, Seat, Step
from moderator import ratelimit

LINK_RATE = {"limit": 30, "window": 60}


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "games/home.html")


def verify(request: HttpRequest, game_id: int) -> HttpResponse:
    """The public dice check: the commitment always, the recomputed rolls once revealed."""
    game = get_object_or_404(Game.objects.exclude(status=Game.Status.DRAFT), pk=game_id)
    verdict = archive.verify(game) if game.seed_revealed else None
    return render(request, "games/verify.html", {"game": game, "verdict": verdict})


# --- magic links ---------------------------------------------------------------------------


def not_valid(request: HttpRequest) -> HttpResponse:
    """The one answer for every link or page this browser may not open: no hint of what
    exists."""
    return render(request, "games/not_valid.html", status=404)


def _too_many(request: HttpRequest) -> HttpResponse:
    return render(request, "games/too_many.html", status=429)


@require_http_methods(["GET", "POST"])
def magic_link(request: HttpRequest, token: str) -> HttpResponse:
    if not ratelimit.allow("link", ratelimit.client_ip(request.META), **LINK_RATE):
        return _too_many(request)
    seat = access.seat_for(token, now=timezone.now())
    if seat is None:
        return not_valid(request)
    if request.method == "GET":
        return render(request, "games/continue.html", {"seat": seat, "game": seat.game})
    response = redirect("games:play", game_id=seat.game_id)
    access.remember_seat(request, response, seat)
    return response


def _browser_seats(request: HttpRequest, **filters: Any) -> list[Seat]:
    """The seats this browser opened with a link that still works, with their games."""
    versions = access.browser_links(request)
    if not versions:
        return []
    # A game's seats by position: the page shows the first.
    seats = (
        Seat.objects.select_related("game")
        .filter(pk__in=versions, **filters)
        .order_by("game_id", "position")
    )
    return [seat for seat in seats if seat.link_version == versions[seat.pk]]


# --- the player's pages ----------------------------------------------------------------


@require_GET
def play_index(request: HttpRequest) -> HttpResponse:
    seats = sorted(_browser_seats(request), key=lambda seat: -seat.game.pk)
    return render(request, "games/play_index.html", {"seats": seats})


@require_http_methods(["GET", "POST"])
def play(request: HttpRequest, game_id: int) -> HttpResponse:
    refused: str | None = None
    step_number = _posted_step(request) if request.method == "POST" else None
    text = typed_order(request.POST) if step_number is not None else None
    links = access.browser_links(request) if text is not None else {}
    if text is not None and step_number is not None and links:
        # A typed order needs nothing of the page, not even the seat: the postal layer
        # finds the seat this browser's links open under the game's lock, and an accepted
        # order answers with a redirect. The page is built only to show why an order was
        # refused.
        try:
            order = postal.accept_linked_order(
                game_id=game_id,
                links=links,
                text=text,
                source=Order.Source.WEB,
                now=timezone.now(),
                step_number=step_number,
            )
        except postal.SeatNotFound:
            return not_valid(request)
        except postal.OrderRejected as error:
            refused = error.message
        else:
            return _accepted(request, order)
    seats = _browser_seats(request, game_id=game_id)
    if not seats:
        return not_valid(request)
    seat = seats[0]
    if request.method == "POST" and step_number is None:
        messages.error(request, "This form is out of date; here is the current one.")
        return redirect("games:play", game_id=seat.game_id)
    game = seat.game
    if game.state is None:
        return render(request, "games/play.html", {"game": game, "seat": seat, "waiting": True})
    engine = game.rules
    state = engine.state_from_json(game.state)
    step = _open_step(game)
    context = reports.seat_context(game, seat, engine, state, step)
    form = None
    if step is not None and seat.position in step.prompted_seats:
        form = form_class(game.engine)(
            request.POST if request.method == "POST" else None,
            state=state,
            position=seat.position,
            step_number=step.number,
            current=context["view"].get("you", {}).get("order") or "",
        )
    if step_number is not None:  # a post of an order form
        response = _take_order(request, seat, form, step_number, refused)
        if response is not None:
            return response
    context.update(
        form=form,
        form_templates=form_templates(game.engine),
        report_events=reports.report_events(game, seat.position),
        history=reports.history(game, seat.position),
        counting=_counting_order(step, seat),
        calendar_url=access.calendar_url(seat),
        reminder_form=ReminderChoiceForm(initial=reminders.choice_of(seat)),
    )
    return render(request, "games/play.html", context)


@require_GET
def play_json(request: HttpRequest, game_id: int) -> HttpResponse:
    """The seat's page as JSON: what the seat may see (the engine's view for it), what it
    owes and until when. Scoped like the page: another seat's game is the same 404."""
    seats = _browser_seats(request, game_id=game_id)
    if not seats:
        return not_valid(request)
    seat = seats[0]
    game = seat.game
    data: dict[str, Any] = {"game": game.pk, "title": game.title, "status": game.status}
    if game.state is not None:
        engine = game.rules
        step = _open_step(game)
        data["seat"] = {"position": seat.position, "name": seat.name}
        data["view"] = engine.view(engine.state_from_json(game.state), seat.position)
        if step is not None:
            data["step"] = {
                "number": step.number,
                "deadline": step.deadline.isoformat(),
                "owed": [p for p in step.prompts if p["seat"] == seat.position],
            }
    return JsonResponse(data)


def _open_step(game: Game) -> Step | None:
    if game.status == Game.Status.FINISHED:
        return None
    # get(), not first(): (game, number) is unique, and first() would order by the steps'
    # default ordering, which joins the game table.
    try:
        return game.steps.get(number=game.step_number)
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
    return {"order": order, "received": reports.local_time(order.received_at, seat.zone)}


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
    request: HttpRequest, seat: Seat, form: Any, step_number: int, refused: str | None
) -> HttpResponse | None:
    """Hand a posted order to the postal layer: a redirect when it is accepted (PRG), else
    None with the reason attached to the form. ``refused``: why the postal layer already
    refused the typed order of this post."""
    if form is None or step_number != form.initial["step"]:
        # Not owed now, or written for another step: no form of the current step can read
        # it, and the postal layer answers with the reason ("too late: ...").
        if refused is None:
            try:
                order = _accept(seat, request.POST.get("text", ""), step_number)
                return _accepted(request, order)
            except postal.OrderRejected as error:
                refused = error.message
        messages.error(request, refused)
        return redirect("games:play", game_id=seat.game_id)
    if not form.is_valid():
        return None
    if refused is None:
        try:
            return _accepted(request, _accept(seat, form.order_text(), step_number))
        except postal.OrderRejected as error:
            refused = error.message
    form.add_order_error(refused)
    return None


def _posted_step(request: HttpRequest) -> int | None:
    try:
        return int(request.POST.get("step", ""))
    except ValueError:
        return None


def _accepted(request: HttpRequest, order: Order) -> HttpResponse:
    """Say which order was taken, as the engine writes it; the page shows what it did.
    Back to the page the order was posted to, the game's page: its address is the
    request's, with nothing to work out (reversing it was 3% of an order's CPU)."""
    canonical = "; ".join(order.canonical.splitlines())
    messages.success(request, f"Your order is accepted: {canonical}.")
    return HttpResponseRedirect(request.path)


# --- calendars and reminder choices --------------------------------------------------------


def _calendar(body: str) -> HttpResponse:
    response = HttpResponse(body, content_type="text/calendar; charset=utf-8")
    response["Cache-Control"] = "private, max-age=300"
    return response


@require_GET
def seat_calendar(request: HttpRequest, token: str) -> HttpResponse:
    """The seat's private feed: its token is the only key, so every wrong one is the same
    404, and guessing is rate limited like the links."""
    if not ratelimit.allow("link", ratelimit.client_ip(request.META), **LINK_RATE):
        return _too_many(request)
    seat = access.seat_for_token(token, "calendar")
    if seat is None:
        return not_valid(request)
    return _calendar(calendar.seat_feed(seat, now=timezone.now()))


@require_GET
def gm_calendar(request: HttpRequest, token: str) -> HttpResponse:
    if not ratelimit.allow("link", ratelimit.client_ip(request.META), **LINK_RATE):
        return _too_many(request)
    user = access.gm_for_calendar_token(token)
    if user is None:
        return not_valid(request)
    return _calendar(calendar.gm_feed(user, now=timezone.now()))


@require_POST
def reminder_choice(request: HttpRequest) -> HttpResponse:
    """A player chooses, for their address and every game it plays, one email per reminder
    or one daily digest."""
    seats = _browser_seats(request)
    seat_id = request.POST.get("seat", "")
    seat = next((seat for seat in seats if str(seat.pk) == seat_id), None)
    if seat is None:
        return not_valid(request)
    form = ReminderChoiceForm(request.POST)
    if not form.is_valid():
        messages.error(request, first_error(form))
    else:
        reminders.choose(seat, digest=form.cleaned_data["digest"], hour=form.cleaned_data["hour"])
        if form.cleaned_data["digest"]:
            hour = form.cleaned_data["hour"]
            messages.success(
                request,
                f"Reminders for {seat.email} now come as one digest a day at {hour:02d}:00 "
                f"({seat.zone}), for all your games. Reports still come at once.",
            )
        else:
            messages.success(request, f"Reminders for {seat.email} come one email at a time.")
    return redirect("games:play", game_id=seat.game_id)
