"""Drop-Shy conditional orders (rules/drop-shy.md, docs/orders.md): while it is not your
turn, name the cells you want for the die you will play, best first, in case the others
take them or make them illegal first:

    place 1 0 or 0 1 or -1 0
    if 2 1 is free: place 2 1; else: place 0 -1 or 3 3
    take closest place 1 0 or 0 1            (two-candidate mode)

Played on your next turn: the first of the cells (of the ``if`` part, when its cell is still
free, else of the ``else`` part) where the rules let your die go then. Written for the die
you will play: the front die of your line, or, in two-candidate mode, the candidate a part
takes (both candidates are known: the lines change only on their own turns). Disarmed, and
you told, when none of its cells is legal then, or when your line is no longer the one it
was written for. Pure: it reads the state alone, like the rules.
"""

from __future__ import annotations

import re
from typing import Any

from games.engines.base import JSON, Conditions, OrderError, Verdict
from games.engines.drop_shy.rules import (
    RIGHTMOST,
    TAKES,
    DropShyState,
    candidates,
    cell_text,
    cells,
    legal_cells,
)
from games.engines.text import _, join

SYNTAX = (
    "[take rightmost|closest] place <x> <y> [or <x> <y> ...]; "
    "or: if <x> <y> is free: place ...; else: place ..."
)

_NUMBER = r"([+-]?\d{1,4})"
_CELL = rf"\(?\s*{_NUMBER}\s*,?\s*{_NUMBER}(?:\s*\))?"
_IF = re.compile(rf"^if\s+{_CELL}\s+is\s+free\s*[:,]?\s*(.*)$")
_ELSE = re.compile(r"^(?:else|otherwise)\s*[:,]?\s*(.*)$")
_PLACE = re.compile(rf"^(?:take\s+(\w+)\s+)?place\s+{_CELL}((?:\s+or\s+{_CELL})*)$")
_MORE = re.compile(rf"\s+or\s+{_CELL}")
MOST_CELLS = 8


def _cells(text: str, where: str) -> tuple[str | None, list[list[int]]]:
    """The die a part takes (None: not said) and its cells, best first."""
    found = _PLACE.match(text.strip())
    if found is None:
        raise OrderError(
            _(
                "%(where)s: write place x y, or place x y or x y, e.g. place 1 0 or -1 0",
                where=where,
            )
        )
    if found[1] is not None and found[1] not in TAKES:
        raise OrderError(_("%(where)s: write take rightmost or take closest", where=where))
    listed = [[int(found[2]), int(found[3])]]
    listed += [[int(x), int(y)] for x, y in _MORE.findall(found[4])]
    if len(listed) > MOST_CELLS:
        raise OrderError(_("%(where)s: name at most %(most)d cells", where=where, most=MOST_CELLS))
    return found[1], listed


def _part(state: DropShyState, seat: int, text: str, where: str) -> dict[str, Any]:
    """A part's die (its candidate's name, None where the game plays the front die, and its
    face now) and cells."""
    take, listed = _cells(text, where)
    found = candidates(state.lines[seat], state.options)
    if not state.options.two_candidate:
        if take is not None:
            raise OrderError(
                _(
                    "take is only used in two-candidate mode; this game plays the front die of "
                    "your line, so write place x y"
                )
            )
        return {"take": None, "face": state.lines[seat][0].face, "cells": listed}
    if take is None:
        if len(found) > 1:
            raise OrderError(
                _("choose your die first: take rightmost or take closest, then place x y")
            )
        take = RIGHTMOST
    index = next((index for name, index in found if name == take), found[0][1])
    return {"take": take, "face": state.lines[seat][index].face, "cells": listed}


def parse(state: DropShyState, seat: int, text: str) -> JSON:
    """A conditional order of ``seat`` read and checked now; OrderError says why not."""
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
        "line": [die.face for die in state.lines[seat]],
        "free": None,
        "then": None,
        "else": None,
    }
    condition = _IF.match(parts[0])
    if condition is None:
        if len(parts) > 1:
            raise OrderError(_("write it as: %(syntax)s", syntax=SYNTAX))
        data["then"] = _part(state, seat, parts[0], "place")
        return data
    data["free"] = [int(condition[1]), int(condition[2])]
    data["then"] = _part(state, seat, condition[3], "then")
    if len(parts) == 2:
        other = _ELSE.match(parts[1])
        if other is None:
            raise OrderError(_("the second part starts with else: %(syntax)s", syntax=SYNTAX))
        data["else"] = _part(state, seat, other[1], "else")
    return data


def _said(part: Any) -> str:
    said = "place " + " or ".join(f"{x} {y}" for x, y in part["cells"])
    return said if part["take"] is None else f"take {part['take']} {said}"


def words(data: Any) -> str:
    if data["free"] is None:
        return _said(data["then"])
    x, y = data["free"]
    said = f"if {x} {y} is free: {_said(data['then'])}"
    if data["else"] is not None:
        said += f"; else: {_said(data['else'])}"
    return said


def play(state: DropShyState, seat: int, data: Any) -> Verdict:
    """What the conditional order of ``seat`` does now."""
    if state.current is None:
        return Verdict("disarm", reason=_("the game is over"))
    if [die.face for die in state.lines[seat]] != data["line"]:
        return Verdict(
            "disarm", reason=_("the die it was written for is no longer the one you play")
        )
    if state.current != seat:
        return Verdict("wait")
    grid = cells(state.board)
    part = data["then"]
    if data["free"] is not None and (data["free"][0], data["free"][1]) in grid:
        part = data["else"]
    if part is None:
        return Verdict(
            "disarm",
            reason=_(
                "%(cell)s was taken, and it said nothing else",
                cell=cell_text((data["free"][0], data["free"][1])),
            ),
        )
    legal = set(legal_cells(grid, part["face"]))
    take = "" if part["take"] is None else f"take {part['take']} "
    for x, y in part["cells"]:
        if (x, y) in legal:
            return Verdict("play", order=f"{take}place {x} {y}")
    return Verdict(
        "disarm",
        reason=_(
            "none of its cells is legal for your %(face)d now: %(cells)s",
            face=part["face"],
            cells=join([cell_text((x, y)) for x, y in part["cells"]]),
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
