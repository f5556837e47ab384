"""Sending a game's emails again, from the mail section of its panel: one failed email or
one of unknown outcome, or every email of unknown outcome at once. ``sending`` does the
work; the panel shows what it did."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from games.web.gm.common import own_game
from games.web.gm.signin import gm_required
from moderator.mail import sending
from moderator.mail.models import OutboundEmail


@gm_required
@require_POST
def send_again(request: HttpRequest, game_id: int, email_id: int) -> HttpResponse:
    """Send one failed or unknown email of the game again (``sending.send_again``); an email
    of another game, or of a game the user does not run, answers 404."""
    game = own_game(request, game_id)
    emails = OutboundEmail.objects.filter(game=game).only("id", "kind", "to", "state")
    email = get_object_or_404(emails, pk=email_id)
    if sending.send_again(email.pk):
        messages.success(
            request, f"The {email.kind} email to {email.to} is queued to be sent again."
        )
        return redirect(f"{reverse('gm:game', args=[game.pk])}#emails")
    email.refresh_from_db(fields=["state", "pruned_at"])
    if email.pruned_at is not None:
        messages.error(
            request,
            f"The {email.kind} email to {email.to} cannot be sent again: its text was "
            f"removed {settings.MAIL_RETENTION_DAYS} days after it was written. "
            '"Re-send the report" sends a player the game as it stands.',
        )
    else:
        messages.error(
            request,
            f"The {email.kind} email to {email.to} is {email.state}: only a failed email, "
            "or one whose delivery is unknown, can be sent again.",
        )
    return redirect(f"{reverse('gm:game', args=[game.pk])}#emails")


@gm_required
@require_POST
def send_unknown_again(request: HttpRequest, game_id: int) -> HttpResponse:
    """Send every email of the game whose delivery is unknown again, in one action (the
    one the GM's "unconfirmed" email names: ``sending.send_unknown_again``)."""
    game = own_game(request, game_id)
    count = sending.send_unknown_again(game.pk)
    if count:
        said = (
            "1 email whose delivery was unknown is"
            if count == 1
            else (f"{count} emails whose delivery was unknown are")
        )
        messages.success(request, f"{said} queued to be sent again.")
    else:
        messages.error(
            request,
            "No email of this game has an unknown delivery now: nothing was sent again.",
        )
    return redirect(f"{reverse('gm:game', args=[game.pk])}#emails")
