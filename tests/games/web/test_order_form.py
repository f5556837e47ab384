"""forms.typed_order reads a post of the typed-order box exactly as OrderForm does."""

from __future__ import annotations

import pytest
from django.http import QueryDict

from games.web.forms import OrderForm, typed_order

POSTS = [
    "step=3&entry=text&text=W1+12+34",
    "step=3&entry=text&text=++W1+12+34++",  # stripped as the form strips it
    "step=3&entry=text&text=",
    "step=3&entry=text&text=+++",
    "step=3&entry=text",
    "step=3&entry=blocks&text=W1",
    "step=3&entry=menu&text=W1",
    "step=3&entry=other&text=W1",
    "entry=text&text=W1",
    "step=0&entry=text&text=W1",
    "step=x&entry=text&text=W1",
    "step=3&text=W1",
    "step=3&entry=text&text=" + "W" * 5000,
    "step=3&entry=text&text=" + "W" * 5001,
    "step=3&entry=text&text=W1%00",
]


def by_the_form(data: QueryDict) -> str | None:
    form = OrderForm(data, state=None, position=0, step_number=0)
    if not form.is_valid() or form.cleaned_data["entry"] != "text":
        return None
    return form.order_text()


@pytest.mark.parametrize("post", POSTS)
def test_the_typed_order_is_what_the_form_takes(post: str) -> None:
    data = QueryDict(post)
    assert typed_order(data) == by_the_form(data)


def test_the_posts_cover_taken_and_refused_orders() -> None:
    taken = [typed_order(QueryDict(post)) for post in POSTS]
    assert taken[:2] == ["W1 12 34", "W1 12 34"]
    assert taken[12] == "W" * 5000
    assert [i for i, text in enumerate(taken) if text is not None] == [0, 1, 12]
