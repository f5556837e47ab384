"""The GM's way in and out of the panel, on the service's own pages (``/gm/sign-in/``,
``/gm/sign-out/``), not the admin's: a GM's username and password (django.contrib.auth's
``LoginView``, with django-axes' lock-outs as at the admin's login), for an account marked
staff. ``gm_required`` sends anybody else to this page and back where they were going."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import user_passes_test
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.urls import reverse, reverse_lazy

NOT_A_GM = (
    "this account does not run games here: ask the service's admin to mark it as a GM's "
    "(staff) account"
)


def is_gm(user: Any) -> bool:
    return bool(user.is_active and user.is_staff)


def gm_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A GM panel view for an active staff account; anybody else goes to the GM's sign-in
    page, which sends them back to ``view`` once signed in."""
    return user_passes_test(is_gm, login_url=reverse_lazy("gm:sign_in"))(view)


class GMSignInForm(AuthenticationForm):
    """Username and password of an active staff account; any other account is refused
    with what to do."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.error_messages = {
            **self.error_messages,
            "invalid_login": "the username or the password is wrong (both are case-sensitive)",
        }
        self.fields["username"].widget.attrs["autocomplete"] = "username"

    def confirm_login_allowed(self, user: Any) -> None:
        super().confirm_login_allowed(user)
        if not user.is_staff:
            raise ValidationError(NOT_A_GM, code="not_a_gm")


class SignIn(auth_views.LoginView):
    form_class = GMSignInForm
    template_name = "games/gm/sign_in.html"

    def get_default_redirect_url(self) -> str:
        return reverse("gm:dashboard")

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        user = self.request.user
        # Signed in, but not as a GM: the panel sent them here.
        context["not_a_gm"] = user.is_authenticated and not is_gm(user)
        return context


class SignOut(auth_views.LogoutView):
    """POST only (Django's ``LogoutView``): signed out, then the GM's sign-in page."""

    def get_success_url(self) -> str:
        return reverse("gm:sign_in")
