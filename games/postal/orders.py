"""An order taken in: from a player's page, an email or the GM's panel, for the step open
now, or refused with the reason in the player's words. Its receipt is written later
(``receipts``); an order that moves the game on closes its step, or resolves it early.

An order from a player's page finds its seat and the open step in the one statement that
locks the game (``_linked_seat_and_step``): the hottest read of the service."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import Any, NamedTuple, TypeVar

from django.db import connection, models, transaction
from django.utils import translation
from django.utils.translation import gettext, gettext_lazy

from games import records
from games.engines import registry
from games.engines import text as engine_text
from games.engines.base import Dice, Engine, Event, OrderError
from games.engines.dice import VerifiableDice
from games.lib import schedule, words
from games.models import ApiToken, DiceRoll, Game, GMAction, Order, Seat, Step, TokenAction
from games.postal import conditionals
from games.postal.errors import NotAdmitted, OrderRejected, SeatNotFound, StepMovedOn
from games.postal.gm_log import GMNote, check_shown_step, gm_reason, log_gm
from games.postal.locks import locked
from games.postal.resolving import resolve
from games.postal.seats import mark_bot
from games.postal.steps import ADVANCED_FIELDS, advance, close_step, game_dice, record, same_prompts

_Row = TypeVar("_Row", bound=models.Model)


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
    token: ApiToken | None = None,
    admit: Callable[[Seat], bool] | None = None,
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

    An accepted order is marked as owed its receipt (``owes_receipt``: an order made on
    the seat's page only when its player asked for them), which ``write_receipts`` writes
    (the workers' task, every RECEIPT_SECONDS).

    An order the GM enters for a seat (``Order.Source.GM``) is logged for the players
    (``GMAction``) with the GM's ``reason`` and user id ``by``: which seat, never its text.
    ``shown_step``: the step the GM's page showed when the GM entered it; StepMovedOnForGM,
    and nothing written, once the game has moved on from it (``check_shown_step``, under
    the game's lock). Unlike ``step_number``, never carried over to the step open now.

    ``token``: the API token a program sent it with (``Order.Source.API``): the order is
    recorded as made with it, and a bot's token marks the seat as played by a bot (a game
    that does not allow bots refuses it). ``admit``: as for ``accept_linked_order``, asked
    of the locked seat (the API's check that the token still opens it).
    """
    logged = None
    if source == Order.Source.GM:
        logged = GMNote(gm_reason(reason), by)

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
        admit,
        ignored=ignored,
        dropped=dropped,
        logged=logged,
        token=token,
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
    logged: GMNote | None = None,
    token: ApiToken | None = None,
) -> Order:
    if "\x00" in text:
        # Never a part of an order, and the record (PostgreSQL text) cannot hold it.
        raise OrderRejected(
            gettext(
                "the order holds a NUL character, so nothing was recorded; write it as plain text"
            )
        )
    with transaction.atomic(), contextlib.ExitStack() as speaking:
        seat, read_with_lock = locked_seat()
        if source in SPOKEN_TO_THE_SEAT:
            # What is said to the seat of its order is said in the seat's language (the
            # GM panel's refusals stay in English).
            speaking.enter_context(translation.override(seat.speaks))
        if admit is not None and not admit(seat):
            raise NotAdmitted("too many orders from this seat or address in the last minute")
        game, position = seat.game, seat.position
        if token is not None and token.bot and not game.bots_allowed:
            raise OrderRejected(gettext("the GM of this game does not allow bots"))
        step = _current_open_step(game, seat, now, read_with_lock)
        happened = None
        if step_number is not None and step_number != step.number:
            happened = _carried_over(game, seat, step_number, step)
        engine = registry.get(game.engine)
        state = engine.state_from_json(game.state)
        dice = game_dice(game)
        played = _play(engine, state, position, text, dice, happened)
        if position not in step.prompted_seats:
            raise OrderRejected(_not_owed(engine.step_word))
        prompts = words.prompt_list(engine.prompts(played.state))
        same = same_prompts(prompts, step.prompts)
        # An order that changed the prompts took effect at once: the receipt says what it
        # did, as this seat may see it; a sealed order is echoed as sealed.
        results = []
        if played.refused is None and not same:
            results = [
                words.Said(event.text) for event in played.events if event.visible_to(position)
            ]
        if (
            played.refused is None
            and not dice.draws
            and same
            and engine.state_to_json(played.state) == game.state
        ):
            # The state holds each seat's sealed order: unchanged, the order may repeat the
            # one that counts (the only case that costs this read).
            counting = _repeated(step, seat, engine.canonical(state, position, played.order))
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
            parsed=engine.order_to_json(played.order),
            canonical=(
                engine.canonical(state, position, played.order) if played.refused is None else text
            ),
            source=source,
            received_at=now,
            receipt_due=played.refused is None and owes_receipt(seat, source),
            results=results,
            ignored=ignored,
            dropped=dropped,
            token=token,
        )
        row.carried_over = happened
        if played.refused is None or not same:
            # A refused order is written only when the lines it played moved the game on:
            # they are then part of the step's record. Otherwise it must not count as this
            # step's answer, and nothing of it but its dice and events is kept.
            _write(row, logged, now)
        _take_effect(row, engine, played, dice, prompts, now)
    if played.refused is not None:
        # The engine's message says which lines were played and stand.
        rejected = OrderRejected(played.refused)
        rejected.partly_played = True
        raise rejected
    return row


def owes_receipt(seat: Seat, source: str) -> bool:
    """Whether an order from ``source`` is answered by a receipt by email: always, but an
    order made on the seat's page, which shows it at once, only when the seat's player
    turned them on (``Seat.web_receipts``)."""
    return source not in (Order.Source.WEB, Order.Source.API) or seat.web_receipts


class _Played(NamedTuple):
    """An order as the engine took it: the order, the state and events after it, and the
    engine's words for the line it refused (None: it took the whole order)."""

    order: Any
    state: Any
    events: list[Event]
    refused: str | None


def _play(
    engine: Engine[Any, Any, Any],
    state: Any,
    position: int,
    text: str,
    dice: VerifiableDice,
    happened: str | None,
) -> _Played:
    """``text`` parsed and submitted for the seat at ``position``. OrderRejected when the
    engine takes none of it; an order carried over from the step it was written for
    (``happened``, by ``_carried_over``) is taken whole or raises StepMovedOn."""
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
        new_state, events = error.applied
        return _Played(order, new_state, events, words.Said(error.message))
    return _Played(order, new_state, events, None)


def _write(row: Order, logged: GMNote | None, now: datetime) -> None:
    """Save the order ``row``: its seat's player is back, and an order the GM entered is
    logged for the players."""
    row.save()
    seat = row.seat
    if seat.missed_in_row or seat.civil_disorder_at is not None:
        # The player is back: no missed turns in a row, no civil disorder.
        Seat.objects.filter(pk=seat.pk).update(missed_in_row=0, civil_disorder_at=None)
    token = row.token
    if token is not None:
        if token.bot and not seat.bot:
            mark_bot(seat.pk)
            seat.bot = True
        TokenAction.objects.create(
            token=token,
            kind=TokenAction.Kind.ORDER,
            game_id=seat.game_id,
            position=seat.position,
            step_number=row.step.number,
            row_id=row.pk,
            words=f"order for {seat.name}: {row.canonical}"[:200],
            at=now,
        )
    if logged is not None:
        # Before the step may close (_take_effect): its report reads the step's log.
        log_gm(
            seat.game,
            GMAction.Kind.ORDER,
            engine_text._("The GM entered an order for %(name)s", name=seat.name),
            logged,
            now,
            step=row.step,
        )


def _take_effect(
    row: Order,
    engine: Engine[Any, Any, Any],
    played: _Played,
    dice: VerifiableDice,
    prompts: list[dict[str, Any]],
    now: datetime,
) -> None:
    """The order ``row``'s dice and events recorded and its state the game's; then the
    step stays open, owing ``prompts`` now, or closes (the order took effect at once and
    moved the game on), or is resolved early (every order is in). The game row is saved
    with what changed."""
    game, step, position = row.seat.game, row.step, row.seat.position
    stored = (game.state, game.dice_drawn)
    record(game, step, dice, played.events)
    game.state = engine.state_to_json(played.state)
    moved_on = False
    if not same_prompts(prompts, step.prompts) and records.stays_open(
        step.prompts, prompts, position
    ):
        # A simultaneous step where each seat acts at its own pace (a First Player roll):
        # the step stays open, with its deadline, until the engine moves the game on.
        # What it owes changed: the orders before this one no longer answer it.
        step.prompts, step.answers_after = prompts, row.pk
        step.save(update_fields=["prompts", "answers_after"])
    elif not same_prompts(prompts, step.prompts):
        # An order that took effect at once and moved the game on: the step is done.
        if row.source == Order.Source.CONDITIONAL:
            # Its report says so (``queue_reports``).
            step.conditional_played = [(row.seat.name, row.canonical)]
        seats = list(game.seats.order_by("position"))
        closed = close_step(step, played.state, engine, now, Step.Closed.ORDER)
        advance(
            game, seats, engine, played.state, played.events, now, state_json=closed, closed=step
        )
        moved_on = True
    elif played.refused is None and game.early_processing and _all_answered(step):
        resolve(game, step, engine, played.state, now, Step.Closed.EARLY)
        moved_on = True
    if moved_on:
        game.save(update_fields=ADVANCED_FIELDS)
        # The seat prompted now may have left a conditional order for this.
        conditionals.play_armed(game, now)
    elif (game.state, game.dice_drawn) != stored:
        # Otherwise only these two change, and a revision that repeats the sealed order
        # changes neither: then the game row is left as it is.
        game.save(update_fields=["state", "dice_drawn"])


# The orders whose refusal is said to the seat's player: on their page or by email.
SPOKEN_TO_THE_SEAT = (Order.Source.WEB, Order.Source.EMAIL, Order.Source.API)


def _repeated(step: Step, seat: Seat, canonical: str) -> Order | None:
    """The seat's order that counts in ``step`` if it reads ``canonical``, else None."""
    counting = (
        Order.objects.filter(step=step, seat=seat)
        .exclude(source=Order.Source.DEFAULT)
        .order_by("-received_at", "-id")
        .first()
    )
    return counting if counting is not None and counting.canonical == canonical else None


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
# read when it is first used, a query more (tests/games/postal/test_postal.py compares these with
# the models).
SEAT_COLUMNS = (
    "id", "game_id", "position", "name", "email", "time_zone", "status", "link_version",
    "nmr_count", "email_failing", "email_failing_at", "reports", "reported_through",
    "autopilot", "ladder", "extensions_used", "missed_in_row", "away_hours_used",
    "civil_disorder_at", "held_since", "press_email", "press_told", "language", "tenure",
    "web_receipts", "bot",
)  # fmt: skip
GAME_COLUMNS = (
    "id", "engine", "title", "public_id", "options", "status", "gm_id", "time_zone",
    "schedule", "early_processing", "seed", "commitment", "seed_revealed", "dice_drawn",
    "state", "step_number", "needs_gm", "reminders", "avoid_nights", "bots_allowed", "paused_at",
    "previous_id",
    "created_at", "started_at", "finished_at", "signup", "seats_wanted", "extensions",
    "extension_hours", "absence_policy", "absence_cap_hours", "civil_disorder_after",
    "offer_seats", "rated", "rated_at", "public", "paper_steps", "paper_dice", "private_press",
    "language",
)  # fmt: skip
STEP_COLUMNS = (
    "id", "game_id", "number", "status", "opened_at", "deadline", "prompts", "closed_at",
    "closed_by", "failures", "last_error", "gm_acted", "answers_after",
)  # fmt: skip
_JSON_COLUMNS = {"options", "schedule", "state", "reminders", "prompts", "ladder"}
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
        locked(game_id)  # Game.DoesNotExist for a game that is not there
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
                "too late: the deadline passed at %(deadline)s, so nothing was recorded; "
                "%(step)s is being resolved and its report comes by email"
            )
            % {
                "deadline": schedule.local_time(step.deadline, seat.zone),
                "step": words.step_name(registry.get(game.engine).step_word, step.number),
            }
        )
    return step


def _not_owed(word: str) -> str:
    """Why an order from a seat that owes none in the open step is refused, the step
    called by its game's ``word``."""
    return gettext(
        "you owe no order %(this_step)s, so nothing was recorded; the page shows whose turn it is"
    ) % {"this_step": words.this_step(word)}


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
    word = registry.get(game.engine).step_word
    previous = game.steps.filter(number=step_number).first()
    if previous is None or previous.closed_at is None or step_number > step.number:
        raise OrderRejected(
            gettext(
                "this form is for %(step)s, which never opened, so nothing was recorded; "
                "reload your page and send the order from its form"
            )
            % {"step": words.step_name(word, step_number)}
        )
    said = {
        "step": words.step_name(word, step_number),
        "when": schedule.local_time(previous.closed_at, seat.zone),
        "cause": _cause(previous, seat),
        "current": words.step_name(word, step.number),
    }
    if step.number > step_number + 1:
        happened = gettext(
            "%(step)s was resolved at %(when)s %(cause)s, and the game moved on to %(current)s"
        )
    else:
        happened = gettext("%(step)s was resolved at %(when)s %(cause)s; %(current)s is open now")
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
