"""Small games played to their end through postal, for the records and ratings tests
(started by ``tests.factories.started_game``)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta
from typing import Any, TypedDict

from games import postal
from games.engines import registry
from games.engines.dice import VerifiableDice
from games.models import Game, Order, Step
from tests.factories import EVERY_HOUR

# Liar's Dice, one die each: a game of three is over in a few steps.
ONE_DIE = {"profile": "classic", "dice_per_player": 1}
# Choice, four rounds a turn and a short sheet: two steps, every seat prompted in each.
SHORT_CHOICE = {"rolls_per_turn": 4, "end_threshold": 3}


class Quick(TypedDict):
    """A short game's options with hourly steps, for ``started_game``:
    ``started_game("liars-dice", now=now, players=["ann", "bob"], **QUICK_LIARS)``."""

    options: dict[str, Any]
    schedule_spec: dict[str, Any]


QUICK_LIARS = Quick(options=ONE_DIE, schedule_spec=EVERY_HOUR)
QUICK_CHOICE = Quick(options=SHORT_CHOICE, schedule_spec=EVERY_HOUR)


class SeedOnlyDice(VerifiableDice):
    """A game's dice from its seed alone. A game's dice depend on its id too, and ids
    depend on the tests that ran before: with these (``postal.steps.VerifiableDice`` patched), a
    test's games end the same way whatever ran before it."""

    def __init__(self, seed: bytes, game_id: int, start: int = 0) -> None:
        super().__init__(seed, 1, start=start)


def play_out(
    game: Game,
    *,
    sending: Collection[str],
    source: str = Order.Source.WEB,
    receipts: bool = False,
) -> Game:
    """Play ``game`` to its end: the seats named in ``sending`` send their order in time
    (the order the rules would default to, sent as their own, from ``source``), the others
    miss every deadline. ``receipts``: the workers write the receipts owed after each
    order, as their task does a few seconds later. Returns the game, finished."""
    engine = registry.get(game.engine)
    names = dict(game.seats.values_list("position", "name"))
    while True:
        game.refresh_from_db()
        if game.status == Game.Status.FINISHED:
            return game
        step = game.steps.get(number=game.step_number)
        answered = set(
            step.orders.exclude(source=Order.Source.DEFAULT).values_list(
                "seat__position", flat=True
            )
        )
        owing = [p for p in step.prompted_seats if names[p] in sending and p not in answered]
        if not owing:
            assert postal.resolve_due_step(step.pk, now=step.deadline) is True
            continue
        # One order, then a fresh look: it may have moved the game on.
        state = engine.state_from_json(game.state)
        postal.accept_order(
            game_id=game.pk,
            position=owing[0],
            text=engine.canonical(state, owing[0], engine.default(state, owing[0])),
            source=source,
            now=step.opened_at,
            step_number=step.number,
        )
        if receipts:
            postal.write_receipts(now=step.opened_at + timedelta(seconds=5))


def play_choice_step(game: Game, now: datetime) -> Step:
    """Every seat of a game of Choice of three sends its default by email at ``now``, and
    the step is resolved; the step open after it."""
    game.refresh_from_db()
    engine = registry.get("choice")
    state = engine.state_from_json(game.state)
    for position in range(3):
        text = engine.canonical(state, position, engine.default(state, position))
        postal.accept_order(game_id=game.pk, position=position, text=text, source="email", now=now)
    postal.resolve_now(game.pk, now=now)
    return Step.objects.get(game=game, status=Step.Status.OPEN)
