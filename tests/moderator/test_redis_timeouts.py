"""A Redis that takes connections and never answers, as a Redis cut off by the network is
to its clients, is given up on within REDIS_TIMEOUT_SECONDS a try: a request that hands a
task to the workers answers, and the rate limits let it through, instead of waiting as long
as the partition lasts (kombu waits forever by default; docs/operations.md, "Across
hosts"). tests/integration/test_across_hosts.py cuts a real Redis off mid-rush."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# In a process of its own: the broker's and the cache's settings are read once, at start.
SCRIPT = r"""
import time

import django

django.setup()
from games import postal
from moderator import ratelimit

began = time.monotonic()
limited = ratelimit.over_limits([("link", "192.0.2.1")])
counted = time.monotonic() - began
began = time.monotonic()
postal.ask_lost_links("ann@example.org")
asked = time.monotonic() - began
print(limited == [False], f"{counted:.1f}", f"{asked:.1f}")
"""


def test_a_redis_that_never_answers_holds_a_request_for_seconds_not_for_ever(
    tmp_path: Path,
) -> None:
    # Listening, never accepting: the kernel takes the connections, nobody answers.
    with socket.create_server(("127.0.0.1", 0), backlog=32) as silent:
        url = f"redis://127.0.0.1:{silent.getsockname()[1]}/0"
        env = {
            **os.environ,
            "REDIS_URL": url,
            "CELERY_BROKER_URL": url,
            "REDIS_TIMEOUT_SECONDS": "1",
            "CELERY_TASK_ALWAYS_EAGER": "0",
            "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
            "VAR_DIR": str(tmp_path),
            "LOG_LEVEL": "ERROR",
        }
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    allowed, counted, asked = done.stdout.split()
    # The hit is let through uncounted after one wait; the publish gives up after its two
    # tries (CELERY_TASK_PUBLISH_RETRY_POLICY), and nothing is sent: asking again does.
    assert allowed == "True"
    assert float(counted) < 2.5, counted
    assert float(asked) < 5.0, asked
