from __future__ import annotations

import os
from typing import Any

from celery import Celery, Task, signals

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
