"""The Content-Security-Policy of every response (Django 5.2 has no setting for it).

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
