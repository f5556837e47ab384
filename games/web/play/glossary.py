"""``/glossary/``: the words of play-by-post explained for players (NMR, civil disorder,
autopilot, extension, deadline, turn and round, commitment and seed). Public: the seat's
page and the emails link a word to its entry here."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET


@require_GET
def glossary(request: HttpRequest) -> HttpResponse:
    return render(request, "games/glossary.html")
