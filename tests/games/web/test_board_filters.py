from __future__ import annotations

import pytest
from django.template import Context, Template

from games.templatetags.boards import dice_faces


@pytest.mark.parametrize(
    ("values", "written"),
    [
        ([1, 6, 3], "⚀ ⚅ ⚂"),
        ((2, 2), "⚁ ⚁"),
        ([5], "⚄"),
        ([], ""),
        ([7, 1], ""),
        ([0], ""),
        ([True, 1], ""),
        (None, ""),
        ("12", ""),
    ],
)
def test_dice_faces_writes_six_sided_dice_as_unicode_faces_and_nothing_else(
    values: list[int] | tuple[int, int] | str | None, written: str
) -> None:
    assert dice_faces(values) == written


def test_a_board_template_shows_a_roll_as_numbers_and_faces() -> None:
    template = Template("{% load boards %}{{ roll|numbers }} | {{ roll|dice_faces }}")
    assert template.render(Context({"roll": [4, 4, 1]})) == "4 4 1 | ⚃ ⚃ ⚀"


def test_columns_right_aligns_a_row_of_a_text_board() -> None:
    template = Template(
        '{% load boards %}[{{ counts|columns:3 }}] [{{ counts.values|columns:"4" }}]'
    )
    rendered = template.render(Context({"counts": {2: 1, 3: 0, 12: 10}}, autoescape=False))
    assert rendered == "[  2  3 12] [   1   0  10]"


def test_cells_write_one_escaped_cell_per_value_each_on_its_own_line() -> None:
    template = Template(
        '{% load boards %}<tr>{{ names|th_cells:"text-align:left" }}{{ counts|td_cells }}</tr>'
    )
    rendered = template.render(Context({"names": ["<b>", "A&B"], "counts": [1, 0]}))
    assert rendered == (
        '<tr>\n<th style="text-align:left">&lt;b&gt;</th>\n<th style="text-align:left">A&amp;B</th>'
        "\n<td>1</td>\n<td>0</td></tr>"
    )


@pytest.mark.parametrize(
    ("source", "written"),
    [
        ('{{ 1|counted:"die,dice" }}', "1 die"),
        ('{{ 3|counted:"die,dice" }}', "3 dice"),
        ('{{ 0|counted:"die,dice" }}', "0 dice"),
        ('{{ 1|counted:"point" }}', "1 point"),
        ('{{ 2|counted:"point" }}', "2 points"),
    ],
)
def test_counted_writes_a_number_with_the_word_that_fits_it(source: str, written: str) -> None:
    assert Template("{% load boards %}" + source).render(Context({})) == written
