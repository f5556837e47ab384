"""Django's PostgreSQL compilers, but a bulk insert is ``INSERT ... VALUES (...), (...)``.

Django 5.2 bulk-inserts on PostgreSQL as ``SELECT * FROM UNNEST(%s::type[], ...)``, one
array per column, to save the server planning time on inserts of thousands of rows. Ours
are small (a step writes 5-20 rows per table) and psycopg quotes each array in Python, a
regular expression per element: that cost more than it saved. A 5-seat step: 1.2 ms less
Python and 0.5-0.9 ms less PostgreSQL CPU, and the outbox insert of the step's reports
(about 70 kB of text) half as long (bench/changes.md)."""

from __future__ import annotations

from django.db.backends.postgresql.compiler import (
    SQLAggregateCompiler,
    SQLCompiler,
    SQLDeleteCompiler,
    SQLUpdateCompiler,
)
from django.db.backends.postgresql.compiler import SQLInsertCompiler as UnnestInsertCompiler
from django.db.models.sql.compiler import SQLInsertCompiler as ValuesInsertCompiler

__all__ = [
    "SQLAggregateCompiler",
    "SQLCompiler",
    "SQLDeleteCompiler",
    "SQLInsertCompiler",
    "SQLUpdateCompiler",
]


class SQLInsertCompiler(UnnestInsertCompiler):
    assemble_as_sql = ValuesInsertCompiler.assemble_as_sql
