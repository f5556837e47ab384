"""The tracker's chart: no two labels overlap, however many nights and however close the
members' counts."""

from __future__ import annotations

import re
from datetime import date, timedelta
from itertools import pairwise

import pytest

from campaigns.models import Night
from campaigns.postal import Tracker, TrackerCell, TrackerRow
from campaigns.web import chart


def sheet(nights: int, counts: list[list[int]]) -> Tracker:
    """A tracker of ``nights`` nights from 2026-11-25, weekly, one row per list of counts
    (the last row is the reserve)."""
    days = [date(2026, 11, 25) + timedelta(weeks=n) for n in range(nights)]
    rows = [
        TrackerRow(
            f"member {n}" if n < len(counts) - 1 else "Reserved dice", [TrackerCell(c) for c in row]
        )
        for n, row in enumerate(counts)
    ]
    return Tracker(
        nights=[Night(number=n + 1, date=day) for n, day in enumerate(days)],
        rows=rows[:-1],
        reserve=rows[-1],
        totals=[sum(row[n] for row in counts) for n in range(nights)],
    )


def labels(svg: str, kind: str) -> list[tuple[float, float, str]]:
    pattern = rf'<text class="{kind}" x="([\d.]+)" y="(-?[\d.]+)"[^>]*>([^<]*)</text>'
    found = re.findall(pattern, svg)
    return [(float(x), float(y), text) for x, y, text in found]


def too_close(baselines: list[float]) -> list[tuple[float, float]]:
    """The neighbouring baselines (sorted) less than a line apart."""
    return [(a, b) for a, b in pairwise(baselines) if round(b - a, 1) < chart.NAME_LINE]


@pytest.mark.parametrize("nights", [1, 2, 7, 12, 40])
def test_the_nights_dates_keep_apart_and_the_latest_is_written(nights: int) -> None:
    tracker = sheet(nights, [[3] * nights, [0] * nights])
    dates = [night.date.isoformat() for night in tracker.nights]
    written = labels(chart.tracker_svg(tracker, dates), "night")
    width = chart.text_width("2026-11-25", chart.DATE_FONT)
    too_close = [
        (left, right)
        for left, right in pairwise(written)
        if right[0] - left[0] < width + chart.DATE_GAP
    ]
    assert too_close == []
    assert written[-1][2] == dates[-1]
    assert len(written) == {1: 1, 2: 2, 7: 7, 12: 6, 40: 6}[nights]


def test_members_ending_on_the_same_count_are_named_a_line_apart() -> None:
    counts = [[3, 4, 5], [3, 4, 5], [3, 5, 5], [3, 3, 5], [3, 2, 4], [0, 1, 5]]
    svg = chart.tracker_svg(sheet(3, counts), ["a", "b", "c"])
    names = labels(svg, "name")
    assert [text for _, _, text in names] == [*(f"member {n}" for n in range(5)), "Reserved dice"]
    ys = sorted(y for _, y, _ in names)
    assert too_close(ys) == []
    assert {x for x, _, _ in names} == {528.0}


def test_many_members_at_nought_stay_on_the_chart_a_line_apart() -> None:
    counts = [[0, 0]] * 25
    svg = chart.tracker_svg(sheet(2, counts), ["a", "b"])
    ys = sorted(y for _, y, _ in labels(svg, "name"))
    height = int(re.findall(r'<svg [^>]*height="(\d+)"', svg)[0])
    shift = float((re.findall(r'<g transform="translate\(0 ([\d.]+)\)">', svg) or ["0"])[0])
    assert (len(ys), too_close(ys)) == (25, [])
    assert (ys[0] + shift >= chart.NAME_FONT, ys[-1] + shift <= height) == (True, True)


def test_a_long_name_is_cut_to_fit_the_margin() -> None:
    tracker = sheet(1, [[3], [0]])
    tracker.rows[0].name = "Bartholomew the Magnificent"
    names = labels(chart.tracker_svg(tracker, ["a"]), "name")
    assert names[0][2] == "Bartholomew the…"
