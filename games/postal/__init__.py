"""The only code that changes a game (DESIGN.md section 5).

Views, admin actions, tasks and commands call these functions; each runs in one database
transaction, locks the game row first, and writes everything a change implies (state,
orders, dice, events, the next step, the outbox) before it commits. Time is always passed
in as ``now``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import partial
from typing import Any, TypeVar

from celery import current_app
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import connection, models, transaction
from django.db.models import Exists, F, Max, OuterRef, Q, QuerySet, Value
from django.db.models.functions import Concat, Greatest
from django.utils import translation
from django.utils.text import format_lazy
from django.utils.translation import gettext, gettext_lazy, ngettext, pgettext_lazy

from games import records
from games.community import absences
from games.engines import registry
from games.engines import text as engine_text
from games.engines.base import (
    Dice,
    Engine,
    Event,
    GameError,
    OptionsError,
    OrderError,
    Strategy,
    counted,
)
from games.engines.dice import EnteredDice, VerifiableDice, commitment, new_seed
from games.lib import schedule, signals, words
from games.models import (
    GM_REASON_LENGTH,
    AbsencePolicy,
    DiceRoll,
    Game,
    GMAction,
    Handover,
    Order,
    PressEmail,
    Publicity,
    Reports,
    Seat,
    SignUpMode,
    Step,
    WebhookDelivery,
)
from games.models import Event as EventRow
from games.models import Player as PlayerRow
from games.notify import calendar, email_choices, languages, reminders, reports, webhooks
from games.postal import access
from games.records import paper
from moderator import bidi
from moderator.mail import building, queueing
from moderator.mail.models import OutboundEmail

log = logging.getLogger(__name__)
# The worker's part of "email me my links" (games/tasks.py), published by name: the task
# module imports this one.
SEND_LOST_LINKS = "games.send_lost_links"

_Row = TypeVar("_Row", bound=models.Model)


class PostalError(Exception):
    """A request that cannot be carried out; the message is for the person who made it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class RecordRefused(PostalError):
    """A paper record that does not replay (``import_game``); ``source``: the move that
    failed as the GM wrote it, when known."""

    def __init__(self, message: str, source: str = "") -> None:
        super().__init__(message)
        self.source = source


class OrderRejected(PostalError):
    """An order not taken. ``partly_played``: its first lines took effect at once (dice
    were drawn) and stand; only the refused line and those after it were not taken."""

    partly_played = False


class StepMovedOn(OrderRejected):
    """An order written for a step that was resolved while the player's page was open, and
    not taken for the step open now. ``happened`` says what moved the game on, in the
    player's words; ``kept`` whether the order should be offered again (it may still fit:
    the player decides); ``reason`` why it was not taken (or "" when no order is owed
    now)."""

    def __init__(self, happened: str, reason: str, *, kept: bool) -> None:
        super().__init__(f"too late: {happened}; {reason}" if reason else f"too late: {happened}")
        self.happened, self.reason, self.kept = happened, reason, kept


class SeatNotFound(PostalError):
    pass


class NotAdmitted(PostalError):
    """An order its caller's ``admit`` turned away once the seat was known (the web's rate
    limit): nothing was written."""


@dataclass(frozen=True)
class Player:
    name: str
    email: str
    time_zone: str = ""
    # The seat's own language ("": the player's, else the game's; docs/languages.md).
    language: str = ""


@dataclass(frozen=True)
class MissedTurns:
    """What a game does about missed deadlines and absences (games.community.absences): each seat's
    automatic extensions and their length, what a declared absence does and how long in
    all it may hold the game for one seat, after how many missed turns in a row a seat is
    in civil disorder (0: never), and whether such a seat is offered on the open games."""

    extensions: int = 0
    extension_hours: int = 24
    absence_policy: str = AbsencePolicy.EXTEND
    absence_cap_hours: int = 168
    civil_disorder_after: int = 3
    offer_seats: bool = False

    def check(self) -> None:
        """PostalError names the first value out of its range."""
        ranges = {
            "extensions": (self.extensions, 0, MOST_EXTENSIONS),
            "the length of an extension (hours)": (self.extension_hours, 1, 7 * 24),
            "the cap of a seat's absences (hours)": (self.absence_cap_hours, 0, 60 * 24),
            "the missed turns before civil disorder": (self.civil_disorder_after, 0, 50),
        }
        for what, (value, low, high) in ranges.items():
            if not low <= value <= high:
                raise PostalError(f"{what} must be from {low} to {high}, not {value}")
        if self.absence_policy not in AbsencePolicy.values:
            raise PostalError(f"no such absence policy: {self.absence_policy!r}")

    @classmethod
    def of(cls, game: Game) -> MissedTurns:
        return cls(**{field: getattr(game, field) for field in cls.__dataclass_fields__})


MOST_EXTENSIONS = 10


# --- creating and starting ------------------------------------------------------------------


def _single_line(value: str, what: str) -> str:
    value = value.strip()
    if not value:
        raise PostalError(f"{what} is empty")
    if "\x00" in value or any(char in building.LINE_BREAKS for char in value):
        raise PostalError(f"{what} must be a single line")
    if (refused := bidi.refusal(value, what)) is not None:
        raise PostalError(refused)
    return value


def check_options(engine_key: str, options: dict[str, Any]) -> Engine[Any, Any, Any]:
    try:
        engine = registry.get(engine_key)
    except KeyError:
        known = ", ".join(registry.ENGINES)
        raise PostalError(f"there is no game {engine_key!r}; the games are {known}") from None
    if not isinstance(options, dict):
        raise PostalError("options must be an object of option keys and values")
    try:
        engine.options(options)
    except OptionsError as error:
        raise PostalError(f"options: {error.message}") from None
    return engine


def create_game(
    *,
    gm: Any,
    engine_key: str,
    title: str,
    players: Sequence[Player],
    options: dict[str, Any] | None = None,
    time_zone: str = "UTC",
    schedule_spec: dict[str, Any] | None = None,
    early_processing: bool = True,
    rated: bool = False,
    missed: MissedTurns | None = None,
    signup: str = SignUpMode.CLOSED,
    seats_wanted: int | None = None,
    public: str = Publicity.AUTO,
    private_press: bool = True,
    language: str = settings.LANGUAGE_CODE,
) -> Game:
    """A new game with its seats, not started. PostalError says what is wrong. ``rated``:
    once finished, its result counts in its game's ratings
    (``games.community.ratings``); ``public``:
    who may watch it (``Publicity``, games.records.spectators); ``private_press``: players may
    write private messages to one another (games.community.press); ``language``: of its players'
    pages and emails (docs/languages.md); ``missed``:
    what it does about missed deadlines and absences (the defaults when None).

    ``signup``: how players join (``SignUpMode``). An open game has ``seats_wanted`` seats,
    within its engine's player counts: the ``players`` invited take the first of them (there
    may be none), and people sign up for the others (``games.community.signups``)."""
    options = {} if options is None else options
    missed = MissedTurns() if missed is None else missed
    missed.check()
    engine = check_options(engine_key, options)
    title = _single_line(title, "the title")
    _check_seats(engine, len(players), signup, seats_wanted)
    seen: set[str] = set()
    for number, player in enumerate(players, start=1):
        name = _single_line(player.name, f"the name of player {number}")
        if name.lower() in seen:
            raise PostalError(f"two players are called {name!r}; names must differ")
        seen.add(name.lower())
        email = _single_line(player.email, f"the email of {name}")
        try:
            validate_email(email)
        except ValidationError:
            raise PostalError(f"{email!r} is not one email address") from None
        if player.time_zone:
            _zone(player.time_zone)
    _zone(time_zone)
    if language not in languages.NAMES:
        raise PostalError(f"{language!r} is not a language of this service")
    try:
        spec = schedule.validate(schedule_spec or {"kind": "interval", "seconds": 48 * 3600})
    except schedule.ScheduleError as error:
        raise PostalError(f"schedule: {error}") from None
    chosen = email_choices.defaults(player.email for player in players)
    spoken = languages.of_addresses(player.email for player in players)
    with transaction.atomic():
        game = Game.objects.create(
            engine=engine.key,
            title=title,
            options=options,
            gm=gm,
            time_zone=time_zone,
            schedule=spec,
            early_processing=early_processing,
            status=Game.Status.RECRUITING,
            rated=rated,
            public=public,
            private_press=private_press,
            language=language,
            **dataclasses.asdict(missed),
            signup=signup,
            seats_wanted=seats_wanted if signup != SignUpMode.CLOSED else None,
        )
        Seat.objects.bulk_create(
            Seat(
                game=game,
                position=position,
                name=player.name.strip(),
                email=player.email.strip(),
                time_zone=player.time_zone,
                reports=chosen.get(email_choices.normalise(player.email), ""),
                language=player.language or spoken.get(email_choices.normalise(player.email), ""),
            )
            for position, player in enumerate(players)
        )
    return game


def _check_seats(
    engine: Engine[Any, Any, Any], invited: int, signup: str, seats_wanted: int | None
) -> None:
    counts = f"{engine.title} takes {engine.min_players} to {engine.max_players} players"
    if signup not in SignUpMode.values:
        raise PostalError(f"{signup!r} is not a way for players to join")
    if signup == SignUpMode.CLOSED:
        if not engine.min_players <= invited <= engine.max_players:
            raise PostalError(f"{counts}, not {invited}")
        return
    if seats_wanted is None or not engine.min_players <= seats_wanted <= engine.max_players:
        raise PostalError(f"{counts}: choose the number of seats between them")
    if invited >= seats_wanted:
        raise PostalError(
            f"the {invited} players you invite fill all {seats_wanted} seats: leave a seat "
            "to sign up for, or let only the players you invite join"
        )


def _zone(name: str) -> None:
    try:
        schedule.zone(name)
    except schedule.ScheduleError as error:
        raise PostalError(str(error)) from None


def start_game(game_id: int, *, now: datetime, seed: bytes | None = None) -> Game:
    """Commit the dice seed, start the engine and open step 1 with its reports."""
    with transaction.atomic():
        game = Game.objects.select_for_update().get(pk=game_id)
        if game.status not in (Game.Status.DRAFT, Game.Status.RECRUITING):
            raise PostalError(f"the game is {game.status}; only a game not yet started can start")
        seats = list(game.seats.order_by("position"))
        engine = registry.get(game.engine)
        seed = seed or new_seed()
        game.seed = seed
        game.commitment = commitment(seed)
        dice = VerifiableDice(seed, game.pk, start=0)
        try:
            state, events = engine.start(
                engine.options(game.options), [seat.name for seat in seats], dice
            )
        except GameError as error:
            raise PostalError(error.message) from None
        game.status = Game.Status.RUNNING
        game.started_at = now
        step = _open_step(game, seats, engine, state, now)
        if step is None:
            raise PostalError("the game ended before its first step")
        _record(game, step, dice, events)
        _queue_reports(game, seats, engine, state, events, step, now)
        game.save()
    return game


# --- orders -----------------------------------------------------------------------------


def accept_order(
    *,
    game_id: int,
    position: int,
    text: str,
    source: str,
    now: datetime,
    step_number: int | None = None,
    ignored: str = "",
    dropped: str = "",
    reason: str = "",
    by: int | None = None,
    shown_step: int | None = None,
) -> Order:
    """Take in an order for the current step, or raise OrderRejected and change nothing.

    ``step_number``, when the order says which step it was written for (the web form
    does), turns an order for a step already resolved into a clear "too late".
    ``ignored``: lines of an emailed order left out of it (a sign-off), which the receipt
    names. ``dropped``: the attachments of an emailed order, not kept; the receipt says so.

    An order whose first lines took effect at once (dice drawn) before a later line was
    refused (``OrderError.applied``) keeps those lines: their dice and events are recorded
    and the game moves on as they say; then OrderRejected (``partly_played``) says what was
    refused, in the engine's words, which say what stands.

    An accepted order is marked as owed its receipt, which ``write_receipts`` writes (the
    workers' task, every RECEIPT_SECONDS).

    An order the GM enters for a seat (``Order.Source.GM``) is logged for the players
    (``GMAction``) with the GM's ``reason`` and user id ``by``: which seat, never its text.
    ``shown_step``: the step the GM's page showed when the GM entered it; StepMovedOnForGM,
    and nothing written, once the game has moved on from it (``check_shown_step``, under
    the game's lock). Unlike ``step_number``, never carried over to the step open now.
    """
    logged = None
    if source == Order.Source.GM:
        logged = _GMNote(_gm_reason(reason), by)

    def locked_seat() -> tuple[Seat, Step | None]:
        seat = _seat_locking_its_game(game_id, position)
        check_shown_step(seat.game, shown_step)
        return seat, None

    return _accept(
        locked_seat,
        text,
        source,
        now,
        step_number,
        ignored=ignored,
        dropped=dropped,
        logged=logged,
    )


def accept_linked_order(
    *,
    game_id: int,
    position: int,
    links: Mapping[int, int],
    text: str,
    source: str,
    now: datetime,
    step_number: int | None = None,
    admit: Callable[[Seat], bool] | None = None,
) -> Order:
    """``accept_order`` for the seat at ``position``, which the player's links must open:
    ``links`` maps seat ids to the link version each link had (a browser's seats). The
    seat and the open step are read in the statement that locks the game, so the order
    costs no query of its own to find them (``_linked_seat_and_step``). SeatNotFound unless
    that seat is among them with a link that still works (not rotated, its player not
    replaced): a browser holding several seats of a game orders for the one its page was
    for, never another.

    ``admit``, asked once the seat is known and before anything is written (the web's
    limit on posts per seat): NotAdmitted when it answers False. The seat is known then
    from the query that locks the game, so the limit costs no query of its own."""
    return _accept(
        partial(_linked_seat_and_step, game_id, position, links),
        text,
        source,
        now,
        step_number,
        admit,
    )


def _accept(
    locked_seat: Callable[[], tuple[Seat, Step | None]],
    text: str,
    source: str,
    now: datetime,
    step_number: int | None,
    admit: Callable[[Seat], bool] | None = None,
    ignored: str = "",
    dropped: str = "",
    logged: _GMNote | None = None,
) -> Order:
    if "\x00" in text:
        # Never a part of an order, and the record (PostgreSQL text) cannot hold it.
        raise OrderRejected(
            gettext(
                "the order holds a NUL character, so nothing was recorded; write it as plain text"
            )
        )
    refused: str | None = None
    with transaction.atomic(), contextlib.ExitStack() as speaking:
        seat, read_with_lock = locked_seat()
        if source in SPOKEN_TO_THE_SEAT:
            # What is said to the seat of its order is said in the seat's language (the
            # GM panel's refusals stay in English).
            speaking.enter_context(translation.override(seat.speaks))
        if admit is not None and not admit(seat):
            raise NotAdmitted("too many orders from this seat or address in the last minute")
        game, position = seat.game, seat.position
        step = _current_open_step(game, seat, now, read_with_lock)
        happened = None
        if step_number is not None and step_number != step.number:
            happened = _carried_over(game, seat, step_number, step)
        engine = registry.get(game.engine)
        state = engine.state_from_json(game.state)
        dice = VerifiableDice(bytes(game.seed or b""), game.pk, start=game.dice_drawn)
        try:
            order = engine.parse(state, position, text)
            # An order carried over to the step open now draws no die: see _carried_over.
            drawn_by: Dice = dice if happened is None else _NoDraws()
            new_state, events = engine.submit(state, position, order, drawn_by)
        except (OrderError, _Drew) as error:
            if happened is not None:
                # Taken whole or not at all: lines it played are not kept either.
                reason = error.message if isinstance(error, OrderError) else str(_DREW)
                raise StepMovedOn(happened, reason, kept=True) from None
            assert isinstance(error, OrderError)
            if error.applied is None:
                raise OrderRejected(words.Said(error.message)) from None
            refused = words.Said(error.message)
            new_state, events = error.applied
        if position not in step.prompted_seats:
            raise OrderRejected(str(_NOT_OWED))
        prompts = words.prompt_list(engine.prompts(new_state))
        # An order that changed the prompts took effect at once: the receipt says what it
        # did, as this seat may see it; a sealed order is echoed as sealed.
        results = []
        if refused is None and not _same_prompts(prompts, step.prompts):
            results = [words.Said(event.text) for event in events if event.visible_to(position)]
        if (
            refused is None
            and not dice.draws
            and _same_prompts(prompts, step.prompts)
            and engine.state_to_json(new_state) == game.state
        ):
            # The state holds each seat's sealed order: unchanged, the order may repeat the
            # one that counts (the only case that costs this read).
            counting = _repeated(step, seat, engine.canonical(state, position, order))
            if counting is not None:
                # The order that counts, sent again (a double tap, a form posted twice, a
                # flood): acknowledged, and nothing is written, nor owed a receipt.
                counting.seat = seat
                counting.repeated = True
                counting.carried_over = happened
                return counting
        row = Order(
            step=step,
            seat=seat,
            text=text,
            parsed=engine.order_to_json(order),
            canonical=engine.canonical(state, position, order) if refused is None else text,
            source=source,
            received_at=now,
            receipt_due=refused is None,
            results=results,
            ignored=ignored,
            dropped=dropped,
        )
        row.carried_over = happened
        if refused is None or not _same_prompts(prompts, step.prompts):
            # A refused order is written only when the lines it played moved the game on:
            # they are then part of the step's record. Otherwise it must not count as this
            # step's answer, and nothing of it but its dice and events is kept.
            row.save()
            if seat.missed_in_row or seat.civil_disorder_at is not None:
                # The player is back: no missed turns in a row, no civil disorder.
                Seat.objects.filter(pk=seat.pk).update(missed_in_row=0, civil_disorder_at=None)
            if logged is not None:
                # Before the step may close below: its report reads the step's log.
                _log_gm(
                    game,
                    GMAction.Kind.ORDER,
                    engine_text._("The GM entered an order for %(name)s", name=seat.name),
                    logged,
                    now,
                    step=step,
                )
        stored = (game.state, game.dice_drawn)
        _record(game, step, dice, events)
        game.state = engine.state_to_json(new_state)
        moved_on = False
        if not _same_prompts(prompts, step.prompts) and records.stays_open(
            step.prompts, prompts, position
        ):
            # A simultaneous step where each seat acts at its own pace (a First Player roll):
            # the step stays open, with its deadline, until the engine moves the game on.
            # What it owes changed: the orders before this one no longer answer it.
            step.prompts, step.answers_after = prompts, row.pk
            step.save(update_fields=["prompts", "answers_after"])
        elif not _same_prompts(prompts, step.prompts):
            # An order that took effect at once and moved the game on: the step is done.
            seats = list(game.seats.order_by("position"))
            closed = _close_step(step, new_state, engine, now, Step.Closed.ORDER)
            _advance(game, seats, engine, new_state, events, now, state_json=closed, closed=step)
            moved_on = True
        elif refused is None and game.early_processing and _all_answered(step):
            _resolve(game, step, engine, new_state, now, Step.Closed.EARLY)
            moved_on = True
        if moved_on:
            game.save(update_fields=ADVANCED_FIELDS)
        elif (game.state, game.dice_drawn) != stored:
            # Otherwise only these two change, and a revision that repeats the sealed order
            # changes neither: then the game row is left as it is.
            game.save(update_fields=["state", "dice_drawn"])
    if refused is not None:
        # The engine's message says which lines were played and stand.
        rejected = OrderRejected(refused)
        rejected.partly_played = True
        raise rejected
    return row


# The orders whose refusal is said to the seat's player: on their page or by email.
SPOKEN_TO_THE_SEAT = (Order.Source.WEB, Order.Source.EMAIL)


def _repeated(step: Step, seat: Seat, canonical: str) -> Order | None:
    """The seat's order that counts in ``step`` if it reads ``canonical``, else None."""
    counting = (
        Order.objects.filter(step=step, seat=seat)
        .exclude(source=Order.Source.DEFAULT)
        .order_by("-received_at", "-id")
        .first()
    )
    return counting if counting is not None and counting.canonical == canonical else None


def write_receipts(*, now: datetime) -> int:
    """Write the receipts orders are owed, oldest first, MAIL_BATCH to a transaction, until
    none is left or SWEEP_BATCH are written (the next run takes the rest); returns how
    many. Each goes to the mail workers when its transaction commits."""
    written = 0
    while written < settings.SWEEP_BATCH:
        batch = _write_receipt_batch(now, min(settings.MAIL_BATCH, settings.SWEEP_BATCH - written))
        if not batch:
            break
        written += batch
    return written


def _write_receipt_batch(now: datetime, size: int) -> int:
    """Up to ``size`` orders' receipts, each with a new link, in one transaction; returns
    how many orders it took. The orders are claimed in it (their rows locked, skipped by
    anyone else holding them, their marks cleared), so two runs at once, or a run
    delivered again, write each receipt once.

    Receipts are coalesced: a seat gets at most one receipt per step every
    RECEIPT_WINDOW_SECONDS. Orders of a seat whose receipt for the step went out less than
    that ago wait, marked, until the window has passed; then one receipt names the latest
    of them (with what each did at once, for orders that took effect at once)."""
    recent = Order.objects.filter(
        step=OuterRef("step"),
        seat=OuterRef("seat"),
        receipt_at__gt=now - timedelta(seconds=settings.RECEIPT_WINDOW_SECONDS),
    )
    with transaction.atomic():
        orders = list(
            Order.objects.select_related("seat", "step__game__gm")
            .select_for_update(of=("self",), skip_locked=True)
            .filter(receipt_due=True)
            .exclude(Exists(recent))
            .order_by("id")[:size]
        )
        if not orders:
            return 0
        latest: dict[tuple[int, int], Order] = {}
        results: dict[tuple[int, int], list[str]] = {}
        for order in orders:  # by id: the latest of a seat's orders in a step comes last
            key = (order.step_id, order.seat_id)
            latest[key] = order
            results.setdefault(key, []).extend(order.results)
        Order.objects.filter(pk__in=[order.pk for order in orders]).update(receipt_due=False)
        Order.objects.filter(pk__in=[order.pk for order in latest.values()]).update(receipt_at=now)
        receipted = list(latest.items())
        for _, order in receipted:
            # The seat's zone may be its game's: the game is at hand, not to be queried.
            order.seat.game = order.step.game
        tokens = access.mint_each([order.seat for _, order in receipted], now=now)
        queueing.queue(
            [
                reports.receipt_email(order.step.game, order.seat, order, token, results[key])
                for (key, order), token in zip(receipted, tokens, strict=True)
            ],
            urgent=True,
        )
    return len(orders)


def _linked_seat_locking_its_game(game_id: int, position: int, links: Mapping[int, int]) -> Seat:
    """The seat at ``position`` if it is among ``links`` with the link version its link
    had, with the game locked, in one query."""
    if not links:
        raise SeatNotFound("no seat of this game for these links")
    linked = (
        Seat.objects.select_related("game")
        .select_for_update(of=("game",))
        .filter(pk__in=list(links), game_id=game_id)
        .order_by()  # not the seats' default ordering, which joins the game table again
    )
    for seat in linked:
        if seat.position == position and seat.link_version == links[seat.pk]:
            return seat
    raise SeatNotFound("no seat of this game for these links")


# What ``_linked_seat_and_step`` reads: every column of the seat and of its game, and the
# open step's but its states (as ``_current_open_step`` reads it). A column left out here is
# read when it is first used, a query more (tests/games/test_postal.py compares these with
# the models).
SEAT_COLUMNS = (
    "id", "game_id", "position", "name", "email", "time_zone", "status", "link_version",
    "nmr_count", "email_failing", "email_failing_at", "reports", "reported_through",
    "autopilot", "extensions_used", "missed_in_row", "away_hours_used", "civil_disorder_at",
    "held_since", "press_email", "press_told", "language", "tenure",
)  # fmt: skip
GAME_COLUMNS = (
    "id", "engine", "title", "public_id", "options", "status", "gm_id", "time_zone",
    "schedule", "early_processing", "seed", "commitment", "seed_revealed", "dice_drawn",
    "state", "step_number", "needs_gm", "reminders", "paused_at", "previous_id",
    "created_at", "started_at", "finished_at", "signup", "seats_wanted", "extensions",
    "extension_hours", "absence_policy", "absence_cap_hours", "civil_disorder_after",
    "offer_seats", "rated", "rated_at", "public", "paper_steps", "paper_dice", "private_press",
    "language",
)  # fmt: skip
STEP_COLUMNS = (
    "id", "game_id", "number", "status", "opened_at", "deadline", "prompts", "closed_at",
    "closed_by", "failures", "last_error", "gm_acted", "answers_after",
)  # fmt: skip
_JSON_COLUMNS = {"options", "schedule", "state", "reminders", "prompts"}
_POSITION, _LINK_VERSION = SEAT_COLUMNS.index("position"), SEAT_COLUMNS.index("link_version")

# The browser's seats of the game with the game locked, each with the game's current step,
# locked too (the game is locked first: its lock is the one every change to a game waits
# for). A row joined to a locked row is read as it was before any wait for the lock; a row
# locked itself is read as the lock's last holder committed it, and the join is checked
# again on that version (PostgreSQL's EvalPlanQual). So the step is what the last holder
# of the game's lock committed, as ``_current_open_step`` reads it after the lock, or
# there is no row: the holder moved the game to a step this statement could not see, or
# someone holds the step's row without the game (SKIP LOCKED: never a wait on a step, so
# never a deadlock against whoever takes a step's row first). The seat is read as it was
# before the wait, as ``_seat_locking_its_game`` reads it.
_LINKED_SEAT_AND_STEP = (
    "SELECT "
    + ", ".join(
        [f"s.{name}" for name in SEAT_COLUMNS]
        + [f"g.{name}" for name in GAME_COLUMNS]
        + [f"st.{name}" for name in STEP_COLUMNS]
    )
    + " FROM games_game g"
    " JOIN games_seat s ON s.game_id = g.id"
    " JOIN games_step st ON st.game_id = g.id AND st.number = g.step_number"
    " WHERE g.id = %s AND s.id = ANY(%s)"
    " FOR UPDATE OF g FOR NO KEY UPDATE OF st SKIP LOCKED"
)


def _linked_seat_and_step(
    game_id: int, position: int, links: Mapping[int, int]
) -> tuple[Seat, Step | None]:
    """The seat at ``position`` if it is among ``links`` with the link version its link
    had, with its game locked, and the game's current step as the lock's last holder
    committed it: one statement. When that statement finds no such seat with a step (a
    game not running, a step moved on or held while it waited, a link that does not open
    the seat, SQLite), ``_linked_seat_locking_its_game`` and then ``_current_open_step``
    read them as they would without it, and say what is wrong."""
    if links and connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_LINKED_SEAT_AND_STEP, [game_id, list(links)])
            rows = cursor.fetchall()
        seats, games = len(SEAT_COLUMNS), len(SEAT_COLUMNS) + len(GAME_COLUMNS)
        for row in rows:
            if row[_POSITION] == position and row[_LINK_VERSION] == links[row[0]]:
                seat = _built(Seat, SEAT_COLUMNS, row[:seats])
                seat.game = _built(Game, GAME_COLUMNS, row[seats:games])
                step = _built(Step, STEP_COLUMNS, row[games:])
                step.game = seat.game
                return seat, step
    return _linked_seat_locking_its_game(game_id, position, links), None


def _built(model: type[_Row], columns: Sequence[str], values: Sequence[Any]) -> _Row:
    """A model instance from a row of ``columns`` as psycopg reads them (JSON as text, as
    Django's engine has it read, for the JSON fields to decode)."""
    decoded = [
        json.loads(value) if name in _JSON_COLUMNS and value is not None else value
        for name, value in zip(columns, values, strict=True)
    ]
    return model.from_db(connection.alias, list(columns), decoded)


def _seat_locking_its_game(game_id: int, position: int) -> Seat:
    """The seat with its game locked, in one query. The game row is the one the last
    holder of the lock committed; the seat's row is read as it was before any wait for the
    lock, which is all an order needs of it (its id and zone). The GM is read only when a
    step the order closes writes its reports (they are answered to the GM)."""
    try:
        return (
            Seat.objects.select_related("game")
            .select_for_update(of=("game",))
            .get(game_id=game_id, position=position)
        )
    except Seat.DoesNotExist:
        _locked(game_id)  # Game.DoesNotExist for a game that is not there
        raise OrderRejected(gettext("there is no such seat in this game")) from None


def _seat(game: Game, position: int) -> Seat:
    try:
        return game.seats.get(position=position)
    except Seat.DoesNotExist:
        raise OrderRejected(gettext("there is no such seat in this game")) from None


def _current_open_step(
    game: Game, seat: Seat, now: datetime, read_with_lock: Step | None = None
) -> Step:
    """The game's open step, or OrderRejected saying why no order is taken.
    ``read_with_lock``: the current step, read by the statement that locked the game."""
    if game.status == Game.Status.FINISHED:
        raise OrderRejected(
            gettext(
                "the game is over, so nothing was recorded; the final standings are on your page"
            )
        )
    if game.status == Game.Status.PAUSED:
        raise OrderRejected(
            gettext(
                "the GM has paused the game, so nothing was recorded; orders are taken again "
                "when it resumes"
            )
        )
    if game.status != Game.Status.RUNNING:
        raise OrderRejected(
            gettext(
                "the game has not started, so nothing was recorded; its first report says what "
                "to order"
            )
        )
    # Read after the game's lock, so it is what the lock's last holder committed. Not the
    # states before and after the step: an order has the game's state.
    step = read_with_lock or game.steps.defer("state_before", "state_after").get(
        number=game.step_number
    )
    if step.status != Step.Status.OPEN or step.deadline <= now:
        raise OrderRejected(
            gettext(
                "too late: the deadline passed at %(deadline)s, so nothing was recorded; the "
                "step is being resolved and its report comes by email"
            )
            % {"deadline": schedule.local_time(step.deadline, seat.zone)}
        )
    return step


_NOT_OWED = gettext_lazy(
    "you owe no order in this step, so nothing was recorded; the page shows whose turn it is"
)
_DREW = gettext_lazy("new dice were rolled since you wrote it; read the new report first")


class _Drew(Exception):
    """An order carried over to a later step would draw dice."""


class _NoDraws:
    """Dice for trying an order carried over to a later step: one that needs a die was
    written before the situation it would roll in, and is not taken without a look."""

    def draw(self, sides: int) -> int:
        raise _Drew


def _carried_over(game: Game, seat: Seat, step_number: int, step: Step) -> str:
    """What moved the game on from step ``step_number`` (a form's step) to ``step`` (open
    now), in the player's words; StepMovedOn unless the order may be tried on ``step``:
    the seat owes an order now and nothing was rolled since the form's step opened (an
    order written before new dice is never played on them unseen)."""
    previous = game.steps.filter(number=step_number).first()
    if previous is None or previous.closed_at is None or step_number > step.number:
        raise OrderRejected(
            gettext(
                "this form is for a step that never opened, so nothing was recorded; reload "
                "your page and send the order from its form"
            )
        )
    said = {
        "number": step_number,
        "when": schedule.local_time(previous.closed_at, seat.zone),
        "cause": _cause(previous, seat),
        "current": step.number,
    }
    if step.number > step_number + 1:
        happened = gettext(
            "step %(number)d was resolved at %(when)s %(cause)s, and the game moved on to step "
            "%(current)d"
        )
    else:
        happened = gettext(
            "step %(number)d was resolved at %(when)s %(cause)s; the current step is %(current)d"
        )
    happened %= said
    if seat.position not in step.prompted_seats:
        raise StepMovedOn(
            happened, gettext("you owe no order in it, so nothing was recorded"), kept=False
        )
    if DiceRoll.objects.filter(
        game=game, step__number__gte=step_number, step__number__lt=step.number
    ).exists():
        raise StepMovedOn(happened, str(_DREW), kept=True)
    return happened


def _cause(step: Step, seat: Seat) -> str:
    """Why ``step`` was resolved, for ``seat``."""
    if step.closed_by == Step.Closed.ORDER:
        closer = (
            step.orders.exclude(source=Order.Source.DEFAULT)
            .order_by("-received_at", "-id")
            .values_list("seat_id", "seat__name")
            .first()
        )
        if closer is None:
            return gettext("when an order took effect at once")
        if closer[0] == seat.pk:
            return gettext("when your own order took effect at once")
        return gettext("when %(name)s's order took effect at once") % {"name": closer[1]}
    if step.closed_by == Step.Closed.EARLY:
        return gettext("when every order was in")
    if step.closed_by == Step.Closed.GM:
        return gettext("by the GM")
    applied = (
        step.orders.filter(seat=seat, source=Order.Source.DEFAULT)
        .values_list("canonical", flat=True)
        .first()
    )
    if applied is None:
        return gettext("when its deadline passed")
    return gettext("when its deadline passed (your no-moves default was played: %(order)s)") % {
        "order": applied
    }


def _all_answered(step: Step) -> bool:
    """Whether every seat the step prompts has sent an order since what the step owes last
    changed (``Step.answers_after``): a seat still rolling at its own pace has not answered
    because it rolled once."""
    orders = step.orders.exclude(source=Order.Source.DEFAULT)
    if step.answers_after is not None:
        orders = orders.filter(pk__gt=step.answers_after)
    answered = set(orders.values_list("seat__position", flat=True))
    return set(step.prompted_seats) <= answered


# --- resolving --------------------------------------------------------------------------


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
            # Each game still at the step the page read (not resolved elsewhere since).
            at_step = Q()
            for game_id, (_, number) in self.page.items():
                at_step |= Q(pk=game_id, step_number=number)
            game = (
                Game.objects.select_related("gm")
                .select_for_update(of=("self",), skip_locked=True)
                .filter(at_step, status=Game.Status.RUNNING, needs_gm="")
                .order_by()
                .first()
            )
            if game is None:  # every game of the page held or moved on, or not running
                self.page = {}
                continue
            return game, self.page.pop(game.pk)[0]
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
    note = _GMNote(_gm_reason(reason), by)
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
        early = engine_text._("The GM resolved step %(number)d early", number=number)
        _log_gm(game, GMAction.Kind.RESOLVE, early, note, now)
        if not _resolve_locked(game, step_id, now=now, closed_by=Step.Closed.GM):
            transaction.set_rollback(True)
            return False
    return True


# What a resolution changes on the game row (it is saved with exactly these).
ADVANCED_FIELDS = ["state", "step_number", "dice_drawn", "status", "finished_at", "seed_revealed"]


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
    if closed_by == Step.Closed.DEADLINE and _held_back(game, step, seats, missing, away, now):
        return False  # the deadline moved on: an absence or an automatic extension
    engine = registry.get(game.engine)
    state = engine.state_from_json(game.state)
    _resolve(game, step, engine, state, now, closed_by, seats=seats, away=away)
    game.save(update_fields=ADVANCED_FIELDS)
    return True


def _resolve(
    game: Game,
    step: Step,
    engine: Engine[Any, Any, Any],
    state: Any,
    now: datetime,
    closed_by: str,
    seats: list[Seat] | None = None,
    away: dict[int, absences.Away] | None = None,
) -> None:
    """Close ``step``: missed turns played (autopilots, NMR defaults), the engine's
    resolve, the next step opened. ``seats``: the game's seats as ``_answering`` reads
    them, and ``away``: those of the missing seats whose players are away, when the
    caller has them."""
    if seats is None:
        seats = _answering(game, step)
    by_position = {seat.position: seat for seat in seats}
    missing = _missing(step, seats)
    if away is None:
        away = absences.away([by_position[p] for p in missing], now=now) if missing else {}
    dice = VerifiableDice(bytes(game.seed or b""), game.pk, start=game.dice_drawn)
    # What a rollback restores (``rollback``): game.state is ``state`` as JSON here.
    resolved_from: dict[str, Any] = {"state": game.state, "die": game.dice_drawn}
    events: list[Event] = []
    if missing:
        state, events, moved_on = _missed_turns(
            game, step, engine, state, dice, missing, by_position, away, now
        )
        if moved_on:
            # An autopilot's order took effect at once and moved the game on (a bid): the
            # step is done without the engine's resolve, as after a player's such order.
            resolved_from["event"] = _record(game, step, dice, events)
            closed = _close_step(step, state, engine, now, closed_by, resolved_from)
            _advance(game, seats, engine, state, events, now, state_json=closed, closed=step)
            return
    new_state, more = engine.resolve(state, dice)
    events += more
    resolved_from["event"] = _record(game, step, dice, events)
    closed = _close_step(step, new_state, engine, now, closed_by, resolved_from)
    _advance(game, seats, engine, new_state, events, now, state_json=closed, closed=step)


def _missed_turns(
    game: Game,
    step: Step,
    engine: Engine[Any, Any, Any],
    state: Any,
    dice: VerifiableDice,
    missing: list[int],
    by_position: dict[int, Seat],
    away: dict[int, absences.Away],
    now: datetime,
) -> tuple[Any, list[Event], bool]:
    """The seats at ``missing`` sent no order for ``step``: each seat's autopilot plays its
    order into ``state`` (``_autopilot``), or the engine's NMR default is recorded for
    ``resolve`` to play. Each seat counts a missed turn; one that has missed
    ``civil_disorder_after`` in a row falls into civil disorder (its GM is told). Returns
    the state with the autopilots' orders, what they did, and whether one of them took
    effect at once and moved the game on."""
    rows: list[Order] = []
    events: list[Event] = []
    moved_on = False
    for position in missing:
        seat = by_position[position]
        strategy = _autopilot(game, seat, seat.pk in away)
        played = None
        if strategy is not None:
            played = _autopilot_plays(engine, state, position, strategy, dice)
        before = state
        if strategy is not None and played is not None:
            order, state, done = played
            moved_on = not _same_prompts(words.prompt_list(engine.prompts(state)), step.prompts)
            events += [
                Event(
                    engine_text._(
                        "%(name)s sent no order: their autopilot (%(autopilot)s) plays",
                        name=seat.name,
                        autopilot=strategy.title,
                    )
                ),
                Event(
                    engine_text._(
                        "your autopilot (%(autopilot)s) played: %(order)s",
                        autopilot=strategy.title,
                        order=engine.canonical(before, position, order),
                    ),
                    to=(position,),
                ),
                # What the order did, when it took effect at once; a sealed order's
                # events are only its receipt, which a missed turn does not get.
                *(done if moved_on else []),
            ]
            source = Order.Source.AUTOPILOT
        else:
            order = engine.default(state, position)
            source = Order.Source.DEFAULT
        # A missed turn gets no receipt: the step's report says what was played.
        rows.append(
            Order(
                step=step,
                seat=seat,
                text="",
                parsed=engine.order_to_json(order),
                canonical=engine.canonical(before, position, order),
                source=source,
                received_at=now,
                receipt_due=False,
            )
        )
        if moved_on:
            # The game moved on (a sequential game prompts one seat): no other seat owes.
            break
    Order.objects.bulk_create(rows)
    missed = [row.seat.position for row in rows]
    game.seats.filter(position__in=missed).update(
        nmr_count=F("nmr_count") + 1, missed_in_row=F("missed_in_row") + 1
    )
    if game.civil_disorder_after:
        events += _civil_disorder(game, missed, by_position, now)
    return state, events, moved_on


def _autopilot(game: Game, seat: Seat, is_away: bool) -> Strategy | None:
    """What plays a missed turn of ``seat``: the autopilot its player chose, or, while
    they are away in a game whose absences are played by an autopilot, the game's first;
    None: the NMR default."""
    chosen = registry.strategy(game.engine, seat.autopilot) if seat.autopilot else None
    if chosen is None and is_away and game.absence_policy == AbsencePolicy.AUTOPILOT:
        offered = registry.strategies(game.engine)
        chosen = offered[0] if offered else None
    return chosen


def _autopilot_plays(
    engine: Engine[Any, Any, Any], state: Any, position: int, strategy: Strategy, dice: Dice
) -> tuple[Any, Any, list[Event]] | None:
    """(order, state after it, its events) when the engine takes ``strategy``'s order;
    None (the NMR default plays, and the log says why) if the strategy fails."""
    try:
        order = strategy.play(state, position)
        new_state, events = engine.submit(state, position, order, dice)
    except GameError as error:
        log.warning("autopilot %s refused for seat %s: %s", strategy.key, position, error)
        return None
    return order, new_state, events


def _civil_disorder(
    game: Game, missing: list[int], by_position: dict[int, Seat], now: datetime
) -> list[Event]:
    """The missing seats that have now missed ``civil_disorder_after`` turns in a row fall
    into civil disorder: marked, told in the report, and their GM alerted by email."""
    limit = game.civil_disorder_after
    fallen = [
        by_position[position]
        for position in missing
        if by_position[position].civil_disorder_at is None
        and by_position[position].missed_in_row + 1 >= limit
    ]
    if not fallen:
        return []
    Seat.objects.filter(pk__in=[seat.pk for seat in fallen]).update(civil_disorder_at=now)
    queueing.queue([reports.civil_disorder_email(game, fallen, now)], urgent=True)
    if game.offer_seats:
        return [
            Event(
                engine_text.ngettext(
                    "%(name)s has missed %(count)d turn in a row: the seat is in civil disorder "
                    "and is offered to a new player; the game goes on with its defaults",
                    "%(name)s has missed %(count)d turns in a row: the seat is in civil "
                    "disorder and is offered to a new player; the game goes on with its "
                    "defaults",
                    limit,
                    name=seat.name,
                )
            )
            for seat in fallen
        ]
    return [
        Event(
            engine_text.ngettext(
                "%(name)s has missed %(count)d turn in a row: the seat is in civil disorder; "
                "the game goes on with its defaults",
                "%(name)s has missed %(count)d turns in a row: the seat is in civil disorder; "
                "the game goes on with its defaults",
                limit,
                name=seat.name,
            )
        )
        for seat in fallen
    ]


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


def _held_back(
    game: Game,
    step: Step,
    seats: list[Seat],
    missing: list[int],
    away: dict[int, absences.Away],
    now: datetime,
) -> bool:
    """At ``step``'s deadline: True if its deadline moved on instead of the step being
    resolved, because a seat that owes an order is away and the game waits for absent
    players (up to ``absence_cap_hours`` per seat), or because a seat that owes one has an
    automatic extension left (``extensions`` per seat); a seat in civil disorder waits
    for nothing. Everyone is told."""
    if not missing or (not game.extensions and not away):
        return False
    owing = [seat for seat in seats if seat.position in missing and seat.civil_disorder_at is None]
    start = max(step.deadline, now)
    waits: dict[Seat, datetime] = {}
    if game.absence_policy == AbsencePolicy.EXTEND:
        for seat in owing:
            left = game.absence_cap_hours - seat.away_hours_used
            if seat.pk in away and left > 0:
                waits[seat] = min(away[seat.pk].ends_at, start + timedelta(hours=left))
    events: list[Event] = []
    if waits:
        deadline = max(waits.values())
        for seat, until in waits.items():
            hours = math.ceil((until - step.deadline).total_seconds() / 3600)
            seat.away_hours_used += hours
            seat.save(update_fields=["away_hours_used"])
            last_day = away[seat.pk].last_day
            events.append(
                Event(
                    engine_text._(
                        "%(name)s is away until %(day)s: the deadline of step %(step)d waits "
                        "for them",
                        name=seat.name,
                        day=_day_and_month(last_day),
                        step=step.number,
                    )
                )
            )
    else:
        spending = [
            seat
            for seat in owing
            if seat.extensions_used < game.extensions
            and not (seat.pk in away and game.absence_policy != AbsencePolicy.EXTEND)
        ]
        if not spending:
            return False
        deadline = start + timedelta(hours=game.extension_hours)
        for seat in spending:
            seat.extensions_used += 1
            seat.save(update_fields=["extensions_used"])
            left = game.extensions - seat.extensions_used
            events.append(
                Event(
                    engine_text._(
                        "%(name)s missed the deadline of step %(step)d and used an automatic "
                        "extension (%(left)s left): the deadline moved by %(hours)s",
                        name=seat.name,
                        step=step.number,
                        left=engine_text.ngettext(
                            "%(count)d extension", "%(count)d extensions", left
                        ),
                        hours=engine_text.ngettext(
                            "%(count)d hour", "%(count)d hours", game.extension_hours
                        ),
                    )
                )
            )
    step.deadline = deadline
    step.save(update_fields=["deadline"])
    EventRow.objects.bulk_create(_event_row(game, step, event) for event in events)
    reason = words.Said(engine_text.join([event.text for event in events], "; "))
    _tell_deadline(game, step, now, reason=reason)
    return True


def _close_step(
    step: Step,
    state: Any,
    engine: Engine[Any, Any, Any],
    now: datetime,
    closed_by: str,
    resolved_from: dict[str, Any] | None = None,
) -> Any:
    """Close ``step`` with ``state``; returns the state as JSON (the next step's too).
    ``resolved_from``: what a rollback restores, when ``_resolve`` closes it (None: the
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


def _advance(
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
    step = _open_step(game, seats, engine, state, now, state_json)
    if step is None:
        game.status = Game.Status.FINISHED
        game.finished_at = now
        game.seed_revealed = True
    _queue_reports(game, seats, engine, state, events, step, now, closed)
    if step is None:
        game.save()
        signals.game_finished.send(sender=Game, game=game, state=state, now=now)


def _open_step(
    game: Game,
    seats: list[Seat],
    engine: Engine[Any, Any, Any],
    state: Any,
    now: datetime,
    state_json: Any = None,
) -> Step | None:
    game.state = engine.state_to_json(state) if state_json is None else state_json
    prompts = engine.prompts(state)
    if not prompts:
        return None
    game.step_number += 1
    step = Step(
        game=game,
        number=game.step_number,
        opened_at=now,
        deadline=schedule.next_deadline(game.schedule, game.time_zone, now),
        prompts=words.prompt_list(prompts),
        state_before=game.state,
    )
    step.save()
    return step


def _same_prompts(new: list[dict[str, Any]], old: list[dict[str, Any]]) -> bool:
    """Whether two stored prompt lists owe the same orders: their words, how the engine
    made them (games.lib.words), do not count (a step stored before they were kept has none)."""
    if new == old:
        return True
    if len(new) != len(old):
        return False
    return all({**a, "words": None} == {**b, "words": None} for a, b in zip(new, old, strict=True))


def _event_row(game: Game, step: Step, event: Event) -> EventRow:
    """The row of an engine's ``event``: its English, who may see it, and how it was made,
    to be said in each reader's language (games.lib.words)."""
    return EventRow(
        game=game,
        step=step,
        text=event.text,
        audience=None if event.to is None else list(event.to),
        message=words.message(event.text),
    )


def _record(game: Game, step: Step, dice: VerifiableDice, events: list[Event]) -> int | None:
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
    rows = EventRow.objects.bulk_create(_event_row(game, step, event) for event in events)
    return rows[0].pk


def _queue_reports(
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
    queueing.queue(
        reports.step_emails(game, seats, engine, state, events, step, tokens, since, gm_did)
    )
    if latest:
        _mark_told([seat.pk for seat in told], latest)
    webhooks.step_events(game, seats, engine, state, events, step, now)


def _mark_told(seat_ids: list[int], latest: int) -> None:
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
        _mark_told(seat_ids, latest)


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


# --- a player's choices ----------------------------------------------------------------


def stop_email(seat: Seat, what: str) -> str:
    """An email's one-click unsubscribe (``access.STOPS``): no more step reports by email
    for this seat ("reports") or for every seat of its address, as its default too
    ("all-reports"), no more reminders for the address ("reminders"), or no more of the
    game's messages for this seat ("press": the GM's announcements still come). Nothing else
    changes: orders, the record and the seat's page stay as they are, and the emails a
    player must not miss (the first report, the final standings, receipts) still come.
    Returns what the player gets now, in words."""
    if what == "reminders":
        reminders.choose(seat, way=reminders.NONE)
        return gettext("%(email)s gets no reminders before deadlines, in any game") % {
            "email": seat.email
        }
    if what == "press":
        # Imported here: games.community.press logs its GM actions through this module.
        from games.community import press

        press.choose_email(seat.game_id, position=seat.position, choice=PressEmail.NONE)
        return gettext("%(name)s gets no messages of %(game)s by email") % {
            "name": seat.name,
            "game": seat.game.title,
        }
    if what not in ("reports", "all-reports"):
        raise PostalError(f"{what!r} is not an email that can be stopped")
    everywhere = what == "all-reports"
    chosen = choose_reports(
        seat.game_id, position=seat.position, choice=email_choices.NONE, everywhere=everywhere
    )
    if everywhere:
        games = len({other.game_id for other in chosen})
        return ngettext(
            "%(email)s gets no step reports by email in its %(count)d game, nor in the games "
            "it joins later",
            "%(email)s gets no step reports by email in its %(count)d games, nor in the games "
            "it joins later",
            games,
        ) % {"email": seat.email, "count": games}
    return gettext("%(name)s gets no step reports of %(title)s by email") % {
        "name": seat.name,
        "title": seat.game.title,
    }


def choose_reports(game_id: int, *, position: int, choice: str, everywhere: bool) -> list[Seat]:
    """How often the seat gets its step reports (``games.notify.email_choices``): for this seat,
    or (``everywhere``) for every seat of its address in every game, and as its player's
    default for the seats the address gets later. Returns the seats chosen for.

    A seat that got every step's report until now is marked told of every event so far:
    from now on its emails tell what happens from now. PostalError for a choice that does
    not exist, and nothing changes."""
    if choice not in Reports.values:
        known = "; ".join(f"{value!r} ({label})" for value, label in Reports.choices)
        raise PostalError(f"{choice!r} is not a choice of how often to email; the choices: {known}")
    with transaction.atomic():
        try:
            seat = Seat.objects.select_related("game").get(game_id=game_id, position=position)
        except Seat.DoesNotExist:
            raise SeatNotFound("there is no such seat in this game") from None
        if everywhere:
            email_choices.set_default(seat.email, choice, time_zone=seat.zone)
            chosen = Seat.objects.filter(email__iexact=seat.email)
        else:
            if choice == email_choices.DIGEST:
                email_choices.preference_of(seat.email, time_zone=seat.zone)
            chosen = Seat.objects.filter(pk=seat.pk)
        seats = list(chosen.select_related("game").select_for_update(of=("self",)).order_by("pk"))
        latest = dict(
            EventRow.objects.filter(game_id__in={seat.game_id for seat in seats})
            .order_by()
            .values("game_id")
            .annotate(latest=Max("id"))
            .values_list("game_id", "latest")
        )
        for seat in seats:
            engine = registry.get(seat.game.engine)
            if not email_choices.tells_since(seat, engine):
                seat.reported_through = latest.get(seat.game_id, 0)
            seat.reports = choice
        Seat.objects.bulk_update(seats, ["reports", "reported_through"])
    return seats


def use_extension(game_id: int, *, position: int, now: datetime) -> Step:
    """The seat's player spends one of their automatic extensions before the deadline:
    the open step's deadline moves on by the game's extension time, and everyone is told.
    PostalError says why not (none left, no order owed, the game not running)."""
    with transaction.atomic():
        game = _locked(game_id)
        seat = _seat(game, position)
        if game.status != Game.Status.RUNNING:
            raise PostalError(
                gettext("the game is %(status)s; deadlines move only in a running game")
                % {"status": _status_in_words(game)}
            )
        if not game.extensions:
            raise PostalError(gettext("this game gives no extensions"))
        if seat.extensions_used >= game.extensions:
            raise PostalError(
                ngettext(
                    "you have used all %(count)d extension of this game",
                    "you have used all %(count)d extensions of this game",
                    game.extensions,
                )
                % {"count": game.extensions}
            )
        step = _open_step_of(game)
        if position not in step.prompted_seats:
            raise PostalError(gettext("you owe no order this step, so its deadline stays"))
        if step.deadline <= now:
            raise PostalError(gettext("the deadline has passed"))
        seat.extensions_used += 1
        seat.save(update_fields=["extensions_used"])
        step.deadline += timedelta(hours=game.extension_hours)
        step.save(update_fields=["deadline"])
        left = game.extensions - seat.extensions_used
        text = (
            f"{seat.name} used an extension ({counted(left, 'extension')} left): the deadline "
            f"of step {step.number} moved by {counted(game.extension_hours, 'hour')}"
        )
        EventRow.objects.create(game=game, step=step, text=text, audience=None)
        _tell_deadline(game, step, now, reason=text)
    return step


def choose_autopilot(game_id: int, *, position: int, key: str) -> Seat:
    """The seat's player chooses what plays their turn when they miss a deadline: ""
    (the game's NMR default) or one of its engine's autopilots."""
    with transaction.atomic():
        game = _locked(game_id)
        seat = _seat(game, position)
        if game.status in (Game.Status.FINISHED, Game.Status.ABANDONED):
            raise PostalError(gettext("the game is over; nothing plays for you any more"))
        if key and registry.strategy(game.engine, key) is None:
            offered = ", ".join(s.key for s in registry.strategies(game.engine))
            raise PostalError(
                gettext("%(game)s has no autopilot %(key)s (it has: %(offered)s)")
                % {
                    "game": registry.get(game.engine).title,
                    "key": repr(key),
                    "offered": offered or gettext("none"),
                }
            )
        seat.autopilot = key
        seat.save(update_fields=["autopilot"])
    return seat


def choose_language(game_id: int, *, position: int, language: str) -> Seat:
    """The seat's own language for its page and emails ("": its game's; docs/languages.md).
    PostalError for a language the service does not write, and nothing changes."""
    if language and language not in languages.NAMES:
        raise PostalError(f"{language!r} is not a language of this service")
    with transaction.atomic():
        seat = (
            Seat.objects.select_related("game")
            .select_for_update(of=("self",))
            .get(game_id=game_id, position=position)
        )
        seat.language = language
        seat.save(update_fields=["language"])
    return seat


def _status_in_words(game: Game) -> str:
    """A game's state as a player's message names it."""
    return str(_STATUS_WORDS.get(game.status, game.status))


_STATUS_WORDS: dict[str, object] = {
    Game.Status.DRAFT: pgettext_lazy("the game is", "draft"),
    Game.Status.RECRUITING: pgettext_lazy("the game is", "recruiting"),
    Game.Status.RUNNING: pgettext_lazy("the game is", "running"),
    Game.Status.PAUSED: pgettext_lazy("the game is", "paused"),
    Game.Status.FINISHED: pgettext_lazy("the game is", "finished"),
    Game.Status.ABANDONED: pgettext_lazy("the game is", "abandoned"),
}


def _latest_event(game: Game) -> int:
    return game.events.order_by("-id").values_list("id", flat=True).first() or 0


# --- the GM's actions ---------------------------------------------------------------------


@dataclass(frozen=True)
class _GMNote:
    """What a GM action's log entry takes from its caller: the GM's reason, checked, and
    the id of the user who acted (None: the game's GM)."""

    reason: str
    by: int | None


def _gm_reason(reason: str) -> str:
    """The GM's reason for an action, stripped; PostalError unless it is one line of at
    most GM_REASON_LENGTH characters without control characters."""
    reason = reason.strip()
    if any(ord(char) < 32 or char in "\x7f\x85\u2028\u2029" for char in reason):
        raise PostalError("the reason must be a single line without control characters")
    if len(reason) > GM_REASON_LENGTH:
        raise PostalError(f"the reason has at most {GM_REASON_LENGTH} characters")
    return reason


def _log_gm(
    game: Game,
    kind: str,
    text: str,
    note: _GMNote,
    now: datetime,
    step: Step | None = None,
) -> None:
    """Log a GM action for the players, in the caller's transaction, and mark the open step
    (``step``, when the caller holds it) as one the GM acted in. ``text``: the English, made
    with ``games.engines.text`` so each player reads it in their language."""
    GMAction.objects.create(
        game=game,
        step_number=game.step_number,
        kind=kind,
        words=str(text),
        message=words.message(text),
        reason=note.reason,
        at=now,
        gm_id=note.by if note.by is not None else game.gm_id,
    )
    if step is not None:
        step.gm_acted = True
        step.save(update_fields=["gm_acted"])
    else:
        Step.objects.filter(game=game, number=game.step_number, status=Step.Status.OPEN).update(
            gm_acted=True
        )


def log_gm_action(
    game: Game, kind: str, text: str, *, reason: str, by: int | None, now: datetime
) -> str:
    """Log a GM action taken outside this module (games.community.press hides a message) in the
    caller's transaction, which holds the game's lock; PostalError, and nothing logged,
    unless ``reason`` is a reason a GM may give. Returns the reason as logged."""
    note = _GMNote(_gm_reason(reason), by)
    _log_gm(game, kind, text, note, now)
    return note.reason


def _locked(game_id: int) -> Game:
    return Game.objects.select_for_update().get(pk=game_id)


def _open_step_of(game: Game) -> Step:
    step = game.steps.filter(number=game.step_number, status=Step.Status.OPEN).first()
    if step is None:
        raise PostalError("the game has no open step")
    return step


class StepMovedOnForGM(PostalError):
    """A GM action for a step that is no longer the current one (a double click, two GMs at
    once, an old page): nothing was done. The message says what happened in the GM's
    words."""


def check_shown_step(game: Game, shown: int | None, *, until_the_end: bool = True) -> None:
    """StepMovedOnForGM unless ``game``'s current step is ``shown``, the step the GM's page
    showed when the GM acted. Called with the game's row locked, in the transaction of the
    action, so no other resolution or rollback can slip in between. None: the caller names
    no step (code, not a person clicking), and nothing is checked. ``until_the_end``: the
    action is on the step itself, which the game's last resolution closed, so a finished
    game has moved on from it too (its last step keeps its number)."""
    if shown is None:
        return
    ended = until_the_end and game.status == Game.Status.FINISHED
    if game.step_number == shown and not ended:
        return
    values = {"shown": shown, "current": game.step_number}
    if game.step_number >= shown and game.status == Game.Status.FINISHED:
        message = gettext(
            "nothing was done: step %(shown)d was already resolved, and the game is over"
        )
    elif game.step_number > shown:
        message = gettext(
            "nothing was done: step %(shown)d was already resolved; step %(current)d is open"
        )
    else:
        message = gettext(
            "nothing was done: step %(shown)d is no longer open: step %(current)d was rolled "
            "back and is open again"
        )
    raise StepMovedOnForGM(message % values)


def _check_rollback_shown(game: Game, shown: int | None) -> None:
    """StepMovedOnForGM unless ``shown``, the step the GM's page offered to roll back, is
    still the latest resolved step of ``game`` (whose row the caller holds locked)."""
    if shown is None or game.step_number == shown + 1:
        return
    values = {"shown": shown, "current": game.step_number}
    if game.step_number == shown:
        message = gettext(
            "nothing was done: step %(shown)d was already rolled back; it is open again"
        )
    elif game.status == Game.Status.FINISHED:
        message = gettext(
            "nothing was done: step %(shown)d is no longer the latest resolved step, and the "
            "game is over"
        )
    else:
        message = gettext(
            "nothing was done: step %(shown)d is no longer the latest resolved step; step "
            "%(current)d is open"
        )
    raise StepMovedOnForGM(message % values)


def invite(game_id: int, *, now: datetime) -> int:
    """Email every seat of a game not yet started its invitation with its link."""
    with transaction.atomic():
        game = _locked(game_id)
        if game.status not in (Game.Status.DRAFT, Game.Status.RECRUITING):
            raise PostalError("invitations go out before the game starts")
        seats = list(game.seats.order_by("position"))
        tokens = access.mint(seats, now=now)
        rows = [reports.invite_email(game, seat, tokens[seat.position], now) for seat in seats]
        queueing.queue(rows)
    return len(rows)


def extend_deadline(
    game_id: int,
    *,
    deadline: datetime,
    now: datetime,
    reason: str = "",
    by: int | None = None,
    shown_step: int | None = None,
) -> Step:
    """Move the open step's deadline to ``deadline`` (later than now); logged for the
    players with the GM's ``reason``. ``shown_step``: the step the GM's page showed
    (``check_shown_step``). A deadline the step already has (to the minute, as the GM's
    form writes it: a double click) is refused: nothing is logged, and nobody emailed."""
    note = _GMNote(_gm_reason(reason), by)
    with transaction.atomic():
        game = _locked(game_id)
        check_shown_step(game, shown_step)
        step = _open_step_of(game)
        if deadline <= now:
            raise PostalError("the new deadline must be in the future")
        if _to_the_minute(deadline) == _to_the_minute(step.deadline):
            raise PostalError(
                gettext("nothing was done: the deadline of step %(number)d is already %(when)s")
                % {
                    "number": step.number,
                    "when": schedule.local_time(step.deadline, game.time_zone),
                }
            )
        step.deadline = deadline
        moved = engine_text._(
            "The GM moved the deadline to %(when)s", when=_moment(deadline, game.time_zone)
        )
        _log_gm(game, GMAction.Kind.DEADLINE, moved, note, now, step)
        step.save(update_fields=["deadline"])
        _tell_deadline(game, step, now)
    return step


def _to_the_minute(moment: datetime) -> datetime:
    return moment.replace(second=0, microsecond=0)


# The months as an absence's last day names them, in the reader's language (games.lib.words).
MONTHS = (
    engine_text._("January"),
    engine_text._("February"),
    engine_text._("March"),
    engine_text._("April"),
    engine_text._("May"),
    engine_text._("June"),
    engine_text._("July"),
    engine_text._("August"),
    engine_text._("September"),
    engine_text._("October"),
    engine_text._("November"),
    engine_text._("December"),
)


def _day_and_month(day: date) -> engine_text.Text:
    """ "25 November", said in the reader's language ("25. November")."""
    return engine_text._("%(day)d %(month)s", day=day.day, month=MONTHS[day.month - 1])


# A moment's weekday and month as schedule.local_time writes them, in the reader's language.
# The weekdays are Django's own words for its "D" date format: their German is Django's.
WEEKDAYS_SHORT = (
    engine_text._("Mon"),
    engine_text._("Tue"),
    engine_text._("Wed"),
    engine_text._("Thu"),
    engine_text._("Fri"),
    engine_text._("Sat"),
    engine_text._("Sun"),
)
MONTHS_SHORT = (
    engine_text._("Jan"),
    engine_text._("Feb"),
    engine_text._("Mar"),
    engine_text._("Apr"),
    engine_text._("May"),
    engine_text._("Jun"),
    engine_text._("Jul"),
    engine_text._("Aug"),
    engine_text._("Sep"),
    engine_text._("Oct"),
    engine_text._("Nov"),
    engine_text._("Dec"),
)


def _moment(moment: datetime, time_zone: str) -> engine_text.Text:
    """``moment`` as ``schedule.local_time`` writes it ('Fri 27 Nov 2026 19:00 CET (18:00
    UTC)'), to be said in each reader's language ('Fr., 27. November 2026, 19:00 CET')."""
    local, utc = moment.astimezone(schedule.zone(time_zone)), moment.astimezone(UTC)
    when = engine_text._(
        "%(weekday)s %(day)02d %(month)s %(year)d %(time)s",
        weekday=WEEKDAYS_SHORT[local.weekday()],
        day=local.day,
        month=MONTHS_SHORT[local.month - 1],
        year=local.year,
        time=f"{local:%H:%M}",
    )
    if local.utcoffset() == utc.utcoffset():
        return engine_text._("%(when)s UTC", when=when)
    return engine_text._(
        "%(when)s %(zone)s (%(utc)s UTC)", when=when, zone=local.tzname(), utc=f"{utc:%H:%M}"
    )


def _tell_deadline(game: Game, step: Step, now: datetime, reason: str = "") -> None:
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


def pause(game_id: int, *, now: datetime, reason: str = "", by: int | None = None) -> None:
    """Stop the clock: no step resolves and no order is taken until the GM resumes; logged
    for the players with the GM's ``reason``."""
    note = _GMNote(_gm_reason(reason), by)
    with transaction.atomic():
        game = _locked(game_id)
        if game.status != Game.Status.RUNNING:
            raise PostalError(f"only a running game can be paused; this one is {game.status}")
        game.status = Game.Status.PAUSED
        game.paused_at = now
        game.save(update_fields=["status", "paused_at"])
        _log_gm(game, GMAction.Kind.PAUSE, engine_text._("The GM paused the game"), note, now)


def resume(game_id: int, *, now: datetime, reason: str = "", by: int | None = None) -> None:
    """Restart the clock; the open step's deadline moves on by the time spent paused;
    logged for the players with the GM's ``reason``."""
    note = _GMNote(_gm_reason(reason), by)
    with transaction.atomic():
        game = _locked(game_id)
        if game.status != Game.Status.PAUSED:
            raise PostalError(f"only a paused game can be resumed; this one is {game.status}")
        paused_for = now - (game.paused_at or now)
        Step.objects.filter(game=game, status=Step.Status.OPEN).update(
            deadline=F("deadline") + paused_for
        )
        game.status = Game.Status.RUNNING
        game.paused_at = None
        game.needs_gm = ""
        game.save(update_fields=["status", "paused_at", "needs_gm"])
        _log_gm(game, GMAction.Kind.RESUME, engine_text._("The GM resumed the game"), note, now)


def rollback(
    game_id: int,
    *,
    reason: str,
    now: datetime,
    by: int | None = None,
    shown_step: int | None = None,
) -> Step:
    """The GM undoes the resolution of the last resolved step N (a wrong postal order):
    the game is back in the state the resolution started from, the step open again with a
    new deadline and the players' orders standing; the defaults and autopilots' orders of
    the resolution, its events and its missed turns are gone. Its dice stay, marked
    ``rolled_back``, and the next resolution draws the next ones, so every die is still
    verified; the step keeps the range it skips for the record (docs/records.md).

    Only while step N+1 is open and has no order, in a running or paused game, for a step
    resolved by its deadline, early or by the GM (not one closed by an order that took
    effect at once). Every seat is emailed why; logged with the GM's ``reason``
    (required). PostalError, and nothing changed, otherwise. ``shown_step``: the step the
    GM's page offered to roll back; StepMovedOnForGM, and nothing changed, unless it is
    still the latest resolved one (a double click would otherwise roll back the step
    before it too)."""
    note = _GMNote(_gm_reason(reason), by)
    if not note.reason:
        raise PostalError("give the players a reason for rolling the step back")
    with transaction.atomic():
        game = _locked(game_id)
        _check_rollback_shown(game, shown_step)
        done, after = _rollable(game)
        _roll_back(game, done, after, note, now)
    return done


def rollback_offered(game: Game) -> int | None:
    """The number of the step the GM may roll back now (``rollback``), or None (two
    queries; nothing locked: ``rollback`` checks again)."""
    try:
        return _rollable(game)[0].number
    except PostalError:
        return None


def _rollable(game: Game) -> tuple[Step, Step]:
    """The last resolved step of ``game`` and the open one after it, when ``rollback``
    may undo the first; PostalError saying why not otherwise."""
    if game.status not in (Game.Status.RUNNING, Game.Status.PAUSED):
        raise PostalError(
            f"only a running or paused game can be rolled back; this one is {game.status}"
        )
    # Not game.steps: a caller's game may hold a prefetch of its open step only.
    numbers = (game.step_number - 1, game.step_number)
    steps = list(Step.objects.filter(game=game, number__in=numbers).order_by("number"))
    if len(steps) != 2 or steps[0].status != Step.Status.DONE:
        raise PostalError("the game has no resolved step to roll back")
    done, after = steps
    if after.status != Step.Status.OPEN:
        raise PostalError("the game has no open step")
    if done.number <= game.paper_steps:
        raise PostalError(
            f"step {done.number} was played on paper and entered from its record: it cannot "
            "be rolled back"
        )
    if done.resolved_from is None:
        raise PostalError(
            f"step {done.number} was closed by an order that took effect at once (or "
            "before rollbacks existed), not resolved: it cannot be rolled back"
        )
    if after.orders.exists() or after.dice_rolls.exists():
        raise PostalError(
            f"step {after.number} already has orders: a step can be rolled back only "
            "until the next one gets its first order"
        )
    return done, after


def _roll_back(game: Game, done: Step, after: Step, note: _GMNote, now: datetime) -> None:
    """``rollback``'s writes, the checks passed and the game locked."""
    start = done.resolved_from or {}
    first = start["die"]
    game.dice_rolls.filter(index__gte=first).update(rolled_back=True)
    played = done.orders.filter(source__in=(Order.Source.DEFAULT, Order.Source.AUTOPILOT))
    missed = list(played.values_list("seat_id", flat=True))
    if missed:
        # The resolution's missed turns, and the civil disorder they brought, are undone.
        # A seat taken over since (replace_player) has its new player's counters, started
        # at 0 after the resolution: the missed turn was the previous holder's, and stays
        # off the new player's record (0 - 1 broke the counters' CHECK constraint).
        Seat.objects.filter(pk__in=missed).update(
            nmr_count=Greatest(F("nmr_count") - 1, 0),
            missed_in_row=Greatest(F("missed_in_row") - 1, 0),
        )
        Seat.objects.filter(pk__in=missed, civil_disorder_at=done.closed_at).update(
            civil_disorder_at=None
        )
        played.delete()
    if start.get("event") is not None:
        done.events.filter(pk__gte=start["event"]).delete()
    # The reports and webhook deliveries of the step that goes keep their rows under a
    # key of their own, so that those of the step that opens in its place are written.
    rolled = f":rolled-back-{len(done.rollbacks or []) + 1}"
    for model, key in (
        (OutboundEmail, f"report:{game.pk}:{after.number}:"),
        (WebhookDelivery, f"step.opened:{game.pk}:{after.number}:"),
    ):
        model.objects.filter(game=game, dedupe_key__startswith=key).update(
            dedupe_key=Concat(F("dedupe_key"), Value(rolled))
        )
    after.delete()
    done.status = Step.Status.OPEN
    done.state_after = None
    done.closed_at = None
    done.closed_by = ""
    done.resolved_from = None
    done.rollbacks = [*(done.rollbacks or []), {"first": first, "count": game.dice_drawn - first}]
    done.deadline = schedule.next_deadline(game.schedule, game.time_zone, now)
    done.failures = 0
    done.last_error = ""
    game.state = start["state"]
    game.step_number = done.number
    game.save(update_fields=["state", "step_number"])
    rolled_back = engine_text._(
        "The GM rolled back step %(number)d: %(reason)s", number=done.number, reason=note.reason
    )
    _event_row(game, done, Event(rolled_back)).save()
    # Logged with the step's number, which the step's report reads (gm_acted).
    rolled_back = engine_text._("The GM rolled back step %(number)d", number=done.number)
    _log_gm(game, GMAction.Kind.ROLLBACK, rolled_back, note, now)
    done.gm_acted = True
    done.save()
    seats = list(game.seats.order_by("position"))
    tokens = access.mint(seats, now=now)
    # Said to each seat in its language (reports.deadline_email).
    why = format_lazy(
        gettext_lazy("the GM rolled back its resolution ({reason}); its orders are open again"),
        reason=note.reason,
    )
    queueing.queue(
        [
            reports.deadline_email(game, seat, done, tokens[seat.position], reason=why)
            for seat in seats
        ]
    )


def rotate_link(game_id: int, *, position: int, now: datetime) -> str:
    """Every link of the seat stops working; the seat is emailed a new one."""
    with transaction.atomic():
        game = _locked(game_id)
        seat = _seat(game, position)
        calendar.forget_seat_feed(seat)
        seat.link_version += 1
        seat.save(update_fields=["link_version"])
        token = access.mint([seat], now=now)[position]
        queueing.queue([reports.link_email(game, seat, token)], urgent=True)
    return token


def ask_lost_links(email: str) -> None:
    """The request's part of "email me my links": once its transaction commits, a worker
    is asked to send them (``send_lost_links``, the task SEND_LOST_LINKS, on the urgent
    queue). The request looks nothing up, so it does the same work and takes as long
    whether or not the address plays here. With the broker away nothing is sent, the
    warning is logged (without the address) and the asker is answered as always: asking
    again later sends the links."""
    transaction.on_commit(partial(_publish_lost_links, email))


def _publish_lost_links(email: str) -> None:
    try:
        current_app.tasks[SEND_LOST_LINKS].delay(email=email)
    except Exception:
        log.warning("could not enqueue a request for lost links; nothing is sent", exc_info=True)


def send_lost_links(email: str, *, now: datetime) -> int:
    """Email the address one message with a fresh link to each of its seats in games that
    are not over (the address in any case); returns how many seats. An address with no
    such seat gets nothing, and its asker is told the same (the view says nothing else).

    The seats' earlier links keep working: anyone may ask for any address's links, so
    asking must not close a player's bookmarked page (closing them is the GM's
    ``rotate_link``). The new links are minted for the email alone, as every email's are."""
    seats = list(
        Seat.objects.select_related("game")
        .filter(email__iexact=email.strip())
        .exclude(game__status__in=[Game.Status.FINISHED, Game.Status.ABANDONED])
        .order_by("game_id", "position")
    )
    if not seats:
        return 0
    with transaction.atomic():
        tokens = access.mint_each(seats, now=now)
        queueing.queue_once([reports.lost_links_email(seats, tokens, now)], urgent=True)
    return len(seats)


def replace_player(
    game_id: int,
    *,
    position: int,
    name: str,
    email: str,
    now: datetime,
    reason: str = "",
    by: int | None = None,
    shown_step: int | None = None,
) -> Seat:
    """A new person takes the seat: new name and address, new link; the seat keeps its
    state, and the old person's links stop working. Logged for the players with
    ``reason`` (``GMAction``): by name, never by address. ``shown_step``: the step the GM's
    page showed (``check_shown_step``). The name and address that already hold the seat
    are refused (a double click): nothing changes ("Send a new link" gives a new link).

    A person at another address starts a new tenure of the seat (``Seat.tenure``): the
    private messages of the one who leaves stay theirs, and the choices of their own (time
    zone, language, how often reports and messages are emailed, what plays a missed turn)
    become the newcomer's own, or the game's defaults. Every token of the seat (links,
    the browsers they opened, the reply, press, stop and calendar addresses) holds the
    link version, which moves on."""
    note = _GMNote(_gm_reason(reason), by)
    name = _single_line(name, "the name")
    email = _single_line(email, "the email")
    try:
        validate_email(email)
    except ValidationError:
        raise PostalError(f"{email!r} is not one email address") from None
    with transaction.atomic():
        game = _locked(game_id)
        # A seat is replaced in a finished game too: at the step it finished at.
        check_shown_step(game, shown_step, until_the_end=False)
        seat = _seat(game, position)
        if seat.name == name and seat.email.lower() == email.lower():
            raise PostalError(
                gettext("nothing was done: %(name)s <%(email)s> already plays seat %(seat)d")
                % {"name": seat.name, "email": seat.email, "seat": seat.position + 1}
            )
        if game.seats.exclude(pk=seat.pk).filter(name__iexact=name).exists():
            raise PostalError(f"another player is already called {name!r}")
        _log_gm(game, GMAction.Kind.REPLACE, _replaced(seat, name, email), note, now)
        if seat.email.lower() != email.lower():
            # The player who leaves keeps the seat in their record, abandoned.
            Handover.objects.create(
                seat=seat, name=seat.name, email=seat.email, held_since=seat.held_since, left_at=now
            )
            seat.held_since = now
            seat.tenure += 1
            seat.email_failing, seat.email_failing_at = "", None
            # The new person's own default, else the game's; told from now on.
            address = email_choices.normalise(email)
            seat.reports = email_choices.defaults([email]).get(address, "")
            seat.language = languages.of_addresses([email]).get(address, "")
            seat.time_zone = (
                PlayerRow.objects.filter(email=address).values_list("time_zone", flat=True).first()
                or ""
            )
            seat.reported_through = _latest_event(game)
            seat.press_email = PressEmail.EACH
            seat.press_told = _latest_message(game)
        seat.name, seat.email = name, email
        calendar.forget_seat_feed(seat)
        seat.link_version += 1
        seat.nmr_count = 0
        # A new player: their own autopilot choice, extensions and missed turns.
        seat.autopilot = ""
        seat.extensions_used = seat.missed_in_row = seat.away_hours_used = 0
        seat.civil_disorder_at = None
        seat.save(
            update_fields=[
                "name",
                "email",
                "link_version",
                "nmr_count",
                "autopilot",
                "extensions_used",
                "missed_in_row",
                "away_hours_used",
                "civil_disorder_at",
                "held_since",
                "email_failing",
                "email_failing_at",
                "reports",
                "language",
                "reported_through",
                "tenure",
                "time_zone",
                "press_email",
                "press_told",
            ]
        )
        token = access.mint([seat], now=now)[position]
        queueing.queue([reports.link_email(game, seat, token)], urgent=True)
    return seat


def _latest_message(game: Game) -> int:
    """The id of the game's latest message between players (0: none yet)."""
    return game.press_messages.order_by("-id").values_list("id", flat=True).first() or 0


def _replaced(seat: Seat, name: str, email: str) -> engine_text.Text:
    """A replacement in the players' words: names only, never an address."""
    if seat.email.lower() != email.lower():
        return engine_text._("The GM gave %(old)s's seat to %(new)s", old=seat.name, new=name)
    if seat.name != name:
        return engine_text._("The GM renamed %(old)s to %(new)s", old=seat.name, new=name)
    return engine_text._("The GM gave %(name)s a new link", name=seat.name)


def resend_report(game_id: int, *, position: int, now: datetime) -> None:
    """Send the seat its current report again, with a fresh link."""
    with transaction.atomic():
        game = _locked(game_id)
        seat = _seat(game, position)
        if game.state is None:
            raise PostalError("the game has not started; there is no report yet")
        token = access.mint([seat], now=now)[position]
        queueing.queue([reports.current_report_email(game, seat, token, now)], urgent=True)


def _capability(game: Game, name: str, without: str) -> tuple[Engine[Any, Any, Any], Any]:
    """The game's engine and its optional method ``name``; PostalError if it has none."""
    engine = registry.get(game.engine)
    method = getattr(engine, name, None)
    if method is None:
        raise PostalError(f"{engine.title} {without}")
    return engine, method


def set_order(
    game_id: int,
    *,
    names: Sequence[str],
    now: datetime,
    reason: str = "",
    by: int | None = None,
    shown_step: int | None = None,
) -> Game:
    """The host enters the actual order of a First Player round (rules F-16) while its gift
    window or rolling is open, because the real game has its own first-player rule; the
    round's transfers still apply and the game moves on as after a reveal. Logged for the
    players with the GM's ``reason``. ``shown_step``: the step the GM's page showed
    (``check_shown_step``)."""
    note = _GMNote(_gm_reason(reason), by)
    with transaction.atomic():
        game = _locked(game_id)
        check_shown_step(game, shown_step)
        engine, host_order = _capability(game, "host_order", "has no order for the host to set")
        if game.status != Game.Status.RUNNING:
            raise PostalError(
                f"the game is {game.status}; the host sets the order of a running game"
            )
        step = _open_step_of(game)
        seats = list(game.seats.order_by("position"))
        by_name = {seat.name.lower(): seat.position for seat in seats}
        try:
            order = [by_name[name.strip().lower()] for name in names]
        except KeyError as missing:
            raise PostalError(f"{missing.args[0]!r} is not a player of this game") from None
        try:
            state, events = host_order(engine.state_from_json(game.state), order)
        except GameError as error:
            raise PostalError(error.message) from None
        _record(
            game,
            step,
            VerifiableDice(bytes(game.seed or b""), game.pk, start=game.dice_drawn),
            events,
        )
        named = engine_text._(
            "The GM set the actual order: %(names)s",
            names=", ".join(seats[position].name for position in order),
        )
        _log_gm(game, GMAction.Kind.HOST_ORDER, named, note, now, step)
        # Kept for the record, which replays it (archive.export, docs/records.md).
        step.host_order = order
        step.save(update_fields=["host_order"])
        closed = _close_step(step, state, engine, now, Step.Closed.GM)
        _advance(game, seats, engine, state, events, now, state_json=closed, closed=step)
        game.save()
    return game


def _next_title(title: str) -> str:
    match = re.fullmatch(r"(.*), game (\d+)", title)
    if match:
        return f"{match[1]}, game {int(match[2]) + 1}"
    return f"{title}, game 2"


def play_again(game_id: int, *, now: datetime) -> Game:
    """The next game with the same players and options, started at once, once the game is
    finished. Where the game's rules say how a game follows another (``engine.follow_up``:
    Drop-Shy's loser places first and the instigator is rolled for the winner), they set the
    seats and options; else the seats keep their order. Same schedule, zone, reminders and
    rating (a rated game's next game is rated)."""
    with transaction.atomic():
        game = _locked(game_id)
        engine = registry.get(game.engine)
        if game.status != Game.Status.FINISHED:
            raise PostalError("the game is not over yet; the next game follows the final standings")
        if game.next_games.exists():
            raise PostalError(f"the next game, {game.next_games.get().title}, has already started")
        seats = {seat.name: seat for seat in game.seats.order_by("position")}
        follow_up = getattr(engine, "follow_up", None)
        if follow_up is not None:
            names, options = follow_up(engine.state_from_json(game.state))
        else:
            names, options = list(seats), game.options
        new = create_game(
            gm=game.gm,
            engine_key=game.engine,
            title=_next_title(game.title),
            players=[
                Player(
                    seats[name].name, seats[name].email, seats[name].time_zone, seats[name].language
                )
                for name in names
            ],
            options=options,
            time_zone=game.time_zone,
            schedule_spec=game.schedule,
            early_processing=game.early_processing,
            rated=game.rated,
            missed=MissedTurns.of(game),
            private_press=game.private_press,
            language=game.language,
        )
        new.previous, new.reminders = game, game.reminders
        new.save(update_fields=["previous", "reminders"])
        return start_game(new.pk, now=now)


# --- a game continued from paper ------------------------------------------------------------


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
        _log_gm(
            game,
            GMAction.Kind.IMPORT,
            engine_text.ngettext(
                "The game was continued from a paper record (%(count)d step)",
                "The game was continued from a paper record (%(count)d steps)",
                game.paper_steps,
            ),
            _GMNote("", None),
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
    _mark_told([seat.pk for seat in seats], _latest_event(game))


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
    deadline = schedule.next_deadline(game.schedule, game.time_zone, now)
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
        _event_row(game, step, event)
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


def set_public(game_id: int, public: str) -> Game:
    """The GM's choice of who may watch the game (``Publicity``; games.records.spectators)."""
    if public not in Publicity.values:
        raise PostalError(f"{public!r} is not a choice of who may watch the game")
    with transaction.atomic():
        game = _locked(game_id)
        game.public = public
        game.save(update_fields=["public"])
    return game


def set_language(game_id: int, language: str) -> Game:
    """The GM's choice of the language of the game's players' pages and emails; a seat
    that chose its own keeps it (docs/languages.md)."""
    if language not in languages.NAMES:
        raise PostalError(f"{language!r} is not a language of this service")
    with transaction.atomic():
        game = _locked(game_id)
        game.language = language
        game.save(update_fields=["language"])
    return game


def clear_needs_gm(game_id: int) -> None:
    """The GM has looked at a failing step: let the sweep try it again."""
    with transaction.atomic():
        game = _locked(game_id)
        Step.objects.filter(game=game, status=Step.Status.OPEN).update(failures=0)
        game.needs_gm = ""
        game.save(update_fields=["needs_gm"])


def mark_email_failing(game_id: int, address: str, reason: str, *, now: datetime) -> list[Seat]:
    """The ESP reported ``address`` bouncing, complaining or rejected: every seat of the
    game with that address not yet marked is marked with ``reason`` (the GM panel shows
    it; replacing the address clears it). Returns the seats marked now, in the caller's
    transaction."""
    seats = list(Seat.objects.filter(game_id=game_id, email__iexact=address, email_failing=""))
    Seat.objects.filter(pk__in=[seat.pk for seat in seats]).update(
        email_failing=reason, email_failing_at=now
    )
    return seats
