"""Each seat's colour, by its position: the same on the board, in messages and in standings
(``games/templatetags/dice.py`` draws with them; a game's own drawing may too).

The Okabe-Ito palette (Okabe & Ito, "Color Universal Design", 2008), told apart by colour-
blind readers too, each with the ink (pips, digits) that reads best on it. Pure: no Django.
"""

from __future__ import annotations

from functools import cache
from typing import Any

# Blue, orange, bluish green, vermillion, sky blue, reddish purple, yellow, black; the ninth
# seat takes the first again.
SEAT_COLOURS = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#56B4E9",
    "#CC79A7",
    "#F0E442",
    "#000000",
)
PLAIN = "#FFFFFF"
OUTLINE = "#222222"


def luminance(colour: str) -> float:
    """WCAG's relative luminance of ``#RRGGBB``."""
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(one: str, other: str) -> float:
    """WCAG's contrast ratio of two colours, 1 to 21."""
    high, low = sorted((luminance(one), luminance(other)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@cache
def ink(colour: str) -> str:
    """Black or white, whichever reads better on ``colour``."""
    return "#000000" if contrast(colour, "#000000") >= contrast(colour, "#FFFFFF") else "#FFFFFF"


def seat_colour(position: Any) -> str:
    """The colour of the seat at ``position`` (0 first); white for no seat (None)."""
    if isinstance(position, bool) or not isinstance(position, int):
        return PLAIN
    return SEAT_COLOURS[position % len(SEAT_COLOURS)]
