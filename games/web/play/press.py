"""A seat's pages of messages between players (games.community.press): the seat's
messages page (``/play/<game>/<position>/messages/``: every message it may read, and the
form) and its choice of email. The seat's page shows the latest messages itself
(``seat._press_section``); the GM's messages page is ``games.web.gm.press``. Thin: a form,
then one ``games.community.press`` function. The pages open only for a browser that holds
the seat (``common.held_seat``)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from games.community import press
from games.models import Message, PressEmail, Seat
from games.web.common import first_error, messages_before
from games.web.play.common import held_seat, not_valid, seat_page, speak
from games.web.play.press_forms import PressEmailForm, message_form
from games.web.play.settings import settings_page


def _messages_url(seat: Seat) -> str:
    return reverse("games:messages", args=[seat.game_id, seat.position])


@require_http_methods(["GET", "POST"])
def seat_messages(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    """Every message the seat may read, 100 at a time (``?before=<message>`` for older
    ones), and the form; a message posted here (or from the seat's page) is sent and the
    browser goes back, or the form comes back with the reason and the text as written."""
    seat = held_seat(request, game_id, position)
    if seat is None:
        return not_valid(request)
    speak(request, seat)
    game = seat.game
    rows = list(game.seats.order_by("position").values_list("id", "position", "name"))
    open_ = game.status in press.OPEN
    form = message_form(game, seat, rows) if open_ else None
    status = 200
    if request.method == "POST":
        form = message_form(game, seat, rows, data=request.POST)
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
                    return redirect(f"{seat_page(seat)}#messages")
                return redirect(f"{_messages_url(seat)}#press-form")
    names = {row[0]: row[2] for row in rows}
    before = messages_before(request)
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
    seat = held_seat(request, game_id, position)
    if seat is None:
        return not_valid(request)
    speak(request, seat)
    form = PressEmailForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("%(error)s Nothing was changed.") % {"error": first_error(form)})
        return redirect(f"{settings_page(seat)}#press-email-form")
    seat = press.choose_email(game_id, position=position, choice=form.cleaned_data["press_email"])
    done = {
        PressEmail.EACH: _("Done: each message of the other players comes to you by email."),
        PressEmail.DIGEST: _("Done: the other players' messages come in your daily digest."),
        PressEmail.NONE: _(
            "Done: no messages of the other players by email; read them on the game's page."
        ),
    }
    messages.success(request, done[PressEmail(seat.press_email)])
    return redirect(f"{settings_page(seat)}#press-email-form")
