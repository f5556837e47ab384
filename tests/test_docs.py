"""The docs name code that exists: every path of the project's code that a page of docs/
or the README names in backquotes is a file or folder of the tree (or a template), and
every dotted name of games, campaigns or moderator names a module or one of its attributes
(or a task, or a system check). A stale name points a reader at code that is gone.
docs/performance.md is left out: a dated record of measurements, it names the code as it
was when each was taken."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

BASE = Path(__file__).resolve().parent.parent
PAGES = sorted(
    [*(p for p in (BASE / "docs").glob("*.md") if p.name != "performance.md"), BASE / "README.md"]
)
CHECK = re.compile(r"^moderator\.[EW]\d{3}$")
CODE = re.compile(r"`([^`\n]+)`")
PATH = re.compile(r"^(?:games|campaigns|moderator|tests|bench|templates)/[\w./<>-]*$")
DOTTED = re.compile(r"^(?:games|campaigns|moderator)(?:\.\w+)+$")


def named(page: Path) -> list[str]:
    return [text for text in CODE.findall(page.read_text(encoding="utf-8"))]


def exists(path: str) -> bool:
    if "<" in path:  # a pattern: games/engines/<game>/ stands for every game's folder
        pattern = re.sub(r"<[^>]+>", "*", path.rstrip("/"))
        return any(BASE.glob(pattern))
    return any((base / path.rstrip("/")).exists() for base in (BASE, BASE / "templates"))


def resolves(dotted: str) -> bool:
    from moderator.celery import app

    if dotted in app.tasks or CHECK.match(dotted):
        return True
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


def test_every_path_the_docs_name_exists() -> None:
    missing = [
        f"{page.name}: {text}"
        for page in PAGES
        for text in named(page)
        for path in text.split()
        if PATH.match(path) and not exists(path)
    ]
    assert missing == []


def test_every_dotted_name_the_docs_give_resolves() -> None:
    missing = [
        f"{page.name}: {text}"
        for page in PAGES
        for text in named(page)
        if DOTTED.match(text) and not resolves(text)
    ]
    assert missing == []
