"""CSV files people open in a spreadsheet. A cell whose text begins with ``=``, ``+``,
``-`` or ``@`` (or a tab or carriage return, which some spreadsheets skip before reading
one of those) is taken as a formula: a player's name such as ``=HYPERLINK(...)`` would run
in the GM's spreadsheet. Such a text is written with a single quote before it, which
spreadsheets read as "this is text". Every CSV export writes through ``csv_text``."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def cell(value: object) -> object:
    """``value`` as a spreadsheet reads it as written: a text that would start a formula
    gets a single quote before it; numbers and other texts are kept."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return f"'{value}"
    return value


def csv_text(rows: Iterable[Iterable[object]]) -> str:
    """``rows`` as CSV (Python's csv dialect ``excel``), every cell through ``cell``."""
    out = io.StringIO()
    writer = csv.writer(out)
    for row in rows:
        writer.writerow([cell(value) for value in row])
    return out.getvalue()
