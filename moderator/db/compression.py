"""lz4 for the large text columns that every step writes (reports, game states).

PostgreSQL compresses a value over about 2 kB (TOAST) with pglz unless a column says
otherwise; lz4 compresses them at a fraction of pglz's CPU (bench/changes.md has the
figures). Values written before keep their compression; both read back alike. On SQLite,
and on a PostgreSQL built without lz4, nothing changes.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations


def lz4_available(connection: Any) -> bool:
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'"
        )
        row = cursor.fetchone()
    return bool(row and row[0])


def lz4_columns(app_label: str, columns: dict[str, list[str]]) -> migrations.RunPython:
    """A migration operation setting the compression of ``columns`` ({model name: field
    names} of ``app_label``) to lz4; reversed, back to the server's default."""

    def alter(apps: Any, schema_editor: Any, to: str) -> None:
        connection = schema_editor.connection
        if not lz4_available(connection):
            return
        quote = schema_editor.quote_name
        for model_name, fields in columns.items():
            model = apps.get_model(app_label, model_name)
            for name in fields:
                column = model._meta.get_field(name).column
                schema_editor.execute(
                    f"ALTER TABLE {quote(model._meta.db_table)} "
                    f"ALTER COLUMN {quote(column)} SET COMPRESSION {to}"
                )

    return migrations.RunPython(
        lambda apps, editor: alter(apps, editor, "lz4"),
        lambda apps, editor: alter(apps, editor, "DEFAULT"),
    )
