"""The zine pages: one step of one game, or every running game of the GM, as a printable
page, a PDF or plain text. ``games.records.zine`` writes them."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.http import content_disposition_header
from django.utils.text import slugify

from games.models import Game
from games.records import zine
from games.web.gm.common import own_game
from games.web.gm.signin import gm_required
from moderator.numbers import STEPS_MOST, whole_number


def _zine_response(
    request: HttpRequest,
    zines: list[zine.Zine],
    *,
    one: Game | None = None,
    problem: str = "",
    skipped: list[str] | None = None,
    status: int | None = None,
) -> HttpResponse:
    """The zines as the print page, as plain text (``?format=text``) or as a PDF made from
    the print page (``?format=pdf``); a PDF this server cannot make (no Pango) answers 503
    with the print page and why; ``status``: of a ``problem`` (404 unless given)."""
    status = status or (404 if problem else 200)
    wanted = request.GET.get("format")
    if wanted == "text":
        body = zine.wrap(problem) if problem else zine.as_text(zines)
        return HttpResponse(body, content_type="text/plain; charset=utf-8", status=status)
    context = {
        "zines": zines,
        "one": one,
        "problem": problem,
        "skipped": skipped or [],
        "step_param": request.GET.get("step", "") if one else "",
        "pdf": zine.pdf_available(),
    }
    if wanted == "pdf" and not problem:
        if not context["pdf"]:
            context["no_pdf"] = True
            return render(request, "games/gm/zine.html", context, status=503)
        page = render_to_string("games/gm/zine.html", context, request=request)
        response = HttpResponse(
            zine.as_pdf(page, request.build_absolute_uri("/")), content_type="application/pdf"
        )
        response["Content-Disposition"] = content_disposition_header(
            as_attachment=True, filename=_pdf_name(zines, one)
        )
        return response
    return render(request, "games/gm/zine.html", context, status=status)


def _pdf_name(zines: list[zine.Zine], one: Game | None) -> str:
    """A game's zine: its title and step (``choice-club-step-3.pdf``); every game's: the
    day's (``zine-2026-11-23.pdf``)."""
    if one is not None and zines:
        return f"{slugify(one.title) or 'game'}-step-{zines[0].step.number}.pdf"
    return f"zine-{timezone.now():%Y-%m-%d}.pdf"


@gm_required
def game_zine(request: HttpRequest, game_id: int) -> HttpResponse:
    """One step of one game as a printable page, a PDF (``?format=pdf``) or plain text
    (``?format=text``): the latest resolved step, or ``?step=N``."""
    game = own_game(request, game_id)
    raw = request.GET.get("step", "").strip()
    number: int | None = None
    if raw:
        number = whole_number(raw, most=STEPS_MOST)
        if not number:
            problem = f"“{raw[:20]}” is not a step number: write it in digits 0-9, from 1."
            return _zine_response(request, [], one=game, problem=problem, status=400)
    try:
        made = zine.zine(game, number)
    except zine.NoStep as error:
        return _zine_response(request, [], one=game, problem=str(error))
    return _zine_response(request, [made], one=game)


@gm_required
def all_zines(request: HttpRequest) -> HttpResponse:
    """Every running game of the GM at its latest resolved step, one after the other."""
    games = Game.objects.filter(gm_id=request.user.pk, status=Game.Status.RUNNING).defer("seed")
    zines, skipped = [], []
    for game in games.order_by("-created_at", "-id"):
        try:
            zines.append(zine.zine(game))
        except zine.NoStep:
            skipped.append(game.title)
    return _zine_response(request, zines, skipped=skipped)
