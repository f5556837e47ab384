"""A signed-in player's tokens for programs, ``/me/tokens/`` (docs/api.md): make one for
a seat or for all their seats, reading only or playing, for a bot or not; the new token is
shown on the answer to the form, once, and never again; the list says each one's last use
and what was done with it, and revokes."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from games.community import players, tokens
from games.models import ApiToken, Game, Player, Seat
from games.web.common import first_error
from games.web.me.views import _speak

ALL_SEATS = "all"


class TokenForm(forms.Form):
    """A new token: its name, what it opens (a seat of the player's, or all), whether it
    plays, and whether a bot plays with it."""

    name = forms.CharField(
        label=gettext_lazy("Name"),
        max_length=60,
        required=False,
        help_text=gettext_lazy("So you know it again in this list: “my Discord bridge”."),
    )
    opens = forms.ChoiceField(label=gettext_lazy("Opens"))
    access = forms.ChoiceField(
        label=gettext_lazy("What it may do"),
        choices=[
            (ApiToken.Access.READ, gettext_lazy("read only: the seat's view, moves, messages")),
            (ApiToken.Access.PLAY, gettext_lazy("read and play: send orders and messages too")),
        ],
        initial=ApiToken.Access.READ,
        widget=forms.RadioSelect,
    )
    bot = forms.BooleanField(
        label=gettext_lazy(
            "A program plays with it (a bot): everyone sees its seats are played by a bot"
        ),
        required=False,
    )

    def __init__(self, *args: Any, seats: list[Seat], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seats = {str(seat.pk): seat for seat in seats}
        opens = self.fields["opens"]
        assert isinstance(opens, forms.ChoiceField)
        opens.choices = [
            (ALL_SEATS, gettext("All my seats, in every game (the ones to come too)")),
            *[
                (
                    key,
                    gettext("%(seat)s in “%(game)s”")
                    % {"seat": seat.name, "game": seat.game.title},
                )
                for key, seat in self.seats.items()
            ],
        ]

    def seat(self) -> Seat | None:
        return self.seats.get(self.cleaned_data["opens"])


def _seats(player: Player) -> list[Seat]:
    return list(
        players.seats_of(player.email)
        .select_related("game")
        .exclude(game__status__in=[Game.Status.FINISHED, Game.Status.ABANDONED, Game.Status.DRAFT])
        .order_by("-game__created_at", "position")
    )


def _page(request: HttpRequest, player: Player, form: TokenForm, **extra: Any) -> HttpResponse:
    context = {
        "player": player,
        "form": form,
        "tokens": tokens.listed(tokens.of_address(player.email)),
        **extra,
    }
    return render(request, "games/players/tokens.html", context, status=extra.pop("status", 200))


@login_required(login_url="players:signin")
@require_http_methods(["GET", "POST"])
def my_tokens(request: HttpRequest) -> HttpResponse:
    player = players.player_of(request.user)
    if player is None:
        return render(request, "games/players/me.html", {"not_a_player": True})
    _speak(request, player)
    seats = _seats(player)
    if request.method == "GET":
        chosen = request.GET.get("seat", "")
        initial = {"opens": chosen if any(str(s.pk) == chosen for s in seats) else ALL_SEATS}
        return _page(request, player, TokenForm(initial=initial, seats=seats))
    form = TokenForm(request.POST, seats=seats)
    if not form.is_valid():
        messages.error(request, first_error(form))
        return _page(request, player, form, status=400)
    seat = form.seat()
    try:
        token, raw = tokens.mint(
            name=form.cleaned_data["name"],
            scope=ApiToken.Scope.SEAT if seat is not None else ApiToken.Scope.SEATS,
            access=form.cleaned_data["access"],
            bot=form.cleaned_data["bot"],
            email=player.email,
            seat=seat,
            now=timezone.now(),
        )
    except tokens.TokenError as error:
        messages.error(request, error.message)
        return _page(request, player, form, status=400)
    # Shown on this answer only: it is kept as its SHA-256 and never shown again.
    return _page(request, player, TokenForm(seats=seats), made=token, secret=raw)


@login_required(login_url="players:signin")
@require_POST
def revoke_token(request: HttpRequest, token_id: int) -> HttpResponse:
    player = players.player_of(request.user)
    if player is None:
        return redirect("players:me")
    _speak(request, player)
    token = tokens.revoke(token_id, email=player.email, now=timezone.now())
    if token is None:
        messages.error(request, gettext("That token is not one of yours: nothing was changed."))
    else:
        messages.success(
            request,
            gettext("The token %(name)s is revoked: a program that uses it is refused from now on.")
            % {"name": f"“{token.name}” ({token.prefix}…)"},
        )
    return redirect("players:tokens")
