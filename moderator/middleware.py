"""The Content-Security-Policy of every response (Django 5.2 has no setting for it), the
language of every page, and the refusal of an address holding a NUL character.

``settings.CONTENT_SECURITY_POLICY`` is the header's value; ``{nonce}`` in it becomes a
fresh random nonce for each response, which a template's inline script must carry:
``<script nonce="{{ request.csp_nonce }}">``. Inline styles are allowed by the policy
itself ('unsafe-inline' in style-src): the templates use them everywhere and they run no
code. An empty policy sends no header.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase
from django.middleware.locale import LocaleMiddleware
from django.shortcuts import render
from django.utils import translation

HEADER = "Content-Security-Policy"


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        nonce = secrets.token_urlsafe(16)
        request.csp_nonce = nonce  # type: ignore[attr-defined]  # ours, for templates
        response = self.get_response(request)
        policy = settings.CONTENT_SECURITY_POLICY
        if policy and HEADER not in response:
            response[HEADER] = policy.replace("{nonce}", nonce)
        return response


class LanguageMiddleware(LocaleMiddleware):
    """Django's LocaleMiddleware (the browser's language: the language cookie that the
    pages' switcher sets, else Accept-Language), but the GM panel is in English whatever
    the browser asks (docs/languages.md). A page that knows whose it is (a seat's, a
    signed-in player's) speaks their language instead: ``games.notify.languages.speak``."""

    def process_request(self, request: HttpRequest) -> None:
        # Where the page's language was chosen (games.notify.languages.speak), for its footer:
        # None, the browser (the footer's switcher); "", nothing to show.
        request.language_setting = None  # type: ignore[attr-defined]  # ours, for base.html
        if request.path_info.startswith(ENGLISH_PATHS):
            translation.activate(settings.LANGUAGE_CODE)
            request.LANGUAGE_CODE = settings.LANGUAGE_CODE
            return
        super().process_request(request)

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        response = super().process_response(request, response)
        # The thread speaks the default again: what it runs next (a task, a test) does not
        # inherit this page's language.
        translation.deactivate()
        return response


# The pages that are in English: the GM panel (its campaigns too) and the local mailbox.
ENGLISH_PATHS = ("/gm/", "/mailbox/")


class NulInAddressMiddleware:
    """An address whose query string holds a NUL character (``?player=%00``) answers 400
    with a page that says so, before any view: PostgreSQL stores no NUL, so a view that
    searched or saved such a value answered 500. No link of the service has one; a form
    field's NUL is its form's to refuse (Django's CharField does)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if any(
            "\x00" in key or "\x00" in value
            for key, values in request.GET.lists()
            for value in values
        ):
            return render(request, "bad_address.html", status=400)
        return self.get_response(request)
