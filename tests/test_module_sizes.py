"""Sizes a person can read (docs/architecture.md): no module outside the engines' rules
is longer than 800 lines. A module that grows past it is split by what it does, as
``games.community.signups`` (changes) and ``games.community.openings`` (queries) were."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 800


def test_no_module_outside_the_engines_is_over_800_lines() -> None:
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text().splitlines())
        for package in ("games", "campaigns", "moderator")
        for path in (ROOT / package).rglob("*.py")
        if "migrations" not in path.parts
        and not path.relative_to(ROOT).as_posix().startswith("games/engines/")
    }
    assert len(sizes) > 100
    assert {name: lines for name, lines in sizes.items() if lines > LIMIT} == {}
