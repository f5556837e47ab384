"""The columns every step writes are compressed with lz4 on PostgreSQL (moderator.db)."""

from __future__ import annotations

import pytest
from django.db import connection

from moderator.db.compression import lz4_available
from moderator.mail.models import OutboundEmail

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

LZ4_COLUMNS = {
    ("mail_outboundemail", "text"),
    ("mail_outboundemail", "html"),
    ("mail_outboundemail", "headers"),
    ("games_game", "state"),
    ("games_step", "prompts"),
    ("games_step", "state_before"),
    ("games_step", "state_after"),
}


def compressions() -> dict[tuple[str, str], str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, a.attname, a.attcompression FROM pg_attribute a "
            "JOIN pg_class c ON c.oid = a.attrelid "
            "WHERE c.relname IN ('mail_outboundemail', 'games_game', 'games_step') "
            "AND a.attnum > 0 AND NOT a.attisdropped"
        )
        return {(table, column): method for table, column, method in cursor.fetchall()}


def test_the_large_columns_are_lz4_and_the_others_the_default() -> None:
    assert lz4_available(connection)
    methods = compressions()
    assert {key for key, method in methods.items() if method == "l"} == LZ4_COLUMNS
    assert {methods[key] for key in set(methods) - LZ4_COLUMNS} == {""}


def test_a_report_written_to_an_lz4_column_is_stored_compressed_and_reads_back_whole() -> None:
    text = "".join(f"line {n}: the board as it stands\n" for n in range(2000))
    row = OutboundEmail.objects.create(
        dedupe_key="lz4:1", kind="report", to="ann@example.org", subject="s", text=text
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_column_compression(text), pg_column_size(text) "
            "FROM mail_outboundemail WHERE id = %s",
            [row.pk],
        )
        method, size = cursor.fetchone()
    assert method == "lz4"
    assert size < len(text) // 4
    assert OutboundEmail.objects.get(pk=row.pk).text == text
