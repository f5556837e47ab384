from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from games.community import ratings
from games.engines import registry


class Command(BaseCommand):
    help = (
        "Recompute the ratings of a game (or of every game) from its finished rated games, "
        "in finishing order: after a rule change or a fix, the ratings are rebuilt."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--engine", metavar="KEY", help="the game's key (default: every game)")

    def handle(self, *args: Any, **options: Any) -> None:
        key = options["engine"]
        if key is not None and key not in registry.ENGINES:
            known = ", ".join(registry.ENGINES)
            raise CommandError(f"there is no game {key!r}; the games are {known}")
        for engine in [key] if key is not None else list(registry.ENGINES):
            done = ratings.rerate(engine, now=timezone.now())
            self.stdout.write(
                f"{engine}: {done.players} player{'' if done.players == 1 else 's'} rated "
                f"from {done.games} finished rated game{'' if done.games == 1 else 's'}"
            )
