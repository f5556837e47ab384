"""Appending rows without the cost of bulk_create.

A step appends records by the dozen: a row per die drawn, per event, per NMR default,
per link, per report. ``bulk_create`` builds a model instance per row and compiles every
field of every instance into the statement: 1.6-2.1 ms of Python for a step's 10 dice
and 16 events, where writing the same INSERT takes 0.6 ms (bench/changes.md).

``insert_rows`` writes the INSERT from plain values: every field of the model but its
automatic key, in the order given, each value as the model would hold it.
``insert_models`` writes model instances already built (an outbox row), with their
fields' ``pre_save`` as bulk_create applies it, and gives each its new key. Values go
through their field where the field does more than pass them on (JSON, dates and times,
text: a TextChoices member is written as its value).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import DatabaseError, connections, models, router

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
    _insert(model, given, listed, returning=False)  # type: ignore[arg-type]
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
    keys = _insert(model, fields, rows, returning=True)
    for obj, key in zip(objects, keys, strict=True):
        obj.pk = key
        obj._state.adding = False
        obj._state.db = using


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
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {quote(meta.db_table)} SET {sets} WHERE {quote(str(key))} = %s",
            [*values, obj.pk],
        )
        if cursor.rowcount == 0:
            raise DatabaseError("Save with update_fields did not affect any rows.")


def _fields(model: type[models.Model]) -> list[models.Field[Any, Any]]:
    return [field for field in model._meta.concrete_fields if not field.primary_key]


def _insert(
    model: type[models.Model],
    fields: list[models.Field[Any, Any]],
    rows: list[tuple[Any, ...]],
    *,
    returning: bool,
) -> list[Any]:
    if not rows:
        return []
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
    tail = f" RETURNING {quote(str(key))}" if returning else ""
    batch = connection.ops.bulk_batch_size(fields, rows) or len(rows)
    keys: list[Any] = []
    with connection.cursor() as cursor:
        for start in range(0, len(rows), batch):
            chunk = rows[start : start + batch]
            cursor.execute(
                f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES "
                + ", ".join([one] * len(chunk))
                + tail,
                [value for row in chunk for value in row],
            )
            if returning:
                keys.extend(key for (key,) in cursor.fetchall())
    return keys
