from __future__ import annotations

import os
from typing import Any

from celery import Celery, Task, signals
from celery.exceptions import WorkerShutdown
from celery.worker import state

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "moderator.settings")

app = Celery("moderator")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@signals.task_prerun.connect
@signals.task_postrun.connect
def connections_as_in_a_request(sender: Task[Any, Any] | None = None, **kwargs: Any) -> None:
    """Before and after each task, what Django does around each request: close database
    connections that are past CONN_MAX_AGE or unusable (an error was seen and the health
    check fails), keep the others (settings.CELERY_DB_REUSE_MAX stops Celery closing them
    all). Not for eager tasks, which run inside their caller's request or transaction."""
    if sender is None or getattr(sender.request, "is_eager", False):
        return
    from django.db import close_old_connections

    close_old_connections()


# Where Linux groups a session's processes for the CPU scheduler (sched(7), "The autogroup
# feature"), the nice value of the session's group, which the group's processes' own nice
# values do not reach past.
AUTOGROUP = "/proc/self/autogroup"


@signals.worker_init.connect
def yield_to_the_web(**kwargs: Any) -> None:
    """A worker (and the pool it forks) runs at a lower CPU priority than the web, by
    settings.WORKER_NICENESS: a rush of deadlines is batch work, a player waiting for
    their page is not. On a machine shared with gunicorn the pages keep their pace while
    the workers take every cycle the web leaves; alone on a machine it changes nothing.

    A process's nice value counts only against the processes of its own scheduling
    group. A worker that leads a session of its own (started by a supervisor with
    setsid) is alone in its autogroup, so that group's nice is lowered too; in a
    container or a systemd unit, the group is a cgroup, whose weight its configuration
    sets (docker/compose.yaml's ``cpu_shares``, docs/operations.md)."""
    from django.conf import settings

    if not settings.WORKER_NICENESS:
        return
    os.nice(settings.WORKER_NICENESS)
    if os.getsid(0) != os.getpid():
        return  # its session's group is shared with others: the web's, perhaps
    try:
        with open(AUTOGROUP, "w") as group:
            group.write(str(settings.WORKER_NICENESS))
    except OSError:
        pass  # no autogroups here (or not ours to change): the process's nice stands


# The brokers a worker polls (kombu's virtual transports of the embedded default and of
# CELERY_BROKER_URL=filesystem://), by their URL's scheme.
POLLED_BROKERS = ("sqla+", "sqlalchemy+", "filesystem://")


@signals.worker_shutting_down.connect
def stop_an_idle_worker_at_once(how: str = "", exitcode: int = 0, **kwargs: Any) -> None:
    """On a broker the worker polls (the embedded default's SQLite), a warm shutdown
    (SIGTERM, Ctrl-C) of a worker with no task under way or waiting ends it now. Celery
    would first wait for messages twice more, 2 s each (its loop for brokers it polls),
    then stop. Raised in the signal handler, so wherever the worker's loop waits; the raise
    is Celery's own way out of the loop. A worker busy with a task finishes it first, as
    Celery does. A message taken from the broker at that very moment is lost, as with any
    stop of such a broker (kombu keeps the unacknowledged messages of a virtual transport
    in the worker's memory): the sweep finds the due steps and pending emails again from
    the database."""
    if not str(app.conf.broker_url or "").startswith(POLLED_BROKERS):
        return
    if how == "Warm" and not state.active_requests and not state.reserved_requests:
        raise WorkerShutdown(exitcode)
