"""A player's own place: signing in by email (a link or a code, no password), their games
and their settings. Thin: ``games.community.players`` does the work (docs/players.md).

The sign-in link's GET shows a page with one button and changes nothing, as a seat's magic
link does (``games.web.play.links.magic_link``): a mail provider's link scanner that opens it uses
nothing up. Its POST, or the code typed with the address, signs the player in with Django's
own ``login``: a session, as a GM's, but a user without a password and never staff.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login, logout
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext, gettext_lazy, ngettext
from django.views.decorators.http import require_http_methods

from games.community import absences, players, reliability
from games.community.players import SignInRefused
from games.models import AbsencePolicy
from games.notify import email_choices, languages, reminders
from games.postal import access
from games.web.away import away_page
from games.web.common import first_error, nothing_changed
from games.web.me.forms import CodeForm, SettingsForm, SignInForm
from moderator import ratelimit

# The cookie that holds a browser's random id while it signs in (signed; the sign-ins it
# asked for keep the id's digest): a sign-in's code is taken from the browser that asked
# for it alone (games.community.players.by_code).
BROWSER_COOKIE = "signin"
_BROWSER_SALT = "games.community.players.browser"

# The backend the player is signed in with: settings.AUTHENTICATION_BACKENDS lists two
# (django-axes' for the GMs' password logins, and Django's), so login() must be told.
BACKEND = "django.contrib.auth.backends.ModelBackend"


def _speak(request: HttpRequest, player: Any) -> None:
    """A signed-in player's page in their language, when they chose one; else the
    browser's (the footer's switcher)."""
    if player.language:
        languages.speak(request, player.language, setting=f"{reverse('players:settings')}#language")


def _next_path(request: HttpRequest) -> str:
    """Where the player was going (``?next=``, or the form's), if it is a path of this site
    short enough to keep, without control characters (a NUL, which PostgreSQL cannot
    store, answered 500); else "": the player lands on their games."""
    wanted = request.POST.get("next") or request.GET.get("next") or ""
    if (
        wanted.startswith("/")
        and len(wanted) <= players.NEXT_LENGTH
        and wanted.isprintable()
        and url_has_allowed_host_and_scheme(wanted, allowed_hosts={request.get_host()})
    ):
        return wanted
    return ""


def _sign_in(request: HttpRequest, player: Any, sign_in: Any) -> HttpResponse:
    if not player.user.is_active:
        return _refused(request, "inactive", status=403)
    login(request, player.user, backend=BACKEND)
    request.session[players.SESSION_KEY] = player.pk
    response = redirect(sign_in.next or reverse("players:me"))
    access.mark_signed_in(response)
    return response


# What each refusal says, on the link's page and at the code box.
REFUSALS = {
    players.UNKNOWN: gettext_lazy(
        "This sign-in link is not valid: it may be cut short, or older than a day. Ask for a "
        "new one below."
    ),
    players.EXPIRED: gettext_lazy(
        "This sign-in has expired: a link and its code work for %(minutes)d minutes. Ask for a "
        "new one below."
    ),
    players.USED: gettext_lazy(
        "This sign-in link was used already: each link or code signs in once. Ask for a new one "
        "below."
    ),
    players.VOID: gettext_lazy(
        "The code of this sign-in was typed wrong %(attempts)d times, so it no longer works, nor "
        "does its link. Ask for a new one below."
    ),
    players.NONE_WAITING: gettext_lazy(
        "No sign-in was asked for this address in this browser: a code works only in the "
        "browser where it was asked for (the email's link works anywhere). Ask for one below."
    ),
    "inactive": gettext_lazy("This address may not sign in here. Ask your game master."),
}


def _refusal_text(refused: SignInRefused | str) -> str:
    reason = refused.reason if isinstance(refused, SignInRefused) else refused
    if reason == players.WRONG_CODE and isinstance(refused, SignInRefused):
        left = refused.attempts_left
        return ngettext(
            "That is not the code of the email: nothing was signed in. %(left)d more try "
            "before the sign-in is void.",
            "That is not the code of the email: nothing was signed in. %(left)d more tries "
            "before the sign-in is void.",
            left,
        ) % {"left": left}
    return REFUSALS[reason] % {
        "minutes": settings.SIGNIN_MINUTES,
        "attempts": players.CODE_ATTEMPTS,
    }


def _refused(request: HttpRequest, refused: SignInRefused | str, *, status: int) -> HttpResponse:
    """The page of a sign-in that signs nobody in: why, and the form to ask again."""
    context = {"refused": _refusal_text(refused), "form": SignInForm()}
    return render(request, "games/players/signin.html", context, status=status)


@require_http_methods(["GET", "POST"])
def signin(request: HttpRequest) -> HttpResponse:
    """Ask for a sign-in: the same answer whatever the address (every address is emailed
    a link and a code), and the code box."""
    next_path = _next_path(request)
    if request.method == "GET":
        return render(
            request, "games/players/signin.html", {"form": SignInForm(), "next": next_path}
        )
    form = SignInForm(request.POST)
    if not form.is_valid():
        context = {"form": form, "next": next_path}
        return render(request, "games/players/signin.html", context, status=400)
    email = form.cleaned_data["email"]
    if ratelimit.signin_rate_limited(request, email):
        context = {"form": form, "next": next_path, "limited": True}
        return render(request, "games/players/signin.html", context, status=429)
    browser = _browser(request) or players.new_browser()
    players.ask(email, browser=browser, now=timezone.now(), next_path=next_path)
    response = _sent(request, email)
    response.set_signed_cookie(
        BROWSER_COOKIE,
        browser,
        salt=_BROWSER_SALT,
        max_age=settings.SIGNIN_MINUTES * 60,
        path=reverse("players:signin"),
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )
    return response


def _browser(request: HttpRequest) -> str:
    """This browser's id while it signs in ("" if it asked for no sign-in lately)."""
    value = request.get_signed_cookie(
        BROWSER_COOKIE, default="", salt=_BROWSER_SALT, max_age=settings.SIGNIN_MINUTES * 60
    )
    return str(value)


def _sent(
    request: HttpRequest,
    email: str,
    code_form: CodeForm | None = None,
    *,
    status: int = 200,
    **extra: Any,
) -> HttpResponse:
    """The page after asking: where the email went, and the box for its code."""
    context = {
        "sent_to": email,
        "code_form": code_form or CodeForm(initial={"email": email}),
        "minutes": settings.SIGNIN_MINUTES,
        **extra,
    }
    return render(request, "games/players/sent.html", context, status=status)


@require_http_methods(["GET", "POST"])
def signin_code(request: HttpRequest) -> HttpResponse:
    """The code of a sign-in email, typed with its address. GET shows the box (where a
    wrong code left the player, reloaded or opened again); POST signs in."""
    if request.method == "GET":
        return render(
            request,
            "games/players/sent.html",
            {"code_form": CodeForm(), "minutes": settings.SIGNIN_MINUTES},
        )
    form = CodeForm(request.POST)
    email = request.POST.get("email", "")
    if not form.is_valid():
        return _sent(request, email, form, status=400)
    if ratelimit.limited(request, "signin-code"):
        return _sent(request, email, form, limited=True, status=429)
    try:
        player, sign_in = players.by_code(
            form.cleaned_data["email"],
            form.cleaned_data["code"],
            browser=_browser(request),
            now=timezone.now(),
        )
    except SignInRefused as refused:
        if refused.reason == players.WRONG_CODE:
            # The wrong code is cleared, the address kept: the box is ready for the right one.
            cleared = CodeForm(initial={"email": form.cleaned_data["email"]})
            return _sent(request, email, cleared, wrong=_refusal_text(refused), status=400)
        return _refused(request, refused, status=400)
    return _sign_in(request, player, sign_in)


@require_http_methods(["GET", "POST"])
def signin_link(request: HttpRequest, token: str) -> HttpResponse:
    """The sign-in email's link: GET asks (a link scanner changes nothing), POST signs in."""
    if ratelimit.limited(request, "link"):
        return ratelimit.too_many(request, "link")
    now = timezone.now()
    try:
        if request.method == "GET":
            sign_in = players.pending(token, now=now)
            return render(request, "games/players/continue.html", {"sign_in": sign_in})
        player, sign_in = players.by_link(token, now=now)
    except SignInRefused as refused:
        return _refused(request, refused, status=404 if refused.reason == players.UNKNOWN else 410)
    return _sign_in(request, player, sign_in)


@require_http_methods(["GET", "POST"])
def signout(request: HttpRequest) -> HttpResponse:
    """GET asks; POST signs out, and this browser forgets the seats its links opened too:
    signing out leaves nothing of the player here."""
    if request.method == "GET":
        return render(request, "games/players/signout.html")
    logout(request)
    messages.success(
        request, gettext("You are signed out. This browser no longer opens your seats.")
    )
    response = redirect("games:home")
    access.forget_signed_in(response)
    return response


@login_required(login_url="players:signin")
def me(request: HttpRequest) -> HttpResponse:
    """My games: every seat of the player's address."""
    player = players.player_of(request.user)
    if player is None:
        return render(request, "games/players/me.html", {"not_a_player": True})
    _speak(request, player)
    context = {
        "player": player,
        "games": players.my_games(player),
        "record": reliability.record_of(player.email),
        "away": absences.declared(player.email, now=timezone.now()),
    }
    return render(request, "games/players/me.html", context)


@login_required(login_url="players:signin")
@require_http_methods(["GET", "POST"])
def me_settings(request: HttpRequest) -> HttpResponse:
    """The player's name, time zone and email choices; a form with an error changes
    nothing."""
    player = players.player_of(request.user)
    if player is None:
        return render(request, "games/players/me.html", {"not_a_player": True})
    _speak(request, player)
    preference = email_choices.saved_preference_of(player.email)
    initial = {
        "name": player.name,
        "time_zone": player.time_zone,
        "language": player.language,
        "reports": preference.reports if preference is not None else "",
        **reminders.choice_of(preference),
    }
    if request.method == "GET":
        form = SettingsForm(initial=initial)
        return render(request, "games/players/settings.html", {"form": form, "player": player})
    form = SettingsForm(request.POST, initial=initial)
    if not form.is_valid():
        messages.error(request, nothing_changed(first_error(form)))
        context = {"form": form, "player": player}
        return render(request, "games/players/settings.html", context, status=400)
    chosen = form.chosen()
    # Said in the language just chosen: the page it goes back to speaks it.
    translation.activate(chosen.language or translation.get_language_from_request(request))
    said = players.save_settings(player, chosen)
    if said:
        messages.success(request, gettext("Saved: %(said)s.") % {"said": "; ".join(said)})
    else:
        messages.success(request, gettext("Saved: nothing had changed."))
    return redirect("players:settings")


@login_required(login_url="players:signin")
@require_http_methods(["GET", "POST"])
def me_away(request: HttpRequest) -> HttpResponse:
    """A signed-in player's absences, for all their games or one not over yet."""
    player = players.player_of(request.user)
    if player is None:
        return render(request, "games/players/me.html", {"not_a_player": True})
    _speak(request, player)
    live = list(
        players.seats_of(player.email)
        .select_related("game")
        .defer("game__state", "game__seed")
        .filter(game__status__in=absences.LIVE)
        .order_by("game__title", "game_id")
    )
    games = {str(seat.game.pk): seat.game for seat in live}
    return away_page(
        request,
        email=player.email,
        zone=players.zone_of(player, live),
        games=games,
        context={
            "policies": [
                (game.title, absences.WHAT_IT_DOES[AbsencePolicy(game.absence_policy)])
                for game in games.values()
            ]
        },
    )
