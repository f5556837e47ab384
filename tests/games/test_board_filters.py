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
def test_dice_faces_writes_six_sided_dice_as_unicode_faces_and_nothing_else(values, written):
    assert dice_faces(values) == written


def test_a_board_template_shows_a_roll_as_numbers_and_faces():
    template = Template("{% load boards %}{{ roll|numbers }} | {{ roll|dice_faces }}")
    assert template.render(Context({"roll": [4, 4, 1]})) == "4 4 1 | ⚃ ⚃ ⚀"
