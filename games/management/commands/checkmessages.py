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
        root = Path(settings.LOCALE_PATHS[0])
        languages = [code for code, _ in settings.LANGUAGES if code != settings.LANGUAGE_CODE]
        found = []
        for language in languages:
            po = root / language / "LC_MESSAGES" / "django.po"
            mo = po.with_suffix(".mo")
            if options["write"]:
                _makemessages(root, language)
                catalogue.compile_po(po, mo)
            found += [f"{language}: {line}" for line in self._check(root, language, po, mo)]
        if found:
            raise CommandError(
                "the message catalogues are not complete (make messages, then translate):\n"
                + "\n".join(found)
            )
        self.stdout.write(f"The catalogues of {', '.join(languages)} are complete.")

    def _check(self, root: Path, language: str, po: Path, mo: Path) -> list[str]:
        if not po.exists():
            return [f"no catalogue at {po.relative_to(settings.BASE_DIR)}"]
        committed = catalogue.read_po(po.read_text(encoding="utf-8"))
        with tempfile.TemporaryDirectory() as folder:
            copy = Path(folder) / language / "LC_MESSAGES" / "django.po"
            copy.parent.mkdir(parents=True)
            shutil.copyfile(po, copy)
            _makemessages(Path(folder), language)
            extracted = catalogue.read_po(copy.read_text(encoding="utf-8"))
        found = catalogue.out_of_step(committed, extracted) + catalogue.problems(committed)
        try:
            if catalogue.stale_mo(po, mo):
                found.append("django.mo is not the compiled django.po (make messages)")
        except subprocess.CalledProcessError as error:
            found.append(f"msgfmt refuses django.po: {error.stderr.strip()}")
        return found


def _makemessages(locale: Path, language: str) -> None:
    """makemessages for ``language`` into the catalogue under ``locale``, from the project's
    folder, with the options of ``catalogue.MAKEMESSAGES``."""
    here = Path.cwd()
    os.chdir(settings.BASE_DIR)
    try:
        with override_settings(LOCALE_PATHS=[locale]):
            call_command("makemessages", locale=[language], verbosity=0, **catalogue.MAKEMESSAGES)
    finally:
        os.chdir(here)
