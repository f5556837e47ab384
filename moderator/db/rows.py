"""Writing rows without the cost of bulk_create and save(), and in one round trip.

A step appends records by the dozen: a row per die drawn, per event, per NMR default,
per link, per report. ``bulk_create`` builds a model instance per row and compiles every
field of every instance into the statement: 1.6-2.1 ms of Python for a step's 10 dice
and 16 events, where writing the same INSERT takes 0.6 ms (bench/changes.md).

``insert_rows`` writes the INSERT from plain values: every field of the model but its
automatic key, in the order given, each value as the model would hold it.
``insert_models`` writes model instances already built (an outbox row), with their
fields' ``pre_save`` as bulk_create applies it, and gives each its new key. Values go
through their field where the field does more than pass them on (JSON, dates and times,
text: a TextChoices member is written as its value). ``update_fields`` is
``save(update_fields=...)`` as one UPDATE by key, ``update_where`` a queryset's update().

``together()`` holds these writes inside a transaction and sends them as one query of
several statements (a step's nine writes were nine round trips), before any other
statement runs on the connection, so that reads see them; ``together(commit=True)``, for
a transaction's last writes, sends them with its COMMIT. Where the engine prepares
statements (moderator.db.postgresql), a write of one row (an order, an UPDATE by key) is
sent as the EXECUTE of a statement prepared on the server session: PostgreSQL parses and
plans it once per session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, cast

from django.db import DatabaseError, connections, models, router
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models.sql import UpdateQuery
from django.db.transaction import TransactionManagementError

# Fields whose values the database driver takes as the model holds them.
_AS_THEY_ARE = (models.AutoField, models.BigAutoField, models.ForeignKey, models.IntegerField)


def insert_rows(
    model: type[models.Model], fields: Sequence[str], rows: Iterable[Sequence[Any]]
) -> int:
    """INSERT ``rows`` into ``model``'s table, one statement per batch the database allows;
    ``fields`` names every concrete field but the automatic primary key (a foreign key by
    its name, its value the related row's key). Returns the number of rows written."""
    meta = model._meta
    given = [meta.get_field(name) for name in fields]
    expected = _fields(model)
    if [field.name for field in given] != [name for name in fields] or set(given) != set(expected):
        names = sorted(field.name for field in expected)
        raise ValueError(f"insert_rows({meta.label}) needs exactly {names}, each once")
    listed = [tuple(row) for row in rows]
    _insert(model, given, listed, None)  # type: ignore[arg-type]
    return len(listed)


def insert_models(objects: Sequence[models.Model]) -> None:
    """INSERT ``objects`` (new instances of one model) as bulk_create does, for models
    without signals or multi-table inheritance, and set each one's primary key."""
    if not objects:
        return
    model = type(objects[0])
    using = router.db_for_write(model)
    if not connections[using].features.can_return_rows_from_bulk_insert:
        model._default_manager.bulk_create(objects)  # an SQLite before 3.35: no RETURNING
        return
    fields = _fields(model)
    rows = [tuple(field.pre_save(obj, True) for field in fields) for obj in objects]

    def written(keys: list[Any]) -> None:
        for obj, key in zip(objects, keys, strict=True):
            obj.pk = key
            obj._state.adding = False
            obj._state.db = using

    _insert(model, fields, rows, written)


def update_fields(obj: models.Model, names: Sequence[str]) -> None:
    """``obj.save(update_fields=names)`` for a model without signals: one UPDATE by the
    primary key, its values through their fields as save() writes them, without
    compiling a query. DatabaseError if no row has the key, as save() raises then."""
    model = type(obj)
    meta = model._meta
    fields = [meta.get_field(name) for name in names]
    if not fields or any(not field.concrete or field.primary_key for field in fields):
        raise ValueError(f"update_fields({meta.label}) takes concrete fields but the key")
    connection = connections[router.db_for_write(model)]
    quote = connection.ops.quote_name
    values = [
        field.get_db_prep_save(field.pre_save(obj, False), connection)  # type: ignore[union-attr]
        for field in fields
    ]
    sets = ", ".join(f"{quote(str(field.column))} = %s" for field in fields)  # type: ignore[union-attr]
    key = meta.pk.column if meta.pk is not None else "id"

    update = f"UPDATE {quote(meta.db_table)} SET {sets} WHERE {quote(str(key))} = %s"
    if sends_together(connection):
        # The check made by the server: the statement fails when no row has the key, so
        # that a COMMIT sent after it in the same query (together(commit=True)) does not
        # run. (The text is cast to a number only when the count is 0; the count in it
        # keeps PostgreSQL from casting it while planning.)
        _send(connection, _CHECKED_UPDATE % update, [*values, obj.pk], None, prepare=True)
        return

    def updated(rows: list[tuple[Any, ...]], count: int) -> None:
        if count == 0:
            raise DatabaseError(_NO_ROW)

    _send(connection, update, [*values, obj.pk], updated)


_NO_ROW = "Save with update_fields did not affect any rows."
_CHECKED_UPDATE = (
    "WITH updated AS (%s RETURNING 1) SELECT CASE count(*) WHEN 0 THEN"
    f" ('{_NO_ROW} (' || count(*) || ')')::integer END FROM updated"
)


def update_where(queryset: models.QuerySet[Any], **values: Any) -> None:
    """``queryset.update(**values)`` as a write that together() holds like the others
    (the ORM writes the UPDATE; its row count is not returned). For a model's own fields:
    an update that would touch a parent model's table is refused."""
    query = cast(UpdateQuery, queryset.query.chain(UpdateQuery))
    query.add_update_values(values)
    if query.get_related_updates():
        raise ValueError("update_where() updates one table: use QuerySet.update()")
    query.clear_select_clause()
    connection = connections[router.db_for_write(queryset.model)]
    compiler = query.get_compiler(connection=connection)
    compiler.pre_sql_setup()
    sql, params = compiler.as_sql()
    if sql:
        _send(connection, sql, list(params), None)


def _fields(model: type[models.Model]) -> list[models.Field[Any, Any]]:
    return [field for field in model._meta.concrete_fields if not field.primary_key]


def _insert(
    model: type[models.Model],
    fields: list[models.Field[Any, Any]],
    rows: list[tuple[Any, ...]],
    written: Callable[[list[Any]], None] | None,
) -> None:
    """INSERT ``rows``; ``written`` (if given) gets the new keys, in the rows' order."""
    if not rows:
        if written is not None:
            written([])
        return
    connection = connections[router.db_for_write(model)]
    adapt: list[Any] = [None if isinstance(field, _AS_THEY_ARE) else field for field in fields]
    rows = [
        tuple(
            value if field is None else field.get_db_prep_save(value, connection)
            for field, value in zip(adapt, row, strict=True)
        )
        for row in rows
    ]
    meta = model._meta
    quote = connection.ops.quote_name
    columns = ", ".join(quote(str(field.column)) for field in fields)
    one = f"({', '.join(['%s'] * len(fields))})"
    key = meta.pk.column if meta.pk is not None else "id"
    tail = f" RETURNING {quote(str(key))}" if written is not None else ""
    batch = connection.ops.bulk_batch_size(fields, rows) or len(rows)
    chunks = [rows[start : start + batch] for start in range(0, len(rows), batch)]
    keys: list[Any] = []

    def chunk_written(returned: list[tuple[Any, ...]], count: int) -> None:
        keys.extend(key for (key,) in returned)
        if written is not None and len(keys) == len(rows):
            written(keys)

    for chunk in chunks:
        _send(
            connection,
            f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES "
            + ", ".join([one] * len(chunk))
            + tail,
            [value for row in chunk for value in row],
            chunk_written if written is not None else None,
            returns_rows=written is not None,
            prepare=len(chunk) == 1,  # one statement whatever the values
        )


# --- writes sent together ------------------------------------------------------------------


@dataclass
class _Statement:
    sql: str
    params: list[Any]
    # Called with the rows it returned (if returns_rows) and its row count.
    done: Callable[[list[tuple[Any, ...]], int], None] | None
    returns_rows: bool
    # Of one shape whatever its values (one row): prepared where the engine prepares.
    prepare: bool = False


class _Together:
    def __init__(self, connection: BaseDatabaseWrapper) -> None:
        self.connection = connection
        self.statements: list[_Statement] = []
        self.sending = False

    def send(self, *, commit: bool = False) -> None:
        """Every statement held, in one round trip, in the order they were written; with
        the transaction's COMMIT after them if ``commit``."""
        statements, self.statements = self.statements, []
        if not statements and not commit:
            return
        self.sending = True
        try:
            _execute(self.connection, statements, commit=commit)
        finally:
            self.sending = False

    def before_any_other_statement(
        self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any
    ) -> Any:
        if self.statements and not self.sending:
            self.send()
        return execute(sql, params, many, context)


_together: ContextVar[_Together | None] = ContextVar("rows_together", default=None)


@contextmanager
def together(using: str = "default", *, commit: bool = False) -> Iterator[None]:
    """Send the writes of insert_rows, insert_models, update_fields and update_where made
    inside the block to the database together: held until the block ends or any other
    statement is about to run on the connection (a read then sees them, as it would
    have), then sent in one round trip, one statement after another. Keys and row-count
    checks arrive then: an instance from insert_models has its key after the block, or
    after the next statement. Inside a transaction only (``transaction.atomic``): an
    exception in the block drops what it holds, and the transaction is to roll back as it
    leaves.

    ``commit=True``: the block's writes are the transaction's last. Where the engine can
    (moderator.db.postgresql) and the block is in the outermost ``atomic`` (no savepoint
    to release first), they are held past the block and go with the COMMIT, in the same
    query: one round trip fewer. Keys arrive then, before the commit's on_commit hooks
    run; a statement run before the commit sends them first, and a rollback drops them.

    A step's resolution writes nine statements in a row; on PostgreSQL with Django's
    client-side parameter binding (several statements in one query) they go as one.
    Elsewhere (SQLite) each is sent as it is written."""
    connection = connections[using]
    if not connection.in_atomic_block:
        raise TransactionManagementError("rows.together() runs inside transaction.atomic()")
    if not sends_together(connection) or _together.get() is not None:
        yield  # nothing held: each statement runs as it is written (or the outer block holds)
        return
    held = _Together(connection)
    token = _together.set(held)
    handed_over = False
    try:
        with connection.execute_wrapper(held.before_any_other_statement):
            yield
        # Django's outermost atomic block is the only one in the list (savepoint or not,
        # an inner one commits nothing).
        last = commit and len(connection.atomic_blocks) == 1 and not connection.needs_rollback
        if last and hasattr(connection, "commit_with") and held.statements:
            connection.commit_with(held)
            handed_over = True
        else:
            held.send()
    finally:
        _together.reset(token)
        if not handed_over:
            held.statements = []


def send_held() -> None:
    """Send what a together() block holds now: before code that needs a held row's key
    without running a statement first (an instance's delete() checks its key)."""
    held = _together.get()
    if held is not None:
        held.send()


def execute_several(
    connection: BaseDatabaseWrapper, statements: Sequence[tuple[str, Sequence[Any], bool]]
) -> list[tuple[list[tuple[Any, ...]], int]]:
    """Run ``statements`` (SQL, parameters, whether to fetch its rows) in order, as one
    query where the driver takes several statements in one (sends_together), else one by
    one; returns each one's rows (if fetched) and row count. In one query each statement
    still runs with its own snapshot (READ COMMITTED), as it would on its own."""
    results: list[tuple[list[tuple[Any, ...]], int]] = []
    with connection.cursor() as cursor:
        if len(statements) > 1 and sends_together(connection):
            cursor.execute(
                ";\n".join(sql for sql, _, _ in statements),
                [param for _, params, _ in statements for param in params],
            )
            several = cursor.cursor  # the driver's cursor: one result per statement
            for number, (_, _, fetch) in enumerate(statements):
                if number:
                    several.nextset()
                results.append((several.fetchall() if fetch else [], several.rowcount))
            return results
        for sql, params, fetch in statements:
            cursor.execute(sql, params)
            results.append((cursor.fetchall() if fetch else [], cursor.rowcount))
    return results


def sends_together(connection: BaseDatabaseWrapper) -> bool:
    """Whether the driver takes several statements with parameters in one query."""
    if connection.vendor != "postgresql":
        return False
    known = getattr(connection, "_sends_together", None)
    if known is None:
        from psycopg import ClientCursor

        with connection.cursor() as cursor:
            known = connection._sends_together = isinstance(cursor.cursor, ClientCursor)  # type: ignore[attr-defined]
    return bool(known)


def _send(
    connection: BaseDatabaseWrapper,
    sql: str,
    params: list[Any],
    done: Callable[[list[tuple[Any, ...]], int], None] | None,
    *,
    returns_rows: bool = False,
    prepare: bool = False,
) -> None:
    held = _together.get()
    statement = _Statement(sql, params, done, returns_rows, prepare)
    if held is not None and held.connection is connection:
        held.statements.append(statement)
        return
    _execute(connection, [statement])


def _execute(
    connection: BaseDatabaseWrapper, statements: list[_Statement], *, commit: bool = False
) -> None:
    """Run ``statements`` in one query (execute_prepared), then hand each its result."""
    results = execute_prepared(
        connection,
        [(s.sql, s.params, s.returns_rows, s.prepare) for s in statements],
        commit=commit,
    )
    for statement, result in zip(statements, results, strict=True):
        if statement.done is not None:
            statement.done(*result)


def execute_prepared(
    connection: BaseDatabaseWrapper,
    statements: Sequence[tuple[str, Sequence[Any], bool, bool]],
    *,
    commit: bool = False,
) -> list[tuple[list[tuple[Any, ...]], int]]:
    """execute_several for ``statements`` (SQL, parameters, whether to fetch its rows,
    whether it may be prepared): one that may is sent as the EXECUTE of a statement
    prepared on the server session where the engine prepares them
    (moderator.db.postgresql), its PREPARE (and DEALLOCATE, once its plan is a minute
    old) in front of it, in the same query. ``commit``: the transaction's COMMIT goes
    last. Returns each statement's rows and row count."""
    prepared = None
    if getattr(connection, "prepares_statements", False) and sends_together(connection):
        prepared = connection.prepared  # type: ignore[attr-defined]
    sent: list[tuple[str, Sequence[Any], bool]] = []
    answers: list[int] = []  # each statement's place among those sent
    for sql, params, fetch, prepare in statements:
        if prepared is not None and prepare:
            before, sql = prepared(sql)
            sent.extend((other, [], False) for other in before)
        answers.append(len(sent))
        sent.append((sql, params, fetch))
    if commit:
        sent.append(("COMMIT", [], False))
    results = execute_several(connection, sent)
    return [results[answer] for answer in answers]
