"""A seat's conditional orders on its page (docs/orders.md): written while it is not the
seat's turn, in the game's own words, and withdrawn; the postal layer checks and keeps
them (``games.postal.conditionals``). Both answer with the seat's page (PRG) and what
was done or why not."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils import timezone
from django.utils.translation import gettext
from django.views.decorators.http import require_POST

from games.models import Order
from games.postal import conditionals
from games.web.play.common import held_seat, not_valid, seat_page, speak
from moderator import ratelimit


@require_POST
def leave(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    seat = held_seat(request, game_id, position)
    if seat is None:
        return not_valid(request)
    speak(request, seat)
    if ratelimit.order_rate_limited(request, seat.pk):
        return ratelimit.too_many(request, "orders", back=seat_page(seat))
    text = request.POST.get("conditional", "").strip()[:500]
    if not text:
        messages.error(request, gettext("Write the conditional order first."))
        return HttpResponseRedirect(seat_page(seat) + "#conditionals")
    try:
        kept = conditionals.leave(
            game_id=game_id,
            position=position,
            text=text,
            source=Order.Source.WEB,
            now=timezone.now(),
        )
    except conditionals.ConditionalRejected as error:
        messages.error(
            request,
            gettext("Your conditional order was not kept: %(reason)s.") % {"reason": error.message},
        )
    else:
        messages.success(
            request,
            gettext("Your conditional order is kept for your turn: %(words)s.")
            % {"words": kept.words},
        )
    return HttpResponseRedirect(seat_page(seat) + "#conditionals")


@require_POST
def withdraw(
    request: HttpRequest, game_id: int, position: int, conditional_id: int
) -> HttpResponse:
    seat = held_seat(request, game_id, position)
    if seat is None:
        return not_valid(request)
    speak(request, seat)
    try:
        conditionals.withdraw(
            game_id=game_id, position=position, conditional_id=conditional_id, now=timezone.now()
        )
    except conditionals.ConditionalRejected as error:
        messages.error(request, f"{error.message[0].upper()}{error.message[1:]}.")
    else:
        messages.success(request, gettext("Your conditional order is withdrawn."))
    return HttpResponseRedirect(seat_page(seat) + "#conditionals")
