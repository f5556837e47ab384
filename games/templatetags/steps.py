"""A step as its game calls it: ``{{ number|step_name:step_word }}`` is "turn 5",
``{{ step_word|this_step }}`` "this turn" and ``{{ step_word|every_step }}`` "every turn"."""

from __future__ import annotations

from django import template

from games.lib import words

register = template.Library()


@register.filter
def step_name(number: int, word: str) -> str:
    return words.step_name(word, number)


@register.filter
def this_step(word: str) -> str:
    return words.this_step(word)


@register.filter
def every_step(word: str) -> str:
    return words.every_step(word)
