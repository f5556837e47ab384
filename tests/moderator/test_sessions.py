"""Sessions (a GM's login) are kept in the database and read through Redis when there is
one (moderator/sessions.py): a page reads no session row, and a Redis that does not
answer changes nothing a GM sees. Players hold their seats in a cookie (games.postal.access)."""

from __future__ import annotations

import logging
import os
import secrets
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from pytest_django.fixtures import Settings
from redis import Redis
from time_machine import TimeMachineFixture

from games.engines.choice.rules import ChoiceEngine
from games.models import Order, Seat
from games.postal import access
from moderator.sessions import SessionStore
from tests.factories import GMFactory, seat_page, started_game

pytestmark = [pytest.mark.django_db, pytest.mark.redis]

BASE_DIR = Path(__file__).resolve().parents[2]
CHOICE = ChoiceEngine()
# A port nothing listens on: every call to this cache fails at once.
UNREACHABLE = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:1/0",
    }
}


@pytest.fixture(autouse=True)
def frozen(time_machine: TimeMachineFixture, now: datetime) -> None:
    time_machine.move_to(now, tick=False)


PASSWORD = "a GM's password of some length"


def staff() -> User:
    gm = GMFactory.create(is_staff=True)  # GMs are staff users
    gm.set_password(PASSWORD)
    gm.save()
    return gm


@pytest.fixture
def gm() -> User:
    return staff()


def browser() -> Client:
    return Client(REMOTE_ADDR=f"10.{secrets.randbelow(256)}.{secrets.randbelow(256)}.7")


def log_in(client: Client, gm: User) -> str:
    """The GM signs in as a browser does; returns the session key."""
    response = client.post("/admin/login/", {"username": gm.username, "password": PASSWORD})
    assert response.status_code == 302
    return client.cookies[settings.SESSION_COOKIE_NAME].value


def session_reads(queries: CaptureQueriesContext) -> int:
    return sum('FROM "django_session"' in query["sql"] for query in queries)


def test_with_redis_sessions_are_read_through_the_cache() -> None:
    assert settings.SESSION_ENGINE == "moderator.sessions"
    assert settings.SESSION_CACHE_SECONDS == 300


def test_a_page_reads_its_session_from_the_cache_and_the_database_keeps_it(gm: User) -> None:
    client = browser()
    key = log_in(client, gm)
    assert Session.objects.filter(session_key=key).exists()
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/gm/").status_code == 200
    assert session_reads(queries) == 0
    # At most SESSION_CACHE_SECONDS in the cache, though the session lives two weeks.
    redis = Redis.from_url(settings.REDIS_URL)
    ttl = redis.ttl(cache.make_key(SessionStore.cache_key_prefix + key))
    assert 290 <= ttl <= 300
    # Gone from the cache, the session is read from the database, and cached again.
    cache.delete(SessionStore.cache_key_prefix + key)
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/gm/").status_code == 200
    assert session_reads(queries) == 1
    cached = cache.get(SessionStore.cache_key_prefix + key)
    assert cached["_auth_user_id"] == str(gm.pk)


def test_a_session_replaced_at_login_is_gone_from_the_cache_and_the_database(gm: User) -> None:
    client = browser()
    first = log_in(client, staff())
    second = log_in(client, gm)  # another login in this browser: a new session key
    assert first != second
    assert cache.get(SessionStore.cache_key_prefix + first) is None
    assert not Session.objects.filter(session_key=first).exists()
    stale = browser()
    stale.cookies[settings.SESSION_COOKIE_NAME] = first
    assert stale.get("/gm/").status_code == 302  # to the login page
    assert client.get("/gm/").status_code == 200


def test_without_an_answer_from_the_cache_the_database_does_it_all(
    gm: User, now: datetime, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    settings.CACHES = UNREACHABLE
    caplog.set_level(logging.WARNING, logger="moderator.sessions")
    client = browser()
    log_in(client, staff())
    key = log_in(client, gm)  # another login: a new key, and the old session deleted
    assert client.get("/gm/").status_code == 200
    assert Session.objects.filter(session_key=key).exists()
    said = {r.getMessage() for r in caplog.records if r.name == "moderator.sessions"}
    assert said == {
        "session cache: could not read; the database answers",
        "session cache: could not write; the database answers",
        "session cache: could not delete; the database answers",
    }
    # A player's seats are in their browser's cookie: no session, cached or not.
    game = started_game(now=now, players=2, gm=gm, early_processing=False)
    player = browser()
    seat = Seat.objects.get(game=game, position=1)
    token = access.mint([seat], now=now)[1]
    assert player.post(f"/p/{token}/").status_code == 302
    state = CHOICE.state_from_json(game.state)
    text = CHOICE.canonical(state, 1, CHOICE.default(state, 1))
    order = {"step": "1", "seat": "1", "entry": "text", "text": text}
    assert player.post(seat_page(game, 1), order).status_code == 302
    assert list(Order.objects.values_list("seat", "source")) == [(seat.pk, Order.Source.WEB)]
    assert settings.SESSION_COOKIE_NAME not in player.cookies


def test_without_redis_sessions_are_in_the_database_alone(tmp_path: Path) -> None:
    def engine(**env: str) -> str:
        keep = ("PATH", "HOME", "LANG", "DATABASE_URL")
        result = subprocess.run(
            [
                sys.executable,
                "-c",
                "import django; django.setup(); from django.conf import settings; "
                "print(settings.SESSION_ENGINE)",
            ],
            cwd=BASE_DIR,
            env={k: v for k, v in os.environ.items() if k in keep}
            | {"DJANGO_SETTINGS_MODULE": "moderator.settings", "VAR_DIR": str(tmp_path), **env},
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return result.stdout.strip()

    assert engine() == "django.contrib.sessions.backends.db"
    assert engine(REDIS_URL="redis://127.0.0.1:6379/0") == "moderator.sessions"
