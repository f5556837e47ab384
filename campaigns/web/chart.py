"""The tracker as a chart: each member's dice after each night, one line per member, as
an SVG the page shows and the host can download.

No two labels overlap: the nights' dates along the bottom skip nights when they would
(the latest night always keeps its date), and the members' names at the lines' ends are
moved apart vertically, in their order, by at least a line's height."""

from __future__ import annotations

import math
from collections.abc import Sequence

from django.utils.html import escape

from campaigns.postal import Tracker

WIDTH, HEIGHT = 640, 320
LEFT, RIGHT, TOP, BOTTOM = 40, 120, 20, 40
COLOURS = ["#1d4f91", "#b3261e", "#2e7d32", "#8e44ad", "#c77700", "#00838f", "#6d4c41", "#455a64"]
DATE_FONT, NAME_FONT = 11, 12
# A character's width, at most, as a share of the font size (sans-serif digits and letters).
CHAR_WIDTH = 0.62
# Between two labels, at least: horizontally (dates), and from baseline to baseline (names).
DATE_GAP = 8
NAME_LINE = 15
NAME_CHARS = 16  # longer names are cut, with "…", to fit the right margin


def text_width(text: str, font_size: float) -> float:
    """The most ``text`` can take across, drawn in ``font_size``."""
    return len(text) * font_size * CHAR_WIDTH


def dated_nights(count: int, spacing: float, widest: float) -> list[int]:
    """The nights (indices) whose dates are written: every k-th, counting back from the
    latest, k the fewest nights between two dates that keeps them ``DATE_GAP`` apart."""
    if count == 0:
        return []
    every = 1 if count == 1 else max(1, math.ceil((widest + DATE_GAP) / spacing))
    return sorted(range(count - 1, -1, -every))


def spread(wanted: Sequence[float], line: float, lowest: float) -> list[float]:
    """Baselines as near ``wanted`` as they can be with at least ``line`` between any two,
    in the same order, none below ``lowest`` unless there is no room above."""
    order = sorted(range(len(wanted)), key=lambda n: (wanted[n], n))
    placed = list(wanted)
    previous = -math.inf
    for n in order:
        placed[n] = max(wanted[n], previous + line)
        previous = placed[n]
    following = lowest + line
    for n in reversed(order):
        placed[n] = min(placed[n], following - line)
        following = placed[n]
    return placed


def tracker_svg(sheet: Tracker, dates: Sequence[str]) -> str:
    """The chart of ``sheet``; ``dates``: each night's date as the campaign writes it."""
    rows = [*sheet.rows, sheet.reserve]
    most = max([cell.count or 0 for row in rows for cell in row.cells] + [1])
    columns = max(len(sheet.nights), 1)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(index: int) -> float:
        return LEFT + (plot_w * index / (columns - 1) if columns > 1 else plot_w / 2)

    def y(count: int) -> float:
        return TOP + plot_h - plot_h * count / most

    lines: list[str] = []
    ends: list[tuple[float, float, str, str]] = []  # x, y, name, colour of each line's end
    for number, row in enumerate(rows):
        colour = COLOURS[number % len(COLOURS)] if row is not sheet.reserve else "#999"
        points = [
            (x(index), y(cell.count))
            for index, cell in enumerate(row.cells)
            if cell.count is not None
        ]
        if not points:
            continue
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
        dash = ' stroke-dasharray="5 4"' if row is sheet.reserve else ""
        lines.append(
            f'<polyline class="series" data-name="{escape(row.name)}" points="{path}" '
            f'fill="none" stroke="{colour}" stroke-width="2"{dash}/>'
        )
        lines += [
            f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{colour}"/>' for px, py in points
        ]
        ends.append((*points[-1], row.name, colour))
    baselines = spread([ly + 4 for _, ly, _, _ in ends], NAME_LINE, TOP + plot_h + 4)
    shift = max(0.0, NAME_FONT - min(baselines, default=NAME_FONT))  # none above the top
    height = max(HEIGHT, math.ceil(max(baselines, default=0) + shift + 6))

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="Dice per member after each night">',
        f'<g transform="translate(0 {shift:.1f})">' if shift else "<g>",
        f'<line x1="{LEFT}" y1="{TOP + plot_h}" x2="{LEFT + plot_w}" y2="{TOP + plot_h}" '
        'stroke="#888"/>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot_h}" stroke="#888"/>',
    ]
    for count in range(0, most + 1, max(1, most // 5)):
        parts.append(
            f'<text x="{LEFT - 6}" y="{y(count) + 4:.1f}" text-anchor="end" font-size="11" '
            f'fill="#555">{count}</text>'
        )
    spacing = plot_w / (columns - 1) if columns > 1 else plot_w
    widest = max((text_width(date, DATE_FONT) for date in dates), default=0)
    for index in dated_nights(len(sheet.nights), spacing, widest):
        parts.append(
            f'<text class="night" x="{x(index):.1f}" y="{TOP + plot_h + 16}" '
            f'text-anchor="middle" font-size="{DATE_FONT}" fill="#555">'
            f"{escape(dates[index])}</text>"
        )
    parts += lines
    for (lx, _, name, colour), baseline in zip(ends, baselines, strict=True):
        shown = name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "…"
        parts.append(
            f'<text class="name" x="{lx + 8:.1f}" y="{baseline:.1f}" font-size="{NAME_FONT}" '
            f'fill="{colour}">{escape(shown)}</text>'
        )
    parts.append("</g></svg>")
    return "".join(parts)
