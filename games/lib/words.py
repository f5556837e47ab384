"""The games' words in the reader's language.

The engines write English that remembers how it was made (``games.engines.text``); an event
is stored with its English ``text`` and, when an engine made it so, its ``message`` (the
structure). ``said`` gives the words in the active language (``django.utils.translation``):
English as stored, any other language through the catalogues, those of the service
(``locale/``) and each game's own (``games/engines/<game>/locale``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils import translation
from django.utils.translation import gettext_lazy, gettext_noop

from games.engines import text as engine_text
from games.engines.base import Engine, Prompt, encoder

JSON = Any


def message(text: str) -> JSON:
    """What to store beside ``text`` to say it again in another language: None for plain
    English that remembers nothing."""
    return text.data() if isinstance(text, engine_text.Text) else None


def said(text: Any, stored: JSON = None) -> str:
    """``text`` (an engine's words, or an event's stored English with its ``stored``
    message) in the active language."""
    language = translation.get_language() or "en"
    if language.partition("-")[0] == "en":
        return "" if text is None else str(text)
    if stored is None:
        if not isinstance(text, engine_text.Text):
            return "" if text is None else str(text)
        stored = text.data()
    return engine_text.render(stored, translation.gettext, translation.ngettext)


class Said(str):
    """An event's English text that is said in the active language where it is shown: a
    template, ``str()``, ``"%s"`` and an f-string give ``said``; comparing, hashing and
    ``join`` see the English (so records and tests read it as stored). The language that
    counts is the one active when the words are shown, not when they were read: a report
    read for every seat at once is rendered in each seat's own."""

    stored: JSON
    source: engine_text.Text | None

    def __new__(cls, text: str, stored: JSON = None) -> Said:
        words = super().__new__(cls, text)
        # An engine's Text is kept as it is: its structure is worked out only if it is
        # shown in another language than English (a menu may offer hundreds of bids).
        words.stored = stored
        words.source = text if isinstance(text, engine_text.Text) else None
        return words

    def __str__(self) -> str:
        return said(self.source or str.__str__(self), self.stored)

    def splitlines(self, keepends: bool = False) -> list[str]:
        """The lines of the words as said (the text emails write an event line by line)."""
        return str(self).splitlines(keepends)


def onlooker(engine: Engine[Any, Any, Any], text: str, stored: JSON, names: Sequence[str]) -> Said:
    """A private event (its English ``text`` and ``stored`` message), told to the seats
    called ``names``, as anyone else reads it (the replay, the GM's log): when its engine
    told it in the second person ("your dice are"), its words for an onlooker
    (``Engine.onlooker_words``) with the same arguments and ``player`` the seats' names
    ("ann's dice are"); else the event as it was told."""
    template = stored.get("t") if isinstance(stored, dict) and "p" not in stored else None
    third = engine.onlooker_words.get(template) if template is not None else None
    if third is None:
        return Said(text, stored)
    told = engine_text.load(stored)
    player = names[0] if len(names) == 1 else engine_text.join(names)
    return Said(engine_text._(str(third), **told.args, player=player))


def prompt_data(written: dict[str, Any], prompt: Any) -> dict[str, Any]:
    """A prompt as a step stores it (``written``), with how the engine made its kind and
    hint when it did ("words")."""
    made = {key: message(getattr(prompt, key)) for key in ("kind", "hint")}
    made = {key: value for key, value in made.items() if value is not None}
    return {**written, "words": made} if made else written


def prompt_list(prompts: list[Prompt]) -> list[dict[str, Any]]:
    """What a step stores of the prompts it owes: each as plain JSON (what
    ``dataclasses.asdict`` writes, without its deep copy: an order makes the list twice),
    with how the engine made its words."""
    write = encoder(Prompt)
    return [prompt_data(write(prompt), prompt) for prompt in prompts]


def owed(prompts: list[dict[str, Any]], position: int) -> list[dict[str, Any]]:
    """The prompts of ``position`` among a step's stored ``prompts``, their kind and hint
    said in the language active where they are shown."""
    out = []
    for prompt in prompts:
        if prompt["seat"] != position:
            continue
        made = prompt.get("words", {})
        out.append(
            {
                **prompt,
                "kind": Said(prompt["kind"], made.get("kind")),
                "hint": Said(prompt["hint"], made.get("hint")),
            }
        )
    return out


def shown(view: Any) -> Any:
    """An engine's view (dicts, lists, tuples of plain values) with each of its words said
    in the language of the page or email it is shown in; as it is in English."""
    language = translation.get_language() or "en"
    if language.partition("-")[0] == "en":
        return view
    return _shown(view)


def _shown(value: Any) -> Any:
    if isinstance(value, engine_text.Text):
        return Said(value)
    if isinstance(value, dict):
        return {key: _shown(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shown(item) for item in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_shown(item) for item in value)
    return value


# What a step is called on the players' pages and in their emails, by the word its game
# uses for it (``Engine.step_word``): "postal turn 5", not "step 5".
STEP_NAMES = {
    "postal turn": gettext_lazy("postal turn %(number)d"),
    "turn": gettext_lazy("turn %(number)d"),
    "round": gettext_lazy("round %(number)d"),
}


# The open step in a sentence that names no number, said the way a time is ("You owe no
# order this postal turn"): a language whose words for the steps differ in gender or case
# says the whole phrase ("in dieser Runde").
THIS_STEP = {
    # Translators: when, as in "You owe no order this postal turn".
    "postal turn": gettext_lazy("this postal turn"),
    # Translators: when, as in "You owe no order this turn".
    "turn": gettext_lazy("this turn"),
    # Translators: when, as in "You owe no order this round".
    "round": gettext_lazy("this round"),
}

# Every step, said the way a time is ("You get this game's reports every postal turn").
EVERY_STEP = {
    # Translators: when, as in "You get this game's reports every postal turn".
    "postal turn": gettext_lazy("every postal turn"),
    # Translators: when, as in "You get this game's reports every turn".
    "turn": gettext_lazy("every turn"),
    # Translators: when, as in "You get this game's reports every round".
    "round": gettext_lazy("every round"),
}


def step_words(word: str, number: int) -> engine_text.Text:
    """Step ``number`` as its game calls it, as words a stored line keeps ("The GM resolved
    postal turn 3 early"), said again in each reader's language."""
    if word == "turn":
        return engine_text._("turn %(number)d", number=number)
    if word == "round":
        return engine_text._("round %(number)d", number=number)
    return engine_text._("postal turn %(number)d", number=number)


# Lines stored before they named a step by its game's word: records keep them, and a reader
# in another language still gets them said in theirs.
EARLIER_LINES = (
    gettext_noop("The GM resolved step %(number)d early"),
    gettext_noop("The GM rolled back step %(number)d: %(reason)s"),
    gettext_noop("The GM rolled back step %(number)d"),
    gettext_noop("%(name)s is away until %(day)s: the deadline of step %(step)d waits for them"),
    gettext_noop(
        "%(name)s missed the deadline of step %(step)d and used an automatic extension "
        "(%(left)s left): the deadline moved by %(hours)s"
    ),
)


def step_name(word: str, number: int) -> str:
    """Step ``number`` as its game calls it (``word``: "postal turn", "turn" or "round")."""
    return str(STEP_NAMES.get(word, STEP_NAMES["postal turn"])) % {"number": number}


def this_step(word: str) -> str:
    """The open step, as its game calls it, said as a time: "this postal turn"."""
    return str(THIS_STEP.get(word, THIS_STEP["postal turn"]))


def every_step(word: str) -> str:
    """Every step, as its game calls them, said as a time: "every postal turn"."""
    return str(EVERY_STEP.get(word, EVERY_STEP["postal turn"]))
