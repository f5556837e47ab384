"""``manage.py checkmessages``: whether the message catalogue of every language but English
is complete and compiled (docs/languages.md). ``make check`` runs it; it needs GNU gettext
(xgettext, msgmerge, msgfmt).

It runs ``makemessages`` into a temporary copy of each committed .po (the working tree is
left alone) and fails when the code marks a string the catalogue lacks or the catalogue
holds one the code no longer marks, when an entry is untranslated or fuzzy, or when the
committed .mo says something else than its .po. ``--write`` updates the committed .po and
compiles its .mo first, the way to bring them in step: then translate what it lists.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.test import override_settings

from moderator import catalogue


class Command(BaseCommand):
    help = "Check that the message catalogues are complete, translated and compiled."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--write",
            action="store_true",
            help="update the committed catalogues from the code and compile them first",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        base = Path(settings.BASE_DIR)
        languages = [code for code, _ in settings.LANGUAGES if code != settings.LANGUAGE_CODE]
        found = []
        for each in catalogue.catalogues(base):
            for language in languages:
                po = each.locale / language / "LC_MESSAGES" / "django.po"
                mo = po.with_suffix(".mo")
                if options["write"]:
                    _makemessages(each, each.locale, language)
                    catalogue.compile_po(po, mo)
                where = po.relative_to(base)
                found += [f"{where}: {line}" for line in self._check(each, language, po, mo)]
        if found:
            raise CommandError(
                "the message catalogues are not complete (make messages, then translate):\n"
                + "\n".join(found)
            )
        self.stdout.write(f"The catalogues of {', '.join(languages)} are complete.")

    def _check(self, each: catalogue.Catalogue, language: str, po: Path, mo: Path) -> list[str]:
        if not po.exists():
            return ["no catalogue"]
        committed = catalogue.entries(po)
        # The copy lies right inside the catalogue's root, hidden: makemessages writes a
        # file's strings to the first catalogue whose folder holds the file, and leaves
        # hidden folders unread.
        with tempfile.TemporaryDirectory(dir=each.root, prefix=".catalogue-") as folder:
            copy = Path(folder) / language / "LC_MESSAGES" / "django.po"
            copy.parent.mkdir(parents=True)
            shutil.copyfile(po, copy)
            _makemessages(each, Path(folder), language)
            extracted = catalogue.entries(copy)
        found = catalogue.out_of_step(committed, extracted) + catalogue.problems(committed)
        try:
            if catalogue.stale_mo(po, mo):
                found.append("django.mo is not the compiled django.po (make messages)")
        except subprocess.CalledProcessError as error:
            found.append(f"msgfmt refuses django.po: {error.stderr.strip()}")
        return found


def _makemessages(each: catalogue.Catalogue, locale: Path, language: str) -> None:
    """makemessages for ``language`` of the strings under ``each.root`` into the catalogue
    under ``locale`` (the committed one, or a copy), with ``catalogue.MAKEMESSAGES``."""
    here = Path.cwd()
    os.chdir(each.root)
    try:
        with override_settings(LOCALE_PATHS=[locale]):
            call_command(
                "makemessages",
                locale=[language],
                verbosity=0,
                ignore_patterns=list(each.ignored),
                **catalogue.MAKEMESSAGES,
            )
    finally:
        os.chdir(here)
