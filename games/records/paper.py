"""A game's history as its GM copies it from paper (docs/records.md, "A game from
paper"): one line per move, in the game's own order syntax, read into a game record that
``postal.import_game`` replays. A JSON record (the format ``replay`` and ``export`` use)
is read as it is.

    # The Choice Club, on paper since March
    game: choice
    rolls_per_turn: 4
    players: Ann, Bob, Cy
    dice: 3 5 2 6 5  5 5 4 1 5  2 2 6 1 3  4 4 1 6 2
    Ann: W5 2+6 3+5
         W1 4+5 5+5
         ...
    Bob: ...
    deadline

Before the moves, ``key: value`` lines name the game (its key or its title), the players
in seat order and the game's options; then each line is a move: ``NAME: ORDER`` (a line
that starts with a space continues the order above it), ``deadline`` (the step's
deadline passed: whoever sent nothing gets the no-moves-received default) or ``dice:``
with dice rolled by hand, in the order the game rolls them. Blank lines and lines that
start with ``#`` are skipped.

``history`` replays a record as the postal game would have played it, step by step, for
``postal.import_game`` to write. Pure: no Django."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from games import records
from games.engines import registry
from games.engines.base import JSON, Event
from games.engines.dice import Draw, EnteredDice
from games.lib import words
from moderator.numbers import DIGITS, is_written_number, whole_number

# The largest number a record may hold (a die, an option, a count), and how deep its JSON
# may nest: a record's own nesting is a few levels; far deeper JSON is no record, and
# Python's parser gives up on it with a RecursionError.
MOST = 10**DIGITS - 1
DEPTH = 32
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# The most of a GM's line an error message quotes (a pasted line may run for pages).
QUOTED = 60


def _quoted(text: str) -> str:
    """``text`` as a message quotes it: in quotes, cut to QUOTED characters."""
    return repr(text) if len(text) <= QUOTED else repr(text[:QUOTED]) + "..."


class PaperError(Exception):
    """The text is not a record, or its record does not replay: the message names the
    line (or move) and says why; ``source``: that move as the GM wrote it, when known."""

    def __init__(self, message: str, source: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.source = source


@dataclass(frozen=True)
class Paper:
    """A record read from the GM's text, each move's name in messages (``line 12``) and
    its lines as written; both empty for a JSON record, whose moves are named by number
    (``move 4``)."""

    record: dict[str, Any]
    where: list[str]
    sources: list[str] = field(default_factory=list)


def read(text: str, players: Sequence[str] = ()) -> Paper:
    """The record ``text`` holds; ``players``: the names of the seats, in order, the
    record's players when it names none. PaperError says what is wrong."""
    if text.lstrip().startswith("{"):
        return Paper(_json(text, players), [])
    return _Lines(players).read(text)


def _json(text: str, players: Sequence[str]) -> dict[str, Any]:
    record = _loads(text, "the record")
    if not isinstance(record, dict):
        raise PaperError("a JSON record is one object, { ... }")
    if "players" not in record and players:
        record["players"] = list(players)
    return record


def _loads(text: str, what: str) -> Any:
    """``text`` as JSON, within bounds: PaperError for JSON that is not, a number of more
    than DIGITS digits, or nesting deeper than DEPTH."""
    try:
        value = json.loads(text, parse_int=_bounded_int)
    except json.JSONDecodeError as error:
        raise PaperError(
            f"{what} starts like JSON but is not JSON: line {error.lineno}, column "
            f"{error.colno}: {error.msg}"
        ) from None
    except RecursionError:
        raise PaperError(f"{what} nests lists or objects deeper than {DEPTH} levels") from None
    if _depth(value) > DEPTH:
        raise PaperError(f"{what} nests lists or objects deeper than {DEPTH} levels")
    return value


def _bounded_int(digits: str) -> int:
    value = whole_number(digits, most=MOST, negative=True)
    if value is None:
        raise PaperError(_too_long(digits))
    return value


def _too_long(digits: str) -> str:
    return f"a number has at most {DIGITS} digits; one here has {len(digits.lstrip('-'))}"


def _depth(value: Any) -> int:
    """How deep ``value`` nests lists and objects (a number or a string: 0), without
    recursion."""
    deepest, level = 0, [(value, 1)]
    while level:
        item, depth = level.pop()
        children = item.values() if isinstance(item, dict) else item
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            if depth <= DEPTH:
                level.extend((child, depth + 1) for child in children)
    return deepest


def game_key(value: str) -> str:
    """The key of the game named ``value`` (its key or its title, in any case)."""
    wanted = value.strip().lower()
    for key, engine in registry.ENGINES.items():
        if wanted in (key, engine.title.lower()):
            return key
    games = ", ".join(f"{key} ({engine.title})" for key, engine in registry.ENGINES.items())
    raise PaperError(f"there is no game {_quoted(value.strip())}; the games are {games}")


def option_value(text: str) -> Any:
    """An option as a GM writes it: true or false, a whole number, a list (commas), or
    a word; JSON for anything else ([...], {...}, "...")."""
    text = text.strip()
    if text[:1] in ("[", "{", '"'):
        return _loads(text, repr(text) if len(text) <= 60 else "the value")
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if is_written_number(text):
        return _bounded_int(text)
    if "," in text:
        return [part.strip() for part in text.split(",") if part.strip()]
    return text


class _Lines:
    """The reader of the line format: headers first, then moves."""

    def __init__(self, players: Sequence[str]) -> None:
        self.record: dict[str, Any] = {"options": {}, "dice": [], "moves": []}
        self.where: list[str] = []
        self.sources: list[str] = []
        self.players = list(players)
        self.moving = False
        # The order an indented line continues: the last move, when it is an order.
        self.order: dict[str, str] | None = None

    def read(self, text: str) -> Paper:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip() or line.lstrip().startswith("#"):
                self.order = None
                continue
            try:
                self._line(line)
            except PaperError as error:
                raise PaperError(f"line {number}: {error.message}") from None
            if len(self.where) < len(self.record["moves"]):
                self.where.append(f"line {number}")
                self.sources.append(line.strip())
            elif self.order is not None and line[0].isspace():
                self.sources[-1] += "\n" + line
        if "game" not in self.record:
            raise PaperError("name the game first, e.g. game: choice")
        self.record.setdefault("players", self.players)
        return Paper(self.record, self.where, self.sources)

    def _line(self, line: str) -> None:
        if line[0].isspace():
            if self.order is None:
                raise PaperError("an indented line continues the order above it, but there is none")
            self.order["order"] += "\n" + line.strip()
            return
        self.order = None
        line = line.strip()
        if line.lower() == "deadline":
            self._move({"deadline": True})
            return
        head, colon, value = line.partition(":")
        if not colon:
            raise PaperError(
                f"{_quoted(line)} is none of NAME: ORDER, dice: VALUES, deadline or a setting "
                "(game:, players:, or an option)"
            )
        if head.strip().lower() == "dice":
            self._dice(value)
            return
        name = self._player(line)
        if name is not None:
            self.order = {"player": name, "order": line[len(name) + 1 :].strip()}
            self._move(self.order)
            return
        if self.moving:
            raise PaperError(
                f"{_quoted(head.strip())} is not a player of this game; the players are "
                f"{', '.join(self.players) or 'not named yet (players: Ann, Bob)'}"
            )
        self._setting(head.strip(), value.strip())

    def _move(self, move: dict[str, Any]) -> None:
        self.moving = True
        self.record["moves"].append(move)

    def _dice(self, value: str) -> None:
        for word in value.split():
            if not is_written_number(word):
                raise PaperError(f"dice are whole numbers, e.g. dice: 3 5 2 6 5; not {word[:20]!r}")
            self.record["dice"].append(_bounded_int(word))
        self.moving = True

    def _player(self, line: str) -> str | None:
        """The player whose order ``line`` is (``NAME: ORDER``), the longest name first."""
        for name in sorted(self.players, key=len, reverse=True):
            if line.lower().startswith(name.lower() + ":"):
                return name
        return None

    def _setting(self, key: str, value: str) -> None:
        if key.lower() == "game":
            self.record["game"] = game_key(value)
        elif key.lower() == "title":
            self.record["title"] = value  # as in a JSON record: a note, not read
        elif key.lower() == "players":
            self.players = [name.strip() for name in value.split(",") if name.strip()]
            self.record["players"] = self.players
        elif _KEY.fullmatch(key):
            self.record["options"][key] = option_value(value)
        else:
            raise PaperError(
                f"{_quoted(key)} is not a player, nor a setting (game:, players:, or an option "
                "such as rolls_per_turn:)"
            )


# --- the steps of a record ------------------------------------------------------------------


@dataclass(frozen=True)
class PastOrder:
    """An order of a step played on paper: a player's (``default`` False) or the
    no-moves-received default a deadline gave a seat that sent nothing."""

    seat: int
    text: str
    parsed: JSON
    canonical: str
    default: bool = False


@dataclass
class PastStep:
    """One step of a record as a postal game has it: what it prompted, the state it opened
    with, its orders, the dice drawn and the events while it was open, and how it closed
    (``state_after`` None: it is still open)."""

    prompts: list[dict[str, Any]]
    state_before: JSON
    orders: list[PastOrder] = field(default_factory=list)
    draws: list[Draw] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    state_after: JSON = None
    closed_by: str = ""


def _prompts(replay: records.Replay) -> list[dict[str, Any]]:
    return words.prompt_list(replay.prompts)


def history(paper: Paper, dice: EnteredDice) -> tuple[records.Replay, list[PastStep]]:
    """Replay ``paper``'s record with ``dice`` (its dice, then the game's seed) into its
    steps as a postal game with early processing plays them: a step closes when an order
    takes effect at once and moves the game on, when it has every order it prompted for,
    or at a ``deadline`` move, where each prompted seat without an order gets the
    no-moves-received default.

    Every die a move draws must be in the record, except those of the last move (and, in a
    record without moves, of the start): the opening of the step the game goes on with,
    which nobody rolled on paper, comes from the seed. PaperError with ``replay``'s
    message, each move named as the GM wrote it (``line 12``) and quoted."""
    record = paper.record
    try:
        moves = records.moves_of(record)
        dice.sealed = not moves
        replay = records.start(record, dice)
    except records.RecordError as error:
        raise PaperError(_said(error)) from None
    steps = [PastStep(_prompts(replay), replay.engine.state_to_json(replay.state))]
    steps[0].draws, steps[0].events = list(dice.draws), list(replay.log)
    for number, move in enumerate(moves, start=1):
        source = paper.sources[number - 1] if paper.sources else ""
        if records.is_rollback(move):
            raise PaperError(f"{_where(paper, number)}: a paper record has no rollbacks", source)
        if records.is_host_order(move):
            raise PaperError(
                f"{_where(paper, number)}: a paper record has no order set by the host; enter "
                "the round's rolls, or set the order once the game is here",
                source,
            )
        dice.sealed = number == len(moves)
        try:
            _play(replay, dice, paper, number, move, steps)
        except records.RecordError as error:
            raise PaperError(_said(error), source) from None
    return replay, steps


def _said(error: records.RecordError) -> str:
    return error.message.removeprefix("broken record: ")


def _where(paper: Paper, number: int) -> str:
    return paper.where[number - 1] if paper.where else f"move {number}"


def _play(
    replay: records.Replay,
    dice: EnteredDice,
    paper: Paper,
    number: int,
    move: Any,
    steps: list[PastStep],
) -> None:
    """Play move ``number`` into the last of ``steps``; close it, and open the next, as
    the move says."""
    step: PastStep = steps[-1]
    engine, before, drawn, logged = replay.engine, replay.state, len(dice.draws), len(replay.log)
    defaults = _defaults(replay, step) if records.is_deadline(move) else []
    ended = records.play_move(replay, number, move, _where(paper, number))
    step.orders += defaults
    if not records.is_deadline(move):
        seat = {name.lower(): s for s, name in enumerate(replay.players)}[move["player"].lower()]
        text = move["order"]
        order = engine.parse(before, seat, text)
        parsed, canonical = engine.order_to_json(order), engine.canonical(before, seat, order)
        step.orders.append(PastOrder(seat, text, parsed, canonical))
        if ended == "order" and records.stays_open(step.prompts, _prompts(replay), seat):
            step.prompts, ended = _prompts(replay), None
    step.draws += dice.draws[drawn:]
    step.events += replay.log[logged:]
    if ended is None:
        return
    step.state_after, step.closed_by = engine.state_to_json(replay.state), ended
    if replay.prompts:
        steps.append(PastStep(_prompts(replay), step.state_after))


def _defaults(replay: records.Replay, step: PastStep) -> list[PastOrder]:
    """At a deadline: the no-moves-received default of each seat ``step`` prompted that
    sent no order (none once the game is over: the move is then refused)."""
    if not replay.prompts:
        return []
    engine, state = replay.engine, replay.state
    answered = {order.seat for order in step.orders}
    missing = sorted({prompt["seat"] for prompt in step.prompts} - answered)
    return [
        PastOrder(
            seat,
            "",
            engine.order_to_json(order := engine.default(state, seat)),
            engine.canonical(state, seat, order),
            default=True,
        )
        for seat in missing
    ]
