"""What a program is told of a seat (the API, docs/api.md, and the seat's ``view.json``):
the same as the seat's page, as data, with the same secrecy: the engine's view for the
seat, what it owes and by when, its own order that counts, the events it may see and, once
the game is over, the standings and the seed. Reads only: an order goes to
``games.postal`` as from the page."""

from __future__ import annotations

from typing import Any

from django.utils import translation

from games.engines import registry
from games.lib import words
from games.models import Event, Game, Order, Seat, Step

# The most events one call hands out.
MOST_EVENTS = 200


def open_step(game: Game) -> Step | None:
    """The game's open step, without its copies of the state; None once it is over."""
    if game.status == Game.Status.FINISHED or game.state is None:
        return None
    return (
        game.steps.defer("state_before", "state_after")
        .filter(number=game.step_number, status=Step.Status.OPEN)
        .first()
    )


def game_data(game: Game) -> dict[str, Any]:
    return {
        "id": game.pk,
        "title": game.title,
        "engine": game.engine,
        "status": game.status,
        "step_word": registry.get(game.engine).step_word,
        "step": game.step_number,
        "bots_allowed": game.bots_allowed,
        "commitment": game.commitment,
    }


def counting_order(step: Step | None, seat: Seat) -> Order | None:
    """The seat's own order that counts in ``step`` (its latest, not a default)."""
    if step is None:
        return None
    return (
        Order.objects.filter(step=step, seat=seat)
        .exclude(source=Order.Source.DEFAULT)
        .order_by("-received_at", "-id")
        .first()
    )


def seat_data(seat: Seat) -> dict[str, Any]:
    """What the seat's page shows, as data, said in the seat's language."""
    game = seat.game
    with translation.override(seat.speaks):
        return _seat_data(game, seat)


def _seat_data(game: Game, seat: Seat) -> dict[str, Any]:
    seats = list(game.seats.order_by("position").values("position", "name", "status", "bot"))
    data: dict[str, Any] = {
        "game": game_data(game),
        "seat": {
            "position": seat.position,
            "name": seat.name,
            "bot": seat.bot,
            "autopilot": seat.autopilot,
        },
        "seats": seats,
        "view": None,
        "step": None,
        "order": None,
        "standings": None,
        "seed": None,
    }
    if game.state is None:
        return data
    engine = game.rules
    state = engine.state_from_json(game.state)
    data["view"] = words.shown(engine.view(state, seat.position))
    step = open_step(game)
    if step is not None:
        owed = words.owed(step.prompts, seat.position)
        data["step"] = {
            "number": step.number,
            "deadline": step.deadline.isoformat(),
            "owes": bool(owed),
            "owed": [{"kind": str(item["kind"]), "hint": str(item["hint"])} for item in owed],
        }
        order = counting_order(step, seat)
        if order is not None:
            data["order"] = {
                "text": order.text,
                "canonical": order.canonical,
                "received_at": order.received_at.isoformat(),
            }
    if game.status == Game.Status.FINISHED:
        names = {row["position"]: row["name"] for row in seats}
        data["standings"] = [
            {"position": s.seat, "name": names.get(s.seat, ""), "place": s.place, "score": s.score}
            for s in engine.standings(state) or []
        ]
        if game.seed_revealed:
            data["seed"] = bytes(game.seed or b"").hex()
    return data


def events(seat: Seat, *, after: int, limit: int = MOST_EVENTS) -> tuple[list[dict[str, Any]], int]:
    """The game's events the seat may see with an id above ``after``, oldest first, said in
    the seat's language, and the cursor to ask from next (the last id looked at: an event
    told to other seats moves it on too)."""
    rows = list(
        Event.objects.filter(game_id=seat.game_id, id__gt=after)
        .select_related(None)
        .order_by("id")
        .values("id", "audience", "text", "message", "step__number")[
            : max(1, min(limit, MOST_EVENTS))
        ]
    )
    cursor = rows[-1]["id"] if rows else after
    with translation.override(seat.speaks):
        shown = [
            {
                "id": row["id"],
                "step": row["step__number"],
                "text": str(words.Said(row["text"], row["message"])),
            }
            for row in rows
            if row["audience"] is None or seat.position in row["audience"]
        ]
    return shown, cursor
