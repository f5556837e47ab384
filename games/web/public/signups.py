"""Open games and sign-up, for anybody: the list of open games and of seats looking for a
new player (``/open/``), a game's page with its sign-up form (``/open/<public_id>/``), and a
sign-up's own page at the link emailed to it (``/open/confirm/<token>/``), where GET shows
a button (mail scanners open links and must change nothing) and POST confirms or withdraws.
Thin: ``games.community.signups`` does the work."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods

from games import postal
from games.community import openings, signups
from games.community.players import player_of
from games.engines import registry
from games.lib import schedule, words
from games.models import Game, Seat, SignUp, SignUpMode
from games.notify import reports
from moderator import bidi, ratelimit


class SignUpForm(forms.Form):
    name = forms.CharField(
        max_length=signups.NAME_LENGTH,
        label=gettext_lazy("Your name in the game"),
        help_text=gettext_lazy("The other players see it."),
        widget=forms.TextInput(attrs={"autocomplete": "nickname"}),
        error_messages={"required": gettext_lazy("Write the name you want to play under.")},
    )
    email = forms.EmailField(
        max_length=signups.EMAIL_LENGTH,
        label=gettext_lazy("Your email address"),
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
        error_messages={
            "required": gettext_lazy("Write your email address: the confirmation link goes there."),
            "invalid": gettext_lazy("That is not an email address: write it as name@example.org."),
        },
        help_text=gettext_lazy(
            "The confirmation link, your turn reports and your link go there; nobody else sees "
            "it but the GM."
        ),
    )
    # Left empty by people, whose browsers do not show it; filled in by form-filling robots.
    website = forms.CharField(required=False, label=gettext_lazy("Leave this empty"))
    seat = forms.TypedChoiceField(
        coerce=int, choices=(), required=False, label=gettext_lazy("Seat")
    )

    def __init__(self, *args: Any, offered: list[Seat], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        seat_field = self.fields["seat"]
        assert isinstance(seat_field, forms.TypedChoiceField)
        seat_field.choices = [
            (
                seat.position,
                gettext("Seat %(number)d, played by %(name)s until now")
                % {"number": seat.position + 1, "name": seat.name},
            )
            for seat in offered
        ]
        seat_field.required = bool(offered)
        if offered:
            seat_field.initial = offered[0].position

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"]
        if (refused := bidi.refusal(name, gettext("the name"))) is not None:
            raise forms.ValidationError(refused)
        return name


# How players join, in a visitor's words (the GM's new-game page says "I approve").
JOINING = {
    SignUpMode.FIRST: gettext_lazy("first come, first seated"),
    SignUpMode.APPROVE: gettext_lazy("the GM approves each player"),
}


def game_facts(game: Game, players: int | None = None) -> dict[str, Any]:
    """What the list and a game's page say of a game: its game and options in words (for a
    game of ``players``, when known, no rule it is too small for), its rhythm, its GM, how
    players join."""
    title, options = registry.describe(game.engine, game.options, players)
    return {
        "game": game,
        "title": words.Said(title),
        "options": [(words.Said(label), words.Said(value)) for label, value in options],
        "rhythm": schedule.in_words(game.schedule),
        "gm_name": openings.gm_name(game),
        "mode": JOINING.get(SignUpMode(game.signup), ""),
    }


@require_GET
def open_list(request: HttpRequest) -> HttpResponse:
    listed = list(openings.open_games())
    games = [
        {**game_facts(game, seats.wanted), "seats": seats}
        for game in listed
        if game.status == Game.Status.RECRUITING
        for seats in [openings.seats(game)]
    ]
    # The first-come games under way: full, taking reserves.
    reserving = [
        {**game_facts(game, openings.seats(game).invited), "reserves": openings.reserve_count(game)}
        for game in listed
        if game.status != Game.Status.RECRUITING
    ]
    offered_seats = list(openings.offered_seats())
    players = openings.seat_counts([seat.game_id for seat in offered_seats])
    offered = [
        {**game_facts(seat.game, players[seat.game_id]), "seat": seat} for seat in offered_seats
    ]
    return render(
        request,
        "games/signups/list.html",
        {"games": games, "reserving": reserving, "offered": offered},
    )


def _public_board(game: Game) -> str:
    """The board as everybody may see it (the engine's public view): what a player taking
    over a seat may know before they play it; no seat's private block."""
    engine = registry.get(game.engine)
    state = engine.state_from_json(game.state)
    step = game.steps.filter(number=game.step_number).defer("state_before", "state_after").first()
    context = {
        "game": game,
        "engine": engine,
        "view": words.shown(engine.view(state, None)),
        "step": step,
        "finished": step is None,
        "options": reports.options_in_play(game, engine),
    }
    return render_to_string(reports.engine_templates(game.engine, "boards", "html"), context)


def _initial(request: HttpRequest) -> dict[str, str]:
    player = player_of(request.user)
    if player is None:
        return {}
    return {"name": player.name, "email": player.email}


@require_http_methods(["GET", "POST"])
def game_page(request: HttpRequest, public_id: str) -> HttpResponse:
    game = get_object_or_404(
        Game.objects.select_related("gm").defer("seed").exclude(status=Game.Status.DRAFT),
        public_id=public_id,
    )
    offered = list(openings.offered_seats(game)) if game.status in openings.UNDER_WAY else []
    refusal = None if openings.is_open(game) or offered else signups.refusal(game, None)
    form = SignUpForm(request.POST or None, offered=offered, initial=_initial(request))
    status = 200
    if request.method == "POST" and refusal is not None:
        status = 409
    elif request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        if data["website"]:
            # A robot: answered as a person would be, and nothing is written or sent.
            return _sent(request, game, data["email"], bool(offered))
        if ratelimit.signup_rate_limited(request, data["email"]):
            form.add_error(
                None,
                gettext(
                    "Too many sign-ups came for this address, or from your connection, in the "
                    "last hour. Nothing was written; try again in an hour."
                ),
            )
            status = 429
        else:
            position = data["seat"] if offered else None
            try:
                signed = signups.sign_up(
                    game.pk,
                    name=data["name"],
                    email=data["email"],
                    position=position,
                    now=timezone.now(),
                )
            except postal.PostalError as error:
                form.add_error(None, _sentence(error.message))
                status = 409
            else:
                return _sent(request, game, signed.signup.email, bool(offered))
    elif request.method == "POST":
        status = 400
    context = {
        **game_facts(game, _players(game)),
        "form": form,
        "refusal": None if refusal is None else _sentence(refusal),
        "offered": offered,
        "seats": openings.seats(game) if openings.is_open(game) else None,
        "waits": openings.would_wait(game) if openings.is_open(game) else True,
        "full": openings.is_full(game),
        "reserve": not offered and openings.takes_reserves(game),
        "reserves": openings.reserve_count(game) if openings.takes_reserves(game) else 0,
        "reserve_words": signups.reserve_words(),
        "board": _public_board(game) if offered and game.state is not None else "",
    }
    return render(request, "games/signups/game.html", context, status=status)


def _players(game: Game) -> int:
    """How many play the game: the seats it wants while recruiting, else its seats."""
    return reports.players_in(game)


def _sentence(message: str) -> str:
    """A domain message ("the game ...") as a sentence of a page."""
    return message[:1].upper() + message[1:] + ("" if message.endswith(".") else ".")


def _sent(request: HttpRequest, game: Game, email: str, replacing: bool) -> HttpResponse:
    context = {
        **game_facts(game, _players(game)),
        "email": email,
        "replacing": replacing,
        "waits": openings.would_wait(game),
        "full": openings.is_full(game),
        "reserve": not replacing and openings.takes_reserves(game),
        "reserve_words": signups.reserve_words(),
        "hours": settings.SIGNUP_CONFIRM_HOURS,
    }
    return render(request, "games/signups/sent.html", context)


@require_http_methods(["GET", "POST"])
def confirm(request: HttpRequest, token: str) -> HttpResponse:
    """A sign-up's page: confirm it (the button, POSTed), then its state, and withdraw."""
    if ratelimit.limited(request, "link"):
        return ratelimit.too_many(request, "link")
    now = timezone.now()
    signup = signups.signup_for(token)
    if signup is None:
        return render(request, "games/signups/not_valid.html", status=404)
    error = None
    if request.method == "POST":
        action = request.POST.get("action", "")
        try:
            if action == "confirm":
                signup = signups.confirm(token, now=now)
                messages.success(request, gettext("Your sign-up is confirmed."))
            elif action == "withdraw":
                signup = signups.withdraw(token, now=now)
                messages.success(request, gettext("You withdrew your sign-up."))
            else:
                raise postal.PostalError(gettext("this form is out of date: nothing was changed"))
        except postal.PostalError as refused:
            error = _sentence(refused.message)
        else:
            return redirect("signups:confirm", token=token)
        signup = signups.signup_for(token) or signup
    return _signup_page(request, signup, now, error)


def _signup_page(
    request: HttpRequest, signup: SignUp, now: datetime, error: str | None
) -> HttpResponse:
    game = signup.game
    lapsed = openings.lapsed(signup, now)
    context: dict[str, Any] = {
        **game_facts(game, _players(game)),
        "signup": signup,
        "lapsed": lapsed,
        "hours": settings.SIGNUP_CONFIRM_HOURS,
        "error": error,
        "started": game.status != Game.Status.RECRUITING and signup.position is None,
        "seat": None if signup.position is None else signup.position + 1,
        "refusal": None,
        "waits": False,
        "place": None,
        "reserve": signup.position is None and openings.takes_reserves(game),
        "over": game.status in (Game.Status.FINISHED, Game.Status.ABANDONED),
        "reserve_words": signups.reserve_words(),
    }
    if signup.state == SignUp.State.UNCONFIRMED and not lapsed:
        why = signups.refusal(game, signup.position)
        context["refusal"] = None if why is None else _sentence(why)
        context["waits"] = why is None and openings.would_wait(game, signup.position)
        context["full"] = why is None and openings.is_full(game)
    if signup.state == SignUp.State.WAITING:
        context["place"] = openings.waiting_place(signup)
    status = 200
    if error is not None:
        status = 409
    elif lapsed:
        status = 410
    return render(request, "games/signups/signup.html", context, status=status)
