"""Lists go to PostgreSQL as binary arrays.

Django's bulk_create on PostgreSQL sends each column as one array parameter (``INSERT ...
SELECT * FROM UNNEST(...)``). psycopg dumps a list as a text array unless told otherwise,
escaping each quote and backslash of each element with a regular expression in Python:
for the reports a step writes to the outbox, whose HTML is full of quotes, that was most
of the step's cost of writing them. A binary array carries each element as it is.
Binary parameters need server-side binding (``OPTIONS["server_side_binding"]``): a
query bound on the client is text throughout.
"""

from __future__ import annotations

from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper
from psycopg.types.array import ListBinaryDumper


def binary_arrays(sender: Any, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    """A ``connection_created`` receiver: lists are dumped as binary arrays on a new
    PostgreSQL connection that binds its parameters on the server."""
    if connection.vendor != "postgresql":
        return
    if connection.settings_dict["OPTIONS"].get("server_side_binding") is True:
        connection.connection.adapters.register_dumper(list, ListBinaryDumper)
