from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from games.models import Game
from games.records import archive


class Command(BaseCommand):
    help = "Write a game from the database as a record that `replay` reproduces."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("game", type=int, help="the game's id")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            game = Game.objects.get(pk=options["game"])
        except Game.DoesNotExist:
            raise CommandError(f"there is no game {options['game']}") from None
        if game.state is None:
            raise CommandError(f"game {game.pk} has not started; there is nothing to export")
        self.stdout.write(json.dumps(archive.export(game), indent=2))
