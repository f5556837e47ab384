"""How a browser comes to its seats, no account needed: the home page, where a player who
lost their links has them emailed; a seat's magic link ``/p/<token>/``, which shows a
Continue page on GET (email link scanners must change nothing, so GET writes nothing, not
even a cookie) and, on POST, adds the seat to the browser's signed seats cookie
(``access.remember_seat``) and redirects to the seat's own token-free page,
``/play/<game>/<position>/``; the list of the seats this browser holds; and a game's
address from before seats had their own pages. Every player page is scoped to the seats
the browser holds (``common.browser_seats``); anything else answers the same plain 404.
Views stay thin: ``games.postal.access`` and ``games.postal`` do the work.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods

from games import postal
from games.community import openings, players
from games.notify import languages
from games.postal import access
from games.records import spectators
from games.web.forms import LostLinksForm
from games.web.play.common import OUT_OF_DATE, browser_seats, not_valid, seat_page
from moderator import ratelimit

# The home page shows this many open games, and as many games to watch; the rest are a
# link away.
HOME_ROWS = 5


def _home(
    request: HttpRequest, form: LostLinksForm, status: int = 200, **more: Any
) -> HttpResponse:
    """The front door: the orders this browser's seats owe, a few open games and games in
    progress to watch, then signing in and lost links. Three queries for a browser that
    holds no seat, whatever the number of games (the open games counted in one, the games
    to watch and their seats in two); a browser's seats add theirs (``games_of_seats``)."""
    mine = players.games_of_seats(browser_seats(request))
    context = {
        "form": form,
        "owed": next((lines for key, _, lines in mine.groups if key == players.OWED), []),
        "mine": mine.count,
        "open_games": [
            {"game": game, "seats": openings.seats(game)}
            for game in openings.open_games()[:HOME_ROWS]
        ],
        "live_games": list(spectators.live_games()[:HOME_ROWS]),
        **more,
    }
    return render(request, "games/home.html", context, status=status)


@require_http_methods(["GET", "POST"])
def home(request: HttpRequest) -> HttpResponse:
    """The home page, where a player who lost their links has them emailed: the answer is
    the same whether or not the address plays here, so nobody learns who does."""
    if request.method == "GET":
        return _home(request, LostLinksForm())
    form = LostLinksForm(request.POST)
    if not form.is_valid():
        return _home(request, form)
    email = form.cleaned_data["email"]
    if ratelimit.lost_links_rate_limited(request, email):
        return _home(request, form, status=429, limited=True)
    postal.ask_lost_links(email)
    return _home(request, LostLinksForm(), sent_to=email)


@require_http_methods(["GET", "POST"])
def magic_link(request: HttpRequest, token: str) -> HttpResponse:
    # Counted per client address in the links' own scope: no feed or order spends it.
    if ratelimit.limited(request, "link"):
        return ratelimit.too_many(request, "link")
    seat = access.seat_for(token, now=timezone.now())
    if seat is None:
        return not_valid(request)
    if request.method == "GET":
        languages.speak(request, seat.speaks)
        return render(request, "games/continue.html", {"seat": seat, "game": seat.game})
    response = redirect(seat_page(seat))
    access.remember_seat(request, response, seat)
    return response


@require_GET
def play_index(request: HttpRequest) -> HttpResponse:
    """The seats this browser holds, grouped as "My games" groups them: those waiting for
    an order first, each with its deadline."""
    seats = sorted(browser_seats(request), key=lambda seat: (-seat.game.pk, seat.position))
    return render(request, "games/play_index.html", {"games": players.games_of_seats(seats)})


@require_http_methods(["GET", "POST"])
def play_game(request: HttpRequest, game_id: int) -> HttpResponse:
    """A game's address from before seats had their own pages (bookmarks, old pages): a
    browser holding one seat of the game goes to its page; holding several, it chooses.
    A form posted here is out of date and records nothing."""
    seats = browser_seats(request, game_id=game_id)
    if not seats:
        return not_valid(request)
    if request.method == "POST":
        messages.error(request, OUT_OF_DATE)
    if len(seats) == 1:
        return redirect(seat_page(seats[0]))
    return render(request, "games/play_index.html", {"seats": seats, "game": seats[0].game})


@require_GET
def play_game_json(request: HttpRequest, game_id: int) -> HttpResponse:
    """The JSON of a game's address from before seats had their own: one seat of the game
    in this browser goes to its JSON; several are listed (300), each with its address."""
    seats = browser_seats(request, game_id=game_id)
    if not seats:
        return not_valid(request)
    if len(seats) == 1:
        return redirect(reverse("games:seat_json", args=[game_id, seats[0].position]))
    listed = [
        {"name": seat.name, "position": seat.position, "page": seat_page(seat)} for seat in seats
    ]
    return JsonResponse({"game": game_id, "seats": listed}, status=300)
