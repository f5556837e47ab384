"""A step as its game calls it: ``{{ number|step_name:step_word }}`` is "turn 5"."""

from __future__ import annotations

from django import template

from games.lib import words

register = template.Library()


@register.filter
def step_name(number: int, word: str) -> str:
    return words.step_name(word, number)
