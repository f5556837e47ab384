"""Games out of the database: export as a replayable record, verify the dice."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from games import records
from games.engines.dice import face
from games.models import Game, Order, Step


def export(game: Game) -> dict[str, Any]:
    """The game as a record that ``replay`` reproduces exactly (docs/records.md).

    A finished game carries its revealed seed; a running one carries the dice drawn so
    far as scripted values, so its seed stays secret.
    """
    record: dict[str, Any] = {
        "game": game.engine,
        "title": game.title,
        "options": game.options,
        "players": list(game.seats.order_by("position").values_list("name", flat=True)),
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
    record["moves"] = _moves(game)
    return record


def _moves(game: Game) -> list[dict[str, Any]]:
    """Each step's counting orders in the order they came, then its deadline if it had
    to fill missing orders with defaults."""
    moves: list[dict[str, Any]] = []
    orders = Order.objects.filter(step__game=game).select_related("seat", "step")
    by_step: dict[int, list[Order]] = {}
    for order in orders.order_by("step__number", "received_at", "id"):
        by_step.setdefault(order.step.number, []).append(order)
    for step in game.steps.order_by("number"):
        step_orders = by_step.get(step.number, [])
        # An autopilot's order is played as the seat's own: a sealed one answers the
        # step's prompt (the replay resolves once all are in), one that takes effect at
        # once moves the game on, as it did at the deadline.
        # A resolution of the step the GM rolled back drew dice the replay passes over;
        # it comes first: the step's orders drew theirs before it or after the rollback.
        for rolled in step.rollbacks or []:
            moves.append({"rollback": True, "skip": [rolled["first"], rolled["count"]]})
        latest = {o.seat_id: o for o in step_orders if o.source != Order.Source.DEFAULT}
        for order in sorted(latest.values(), key=lambda o: (o.received_at, o.pk)):
            moves.append({"player": order.seat.name, "order": order.canonical})
        if step.status == Step.Status.DONE and any(
            o.source == Order.Source.DEFAULT for o in step_orders
        ):
            moves.append({"deadline": True})
    return moves


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
    if replayed.engine.state_to_json(replayed.state) != game.state:
        verdict.problems.append("replaying the orders does not give the stored final state")
    return verdict
