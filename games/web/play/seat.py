"""A seat's page, ``/play/<game>/<position>/``, and the orders posted to it: what the seat
owes and by when, its private block and the order form first, then the board, the history
and the game's messages (its settings have a page of their own, ``settings``), and the same
page as JSON.
Open only to a browser that holds the seat (``common.browser_seats``). An order goes to
the postal layer, which checks it under the game's lock; an accepted order answers with a
redirect (PRG), a refused one with the page and why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_http_methods

from games import postal
from games.community import absences, press
from games.engines import registry
from games.lib import schedule, words
from games.models import Game, Order, Seat, Step
from games.notify import ledger, machine, reports
from games.notify import live as pulse
from games.postal import access, conditionals
from games.web import live
from games.web.common import history_before
from games.web.forms import TEXT, form_class, form_templates, typed_order
from games.web.play.common import OUT_OF_DATE, browser_seats, held_seat, not_valid, seat_page, speak
from games.web.play.press_forms import message_form
from moderator import ratelimit
from moderator.numbers import STEPS_MOST, whole_number

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


@dataclass(frozen=True)
class Posted:
    """An order form posted to the seat's page that the page itself answers: the step it
    was written for, the typed order (None for a menu's or a game's own form), and why
    the postal layer already refused the typed order."""

    step_number: int
    text: str | None = None
    refused: postal.OrderRejected | None = None


@require_http_methods(["GET", "POST"])
def play(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    """The seat's page, and an order posted to it: taken, or shown again with why not."""
    posted: Posted | None = None
    if request.method == "POST":
        answer = _posted(request, game_id, position)
        if isinstance(answer, HttpResponse):
            return answer
        posted = answer
    held = browser_seats(request, game_id=game_id)
    seat = next((seat for seat in held if seat.position == position), None)
    if seat is None:
        return live.refresh() if live.polling(request) else not_valid(request)
    polled = live.answer(request, lambda: pulse.seat_pulse(seat))
    if polled is not None:
        return polled
    speak(request, seat)
    if (
        posted is not None
        and posted.text is None
        and ratelimit.order_rate_limited(request, seat.pk)
    ):
        # A post of the menus or blocks, counted as a typed order is.
        return ratelimit.too_many(request, "orders", back=request.path)
    game = seat.game
    if game.state is None:
        return render(request, "games/play.html", {"game": game, "seat": seat, "waiting": True})
    return _page(request, seat, held, posted)


def _posted(request: HttpRequest, game_id: int, position: int) -> HttpResponse | Posted:
    """An order form posted to the page of the seat at ``position``, checked before the
    page is built: the answer when the post is done with (refused, or a typed order
    accepted), else what the page needs to answer it."""
    if not access.browser_links(request):
        return not_valid(request)
    step_number = _posted_step(request)
    wrong_seat = _posted_seat_refusal(request, game_id, position)
    if wrong_seat is NOT_HELD:
        return not_valid(request)
    if step_number is None or wrong_seat is not None:
        # A form for the page's own seat without its step: said only to a browser
        # that holds the seat (the check costs a query on this rare path only).
        if wrong_seat is None and not browser_seats(request, game_id=game_id, position=position):
            return not_valid(request)
        messages.error(request, wrong_seat or OUT_OF_DATE)
        return HttpResponseRedirect(request.path)
    text = typed_order(request.POST)
    if text is None:
        return Posted(step_number)
    return _typed(request, game_id, position, step_number, text)


def _typed(
    request: HttpRequest, game_id: int, position: int, step_number: int, text: str
) -> HttpResponse | Posted:
    """A typed order needs nothing of the page: the postal layer checks the seat of this
    address against this browser's links under the game's lock, and an accepted order
    answers with a redirect. The page is built only to show why an order was refused."""
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
        return Posted(step_number, text, error)
    return _accepted(request, order)


def _page(
    request: HttpRequest, seat: Seat, held: list[Seat], posted: Posted | None
) -> HttpResponse:
    """The page of ``seat`` in a started game (``held``: every seat of the game this
    browser holds), with the order form; ``posted``: an order form posted to it, taken
    here or shown again with why it was not."""
    game = seat.game
    engine = game.rules
    state = engine.state_from_json(game.state)
    step = _open_step(game)
    seats = absences.seats_of_game(game.pk, now=timezone.now())
    game.bot_names = [other.name for other in seats if other.bot]
    context = reports.seat_context(game, seat, engine, state, step, reader="seat")
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
    if posted is not None:
        response, form = _take_order(request, seat, form, posted.step_number, posted.refused)
        if response is not None:
            return response
    history = reports.history(game, seat.position, before=history_before(request))
    # The rules in play count the players (``reports.players_in``): from the seats read here.
    if game.seat_names is None:
        game.seat_names = {other.position: other.name for other in seats}
    report_events = reports.report_events(game, seat.position, history)
    context.update(
        form=form,
        form_templates=form_templates(game.engine),
        report=reports.latest_report(game, seat.name, report_events),
        history=history,
        report_terms=_terms(report_events),
        history_terms=_terms([text for group in history.groups for text in group["events"]]),
        counting=_counting_order(step, seat),
        step_word=engine.step_word,
        **_away_context(game, seat, seats),
        **_press_section(game, seat, seats),
        other_seats=[other for other in held if other.pk != seat.pk],
        gm_log=reports.gm_log(game, seat.zone),
        decided=ledger.of_seat(seat),
        **_conditional_section(game, seat, step),
    )
    return render(request, "games/play.html", context)


def _conditional_section(game: Game, seat: Seat, step: Step | None) -> dict[str, Any]:
    """The seat's conditional orders (a game played in turns): its armed ones, and the form
    to leave one while it is not its turn."""
    found = registry.CONDITIONS.get(game.engine)
    if found is None or game.status != Game.Status.RUNNING:
        return {}
    owes = step is not None and seat.position in step.prompted_seats
    return {
        # On the seat's turn its armed ones have played or been disarmed as it came: the
        # page reads them only while it is not.
        "conditionals": [] if owes else conditionals.armed_of(seat),
        "conditional_syntax": found.syntax,
        "conditional_example": found.example,
        "conditional_hint": words.Said(found.hint),
        "conditional_open": not owes,
    }


# The words of play by post the page explains where its reports say them: the English word
# an event's stored text holds, and the anchor of its entry on the glossary page.
TERMS = (
    ("NMR", "nmr"),
    ("civil disorder", "civil-disorder"),
    ("autopilot", "autopilot"),
    ("extension", "extension"),
)


def _terms(texts: list[str]) -> list[str]:
    """The glossary anchors of the TERMS the ``texts`` (events as stored, in English) say,
    in the order of TERMS."""
    return [anchor for word, anchor in TERMS if any(word in text for text in texts)]


def _press_section(game: Game, seat: Seat, seats: list[absences.GameSeat]) -> dict[str, Any]:
    """The page's "Messages": the latest messages the seat may read (one query), the
    form while the game is open, and the seat's choice of email."""
    rows = [(other.id, other.position, other.name) for other in seats]
    page = press.for_seat(seat, {row[0]: row[2] for row in rows}, limit=press.SEAT_PAGE_MESSAGES)
    open_ = game.status in press.OPEN
    return {
        "press": page,
        "press_open": open_,
        "press_form": message_form(game, seat, rows) if open_ else None,
    }


def _away_context(game: Game, seat: Seat, seats: list[absences.GameSeat]) -> dict[str, Any]:
    """Who of the game's ``seats`` is away now, and the seat's extensions left (the page
    offers one while the seat owes an order)."""
    away = [
        {"name": other.name, "until": other.away_until, "you": other.position == seat.position}
        for other in seats
        if other.away_until is not None
    ]
    return {"away": away, "extensions_left": max(game.extensions - seat.extensions_used, 0)}


@require_GET
def play_json(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    """The seat's page as JSON, as the API's seat view says it (``notify.machine``): what
    the seat in the address may see, what it owes and until when. Scoped like the page: a
    seat this browser does not hold is the same 404."""
    seat = held_seat(request, game_id, position)
    if seat is None:
        return not_valid(request)
    return JsonResponse(machine.seat_data(seat))


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
    speak(request, order.seat)
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
