"""Conditional orders (docs/orders.md): a player whose turn it is not leaves orders for what the
others might do, in the game's own words (``games.engines.base.Conditions``), by the seat's
page, by email or through the API. ``leave`` checks one against the rules under the game's
lock and keeps it armed; ``play_armed``, called in the transaction of every order and
resolution that moves a game on, asks the rules of each armed one: played (as an order of
its seat, ``Order.Source.CONDITIONAL``, through ``accept_order``: the same checks and
record), waiting, or disarmed, the situation it assumed gone. Played or disarmed, the
player is told: their seat's ledger says which and why (``games.notify.ledger``), and a
played one is answered by a receipt like any order."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils.translation import gettext

from games.engines import registry
from games.engines.base import OrderError
from games.lib import words
from games.models import ApiToken, ConditionalOrder, Decision, Game, Order, Seat, Step, TokenAction
from games.notify import commands
from games.postal import orders
from games.postal.errors import OrderRejected, PostalError
from games.postal.locks import locked
from moderator.mail import queueing

# The most conditional orders a seat may hold armed at once; they are tried in the order
# they were written, and the first whose condition meets the game plays.
MOST_ARMED = 3


class ConditionalRejected(PostalError):
    """A conditional order not kept: ``message`` says why; nothing was written."""


def leave(
    *,
    game_id: int,
    position: int,
    text: str,
    source: str,
    now: datetime,
    token: ApiToken | None = None,
) -> ConditionalOrder:
    """Keep the conditional order ``text`` of the seat at ``position``, armed, once the rules
    take it now; ConditionalRejected, and nothing written, otherwise."""
    with transaction.atomic():
        game = locked(game_id)
        conditions = registry.CONDITIONS.get(game.engine)
        if conditions is None:
            raise ConditionalRejected(gettext("conditional orders are not used in this game"))
        if game.status != Game.Status.RUNNING:
            raise ConditionalRejected(gettext("the game is not running: no order is taken now"))
        seat = Seat.objects.get(game=game, position=position)
        if token is not None and token.bot and not game.bots_allowed:
            raise ConditionalRejected(gettext("the GM of this game does not allow bots"))
        armed = ConditionalOrder.objects.filter(seat=seat, status=ConditionalOrder.Status.ARMED)
        state = game.rules.state_from_json(game.state)
        try:
            data = conditions.parse(state, position, text)
        except OrderError as error:
            raise ConditionalRejected(str(words.Said(error.message))) from error
        same = armed.filter(words=conditions.words(data)).first()
        if same is not None:
            # The same order again (a double click, a form sent twice): kept once.
            return same
        if armed.count() >= MOST_ARMED:
            raise ConditionalRejected(
                gettext(
                    "you hold %(count)d conditional orders, the most there may be: withdraw one"
                )
                % {"count": MOST_ARMED}
            )
        kept = ConditionalOrder.objects.create(
            game=game,
            seat=seat,
            tenure=seat.tenure,
            text=text,
            words=conditions.words(data),
            data=data,
            step_number=game.step_number,
            source=source,
            created_at=now,
            token=token,
        )
        if token is not None:
            TokenAction.objects.create(
                token=token,
                kind=TokenAction.Kind.ORDER,
                game=game,
                position=position,
                step_number=game.step_number,
                row_id=kept.pk,
                words=f"conditional order for {seat.name}: {kept.words}"[:200],
                at=now,
            )
    return kept


def withdraw(
    *, game_id: int, position: int, conditional_id: int, now: datetime
) -> ConditionalOrder:
    """Withdraw an armed conditional order of the seat; ConditionalRejected when it is none
    of the seat's, or no longer armed."""
    with transaction.atomic():
        locked(game_id)
        found = ConditionalOrder.objects.filter(
            pk=conditional_id, game_id=game_id, seat__position=position
        ).first()
        if found is None or found.status != ConditionalOrder.Status.ARMED:
            raise ConditionalRejected(gettext("that conditional order is no longer armed"))
        found.status = ConditionalOrder.Status.WITHDRAWN
        found.ended_at = now
        found.save(update_fields=["status", "ended_at"])
    return found


def armed_of(seat: Seat) -> list[ConditionalOrder]:
    return list(
        ConditionalOrder.objects.filter(
            seat=seat, tenure=seat.tenure, status=ConditionalOrder.Status.ARMED
        )
    )


def _ended(
    kept: ConditionalOrder, now: datetime, *, reason: str = "", played: Order | None = None
) -> None:
    kept.status = (
        ConditionalOrder.Status.PLAYED if played is not None else ConditionalOrder.Status.DISARMED
    )
    kept.ended_at = now
    kept.order = played
    kept.reason = str(reason)
    kept.reason_message = words.message(reason) if reason else None
    kept.save(update_fields=["status", "ended_at", "order", "reason", "reason_message"])
    if played is None:
        # Told by email too, at once: their turn is theirs to play.
        told = commands.answer(kept.seat, "disarmed", key=f"disarmed:{kept.pk}", now=now, kept=kept)
        queueing.queue_once([told], urgent=True)
    Decision.objects.create(
        game_id=kept.game_id,
        seat=kept.seat,
        step_number=played.step.number if played is not None else kept.game.step_number,
        kind=Decision.Kind.CONDITIONAL,
        details={
            "words": kept.words,
            "played": played.canonical if played is not None else "",
            "reason": kept.reason,
            "reason_message": kept.reason_message,
        },
        created_at=now,
    )


def play_armed(game: Game, now: datetime) -> None:
    """In the transaction that moved ``game`` on (its row locked): each armed conditional
    order of the game asked of the rules, in the order they were written. One that plays
    goes through ``accept_order``, whose own move on plays the next ones; this call then
    ends, the game having moved on under it."""
    conditions = registry.CONDITIONS.get(game.engine)
    if conditions is None or game.status != Game.Status.RUNNING:
        return
    armed = list(
        ConditionalOrder.objects.filter(game=game, status=ConditionalOrder.Status.ARMED)
        .select_related("seat", "game")
        .order_by("id")
    )
    if not armed:
        return
    state = game.rules.state_from_json(game.state)
    step = Step.objects.filter(game=game, number=game.step_number, status=Step.Status.OPEN).first()
    for kept in armed:
        seat = kept.seat
        if seat.tenure != kept.tenure:
            _ended(kept, now, reason=gettext("the seat changed hands"))
            continue
        verdict = conditions.play(state, seat.position, kept.data)
        if verdict.action == "disarm":
            _ended(kept, now, reason=verdict.reason)
            continue
        if verdict.action != "play" or step is None or seat.position not in step.prompted_seats:
            continue
        # Marked before it plays: the orders it sets off may come round to this seat again.
        kept.status = ConditionalOrder.Status.PLAYED
        kept.save(update_fields=["status"])
        try:
            with transaction.atomic():
                order = orders.accept_order(
                    game_id=game.pk,
                    position=seat.position,
                    text=verdict.order,
                    source=Order.Source.CONDITIONAL,
                    now=now,
                    step_number=step.number,
                    token=kept.token,
                )
        except OrderRejected as error:
            _ended(kept, now, reason=error.message)
            continue
        _ended(kept, now, played=order)
        return
