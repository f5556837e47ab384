"""Names and messages others read keep the direction their writer typed. Unicode's
bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069) are
invisible and turn the text after them around: a name ``ann\\u202egnp.exe`` shows as
``annexe.png``, a message can show an order or a score other than the one written. Every
name, title and message is refused with ``refusal``'s words when it holds one. The marks
U+200E, U+200F and U+061C are kept: they only set the direction of what is next to them,
and right-to-left writers need them."""

from __future__ import annotations

import unicodedata

from django.utils.translation import gettext

CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def first_control(value: str) -> str | None:
    """The first embedding, override or isolate in ``value``, or None."""
    return next((char for char in value if char in CONTROLS), None)


def refusal(value: str, what: str) -> str | None:
    """Why ``value`` (``what``: "the name", "the title", "the message", in the reader's
    words) is refused, or None when it holds no embedding, override or isolate."""
    char = first_control(value)
    if char is None:
        return None
    return gettext(
        "%(what)s holds an invisible character that changes the direction of the text "
        "(U+%(code)04X %(name)s): delete it and write it again"
    ) % {"what": what, "code": ord(char), "name": unicodedata.name(char)}
