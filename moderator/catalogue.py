"""The project's message catalogue, locale/<language>/LC_MESSAGES/django.po and its compiled
django.mo, and the check ``manage.py checkmessages`` makes of it (docs/languages.md): every
string the code marks for translation is in the catalogue and translated (no empty
``msgstr``, nothing fuzzy), and the committed .mo says what the .po says.

Both are read by polib. The .mo is compared by what it holds (its header and each message
with its translations), not byte for byte: two versions of GNU msgfmt may lay out the same
catalogue differently.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import polib

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


def entries(po: str | Path) -> list[polib.POEntry]:
    """The entries of a .po file (its path or its text), without the header (msgid "")
    and the obsolete ones (#~)."""
    return [entry for entry in polib.pofile(str(po)) if not entry.obsolete]


def _key(entry: polib.POEntry | polib.MOEntry) -> tuple[str | None, str, str]:
    return entry.msgctxt, entry.msgid, entry.msgid_plural


def problems(entries: Iterable[polib.POEntry]) -> list[str]:
    """What is wrong with a catalogue's entries, one line each: untranslated (an empty
    translation, a plural's forms included) or fuzzy."""
    found = []
    for entry in entries:
        if entry.fuzzy:
            found.append(f"fuzzy (check the translation, then remove the flag): {entry.msgid!r}")
        elif not entry.translated():
            found.append(f"not translated: {entry.msgid!r}")
    return found


def out_of_step(
    committed: Iterable[polib.POEntry], extracted: Iterable[polib.POEntry]
) -> list[str]:
    """The strings the code marks that the committed catalogue lacks, and those it holds
    that the code no longer marks."""
    have = {_key(entry) for entry in committed}
    want = {_key(entry) for entry in extracted}
    return [f"not in the catalogue: {key[1]!r}" for key in sorted(want - have, key=str)] + [
        f"no longer in the code: {key[1]!r}" for key in sorted(have - want, key=str)
    ]


def compiled(mo: Path) -> tuple[dict[str, str], set[tuple[object, ...]]]:
    """What a compiled catalogue (.mo) holds: its header, and each message with its
    translations."""
    catalogue = polib.mofile(str(mo))
    return catalogue.metadata, {
        (*_key(entry), entry.msgstr, tuple(sorted(entry.msgstr_plural.items())))
        for entry in catalogue
    }


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
        return compiled(fresh) != compiled(mo)
