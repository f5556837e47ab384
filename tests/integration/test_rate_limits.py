"""Rate limits hold across web processes: two gunicorn servers sharing Redis count the
same client's link attempts together."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings

from moderator.ratelimit import seconds_left
from tests.integration.conftest import Services
from tests.integration.test_outages import start_web

pytestmark = [pytest.mark.integration, pytest.mark.postgres, pytest.mark.redis]


def status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            code: int = response.status
            return code
    except urllib.error.HTTPError as error:
        return error.code


def test_two_web_processes_share_one_limit(services: Services, tmp_path: Path) -> None:
    first = start_web(services, tmp_path / "one")
    second = start_web(services, tmp_path / "two", name="web-2")
    rate = settings.RATES["link"]
    limit = int(rate.split("/")[0])
    # All the attempts must fall into one window (the windows end at a moment of their own
    # for each address): if this one ends soon, wait for the next.
    left = seconds_left("link", "127.0.0.1")
    if left < 15:
        time.sleep(left + 1)
    answers = [status(f"{(first, second)[n % 2]}/p/not-a-token-{n}/") for n in range(limit + 10)]
    assert answers == [404] * limit + [429] * 10
