"""Public pages of players' standing: a player's page (their record and ratings) and the
ranking of each game. Read only and public: they never show an email address, and of a
game not finished they show nothing but its count (docs/players.md)."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.paginator import Paginator
from django.db.models import Count, OuterRef, Subquery
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.translation import gettext

from games.community import ratings
from games.community.reliability import record_of
from games.engines import registry
from games.models import Player, Rating
from moderator.numbers import PAGES_MOST, whole_number

# Players on a page of a game's ranking.
RANKING_PAGE = 100


@dataclass(frozen=True)
class Shown:
    """A rating as the pages show it: its game, the rounded ordinal, its games."""

    engine: str
    title: str
    rating: int
    games: int


def player(request: HttpRequest, public_id: str) -> HttpResponse:
    """A player's public page: their name, their record, their ratings."""
    person = get_object_or_404(Player, public_id=public_id)
    record = record_of(person.email)
    rows = Rating.objects.filter(email=person.email).order_by("engine")
    shown = [
        Shown(row.engine, registry.get(row.engine).title, ratings.shown(row), row.games)
        for row in rows
        if row.engine in registry.ENGINES
    ]
    context = {
        "name": person.name or record.name or gettext("A player"),
        "record": record,
        "ratings": shown,
    }
    return render(request, "games/players/player.html", context)


def rankings(request: HttpRequest) -> HttpResponse:
    """Every game with the number of its rated players."""
    counts = dict(
        Rating.objects.order_by()
        .values("engine")
        .annotate(n=Count("id"))
        .values_list("engine", "n")
    )
    games = [(key, engine.title, counts.get(key, 0)) for key, engine in registry.ENGINES.items()]
    return render(request, "games/rankings/index.html", {"games": games})


def ranking(request: HttpRequest, engine: str) -> HttpResponse:
    """One game's rated players, best first, a page at a time (``?page=N``; a page out of
    range shows the last one). A player is named as on their page: the name they chose,
    else the name of their latest rated game."""
    if engine not in registry.ENGINES:
        raise Http404("no such game")
    # The player's page and the name they chose, for an address that has them.
    players = Player.objects.filter(email=OuterRef("email"))
    rows = ratings.ranking(engine).annotate(
        public_id=Subquery(players.values("public_id")[:1]),
        chosen_name=Subquery(players.values("name")[:1]),
    )
    page = Paginator(rows, RANKING_PAGE).get_page(
        whole_number(request.GET.get("page"), most=PAGES_MOST)
    )
    context = {
        "engine": registry.get(engine),
        "page": page,
        "rows": [(page.start_index() + n, row, ratings.shown(row)) for n, row in enumerate(page)],
    }
    return render(request, "games/rankings/game.html", context)
