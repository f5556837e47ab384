"""Drop-Shy conditional orders (rules/drop-shy.md, docs/orders.md): while it is not your
turn, name the cells you want for the die you will play, best first, in case the others
take them or make them illegal first:

    if 2 1 is free: place 2 1; else: place 0 -1 or 3 3

Played on your next turn: the first of the cells (of the ``if`` part, when its cell is still
free, else of the ``else`` part) where the rules let your die go then. Written for the die
at the front of your line (this game plays the front die: ``strict_queue``); disarmed, and
you told, when none of its cells is legal then, or when that die is no longer the one you
play. Pure: it reads the state alone, like the rules.
"""

from __future__ import annotations

import re
from typing import Any

from games.engines.base import JSON, Conditions, OrderError, Verdict
from games.engines.drop_shy.rules import DropShyState, cell_text, cells, legal_cells
from games.engines.text import _, join

SYNTAX = "place <x> <y> [or <x> <y> ...]; or: if <x> <y> is free: place ...; else: place ..."

_NUMBER = r"([+-]?\d{1,4})"
_CELL = rf"\(?\s*{_NUMBER}\s*,?\s*{_NUMBER}(?:\s*\))?"
_IF = re.compile(rf"^if\s+{_CELL}\s+is\s+free\s*[:,]?\s*(.*)$")
_ELSE = re.compile(r"^(?:else|otherwise)\s*[:,]?\s*(.*)$")
_PLACE = re.compile(rf"^place\s+{_CELL}((?:\s+or\s+{_CELL})*)$")
_MORE = re.compile(rf"\s+or\s+{_CELL}")
MOST_CELLS = 8


def _cells(text: str, where: str) -> list[list[int]]:
    found = _PLACE.match(text.strip())
    if found is None:
        raise OrderError(
            _(
                "%(where)s: write place x y, or place x y or x y, e.g. place 1 0 or -1 0",
                where=where,
            )
        )
    listed = [[int(found[1]), int(found[2])]]
    listed += [[int(x), int(y)] for x, y in _MORE.findall(found[3])]
    if len(listed) > MOST_CELLS:
        raise OrderError(_("%(where)s: name at most %(most)d cells", where=where, most=MOST_CELLS))
    return listed


def parse(state: DropShyState, seat: int, text: str) -> JSON:
    """A conditional order of ``seat`` read and checked now; OrderError says why not."""
    if state.options.two_candidate:
        raise OrderError(_("conditional orders are for games that play the front die of each line"))
    if state.current is None:
        raise OrderError(_("the game is over; no order is expected from you"))
    if not state.lines[seat]:
        raise OrderError(_("you have placed every die; no order is expected from you"))
    if state.current == seat:
        raise OrderError(_("it is your turn now: send your order itself"))
    parts = [part.strip() for part in re.split(r"[;\n]", text.lower()) if part.strip()]
    if not parts or len(parts) > 2:
        raise OrderError(_("write it as: %(syntax)s", syntax=SYNTAX))
    data: dict[str, Any] = {
        "die": state.lines[seat][0].face,
        "left": len(state.lines[seat]),
        "free": None,
        "then": [],
        "else": [],
    }
    condition = _IF.match(parts[0])
    if condition is None:
        if len(parts) > 1:
            raise OrderError(_("write it as: %(syntax)s", syntax=SYNTAX))
        data["then"] = _cells(parts[0], "place")
        return data
    data["free"] = [int(condition[1]), int(condition[2])]
    data["then"] = _cells(condition[3], "then")
    if len(parts) == 2:
        other = _ELSE.match(parts[1])
        if other is None:
            raise OrderError(_("the second part starts with else: %(syntax)s", syntax=SYNTAX))
        data["else"] = _cells(other[1], "else")
    return data


def _said(listed: list[list[int]]) -> str:
    return "place " + " or ".join(f"{x} {y}" for x, y in listed)


def words(data: Any) -> str:
    if data["free"] is None:
        return _said(data["then"])
    x, y = data["free"]
    said = f"if {x} {y} is free: {_said(data['then'])}"
    if data["else"]:
        said += f"; else: {_said(data['else'])}"
    return said


def play(state: DropShyState, seat: int, data: Any) -> Verdict:
    """What the conditional order of ``seat`` does now."""
    if state.current is None:
        return Verdict("disarm", reason=_("the game is over"))
    line = state.lines[seat]
    if not line or len(line) != data["left"] or line[0].face != data["die"]:
        return Verdict(
            "disarm", reason=_("the die it was written for is no longer the one you play")
        )
    if state.current != seat:
        return Verdict("wait")
    grid = cells(state.board)
    listed = data["then"]
    if data["free"] is not None and tuple(data["free"]) in grid:
        listed = data["else"]
    legal = set(legal_cells(grid, data["die"]))
    for x, y in listed:
        if (x, y) in legal:
            return Verdict("play", order=f"place {x} {y}")
    if not listed:
        return Verdict(
            "disarm",
            reason=_(
                "%(cell)s was taken, and it said nothing else", cell=cell_text(tuple(data["free"]))
            ),
        )
    return Verdict(
        "disarm",
        reason=_(
            "none of its cells is legal for your %(face)d now: %(cells)s",
            face=data["die"],
            cells=join([cell_text((x, y)) for x, y in listed]),
        ),
    )


CONDITIONS = Conditions(
    parse=parse,
    words=words,
    play=play,
    syntax=SYNTAX,
    example="place 1 0 or 0 1",
    hint=_(
        "The first of these cells where the rules let your die go when your turn comes; if "
        "none, you play your turn yourself."
    ),
)
