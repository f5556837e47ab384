"""Rate limits hold across web processes: two gunicorn servers sharing Redis count the
same client's link attempts together."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from games.views import LINK_RATE
from tests.integration.conftest import Services
from tests.integration.test_outages import start_web

pytestmark = [pytest.mark.integration, pytest.mark.postgres, pytest.mark.redis]


def status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_two_web_processes_share_one_limit(services: Services, tmp_path: Path):
    first = start_web(services, tmp_path / "one")
    second = start_web(services, tmp_path / "two", name="web-2")
    limit, window = LINK_RATE["limit"], LINK_RATE["window"]
    # All the attempts must fall into one window: if this one ends soon, wait for the next.
    left = window - time.time() % window
    if left < 15:
        time.sleep(left + 0.2)
    answers = [status(f"{(first, second)[n % 2]}/p/not-a-token-{n}/") for n in range(limit + 10)]
    assert answers == [404] * limit + [429] * 10
