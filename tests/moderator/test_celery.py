"""The worker's shutdown on a broker it polls (the embedded default's SQLite, or the
filesystem transport when asked for): an idle worker stops at once (make run's Ctrl-C;
tests/integration/test_make_run.py runs it whole), a busy one finishes its task first, and
a worker on Redis is left to Celery. A worker runs below the web's CPU priority."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from celery.exceptions import WorkerShutdown
from celery.worker import state
from pytest_django.fixtures import Settings

from moderator import celery
from moderator.celery import app, stop_an_idle_worker_at_once, yield_to_the_web


@pytest.fixture(params=["sqla+sqlite:///var/broker.sqlite3", "filesystem://"])
def polled_broker(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    monkeypatch.setattr(app.conf, "broker_url", request.param)


def test_an_idle_worker_stops_at_once(polled_broker: None) -> None:
    with pytest.raises(WorkerShutdown) as stopped:
        stop_an_idle_worker_at_once(how="Warm", exitcode=0)
    assert stopped.value.code == 0


def test_a_worker_with_a_task_under_way_finishes_it_first(
    polled_broker: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(state, "active_requests", {"a task"})
    assert stop_an_idle_worker_at_once(how="Warm", exitcode=0) is None


def test_a_cold_shutdown_and_a_worker_on_redis_are_left_to_celery(
    polled_broker: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert stop_an_idle_worker_at_once(how="Cold", exitcode=1) is None
    monkeypatch.setattr(app.conf, "broker_url", "redis://127.0.0.1:6379/0")
    assert stop_an_idle_worker_at_once(how="Warm", exitcode=0) is None


def test_a_worker_lowers_its_cpu_priority_below_the_webs(
    monkeypatch: pytest.MonkeyPatch, settings: Settings, tmp_path: Path
) -> None:
    asked: list[int] = []
    group = tmp_path / "autogroup"
    group.write_text("/autogroup-7 nice 0\n")
    monkeypatch.setattr(os, "nice", asked.append)
    monkeypatch.setattr(celery, "AUTOGROUP", str(group))
    # In a session of others (a terminal's): its own nice only.
    monkeypatch.setattr(os, "getsid", lambda pid: os.getpid() + 1)
    yield_to_the_web()
    assert (asked, group.read_text()) == ([10], "/autogroup-7 nice 0\n")
    # Leading its own session: its session's scheduling group too.
    monkeypatch.setattr(os, "getsid", lambda pid: os.getpid())
    yield_to_the_web()
    assert (asked, group.read_text()) == ([10, 10], "10")
    # Where autogroups cannot be written, the process's nice stands.
    monkeypatch.setattr(celery, "AUTOGROUP", str(tmp_path / "none" / "autogroup"))
    yield_to_the_web()
    assert asked == [10, 10, 10]
    settings.WORKER_NICENESS = 0
    yield_to_the_web()
    assert asked == [10, 10, 10]
