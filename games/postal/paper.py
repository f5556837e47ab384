"""A game continued from paper (docs/records.md, "A game from paper"): its record replayed
and written as if it had been played here, in one transaction or not at all."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db import transaction

from games import records
from games.engines import text as engine_text
from games.engines.base import counted
from games.engines.dice import EnteredDice, commitment, new_seed
from games.models import DiceRoll, Game, GMAction, Order, Seat, Step
from games.models import Event as EventRow
from games.notify import reports
from games.postal import access
from games.postal.errors import PostalError, RecordRefused
from games.postal.games import Player, create_game
from games.postal.gm_log import GMNote, log_gm
from games.postal.steps import event_row, latest_event, mark_seats_told, step_deadline
from games.records import paper
from moderator.mail import queueing


def import_game(
    *,
    gm: Any,
    title: str,
    history: paper.Paper,
    players: Sequence[Player],
    now: datetime,
    time_zone: str = "UTC",
    schedule_spec: dict[str, Any] | None = None,
    early_processing: bool = True,
    seed: bytes | None = None,
) -> Game:
    """A game that was running on paper, continued by post from its ``history`` (a record:
    docs/records.md, "A game from paper"): created running, in the state after the
    record's last move, with its steps, orders, dice and events as if it had been played
    here, each seat invited and sent the report of the step it goes on with.

    The record is replayed first (``paper.history``); one that does not replay, whose dice
    are more than its moves use, that ends the game, or whose players are not the seats
    ``players`` (same names, same order) raises PostalError with the reason, and nothing is
    created. The dice of the record were rolled by hand: kept as entered (``paper_dice``),
    and never checked against the seed, which gives every later draw. Never rated."""
    record = history.record
    named = record.get("players")
    if not isinstance(named, list) or [str(n).lower() for n in named] != [
        p.name.strip().lower() for p in players
    ]:
        listed = ", ".join(p.name for p in players)
        raise PostalError(
            f"the record's players are {_names(named)} but the seats are {listed}: name the "
            "same players in the same order"
        )
    # The seats' names, as the game's reports and pages write them.
    record = {**record, "players": [p.name.strip() for p in players]}
    history = dataclasses.replace(history, record=record)
    if not isinstance(record.get("dice"), list):
        raise PostalError(
            "a paper record lists the dice rolled by hand, in the order the game rolls them "
            "('dice:' lines, or 'dice' in a JSON record)"
        )
    with transaction.atomic():
        game = create_game(
            gm=gm,
            engine_key=str(record.get("game", "")),
            title=title,
            players=players,
            options=record.get("options", {}),
            time_zone=time_zone,
            schedule_spec=schedule_spec,
            early_processing=early_processing,
        )
        seed = seed or new_seed()
        dice = EnteredDice(record["dice"], seed, game.pk)
        try:
            replay, past = paper.history(history, dice)
        except paper.PaperError as error:
            raise RecordRefused(error.message, error.source) from None
        _check_paper(dice, replay, history)
        seats = list(game.seats.order_by("position"))
        game.seed, game.commitment = seed, commitment(seed)
        game.status, game.started_at = Game.Status.RUNNING, now
        game.state = replay.engine.state_to_json(replay.state)
        game.paper_steps, game.paper_dice = len(past) - 1, len(dice.entered)
        game.dice_drawn = dice.next_index
        step = _write_past(game, seats, past, now)
        log_gm(
            game,
            GMAction.Kind.IMPORT,
            engine_text.ngettext(
                "The game was continued from a paper record (%(count)d step)",
                "The game was continued from a paper record (%(count)d steps)",
                game.paper_steps,
            ),
            GMNote("", None),
            now,
            step,
        )
        _invite_to_paper_game(game, seats, replay, past, step, now)
        game.save()
    return game


def _invite_to_paper_game(
    game: Game,
    seats: list[Seat],
    replay: records.Replay,
    past: list[paper.PastStep],
    step: Step,
    now: datetime,
) -> None:
    """Each seat's invitation and its first report, whatever it chose for later ones: the
    step the game goes on with, with what happened in the last step played on paper. The
    history before is on the seat's page; no later email repeats it."""
    tokens = access.mint(seats, now=now)
    events = [*past[-2].events, *past[-1].events] if len(past) > 1 else past[-1].events
    engine, state = replay.engine, replay.state
    queueing.queue(
        [
            *(reports.invite_email(game, seat, tokens[seat.position], now) for seat in seats),
            *reports.step_emails(game, seats, engine, state, events, step, tokens),
        ]
    )
    mark_seats_told([seat.pk for seat in seats], latest_event(game))


def _names(named: Any) -> str:
    if not isinstance(named, list) or not named:
        return "not named"
    return ", ".join(map(str, named))


def _check_paper(dice: EnteredDice, replay: records.Replay, history: paper.Paper) -> None:
    """A record whose dice are more than its moves use, or that ends the game, is not
    taken: PostalError."""
    unused = len(dice.entered) - min(dice.next_index, len(dice.entered))
    if unused:
        raise PostalError(
            f"the record has {counted(unused, 'die', 'dice')} more than its moves roll (from "
            f"die {len(dice.entered) - unused + 1} on): remove them, or add the moves that "
            "rolled them"
        )
    if not replay.prompts:
        moves = len(records.moves_of(history.record))
        raise PostalError(
            f"the record plays the game to its end (move {moves}): there is nothing left to "
            "play by post"
        )


def _write_past(game: Game, seats: list[Seat], past: list[paper.PastStep], now: datetime) -> Step:
    """The steps of a paper record with their orders, dice and events (a query each); the
    last one open, with its deadline from the game's schedule. Returns the open step."""
    deadline = step_deadline(game, seats, now)
    steps = Step.objects.bulk_create(
        Step(
            game=game,
            number=number,
            opened_at=now,
            deadline=deadline if done.state_after is None else now,
            prompts=done.prompts,
            state_before=done.state_before,
            status=Step.Status.OPEN if done.state_after is None else Step.Status.DONE,
            state_after=done.state_after,
            closed_at=None if done.state_after is None else now,
            closed_by=done.closed_by,
        )
        for number, done in enumerate(past, start=1)
    )
    game.step_number = len(steps)
    by_position = {seat.position: seat for seat in seats}
    Order.objects.bulk_create(
        Order(
            step=step,
            seat=by_position[order.seat],
            text=order.text,
            parsed=order.parsed,
            canonical=order.canonical,
            source=Order.Source.DEFAULT if order.default else Order.Source.PAPER,
            received_at=now,
        )
        for step, done in zip(steps, past, strict=True)
        for order in done.orders
    )
    DiceRoll.objects.bulk_create(
        DiceRoll(
            game=game,
            step=step,
            index=draw.index,
            sides=draw.sides,
            value=draw.value,
            label=f"step {step.number}" + (" (paper)" if draw.index < game.paper_dice else ""),
        )
        for step, done in zip(steps, past, strict=True)
        for draw in done.draws
    )
    EventRow.objects.bulk_create(
        event_row(game, step, event)
        for step, done in zip(steps, past, strict=True)
        for event in done.events
    )
    _count_paper_nmrs(seats, past)
    return steps[-1]


def _count_paper_nmrs(seats: list[Seat], past: list[paper.PastStep]) -> None:
    """The turns each seat missed on paper count as missed turns here: in its record, and
    those at the end in a row toward civil disorder."""
    missed: list[Seat] = []
    for seat in seats:
        for order in (order for done in past for order in done.orders):
            if order.seat == seat.position:
                seat.nmr_count += order.default
                seat.missed_in_row = seat.missed_in_row + 1 if order.default else 0
        if seat.nmr_count:
            missed.append(seat)
    Seat.objects.bulk_update(missed, ["nmr_count", "missed_in_row"])
