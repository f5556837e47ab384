"""The least a Django view can do (bench/bare_wsgi.py), under the project's settings,
database connection settings and middleware.

``POST /bare/`` writes one ``Event`` row to the game and step named in the form, in one
transaction, as an order does, and answers with a redirect, as the order form does.
``GET /bare/seat/<id>/`` reads one seat with its game, in one query, as a seat page's
first read does, and answers a short HTML page naming them."""

from __future__ import annotations

from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import path
from django.utils.html import escape
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from games.models import Event, Seat
from moderator.health import healthz


@csrf_exempt
@require_POST
def bare(request: HttpRequest) -> HttpResponse:
    with transaction.atomic():
        Event.objects.create(
            game_id=int(request.POST["game"]),
            step_id=int(request.POST["step"]),
            text=request.POST.get("text", ""),
        )
    return HttpResponseRedirect("/bare/")


@require_GET
def bare_seat(request: HttpRequest, seat_id: int) -> HttpResponse:
    seat = Seat.objects.select_related("game").get(pk=seat_id)
    return HttpResponse(
        f"<!doctype html><title>{escape(seat.name)}</title><h1>{escape(seat.game.title)}</h1>"
    )


# /healthz tells the benchmark that the server is up, as for the project.
urlpatterns = [
    path("bare/", bare),
    path("bare/seat/<int:seat_id>/", bare_seat),
    path("healthz", healthz),
]
