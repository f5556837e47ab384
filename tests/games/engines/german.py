"""What the German tests of an engine check alike: its words said in German through its
catalogue (games/engines/<game>/locale), and no template of it left in English."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from django.utils import translation

from games.engines.text import Text
from games.lib.words import said

# A template as found: (singular, plural), the plural None for a ``_()`` template.
Template = tuple[str, str | None]


def german(text: Any) -> str:
    """``text`` (an engine's words) as a reader whose language is German sees it."""
    with translation.override("de"):
        return said(text)


def templates(value: Any) -> Iterator[Template]:
    """Every template in a Text's structure, its arguments and joined parts included."""
    if isinstance(value, Text):
        value = value.data()
    if not isinstance(value, dict):
        return
    if "t" in value:
        yield value["t"], value.get("p")
    for item in [*value.get("a", {}).values(), value.get("j"), *value.get("i", [])]:
        yield from templates(item)


def untranslated(found: Iterable[Template]) -> list[str]:
    """The templates of ``found`` that German says as the English (singular or plural)."""
    with translation.override("de"):
        return sorted(
            singular
            for singular, plural in set(found)
            if (
                translation.gettext(singular) == singular
                if plural is None
                else translation.ngettext(singular, plural, 1) == singular
                or translation.ngettext(singular, plural, 2) == plural
            )
        )


def source_templates(home: Path) -> set[Template]:
    """The templates of every ``_()`` and ``ngettext()`` call in the modules of ``home``."""
    found: set[Template] = set()
    for path in sorted(home.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            literals = [
                arg.value
                for arg in node.args
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
            ]
            if node.func.id == "_":
                found.add((literals[0], None))
            elif node.func.id == "ngettext":
                found.add((literals[0], literals[1]))
    return found
