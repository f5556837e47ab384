from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from time_machine import TimeMachineFixture

from tests.services import missing


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("postgres"):
        from django.db import connection

        if connection.vendor != "postgresql":
            missing("PostgreSQL")
    if item.get_closest_marker("redis") and not os.environ.get("REDIS_URL"):
        missing("Redis")
    if item.get_closest_marker("pango"):
        from games.records import zine

        if not zine.pdf_available():
            missing("Pango (WeasyPrint's PDF)")


SHARED_PER_MODULE = {"module_server", "module_browser"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The order and grouping that keep ``make test``'s workers busy to the end.

    The tests that start servers, workers and browsers (``integration``) go first, so the
    quick ones fill the gaps between them instead of one worker finishing a long tail
    alone. The tests of a module that share a live server and a browser
    (``module_server``, ``module_browser``) form one ``xdist_group``: under
    ``--dist loadgroup`` one worker runs them all, and starts that server and browser
    once. The order is the same in every worker, as pytest-xdist requires."""
    for item in items:
        if SHARED_PER_MODULE & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
    items.sort(key=lambda item: item.get_closest_marker("integration") is None)


NOW = datetime(2026, 11, 23, 18, 0, tzinfo=UTC)


@pytest.fixture(autouse=True, scope="session")
def fast_password_hashing() -> Iterator[None]:
    """Passwords hashed with MD5 in the tests, as Django's testing docs advise: the
    settings' PBKDF2 takes most of a second a hash on purpose, and the tests that make
    users with passwords, or sign them in, would pay it every time. (Every test still
    signs in through the real password check; only its cost differs.)"""
    from django.test import override_settings

    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield


@pytest.fixture(autouse=True)
def no_page_streams(settings: Any) -> None:
    """A seat page opened in a test's browser does not listen to its event stream (the
    tests of the stream say so themselves): a stream left open past its test queries the
    database every few seconds, and a query in flight deadlocks with the flush that ends
    a test on a live server."""
    settings.LIVE_STREAMS_PER_SEAT = 0


@pytest.fixture(autouse=True)
def fresh_rate_limits() -> None:
    """Every test starts with no post counted against any rate limit: the counters live in
    the cache for a window (a minute, an hour), and a test run a moment ago, or another
    test of the same seat ids, must not spend this test's allowance. Only the limits' keys
    go: a worker a module started keeps its queues on the same Redis."""
    from django.conf import settings
    from django.core.cache import cache

    from moderator.ratelimit import KEY_PREFIX

    if settings.CACHES["default"]["BACKEND"].endswith("RedisCache"):
        import redis

        server = redis.Redis.from_url(settings.CACHES["default"]["LOCATION"])
        prefix = cache.make_key(KEY_PREFIX)
        for key in server.scan_iter(match=f"{prefix}*"):
            server.delete(key)
        server.close()
    else:
        cache.clear()


@pytest.fixture
def now(time_machine: TimeMachineFixture) -> datetime:
    """A fixed moment, and the test's clock stopped at it: every date the code under test
    reads for itself (``auto_now_add`` fields, ``timezone.now()``, signed cookies'
    timestamps) agrees with the dates the test passes in, whatever the real date is. A
    test that moves on moves the clock with it (``time_machine.move_to``)."""
    time_machine.move_to(NOW, tick=False)
    return NOW


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch) -> Callable[[Any], list[dict[str, Any]]]:
    """``published(task)``: the keyword arguments of every ``task.delay(...)`` from now on,
    in a list, instead of messages to the broker."""

    def capture(task: Any) -> list[dict[str, Any]]:
        calls: list[dict[str, Any]] = []
        monkeypatch.setattr(task, "delay", lambda **kwargs: calls.append(kwargs))
        return calls

    return capture
