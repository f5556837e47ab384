"""Filters every game's board templates share: numbers, dice faces, columns and table cells.
A game's own drawings live in its home (``games/forms/<game>.py``), not here."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe

from games.engines import base

register = template.Library()

DIE_FACES = "⚀⚁⚂⚃⚄⚅"


@register.filter
def numbers(values: Any, separator: str = " ") -> str:
    """Numbers joined for a text email: Django's ``join`` gives up on numbers where
    autoescaping is off (text emails) and prints the list as Python writes it."""
    if values is None:
        return ""
    return separator.join(str(value) for value in values)


@register.filter
def counted(number: Any, words: str) -> str:
    """A number with the word that fits it: ``{{ n|counted:"die,dice" }}`` is "1 die" or
    "3 dice"; ``{{ n|counted:"point" }}`` "1 point" or "2 points"."""
    one, _, many = words.partition(",")
    return base.counted(int(number), one, many)


@register.filter
def dice_faces(values: Any) -> str:
    """Six-sided dice as Unicode faces, e.g. [3, 1] -> '⚂ ⚀'; '' for anything else (a
    board shows each roll as numbers and as dice)."""
    if not _is_d6_roll(values):
        return ""
    return " ".join(DIE_FACES[value - 1] for value in values)


def _is_d6_roll(value: Any) -> bool:
    return (
        isinstance(value, list | tuple)
        and bool(value)
        and all(isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 6 for v in value)
    )


@register.filter
def columns(values: Any, width: int) -> str:
    """Values right-aligned in columns of ``width`` characters, for a text board: one
    filter for a row instead of a loop with a filter per cell."""
    return "".join(str(value).rjust(int(width)) for value in values)


def _cells(tag: str, values: Any, style: str) -> SafeString:
    attribute = f' style="{conditional_escape(style)}"' if style else ""
    return mark_safe(
        "".join(f"\n<{tag}{attribute}>{conditional_escape(value)}</{tag}>" for value in values)
    )


@register.filter
def td_cells(values: Any, style: str = "") -> SafeString:
    """A table cell per value, each on a line of its own (an HTML board's row)."""
    return _cells("td", values, style)


@register.filter
def th_cells(values: Any, style: str = "") -> SafeString:
    """A header cell per value, each on a line of its own (an HTML board's head)."""
    return _cells("th", values, style)
