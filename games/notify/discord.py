"""One Discord message per game (docs/webhooks.md, "Discord: one message per game"): a
Discord webhook's channel gets one message for each game, edited in place as the game moves
(whose turn, the deadline, the last result, who was reminded), through Discord's webhook
message API: the first is posted with ``?wait=true`` (Discord answers with the message and
its id), later ones ``PATCH .../messages/<id>``. A new message comes only for what needs
someone now: a turn that is not everybody's (a bid to answer), and the game's end. A message
someone deleted in the channel answers 404: the next one is posted anew.

Each delivery row (games.notify.webhooks) is applied to the game's message
(``WebhookMessage``) only when it is newer than the one the message shows: a delivery
retried late never takes the message back."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from games.models import WebhookDelivery, WebhookMessage
from games.notify import deliveries
from moderator import outbound

LIMIT = 2000
# The latest result the message shows, at most this many lines.
RESULT_LINES = 12


def _url(base: str, path: str = "", **query: str) -> str:
    """The webhook's address with ``path`` added and ``query`` merged into its own (a
    ``thread_id`` the GM gave stays)."""
    parts = urlsplit(base)
    extra = "&".join(f"{key}={value}" for key, value in query.items())
    merged = "&".join(part for part in (parts.query, extra) if part)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + path, query=merged))


def _body(text: str) -> bytes:
    if len(text) > LIMIT:
        text = text[: LIMIT - 1] + "…"
    return json.dumps(
        {"content": text, "allowed_mentions": {"parse": []}}, ensure_ascii=False
    ).encode()


HEADERS = {"Content-Type": "application/json", "User-Agent": "moderator-webhooks/1"}


def _when(iso: str) -> str:
    return datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M UTC")


def advanced(state: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """What the game's message shows once ``data`` (an event of webhooks' JSON format)
    happened."""
    event = data["event"]
    if event == "step.opened":
        return {"game": data["game"], "step": data["step"], "events": data["events"]}
    if event == "reminder":
        step = state.get("step")
        if step is None or step.get("number") != data["step"]["number"]:
            return state or {"game": data["game"], "step": data["step"], "events": []}
        reminded = [*state.get("reminded", [])]
        if data["seat"] not in reminded:
            reminded.append(data["seat"])
        return {**state, "reminded": reminded}
    return {
        "game": data["game"],
        "events": data["events"],
        "standings": data["standings"],
        "finished": True,
    }


def text(state: dict[str, Any]) -> str:
    """The game's message: its title and where it stands, the latest result, the dice."""
    game = state["game"]
    lines = [f"**{game['title']}**"]
    if state.get("finished"):
        lines.append("The game is over.")
        lines += [
            f"{s['place']}. {s['seat']}" + ("" if s["score"] is None else f" ({s['score']})")
            for s in state["standings"]
        ]
    else:
        step = state["step"]
        name = step.get("name", f"step {step['number']}")
        lines.append(f"{name}, open until {_when(step['deadline'])}.")
        owed = step.get("owed")
        if owed is not None:
            lines.append(f"Orders owed by {', '.join(owed) or 'nobody'}.")
        if state.get("reminded"):
            lines.append(f"Reminded: {', '.join(state['reminded'])}.")
    events = state.get("events") or []
    if events:
        lines.append("Last result:")
        lines += [f"- {line}" for line in events[-RESULT_LINES:]]
    lines.append(f"Dice check: {game['url']}")
    return "\n".join(lines)


def needs_someone(data: dict[str, Any]) -> str | None:
    """A new message's text for what needs someone now: a turn that is not everybody's,
    and the game's end; None for the rest."""
    title = data["game"]["title"]
    if data["event"] == "game.finished":
        first = [s["seat"] for s in data["standings"] if s["place"] == 1]
        won = f" {' and '.join(first)} won." if first else ""
        return f"{title} is over.{won} Dice check: {data['game']['url']}"
    if data["event"] == "step.opened":
        step, seats = data["step"], data.get("seats")
        if seats and step["owed"] and len(step["owed"]) < len(seats):
            name = step.get("name", f"step {step['number']}")
            return (
                f"{title}: {', '.join(step['owed'])}, your turn ({name}, until "
                f"{_when(step['deadline'])})."
            )
    return None


def post_row(row: WebhookDelivery, rows: deliveries.Rows, now: datetime) -> str:
    """The delivery applied to its game's message, and a new message when it needs
    someone now. Raises what ``outbound.send`` raises, for webhooks' ``_post_row``."""
    hook = row.webhook
    message = WebhookMessage.objects.filter(webhook=hook, game_id=row.game_id).first()
    if message is None or message.delivery_id < row.pk:
        state = advanced({} if message is None else message.state, row.payload)
        _show(hook.url, message, row, state, now)
    news = needs_someone(row.payload)
    if news is not None:
        outbound.send(_url(hook.url), _body(news), HEADERS)
    return rows.sent(row, now)


def _show(
    url: str,
    message: WebhookMessage | None,
    row: WebhookDelivery,
    state: dict[str, Any],
    now: datetime,
) -> None:
    body = _body(text(state))
    if message is not None:
        try:
            outbound.send(
                _url(url, f"/messages/{message.message_id}"), body, HEADERS, method="PATCH"
            )
        except outbound.Answer as error:
            if error.status != 404:
                raise
        else:
            WebhookMessage.objects.filter(pk=message.pk).update(
                state=state, delivery_id=row.pk, updated_at=now
            )
            return
    answer = outbound.send(_url(url, wait="true"), body, HEADERS, read=65536)
    message_id = str(json.loads(answer)["id"])
    WebhookMessage.objects.update_or_create(
        webhook_id=row.webhook_id,
        game_id=row.game_id,
        defaults={
            "message_id": message_id,
            "state": state,
            "delivery_id": row.pk,
            "updated_at": now,
        },
    )
