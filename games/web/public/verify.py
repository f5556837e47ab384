"""The public dice check of a game (docs/records.md): its commitment always, and once the
seed is revealed every roll recomputed from it. Read only: ``games.records.archive`` does
the work."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from games.models import Game
from games.postal import access
from games.records import archive
from games.web.play.common import not_valid


def verify(request: HttpRequest, public_id: str) -> HttpResponse:
    """The public dice check: the commitment always, the recomputed rolls once revealed.
    Addressed by the game's random public id, so nobody can list the games by counting."""
    game = get_object_or_404(Game.objects.exclude(status=Game.Status.DRAFT), public_id=public_id)
    verdict = archive.verify(game) if game.seed_revealed else None
    return render(request, "games/verify.html", {"game": game, "verdict": verdict})


def verify_by_number(request: HttpRequest, game_id: int) -> HttpResponse:
    """The dice check's address in emails sent before games had public ids: it still
    opens for the browsers that may know the game (one of its seats, its GM); for anyone
    else it is the same 404 as a game that does not exist."""
    user = request.user
    games = Game.objects.exclude(status=Game.Status.DRAFT).filter(pk=game_id)
    if not (user.is_authenticated and user.is_staff):
        seats = access.browser_links(request)
        games = games.filter(seats__pk__in=list(seats))
    elif not user.is_superuser:
        games = games.filter(gm=user)
    public_id = games.values_list("public_id", flat=True).first()
    if public_id is None:
        return not_valid(request)
    return redirect("games:verify", public_id=public_id)
