"""Dice drawn as dice, and each seat's colour: ``{% load dice %}``.

A page shows a die as inline SVG (a rounded face with its pips); an HTML email as a bordered
box with the number, as mail clients show no SVG and a Unicode die face (⚀..⚅) turns into a
box where the reader's font lacks it. The one email builder renders with ``html_email`` set
(``moderator.mail.building.render``): the same board template serves both. Text parts keep
their digits and faces.

Each seat has a colour by its position (``games/engines/colours.py``), the same on the
board, in messages and in standings: a die in it, a swatch of it by a name.
"""

from __future__ import annotations

import functools
from typing import Any

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from games.engines import colours
from games.engines.colours import OUTLINE, PLAIN, ink

register = template.Library()

# Where the pips sit on a face of 24 x 24.
PIPS = {
    1: ((12, 12),),
    2: ((7, 7), (17, 17)),
    3: ((7, 7), (12, 12), (17, 17)),
    4: ((7, 7), (17, 7), (7, 17), (17, 17)),
    5: ((7, 7), (17, 7), (12, 12), (7, 17), (17, 17)),
    6: ((7, 6.5), (17, 6.5), (7, 12), (17, 12), (7, 17.5), (17, 17.5)),
}


@register.filter
def seat_colour(position: Any) -> str:
    """``{{ seat.position|seat_colour }}``: the seat's colour (games/engines/colours.py)."""
    return colours.seat_colour(position)


def _is_face(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 6


# Kept once drawn: a page draws dozens of dice (the board, every revealed cup of its history)
# from six faces in a few colours, and each costs a dozen escapes.
@functools.lru_cache(maxsize=256)
def svg_die(value: int, fill: str = PLAIN, size: int = 26) -> SafeString:
    """One six-sided die as inline SVG, named by its value for a screen reader."""
    pips = format_html_join(
        "",
        '<circle cx="{}" cy="{}" r="2.3" fill="{}"/>',
        ((x, y, ink(fill)) for x, y in PIPS[value]),
    )
    return format_html(
        '<svg class="die" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="{}" '
        'height="{}" role="img" aria-label="{}"><title>{}</title>'
        '<rect x="1" y="1" width="22" height="22" rx="4.5" fill="{}" stroke="{}" '
        'stroke-width="1.5"/>{}</svg>',
        size,
        size,
        value,
        value,
        fill,
        OUTLINE,
        pips,
    )


# The outline of a die of more sides than six, drawn flat on a face of 24 x 24 with its
# number: a d8 a diamond, a d12 a pentagon, a d20 a hexagon; any other a rounded square.
SHAPES = {
    8: "12,1 23,12 12,23 1,12",
    12: "12,1 23,9.2 18.8,22.5 5.2,22.5 1,9.2",
    20: "12,1 22,6.5 22,17.5 12,23 2,17.5 2,6.5",
}


def svg_numbered_die(value: Any, sides: int, fill: str = PLAIN, size: int = 30) -> SafeString:
    """A die that shows a number, not pips (a d8, d12, d20), named by its value and sides."""
    shape = SHAPES.get(sides)
    outline = (
        format_html(
            '<polygon points="{}" fill="{}" stroke="{}" stroke-width="1.5"/>', shape, fill, OUTLINE
        )
        if shape
        else format_html(
            '<rect x="1" y="1" width="22" height="22" rx="4.5" fill="{}" stroke="{}" '
            'stroke-width="1.5"/>',
            fill,
            OUTLINE,
        )
    )
    label = f"{value} (d{sides})"
    return format_html(
        '<svg class="die" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="{}" '
        'height="{}" role="img" aria-label="{}"><title>{}</title>{}<text x="12" y="15.5" '
        'text-anchor="middle" font-family="Arial,Helvetica,sans-serif" font-size="{}" '
        'font-weight="bold" fill="{}">{}</text></svg>',
        size,
        size,
        label,
        label,
        outline,
        10 if len(str(value)) < 2 else 8.5,
        ink(fill),
        value,
    )


def boxed_die(value: Any, fill: str = PLAIN) -> SafeString:
    """One die for an HTML email: its number in a bordered box, styled inline (what every
    mail client shows; the digit stays when a client drops the styles)."""
    return format_html(
        '<span class="die" style="display:inline-block;min-width:14px;padding:0 4px;'
        "margin:0 3px 3px 0;border:1px solid {};border-radius:4px;background:{};color:{};"
        "font-family:Arial,Helvetica,sans-serif;font-size:15px;font-weight:bold;"
        'line-height:22px;text-align:center;white-space:nowrap">{}</span>',
        OUTLINE,
        fill,
        ink(fill),
        value,
    )


def _draw(context: template.Context, value: Any, seat: Any, sides: int = 6) -> SafeString:
    fill = colours.seat_colour(seat)
    # In an email each die starts a line of its own: a row of boxes on one line would pass
    # the 998 characters a line of mail may hold.
    if context.get("html_email"):
        if sides != 6:
            return format_html(
                '\n<span style="color:#555;font-size:12px">d{}</span>{}',
                sides,
                boxed_die(value, fill),
            )
        return format_html("\n{}", boxed_die(value, fill))
    if sides == 6 and _is_face(value):
        return svg_die(value, fill)
    return svg_numbered_die(value, sides, fill)


@register.simple_tag(takes_context=True)
def die(context: template.Context, value: Any, seat: Any = None, sides: int = 6) -> SafeString:
    """``{% die 5 %}``, ``{% die 5 seat=p.seat %}``, ``{% die 17 sides=20 %}``: one die, in
    the seat's colour; a six-sided die with pips, any other with its number."""
    return _draw(context, value, seat, int(sides))


@register.simple_tag(takes_context=True)
def dice(context: template.Context, values: Any, seat: Any = None) -> SafeString:
    """``{% dice cup seat=0 %}``: a row of dice, in the seat's colour. In an email the row
    is kept together; on a page a long row (a Drop-Shy line) wraps between its dice on a
    phone rather than push the page sideways."""
    drawn = mark_safe(" ".join(_draw(context, value, seat) for value in values or ()))
    if context.get("html_email"):
        return format_html('<span class="dice" style="white-space:nowrap">{}</span>', drawn)
    return format_html('<span class="dice">{}</span>', drawn)


@register.simple_tag(takes_context=True)
def deep_dice(context: template.Context, faces: Any, depths: Any, seat: Any = None) -> SafeString:
    """``{% deep_dice p.line p.depths seat=p.seat %}``: a row of dice, each followed by
    its depth ("/2"), as a Drop-Shy line of the two-candidate rule shows them."""
    drawn = format_html_join(
        " ",
        '<span style="white-space:nowrap">{}<span class="depth">/{}</span></span>',
        ((_draw(context, face, seat), depth) for face, depth in zip(faces, depths, strict=True)),
    )
    return format_html('<span class="dice">{}</span>', drawn)


@register.simple_tag
def swatch(seat: Any) -> SafeString:
    """A small square of the seat's colour, by its name (not read aloud: the name says who).
    Its dark outline keeps the lightest colours visible on white."""
    return format_html(
        '<span class="swatch" aria-hidden="true" style="display:inline-block;width:10px;'
        "height:10px;margin:0 5px 0 0;border:1px solid {};background:{};font-size:10px;"
        'line-height:10px;vertical-align:baseline">&nbsp;</span>',
        OUTLINE,
        colours.seat_colour(seat),
    )
