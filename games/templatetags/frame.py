"""The frame of every page (``templates/base.html``): which part of the site a page is in,
and who this browser is signed in as, told truthfully, read without a query for a browser
that has no session (a player's magic links, a visitor)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django import template
from django.conf import settings
from django.http import HttpRequest

from games.engines import registry
from games.models import Game
from games.postal import access

register = template.Library()

# The parts of the site the header leads to, by the start of their paths; the longest
# start first. Paths, not URL names: the mailbox's pages, under another URLconf, have
# this frame too.
SECTIONS = (
    ("/games/archive/", "archive"),
    ("/games/live/", "watch"),
    ("/rankings/", "rankings"),
    ("/players/", "rankings"),
    ("/open/", "open"),
    ("/play/", "mine"),
    ("/me/", "mine"),
    ("/gm/", "gm"),
    ("/games/", "watch"),
)


@dataclass(frozen=True)
class Frame:
    """``section``: the header's link this page is under ("" for none); ``player``: a
    player signed in by email; ``gm``: a GM signed in (a staff user)."""

    section: str
    player: bool
    gm: bool

    @property
    def my_games(self) -> str:
        """Where "Your games" leads: every seat of a signed-in player's address, else the
        seats this browser's links opened."""
        return "/me/" if self.player else "/play/"


def section_of(path: str) -> str:
    return next((name for start, name in SECTIONS if path.startswith(start)), "")


@register.simple_tag(takes_context=True)
def frame(context: Any) -> Frame:
    request: HttpRequest | None = context.get("request")
    if request is None:
        return Frame(section="", player=False, gm=False)
    has_session = settings.SESSION_COOKIE_NAME in request.COOKIES
    user = getattr(request, "user", None) if has_session else None
    signed_in = user is not None and user.is_authenticated
    player = bool(
        signed_in
        and access.signed_in_hint(request)
        and request.session.get(access.PLAYER_SESSION_KEY)
    )
    gm = bool(signed_in and user is not None and user.is_staff)
    # A page may name its section: the one answer for a link that does not open tells
    # nothing of the address asked for, so it names none.
    section = context["section"] if "section" in context else section_of(request.path)
    return Frame(section=section, player=player, gm=gm)


@register.filter
def profile(game: Game) -> str:
    """The name of the way the game is played: "Liar's Dice: Death Match"."""
    return registry.title(game.engine, game.options)
