"""What a missed deadline does (docs/players.md): the seats that sent no order play their
autopilot or the NMR default and count a missed turn, until civil disorder; or the
deadline waits, for a seat whose player is away or has an automatic extension left."""

from __future__ import annotations

import logging
import math
from datetime import date, datetime, timedelta
from typing import Any

from django.db.models import F

from games.community import absences
from games.engines import registry
from games.engines import text as engine_text
from games.engines.base import Dice, Engine, Event, GameError, Strategy
from games.engines.dice import VerifiableDice
from games.lib import words
from games.models import AbsencePolicy, Decision, Game, Order, Seat, SignUp, SignUpMode, Step
from games.models import Event as EventRow
from games.notify import ledger, reports
from games.postal.steps import event_row, same_prompts, tell_deadline
from moderator.mail import queueing

# The package's logger: its lines keep the name whichever module writes them.
log = logging.getLogger("games.postal")


def missed_turns(
    game: Game,
    step: Step,
    engine: Engine[Any, Any, Any],
    state: Any,
    dice: VerifiableDice,
    missing: list[int],
    by_position: dict[int, Seat],
    away: dict[int, absences.Away],
    now: datetime,
) -> tuple[Any, list[Event], bool, list[int]]:
    """The seats at ``missing`` sent no order for ``step``: each seat's autopilot plays its
    order into ``state`` (``_autopilot``), or the engine's NMR default is recorded for
    ``resolve`` to play. Each seat counts a missed turn; one that has missed
    ``civil_disorder_after`` in a row falls into civil disorder (its GM is told). Returns
    the state with the autopilots' orders, what they did, whether one of them took effect
    at once and moved the game on, and the positions of the seats that fell into civil
    disorder."""
    rows: list[Order] = []
    events: list[Event] = []
    decided: list[Decision] = []
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
            moved_on = not same_prompts(words.prompt_list(engine.prompts(state)), step.prompts)
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
            decided.append(
                ledger.note(
                    game,
                    seat,
                    Decision.Kind.AUTOPILOT,
                    now,
                    step.number,
                    autopilot=strategy.key,
                    chosen=bool(seat.autopilot),
                    order=engine.canonical(before, position, order),
                )
            )
        else:
            order = engine.default(state, position)
            source = Order.Source.DEFAULT
            decided.append(
                ledger.note(
                    game,
                    seat,
                    Decision.Kind.DEFAULT,
                    now,
                    step.number,
                    order=engine.canonical(before, position, order),
                )
            )
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
    fallen: list[int] = []
    if game.civil_disorder_after:
        fallen = _fallen(game, missed, by_position)
        events += _civil_disorder(game, fallen, by_position, now)
        decided += [
            ledger.note(
                game,
                by_position[position],
                Decision.Kind.CIVIL_DISORDER,
                now,
                step.number,
                count=game.civil_disorder_after,
            )
            for position in fallen
        ]
    ledger.write(decided)
    return state, events, moved_on, fallen


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


def _fallen(game: Game, missing: list[int], by_position: dict[int, Seat]) -> list[int]:
    """The missing seats that have now missed ``civil_disorder_after`` turns in a row and
    were not in civil disorder yet."""
    return [
        position
        for position in missing
        if by_position[position].civil_disorder_at is None
        and by_position[position].missed_in_row + 1 >= game.civil_disorder_after
    ]


def _civil_disorder(
    game: Game, positions: list[int], by_position: dict[int, Seat], now: datetime
) -> list[Event]:
    """The seats at ``positions`` fall into civil disorder: marked, told in the report, and
    their GM alerted by email."""
    limit = game.civil_disorder_after
    fallen = [by_position[position] for position in positions]
    if not fallen:
        return []
    Seat.objects.filter(pk__in=[seat.pk for seat in fallen]).update(civil_disorder_at=now)
    queueing.queue([reports.civil_disorder_email(game, fallen, now)], urgent=True)
    # A first-come game's reserves take such seats once the step is resolved (the signal
    # civil_disorder): the report says so of as many seats as reserves wait.
    reserves = 0
    if game.signup == SignUpMode.FIRST:
        reserves = game.signups.filter(state=SignUp.State.WAITING, position__isnull=True).count()
    taken, fallen = fallen[:reserves], fallen[reserves:]
    events = [
        Event(
            engine_text.ngettext(
                "%(name)s has missed %(count)d turn in a row: the seat is in civil disorder "
                "and goes to the first reserve",
                "%(name)s has missed %(count)d turns in a row: the seat is in civil disorder "
                "and goes to the first reserve",
                limit,
                name=seat.name,
            )
        )
        for seat in taken
    ]
    return events + _left_in_disorder(game, fallen, limit)


def _left_in_disorder(game: Game, fallen: list[Seat], limit: int) -> list[Event]:
    """The report's words for seats in civil disorder that no reserve takes."""
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


def held_back(
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
    for nothing. The game's history says so, and the new deadline is emailed to the seats
    that owe an order and to those that get every report (``tell_deadline``)."""
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
    decided: list[Decision] = []
    if waits:
        deadline = max(waits.values())
        for seat, until in waits.items():
            hours = math.ceil((until - step.deadline).total_seconds() / 3600)
            seat.away_hours_used += hours
            seat.save(update_fields=["away_hours_used"])
            decided.append(
                ledger.note(
                    game,
                    seat,
                    Decision.Kind.ABSENCE,
                    now,
                    step.number,
                    until=deadline.isoformat(),
                    cap=game.absence_cap_hours,
                )
            )
            last_day = away[seat.pk].last_day
            events.append(
                Event(
                    engine_text._(
                        "%(name)s is away until %(day)s: the deadline of %(step)s waits for them",
                        name=seat.name,
                        day=_day_and_month(last_day),
                        step=words.step_words(game.rules.step_word, step.number),
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
            decided.append(
                ledger.note(
                    game,
                    seat,
                    Decision.Kind.EXTENSION,
                    now,
                    step.number,
                    hours=game.extension_hours,
                    left=left,
                    total=game.extensions,
                )
            )
            events.append(
                Event(
                    engine_text._(
                        "%(name)s missed the deadline of %(step)s and used an automatic "
                        "extension (%(left)s left): the deadline moved by %(hours)s",
                        name=seat.name,
                        step=words.step_words(game.rules.step_word, step.number),
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
    step.remind_at = None  # its reminders come again for the new deadline
    step.save(update_fields=["deadline", "remind_at"])
    ledger.write(decided)
    EventRow.objects.bulk_create(event_row(game, step, event) for event in events)
    reason = words.Said(engine_text.join([event.text for event in events], "; "))
    tell_deadline(game, step, now, reason=reason)
    return True


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
