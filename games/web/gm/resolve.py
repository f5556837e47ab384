""" "Resolve now", confirmed: the game page's button opens this page (a GET: nothing
changes), which names who has not ordered and what the missed turn costs each
(``games.web.gm.missing``); only its own POST, which carries the step shown and
``confirmed``, resolves (``actions.act``), and only once: a second post names a step the
game has left (``postal.check_shown_step``)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone

from games.lib import schedule
from games.models import Game, Step
from games.web.gm.common import own_game
from games.web.gm.forms import ResolveForm
from games.web.gm.missing import costs
from games.web.gm.signin import gm_required


@gm_required
def confirm_resolve(request: HttpRequest, game_id: int) -> HttpResponse:
    game = own_game(request, game_id)
    step = Step.objects.filter(game=game, number=game.step_number, status=Step.Status.OPEN).first()
    if game.status != Game.Status.RUNNING or step is None:
        messages.error(request, f"Nothing to resolve: the game is {game.status}.")
        return redirect("gm:game", game.pk)
    form = ResolveForm(
        game=game,
        initial={
            "step": request.GET.get("step") or game.step_number,
            "reason": request.GET.get("reason", "")[:300],
            "confirmed": "yes",
        },
        auto_id="resolve_%s",
    )
    shown = request.GET.get("step", "")
    context = {
        "game": game,
        "step": step,
        "form": form,
        "costs": costs(game, step, timezone.now()),
        "deadline": schedule.local_time(step.deadline, game.time_zone),
        # The page the GM came from showed another step: say so before they confirm.
        "moved_on": shown.isdigit() and int(shown) != game.step_number,
    }
    return render(request, "games/gm/resolve.html", context)
