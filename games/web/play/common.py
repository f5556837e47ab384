"""What every page of a seat reads the same way: the seats this browser holds
(``access.browser_links``: its links, and every seat of a player signed in by email), a
seat's address, its language, and the one answer for a page this browser may not open.
No view lives here, so the seat's view modules share these without importing one
another."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext_lazy

from games.models import Seat
from games.notify import languages
from games.postal import access

OUT_OF_DATE = gettext_lazy(
    "This form is out of date, so nothing was recorded: send your order again from the current "
    "page."
)


def not_valid(request: HttpRequest) -> HttpResponse:
    """The one answer for every link or page this browser may not open: no hint of what
    exists."""
    return render(request, "games/not_valid.html", {"section": ""}, status=404)


def browser_seats(request: HttpRequest, **filters: Any) -> list[Seat]:
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


def held_seat(request: HttpRequest, game_id: int, position: int) -> Seat | None:
    """The seat at ``position`` of the game, with its game, if this browser holds it."""
    seats = browser_seats(request, game_id=game_id, position=position)
    return seats[0] if seats else None


def seat_page(seat: Seat) -> str:
    """The address of a seat's page: every seat has its own, so a browser that holds
    several seats (a shared phone, a GM trying their own game) shows and orders for the
    one in the address."""
    return reverse("games:seat", args=[seat.game_id, seat.position])


def speak(request: HttpRequest, seat: Seat) -> None:
    """The rest of the request in the seat's language; the footer names its setting."""
    setting = reverse("games:seat_settings", args=[seat.game_id, seat.position])
    languages.speak(request, seat.speaks, setting=f"{setting}#language-form")
