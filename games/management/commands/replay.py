from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from games import records


class Command(BaseCommand):
    help = (
        "Replay a game record (docs/records.md) through the engines, without the database, "
        "and print the result as JSON. Exit 2: an illegal move; exit 3: a broken record."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the record's path, or - for standard input")

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["file"]
        try:
            if path == "-":
                text = sys.stdin.read()
            else:
                with open(path, encoding="utf-8") as handle:
                    text = handle.read()
        except OSError as error:
            raise CommandError(f"cannot read {path}: {error.strerror}", returncode=3) from None
        try:
            record = json.loads(text)
        except json.JSONDecodeError as error:
            raise CommandError(
                f"broken record: not JSON ({error.msg} at line {error.lineno})", returncode=3
            ) from None
        try:
            result = records.play(record)
        except records.RecordError as error:
            raise CommandError(error.message, returncode=error.status) from None
        self.stdout.write(json.dumps(result, indent=2))
