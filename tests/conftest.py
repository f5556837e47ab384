from __future__ import annotations

import os
from collections.abc import Callable
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


NOW = datetime(2026, 11, 23, 18, 0, tzinfo=UTC)


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
