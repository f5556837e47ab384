"""The tracker as a chart: each member's dice after each night, one line per member, as
an SVG the page shows and the host can download."""

from __future__ import annotations

from django.utils.html import escape

from campaigns.postal import Tracker

WIDTH, HEIGHT = 640, 320
LEFT, RIGHT, TOP, BOTTOM = 40, 120, 20, 40
COLOURS = ["#1d4f91", "#b3261e", "#2e7d32", "#8e44ad", "#c77700", "#00838f", "#6d4c41", "#455a64"]


def tracker_svg(sheet: Tracker) -> str:
    rows = [*sheet.rows, sheet.reserve]
    most = max([cell.count or 0 for row in rows for cell in row.cells] + [1])
    columns = max(len(sheet.nights), 1)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(index: int) -> float:
        return LEFT + (plot_w * index / (columns - 1) if columns > 1 else plot_w / 2)

    def y(count: int) -> float:
        return TOP + plot_h - plot_h * count / most

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="Dice per member after each night">',
        f'<line x1="{LEFT}" y1="{TOP + plot_h}" x2="{LEFT + plot_w}" y2="{TOP + plot_h}" '
        'stroke="#888"/>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot_h}" stroke="#888"/>',
    ]
    for count in range(0, most + 1, max(1, most // 5)):
        parts.append(
            f'<text x="{LEFT - 6}" y="{y(count) + 4:.1f}" text-anchor="end" font-size="11" '
            f'fill="#555">{count}</text>'
        )
    for index, night in enumerate(sheet.nights):
        parts.append(
            f'<text x="{x(index):.1f}" y="{TOP + plot_h + 16}" text-anchor="middle" '
            f'font-size="11" fill="#555">{night.date.isoformat()}</text>'
        )
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
        parts.append(
            f'<polyline class="series" data-name="{escape(row.name)}" points="{path}" '
            f'fill="none" stroke="{colour}" stroke-width="2"{dash}/>'
        )
        parts += [
            f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{colour}"/>' for px, py in points
        ]
        lx, ly = points[-1]
        parts.append(
            f'<text x="{lx + 8:.1f}" y="{ly + 4:.1f}" font-size="12" fill="{colour}">'
            f"{escape(row.name)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)
