"""``POST /bare/``: the least a Django view that writes can do (bench/bare_wsgi.py). It
writes one ``Event`` row to the game and step named in the form, in one transaction, as
an order does, and answers with a redirect, as the order form does."""

from __future__ import annotations

from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from games.models import Event
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


# /healthz tells the benchmark that the server is up, as for the project.
urlpatterns = [path("bare/", bare), path("healthz", healthz)]
