"""The broker's queues as the steps run sees them: how many messages wait in one; and the
embedded default's broker kept small (``prune_delivered``).

Celery's own answer to "how many tasks are in a queue" (its FAQ): a passive declare of the
queue, which tells its message count. Messages a worker has taken and not yet acknowledged
are not counted: they are under way."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from celery import current_app
from kombu import Queue
from kombu.exceptions import ChannelError

if TYPE_CHECKING:
    from sqlalchemy import Engine

# The URL schemes of kombu's SQLAlchemy transport.
SQLALCHEMY_BROKERS = ("sqla+", "sqlalchemy+")


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


# The SQLAlchemy engine of the broker's database, made once per process.
_engines: dict[str, Engine] = {}


def prune_delivered() -> int:
    """On the embedded default's broker (kombu's SQLAlchemy transport), delete the messages
    workers have taken; how many. kombu marks a message taken (its row hidden) and never
    reads or deletes it again: a message a worker took and had not acknowledged when it
    stopped is put back as a new row (kombu's restore of a virtual transport), so a hidden
    row is dead weight, and every poll of a worker would read past more of them. Other
    brokers: 0, nothing to do."""
    url = str(current_app.conf.broker_url or "")
    if not url.startswith(SQLALCHEMY_BROKERS):
        return 0
    # Imported here: only the embedded default's broker needs SQLAlchemy, and a process on
    # another broker starts without it.
    from sqlalchemy import column, create_engine, delete, false, inspect, table

    options = dict(current_app.conf.broker_transport_options or {})
    name = str(options.get("message_tablename", "kombu_message"))
    database = url.split("+", 1)[1]
    if database not in _engines:
        _engines[database] = create_engine(database, connect_args=options.get("connect_args", {}))
    engine = _engines[database]
    if not inspect(engine).has_table(name):
        return 0  # nothing published yet
    messages = table(name, column("visible"))
    with engine.begin() as connection:
        deleted = connection.execute(delete(messages).where(messages.c.visible == false()))
    return int(deleted.rowcount)
