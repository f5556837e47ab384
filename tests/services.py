"""Points the tests at the real services on this machine, before Django is configured.

Loaded as a pytest plugin (``-p tests.services`` in pyproject.toml), so it runs before
pytest-django reads the settings. Where DATABASE_URL or REDIS_URL is not set and the
service answers on its usual local port, the tests use it; otherwise the tests that need
it skip, or fail when REQUIRE_SERVICES=1 (CI).
"""

from __future__ import annotations

import os
import socket

import pytest

REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES", "") == "1"
LOCAL_POSTGRES = "postgres://postgres@127.0.0.1:5432/moderator"
LOCAL_REDIS = "redis://127.0.0.1:6379/15"


def answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


if "DATABASE_URL" not in os.environ and answers("127.0.0.1", 5432):
    os.environ["DATABASE_URL"] = LOCAL_POSTGRES
if "REDIS_URL" not in os.environ and answers("127.0.0.1", 6379):
    os.environ["REDIS_URL"] = LOCAL_REDIS
# Unit tests run tasks in the calling process; the integration tests start real workers.
os.environ.setdefault("CELERY_TASK_ALWAYS_EAGER", "1")
os.environ.setdefault("VAR_DIR", os.path.join(os.path.dirname(__file__), "..", "var", "test"))


def missing(what: str) -> None:
    """Skip the test for lack of ``what``, or fail it when services are required."""
    if REQUIRE_SERVICES:
        pytest.fail(f"{what} is required (REQUIRE_SERVICES=1) but not available")
    pytest.skip(f"{what} is not available on this machine")
