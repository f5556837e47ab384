"""Appending rows without model instances.

A step appends records by the dozen: a row per die drawn, per event, per NMR default,
per link. ``bulk_create`` builds a model instance per row and prepares every field of
every instance: 1.6-2.1 ms of Python for a step's 10 dice and 16 events, where writing
the same INSERT takes 0.6 ms (bench/changes.md). ``insert_rows`` writes the INSERT from
plain values: every field of the model but its automatic key, in the order given, each
value as the model would hold it (adapted for the database by its field where the field
does more than pass it on: JSON, dates and times).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connections, models, router

# Fields whose values the database driver takes as the model holds them (text goes
# through its field: a TextChoices member is written as its value, as Django does).
_AS_THEY_ARE = (models.AutoField, models.BigAutoField, models.ForeignKey, models.IntegerField)


def insert_rows(
    model: type[models.Model], fields: Sequence[str], rows: Iterable[Sequence[Any]]
) -> int:
    """INSERT ``rows`` into ``model``'s table, one statement per batch the database allows;
    ``fields`` names every concrete field but the automatic primary key (a foreign key by
    its name, its value the related row's key). Returns the number of rows written."""
    meta = model._meta
    given = [meta.get_field(name) for name in fields]
    expected = {field.name for field in meta.concrete_fields if not field.primary_key}
    if {field.name for field in given} != expected or len(given) != len(expected):
        missing = sorted(expected - {field.name for field in given})
        raise ValueError(f"insert_rows({meta.label}) needs exactly {sorted(expected)}: {missing}")
    rows = [tuple(row) for row in rows]
    if not rows:
        return 0
    connection = connections[router.db_for_write(model)]
    adapt: list[Any] = [None if isinstance(field, _AS_THEY_ARE) else field for field in given]
    if any(adapt):
        rows = [
            tuple(
                value if field is None else field.get_db_prep_save(value, connection)
                for field, value in zip(adapt, row, strict=True)
            )
            for row in rows
        ]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(str(field.column)) for field in given)  # type: ignore[union-attr]
    one = f"({', '.join(['%s'] * len(given))})"
    batch = connection.ops.bulk_batch_size(given, rows) or len(rows)
    with connection.cursor() as cursor:
        for start in range(0, len(rows), batch):
            chunk = rows[start : start + batch]
            cursor.execute(
                f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES "
                + ", ".join([one] * len(chunk)),
                [value for row in chunk for value in row],
            )
    return len(rows)
