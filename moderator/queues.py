"""The broker's queues as the steps run sees them: how many messages wait in one.

Celery's own answer to "how many tasks are in a queue" (its FAQ): a passive declare of the
queue, which tells its message count. Messages a worker has taken and not yet acknowledged
are not counted: they are under way."""

from __future__ import annotations

from typing import Any

from celery import current_app
from kombu import Queue
from kombu.exceptions import ChannelError


def waiting(queue: str) -> int:
    """How many messages wait in ``queue`` (0 for a queue nobody has declared yet, and
    where tasks run eagerly, in the process that publishes them: none of them waits)."""
    if current_app.conf.task_always_eager:
        return 0
    with current_app.connection_for_read() as connection:
        try:
            # kombu's type hints say a name; it returns (name, message_count, consumer_count).
            declared: Any = Queue(queue).queue_declare(
                passive=True, channel=connection.default_channel
            )
        except ChannelError:
            return 0
        return int(declared.message_count)
