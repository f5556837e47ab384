"""A worker keeps its PostgreSQL connection from task to task (CONN_MAX_AGE), as gunicorn
does from request to request, and drops one that went bad."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from games import postal
from games.models import Step
from games.tasks import resolve_step
from tests.factories import choice_game
from tests.integration.conftest import Services, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.postgres, pytest.mark.redis]


def worker_backends() -> set[tuple[int, str]]:
    """The other sessions on the test database: (pid, when it connected)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid, backend_start::text FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return set(cursor.fetchall())


def test_a_worker_resolves_step_after_step_on_one_database_connection(services: Services) -> None:
    started = timezone.now() - timedelta(days=3)
    steps = []
    for _ in range(4):
        game = postal.start_game(choice_game(3).pk, now=started)
        steps.append(game.steps.get(number=1).pk)
    services.env["DB_CONN_MAX_AGE"] = "60"
    services.start(
        "worker", "worker", "--queues", "steps", "--concurrency", "1",
        "--without-gossip", "--without-mingle", "--loglevel", "INFO",
    )  # fmt: skip
    seen = []
    for step_id in steps:
        resolve_step.delay(step_id=step_id)

        def done(step_id: int = step_id) -> bool:
            return Step.objects.get(pk=step_id).status == Step.Status.DONE

        wait_for(done, 60, f"step {step_id} to be resolved", services)
        seen.append(worker_backends())
    # The same one session after every task: connected for the first, kept for the rest.
    assert len(seen[0]) == 1
    assert seen == [seen[0]] * 4


def test_a_connection_that_broke_is_replaced_before_the_next_task(services: Services) -> None:
    started = timezone.now() - timedelta(days=3)
    steps = [postal.start_game(choice_game(3).pk, now=started).steps.get(number=1).pk]
    steps.append(postal.start_game(choice_game(3).pk, now=started).steps.get(number=1).pk)
    services.env["DB_CONN_MAX_AGE"] = "60"
    services.start(
        "worker", "worker", "--queues", "steps", "--concurrency", "1",
        "--without-gossip", "--without-mingle", "--loglevel", "INFO",
    )  # fmt: skip
    resolve_step.delay(step_id=steps[0])
    wait_for(
        lambda: Step.objects.get(pk=steps[0]).status == Step.Status.DONE, 60, "step 1", services
    )
    (first,) = worker_backends()
    with connection.cursor() as cursor:  # the database ends the worker's session
        cursor.execute("SELECT pg_terminate_backend(%s)", [first[0]])
    resolve_step.delay(step_id=steps[1])
    wait_for(
        lambda: Step.objects.get(pk=steps[1]).status == Step.Status.DONE, 60, "step 2", services
    )
    # The health check before the task found the session gone and connected again: the
    # resolution never saw the dead connection (no failure counted on the step).
    assert Step.objects.get(pk=steps[1]).failures == 0
    (second,) = worker_backends()
    assert second != first
