"""DATABASES ENGINE ``moderator.db.postgresql``: Django's PostgreSQL backend in every
respect but these, each a round trip or a millisecond less, the same behaviour:

- the SQL compiler module (moderator.db.postgresql.compiler: bulk inserts as VALUES rows);
- a transaction's BEGIN goes to the server with its first statement, in the same query,
  instead of a round trip of its own (Cursor below);
- the health check at a request's start (CONN_HEALTH_CHECKS) asks the connection's
  socket, not the server (DatabaseWrapper.close_if_health_check_failed);
- the reads of moderator.db.compiled and the one-row writes of moderator.db.rows are
  prepared on the server session, by name, and prepared again once their plan is a
  minute old (DatabaseWrapper.prepared), unless OPTIONS says
  ``"prepared_statements": False``;
- the writes of a ``rows.together(commit=True)`` block, a transaction's last, go with its
  COMMIT, in the same query (DatabaseWrapper.commit_with);
- psycopg's cache of parsed queries made to hold long ones (at the end).

A round trip costs about 0.1 ms of CPU, client and server together, more under load than
the statement it carries (bench/changes.md): an order's post made six (the health check's
SELECT 1, BEGIN, its reads, its writes, COMMIT, and the session's Redis GET).
"""

from __future__ import annotations

import hashlib
import re
import select
import time
from typing import Any, NamedTuple

from django.db.backends.postgresql import base, operations
from psycopg import ClientCursor, ProgrammingError, _queries
from psycopg import Connection as PsycopgConnection
from psycopg.pq import TransactionStatus

IDLE = TransactionStatus.IDLE


class DatabaseOperations(operations.DatabaseOperations):
    compiler_module = "moderator.db.postgresql.compiler"

    def last_executed_query(self, cursor: Any, sql: str, params: Any) -> str:
        """The statement as sent (Django's query log, CaptureQueriesContext), without the
        BEGIN that Cursor sent in front of it: Django logs no BEGIN or COMMIT. A prepared
        read is logged as the statement it ran, with its values, without its PREPARE:
        whether a read is prepared yet on a session depends on what ran before on it."""
        query: str | None = super().last_executed_query(cursor, sql, params)
        if query is not None and isinstance(sql, str) and PREPARED_PREFIX in sql:
            # Prepared reads (DatabaseWrapper.prepared) logged as the statements they run.
            wrapper: DatabaseWrapper = self.connection  # type: ignore[assignment]
            written = wrapper.as_written(sql)
            if written != sql:
                with ClientCursor(wrapper.connection) as rendering:
                    return rendering.mogrify(written, params)
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
        try:
            return self._execute(query, params, **options)
        except BaseException:
            if isinstance(query, str) and PREPARED_PREFIX in query:
                # A PREPARE that ran before the statement that failed stays (it outlives
                # its transaction's rollback), one that came after it never ran; and an
                # EXECUTE fails if its statement is gone: what the session has is not
                # known until it is read again (DatabaseWrapper.prepared).
                self.connection.moderator_prepared = None
            raise

    def _execute(self, query: Any, params: Any, **options: Any) -> Any:
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


# The names this engine gives the statements it prepares (all of them start so).
PREPARED_PREFIX = "moderator_"
# How long a statement stays prepared, and so how old its plan can be (seconds).
PREPARED_SECONDS = 60.0
_PLACEHOLDER = re.compile(r"%[s%(]")


class Prepared(NamedTuple):
    """A statement prepared by name on the server session: ``prepare`` (the PREPARE to
    send in front of the first EXECUTE on a session) and ``execute`` (with the statement's
    placeholders, %s, for its values)."""

    name: str
    sql: str
    prepare: str
    execute: str


def prepared(sql: str) -> Prepared:
    """``sql`` (Django's SQL for psycopg: %s placeholders, %% for a percent sign) as a
    named prepared statement. The name is a digest of the SQL: the same statement has the
    same name in every process, so a name the server session has is the statement that
    name says."""
    name = PREPARED_PREFIX + hashlib.blake2b(sql.encode(), digest_size=12).hexdigest()
    count = 0

    def number(match: re.Match[str]) -> str:
        nonlocal count
        if match[0] == "%%":
            return "%"
        if match[0] == "%(":
            raise ValueError("named placeholders cannot be prepared")
        count += 1
        return f"${count}"

    statement = _PLACEHOLDER.sub(number, sql)
    arguments = f"({', '.join(['%s'] * count)})" if count else ""
    return Prepared(name, sql, f"PREPARE {name} AS {statement}", f"EXECUTE {name}{arguments}")


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
    # Django's query log keeps its "BEGIN" entry when a transaction opens (as it does with
    # psycopg, which sends BEGIN later too): here that entry is no round trip of its own.
    begins_with_first_statement = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        options = self.settings_dict["OPTIONS"]
        # Whether compiled reads and one-row writes are prepared on the server: not with
        # server-side binding (no Cursor), nor where the server session is not this
        # connection's own (PgBouncer in transaction or statement mode: docs/operations.md).
        self.prepares_statements = bool(
            options.get("prepared_statements", True)
            and options.get("server_side_binding") is not True
        )
        self._prepared: dict[str, Prepared] = {}  # by SQL
        self._prepared_names: dict[str, Prepared] = {}  # by name
        # A rows.together(commit=True) block's writes, held for the COMMIT (commit_with).
        self._held_for_commit: Any = None

    def get_connection_params(self) -> dict[str, Any]:
        params = super().get_connection_params()
        params.pop("prepared_statements", None)  # this engine's option, not psycopg's
        if self.settings_dict["OPTIONS"].get("server_side_binding") is not True:
            params["cursor_factory"] = Cursor
        return params

    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        connection = super().get_new_connection(conn_params)
        # The statements its server session has prepared, by name, with when (monotonic
        # clock); None: not known (after a failed query that held one), read again before
        # the next is used. A pooled connection keeps its session, its statements and this.
        if getattr(connection, "moderator_prepared", ...) is ...:
            connection.moderator_prepared = {}
        return connection

    def prepared(self, sql: str) -> tuple[list[str], str]:
        """``sql`` prepared on this connection's server session: the statements to send in
        front of it (its PREPARE the first time and once it is PREPARED_SECONDS old, with a
        DEALLOCATE then; nothing in between) and the EXECUTE to send,
        with %s placeholders for ``sql``'s values. Sending them is the caller's, in the
        query that carries the EXECUTE, right after this call: the statement is noted as
        prepared now (a query that fails makes the session's statements unknown: Cursor).

        PostgreSQL parses a prepared statement once, and after five runs keeps one plan for
        every value if it costs no more than planning each time (plan_cache_mode auto):
        the order's two reads took it 520 us with BEGIN and COMMIT, 310 prepared. That
        plan was made for the tables as they were: made on nearly empty tables it scans
        them whole as they grow (the growth benchmark's sweep of 10,000 steps went from
        14 to 39 ms a step). So a statement is prepared again PREPARED_SECONDS after it
        was (DEALLOCATE, PREPARE, in the same query): its plan is then at most that old."""
        statement = self._prepared.get(sql)
        if statement is None:
            statement = self._prepared[sql] = prepared(sql)
            self._prepared_names[statement.name] = statement
        self.ensure_connection()
        connection = self.connection
        names: dict[str, float] | None = connection.moderator_prepared
        now = time.monotonic()
        if names is None:
            with self.cursor() as cursor:
                cursor.execute(
                    "SELECT name, extract(epoch FROM statement_timestamp() - prepare_time)"
                    " FROM pg_prepared_statements WHERE starts_with(name, %s)",
                    [PREPARED_PREFIX],
                )
                names = {name: now - float(age) for name, age in cursor.fetchall()}
            connection.moderator_prepared = names
        since = names.get(statement.name)
        if since is not None and now - since < PREPARED_SECONDS:
            return [], statement.execute
        names[statement.name] = now
        if since is None:
            return [statement.prepare], statement.execute
        return [f"DEALLOCATE {statement.name}", statement.prepare], statement.execute

    # --- writes that go with the COMMIT (moderator.db.rows.together(commit=True)) -----

    def commit_with(self, held: Any) -> None:
        """Hold ``held`` (a rows.together() block's writes, the transaction's last) until
        the COMMIT, which carries them in its query (_commit). A statement run before
        then sends them first; a rollback drops them."""
        if self._held_for_commit is not None:  # not expected: one block hands over once
            self._send_held_for_commit()
        self._held_for_commit = held
        self.execute_wrappers.append(self._held_first)

    def _take_held_for_commit(self) -> Any:
        held, self._held_for_commit = self._held_for_commit, None
        if held is not None:
            self.execute_wrappers.remove(self._held_first)
        return held

    def _send_held_for_commit(self) -> None:
        held = self._take_held_for_commit()
        if held is not None:
            held.send()

    def _held_first(
        self, execute: Any, sql: Any, params: Any, many: bool, context: dict[str, Any]
    ) -> Any:
        self._send_held_for_commit()
        return execute(sql, params, many, context)

    def _commit(self) -> None:
        held = self._take_held_for_commit()
        if held is None:
            super()._commit()  # type: ignore[misc]  # (not in Django's type stubs)
            return
        held.send(commit=True)  # its statements, then COMMIT: one query

    def _rollback(self) -> None:
        self._take_held_for_commit()
        super()._rollback()  # type: ignore[misc]

    def _close(self) -> None:
        self._take_held_for_commit()
        super()._close()  # type: ignore[misc]

    def as_written(self, sql: str) -> str:
        """``sql`` (statements sent in one query, joined by ";\\n") with each EXECUTE of a
        statement this connection prepared replaced by that statement, and each PREPARE
        and DEALLOCATE left out: the SQL that ran, for the query log."""
        parts = []
        for part in sql.split(";\n"):
            if part.startswith(("PREPARE " + PREPARED_PREFIX, "DEALLOCATE " + PREPARED_PREFIX)):
                continue
            if part.startswith("EXECUTE " + PREPARED_PREFIX):
                statement = self._prepared_names.get(part[8:].partition("(")[0])
                if statement is not None:
                    part = statement.sql
            parts.append(part)
        return ";\n".join(parts)

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
