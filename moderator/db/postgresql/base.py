"""DATABASES ENGINE ``moderator.db.postgresql``: Django's PostgreSQL backend in every
respect but these, each a round trip or a millisecond less, the same behaviour:

- the SQL compiler module (moderator.db.postgresql.compiler: bulk inserts as VALUES rows);
- a transaction's BEGIN goes to the server with its first statement, in the same query,
  instead of a round trip of its own (Cursor below);
- the health check at a request's start (CONN_HEALTH_CHECKS) asks the connection's
  socket, not the server (DatabaseWrapper.close_if_health_check_failed);
- psycopg's cache of parsed queries made to hold long ones (at the end).

A round trip costs about 0.1 ms of CPU, client and server together, more under load than
the statement it carries (bench/changes.md): an order's post made six (the health check's
SELECT 1, BEGIN, its reads, its writes, COMMIT, and the session's Redis GET).
"""

from __future__ import annotations

import select
from typing import Any

from django.db.backends.postgresql import base, operations
from psycopg import ClientCursor, ProgrammingError, _queries
from psycopg import Connection as PsycopgConnection
from psycopg.pq import TransactionStatus

IDLE = TransactionStatus.IDLE


class DatabaseOperations(operations.DatabaseOperations):
    compiler_module = "moderator.db.postgresql.compiler"

    def last_executed_query(self, cursor: Any, sql: str, params: Any) -> str:
        """The statement as sent (Django's query log, CaptureQueriesContext), without the
        BEGIN that Cursor sent in front of it: Django logs no BEGIN or COMMIT."""
        query: str | None = super().last_executed_query(cursor, sql, params)
        begun = getattr(cursor, "begun", "")
        if query is not None and begun and query.startswith(begun):
            return query[len(begun) :]
        return query  # type: ignore[return-value]  # None, as Django's own may return


def _begin_due(connection: PsycopgConnection[Any]) -> str | None:
    """The BEGIN to send before the next statement: Django has turned autocommit off
    (a transaction.atomic block) and no transaction is open yet on the server."""
    if getattr(connection, "django_autocommit", True):
        return None
    if connection.info.transaction_status != IDLE:
        return None
    return connection._get_tx_start_command().decode()


def _begin_alone(connection: PsycopgConnection[Any]) -> None:
    begin = _begin_due(connection)
    if begin is not None:
        with ClientCursor(connection) as cursor:  # not Cursor: nothing to prepend
            cursor.execute(begin)


# Django's psycopg cursor class (CursorMixin and psycopg's ClientCursor); the type stubs
# do not describe it.
_DjangoCursor: Any = base.Cursor


class Cursor(_DjangoCursor):
    """Django's cursor (client-side binding: psycopg sends a query without parameters
    through the simple protocol, which takes several statements), but the transaction's
    BEGIN goes in front of its first statement: ``BEGIN;SELECT ...`` is one round trip,
    where psycopg sends BEGIN on its own first. The caller sees only its own statement's
    result (the cursor has moved past BEGIN's), as it would have."""

    # The BEGIN sent in front of the last statement ("" if none): see last_executed_query.
    begun = ""

    def execute(self, query: Any, params: Any = None, **options: Any) -> Any:
        begin = _begin_due(self.connection)
        self.begun = ""
        if begin is None:
            return super().execute(query, params, **options)
        if options or not isinstance(query, str):
            # prepare/binary (the extended protocol, one statement a query), or a query
            # composed with psycopg.sql: BEGIN goes on its own, as psycopg would send it.
            _begin_alone(self.connection)
            return super().execute(query, params, **options)
        self.begun = f"{begin};"
        super().execute(self.begun + query, params)
        self.nextset()
        return self

    def executemany(self, query: Any, params_seq: Any, **options: Any) -> Any:
        _begin_alone(self.connection)
        return super().executemany(query, params_seq, **options)


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
    # Django's query log keeps its "BEGIN" entry when a transaction opens (as it does with
    # psycopg, which sends BEGIN later too): here that entry is no round trip of its own.
    begins_with_first_statement = True

    def get_connection_params(self) -> dict[str, Any]:
        params = super().get_connection_params()
        if self.settings_dict["OPTIONS"].get("server_side_binding") is not True:
            params["cursor_factory"] = Cursor
        return params

    def _set_autocommit(self, autocommit: bool) -> None:
        """psycopg's connection stays in autocommit, Django's choice is kept on it, and
        Cursor opens the transaction (psycopg would send BEGIN on its own round trip).
        Refused while a transaction is open, as psycopg refuses it."""
        connection = self.connection
        with self.wrap_database_errors:
            status = connection.info.transaction_status
            if status != IDLE:
                raise ProgrammingError(
                    f"can't change autocommit now: connection in transaction status {status.name}"
                )
            if not connection.autocommit:
                connection.autocommit = True
            connection.django_autocommit = autocommit

    def create_cursor(self, name: str | None = None) -> Any:
        if name is not None and self.connection is not None:
            # A named cursor's DECLARE is psycopg's own statement: the transaction begins
            # before it, on its own.
            _begin_alone(self.connection)
        return super().create_cursor(name)

    def close_if_health_check_failed(self) -> None:
        """CONN_HEALTH_CHECKS without a round trip. Between requests the server has
        nothing to say to a connection without a transaction: bytes to read (the message
        of a server that shut down or ended the session, or the end of the stream) mean
        it has closed it. Django's check sends ``SELECT 1`` at the start of every request
        that uses the database."""
        # The two attributes Django's check keeps (the type stubs do not name them).
        enabled: bool = getattr(self, "health_check_enabled")  # noqa: B009
        done: bool = getattr(self, "health_check_done")  # noqa: B009
        if self.pool or self.connection is None or not enabled or done:
            return
        usable = _open_and_idle(self.connection)
        if usable is None:  # no poll() to ask (Windows): Django's check, SELECT 1
            usable = self.is_usable()
        if not usable:
            self.close()
        self.health_check_done = True


def _open_and_idle(connection: PsycopgConnection[Any]) -> bool | None:
    """Whether the connection is open with nothing to read; None if poll() cannot tell."""
    if connection.closed or connection.info.transaction_status != IDLE:
        return False
    if not hasattr(select, "poll"):
        return None
    poll = select.poll()
    poll.register(connection.fileno(), select.POLLIN | select.POLLPRI)
    return not poll.poll(0)


# psycopg parses a query's placeholders with a regular expression in Python and keeps the
# result only for queries of at most 4096 bytes and 50 parameters; a step's writes sent
# together (moderator.db.rows.together) are one query of about 400 parameters and the same
# text step after step. Parsing it took about a millisecond of the worker's CPU per step.
# The lru_cache keeps at most 128 queries.
if not hasattr(_queries, "MAX_CACHED_STATEMENT_LENGTH") or not hasattr(
    _queries, "MAX_CACHED_STATEMENT_PARAMS"
):
    raise ImportError("psycopg._queries changed: see moderator/db/postgresql/base.py")
if not hasattr(PsycopgConnection, "_get_tx_start_command"):
    raise ImportError("psycopg's Connection changed: see moderator/db/postgresql/base.py")
_queries.MAX_CACHED_STATEMENT_LENGTH = 64 * 1024
_queries.MAX_CACHED_STATEMENT_PARAMS = 4096
