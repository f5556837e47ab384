"""Games out of the database: export as a replayable record, verify the dice."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from games import records
from games.engines import registry
from games.engines.base import GameError, OrderError, same_state
from games.engines.dice import face
from games.models import Game, GMAction, Order, Step


def export(game: Game) -> dict[str, Any]:
    """The game as a record that ``replay`` reproduces exactly (docs/records.md).

    A finished game carries its revealed seed; a running one carries the dice drawn so
    far as scripted values, so its seed stays secret.
    """
    names = list(game.seats.order_by("position").values_list("name", flat=True))
    record: dict[str, Any] = {
        "game": game.engine,
        "title": game.title,
        "options": game.options,
        "players": names,
        "played_by": played_by(game, names),
    }
    if game.seed_revealed:
        record["seed"] = bytes(game.seed or b"").hex()
        record["game_id"] = game.pk
        record["commitment"] = game.commitment
        if game.paper_dice:
            # A game continued from paper: its first draws were rolled by hand.
            entered = game.dice_rolls.filter(index__lt=game.paper_dice).order_by("index")
            record["entered_dice"] = list(entered.values_list("value", flat=True))
    else:
        record["dice"] = list(game.dice_rolls.order_by("index").values_list("value", flat=True))
    record["moves"] = _moves(game, record)
    return record


@dataclass
class _Tenure:
    """One name a seat was played under, from postal turn ``first`` to ``last`` (None:
    to the game's end or, in a running game, to now)."""

    name: str
    first: int
    last: int | None = None


def played_by(game: Game, names: list[str]) -> list[str]:
    """Who played each seat and from which postal turn, one line a seat: "seat 2: bob
    (postal turns 1-4), dan (from postal turn 5)"; "seat 1: ann" for a seat one name
    played throughout. The record's ``players`` and moves name each seat by its name now;
    a handover or a rename is in the GM's log (``GMAction`` REPLACE, with the old and the
    new name and the turn the game was at), read here back from the names of now. A
    name that played no turn (replaced before the start or within its first turn, or
    given the seat after the game ended) is left out. ``names``: the seats' names now, in
    seat order."""
    tenures = {position: [_Tenure(name, 1)] for position, name in enumerate(names)}
    replaced = game.gm_actions.filter(kind=GMAction.Kind.REPLACE).order_by("-id")
    for step_number, message, at in replaced.values_list("step_number", "message", "at"):
        args = (message or {}).get("a", {})
        old, new = args.get("old"), args.get("new")
        if not old or not new:
            continue  # a new link, the name unchanged (or an entry logged before its words)
        position = next(
            (p for p, seat in tenures.items() if seat[0].name.lower() == new.lower()), None
        )
        if position is None:
            continue
        ended = game.finished_at is not None and at >= game.finished_at
        first = game.step_number + 1 if ended else max(step_number, 1)
        newer = tenures[position][0]
        newer.first = first
        tenures[position].insert(0, _Tenure(old, 1, first - 1))
    word = registry.get(game.engine).step_word
    last = game.step_number if game.status == Game.Status.FINISHED else None
    return [f"seat {p + 1}: {_tenures(seat, word, last)}" for p, seat in tenures.items()]


def _tenures(tenures: list[_Tenure], word: str, last: int | None) -> str:
    """The names of one seat's ``tenures`` that played a turn, each with its turns (the
    game's last turn ``last`` once it is finished); the name alone when one played all."""
    spans = [(t.name, t.first, last if t.last is None else t.last) for t in tenures]
    played = [(name, first, end) for name, first, end in spans if end is None or end >= first]
    if len(played) <= 1:
        return played[0][0] if played else tenures[-1].name
    return ", ".join(f"{name} ({_turns(first, end, word)})" for name, first, end in played)


def _turns(first: int, end: int | None, word: str) -> str:
    if end is None:
        return f"from {word} {first}"
    if end == first:
        return f"{word} {end}"
    return f"{word}s {first}-{end}"


def _moves(game: Game, record: dict[str, Any]) -> list[dict[str, Any]]:
    """Each step's orders as the game took them, then its deadline where the engine's
    resolve ended it.

    The record is replayed while it is written (``_Writer``), so that each order is read as
    the game read it: one that took effect at once is written every time (each roll of a
    seat in a step that stays open, in the order they came), a sealed one only in its
    latest revision, the one that counts."""
    orders = (
        Order.objects.filter(step__game=game)
        .select_related("seat")
        .only("step_id", "seat__name", "seat__position", "canonical", "source")
    )
    by_step: dict[int, list[Order]] = {}
    for order in orders.order_by("received_at", "id"):
        by_step.setdefault(order.step_id, []).append(order)
    writer = _Writer(record)
    # The states a step started from are not read: the replay gives them.
    for step in game.steps.order_by("number").defer("state_before", "resolved_from"):
        step_orders = by_step.get(step.pk, [])
        # A resolution of the step the GM rolled back drew dice the replay passes over;
        # it comes first: the step's orders drew theirs before it or after the rollback.
        for rolled in step.rollbacks or []:
            writer.play({"rollback": True, "skip": [rolled["first"], rolled["count"]]})
        # An autopilot's order is played as the seat's own: a sealed one answers the
        # step's prompt (the replay resolves once all are in), one that takes effect at
        # once moves the game on, as it did at the deadline.
        sent = [o for o in step_orders if o.source != Order.Source.DEFAULT]
        for index, order in enumerate(sent):
            later = next((o for o in sent[index + 1 :] if o.seat_id == order.seat_id), None)
            writer.order(order, later)
        if step.host_order is not None:
            writer.play({"host_order": [record["players"][seat] for seat in step.host_order]})
        elif step.status == Step.Status.DONE and writer.resolved_at_deadline(step, step_orders):
            writer.play({"deadline": True})
    return writer.moves


class _Drew(Exception):
    """A die was drawn: the order took effect at once."""


class _NoDraws:
    """Dice for trying an order: drawing one says it takes effect at once."""

    def draw(self, sides: int) -> int:
        raise _Drew


class _Writer:
    """A game's moves as they are written, and ``replay``, the record's replay so far,
    which reads each order as the game did. It is None once a move does not replay: from
    then on every order is written, and a deadline where a step filled in defaults."""

    def __init__(self, record: dict[str, Any]) -> None:
        self.moves: list[dict[str, Any]] = []
        self.replay: records.Replay | None
        try:
            self.replay = records.start(record)
        except records.RecordError:
            self.replay = None

    def play(self, move: dict[str, Any]) -> None:
        self.moves.append(move)
        if self.replay is not None:
            try:
                records.play_move(self.replay, len(self.moves), move)
            except records.RecordError:
                self.replay = None

    def order(self, order: Order, later: Order | None) -> None:
        """``order`` unless it is a sealed order its seat's ``later`` order revised."""
        replay = self.replay
        if replay is None:
            self.play({"player": order.seat.name, "order": order.canonical})
            return
        seat = order.seat.position
        if later is not None and _revised(replay, seat, order.canonical, later.canonical):
            return
        self.play({"player": order.seat.name, "order": _standing(replay, seat, order.canonical)})

    def resolved_at_deadline(self, step: Step, orders: list[Order]) -> bool:
        """Whether ``step``, done, ended in the engine's resolve that its orders did not
        bring about: the replay is not yet where the game was when the step closed (a
        step that stays open, its rolls all in, ends at its deadline without defaults)."""
        if self.replay is None:
            return any(o.source == Order.Source.DEFAULT for o in orders)
        engine = self.replay.engine
        return not same_state(engine, self.replay.state, step.state_after)


def _revised(replay: records.Replay, seat: int, text: str, later: str) -> bool:
    """Whether ``text`` is a sealed order that the seat's ``later`` order replaced: it
    draws no die and leaves what the game owes as it was, and ``later`` leaves the game
    the same whether ``text`` came before it or not (an order that adds to the seat's
    earlier ones, a First Player token while rolling, is not replaced)."""
    engine, state = replay.engine, replay.state
    try:
        sealed, _ = engine.submit(state, seat, engine.parse(state, seat, text), _NoDraws())
        if engine.prompts(sealed) != replay.prompts:
            return False
        alone, _ = engine.submit(state, seat, engine.parse(state, seat, later), _NoDraws())
        after, _ = engine.submit(sealed, seat, engine.parse(sealed, seat, later), _NoDraws())
    except (GameError, _Drew):
        return False
    return bool(engine.state_to_json(alone) == engine.state_to_json(after))


def _standing(replay: records.Replay, seat: int, text: str) -> str:
    """``text``, or of an order whose first lines took effect at once before a later line
    was refused (the game keeps them), those first lines: a replay refuses the whole
    order, as it does any move with a line refused."""
    lines = text.splitlines()
    stood = _stood(replay, seat, text) if len(lines) > 1 else None
    if stood is None:
        return text
    for end in range(len(lines) - 1, 0, -1):
        part = "\n".join(lines[:end])
        try:
            played = _tried(replay, seat, part)
        except GameError:
            continue
        if replay.engine.state_to_json(played) == stood:
            return part
    return text


def _stood(replay: records.Replay, seat: int, text: str) -> Any:
    """The state (as JSON) that the first lines of the order ``text`` leave when a later
    line is refused after them; None when the order is taken or refused whole."""
    try:
        _tried(replay, seat, text)
    except OrderError as error:
        return None if error.applied is None else replay.engine.state_to_json(error.applied[0])
    except GameError:
        return None
    return None


def _tried(replay: records.Replay, seat: int, text: str) -> Any:
    """The state after the seat's order ``text``, tried on dice that draw what the
    replay's would; GameError if it is refused."""
    engine, state, dice = replay.engine, replay.state, replay.dice
    assert isinstance(dice, records.SkippingDice)
    return engine.submit(state, seat, engine.parse(state, seat, text), dice.fork())[0]


@dataclass
class Verdict:
    rolls: int = 0
    problems: list[str] = field(default_factory=list)
    # Draws of a game continued from paper that its GM entered (rolled by hand): not
    # checked against the seed, and not counted in ``rolls``, the draws that were.
    entered: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


def verify(game: Game) -> Verdict:
    """Recompute every stored roll from the revealed seed (those of a rolled-back
    resolution too; not those a GM entered from paper), check the commitment, and replay
    the game's record to its stored final state."""
    verdict = Verdict()
    if not game.seed_revealed:
        verdict.problems.append(
            f"game {game.pk} is {game.status}; its seed is revealed only when it is finished"
        )
        return verdict
    seed = bytes(game.seed or b"")
    if hashlib.sha256(seed).hexdigest() != game.commitment:
        verdict.problems.append("the seed does not match the commitment published at the start")
    expected_index = 0
    for index, sides, value in game.dice_rolls.order_by("index").values_list(
        "index", "sides", "value"
    ):
        if index != expected_index:
            verdict.problems.append(f"draw {expected_index} is missing from the record")
            expected_index = index
        expected_index += 1
        if index < game.paper_dice:
            verdict.entered += 1
            continue
        recomputed = face(seed, game.pk, index, sides)
        if recomputed != value:
            verdict.problems.append(
                f"draw {index} (d{sides}) is stored as {value} but the seed gives {recomputed}"
            )
        verdict.rolls += 1
    stored = verdict.rolls + verdict.entered
    if stored != game.dice_drawn:
        verdict.problems.append(f"{game.dice_drawn} draws were made but {stored} are stored")
    try:
        replayed = records.run(export(game))
    except records.RecordError as error:
        verdict.problems.append(f"the game's record does not replay: {error.message}")
        return verdict
    if not same_state(replayed.engine, replayed.state, game.state):
        verdict.problems.append("replaying the orders does not give the stored final state")
    return verdict
