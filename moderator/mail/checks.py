"""System checks of what a production start must not leave at the embedded default:
every email's links point to SITE_URL, and the email backend must deliver; and, a warning
of ``check --deploy`` only, the privacy page (which every email links to) names whom to
write to about one's data (PRIVACY_CONTACT).

With DEBUG off, ``manage.py check --deploy`` fails on either (errors), and every other
start that runs Django's checks (``migrate``, ``runserver``, the WSGI application as
gunicorn loads it) warns about them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from django.apps import AppConfig
from django.conf import settings
from django.core import checks

LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0", ""})
# Backends that keep the mail on this machine: right for the embedded default and tests.
UNDELIVERED = frozenset(
    {
        "django.core.mail.backends.filebased.EmailBackend",
        "django.core.mail.backends.console.EmailBackend",
        "django.core.mail.backends.locmem.EmailBackend",
        "django.core.mail.backends.dummy.EmailBackend",
    }
)


def problems() -> list[tuple[str, str, str]]:
    """(id suffix, what is wrong, the hint) for each production setting left at its
    embedded default; none while DEBUG is on."""
    if settings.DEBUG:
        return []
    found = []
    host = urlsplit(settings.SITE_URL).hostname or ""
    if host in LOCAL_HOSTS or host.endswith(".localhost"):
        found.append(
            (
                "001",
                f"SITE_URL is {settings.SITE_URL!r}: every link in every email would point "
                "to this machine.",
                "Set SITE_URL to the public address of the service, e.g. "
                "https://moderator.example.org.",
            )
        )
    if settings.EMAIL_BACKEND in UNDELIVERED:
        found.append(
            (
                "002",
                f"EMAIL_BACKEND is {settings.EMAIL_BACKEND}: no email would reach a player.",
                "Set EMAIL_BACKEND to an anymail backend with its ANYMAIL_* settings, or to "
                "moderator.mail.smtp.EmailBackend with EMAIL_HOST (docs/operations.md).",
            )
        )
    return found


@checks.register(checks.Tags.compatibility)
def production_settings(app_configs: Sequence[AppConfig] | None, **kwargs: Any) -> list[Any]:
    """At every start that runs the checks: a warning for each."""
    return [
        checks.Warning(message, hint=hint, id=f"moderator.W{suffix}")
        for suffix, message, hint in problems()
    ]


@checks.register(checks.Tags.security, deploy=True)
def deploy_settings(app_configs: Sequence[AppConfig] | None, **kwargs: Any) -> list[Any]:
    """``check --deploy``: an error for each."""
    return [
        checks.Error(message, hint=hint, id=f"moderator.E{suffix}")
        for suffix, message, hint in problems()
    ]


@checks.register(checks.Tags.security, deploy=True)
def privacy_contact(app_configs: Sequence[AppConfig] | None, **kwargs: Any) -> list[Any]:
    """``check --deploy``: a warning while the privacy page names nobody to write to."""
    if settings.DEBUG or settings.PRIVACY_CONTACT.strip():
        return []
    return [
        checks.Warning(
            "PRIVACY_CONTACT is unset: the privacy page (/privacy/), which every page and "
            "email links to, names nobody to write to about one's data.",
            hint="Set PRIVACY_CONTACT to the address people write to about their data, and "
            "PRIVACY_TEXT to who runs the service (docs/operations.md).",
            id="moderator.W003",
        )
    ]
