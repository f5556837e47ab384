"""A game's pure modules stay pure: its rules, menus and autopilot import the standard
library, the engine contract (games.engines.base, its words games.engines.text), the dice
(games.engines.dice) and their own game's modules, nothing else: no Django, no database, no
other room of games/ (docs/architecture.md). import-linter checks the rooms in `make check`;
this test names the modules, so that a new pure module is counted and an impure import is
named with its line."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ENGINES = Path(__file__).resolve().parents[3] / "games" / "engines"

# Every pure module of the engines, by path under games/engines/.
PURE = [
    "base.py",
    "colours.py",
    "dice.py",
    "registry.py",
    "text.py",
    "choice/autopilot.py",
    "choice/menus.py",
    "choice/rules.py",
    "dice_survivor/autopilot.py",
    "dice_survivor/conditions.py",
    "dice_survivor/rules.py",
    "drop_shy/autopilot.py",
    "drop_shy/conditions.py",
    "drop_shy/rules.py",
    "first_player/rules.py",
    "liars_dice/autopilot.py",
    "liars_dice/conditions.py",
    "liars_dice/rules.py",
]
# A game's modules that are not pure: its order form (Django's forms).
NOT_PURE = {"forms.py", "__init__.py"}
CONTRACT = {"games.engines.base", "games.engines.dice", "games.engines.text"}


def imported(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            # "from games.engines import text" imports the module games.engines.text;
            # "from games.engines.base import Engine", the module games.engines.base.
            found += [(node.lineno, module_of(node.module, alias.name)) for alias in node.names]
    return found


def module_of(module: str, name: str) -> str:
    if module.startswith("games."):
        under = ENGINES.parent.parent / module.replace(".", "/") / name
        if under.with_suffix(".py").exists() or (under / "__init__.py").exists():
            return f"{module}.{name}"
    return module


def allowed(module: str, name: str) -> bool:
    top = name.split(".")[0]
    if top in sys.stdlib_module_names or top == "__future__":
        return True
    if name in CONTRACT or any(name.startswith(f"{c}.") for c in CONTRACT):
        return True
    own = module.rsplit(".", 1)[0]
    if module.startswith("games.engines.") and own != "games.engines":
        return name == own or name.startswith(f"{own}.")
    # The registry lists every game: it may import each game's rules, autopilot and
    # conditional orders.
    if module == "games.engines.registry":
        return name.startswith("games.engines.") and name.rsplit(".", 1)[-1] in {
            "rules",
            "autopilot",
            "conditions",
        }
    return False


def test_the_pure_modules_are_every_module_of_the_engines_but_the_forms() -> None:
    found = sorted(
        str(path.relative_to(ENGINES))
        for path in ENGINES.rglob("*.py")
        if path.name not in NOT_PURE
    )
    assert found == sorted(PURE)


def test_a_pure_module_imports_only_the_contract_the_dice_and_its_own_game() -> None:
    impure = []
    for relative in PURE:
        path = ENGINES / relative
        module = "games.engines." + relative.removesuffix(".py").replace("/", ".")
        for line, name in imported(path):
            if not allowed(module, name):
                impure.append(f"games/engines/{relative}:{line} imports {name}")
    assert impure == []


def test_the_purity_check_names_an_impure_import() -> None:
    assert not allowed("games.engines.choice.rules", "django.db")
    assert not allowed("games.engines.choice.rules", "games.models")
    assert not allowed("games.engines.choice.rules", "games.engines.liars_dice.rules")
    assert allowed("games.engines.choice.autopilot", "games.engines.choice.rules")
    assert allowed("games.engines.choice.rules", "games.engines.text")
