"""The pages of messages between players (games.community.press): the "Messages" section of a seat's
page, the seat's messages page (``/play/<game>/<position>/messages/``: every message it
may read, and the form), its choice of email, and the GM's messages page
(``/gm/<game>/messages/``: every message of the game, announcements, hiding). Thin: a
form, then one ``games.community.press`` function. A seat's pages open only for a browser that holds
the seat (``access.browser_links``); the GM's only for the game's GM."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from games.community import absences, press
from games.models import Game, Message, PressEmail, Seat
from games.notify import languages
from games.postal import access
from games.web.gm import views as gm_views
from games.web.gm.forms import first_error
from games.web.play.press_forms import AnnounceForm, HideForm, MessageForm, PressEmailForm
from moderator.numbers import whole_number

# The seat page (games.web.play.views) includes this module's section, so nothing is imported from
# there.


def _not_valid(request: HttpRequest) -> HttpResponse:
    """The one answer for a page this browser may not open (``views.not_valid``)."""
    return render(request, "games/not_valid.html", status=404)


def _seat_page(seat: Seat) -> str:
    return reverse("games:seat", args=[seat.game_id, seat.position])


def _before(request: HttpRequest) -> int | None:
    """The message a page lists older ones before (``?before=N``); anything that is not a
    message's number shows the newest."""
    return whole_number(request.GET.get("before"), most=10**12 - 1)


def _held_seat(request: HttpRequest, game_id: int, position: int) -> Seat | None:
    """The seat at ``position`` with its game, if this browser holds it: opened by a link
    whose version still holds, or a seat of the signed-in player."""
    links = access.browser_links(request)
    seat = (
        Seat.objects.select_related("game")
        .filter(pk__in=list(links), game_id=game_id, position=position)
        .first()
    )
    return seat if seat is not None and links[seat.pk] == seat.link_version else None


def _message_form(game: Game, seat: Seat, seats: list[tuple[int, int, str]], **kwargs: Any) -> Any:
    """``seats``: (id, position, name) of every seat of the game."""
    others = [(position, name) for seat_id, position, name in seats if seat_id != seat.pk]
    return MessageForm(others=others, private=game.private_press, **kwargs)


def seat_section(game: Game, seat: Seat, seats: list[absences.GameSeat]) -> dict[str, Any]:
    """The seat page's "Messages": the latest messages the seat may read (one query), the
    form while the game is open, and the seat's choice of email."""
    rows = [(other.id, other.position, other.name) for other in seats]
    page = press.for_seat(seat, {row[0]: row[2] for row in rows}, limit=press.SEAT_PAGE_MESSAGES)
    open_ = game.status in press.OPEN
    return {
        "press": page,
        "press_open": open_,
        "press_form": _message_form(game, seat, rows) if open_ else None,
        "press_email_choices": PressEmail.choices,
    }


def _speak(request: HttpRequest, seat: Seat) -> None:
    """The rest of the request in the seat's language, as on the seat's page (whose
    language form the footer names)."""
    languages.speak(request, seat.speaks, setting=f"{_seat_page(seat)}#language-form")


def _messages_url(seat: Seat) -> str:
    return reverse("games:messages", args=[seat.game_id, seat.position])


@require_http_methods(["GET", "POST"])
def seat_messages(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    """Every message the seat may read, 100 at a time (``?before=<message>`` for older
    ones), and the form; a message posted here (or from the seat's page) is sent and the
    browser goes back, or the form comes back with the reason and the text as written."""
    seat = _held_seat(request, game_id, position)
    if seat is None:
        return _not_valid(request)
    _speak(request, seat)
    game = seat.game
    rows = list(game.seats.order_by("position").values_list("id", "position", "name"))
    open_ = game.status in press.OPEN
    form = _message_form(game, seat, rows) if open_ else None
    status = 200
    if request.method == "POST":
        form = _message_form(game, seat, rows, data=request.POST)
        if form.is_valid():
            try:
                sent = press.send(
                    game_id=game.pk,
                    position=seat.position,
                    to=form.recipient(),
                    text=form.cleaned_data["text"],
                    source=Message.Source.WEB,
                    now=timezone.now(),
                )
            except press.PressError as error:
                form.add_error(None, error.message)
                status = 429 if isinstance(error, press.Limited) else 200
            else:
                messages.success(request, _sent(sent, dict((row[0], row[2]) for row in rows)))
                if form.cleaned_data.get("back") == "seat":
                    return redirect(f"{_seat_page(seat)}#messages")
                return redirect(f"{_messages_url(seat)}#press-form")
    names = {row[0]: row[2] for row in rows}
    before = _before(request)
    context = {
        "game": game,
        "seat": seat,
        "press": press.for_seat(seat, names, limit=press.PAGE_MESSAGES, before=before),
        "press_open": open_,
        "press_form": form,
        "limits": press.limits_in_words(),
    }
    return render(request, "games/press/messages.html", context, status=status)


def _sent(message: Message, names: dict[int, str]) -> str:
    if message.recipient_id is None:
        return _("Your message to everyone is sent.")
    return _("Your private message to %(name)s is sent.") % {"name": names[message.recipient_id]}


@require_POST
def press_email(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    """The seat chooses how it is emailed its game's messages."""
    seat = _held_seat(request, game_id, position)
    if seat is None:
        return _not_valid(request)
    _speak(request, seat)
    form = PressEmailForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("%(error)s Nothing was changed.") % {"error": first_error(form)})
        return redirect(f"{_seat_page(seat)}#messages")
    seat = press.choose_email(game_id, position=position, choice=form.cleaned_data["press_email"])
    done = {
        PressEmail.EACH: _("Done: each message of the other players comes to you by email."),
        PressEmail.DIGEST: _("Done: the other players' messages come in your daily digest."),
        PressEmail.NONE: _("Done: no messages of the other players by email; read them here."),
    }
    messages.success(request, done[PressEmail(seat.press_email)])
    return redirect(f"{_seat_page(seat)}#messages")


# --- the GM ---------------------------------------------------------------------------------


@staff_member_required
@require_http_methods(["GET", "POST"])
def gm_messages(request: HttpRequest, game_id: int) -> HttpResponse:
    """Every message of the game, private and hidden ones too, 100 at a time, each with a
    Hide button, and the GM's announcement (POST)."""
    game = get_object_or_404(gm_views.games_of(request), pk=game_id)
    form = AnnounceForm()
    if request.method == "POST":
        form = AnnounceForm(request.POST)
        if form.is_valid():
            try:
                press.send(
                    game_id=game.pk,
                    position=None,
                    to=None,
                    text=form.cleaned_data["text"],
                    source=Message.Source.WEB,
                    now=timezone.now(),
                )
            except press.PressError as error:
                form.add_error(None, error.message)
            else:
                messages.success(request, _("Your announcement is sent to every player."))
                return redirect("gm:messages", game.pk)
    seats = list(game.seats.order_by("position"))
    names = {seat.pk: seat.name for seat in seats}
    context = {
        "game": game,
        "press": press.for_gm(game, names, limit=press.PAGE_MESSAGES, before=_before(request)),
        "press_open": game.status in press.OPEN,
        "announce_form": form,
        "hide_form": HideForm(),
    }
    return render(request, "games/press/gm_messages.html", context)


@staff_member_required
@require_POST
def gm_hide(request: HttpRequest, game_id: int, message_id: int) -> HttpResponse:
    """The GM hides one message of the game from the players, with a reason."""
    game = get_object_or_404(gm_views.games_of(request), pk=game_id)
    form = HideForm(request.POST)
    if not form.is_valid():
        messages.error(request, first_error(form))
    else:
        try:
            press.hide(
                game.pk,
                message_id,
                reason=form.cleaned_data["reason"],
                by=request.user.pk,
                now=timezone.now(),
            )
        except press.PressError as error:
            messages.error(request, error.message)
        else:
            messages.success(
                request,
                _("The message is hidden: players see that the GM hid it, never its text."),
            )
    return redirect(f"{reverse('gm:messages', args=[game.pk])}#message-{message_id}")
