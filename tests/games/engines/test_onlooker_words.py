"""A private event read by anyone but its seat (the replay of a finished game, the GM's
log) never says "your": every event an engine tells a seat in the second person has its
words for an onlooker (``Engine.onlooker_words``), read here from the engines' sources, so a
new one cannot be forgotten."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Any

from django.utils import translation

from games.engines import registry
from games.engines.base import Engine
from games.engines.text import Text

# The words by which an event speaks to the seat it is told to.
ADDRESSED = re.compile(r"\b(you|your|yours)\b", re.IGNORECASE)
FIELD = re.compile(r"%\((\w+)\)")
WORDS = ("_", "ngettext")


def _literals(call: ast.expr) -> list[str] | None:
    """The templates of a ``_`` or ``ngettext`` call (None: not such a call)."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
        return None
    if call.func.id not in WORDS:
        return None
    count = 2 if call.func.id == "ngettext" else 1
    return [
        arg.value
        for arg in call.args[:count]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
    ]


def private_events(source: str) -> tuple[set[str], list[int]]:
    """The templates of the private events (``Event(text, to=...)``) in ``source``, and the
    lines of those whose template cannot be read: their text made by a ``_`` or
    ``ngettext`` call in place, or by such a call assigned to the name it passes in the same
    function."""
    templates: set[str] = set()
    unread: list[int] = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, ast.FunctionDef):
            continue
        assigned: dict[str, list[ast.expr]] = {}
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(node.value)
        for node in ast.walk(function):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "Event"
                and any(keyword.arg == "to" for keyword in node.keywords)
            ):
                continue
            text = (
                node.args[0]
                if node.args
                else next(k.value for k in node.keywords if k.arg == "text")
            )
            made = assigned.get(text.id, []) if isinstance(text, ast.Name) else [text]
            found = [literals for value in made if (literals := _literals(value))]
            if not found or len(found) < len(made):
                unread.append(node.lineno)
                continue
            templates.update(template for literals in found for template in literals)
    return templates, sorted(set(unread))


def engine_sources(engine: Engine[Any, Any, Any]) -> str:
    """Every module of the engine's game folder, as one source."""
    folder = Path(str(sys.modules[type(engine).__module__].__file__)).parent
    return "\n".join(path.read_text() for path in sorted(folder.glob("*.py")))


def test_every_private_event_told_in_the_second_person_has_words_for_an_onlooker() -> None:
    told: dict[str, set[str]] = {}
    for key, engine in registry.ENGINES.items():
        templates, unread = private_events(engine_sources(engine))
        assert unread == [], f"{key}: private events whose template the test cannot read"
        addressed = {template for template in templates if ADDRESSED.search(template)}
        assert addressed == set(engine.onlooker_words), key
        told[key] = addressed
    assert {key: len(templates) for key, templates in told.items()} == {
        "choice": 0,
        "dice-survivor": 0,
        "drop-shy": 0,
        "liars-dice": 7,
        "first-player": 5,
    }
    assert "round %(round)d: your dice are %(dice)s" in told["liars-dice"]
    assert "round %(round)d token window: your order is %(order)s" in told["first-player"]


def test_the_scan_finds_an_event_told_in_the_second_person_and_one_it_cannot_read() -> None:
    source = """
def submit(state, seat):
    if state.fine:
        said = _("oracle: your claim %(bid)s is true", bid=1)
    else:
        said = _("oracle: your claim %(bid)s is false", bid=1)
    events = [Event(said, to=(seat,)), Event(_("%(name)s bids", name="ann"))]
    events.append(Event(ngettext("you roll %(count)d die", "you roll %(count)d dice", 2), to=me))
    events.append(Event(self._text(state), to=(seat,)))
    return events
"""
    assert private_events(source) == (
        {
            "oracle: your claim %(bid)s is true",
            "oracle: your claim %(bid)s is false",
            "you roll %(count)d die",
            "you roll %(count)d dice",
        },
        [9],
    )


def test_an_onlookers_words_keep_the_arguments_name_the_seat_and_are_in_german() -> None:
    for key, engine in registry.ENGINES.items():
        for second, third in engine.onlooker_words.items():
            assert ADDRESSED.search(third) is None, (key, third)
            assert set(FIELD.findall(third)) == {*FIELD.findall(second), "player"}, third
            # Marked with ``_``, so in the game's catalogue.
            assert isinstance(third, Text) and third.template == third, third
            with translation.override("de"):
                german = translation.gettext(third)
            assert german != third, f"{key}: no German for {third!r}"
            assert set(FIELD.findall(german)) == set(FIELD.findall(third)), german
