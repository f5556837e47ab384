"""The embedded default's broker and a message still being written (issue 39, section 1).

kombu's filesystem transport, the embedded default's broker before, writes a message's
file in place (opened, then written): a worker polling between the two read the file
empty, died of ``JSONDecodeError`` in the transport's ``_get``, and nothing more was done
until someone restarted it. Here that moment is made to last: the message of a real task
is taken out of the broker, the worker started, and the message put back half written
(its file empty; on the SQLAlchemy transport, its row inserted in a transaction not yet
committed) for a few seconds before it is completed.

The embedded default's broker (a SQLite file through kombu's SQLAlchemy transport) never
shows a worker a message before its transaction commits: the worker keeps running and
runs the task once it is. On the filesystem transport (still there for whoever sets
``CELERY_BROKER_URL=filesystem://``) the worker dies, which is why it is no longer the
default."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.integration.test_make_run import ROOT, embedded_default

pytestmark = pytest.mark.integration

# A task that runs on an empty database and says so in the worker's log.
PUBLISH = (
    "from django.conf import settings; from moderator.celery import app; "
    "print(app.send_task('games.sweep', queue='urgent').id); print(settings.CELERY_BROKER_URL)"
)
# How long a message stays half written: several of the worker's polls (1 s on the
# embedded default, kombu's default; 1 s on the filesystem transport too).
WRITING_SECONDS = 4


def manage(env: dict[str, str], *args: str) -> str:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT, env=env, check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip


class Message:
    """A published message taken out of the broker, to be put back in two moves: half
    written, then complete."""

    def __init__(self, broker: str, var: Path) -> None:
        self.broker = broker
        if broker.startswith("filesystem://"):
            (self.path,) = (var / "broker" / "queue").glob("*.urgent.msg")
            self.body = self.path.read_bytes()
            self.path.unlink()
        else:
            self.path = Path(broker.removeprefix("sqla+sqlite:///"))
            with sqlite3.connect(self.path) as database:
                (self.row,) = database.execute(
                    "SELECT queue_id, timestamp, payload FROM kombu_message WHERE visible"
                ).fetchall()
                database.execute("DELETE FROM kombu_message")

    @contextmanager
    def being_written(self) -> Iterator[None]:
        if self.broker.startswith("filesystem://"):
            # What kombu's _put leaves between its open(..., "wb") and its write.
            with self.path.open("wb") as message:
                yield
                message.write(self.body)
        else:
            # The row of kombu's _put, inserted in a transaction that has not committed.
            database = sqlite3.connect(self.path, isolation_level=None)
            try:
                database.execute("BEGIN")
                database.execute(
                    "INSERT INTO kombu_message (queue_id, visible, timestamp, payload, version)"
                    " VALUES (?, 1, ?, ?, 1)",
                    self.row,
                )
                yield
                database.execute("COMMIT")
            finally:
                database.close()


def run_a_task_being_written(tmp_path: Path, env: dict[str, str]) -> tuple[str, str, int | None]:
    """(the worker's log, the task's id, the worker's exit status if it died before it
    ran the task, else None)."""
    manage(env, "migrate", "--noinput")
    task_id, broker = manage(env, "shell", "-c", PUBLISH).split()[-2:]
    message = Message(broker, Path(env["VAR_DIR"]))
    log = tmp_path / "worker.log"
    with log.open("ab") as output:
        # make run's worker (supervisord.conf).
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "moderator", "worker", "--pool", "solo",
             "--queues", "urgent,steps,mail", "--loglevel", "INFO"],
            cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while "ready." not in log.read_text(errors="replace"):
            assert worker.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        with message.being_written():
            time.sleep(WRITING_SECONDS)
            assert f"games.sweep[{task_id}] received" not in log.read_text(errors="replace")
        # Written: the worker runs the task, unless it died of the half-written message.
        deadline = time.monotonic() + 60
        while f"games.sweep[{task_id}] succeeded" not in log.read_text(errors="replace"):
            if worker.poll() is not None:
                break
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        status = worker.poll()
    finally:
        if worker.poll() is None:
            worker.terminate()
            worker.wait(timeout=60)
    return log.read_text(errors="replace"), task_id, status


def test_the_embedded_default_worker_waits_for_a_message_being_written(tmp_path: Path) -> None:
    env = embedded_default(tmp_path)
    log, task_id, status = run_a_task_being_written(tmp_path, env)
    assert status is None, log
    assert f"Task games.sweep[{task_id}] succeeded" in log
    assert [line for line in log.splitlines() if "ERROR" in line or "Traceback" in line] == []


def test_a_worker_on_the_filesystem_broker_dies_of_a_message_being_written(
    tmp_path: Path,
) -> None:
    env = embedded_default(tmp_path) | {"CELERY_BROKER_URL": "filesystem://"}
    log, task_id, status = run_a_task_being_written(tmp_path, env)
    assert (status, "JSONDecodeError: Expecting value" in log) == (1, True), log
    assert f"games.sweep[{task_id}] received" not in log
