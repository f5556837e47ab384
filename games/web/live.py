"""A page's poll (games.notify.live, docs/players.md "Pages that move"): the page's own
address with ``?live=<token>``, asked by htmx every ``LIVE_POLL_SECONDS``. Nothing new
answers 204 (htmx leaves the page alone); a new page asks the browser to load it again;
news is the page itself, drawn as always, from which the poll takes the sections it
names. A request that is not htmx's is a plain visit: the parameter is ignored."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django_htmx.http import HttpResponseClientRefresh

from games.notify.live import Pulse


def polling(request: HttpRequest) -> bool:
    return (
        request.method == "GET"
        and "live" in request.GET
        and request.headers.get("HX-Request") == "true"
    )


def answer(request: HttpRequest, pulse: Callable[[], Pulse]) -> HttpResponse | None:
    """The answer to a poll, or None when the page is to be drawn (news, or no poll)."""
    if not polling(request):
        return None
    change = pulse().answer_to(request.GET["live"])
    if change == "none":
        return HttpResponse(status=204)
    if change == "page":
        return HttpResponseClientRefresh()
    return None


def refresh() -> HttpResponse:
    """The answer to a poll of a page this browser may no longer see: load it again, and
    the page says why."""
    return HttpResponseClientRefresh()
