"""Real worker and beat processes against the test database and the real Redis."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.browser import (  # noqa: F401 - fixtures for these tests
    browser,
    module_browser,
    module_server,
    smtp_server,
    web_server,
)

ROOT = Path(__file__).resolve().parents[2]


class Services:
    def __init__(self, tmp_path: Path, env: dict[str, str]) -> None:
        self.tmp_path = tmp_path
        self.env = env
        self.processes: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        log = open(self.tmp_path / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "moderator", *args],
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.processes[name] = process
        return process

    def worker(
        self, name: str = "worker", queues: str = "urgent,steps,mail"
    ) -> subprocess.Popen[bytes]:
        return self.start(
            name, "worker", "--queues", queues, "--concurrency", "2", "--hostname",
            f"{name}@%h", "--without-gossip", "--without-mingle", "--loglevel", "INFO",
        )  # fmt: skip

    def beat(self) -> subprocess.Popen[bytes]:
        return self.start(
            "beat", "beat", "--schedule", str(self.tmp_path / "beat-schedule"), "--loglevel", "INFO"
        )

    def stop(self, name: str, sig: int = signal.SIGTERM) -> None:
        process = self.processes.pop(name)
        if process.poll() is None:
            os.killpg(process.pid, sig)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()

    def done(self, task: str) -> int:
        """How many runs of ``task`` the workers started here have finished, by their logs."""
        finished = re.compile(rf"Task {re.escape(task)}\[[^\]]*\] succeeded")
        return sum(
            len(finished.findall(path.read_text(errors="replace")))
            for path in self.tmp_path.glob("*.log")
        )

    def logs(self) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')[-4000:]}"
            for path in sorted(self.tmp_path.glob("*.log"))
        )


@pytest.fixture
def services(transactional_db: None, tmp_path: Path) -> Iterator[Services]:
    """A place to start workers and beat; everything started is stopped before the
    test database is flushed."""
    from django.conf import settings
    from django.db import connection

    from moderator.celery import app

    db = connection.settings_dict
    env = dict(os.environ)
    env.update(
        DATABASE_URL=f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        REDIS_URL=settings.REDIS_URL,
        CELERY_TASK_ALWAYS_EAGER="0",
        SWEEP_SECONDS="1",
        STEP_SWEEP_SECONDS="1",
        RECEIPT_SECONDS="1",
        VAR_DIR=str(tmp_path / "var"),
        EMAIL_BACKEND="django.core.mail.backends.filebased.EmailBackend",
        DB_CONN_MAX_AGE="0",
    )
    import redis

    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    app.conf.task_always_eager = False
    running = Services(tmp_path, env)
    try:
        yield running
    finally:
        for name in list(running.processes):
            running.stop(name)
        # What beat published and no worker took stays out of the next tests' broker.
        redis.Redis.from_url(settings.REDIS_URL).flushdb()
        app.conf.task_always_eager = True
        if os.environ.get("SHOW_SERVICE_LOGS"):
            print(running.logs())


def wait_for(
    condition: Callable[[], object], timeout: float, what: str, services: Services
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.25)
    pytest.fail(f"timed out waiting for {what}\n{services.logs()}")


def wait_for_sweeps(count: int, services: Services, timeout: float = 60) -> None:
    """Wait until the workers have finished ``count`` more sweeps (``games.sweep``) than
    now: what a sweep might still do twice, those sweeps would have done. An event, not a
    guess of how many fit in some seconds on a busy machine."""
    target = services.done("games.sweep") + count
    wait_for(
        lambda: services.done("games.sweep") >= target, timeout, f"{count} more sweeps", services
    )
