"""Web push from a seat's settings page (games.notify.push): the browser subscribes or
unsubscribes (``static/games/push.js`` posts JSON, and gets JSON with a sentence to show),
and the player asks for a test push (a plain form). And the service worker, served at the
site's root so that it may open any seat's page (the site's manifest is a static file,
``moderator/manifest.webmanifest``)."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.utils import timezone
from django.utils.translation import gettext, ngettext
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET, require_POST

from games.models import Seat
from games.notify import channels, player_hooks, push, webhooks
from games.web.play.common import held_seat, not_valid, speak
from games.web.play.settings import settings_page
from moderator import ratelimit


def _posted(request: HttpRequest) -> dict[str, Any]:
    try:
        data = json.loads(request.body or b"{}")
    except (ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _seat(request: HttpRequest, game_id: int, position: int) -> Seat | None:
    seat = held_seat(request, game_id, position)
    if seat is not None:
        speak(request, seat)
    return seat


def _scope(seat: Seat, every_seat: bool) -> str:
    if every_seat:
        return gettext("every game of %(email)s") % {"email": seat.email}
    return gettext("%(seat)s in %(game)s") % {"seat": seat.name, "game": seat.game.title}


@require_POST
def subscribe(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    """The browser's subscription (JSON: ``subscription``, ``every_seat``) stored."""
    seat = _seat(request, game_id, position)
    if seat is None:
        return JsonResponse({"error": gettext("This seat's link is no longer valid.")}, status=403)
    if not push.enabled():
        return JsonResponse({"error": gettext("This service has no push set up.")}, status=409)
    data = _posted(request)
    every_seat = data.get("every_seat") is True
    try:
        push.subscribe(seat, data.get("subscription"), every_seat=every_seat, now=timezone.now())
    except push.BadSubscription as error:
        said = gettext("Push could not be turned on: %(why)s") % {"why": error.message}
        return JsonResponse({"error": said}, status=400)
    said = gettext("Push is on in this browser for %(scope)s.") % {
        "scope": _scope(seat, every_seat)
    }
    messages.success(request, said)
    return JsonResponse({"ok": True, "message": said})


@require_POST
def unsubscribe(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    """The browser at ``endpoint`` no longer told of the seat (``every_seat``: of any)."""
    seat = _seat(request, game_id, position)
    if seat is None:
        return JsonResponse({"error": gettext("This seat's link is no longer valid.")}, status=403)
    data = _posted(request)
    endpoint = data.get("endpoint")
    every_seat = data.get("every_seat") is True
    gone = 0
    if isinstance(endpoint, str):
        gone = push.unsubscribe(seat, endpoint, every_seat=every_seat)
    said = (
        gettext("Push is off in this browser for %(scope)s.") % {"scope": _scope(seat, every_seat)}
        if gone
        else gettext("This browser had no push for this seat.")
    )
    messages.success(request, said)
    return JsonResponse({"ok": True, "message": said})


@require_POST
def test(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    """A push to each browser told of the seat, to see that it arrives."""
    seat = _seat(request, game_id, position)
    if seat is None:
        return not_valid(request)
    if ratelimit.over_limits([("push-test", f"seat:{seat.pk}")])[0]:
        messages.error(request, gettext("Too many tests for now: try again in an hour."))
        return redirect(settings_page(seat) + "#push")
    sent = push.test_push(seat, timezone.now())
    if sent:
        messages.success(
            request,
            ngettext(
                "A test push is on its way to %(count)d browser.",
                "A test push is on its way to %(count)d browsers.",
                len(sent),
            )
            % {"count": len(sent)},
        )
    else:
        messages.error(request, gettext("No browser has push on for this seat yet."))
    return redirect(settings_page(seat) + "#push")


@require_POST
def test_email(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    """The seat's latest report emailed again, to see that email arrives."""
    seat = _seat(request, game_id, position)
    if seat is None:
        return not_valid(request)
    if ratelimit.over_limits([("email-test", f"seat:{seat.pk}")])[0]:
        messages.error(request, gettext("Too many tests for now: try again in an hour."))
        return redirect(settings_page(seat) + "#channels")
    channels.test_email(seat, timezone.now())
    messages.success(
        request,
        gettext("The latest report is on its way to %(email)s.") % {"email": seat.email},
    )
    return redirect(settings_page(seat) + "#channels")


@require_POST
def player_webhook(request: HttpRequest, game_id: int, position: int) -> HttpResponse:
    """The player's own webhook set (``url``, ``format``), removed (``remove``), or sent a
    test post (``test``)."""
    seat = _seat(request, game_id, position)
    if seat is None:
        return not_valid(request)
    back = redirect(settings_page(seat) + "#channels")
    now = timezone.now()
    if "remove" in request.POST:
        if player_hooks.remove(seat):
            messages.success(request, gettext("Your webhook is removed."))
        return back
    if "test" in request.POST:
        hook = player_hooks.of_address(seat.email)
        if hook is None:
            messages.error(request, gettext("Set your webhook first."))
        elif ratelimit.over_limits([("webhook-test", f"seat:{seat.pk}")])[0]:
            messages.error(request, gettext("Too many tests for now: try again in an hour."))
        else:
            player_hooks.test_post(seat, hook, now)
            messages.success(request, gettext("A test post is on its way to your webhook."))
        return back
    try:
        hook = player_hooks.set_hook(
            seat,
            url=request.POST.get("url", ""),
            format=request.POST.get("format", ""),
            now=now,
        )
    except webhooks.BadURL as error:
        messages.error(
            request, gettext("Your webhook was not set: %(why)s") % {"why": error.message}
        )
        return back
    messages.success(
        request,
        gettext("Your webhook is set: %(address)s. A rung of your ladder may post to it now.")
        % {"address": webhooks.shown(hook.url)},
    )
    return back


# --- installable -------------------------------------------------------------------------------


@require_GET
@cache_control(max_age=0, no_cache=True)
def service_worker(request: HttpRequest) -> HttpResponse:
    """The service worker, at the root so that its scope is the whole site: it shows a
    push and opens the seat's page when the notification is clicked."""
    response = render(
        request,
        "sw.js",
        {"icon": static("moderator/icon-192.png")},
        content_type="application/javascript",
    )
    response["Service-Worker-Allowed"] = "/"
    return response
