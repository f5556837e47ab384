"""Charsets mail programs name that Python does not know, so that an email written in one
is read rather than refused (a ``LookupError`` deep in the email package or anymail).

- ``iso-8859-8-i`` (logical-order Hebrew) is ``iso-8859-8``, ``x-mac-roman`` is
  ``mac-roman``, ``windows-874`` is ``cp874``: the same bytes, another name;
- ``unknown-8bit`` (what a server writes when it does not know) and ``x-user-defined``
  (bytes as they are) are read as UTF-8, any byte that is not replaced with U+FFFD.

``register()`` (the mail app's ``ready``) adds them to Python's codec search, so every
decoder finds them: the email package's, anymail's and ``reading``'s. ``decode()`` reads
bytes in any charset named, one Python does not know at all as UTF-8 with replacement.
"""

from __future__ import annotations

import codecs
from typing import Any

ALIASES = {
    "iso-8859-8-i": "iso-8859-8",
    "iso_8859-8-i": "iso-8859-8",
    "iso-8859-6-i": "iso-8859-6",
    "iso-8859-6-e": "iso-8859-6",
    "iso-8859-8-e": "iso-8859-8",
    "x-mac-roman": "mac-roman",
    "x-mac-cyrillic": "mac-cyrillic",
    "x-mac-greek": "mac-greek",
    "x-mac-turkish": "mac-turkish",
    "x-mac-iceland": "mac-iceland",
    "windows-874": "cp874",
}
# Named charsets that say nothing of the bytes: read as UTF-8, replacing what is not.
UNKNOWN = frozenset({"unknown-8bit", "x-user-defined", "unknown"})


def _replacing_utf8(name: str) -> codecs.CodecInfo:
    utf8 = codecs.lookup("utf-8")

    def decode(data: Any, errors: str = "strict") -> tuple[str, int]:
        return codecs.utf_8_decode(data, "replace", True)

    class Decoder(codecs.IncrementalDecoder):
        def decode(self, data: bytes, final: bool = False) -> str:  # type: ignore[override]
            return codecs.utf_8_decode(data, "replace", final)[0]

    return codecs.CodecInfo(
        name=name,
        encode=utf8.encode,
        decode=decode,
        incrementalencoder=utf8.incrementalencoder,
        incrementaldecoder=Decoder,
        streamreader=utf8.streamreader,
        streamwriter=utf8.streamwriter,
    )


def _search(name: str) -> codecs.CodecInfo | None:
    key = name.strip().lower().replace("_", "-")
    if key in ALIASES or name.strip().lower() in ALIASES:
        return codecs.lookup(ALIASES.get(key) or ALIASES[name.strip().lower()])
    if key in UNKNOWN:
        return _replacing_utf8(key)
    return None


_registered = False


def register() -> None:
    """Add the charsets above to Python's codec search (once per process)."""
    global _registered
    if not _registered:
        codecs.register(_search)
        _registered = True


def decode(data: bytes, charset: str | None) -> str:
    """``data`` as text in ``charset``; a charset Python does not know is read as UTF-8,
    and a byte the charset has no character for is replaced, never an error."""
    try:
        codec = codecs.lookup(charset or "utf-8").name
    except LookupError:
        codec = "utf-8"
    return data.decode(codec, errors="replace")
