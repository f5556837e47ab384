"""Production settings pass ``manage.py check --deploy``, and every response carries the
Content-Security-Policy under which the pages still work."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.template import engines
from django.test import Client, RequestFactory
from pytest_django.fixtures import Settings
from time_machine import TimeMachineFixture

from games.models import Seat
from games.postal import access
from moderator.middleware import ContentSecurityPolicyMiddleware
from tests.factories import GMFactory, seat_page, started_game

BASE_DIR = Path(__file__).resolve().parents[2]
TEMPLATES = BASE_DIR / "templates"
POLICY = (
    "default-src 'self'; script-src 'self' 'nonce-{nonce}'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
NONCE = re.compile(r"'nonce-([A-Za-z0-9_-]{22})'")


def check_deploy(tmp_path: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    """``manage.py check --deploy --fail-level WARNING`` with production settings: the
    environment of a server, not of the tests (no DEBUG, no test-only variables)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key in ("PATH", "HOME", "LANG", "DATABASE_URL", "REDIS_URL")
    }
    env |= {
        "SECRET_KEY": secrets.token_urlsafe(48),
        "ALLOWED_HOSTS": "moderator.example.org",
        "SITE_URL": "https://moderator.example.org",
        "EMAIL_BACKEND": "moderator.mail.smtp.EmailBackend",
        "PRIVACY_CONTACT": "privacy@moderator.example.org",
        "VAR_DIR": str(tmp_path),
        **extra,
    }
    assert len(env["SECRET_KEY"]) >= 50
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_passes_with_production_settings(tmp_path: Path) -> None:
    result = check_deploy(tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (
        0,
        "System check identified no issues (1 silenced).\n",
        "",
    )


def test_only_the_hsts_preload_check_is_silenced_and_only_while_preload_is_off(
    tmp_path: Path,
) -> None:
    result = check_deploy(tmp_path, SECURE_HSTS_PRELOAD="1")
    assert (result.returncode, result.stdout) == (
        0,
        "System check identified no issues (0 silenced).\n",
    )


def test_check_deploy_fails_when_a_protection_is_switched_off(tmp_path: Path) -> None:
    result = check_deploy(tmp_path, SECURE_SSL_REDIRECT="0", SESSION_COOKIE_SECURE="0")
    assert result.returncode == 1
    assert "(security.W008)" in result.stderr
    assert "(security.W012)" in result.stderr


# --- the Content-Security-Policy ----------------------------------------------------------


def nonce_of(response: Any) -> str:
    match = NONCE.search(response["Content-Security-Policy"])
    assert match is not None
    return match[1]


def assert_policy(response: Any) -> None:
    header = response["Content-Security-Policy"]
    assert header == POLICY.replace("{nonce}", nonce_of(response))


def test_the_policy_is_the_setting_with_a_fresh_nonce_per_response() -> None:
    assert settings.CONTENT_SECURITY_POLICY == POLICY
    template = engines["django"].from_string(
        '<script nonce="{{ request.csp_nonce }}">go()</script>'
    )

    def page(request: HttpRequest) -> HttpResponse:
        return HttpResponse(template.render({}, request))

    middleware = ContentSecurityPolicyMiddleware(page)
    first = middleware(RequestFactory().get("/"))
    second = middleware(RequestFactory().get("/"))
    assert isinstance(first, HttpResponse)
    assert_policy(first)
    assert first.content.decode() == f'<script nonce="{nonce_of(first)}">go()</script>'
    assert nonce_of(first) != nonce_of(second)


def test_an_empty_policy_sends_no_header(settings: Settings) -> None:
    settings.CONTENT_SECURITY_POLICY = ""
    response = ContentSecurityPolicyMiddleware(lambda request: HttpResponse("ok"))(
        RequestFactory().get("/")
    )
    assert "Content-Security-Policy" not in response


@pytest.mark.django_db
def test_the_player_page_the_gm_panel_and_the_admin_work_under_the_policy(
    time_machine: TimeMachineFixture, now: datetime
) -> None:
    time_machine.move_to(now, tick=False)
    gm = GMFactory.create(is_staff=True)
    game = started_game(now=now, players=2, gm=gm)
    player = Client(REMOTE_ADDR="10.77.0.1")
    seat = Seat.objects.get(game=game, position=0)
    link = f"/p/{access.mint([seat], now=now)[0]}/"
    staff = Client()
    staff.force_login(gm)
    pages = [
        (Client(), "/", 200),
        (player, link, 200),
        (player, seat_page(game, 0), 404),
        (staff, "/gm/", 200),
        (staff, f"/gm/{game.pk}/", 200),
        (staff, "/gm/new/", 200),
        (staff, "/gm/campaigns/", 200),
        (staff, f"/admin/games/game/{game.pk}/change/", 200),
    ]
    for client, url, status in pages:
        response = client.get(url)
        assert response.status_code == status, url
        assert_policy(response)
    assert player.post(link).status_code == 302
    response = player.get(seat_page(game, 0))
    assert response.status_code == 200
    assert_policy(response)
    assert response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "same-origin"


def template_files() -> list[Path]:
    return sorted(path for path in TEMPLATES.rglob("*.html") if "emails" not in path.parts)


def test_every_inline_script_in_the_templates_carries_the_nonce() -> None:
    """The policy blocks any inline script without the response's nonce, and every inline
    event handler (onclick=...) and javascript: URL."""
    for path in template_files():
        text = path.read_text()
        for tag in re.findall(r"<script\b[^>]*>", text):
            assert "src=" in tag or 'nonce="{{ request.csp_nonce }}"' in tag, (path, tag)
        assert re.search(r"\son[a-z]+\s*=", text) is None, path
        assert "javascript:" not in text, path
