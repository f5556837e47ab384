"""Where Django finds a game's templates: in the game's own folder.

A game's templates are named ``games/<key>/<name>`` wherever they are used (reports, pages,
forms); this loader reads ``<name>`` from the ``templates/`` folder beside the module of the
game's engine, so a game's board, private part, order form and syntax help live with its
rules (docs/adding-a-game.md). Any other name is left to the next loader.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path

from django.template import Origin
from django.template.loaders.filesystem import Loader as FilesystemLoader

from games.engines import registry


def folder_of(key: str) -> Path | None:
    """The templates folder of game ``key``; None when no game has that key."""
    engine = registry.ENGINES.get(key)
    if engine is None:
        return None
    return Path(inspect.getfile(type(engine))).parent / "templates"


class GameLoader(FilesystemLoader):
    def get_template_sources(self, template_name: str) -> Iterator[Origin]:
        top, _, rest = template_name.partition("/")
        key, _, name = rest.partition("/")
        folder = folder_of(key) if top == "games" and name else None
        if folder is None:
            return
        path = (folder / name).resolve()
        if not path.is_relative_to(folder.resolve()):
            return  # a name that climbs out of the game's folder finds nothing
        yield Origin(name=str(path), template_name=template_name, loader=self)
