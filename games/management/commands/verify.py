from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from games.models import Game
from games.records import archive


class Command(BaseCommand):
    help = (
        "Recompute every dice roll of a finished game from its revealed seed, check the "
        "commitment, and replay its orders; exit 1 on any mismatch."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("game", type=int, help="the game's id")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            game = Game.objects.get(pk=options["game"])
        except Game.DoesNotExist:
            raise CommandError(f"there is no game {options['game']}") from None
        verdict = archive.verify(game)
        if not verdict.ok:
            raise CommandError(
                f"game {game.pk} FAILED verification:\n  " + "\n  ".join(verdict.problems)
            )
        self.stdout.write(
            f"game {game.pk} verified: {verdict.rolls} rolls match the seed, the seed matches "
            f"the commitment {game.commitment}, and the orders replay to the stored result"
        )
        if verdict.entered:
            self.stdout.write(
                f"its first {verdict.entered} rolls were entered by the GM from the paper "
                "record the game continued from: rolled by hand, they cannot be checked"
            )
