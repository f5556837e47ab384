"""The absences page that a seat's player (``/play/<game>/<position>/away/``) and a
signed-in player (``/me/away/``) share: an address's absences declared, listed and taken
back. Each of the two views says whose page it is; ``games.community.absences`` does the
work."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext

from games.community import absences
from games.models import Game
from games.web.common import refused
from games.web.forms import AbsenceForm


def away_page(
    request: HttpRequest,
    *,
    email: str,
    zone: str,
    games: dict[str, Game],
    context: dict[str, Any],
) -> HttpResponse:
    """The absences of ``email``: declared (for one of ``games``, by the form's value, or
    for all), listed, and taken back; days in ``zone``. The seat's away page and a
    signed-in player's share it."""
    now = timezone.now()
    choices = [
        (value, gettext("this game only") if value == "game" else game.title)
        for value, game in games.items()
    ]
    form = AbsenceForm(games=choices)
    if request.method == "POST" and "withdraw" in request.POST:
        withdrawn = request.POST["withdraw"]
        try:
            if not (withdrawn.isascii() and withdrawn.isdigit() and len(withdrawn) < 12):
                raise absences.AbsenceError(gettext("there is no such absence of yours"))
            absences.withdraw(email, int(withdrawn), now=now)
        except absences.AbsenceError as error:
            messages.error(request, refused(error.message))
        else:
            messages.success(request, gettext("Done: that absence is removed."))
        return redirect(request.path)
    if request.method == "POST":
        form = AbsenceForm(request.POST, games=choices)
        if form.is_valid():
            data = form.cleaned_data
            try:
                absence = absences.declare(
                    email,
                    first_day=data["first_day"],
                    last_day=data["last_day"],
                    zone=zone,
                    now=now,
                    game=games.get(data["scope"]),
                )
            except absences.AbsenceError as error:
                form.add_error(None, f"{error.message[:1].upper()}{error.message[1:]}.")
            else:
                days = {
                    "first": absences.day(absence.first_day),
                    "last": absences.day(absence.last_day),
                }
                if absence.game:
                    said = gettext(
                        "Done: you are away in %(title)s from %(first)s to %(last)s."
                    ) % {**days, "title": absence.game.title}
                else:
                    said = gettext(
                        "Done: you are away in all your games from %(first)s to %(last)s."
                    )
                    said %= days
                messages.success(request, said)
                return redirect(request.path)
    context = {
        **context,
        "form": form,
        "zone": zone,
        "absences": absences.declared(email, now=now),
    }
    return render(request, "games/away.html", context)
