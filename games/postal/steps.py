"""A step's life as every change to a game writes it: the game's dice, the next step opened
(or the game finished), a step closed, its dice and events recorded, the reports of the new
step queued, and a moved deadline told to the seats."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from datetime import datetime
from functools import partial
from typing import Any

from django.db import transaction

from games.engines import registry
from games.engines.base import Engine, Event, with_player_name
from games.engines.dice import VerifiableDice
from games.lib import schedule, signals, words
from games.models import DiceRoll, Game, Seat, Step
from games.models import Event as EventRow
from games.notify import email_choices, push, quiet, reminders, reports, webhooks
from games.postal import access
from moderator.mail import queueing

# The package's logger: its lines keep the name whichever module writes them.
log = logging.getLogger("games.postal")


def game_dice(game: Game) -> VerifiableDice:
    """The game's dice from its seed, from the next die it draws: the one place a change
    to a game makes them, so every change draws the same game's dice alike."""
    return VerifiableDice(bytes(game.seed or b""), game.pk, start=game.dice_drawn)


# What a resolution changes on the game row (it is saved with exactly these).
ADVANCED_FIELDS = ["state", "step_number", "dice_drawn", "status", "finished_at", "seed_revealed"]


def open_next_step(
    game: Game,
    seats: list[Seat],
    engine: Engine[Any, Any, Any],
    state: Any,
    now: datetime,
    state_json: Any = None,
) -> Step | None:
    """The game's next step, opened in ``state`` with its deadline from the game's
    schedule; None when the engine prompts nobody: the game is over. The game's state is
    ``state`` either way (``state_json``: as JSON, when the caller has it)."""
    game.state = engine.state_to_json(state) if state_json is None else state_json
    prompts = engine.prompts(state)
    if not prompts:
        return None
    game.step_number += 1
    step = Step(
        game=game,
        number=game.step_number,
        opened_at=now,
        deadline=step_deadline(game, seats, now),
        prompts=words.prompt_list(prompts),
        state_before=game.state,
    )
    step.save()
    return step


def step_deadline(game: Game, seats: Iterable[Seat], now: datetime) -> datetime:
    """The deadline of a step opened at ``now``: the next of the game's schedule, moved to
    the first morning when the game avoids nights and it falls in every player's."""
    deadline = schedule.next_deadline(game.schedule, game.time_zone, now)
    if not game.avoid_nights:
        return deadline
    return quiet.outside_every_night(deadline, quiet.nights_for(seats))


def name_seats(game: Game, step: Step | None) -> None:
    """Each seat's name as it is now in the game's state and in ``step``'s, the open step
    (its state before and its prompts), so that the board, the prompts and what the game
    says from now on name the seat's player: after a seat was handed to a new player
    (``seats.replace_player``), or a rollback to a state from before that. Past steps keep
    the names they were played under. Saves neither row."""
    if game.state is None:
        return
    engine = registry.get(game.engine)
    names = list(game.seats.order_by("position").values_list("name", flat=True))
    game.state = _named(engine, game.state, names)
    if step is not None:
        before = _named(engine, step.state_before, names)
        if before is not step.state_before:
            step.state_before = before
            step.prompts = words.prompt_list(engine.prompts(engine.state_from_json(before)))


def _named(engine: Engine[Any, Any, Any], state_json: Any, names: list[str]) -> Any:
    """``state_json`` with the players called ``names``; the same object when they are."""
    state = engine.state_from_json(state_json)
    if list(state.players) == names:
        return state_json
    for position, name in enumerate(names):
        state = with_player_name(state, position, name)
    return engine.state_to_json(state)


def close_step(
    step: Step,
    state: Any,
    engine: Engine[Any, Any, Any],
    now: datetime,
    closed_by: str,
    resolved_from: dict[str, Any] | None = None,
) -> Any:
    """Close ``step`` with ``state``; returns the state as JSON (the next step's too).
    ``resolved_from``: what a rollback restores, when ``resolve`` closes it (None: the
    step cannot be rolled back)."""
    step.status = Step.Status.DONE
    step.resolved_from = resolved_from
    step.state_after = engine.state_to_json(state)
    step.closed_at = now
    step.closed_by = closed_by
    step.save(update_fields=["status", "state_after", "closed_at", "closed_by", "resolved_from"])
    # Logged once the resolution is committed: a worker killed before its commit, or a
    # resolution rolled back, resolved nothing and logs nothing.
    transaction.on_commit(
        partial(
            log.info,
            "step resolved: game %s, step %s, by %s",
            step.game_id,
            step.number,
            str(closed_by),
            extra={
                "event": "step_resolved",
                "game": step.game_id,
                "step": step.number,
                "outcome": str(closed_by),
                "finished": engine.standings(state) is not None,
            },
        )
    )
    return step.state_after


def advance(
    game: Game,
    seats: list[Seat],
    engine: Engine[Any, Any, Any],
    state: Any,
    events: list[Event],
    now: datetime,
    state_json: Any = None,
    closed: Step | None = None,
) -> None:
    """After a step closed: open the next one, or finish the game; queue the reports.
    ``state_json``: ``state`` as JSON when the caller has it; ``closed``: the step that
    closed, whose GM actions the reports name."""
    step = open_next_step(game, seats, engine, state, now, state_json)
    if step is None:
        game.status = Game.Status.FINISHED
        game.finished_at = now
        game.seed_revealed = True
    queue_reports(game, seats, engine, state, events, step, now, closed)
    if step is None:
        game.save()
        reminders.withdraw_deadlines(game)
        signals.game_finished.send(sender=Game, game=game, state=state, now=now)


def same_prompts(new: list[dict[str, Any]], old: list[dict[str, Any]]) -> bool:
    """Whether two stored prompt lists owe the same orders: their words, how the engine
    made them (games.lib.words), do not count (a step stored before they were kept has none)."""
    if new == old:
        return True
    if len(new) != len(old):
        return False
    return all({**a, "words": None} == {**b, "words": None} for a, b in zip(new, old, strict=True))


def event_row(game: Game, step: Step, event: Event) -> EventRow:
    """The row of an engine's ``event``: its English, who may see it, and how it was made,
    to be said in each reader's language (games.lib.words)."""
    return EventRow(
        game=game,
        step=step,
        text=event.text,
        audience=None if event.to is None else list(event.to),
        message=words.message(event.text),
    )


def record(game: Game, step: Step, dice: VerifiableDice, events: list[Event]) -> int | None:
    """Store every die drawn and every event, one query each; the id of the first event
    stored (None: none)."""
    if dice.draws:
        label = f"step {step.number}"
        DiceRoll.objects.bulk_create(
            DiceRoll(game=game, step=step, index=d.index, sides=d.sides, value=d.value, label=label)
            for d in dice.draws
        )
        game.dice_drawn = dice.next_index
    if not events:
        return None
    rows = EventRow.objects.bulk_create(event_row(game, step, event) for event in events)
    return rows[0].pk


def queue_reports(
    game: Game,
    seats: list[Seat],
    engine: Engine[Any, Any, Any],
    state: Any,
    events: list[Event],
    step: Step | None,
    now: datetime,
    closed: Step | None = None,
) -> None:
    """Each seat's report of the new step (or the final standings), as often as the seat
    chose (``email_choices``), and the event to the game's webhooks (``webhooks``). A seat
    that does not get every step's report is told every event since its last email, and its
    mark moves on to the latest (one query each, only when there are such seats). The
    reports name what the GM did while ``closed`` was open (one query, only when the GM did
    something)."""
    mailed = [seat for seat in seats if email_choices.sends_report(seat, engine, step)]
    told = [seat for seat in mailed if email_choices.tells_since(seat, engine)]
    since, latest = reports.events_since(game, told)
    tokens = access.mint(mailed, now=now)
    gm_did = reports.gm_actions_of(game, closed) if mailed and closed is not None else []
    played = (closed.conditional_played if closed is not None else None) or []
    queueing.queue(
        reports.step_emails(game, seats, engine, state, events, step, tokens, since, gm_did, played)
    )
    if latest:
        mark_seats_told([seat.pk for seat in told], latest)
    webhooks.step_events(game, seats, engine, state, events, step, now)
    push.step_pushes(game, seats, engine, step, now)


def mark_seats_told(seat_ids: list[int], latest: int) -> None:
    Seat.objects.filter(pk__in=seat_ids, reported_through__lt=latest).update(
        reported_through=latest
    )


def mark_told(told: Mapping[int, int]) -> None:
    """Seat id -> the latest event an email (a daily digest) has now told the seat of, in
    the caller's transaction."""
    by_latest: dict[int, list[int]] = {}
    for seat_id, latest in told.items():
        by_latest.setdefault(latest, []).append(seat_id)
    for latest, seat_ids in by_latest.items():
        mark_seats_told(seat_ids, latest)


def latest_event(game: Game) -> int:
    return game.events.order_by("-id").values_list("id", flat=True).first() or 0


def tell_deadline(game: Game, step: Step, now: datetime, reason: str = "") -> None:
    """Email the open step's new deadline to the seats that get every step's report and
    to every seat that owes an order. ``reason``: why it moved, when not the GM's doing."""
    engine = registry.get(game.engine)
    seats = [
        seat
        for seat in game.seats.order_by("position")
        if seat.position in step.prompted_seats or not email_choices.tells_since(seat, engine)
    ]
    tokens = access.mint(seats, now=now)
    queueing.queue(
        [
            reports.deadline_email(game, seat, step, tokens[seat.position], reason=reason)
            for seat in seats
        ]
    )
