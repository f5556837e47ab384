"""The GM's tokens for programs, ``/gm/tokens/`` (docs/api.md): a token that reads the
GM's games, or reads and runs them (every action of a game's panel); shown once, listed
with its last use and what was done with it, revoked at will."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from games.community import tokens
from games.models import ApiToken
from games.web.common import first_error
from games.web.gm.signin import gm_required


class GMTokenForm(forms.Form):
    name = forms.CharField(
        label="Name",
        max_length=60,
        required=False,
        help_text="So you know it again in this list: “league bot”.",
    )
    access = forms.ChoiceField(
        label="What it may do",
        choices=[
            (ApiToken.Access.READ, "read only: my games, their seats and log"),
            (ApiToken.Access.PLAY, "read and run: every action of a game's panel too"),
        ],
        initial=ApiToken.Access.READ,
        widget=forms.RadioSelect,
    )


def _page(request: HttpRequest, form: GMTokenForm, status: int = 200, **extra: Any) -> HttpResponse:
    context = {"form": form, "tokens": tokens.listed(tokens.of_gm(request.user)), **extra}
    return render(request, "games/gm/tokens.html", context, status=status)


@gm_required
@require_http_methods(["GET", "POST"])
def gm_tokens(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return _page(request, GMTokenForm())
    form = GMTokenForm(request.POST)
    if not form.is_valid():
        messages.error(request, first_error(form))
        return _page(request, form, status=400)
    try:
        token, raw = tokens.mint(
            name=form.cleaned_data["name"],
            scope=ApiToken.Scope.GM,
            access=form.cleaned_data["access"],
            gm=request.user,
            now=timezone.now(),
        )
    except tokens.TokenError as error:
        messages.error(request, error.message)
        return _page(request, form, status=400)
    return _page(request, GMTokenForm(), made=token, secret=raw)


@gm_required
@require_POST
def revoke_gm_token(request: HttpRequest, token_id: int) -> HttpResponse:
    token = tokens.revoke(token_id, gm=request.user, now=timezone.now())
    if token is None:
        messages.error(request, "That token is not one of yours: nothing was changed.")
    else:
        messages.success(
            request,
            f"The token “{token.name}” ({token.prefix}…) is revoked: a program that uses it "
            "is refused from now on.",
        )
    return redirect("gm:tokens")
