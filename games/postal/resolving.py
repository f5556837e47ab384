"""The due steps claimed and resolved: at their deadline by the workers (each claim locks
its game, skipping those another worker holds), one by one, and a failing resolution
counted until the game needs its GM; or now, by the GM (``resolve_now``)."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import BooleanField, Exists, F, OuterRef, Q, QuerySet
from django.db.models.expressions import RawSQL

from games.community import absences
from games.engines import registry
from games.engines import text as engine_text
from games.engines.base import Engine, Event
from games.lib import signals, words
from games.models import Game, GMAction, Order, Seat, Step
from games.postal import conditionals
from games.postal.errors import PostalError
from games.postal.gm_log import GMNote, check_shown_step, gm_reason, log_gm
from games.postal.missed import held_back, missed_turns
from games.postal.steps import ADVANCED_FIELDS, advance, close_step, game_dice, record

# The package's logger: its lines keep the name whichever module writes them.
log = logging.getLogger("games.postal")


def due_steps(now: datetime) -> QuerySet[Step]:
    """The steps due for resolution: open, past their deadline, of a running game that is
    not waiting for its GM. A paused game's step is not due (resuming moves its deadline
    on by the pause), nor an abandoned game's, nor one whose game waits for its GM (the
    GM's action resumes it). The one definition of "due": the steps run counts it to hand
    out tasks (count_due_steps) and ``/metrics`` reports it (games/web/ops/metrics.py). Unordered
    (Step's own ordering would sort by the games' dates)."""
    return Step.objects.filter(
        status=Step.Status.OPEN,
        deadline__lte=now,
        game__status=Game.Status.RUNNING,
        game__needs_gm="",
    ).order_by()


def due_step_ids(now: datetime, limit: int | None = None) -> list[int]:
    """Due steps (``due_steps``), oldest first."""
    rows = due_steps(now).order_by("deadline", "id").values_list("id", flat=True)
    return list(rows[: limit or settings.SWEEP_BATCH])


def count_due_steps(now: datetime, *, most: int) -> int:
    """How many steps are due (``due_steps``), counted up to ``most``: the index step_due
    joined to the live games (by primary key, or the partial index game_live). Steps of
    paused and abandoned games and of games waiting for their GM are not counted: a task
    handed out for one would find nothing to claim, every STEP_SWEEP_SECONDS."""
    return due_steps(now)[:most].count()


def resolve_due_steps(*, now: datetime, limit: int) -> int:
    """Claim due steps and resolve them one by one, each in its own transaction, until
    ``limit`` were tried or none is left; returns how many resolved.

    A step is claimed by locking its game with SKIP LOCKED: any number of workers take due
    steps side by side, none waits for another, and none resolves a step another holds.
    A step whose resolution fails is counted as resolve_due_step counts it, and this call
    does not try it again (the next one does)."""
    resolved = 0
    failed: list[int] = []
    due = _DuePages(now, failed)
    while resolved + len(failed) < limit:
        step_id = None
        try:
            with transaction.atomic():
                claimed = due.claim()
                if claimed is None:
                    break
                game, step_id = claimed
                # False: resolved by someone else since the page was read; not counted.
                resolved += _resolve_locked(game, step_id, now=now, closed_by=Step.Closed.DEADLINE)
        except Exception as error:
            if step_id is None:  # the claim itself failed: the database's problem
                raise
            log.exception("resolving step %s failed", step_id)
            _count_failure(step_id, error)
            failed.append(step_id)
    return resolved


# How many due steps a claim reads together, oldest first, to find a game nobody holds.
CLAIM_PAGE = 50


class _DuePages:
    """The due steps of one run of resolve_due_steps, a page at a time, each claimed by
    locking its game.

    Two plain statements, each planned the same way whatever PostgreSQL's statistics say
    (a rush's steps are often younger than them): the oldest due steps from the index
    step_due, read a page at a time in its order (once for many claims), then one of
    their games locked with SKIP LOCKED by primary key, among those still running and not
    waiting for their GM. One statement joining the two, run for every claim, was planned
    well with fresh statistics, and with stale ones sorted or scanned every due step: 30 ms
    to 2 s a claim. The step is read again under the lock by the resolution, as every
    change to a game reads its steps, so a step another worker resolved meanwhile is left
    alone."""

    def __init__(self, now: datetime, skip: list[int]) -> None:
        self.now, self.skip = now, skip
        self.page: dict[int, tuple[int, int]] = {}  # game id -> its due step's id, number
        self.after: tuple[datetime, int] | None = None
        self.done = False

    def claim(self) -> tuple[Game, int] | None:
        """A due step whose game this transaction now holds locked, or None."""
        while not self.done:
            if not self.page:
                self._next_page()
                continue
            found = list(
                Game.objects.select_related("gm")
                .select_for_update(of=("self",), skip_locked=True)
                .filter(_at_step(self.page), status=Game.Status.RUNNING, needs_gm="")
                .order_by()[:1]
            )
            if not found:  # every game of the page held or moved on, or not running
                self.page = {}
                continue
            return found[0], self.page.pop(found[0].pk)[0]
        return None

    def _next_page(self) -> None:
        due = Step.objects.filter(status=Step.Status.OPEN, deadline__lte=self.now)
        due = due.exclude(pk__in=self.skip)
        if self.after is not None:
            deadline, pk = self.after
            due = due.filter(Q(deadline__gt=deadline) | Q(deadline=deadline, pk__gt=pk))
        rows = list(
            due.order_by("deadline", "pk").values_list("pk", "game_id", "number", "deadline")[
                :CLAIM_PAGE
            ]
        )
        if not rows:
            self.done = True
            return
        self.page = {game_id: (step_id, number) for step_id, game_id, number, _ in rows}
        self.after = (rows[-1][3], rows[-1][0])


def _at_step(page: dict[int, tuple[int, int]]) -> RawSQL:
    """Each game of ``page`` still at the step the page read (not resolved elsewhere
    since), as one row-value comparison (PostgreSQL and SQLite): a claim is made for every
    step of a rush, and fifty Q objects OR'd together cost more to build and compile than
    the claim's query takes to run."""
    table = connection.ops.quote_name(Game._meta.db_table)
    columns = [f"{table}.{connection.ops.quote_name(name)}" for name in ("id", "step_number")]
    rows = ", ".join(["(%s, %s)"] * len(page))
    params = [value for game_id, (_, number) in page.items() for value in (game_id, number)]
    return RawSQL(f"({', '.join(columns)}) IN (VALUES {rows})", params, BooleanField())


def resolve_due_step(step_id: int, *, now: datetime) -> bool:
    """Resolve ``step_id`` if it is still open and due; False if someone else did or will.

    A resolution that raises leaves the step open with nothing written; the failure is
    counted on the step, and after STEP_FAILURE_LIMIT failures the game needs its GM.
    """
    try:
        return _resolve_step(step_id, now=now, closed_by=Step.Closed.DEADLINE)
    except Exception as error:
        log.exception("resolving step %s failed", step_id)
        _count_failure(step_id, error)
        return False


def resolve_now(
    game_id: int,
    *,
    now: datetime,
    reason: str = "",
    by: int | None = None,
    shown_step: int | None = None,
) -> bool:
    """The GM closes the current step before its deadline (NMR defaults for missing
    orders); logged for the players with the GM's ``reason`` (``GMAction``). False, and
    nothing written, when the game is not running. ``shown_step``: the step the GM's page
    showed; StepMovedOnForGM, and nothing written, once the game has moved on from it (a
    double click, or another GM, resolved it already): checked under the game's lock."""
    note = GMNote(gm_reason(reason), by)
    with transaction.atomic():
        game = Game.objects.select_related("gm").select_for_update(of=("self",)).get(pk=game_id)
        check_shown_step(game, shown_step)
        # Read after the lock was granted: the open step as the last holder left it.
        step = (
            Step.objects.filter(game_id=game_id, status=Step.Status.OPEN)
            .values_list("id", "number")
            .first()
        )
        if step is None:
            raise PostalError("the game has no open step")
        step_id, number = step
        # Logged before the resolution, so that the step's report names it.
        early = engine_text._(
            "The GM resolved %(step)s early",
            step=words.step_words(game.rules.step_word, number),
        )
        log_gm(game, GMAction.Kind.RESOLVE, early, note, now)
        if not _resolve_locked(game, step_id, now=now, closed_by=Step.Closed.GM):
            transaction.set_rollback(True)
            return False
    return True


def _resolve_step(step_id: int, *, now: datetime, closed_by: str) -> bool:
    with transaction.atomic():
        # The game (with the GM its reports answer to) locked first: every change to a
        # game's steps and orders holds this lock. Then the step and the seats, read after
        # the lock was granted, so they are what the last holder committed (in PostgreSQL
        # a row joined to the locked one would be the version from before the wait).
        try:
            game = (
                Game.objects.select_related("gm")
                .select_for_update(of=("self",))
                .get(steps__pk=step_id)
            )
        except Game.DoesNotExist:
            return False
        return _resolve_locked(game, step_id, now=now, closed_by=closed_by)


def _resolve_locked(game: Game, step_id: int, *, now: datetime, closed_by: str) -> bool:
    """Resolve ``step_id`` of ``game``, whose row this transaction holds locked, if the
    game is running and the step open (and due, at a deadline)."""
    if game.status != Game.Status.RUNNING:
        return False
    step = Step.objects.get(pk=step_id)
    if step.status != Step.Status.OPEN:
        return False
    if closed_by == Step.Closed.DEADLINE and step.deadline > now:
        return False
    seats = _answering(game, step)
    missing = _missing(step, seats)
    away = absences.away([s for s in seats if s.position in missing], now=now) if missing else {}
    if closed_by == Step.Closed.DEADLINE and held_back(game, step, seats, missing, away, now):
        return False  # the deadline moved on: an absence or an automatic extension
    engine = registry.get(game.engine)
    state = engine.state_from_json(game.state)
    fallen = resolve(game, step, engine, state, now, closed_by, seats=seats, away=away)
    game.save(update_fields=ADVANCED_FIELDS)
    conditionals.play_armed(game, now)
    if fallen and game.status == Game.Status.RUNNING:
        # Once the step is resolved and saved: a reserve taking a seat is welcomed with the
        # seat's report of the step now open.
        signals.civil_disorder.send(sender=Game, game=game, positions=fallen, now=now)
    return True


def resolve(
    game: Game,
    step: Step,
    engine: Engine[Any, Any, Any],
    state: Any,
    now: datetime,
    closed_by: str,
    seats: list[Seat] | None = None,
    away: dict[int, absences.Away] | None = None,
) -> list[int]:
    """Close ``step``: missed turns played (autopilots, NMR defaults), the engine's
    resolve, the next step opened. ``seats``: the game's seats as ``_answering`` reads
    them, and ``away``: those of the missing seats whose players are away, when the
    caller has them. Returns the positions of the seats that fell into civil disorder."""
    if seats is None:
        seats = _answering(game, step)
    by_position = {seat.position: seat for seat in seats}
    missing = _missing(step, seats)
    if away is None:
        away = absences.away([by_position[p] for p in missing], now=now) if missing else {}
    dice = game_dice(game)
    # What a rollback restores (``rollback``): game.state is ``state`` as JSON here.
    resolved_from: dict[str, Any] = {"state": game.state, "die": game.dice_drawn}
    events: list[Event] = []
    fallen: list[int] = []
    if missing:
        state, events, moved_on, fallen = missed_turns(
            game, step, engine, state, dice, missing, by_position, away, now
        )
        if moved_on:
            # An autopilot's order took effect at once and moved the game on (a bid): the
            # step is done without the engine's resolve, as after a player's such order.
            resolved_from["event"] = record(game, step, dice, events)
            closed = close_step(step, state, engine, now, closed_by, resolved_from)
            advance(game, seats, engine, state, events, now, state_json=closed, closed=step)
            return fallen
    new_state, more = engine.resolve(state, dice)
    events += more
    resolved_from["event"] = record(game, step, dice, events)
    closed = close_step(step, new_state, engine, now, closed_by, resolved_from)
    advance(game, seats, engine, new_state, events, now, state_json=closed, closed=step)
    return fallen


def _answering(game: Game, step: Step) -> list[Seat]:
    """The game's seats, each with ``sent_order``: whether it sent an order for ``step``."""
    return list(
        game.seats.order_by("position").annotate(
            sent_order=Exists(
                Order.objects.filter(step=step, seat=OuterRef("pk")).exclude(
                    source=Order.Source.DEFAULT
                )
            )
        )
    )


def _missing(step: Step, seats: list[Seat]) -> list[int]:
    """The positions ``step`` prompts that sent no order (``seats`` from ``_answering``)."""
    answered = {seat.position for seat in seats if getattr(seat, "sent_order", False)}
    return [position for position in step.prompted_seats if position not in answered]


def _count_failure(step_id: int, error: Exception) -> None:
    with transaction.atomic():
        Step.objects.filter(pk=step_id).update(
            failures=F("failures") + 1, last_error=f"{type(error).__name__}: {error}"[:2000]
        )
        step = Step.objects.select_related("game").get(pk=step_id)
        if step.failures >= settings.STEP_FAILURE_LIMIT and not step.game.needs_gm:
            Game.objects.filter(pk=step.game_id).update(
                needs_gm=f"step {step.number} failed {step.failures} times: {step.last_error}"
            )
