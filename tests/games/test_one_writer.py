"""One writer: nothing outside ``games/postal/`` (and ``campaigns/postal.py``, the campaigns'
own writer) assigns the state of a game, a seat or a step. The test reads every other module
of ``games/`` and ``campaigns/`` (not ``games/models/``, which defines the rows, nor the
migrations) with ``ast`` and names, file:line, each write it finds to a Game, Seat or Step row.

What counts as a write, and how a row is recognised, is a heuristic, deliberately plain:

- A *row* is a name that says so: ``game``, ``seat``, ``step``, or one ending in ``_game``,
  ``_seat``, ``_step`` (``old_seat``), also as an attribute (``self.game``, ``order.seat``);
  an element of rows (``seats[0]``); a name assigned in the same function from
  ``Seat(...)`` or from rows' ``get``/``first``/``last``/``latest``/``earliest``; or a name
  annotated ``Game``, ``Seat`` or ``Step`` in its function. A name annotated there with any
  other type (``step: PastStep``) is not a row, whatever it is called.
- *Rows*, a query or a manager of them, are ``Game.objects``, ``Seat.objects``,
  ``Step.objects``; a name that says so (``seats``, ``steps``, ``open_games``, and
  ``seats_of(...)``'s like), also as an attribute (``game.seats``); those filtered
  (``filter``, ``exclude``, ``select_for_update``...); a name assigned in the same function
  from any of these; or a name annotated ``QuerySet[Seat]``, ``dict[int, Game]`` or the like.
- A *write* is an assignment, plain or augmented, to a row's database field (an attribute
  that is not a field, such as ``game.seat_names`` for a page, never reaches the row);
  ``setattr`` on a row; a row's ``save(`` or ``delete(``; and rows' ``update(``,
  ``create(``, ``bulk_create(``, ``bulk_update(``, ``get_or_create(``,
  ``update_or_create(`` or ``delete(``.

``EXCEPTIONS`` lists the writes outside the writers that are not the game's state, each
with its reason; an exception that no longer matches anything fails the test too."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from django.db import models

from games.models import Game, Seat, Step

ROOT = Path(__file__).resolve().parents[2]
WRITERS = ("games/postal/", "campaigns/postal.py", "games/models/")
MODELS: dict[str, type[models.Model]] = {"game": Game, "seat": Seat, "step": Step}
ROW_NAME = re.compile(r"^(?:\w+_)?(game|seat|step)$")
ROWS_NAME = re.compile(r"^(?:\w+_)?(game|seat|step)s(?:_of)?$")
QUERY_METHODS = {
    "all",
    "alias",
    "annotate",
    "defer",
    "distinct",
    "exclude",
    "filter",
    "none",
    "only",
    "order_by",
    "prefetch_related",
    "reverse",
    "select_for_update",
    "select_related",
    "using",
}
ROW_METHODS = {"get", "first", "last", "latest", "earliest"}
ROWS_WRITES = {
    "update",
    "create",
    "bulk_create",
    "bulk_update",
    "get_or_create",
    "update_or_create",
    "delete",
}

# (file, function, what is written) -> why it is not the game's state.
_RATED_AT = (
    "Game.rated_at is the ratings' own mark that a finished game's result went into them "
    "(a conditional UPDATE claims the game, so it counts once): only games.community.ratings "
    "reads it, and neither the game's play nor its pages do"
)
_REMIND_AT = (
    "Step.remind_at is the reminders' own mark of when their sweep looks at an open step "
    "next: only games.notify.reminders reads it, and neither the game's play nor its pages do"
)
EXCEPTIONS: dict[tuple[str, str, str], str] = {
    (
        "games/community/ratings.py",
        "rate_game",
        "Game.objects.filter(pk=game.pk, rated_at__isnull=True).update(rated_at)",
    ): _RATED_AT,
    ("games/community/ratings.py", "rate_game", "game.rated_at ="): (
        "the claim above mirrored on the instance in memory, so a later save of it keeps the mark"
    ),
    (
        "games/community/ratings.py",
        "rerate",
        "finished.filter(rated=True, rated_at__isnull=True).update(rated_at)",
    ): _RATED_AT,
    (
        "games/community/ratings.py",
        "rerate",
        "finished.filter(rated=False).exclude(rated_at=None).update(rated_at)",
    ): _RATED_AT,
    (
        "games/notify/reminders.py",
        "_remind_next",
        "Step.objects.filter(pk__in=free).update(remind_at)",
    ): _REMIND_AT,
    (
        "games/notify/reminders.py",
        "remind_again",
        "Step.objects.filter(wanted, status=Step.Status.OPEN).update(remind_at)",
    ): _REMIND_AT,
    ("games/notify/reminders.py", "_seats", "seat.game ="): (
        "hands each seat the game it already belongs to, read once for all the reminders, "
        "so building them reads no game again; never saved"
    ),
}


@dataclass(frozen=True)
class Kind:
    """What a name or an expression is: one row or rows of ``model`` (``game``, ``seat``,
    ``step``); ``model`` "" when it is known not to be a row."""

    model: str
    many: bool = False


NOT_A_ROW = Kind("")


@dataclass(frozen=True)
class Write:
    path: str
    line: int
    function: str
    what: str

    @property
    def key(self) -> tuple[str, str, str]:
        return self.path, self.function, self.what

    def __str__(self) -> str:
        return f"{self.path}:{self.line} in {self.function}: {self.what}"


def fields(model: str) -> set[str]:
    """The names an assignment to which changes ``model``'s row when saved."""
    concrete = MODELS[model]._meta.concrete_fields
    return {field.name for field in concrete} | {field.attname for field in concrete}


def annotated(annotation: ast.expr | None) -> Kind | None:
    """The kind an annotation gives its name: a row, rows, or not a row."""
    if annotation is None:
        return None
    text = ast.unparse(annotation)
    for model, cls in MODELS.items():
        name = cls.__name__
        if re.search(rf"[\[,]\s*['\"]?{name}\b", text):
            return Kind(model, many=True)
        if re.fullmatch(rf"['\"]?(?:\w+\.)?{name}['\"]?(?:\s*\|\s*None)?", text):
            return Kind(model)
    return NOT_A_ROW


class Scan(ast.NodeVisitor):
    """The writes to Game, Seat and Step rows in one module."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.writes: list[Write] = []
        self.scopes: list[tuple[str, dict[str, Kind]]] = [("<module>", {})]

    # What an expression is.

    def kind(self, node: ast.expr) -> Kind | None:
        if isinstance(node, ast.Name):
            for _, names in reversed(self.scopes):
                if node.id in names:
                    known = names[node.id]
                    return known if known.model else None
            return self.named(node.id)
        if isinstance(node, ast.Attribute):
            if node.attr == "objects" and isinstance(node.value, ast.Name):
                for model, cls in MODELS.items():
                    if node.value.id == cls.__name__:
                        return Kind(model, many=True)
            return self.named(node.attr)
        if isinstance(node, ast.Subscript):
            rows = self.kind(node.value)
            return Kind(rows.model) if rows and rows.many else None
        if isinstance(node, ast.Call):
            return self.called(node)
        return None

    def named(self, name: str) -> Kind | None:
        if match := ROW_NAME.match(name):
            return Kind(match[1])
        if match := ROWS_NAME.match(name):
            return Kind(match[1], many=True)
        return None

    def called(self, node: ast.Call) -> Kind | None:
        func = node.func
        if isinstance(func, ast.Name):
            for model, cls in MODELS.items():
                if func.id == cls.__name__:
                    return Kind(model)
            named = self.named(func.id)
            return named if named and named.many else None
        if isinstance(func, ast.Attribute):
            rows = self.kind(func.value)
            if rows and rows.many and func.attr in QUERY_METHODS:
                return rows
            if rows and rows.many and func.attr in ROW_METHODS:
                return Kind(rows.model)
        return None

    # Where names get their kinds.

    def scope(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        names: dict[str, Kind] = {}
        name = node.name if not isinstance(node, ast.Lambda) else "<lambda>"
        self.scopes.append((name, names))
        arguments = node.args
        for arg in [
            *arguments.posonlyargs,
            *arguments.args,
            *arguments.kwonlyargs,
            *filter(None, [arguments.vararg, arguments.kwarg]),
        ]:
            kind = annotated(arg.annotation)
            if kind is not None:
                names[arg.arg] = kind
        body = node.body if isinstance(node.body, list) else [node.body]
        for statement in body:
            for child in self.own(statement):
                self.learn(child, names)
        for statement in body:
            self.visit(statement)
        self.scopes.pop()

    def own(self, node: ast.AST) -> list[ast.AST]:
        """``node`` and what it holds, but not what nested functions hold."""
        found = [node]
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                found.extend(self.own(child))
        return found

    def learn(self, node: ast.AST, names: dict[str, Kind]) -> None:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            kind = annotated(node.annotation)
            if kind is not None:
                names[node.target.id] = kind
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id not in names:
                kind = self.kind(node.value)
                if kind is not None:
                    names[target.id] = kind

    def visit_Module(self, node: ast.Module) -> None:
        for child in self.own(node):
            self.learn(child, self.scopes[0][1])
        self.generic_visit(node)

    visit_FunctionDef = scope
    visit_AsyncFunctionDef = scope
    visit_Lambda = scope

    # The writes.

    def found(self, node: ast.stmt | ast.expr, what: str) -> None:
        function = ".".join(name for name, _ in self.scopes[1:]) or "<module>"
        self.writes.append(Write(self.path, node.lineno, function, what))

    def assigned(self, node: ast.stmt, target: ast.expr) -> None:
        if isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                self.assigned(node, element)
        elif isinstance(target, ast.Attribute):
            row = self.kind(target.value)
            if row and not row.many and target.attr in fields(row.model):
                self.found(node, f"{ast.unparse(target)} =")

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self.assigned(node, target)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.assigned(node, node.target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.assigned(node, node.target)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "setattr" and node.args:
            row = self.kind(node.args[0])
            if row and not row.many:
                self.found(node, f"setattr({ast.unparse(node.args[0])}, ...)")
        elif isinstance(func, ast.Attribute):
            receiver = self.kind(func.value)
            writes = ROWS_WRITES if receiver and receiver.many else {"save", "delete"}
            if receiver and func.attr in writes:
                keywords = ", ".join(keyword.arg or "**" for keyword in node.keywords)
                self.found(node, f"{ast.unparse(func)}({keywords})")
        self.generic_visit(node)


def scan(path: str, source: str) -> list[Write]:
    visitor = Scan(path)
    visitor.visit(ast.parse(source, path))
    return visitor.writes


def modules() -> list[str]:
    found = []
    for folder in ("games", "campaigns"):
        for file in sorted((ROOT / folder).rglob("*.py")):
            path = file.relative_to(ROOT).as_posix()
            if "/migrations/" not in path and not path.startswith(WRITERS):
                found.append(path)
    return found


def test_nothing_outside_the_writers_writes_a_game_a_seat_or_a_step() -> None:
    writes = [write for path in modules() for write in scan(path, (ROOT / path).read_text())]
    found = {write.key for write in writes}
    outside = [str(write) for write in writes if write.key not in EXCEPTIONS]
    assert outside == [], "games.postal writes these:\n" + "\n".join(outside)
    assert set(EXCEPTIONS) - found == set(), "these exceptions no longer match a write"


def test_the_modules_read_are_the_rooms_outside_the_writers() -> None:
    read = modules()
    assert "games/community/signups.py" in read
    assert "campaigns/web/views.py" in read
    assert [path for path in read if path.startswith(WRITERS)] == []


SAMPLE = """
def play(game, request, step_id, seats_wanted):
    game.status = "running"
    game.step_number += 1
    game.seat_names = {}
    game.save(update_fields=["status"])
    self.game.title = "t"
    seats[0].email = "a@b"
    old_seat.name, other = "x", 1
    setattr(game, "title", "t")
    Game.objects.filter(pk=1).update(status="x")
    game.seats.create(position=1)
    Seat.objects.bulk_create([])
    game.steps.filter(number=1).delete()
    seats_of("a@b").exclude(pk=1).update(language="de")
    chosen = Step.objects.select_for_update().get(pk=step_id)
    chosen.deadline = None
    found = Seat.objects.filter(game=game)
    found.update(name="x")
    game.press_messages.create(text="hi")
    game.options.update(x=1)


def paper(step: PastStep, seat: Seat, by_id: dict[int, Step]) -> None:
    step.state_after = None
    seat.name = "y"
    by_id[1].closed_by = ""
"""


def test_the_scan_finds_each_kind_of_write() -> None:
    assert [(write.line, write.function, write.what) for write in scan("x.py", SAMPLE)] == [
        (3, "play", "game.status ="),
        (4, "play", "game.step_number ="),
        (6, "play", "game.save(update_fields)"),
        (7, "play", "self.game.title ="),
        (8, "play", "seats[0].email ="),
        (9, "play", "old_seat.name ="),
        (10, "play", "setattr(game, ...)"),
        (11, "play", "Game.objects.filter(pk=1).update(status)"),
        (12, "play", "game.seats.create(position)"),
        (13, "play", "Seat.objects.bulk_create()"),
        (14, "play", "game.steps.filter(number=1).delete()"),
        (15, "play", "seats_of('a@b').exclude(pk=1).update(language)"),
        (17, "play", "chosen.deadline ="),
        (19, "play", "found.update(name)"),
        (26, "paper", "seat.name ="),
        (27, "paper", "by_id[1].closed_by ="),
    ]
