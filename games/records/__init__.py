"""Game records (docs/records.md): replay a game through the same engine code as the
postal layer, without the database.

``play(record)`` returns the replay's JSON output or raises ``RecordError`` with the
command's exit status: 2 for an illegal move (naming the move's number and player), 3 for
a broken record (not an object, unknown game or option, a scripted die out of range, too
few dice, a malformed move).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from games.engines import registry
from games.engines.base import (
    Dice,
    DiceError,
    Engine,
    Event,
    GameError,
    OptionsError,
    OrderError,
    Prompt,
)
from games.engines.dice import Draw, EnteredDice, ScriptedDice, VerifiableDice

ILLEGAL_MOVE = 2
BROKEN_RECORD = 3


class RecordError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def broken(message: str) -> RecordError:
    return RecordError(BROKEN_RECORD, f"broken record: {message}")


@dataclass
class Replay:
    """A game in play: the engine, its state, and who has answered the current prompts."""

    engine: Engine[Any, Any, Any]
    players: list[str]
    dice: Dice
    state: Any
    prompts: list[Prompt]
    answered: set[int] = field(default_factory=set)
    log: list[Event] = field(default_factory=list)

    def after(self, state: Any, events: list[Event]) -> None:
        """Take the new state; a change of prompts opens a new step."""
        self.state = state
        self.log.extend(events)
        prompts = self.engine.prompts(state)
        if prompts != self.prompts:
            self.prompts = prompts
            self.answered = set()

    def order(self, seat: int, text: str) -> str | None:
        """Play ``seat``'s order; how the step ended: ``"order"`` (the order took effect at
        once and moved the game on), ``"early"`` (the step had every order it waited for
        and resolved), None (it goes on)."""
        order = self.engine.parse(self.state, seat, text)
        prompts = self.prompts
        try:
            state, events = self.engine.submit(self.state, seat, order, self.dice)
        except OrderError as error:
            if error.applied is not None:
                # Lines that drew dice stand even though a later line failed.
                self.after(*error.applied)
            raise
        if seat not in {prompt.seat for prompt in prompts}:
            raise OrderError("no order is expected from you now")
        self.answered.add(seat)
        self.after(state, events)
        if self.prompts != prompts:
            return "order"
        if {p.seat for p in prompts} <= self.answered:
            self.deadline()
            return "early"
        return None

    def deadline(self) -> None:
        self.after(*self.engine.resolve(self.state, self.dice))


def stays_open(before: list[dict[str, Any]], after: list[dict[str, Any]], seat: int) -> bool:
    """Whether a step stays open after ``seat``'s order that took effect at once changed
    its prompts (each ``{"seat", "kind", "hint"}``) from ``before`` to ``after``: in a step
    that prompts several seats, when only the acting seat's own prompt changed (every seat
    acts at its own pace). A sequential step (one seat) moves on with every such order."""
    if len({prompt["seat"] for prompt in before}) < 2:
        return False

    def owed(prompts: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        # What each other seat owes; a stored prompt's "words" (games.lib.words) do not count.
        return [(p["seat"], p["kind"], p["hint"]) for p in prompts if p["seat"] != seat]

    others = owed(after)
    return bool(others) and others == owed(before)


class SkippingDice:
    """A record's dice passing over the draws of resolutions the GM rolled back: each
    ``skip(first, count)`` (a ``rollback`` move) makes the draw at index ``first`` jump to
    ``first + count``, so the replay draws what the game drew after the rollback."""

    def __init__(self, dice: ScriptedDice | VerifiableDice) -> None:
        self.dice = dice
        self.skips: dict[int, int] = {}

    @property
    def draws(self) -> list[Draw]:
        return self.dice.draws

    def fork(self) -> SkippingDice:
        """Dice that draw what these would draw next, leaving these as they are (to try
        a move)."""
        dice = copy.copy(self.dice)
        dice.draws = []
        forked = SkippingDice(dice)
        forked.skips = dict(self.skips)
        return forked

    def skip(self, first: int, count: int) -> None:
        if count:
            self.skips[first] = count

    def draw(self, sides: int) -> int:
        dice = self.dice
        while True:
            index = dice.next_index if isinstance(dice, VerifiableDice) else dice.position
            count = self.skips.pop(index, 0)
            if not count:
                return dice.draw(sides)
            if isinstance(dice, VerifiableDice):
                dice.next_index += count
            else:
                dice.position += count


def _dice(record: dict[str, Any]) -> SkippingDice:
    return SkippingDice(_source(record))


def _source(record: dict[str, Any]) -> ScriptedDice | VerifiableDice:
    if "dice" in record:
        values = record["dice"]
        if not isinstance(values, list):
            raise broken("'dice' must be a list of whole numbers")
        return ScriptedDice(values)
    if "seed" in record:
        seed = record["seed"]
        game_id = record.get("game_id", 0)
        if not isinstance(game_id, int) or isinstance(game_id, bool):
            raise broken("'game_id' must be a whole number")
        try:
            seed_bytes = bytes.fromhex(seed)
        except (TypeError, ValueError):
            raise broken("'seed' must be a string of hex digits") from None
        if "entered_dice" in record:
            # A game continued from paper: its first draws were entered by its GM.
            entered = record["entered_dice"]
            if not isinstance(entered, list):
                raise broken("'entered_dice' must be a list of whole numbers")
            return EnteredDice(entered, seed_bytes, game_id)
        return VerifiableDice(seed_bytes, game_id)
    raise broken("the record needs 'dice' (scripted values) or 'seed'")


def _players(record: dict[str, Any]) -> list[str]:
    players = record.get("players")
    if not isinstance(players, list) or not all(isinstance(p, str) and p for p in players):
        raise broken("'players' must be a list of names")
    if len({p.lower() for p in players}) != len(players):
        raise broken("two players have the same name")
    return players


def start(record: Any, dice: Dice | None = None) -> Replay:
    """The game of ``record`` before its first move; ``dice``: the record's own dice
    (``dice`` or ``seed``) when None."""
    if not isinstance(record, dict):
        raise broken("a record is a JSON object")
    key = record.get("game")
    if not isinstance(key, str) or key not in registry.ENGINES:
        raise broken(f"unknown game {key!r}; the games are {', '.join(registry.ENGINES)}")
    engine = registry.get(key)
    options = record.get("options", {})
    if not isinstance(options, dict):
        raise broken("'options' must be an object")
    players = _players(record)
    dice = _dice(record) if dice is None else dice
    try:
        state, events = engine.start(engine.options(options), players, dice)
    except (OptionsError, DiceError) as error:
        raise broken(error.message) from None
    return Replay(engine, players, dice, state, engine.prompts(state), log=list(events))


def play(record: Any) -> dict[str, Any]:
    """Replay ``record`` to its last move and describe the result."""
    return describe(run(record))


def run(record: Any) -> Replay:
    """The game of ``record`` after its last move."""
    replay = start(record)
    seats = {name.lower(): seat for seat, name in enumerate(replay.players)}
    for number, move in enumerate(moves_of(record), start=1):
        _move(replay, seats, number, move)
    return replay


def moves_of(record: dict[str, Any]) -> list[Any]:
    moves = record.get("moves", [])
    if not isinstance(moves, list):
        raise broken("'moves' must be a list")
    return moves


def is_deadline(move: Any) -> bool:
    return isinstance(move, dict) and move == {"deadline": True}


def play_move(replay: Replay, number: int, move: Any, where: str = "") -> str | None:
    """Play move ``number`` of a record, named ``where`` in messages (``move N`` unless
    given); how its step ended: ``"order"``, ``"early"`` (``Replay.order``),
    ``"deadline"``, ``"host"`` (the host set the order), or None (it goes on, or the move
    was a rollback)."""
    seats = {name.lower(): seat for seat, name in enumerate(replay.players)}
    return _move(replay, seats, number, move, where or f"move {number}")


def is_rollback(move: Any) -> bool:
    return isinstance(move, dict) and "rollback" in move


def is_host_order(move: Any) -> bool:
    return isinstance(move, dict) and "host_order" in move


def _host_order(move: Any) -> list[str] | None:
    """The names of a host's order move ``{"host_order": [NAME, ...]}``."""
    if not (isinstance(move, dict) and set(move) == {"host_order"}):
        return None
    names = move["host_order"]
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        return None
    return names


def _set_order(replay: Replay, seats: dict[str, int], names: list[str], where: str) -> str:
    """The host sets the actual order (The First Player's rule F-16): the engine's
    ``host_order`` closes the step; how it ended: ``"host"``."""
    who = f"{where} (the host's order)"
    host_order = getattr(replay.engine, "host_order", None)
    if host_order is None:
        raise broken(f"{who}: {replay.engine.title} has no order for the host to set")
    if not replay.prompts:
        raise RecordError(ILLEGAL_MOVE, f"{who}: the game is over")
    unknown = [name for name in names if name.lower() not in seats]
    if unknown:
        raise RecordError(ILLEGAL_MOVE, f"{who}: {unknown[0]!r} is not a player of this game")
    try:
        replay.after(*host_order(replay.state, [seats[name.lower()] for name in names]))
    except GameError as error:
        raise RecordError(ILLEGAL_MOVE, f"{who}: {error.message}") from None
    return "host"


def _skip(move: Any) -> tuple[int, int] | None:
    """The dice range of a rollback move ``{"rollback": true, "skip": [first, count]}``."""
    if not (isinstance(move, dict) and set(move) == {"rollback", "skip"}):
        return None
    skip = move["skip"]
    if move["rollback"] is not True or not isinstance(skip, list) or len(skip) != 2:
        return None
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in skip):
        return None
    return skip[0], skip[1]


def _move(
    replay: Replay, seats: dict[str, int], number: int, move: Any, where: str = ""
) -> str | None:
    where = where or f"move {number}"
    skip = _skip(move)
    if skip is not None:
        # A resolution the GM rolled back: its dice are passed over, nothing else.
        if not isinstance(replay.dice, SkippingDice):
            raise broken(f"{where} (rollback): this replay's dice cannot skip")
        replay.dice.skip(*skip)
        return None
    named = _host_order(move)
    if named is not None:
        return _set_order(replay, seats, named, where)
    is_order = isinstance(move, dict) and set(move) == {"player", "order"}
    if is_order and not (isinstance(move["player"], str) and isinstance(move["order"], str)):
        is_order = False
    if not (is_order or is_deadline(move)):
        raise broken(
            f'{where} is neither {{"player": NAME, "order": TEXT}}, {{"deadline": true}}, '
            '{"host_order": [NAME, ...]} nor {"rollback": true, "skip": [FIRST, COUNT]}'
        )
    who = f"{where} ({move['player']})" if is_order else f"{where} (deadline)"
    if not replay.prompts:
        raise RecordError(ILLEGAL_MOVE, f"{who}: the game is over")
    try:
        if not is_order:
            replay.deadline()
            return "deadline"
        seat = seats.get(move["player"].lower())
        if seat is None:
            raise OrderError(f"{move['player']!r} is not a player of this game")
        return replay.order(seat, move["order"])
    except OrderError as error:
        raise RecordError(ILLEGAL_MOVE, f"{who}: {error.message}") from None
    except DiceError as error:
        raise broken(f"{who}: {error.message}") from None


def describe(replay: Replay) -> dict[str, Any]:
    engine, state = replay.engine, replay.state
    standings = engine.standings(state)
    result: dict[str, Any] = {
        "game": engine.key,
        "status": "finished" if not replay.prompts else "running",
        "players": replay.players,
    }
    if standings is not None:
        result["standings"] = [
            {"player": replay.players[s.seat], "place": s.place, "score": s.score}
            for s in standings
        ]
    else:
        result["owed"] = [
            {"player": replay.players[p.seat], "kind": p.kind, "hint": p.hint}
            for p in replay.prompts
        ]
    extra = getattr(engine, "replay_output", None)
    if extra is not None:
        # Game-specific keys (The First Player: reserve and tracker).
        result.update(extra(state))
    result["view"] = engine.view(state, None)
    result["log"] = [event.text for event in replay.log if event.to is None]
    return result
