"""What a player's token reads and plays: its seats, a seat's view (what its page shows,
with the same secrecy), the legal moves now (what the page's menus offer, and what each of
the game's autopilots would play), an order (taken by ``postal.accept_order`` as from the
page: the same checks, words and receipts), the seat's messages and its events since a
cursor. A seat the token does not open is the same 404 as a seat that does not exist."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone, translation
from ninja import Field, Router, Schema

from games import postal
from games.community import press, tokens
from games.engines import registry
from games.engines.base import OrderError
from games.lib import words
from games.models import ApiToken, Game, Message, Order, Seat, TokenAction
from games.notify import machine
from games.web.api.base import ERRORS, Error, Refused, token_of
from games.web.forms import MenuOrderForm, form_class, legal_choices

router = Router(tags=["seats"])

NOT_YOURS = "No such seat for this token."


class SeatItem(Schema):
    game: int
    position: int
    name: str
    title: str
    engine: str
    status: str
    bot: bool
    bots_allowed: bool
    step: int
    owes: bool
    deadline: str | None


class SeatView(Schema):
    game: dict[str, Any]
    seat: dict[str, Any]
    seats: list[dict[str, Any]]
    view: dict[str, Any] | None
    step: dict[str, Any] | None
    order: dict[str, Any] | None
    standings: list[dict[str, Any]] | None
    seed: str | None


class Move(Schema):
    order: str
    label: str


class Field_(Schema):
    name: str
    label: str
    choices: list[list[str]]


class Suggestion(Schema):
    strategy: str
    title: str
    order: str


class Moves(Schema):
    step: int | None
    owes: bool
    menu: list[Move]
    fields: list[Field_]
    autopilots: list[Suggestion]


class OrderIn(Schema):
    order: str = Field(..., max_length=5000, description="The order as it would be typed")
    step: int | None = Field(
        None, ge=0, description="The step it is written for: a later step says what happened"
    )


class OrderOut(Schema):
    accepted: bool
    canonical: str
    repeated: bool
    carried_over: str | None
    step: int


class MessageItem(Schema):
    id: int
    step: int
    sent_at: str
    sender: str | None
    recipient: str | None
    text: str
    hidden: bool
    mine: bool


class Messages(Schema):
    messages: list[MessageItem]
    total: int
    older: int | None


class MessageIn(Schema):
    text: str = Field(..., max_length=5000)
    to: int | None = Field(None, ge=0, description="A seat's position; none: everyone")


class EventItem(Schema):
    id: int
    step: int
    text: str


class Events(Schema):
    events: list[EventItem]
    cursor: int


class Me(Schema):
    name: str
    scope: str
    access: str
    bot: bool
    seats: list[SeatItem]


def message_out(shown: Any) -> dict[str, Any]:
    """A message as a page of them lists it (``press.Shown``), for the API."""
    return {
        "id": shown.pk,
        "step": shown.step,
        "sent_at": shown.sent_at.isoformat(),
        "sender": shown.sender,
        "recipient": shown.recipient,
        "text": shown.text,
        "hidden": shown.hidden,
        "mine": shown.mine,
    }


def opened(request: HttpRequest, game_id: int, position: int) -> tuple[ApiToken, Seat]:
    """The seat the call names, if the call's token opens it; else the 404 of no seat."""
    token = token_of(request)
    seat = (
        Seat.objects.select_related("game")
        .defer("game__seed")
        .filter(game_id=game_id, position=position)
        .first()
    )
    if seat is None or not tokens.opens_seat(token, seat):
        raise Refused(404, NOT_YOURS)
    return token, seat


def _item(seat: Seat) -> dict[str, Any]:
    game = seat.game
    step = machine.open_step(game)
    owes = step is not None and seat.position in step.prompted_seats
    return {
        "game": game.pk,
        "position": seat.position,
        "name": seat.name,
        "title": game.title,
        "engine": game.engine,
        "status": game.status,
        "bot": seat.bot,
        "bots_allowed": game.bots_allowed,
        "step": game.step_number,
        "owes": owes,
        "deadline": None if step is None else step.deadline.isoformat(),
    }


def _seats(token: ApiToken) -> list[dict[str, Any]]:
    found = (
        tokens.seats(token)
        .select_related("game")
        .defer("game__seed", "game__state")
        .exclude(game__status__in=[Game.Status.DRAFT])
        .order_by("-game__created_at", "position")[:200]
    )
    return [_item(seat) for seat in found]


@router.get("/me", response={200: Me, **ERRORS}, summary="The token and what it opens")
def me(request: HttpRequest) -> dict[str, Any]:
    token = token_of(request)
    return {
        "name": token.name,
        "scope": token.scope,
        "access": token.access,
        "bot": token.bot,
        "seats": _seats(token),
    }


@router.get("/seats", response={200: list[SeatItem], **ERRORS}, summary="My seats")
def seats(request: HttpRequest) -> list[dict[str, Any]]:
    return _seats(token_of(request))


@router.get(
    "/seats/{game_id}/{position}",
    response={200: SeatView, 404: Error, **ERRORS},
    summary="A seat's view: what its page shows",
)
def seat_view(request: HttpRequest, game_id: int, position: int) -> dict[str, Any]:
    _, seat = opened(request, game_id, position)
    return machine.seat_data(seat)


def _fields(form: Any) -> list[dict[str, Any]]:
    """The form's fields that offer choices, as a program reads them."""
    out = []
    for name, field in form.fields.items():
        choices = getattr(field, "choices", None)
        if name in ("entry", "step") or not choices:
            continue
        out.append(
            {
                "name": name,
                "label": str(field.label or name),
                "choices": [[str(value), str(label)] for value, label in choices],
            }
        )
    return out


def _autopilots(game: Game, seat: Seat, state: Any) -> list[dict[str, str]]:
    """What each of the game's autopilots would play for the seat now: they read only
    what the seat's view shows (the engine contract's ``Strategy``)."""
    engine = game.rules
    out = []
    for strategy in registry.strategies(game.engine):
        try:
            order = strategy.play(state, seat.position)
            text = engine.canonical(state, seat.position, order)
        except OrderError:
            continue
        out.append({"strategy": strategy.key, "title": str(strategy.title), "order": text})
    return out


@router.get(
    "/seats/{game_id}/{position}/moves",
    response={200: Moves, 404: Error, **ERRORS},
    summary="The legal moves now: the page's menus, and what each autopilot would play",
)
def moves(request: HttpRequest, game_id: int, position: int) -> dict[str, Any]:
    _, seat = opened(request, game_id, position)
    game = seat.game
    step = machine.open_step(game)
    empty: dict[str, Any] = {
        "step": None,
        "owes": False,
        "menu": [],
        "fields": [],
        "autopilots": [],
    }
    if step is None or game.state is None:
        return empty
    owes = seat.position in step.prompted_seats
    if not owes or game.status != Game.Status.RUNNING:
        return {**empty, "step": step.number}
    engine = game.rules
    state = engine.state_from_json(game.state)
    with translation.override(seat.speaks):
        form = form_class(game.engine)(
            engine=engine, state=state, position=seat.position, step_number=step.number
        )
        # Every one-line order the engine offers and takes now: the page's menu and the
        # choices of its controls (a bid's quantity and face) alike.
        menu = (
            words.shown(legal_choices(engine, state, seat.position))
            if isinstance(form, MenuOrderForm)
            else []
        )
        return {
            "step": step.number,
            "owes": True,
            "menu": [{"order": text, "label": str(label)} for text, label in menu],
            "fields": [] if menu else _fields(form),
            "autopilots": _autopilots(game, seat, state),
        }


def _moved_on(error: postal.StepMovedOn) -> str:
    said = f"While the order was on its way, {error.happened}."
    if error.reason:
        said += f" It was not taken: {error.reason}."
    return said


@router.post(
    "/seats/{game_id}/{position}/orders",
    response={200: OrderOut, 403: Error, 404: Error, 409: Error, 422: Error, **ERRORS},
    summary="Send an order: the same checks, words and receipts as the page",
)
def send_order(request: HttpRequest, game_id: int, position: int, body: OrderIn) -> dict[str, Any]:
    token, _ = opened(request, game_id, position)
    if not token.plays:
        raise Refused(403, "This token reads only: make one that plays to send orders.")
    try:
        order = postal.accept_order(
            game_id=game_id,
            position=position,
            text=body.order,
            source=Order.Source.API,
            now=timezone.now(),
            step_number=body.step,
            token=token,
            admit=lambda locked: tokens.opens_seat(token, locked),
        )
    except (postal.SeatNotFound, postal.NotAdmitted) as error:
        raise Refused(404, NOT_YOURS) from error
    except postal.StepMovedOn as error:
        raise Refused(409, _moved_on(error)) from error
    except postal.OrderRejected as error:
        raise Refused(422, error.message) from error
    return {
        "accepted": True,
        "canonical": order.canonical,
        "repeated": order.repeated,
        "carried_over": order.carried_over,
        "step": order.step.number,
    }


@router.get(
    "/seats/{game_id}/{position}/messages",
    response={200: Messages, 404: Error, **ERRORS},
    summary="The messages the seat may read, newest last",
)
def messages(
    request: HttpRequest, game_id: int, position: int, before: int | None = None
) -> dict[str, Any]:
    _, seat = opened(request, game_id, position)
    names = dict(seat.game.seats.values_list("id", "name"))
    page = press.for_seat(seat, names, limit=press.PAGE_MESSAGES, before=before)
    return {
        "messages": [message_out(shown) for shown in page.messages],
        "total": page.total,
        "older": page.older,
    }


@router.post(
    "/seats/{game_id}/{position}/messages",
    response={200: MessageItem, 403: Error, 404: Error, 422: Error, **ERRORS},
    summary="Write a message to everyone or to one seat",
)
def write(request: HttpRequest, game_id: int, position: int, body: MessageIn) -> dict[str, Any]:
    token, seat = opened(request, game_id, position)
    if not token.plays:
        raise Refused(403, "This token reads only: make one that plays to write messages.")
    now = timezone.now()
    try:
        with transaction.atomic(), translation.override(seat.speaks):
            message = press.send(
                game_id=game_id,
                position=position,
                to=body.to,
                text=body.text,
                source=Message.Source.API,
                now=now,
            )
            tokens.record(
                token,
                TokenAction.Kind.MESSAGE,
                game_id=game_id,
                position=position,
                step_number=message.step_number,
                row_id=message.pk,
                words=f"message from {seat.name}",
                now=now,
            )
    except press.PressError as error:
        raise Refused(422, error.message) from error
    return {
        "id": message.pk,
        "step": message.step_number,
        "sent_at": message.sent_at.isoformat(),
        "sender": seat.name,
        "recipient": message.recipient_name or None if message.recipient_id else None,
        "text": message.text,
        "hidden": False,
        "mine": True,
    }


@router.get(
    "/seats/{game_id}/{position}/events",
    response={200: Events, 404: Error, **ERRORS},
    summary="The game's events the seat may see, after a cursor",
)
def events(
    request: HttpRequest, game_id: int, position: int, after: int = 0, limit: int = 100
) -> dict[str, Any]:
    _, seat = opened(request, game_id, position)
    shown, cursor = machine.events(seat, after=max(after, 0), limit=limit)
    return {"events": shown, "cursor": cursor}
