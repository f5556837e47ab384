"""A production start must not leave SITE_URL or the email backend at the embedded
default: errors for ``check --deploy``, warnings at every other start."""

from __future__ import annotations

import logging
import sys

import pytest
from django.core import checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from pytest_django.fixtures import Settings

PRODUCTION = {
    "DEBUG": False,
    "SITE_URL": "https://moderator.example.org",
    "EMAIL_BACKEND": "anymail.backends.postmark.EmailBackend",
    "PRIVACY_CONTACT": "privacy@example.org",
}
SITE_MESSAGE = (
    "SITE_URL is 'http://127.0.0.1:8000': every link in every email would point to this machine."
)
MAIL_MESSAGE = (
    "EMAIL_BACKEND is django.core.mail.backends.filebased.EmailBackend: no email would reach "
    "a player."
)


def ours(found: list[checks.CheckMessage]) -> list[tuple[str | None, str]]:
    return [(m.id, m.msg) for m in found if m.id and m.id.startswith("moderator.")]


@pytest.fixture
def production(settings: Settings) -> Settings:
    for name, value in PRODUCTION.items():
        setattr(settings, name, value)
    return settings


def test_production_settings_raise_nothing(production: Settings) -> None:
    assert ours(checks.run_checks(include_deployment_checks=True)) == []


def test_the_embedded_defaults_in_production_are_deploy_errors(production: Settings) -> None:
    production.SITE_URL = "http://127.0.0.1:8000"
    production.EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"

    assert ours(checks.run_checks(include_deployment_checks=True)) == [
        ("moderator.W001", SITE_MESSAGE),
        ("moderator.W002", MAIL_MESSAGE),
        ("moderator.E001", SITE_MESSAGE),
        ("moderator.E002", MAIL_MESSAGE),
    ]
    with pytest.raises(SystemCheckError) as failed:
        call_command("check", "--deploy", "--fail-level", "ERROR")
    assert "moderator.E001" in str(failed.value)
    assert "moderator.E002" in str(failed.value)


@pytest.mark.parametrize(
    "site", ["http://localhost:8000", "https://moderator.localhost", "http://[::1]:8000"]
)
def test_a_local_site_url_is_a_warning_at_start(production: Settings, site: str) -> None:
    production.SITE_URL = site
    assert [id_ for id_, _ in ours(checks.run_checks())] == ["moderator.W001"]


def test_a_privacy_page_without_a_contact_is_a_deploy_warning(production: Settings) -> None:
    production.PRIVACY_CONTACT = " "
    assert ours(checks.run_checks()) == []
    assert ours(checks.run_checks(include_deployment_checks=True)) == [
        (
            "moderator.W003",
            "PRIVACY_CONTACT is unset: the privacy page (/privacy/), which every page and "
            "email links to, names nobody to write to about one's data.",
        )
    ]


def test_debug_on_is_the_embedded_default_and_warns_of_nothing(settings: Settings) -> None:
    settings.DEBUG = True
    settings.SITE_URL = "http://127.0.0.1:8000"
    settings.EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
    assert ours(checks.run_checks(include_deployment_checks=True)) == []


def test_the_wsgi_application_warns_at_start(
    production: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    production.EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
    sys.modules.pop("moderator.wsgi", None)
    logger = logging.getLogger("moderator")
    logger.addHandler(caplog.handler)
    try:
        import moderator.wsgi  # noqa: F401
    finally:
        logger.removeHandler(caplog.handler)
    assert [r.getMessage().split(":")[0] for r in caplog.records] == ["moderator.W002"]
