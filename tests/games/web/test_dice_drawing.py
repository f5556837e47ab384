"""Dice drawn as dice: SVG with pips on a page, a bordered box with the number in an HTML
email; each seat's colour from one palette."""

from __future__ import annotations

import re

import pytest
from django.template import Context, Template

from games.engines import colours
from games.templatetags.dice import svg_die


def render(source: str, **context: object) -> str:
    return Template("{% load dice %}" + source).render(Context(context))


@pytest.mark.parametrize("value", [1, 2, 3, 4, 5, 6])
def test_a_die_on_a_page_is_svg_with_as_many_pips_as_its_value(value: int) -> None:
    drawn = render("{% die value %}", value=value)
    assert drawn.startswith('<svg class="die" ')
    assert drawn.count("<circle ") == value
    assert f'role="img" aria-label="{value}"><title>{value}</title>' in drawn
    assert 'viewBox="0 0 24 24"' in drawn


def test_a_die_takes_its_seats_colour_and_the_ink_that_reads_on_it() -> None:
    blue = render("{% die 2 seat=0 %}")
    assert 'fill="#0072B2" stroke="#222222"' in blue
    assert blue.count('fill="#FFFFFF"/>') == 2  # white pips on blue
    yellow = render("{% die 3 seat=6 %}")
    assert 'fill="#F0E442"' in yellow
    assert yellow.count('fill="#000000"/>') == 3
    assert 'fill="#FFFFFF" stroke="#222222"' in render("{% die 3 %}")


def test_seat_colours_repeat_after_the_eighth_seat() -> None:
    assert render("{{ 8|seat_colour }} {{ 1|seat_colour }} {{ None|seat_colour }}") == (
        "#0072B2 #E69F00 #FFFFFF"
    )


def test_every_seat_colour_has_ink_of_at_least_4_5_to_1() -> None:
    ratios = [colours.contrast(c, colours.ink(c)) for c in colours.SEAT_COLOURS]
    assert [r >= 4.5 for r in ratios] == [True] * 8
    assert len(set(colours.SEAT_COLOURS)) == 8


def test_a_row_of_dice_is_one_span_of_one_svg_per_die() -> None:
    drawn = render("{% dice cup seat=1 %}", cup=[6, 1, 4])
    assert drawn.startswith('<span class="dice"><svg')
    assert re.findall(r'aria-label="(\d)"', drawn) == ["6", "1", "4"]
    assert drawn.count("<circle ") == 11
    assert drawn.count('fill="#E69F00"') == 3


def test_in_an_html_email_a_die_is_a_bordered_box_with_its_number() -> None:
    drawn = render("{% dice cup seat=0 %}", cup=[5, 2], html_email=True)
    assert "<svg" not in drawn
    assert re.findall(r'<span class="die" style="[^"]*">(\d)</span>', drawn) == ["5", "2"]
    assert "border:1px solid #222222;border-radius:4px;background:#0072B2;color:#FFFFFF" in drawn


def test_a_die_of_more_sides_shows_its_number_in_its_shape() -> None:
    drawn = render("{% die 17 seat=2 sides=20 %}")
    assert 'aria-label="17 (d20)"' in drawn
    assert '<polygon points="12,1 22,6.5 22,17.5 12,23 2,17.5 2,6.5" fill="#009E73"' in drawn
    assert drawn.endswith(">17</text></svg>")
    assert "<circle" not in drawn
    mailed = render("{% die 7 sides=8 %}", html_email=True)
    assert mailed.startswith('\n<span style="color:#555;font-size:12px">d8</span><span class="die"')
    assert mailed.endswith(">7</span>")


def test_a_swatch_is_a_hidden_square_of_the_seats_colour() -> None:
    assert render("{% swatch 3 %}") == (
        '<span class="swatch" aria-hidden="true" style="display:inline-block;width:10px;'
        "height:10px;margin:0 5px 0 0;border:1px solid #222222;background:#D55E00;"
        'font-size:10px;line-height:10px;vertical-align:baseline">&nbsp;</span>'
    )


def test_svg_die_counts_pips_for_every_face() -> None:
    assert [str(svg_die(v)).count("<circle") for v in range(1, 7)] == [1, 2, 3, 4, 5, 6]
