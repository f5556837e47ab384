"""The GM's messages page of a game, ``/gm/<game>/messages/``: every message of the game,
private and hidden ones too, the GM's announcement, and hiding a message with a reason.
Thin: a form, then one ``games.community.press`` function. Only the game's GM opens it."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from games.community import press
from games.models import Message
from games.web.common import first_error, messages_before
from games.web.gm.common import own_game
from games.web.gm.signin import gm_required
from games.web.play.press_forms import AnnounceForm, HideForm


@gm_required
@require_http_methods(["GET", "POST"])
def gm_messages(request: HttpRequest, game_id: int) -> HttpResponse:
    """Every message of the game, private and hidden ones too, 100 at a time, each with a
    Hide button, and the GM's announcement (POST)."""
    game = own_game(request, game_id)
    form = AnnounceForm()
    if request.method == "POST":
        form = AnnounceForm(request.POST)
        if form.is_valid():
            try:
                press.send(
                    game_id=game.pk,
                    position=None,
                    to=None,
                    text=form.cleaned_data["text"],
                    source=Message.Source.WEB,
                    now=timezone.now(),
                )
            except press.PressError as error:
                form.add_error(None, error.message)
            else:
                messages.success(request, _("Your announcement is sent to every player."))
                return redirect("gm:messages", game.pk)
    seats = list(game.seats.order_by("position"))
    names = {seat.pk: seat.name for seat in seats}
    context = {
        "game": game,
        "press": press.for_gm(
            game, names, limit=press.PAGE_MESSAGES, before=messages_before(request)
        ),
        "press_open": game.status in press.OPEN,
        "announce_form": form,
        "hide_form": HideForm(),
    }
    return render(request, "games/press/gm_messages.html", context)


@gm_required
@require_POST
def gm_hide(request: HttpRequest, game_id: int, message_id: int) -> HttpResponse:
    """The GM hides one message of the game from the players, with a reason."""
    game = own_game(request, game_id)
    form = HideForm(request.POST)
    if not form.is_valid():
        messages.error(request, first_error(form))
    else:
        try:
            press.hide(
                game.pk,
                message_id,
                reason=form.cleaned_data["reason"],
                by=request.user.pk,
                now=timezone.now(),
            )
        except press.PressError as error:
            messages.error(request, error.message)
        else:
            messages.success(
                request,
                _("The message is hidden: players see that the GM hid it, never its text."),
            )
    return redirect(f"{reverse('gm:messages', args=[game.pk])}#message-{message_id}")
