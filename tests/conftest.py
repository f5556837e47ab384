from __future__ import annotations

import os
from datetime import UTC, datetime

import pytest

from tests.services import missing


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("postgres"):
        from django.db import connection

        if connection.vendor != "postgresql":
            missing("PostgreSQL")
    if item.get_closest_marker("redis") and not os.environ.get("REDIS_URL"):
        missing("Redis")


@pytest.fixture
def now() -> datetime:
    return datetime(2026, 11, 23, 18, 0, tzinfo=UTC)
