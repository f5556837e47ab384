"""What a GM's token reads and runs: the GM's games with their overview (the dashboard's),
a game's seats and open step, the GM's log, and every action of the game's panel, taken by
the panel's own form and writer (``games.web.gm.actions.ACTIONS``): the same checks and
words, logged for the players as from the panel, and recorded as made with the token."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.http import HttpRequest, QueryDict
from django.utils import timezone
from ninja import Field, Router, Schema

from games import postal
from games.community import press, tokens
from games.models import Game, GMAction, Message, TokenAction
from games.postal import game_templates
from games.web.api.base import ERRORS, Error, Refused, token_of
from games.web.api.seats import message_out
from games.web.common import first_error
from games.web.gm import common
from games.web.gm.actions import ACTIONS
from games.web.gm.forms import ResolveForm

router = Router(tags=["gm"])

NOT_YOURS = "No such game for this token."


class GameItem(Schema):
    id: int
    title: str
    variant: str
    engine: str
    status: str
    step: int
    deadline: str | None
    owing: list[str]
    bots_allowed: bool


class SeatRow(Schema):
    position: int
    name: str
    email: str
    status: str
    bot: bool
    nmr_count: int
    owes: bool


class LogItem(Schema):
    step: int
    kind: str
    words: str
    reason: str
    at: str


class GameDetail(GameItem):
    seats: list[SeatRow]
    log: list[LogItem]


class ActionIn(Schema):
    fields: dict[str, str | int | bool | list[str]] = Field(
        default_factory=dict,
        description="The fields of the panel's form for the action (see docs/api.md)",
    )


class Done(Schema):
    detail: str


class GMMessage(Schema):
    id: int
    step: int
    sent_at: str
    sender: str | None
    recipient: str | None
    text: str
    hidden: bool


class GMMessages(Schema):
    messages: list[GMMessage]
    total: int
    older: int | None


class AnnounceIn(Schema):
    text: str = Field(..., max_length=5000, description="To every player, as the GM")


def _game(request: HttpRequest, game_id: int) -> Game:
    token = token_of(request)
    game = common.with_overview(tokens.games(token)).filter(pk=game_id).first()
    if game is None:
        raise Refused(404, NOT_YOURS)
    return game


def _item(game: Game) -> dict[str, Any]:
    seen = common.overview(game)
    return {
        "id": game.pk,
        "title": game.title,
        "variant": seen.variant,
        "engine": game.engine,
        "status": game.status,
        "step": game.step_number,
        "deadline": None if seen.step is None else seen.step.deadline.isoformat(),
        "owing": seen.owing,
        "bots_allowed": game.bots_allowed,
    }


@router.get("/gm/games", response={200: list[GameItem], **ERRORS}, summary="My games as GM")
def games(request: HttpRequest) -> list[dict[str, Any]]:
    found = common.with_overview(tokens.games(token_of(request))).order_by("-created_at")[:200]
    return [_item(game) for game in found]


@router.get(
    "/gm/games/{game_id}",
    response={200: GameDetail, 404: Error, **ERRORS},
    summary="A game: its seats, its open step and the GM's log",
)
def game(request: HttpRequest, game_id: int) -> dict[str, Any]:
    found = _game(request, game_id)
    step = next(iter(found.steps.all()), None)
    prompted = set(step.prompted_seats) if step is not None else set()
    log = GMAction.objects.filter(game=found).order_by("-id")[:50]
    return {
        **_item(found),
        "seats": [
            {
                "position": seat.position,
                "name": seat.name,
                "email": seat.email,
                "status": seat.status,
                "bot": seat.bot,
                "nmr_count": seat.nmr_count,
                "owes": seat.position in prompted,
            }
            for seat in found.seats.all()
        ],
        "log": [
            {
                "step": row.step_number,
                "kind": row.kind,
                "words": str(row.said),
                "reason": row.reason,
                "at": row.at.isoformat(),
            }
            for row in log
        ],
    }


def _posted(fields: dict[str, Any]) -> QueryDict:
    data = QueryDict(mutable=True)
    for name, value in fields.items():
        if isinstance(value, list):
            data.setlist(name, [str(item) for item in value])
        elif isinstance(value, bool):
            if value:
                data[name] = "on"
        else:
            data[name] = str(value)
    return data


@router.post(
    "/gm/games/{game_id}/actions/{action}",
    response={200: Done, 403: Error, 404: Error, 422: Error, **ERRORS},
    summary="One action of the game's panel (extend, pause, resume, resolve, ...)",
)
def act(request: HttpRequest, game_id: int, action: str, body: ActionIn) -> dict[str, str]:
    token = token_of(request)
    found = _game(request, game_id)
    if not token.plays:
        raise Refused(403, "This token reads only: make one that acts to run the game.")
    if action not in ACTIONS:
        raise Refused(404, f"No such action: {action}. The actions: {', '.join(sorted(ACTIONS))}.")
    form_class, run = ACTIONS[action]
    form = form_class(_posted(body.fields), game=found)
    form.by = token.gm_id
    if not form.is_valid():
        raise Refused(422, first_error(form))
    if isinstance(form, ResolveForm) and not form.is_confirmed():
        raise Refused(422, "Resolving now plays the missing orders' defaults: send confirmed=yes.")
    now = timezone.now()
    try:
        with transaction.atomic():
            said = run(form, now)
            tokens.record(
                token,
                TokenAction.Kind.GM,
                game_id=found.pk,
                step_number=found.step_number,
                words=f"{action}: {said}",
                now=now,
            )
    except (postal.PostalError, game_templates.TemplateError) as error:
        raise Refused(422, error.message) from error
    return {"detail": said}


@router.get(
    "/gm/games/{game_id}/messages",
    response={200: GMMessages, 404: Error, **ERRORS},
    summary="Every message of the game, private and hidden ones too, as the GM reads them",
)
def messages(request: HttpRequest, game_id: int, before: int | None = None) -> dict[str, Any]:
    found = _game(request, game_id)
    names = dict(found.seats.values_list("id", "name"))
    page = press.for_gm(found, names, limit=press.PAGE_MESSAGES, before=before)
    return {
        "messages": [message_out(shown) for shown in page.messages],
        "total": page.total,
        "older": page.older,
    }


@router.post(
    "/gm/games/{game_id}/messages",
    response={200: Done, 403: Error, 404: Error, 422: Error, **ERRORS},
    summary="An announcement from the GM to every player",
)
def announce(request: HttpRequest, game_id: int, body: AnnounceIn) -> dict[str, str]:
    token = token_of(request)
    found = _game(request, game_id)
    if not token.plays:
        raise Refused(403, "This token reads only: make one that acts to write announcements.")
    now = timezone.now()
    try:
        with transaction.atomic():
            message = press.send(
                game_id=found.pk,
                position=None,
                to=None,
                text=body.text,
                source=Message.Source.API,
                now=now,
            )
            tokens.record(
                token,
                TokenAction.Kind.MESSAGE,
                game_id=found.pk,
                step_number=message.step_number,
                row_id=message.pk,
                words="announcement to every player",
                now=now,
            )
    except press.PressError as error:
        raise Refused(422, error.message) from error
    return {"detail": "Your announcement is sent to every player."}
