from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from games import archive
from games.models import Game


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "games/home.html")


def verify(request: HttpRequest, game_id: int) -> HttpResponse:
    """The public dice check: the commitment always, the recomputed rolls once revealed."""
    game = get_object_or_404(Game.objects.exclude(status=Game.Status.DRAFT), pk=game_id)
    verdict = archive.verify(game) if game.seed_revealed else None
    return render(request, "games/verify.html", {"game": game, "verdict": verdict})
