"""Which language a player is written to in (docs/languages.md).

A seat speaks its own language (``Seat.language``, chosen on its page), else its game's
(``Game.language``, the GM's): ``Seat.speaks``. A signed-in player's language
(``Player.language``) is set on every seat of theirs in a game not over, as their time zone
is (``players.save_settings``), and on the seats they take later; it is also the language
of their own pages. The pages of nobody in particular (sign-in, open games, the public
pages) follow the browser: its language cookie, set by the switcher in every page's
footer, else Accept-Language (``moderator.middleware.LanguageMiddleware``).

Every email is built in its recipient's language: the functions that build an email to a
seat wrap it in ``translation.override(seat.speaks)``; an email to a person asking from a
page (a sign-in, a sign-up, lost links) is built in the language of that page.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.http import HttpRequest
from django.utils import translation

from games.models import Player, Seat
from games.notify.email_choices import normalise

NAMES = dict(settings.LANGUAGES)


def speak(request: HttpRequest, language: str, *, setting: str = "") -> None:
    """The rest of ``request`` in ``language``: a seat's page in the seat's, a signed-in
    player's in theirs. ``setting``: the address of the setting that chose it, which the
    page's footer names instead of the browser's switcher ("": the footer says nothing)."""
    if language not in NAMES:
        return
    translation.activate(language)
    request.LANGUAGE_CODE = language
    request.language_setting = setting  # type: ignore[attr-defined]  # ours, for base.html


def of_seats(seats: Iterable[Seat]) -> str:
    """The language of one email about several seats of an address (a digest, lost
    links): the first seat's. A signed-in player's language is on all their seats."""
    for seat in seats:
        return seat.speaks
    return translation.get_language()


def of_addresses(addresses: Iterable[str]) -> dict[str, str]:
    """The languages signed-in players of ``addresses`` chose: normalised address ->
    language, one query; an address without a choice is left out. A new seat of theirs
    starts with it, as their other seats have it."""
    wanted = {normalise(address) for address in addresses}
    return dict(
        Player.objects.filter(email__in=wanted)
        .exclude(language="")
        .values_list("email", "language")
    )
