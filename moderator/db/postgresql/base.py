"""DATABASES ENGINE ``moderator.db.postgresql``: Django's PostgreSQL backend in every
respect but the SQL compiler module (moderator.db.postgresql.compiler), and psycopg's
cache of parsed queries made to hold long ones (below)."""

from __future__ import annotations

from django.db.backends.postgresql import base, operations
from psycopg import _queries


class DatabaseOperations(operations.DatabaseOperations):
    compiler_module = "moderator.db.postgresql.compiler"


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations


# psycopg parses a query's placeholders with a regular expression in Python and keeps the
# result only for queries of at most 4096 bytes and 50 parameters; a step's writes sent
# together (moderator.db.rows.together) are one query of about 400 parameters and the same
# text step after step. Parsing it took about a millisecond of the worker's CPU per step.
# The lru_cache keeps at most 128 queries.
if not hasattr(_queries, "MAX_CACHED_STATEMENT_LENGTH") or not hasattr(
    _queries, "MAX_CACHED_STATEMENT_PARAMS"
):
    raise ImportError("psycopg._queries changed: see moderator/db/postgresql/base.py")
_queries.MAX_CACHED_STATEMENT_LENGTH = 64 * 1024
_queries.MAX_CACHED_STATEMENT_PARAMS = 4096
