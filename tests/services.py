"""Points the tests at the real services on this machine, before Django is configured.

Loaded as a pytest plugin (``-p tests.services`` in pyproject.toml), so it runs before
pytest-django reads the settings. Where DATABASE_URL or REDIS_URL is not set and the
service answers on its usual local port, the tests use it; otherwise the tests that need
it skip, or fail when REQUIRE_SERVICES=1 (CI).

Under pytest-xdist (``make test`` runs two workers) each worker has its own of everything a
test may write: pytest-django gives it its own test database (``test_<name>_gw0``, ...),
and this module its own Redis database and ``var/`` folder. Worker ``gwK`` takes Redis
database ``base + K`` when there is one (16 databases, 0 to 15), else ``base - K``: from
the base 15 of CI, gw0 15 and gw1 14; from 13, gw0 13 and gw1 14. A test that flushes
Redis flushes its worker's database only.
"""

from __future__ import annotations

import os
import re
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
REDIS_DATABASES = 16


def worker_number() -> int | None:
    """This pytest-xdist worker's number (``gw3``: 3), or None outside pytest-xdist."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(worker[2:]) if worker.startswith("gw") else None


def worker_redis(url: str, number: int) -> str:
    """``url`` on the Redis database of worker ``number`` (the module's docstring)."""
    match = re.fullmatch(r"(redis://[^/]*)(?:/(\d*))?", url)
    if match is None:
        return url
    base = int(match.group(2) or 0)
    database = base + number if base + number < REDIS_DATABASES else base - number
    if not 0 <= database < REDIS_DATABASES:
        raise RuntimeError(f"no Redis database for worker {number} from {url}")
    return f"{match.group(1)}/{database}"


NUMBER = worker_number()
if NUMBER is not None and os.environ.get("REDIS_URL"):
    os.environ["REDIS_URL"] = worker_redis(os.environ["REDIS_URL"], NUMBER)
    if os.environ.get("CELERY_BROKER_URL", "").startswith("redis://"):
        os.environ["CELERY_BROKER_URL"] = worker_redis(os.environ["CELERY_BROKER_URL"], NUMBER)
# Unit tests run tasks in the calling process; the integration tests start real workers.
os.environ.setdefault("CELERY_TASK_ALWAYS_EAGER", "1")
os.environ.setdefault("VAR_DIR", os.path.join(os.path.dirname(__file__), "..", "var", "test"))
if NUMBER is not None:
    os.environ["VAR_DIR"] = os.path.join(os.environ["VAR_DIR"], f"gw{NUMBER}")


def missing(what: str) -> None:
    """Skip the test for lack of ``what``, or fail it when services are required."""
    if REQUIRE_SERVICES:
        pytest.fail(f"{what} is required (REQUIRE_SERVICES=1) but not available")
    pytest.skip(f"{what} is not available on this machine")
