"""Drop-Shy's web side: the board drawn as SVG for the web pages (emails get the text grid and
the HTML table: mail clients do not show SVG), and the order form whose board is its menu:
a real submit button over each legal cell, so a tap on the board sends that order, with or
without JavaScript."""

from __future__ import annotations

import re
from typing import Any

from django.utils.html import escape, format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext_lazy

from games.engines import colours
from games.web.forms import MenuOrderForm

CELL = 44
AXIS = 22
PIPS = {
    1: [(0.5, 0.5)],
    2: [(0.27, 0.27), (0.73, 0.73)],
    3: [(0.27, 0.27), (0.5, 0.5), (0.73, 0.73)],
    4: [(0.27, 0.27), (0.73, 0.27), (0.27, 0.73), (0.73, 0.73)],
    5: [(0.27, 0.27), (0.73, 0.27), (0.5, 0.5), (0.27, 0.73), (0.73, 0.73)],
    6: [(0.27, 0.25), (0.73, 0.25), (0.27, 0.5), (0.73, 0.5), (0.27, 0.75), (0.73, 0.75)],
}
# "take closest place 1 0" / "place -1 2": the cell an order of the menu places on.
_PLACE = re.compile(r"(?:take (\w+) )?place (-?\d+) (-?\d+)$")


def _die(left: float, top: float, face: int, instigator: bool, seat: int | None) -> str:
    """A placed die in its player's colour (the instigator, nobody's, shaded)."""
    size = CELL - 6
    fill = "#fff4d6" if instigator else colours.seat_colour(seat)
    pips = "".join(
        f'<circle cx="{left + 3 + px * size:.1f}" cy="{top + 3 + py * size:.1f}" r="3.6" '
        f'fill="{colours.ink(fill)}"/>'
        for px, py in PIPS[face]
    )
    return (
        f'<rect x="{left + 3}" y="{top + 3}" width="{size}" height="{size}" rx="6" '
        f'fill="{fill}" stroke="#222" stroke-width="1.5"/>{pips}'
    )


def _layout(view: dict[str, Any]) -> tuple[list[int], list[dict[str, Any]]]:
    rows = view["grid"]["rows"]
    return view["grid"]["xs"], rows


def _position(xs: list[int], rows: list[dict[str, Any]], x: int, y: int) -> tuple[int, int]:
    column = xs.index(x)
    row = [r["y"] for r in rows].index(y)
    return AXIS + column * CELL, AXIS + row * CELL


# The drawing's name; not an id, as a page may draw the board twice (its board and its form).
TITLE = gettext_lazy("The board: every die placed, and the cells where the die in play may go")


def board_drawing(view: dict[str, Any], menu: list[tuple[str, str]] | None = None) -> SafeString:
    """The board as SVG: every die with its pips and coordinates, the cells where the die in
    play may go highlighted; given the form's menu, a submit button over each legal cell."""
    xs, rows = _layout(view)
    width, height = AXIS + len(xs) * CELL, AXIS + len(rows) * CELL
    title = escape(TITLE)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{title}" '
        'style="display:block">',
        f"<title>{title}</title>",
    ]
    for column, x in enumerate(xs):
        parts.append(
            f'<text x="{AXIS + column * CELL + CELL / 2}" y="15" text-anchor="middle" '
            f'font-size="12" fill="#555">{x}</text>'
        )
    for number, row in enumerate(rows):
        top = AXIS + number * CELL
        parts.append(
            f'<text x="{AXIS - 5}" y="{top + CELL / 2 + 4}" text-anchor="end" font-size="12" '
            f'fill="#555">{row["y"]}</text>'
        )
        for column, cell in enumerate(row["cells"]):
            left = AXIS + column * CELL
            if cell["face"] is not None:
                parts.append(_die(left, top, cell["face"], cell["instigator"], cell.get("seat")))
            elif cell["legal_for"]:
                parts.append(
                    f'<rect class="legal" data-x="{cell["x"]}" data-y="{cell["y"]}" '
                    f'x="{left + 3}" y="{top + 3}" width="{CELL - 6}" height="{CELL - 6}" '
                    'rx="6" fill="#ffe98a" stroke="#b08900" stroke-width="2" '
                    'stroke-dasharray="4 3"/>'
                    f'<text x="{left + CELL / 2}" y="{top + CELL / 2 + 4}" text-anchor="middle" '
                    f'font-size="11" fill="#6b5300">{cell["mark"]}</text>'
                )
            else:
                parts.append(
                    f'<rect x="{left + 1}" y="{top + 1}" width="{CELL - 2}" '
                    f'height="{CELL - 2}" fill="none" stroke="#eee"/>'
                )
    parts.append("</svg>")
    svg = "".join(parts)
    buttons = _buttons(xs, rows, menu or [])
    return format_html(
        '<div class="board-drawing" style="position:relative;width:{}px;height:{}px;'
        'max-width:none">{}{}</div>',
        width,
        height,
        mark_safe(svg),  # built above from numbers only
        buttons,
    )


def _buttons(xs: list[int], rows: list[dict[str, Any]], menu: list[tuple[str, str]]) -> SafeString:
    """A submit button over each cell the menu can place on; a cell two candidates may
    take is split between them."""
    by_cell: dict[tuple[int, int], list[tuple[str, str]]] = {}
    for value, label in menu:
        match = _PLACE.match(value)
        if match:
            by_cell.setdefault((int(match[2]), int(match[3])), []).append((value, label))
    items = []
    for (x, y), orders in by_cell.items():
        if x not in xs or y not in [r["y"] for r in rows]:
            continue
        left, top = _position(xs, rows, x, y)
        share = CELL // len(orders)
        for number, (value, label) in enumerate(orders):
            items.append((value, label, left, top + number * share, CELL, share))
    return format_html_join(
        "",
        '<button type="submit" name="pick_button" value="{}" aria-label="{}" title="{}" '
        'class="cell-button" style="position:absolute;left:{}px;top:{}px;width:{}px;'
        "height:{}px;margin:0;padding:0;border:0;background:transparent;cursor:pointer;"
        'min-height:0"></button>',
        ((v, lbl, lbl, lf, tp, w, h) for v, lbl, lf, tp, w, h in items),
    )


class DropShyOrderForm(MenuOrderForm):
    """The menu of legal placements, drawn on the board as well as listed."""

    @classmethod
    def page_context(cls, view: dict[str, Any]) -> dict[str, Any]:
        return {"board_drawing": board_drawing(view)}

    @property
    def board_drawing(self) -> SafeString:
        assert self.engine is not None
        return board_drawing(self.engine.view(self.state, self.position), self.menu)
