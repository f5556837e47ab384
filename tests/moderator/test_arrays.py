"""Lists go to PostgreSQL as binary arrays (moderator/db/arrays.py)."""

from __future__ import annotations

import pytest
from django.db import connection
from psycopg.adapt import PyFormat
from psycopg.types.array import ListBinaryDumper

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def test_a_list_parameter_is_dumped_as_a_binary_array() -> None:
    connection.ensure_connection()
    assert connection.connection.adapters.get_dumper(list, PyFormat.AUTO) is ListBinaryDumper


def test_a_binary_array_keeps_every_element_as_it_is() -> None:
    elements = ['He said "no" \\ {a,b}', None, "", "⚂ ⚀\nline two"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::text[], 1 = ANY(%s), 1 = ANY(%s)", [elements, [], [2, 1]])
        assert cursor.fetchone() == (elements, False, True)
