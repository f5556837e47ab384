"""A seat's conditional orders through the API (docs/api.md, docs/orders.md): listed, left
and withdrawn, by the same writer as the seat's page (``games.postal.conditionals``)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils import timezone
from ninja import Field, Schema

from games.models import ConditionalOrder, Order
from games.postal import conditionals
from games.web.api.base import ERRORS, Error, Refused
from games.web.api.seats import opened, router

# The most ended ones a list gives, besides the armed.
ENDED_LISTED = 20


class ConditionalIn(Schema):
    text: str = Field(..., max_length=500, description="In the game's own words, as typed")


class ConditionalOut(Schema):
    id: int
    words: str
    status: str
    step: int
    created_at: str
    ended_at: str | None
    reason: str
    order: str | None


def _out(kept: ConditionalOrder) -> dict[str, Any]:
    return {
        "id": kept.pk,
        "words": kept.words,
        "status": kept.status,
        "step": kept.step_number,
        "created_at": kept.created_at.isoformat(),
        "ended_at": None if kept.ended_at is None else kept.ended_at.isoformat(),
        "reason": kept.reason,
        "order": None if kept.order is None else kept.order.canonical,
    }


@router.get(
    "/seats/{game_id}/{position}/conditionals",
    response={200: list[ConditionalOut], 404: Error, **ERRORS},
    summary="The seat's conditional orders: armed ones, then the latest played or disarmed",
)
def listed(request: HttpRequest, game_id: int, position: int) -> list[dict[str, Any]]:
    _, seat = opened(request, game_id, position)
    mine = ConditionalOrder.objects.filter(seat=seat, tenure=seat.tenure).select_related("order")
    armed = list(mine.filter(status=ConditionalOrder.Status.ARMED).order_by("id"))
    ended = list(mine.exclude(status=ConditionalOrder.Status.ARMED).order_by("-id")[:ENDED_LISTED])
    return [_out(kept) for kept in armed + ended]


@router.post(
    "/seats/{game_id}/{position}/conditionals",
    response={200: ConditionalOut, 403: Error, 404: Error, 422: Error, **ERRORS},
    summary="Leave a conditional order for the seat's turn",
)
def leave(request: HttpRequest, game_id: int, position: int, body: ConditionalIn) -> dict[str, Any]:
    token, _ = opened(request, game_id, position)
    if not token.plays:
        raise Refused(403, "This token reads only: make one that plays to leave orders.")
    try:
        kept = conditionals.leave(
            game_id=game_id,
            position=position,
            text=body.text,
            source=Order.Source.API,
            now=timezone.now(),
            token=token,
        )
    except conditionals.ConditionalRejected as error:
        raise Refused(422, error.message) from error
    return _out(kept)


@router.delete(
    "/seats/{game_id}/{position}/conditionals/{conditional_id}",
    response={200: ConditionalOut, 403: Error, 404: Error, 422: Error, **ERRORS},
    summary="Withdraw an armed conditional order",
)
def withdraw(
    request: HttpRequest, game_id: int, position: int, conditional_id: int
) -> dict[str, Any]:
    token, _ = opened(request, game_id, position)
    if not token.plays:
        raise Refused(403, "This token reads only: make one that plays to withdraw orders.")
    try:
        kept = conditionals.withdraw(
            game_id=game_id, position=position, conditional_id=conditional_id, now=timezone.now()
        )
    except conditionals.ConditionalRejected as error:
        raise Refused(422, error.message) from error
    return _out(kept)
