"""DATABASES ENGINE ``moderator.db.postgresql``: Django's PostgreSQL backend in every
respect but the SQL compiler module (moderator.db.postgresql.compiler)."""

from __future__ import annotations

from django.db.backends.postgresql import base, operations


class DatabaseOperations(operations.DatabaseOperations):
    compiler_module = "moderator.db.postgresql.compiler"


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
