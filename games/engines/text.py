"""The games' words: English that remembers how it was made, to be said again in another
language.

An engine writes ``_("%(name)s rolls %(dice)s", name=name, dice=dice)``. The value is the
English text, a ``str`` like any other (tests, records and logs read it as before), and it
carries its template and arguments: ``data`` turns it into plain JSON, which the service
stores beside the English (``Event.message``) and ``render`` says again with any language's
``gettext`` (``games.lib.words`` passes Django's). ``_`` and ``ngettext`` are the names
``xgettext`` looks for, so ``makemessages`` finds every template in a game's home and writes
it to the game's own catalogue (``games/engines/<game>/locale``).

An argument is said in the reader's language when it is a ``Text`` itself (a face's name,
a list made by ``join``); names, numbers and plain strings are said as they are. Nothing
here imports Django: the engines stay pure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

JSON = Any
Gettext = Callable[[str], str]
Ngettext = Callable[[str, str, int], str]


class Text(str):
    """English text with its template (``_``), its plural (``ngettext``) or its parts
    (``join``). Compares, hashes and formats as the English ``str``."""

    template: str | None
    plural: str | None
    number: int | None
    args: dict[str, Any]
    parts: tuple[Any, ...]
    separator: Any

    def data(self) -> JSON:
        """The text as plain JSON for ``render``: {"t": template, "a": arguments} (with
        "p" and "n" for a plural) or {"j": separator, "i": parts}."""
        if self.template is None:
            return {"j": data(self.separator), "i": [data(part) for part in self.parts]}
        out: dict[str, JSON] = {"t": self.template}
        if self.plural is not None:
            out |= {"p": self.plural, "n": self.number}
        if self.args:
            out["a"] = {key: data(value) for key, value in self.args.items()}
        return out


def _text(english: str, **fields: Any) -> Text:
    text = Text(english)
    text.template, text.plural, text.number = None, None, None
    text.args, text.parts, text.separator = {}, (), ""
    for key, value in fields.items():
        setattr(text, key, value)
    return text


def _(template: str, **args: Any) -> Text:
    """``template`` (a literal, for xgettext) with ``%(name)s`` filled from ``args``."""
    return _text(template % args if args else template, template=template, args=args)


def ngettext(singular: str, plural: str, count: int, **args: Any) -> Text:
    """The English ``singular`` when ``count`` is 1, else ``plural``; ``%(count)d`` and the
    other ``args`` filled in. Other languages choose by their own plural rule."""
    args = {"count": count, **args}
    english = (singular if count == 1 else plural) % args
    return _text(english, template=singular, plural=plural, number=count, args=args)


def join(parts: Iterable[Any], separator: str = ", ") -> Text:
    """``parts`` joined by ``separator``, each said in the reader's language."""
    parts = tuple(parts)
    return _text(separator.join(str(part) for part in parts), parts=parts, separator=separator)


# No words yet (a value to fill in later): says nothing in every language.
EMPTY: Text = join((), "")


def load(value: JSON) -> Any:
    """The words ``data`` wrote, as the ``Text`` they were: a state keeps its words this way
    (a field hinted ``Text``, games.engines.base's codec). Anything else is returned as it
    is: plain English written before the words were kept, a name, a number."""
    if not isinstance(value, dict):
        return value
    if "j" in value:
        return join((load(part) for part in value["i"]), load(value["j"]))
    args = {key: load(arg) for key, arg in value.get("a", {}).items()}
    if "p" in value:
        args.pop("count", None)  # ngettext puts the number there itself
        return ngettext(value["t"], value["p"], value["n"], **args)
    return _(value["t"], **args)


def data(value: Any) -> JSON:
    """``value`` as plain JSON: a Text's structure, a number as it is, anything else its
    string."""
    if isinstance(value, Text):
        return value.data()
    if isinstance(value, bool | int | float) or value is None:
        return value
    return str(value)


def render(value: JSON, gettext: Gettext, ngettext: Ngettext) -> str:
    """Say ``value`` (``data``'s JSON) with these translation functions."""
    if not isinstance(value, dict):
        return "" if value is None else str(value)
    if "j" in value:
        separator = render(value["j"], gettext, ngettext)
        return separator.join(render(part, gettext, ngettext) for part in value["i"])
    template = value["t"]
    said = ngettext(template, value["p"], value["n"]) if "p" in value else gettext(template)
    args = value.get("a")
    if not args:
        return said
    return said % {key: _argument(arg, gettext, ngettext) for key, arg in args.items()}


def _argument(value: JSON, gettext: Gettext, ngettext: Ngettext) -> Any:
    # Numbers stay numbers, for the templates' %(count)d.
    if isinstance(value, bool | int | float):
        return value
    return render(value, gettext, ngettext)
