"""The project's message catalogue, locale/<language>/LC_MESSAGES/django.po and its compiled
django.mo, and the check ``manage.py checkmessages`` makes of it (docs/languages.md): every
string the code marks for translation is in the catalogue and translated (no empty
``msgstr``, nothing fuzzy), and the committed .mo says what the .po says.

The .po is read here, not by a library: the format is a few keywords and C strings. The
.mo is compared by what it holds (each message and its translation), not byte for byte:
two versions of GNU msgfmt may lay out the same catalogue differently.
"""

from __future__ import annotations

import re
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

# What makemessages reads for the service's catalogue (locale/): the templates and the
# apps, not the virtual environment (hidden, like every name starting with "."), the
# tests, the benchmarks, the run-time files, the catalogues themselves, nor the game
# engines, which keep their words in their own catalogues (``catalogues``).
IGNORED = ["tests", "bench", "var", "locale", "docker", "docs", "games/engines"]
# The same options each time, so that the catalogue changes only when the strings do: file
# names without line numbers (a line moved changes nothing), no obsolete entries.
MAKEMESSAGES = {
    "no_obsolete": True,
    "add_location": "file",
    "extensions": ["html", "txt", "py"],
}


@dataclass(frozen=True)
class Catalogue:
    """A catalogue, ``locale`` (holding <language>/LC_MESSAGES/django.po), of the strings
    that makemessages finds under ``root``, leaving out ``ignored``."""

    root: Path
    ignored: tuple[str, ...]

    @property
    def locale(self) -> Path:
        return self.root / "locale"


def catalogues(base: Path) -> list[Catalogue]:
    """Every catalogue of the project: the service's (locale/), each game's
    (games/engines/<game>/locale) and the one of the words the games share
    (games/engines/locale, from the engines' own files)."""
    engines = base / "games" / "engines"
    games = sorted(path.parent for path in engines.glob("*/locale"))
    return [
        Catalogue(base, tuple(IGNORED)),
        *(Catalogue(game, ("locale",)) for game in games),
        Catalogue(engines, ("locale", *(game.name for game in games))),
    ]


@dataclass(frozen=True)
class Entry:
    """One message of a .po file: its context, its text (and plural) and translations."""

    context: str | None
    msgid: str
    plural: str | None
    strings: tuple[str, ...]
    fuzzy: bool = False

    @property
    def key(self) -> tuple[str | None, str, str | None]:
        return self.context, self.msgid, self.plural

    @property
    def untranslated(self) -> bool:
        return not self.strings or any(not text for text in self.strings)


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "a": "\a", "b": "\b"}
_ESCAPE = re.compile(r"\\(.)")
_KEYWORD = re.compile(r'^(msgctxt|msgid_plural|msgid|msgstr(?:\[\d+\])?)\s+"(.*)"$')


def _unquote(text: str) -> str:
    return _ESCAPE.sub(lambda match: _ESCAPES.get(match[1], match[1]), text)


def read_po(text: str) -> list[Entry]:
    """The entries of a .po file, the header (msgid "") and obsolete ones (#~) left out."""
    entries = []
    for block in re.split(r"\n\s*\n", text):
        lines = [line.strip() for line in block.strip().splitlines()]
        if not lines or all(line.startswith("#") for line in lines):
            continue
        fields: dict[str, str] = {}
        fuzzy = False
        current = ""
        for line in lines:
            if line.startswith("#,"):
                fuzzy = fuzzy or "fuzzy" in (flag.strip() for flag in line[2:].split(","))
            elif line.startswith("#"):
                continue
            elif match := _KEYWORD.match(line):
                current = match[1]
                fields[current] = _unquote(match[2])
            elif line.startswith('"') and line.endswith('"') and current:
                fields[current] += _unquote(line[1:-1])
            else:
                raise ValueError(f"not a line of a .po file: {line!r}")
        if "msgid" not in fields or fields["msgid"] == "":
            continue
        strings = tuple(
            value
            for name, value in sorted(fields.items(), key=lambda item: _plural_index(item[0]))
            if name.startswith("msgstr")
        )
        entries.append(
            Entry(
                fields.get("msgctxt"), fields["msgid"], fields.get("msgid_plural"), strings, fuzzy
            )
        )
    return entries


def _plural_index(name: str) -> int:
    match = re.fullmatch(r"msgstr\[(\d+)\]", name)
    return int(match[1]) if match else 0


def problems(entries: list[Entry]) -> list[str]:
    """What is wrong with a catalogue's entries, one line each: untranslated or fuzzy."""
    found = []
    for entry in entries:
        if entry.fuzzy:
            found.append(f"fuzzy (check the translation, then remove the flag): {entry.msgid!r}")
        elif entry.untranslated:
            found.append(f"not translated: {entry.msgid!r}")
    return found


def out_of_step(committed: list[Entry], extracted: list[Entry]) -> list[str]:
    """The strings the code marks that the committed catalogue lacks, and those it holds
    that the code no longer marks."""
    have = {entry.key for entry in committed}
    want = {entry.key for entry in extracted}
    return [f"not in the catalogue: {key[1]!r}" for key in sorted(want - have, key=str)] + [
        f"no longer in the code: {key[1]!r}" for key in sorted(have - want, key=str)
    ]


def read_mo(data: bytes) -> dict[bytes, bytes]:
    """Each message of a compiled catalogue (.mo) and its translation, as stored."""
    if len(data) < 20:
        raise ValueError("not a .mo file: too short")
    magic = struct.unpack("<I", data[:4])[0]
    order = "<" if magic == 0x950412DE else ">" if magic == 0xDE120495 else ""
    if not order:
        raise ValueError("not a .mo file: wrong magic number")
    _, count, originals, translations = struct.unpack(f"{order}4I", data[4:20])
    catalogue = {}
    for index in range(count):
        length, start = struct.unpack(
            f"{order}2I", data[originals + 8 * index : originals + 8 * index + 8]
        )
        message = data[start : start + length]
        length, start = struct.unpack(
            f"{order}2I", data[translations + 8 * index : translations + 8 * index + 8]
        )
        catalogue[message] = data[start : start + length]
    return catalogue


def compile_po(po: Path, mo: Path) -> None:
    """``po`` compiled to ``mo`` by GNU msgfmt, as compilemessages does; CalledProcessError
    with msgfmt's complaint for a .po it refuses (a broken placeholder, say)."""
    subprocess.run(
        ["msgfmt", "--check-format", "-o", str(mo), str(po)],
        check=True,
        capture_output=True,
        text=True,
    )


def stale_mo(po: Path, mo: Path) -> bool:
    """Whether the committed ``mo`` says something else than ``po`` compiled now."""
    if not mo.exists():
        return True
    with tempfile.TemporaryDirectory() as folder:
        fresh = Path(folder) / "django.mo"
        compile_po(po, fresh)
        return read_mo(fresh.read_bytes()) != read_mo(mo.read_bytes())
