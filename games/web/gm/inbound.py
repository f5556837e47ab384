"""The GM's list of a game's emails that did not become an order or a message (issue 39):
held (from another address than the seat's, or failed by the provider's checks), which
the GM releases as the seat's or discards; notes passed to the GM; refused ones, with the
reason the seat was told. Nothing a player emails is dropped unseen."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from games import postal
from games.community import press
from games.notify import replies
from games.web.gm.common import own_game
from games.web.gm.signin import gm_required
from moderator.mail.models import InboundMessage

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

Inbound = InboundMessage.State
# What the GM is shown: every email of the game that was not taken as it came.
SHOWN = (Inbound.HELD, Inbound.NOTE, Inbound.REJECTED, Inbound.DISCARDED)
PAGE = 100
Reason = InboundMessage.Reason
# Why an email was held or refused unread, in the GM's words.
REASONS: dict[str, StrOrPromise] = {
    Reason.VERDICT: gettext_lazy(
        "Sent from the seat's address, but the mail provider's spam or sender checks "
        "failed it: it may be forged."
    ),
    Reason.TOO_LARGE: gettext_lazy("Not read: larger than the service takes."),
    Reason.TOO_MANY_PARTS: gettext_lazy(
        "Not read: made of more parts (attachments, embedded images) than the service reads."
    ),
    Reason.TOO_DEEP: gettext_lazy("Not read: emails forwarded within emails, nested too deeply."),
    Reason.UNREADABLE: gettext_lazy("Not read: the mail provider's post could not be read."),
}


@gm_required
@require_GET
def gm_inbound(request: HttpRequest, game_id: int) -> HttpResponse:
    """The game's emails not taken as they came, newest first (100), held ones with
    Release and Discard buttons."""
    game = own_game(request, game_id)
    rows = list(
        InboundMessage.objects.filter(game=game, state__in=SHOWN)
        .select_related("seat")
        .order_by("-received_at", "-id")[:PAGE]
    )
    shown = [(row, explain(row), *replies.quoted(row.words)) for row in rows]
    return render(request, "games/gm/inbound.html", {"game": game, "rows": shown})


def explain(row: InboundMessage) -> str:
    """What became of ``row`` and why, in the GM's words (its ``note`` is the log's)."""
    if row.state == Inbound.NOTE:
        return _("No line of it reads as an order: it was emailed to you as a note.")
    if row.reason == Reason.SENDER:
        why = _("Sent from %(sender)s, not from the seat's address.") % {
            "sender": row.sender or _("no address")
        }
    else:
        why = str(REASONS.get(row.reason, ""))
    if row.state == Inbound.DISCARDED:
        return _("%(why)s You discarded it.") % {"why": why or row.note}
    if row.state == Inbound.HELD:
        return why or row.note
    if why:
        return _("%(why)s The player was told to send it again as plain text.") % {"why": why}
    return _("Refused; the player was told why: %(reason)s") % {"reason": row.note}


@gm_required
@require_POST
def gm_inbound_act(
    request: HttpRequest, game_id: int, inbound_id: int, action: str
) -> HttpResponse:
    """Release a held email as its seat's order or message, or discard it."""
    game = own_game(request, game_id)
    try:
        if action == "release":
            row = replies.release(inbound_id, game.pk, now=timezone.now())
            if row.state == Inbound.MESSAGE:
                messages.success(request, _("The email is sent as the seat's message."))
            else:
                messages.success(request, _("The email is taken as the seat's order."))
        elif action == "discard":
            replies.discard(inbound_id, game.pk)
            messages.success(request, _("The email is discarded."))
        else:
            messages.error(request, _("Nothing was done: unknown action."))
    except replies.NotHeld:
        messages.error(request, _("Nothing was done: this email is no longer held."))
    except replies.ChangedHands as changed:
        messages.error(
            request,
            _(
                "Nothing was done: %(name)s has played this seat since this email came, "
                "which was written to the player before them, so it cannot be taken as "
                "theirs. Discard it, or ask %(name)s to send it themselves."
            )
            % {"name": changed.name},
        )
    except (postal.PostalError, press.PressError) as error:
        messages.error(
            request,
            _("Nothing was done: the game refuses it: %(reason)s") % {"reason": error.message},
        )
    return redirect("gm:inbound", game.pk)
