"""Outgoing webhooks (docs/webhooks.md): a game's public events posted to an address its GM
chose, or a campaign's host for every game of the league.

Events are written as delivery rows in the transaction of what they report (``postal``'s
step, ``reminders``' reminder), once per event and webhook (the dedupe key), and posted by
the mail workers once it commits; the sweep posts the rows whose hand-over was lost and the
retries that are due. Retries follow the email's settings (``MAIL_RETRY_*``,
``MAIL_MAX_ATTEMPTS``), so a webhook down for an hour misses nothing.

A row's life (posted at most once, retried, failed when never confirmed) is
``games.notify.deliveries``'.

Only public information leaves: events whose audience is everybody, seat names, the
deadline, the standings and the dice check's address. Never an email address, a link of a
seat, or anything one seat sees alone. The URL itself may hold a secret (Discord's and
Slack's do): it is never logged, never written into an error, and pages show its host only.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db.models import Q
from django.urls import reverse

from games.engines.base import Engine, Event, Standing
from games.models import Game, Seat, Step, Webhook, WebhookDelivery
from games.notify import deliveries, discord
from moderator import outbound

log = logging.getLogger(__name__)

VERSION = 1
State = WebhookDelivery.State
Format = Webhook.Format
SEND_WEBHOOKS = "games.send_webhooks"
# Events go to the internet only (moderator.outbound), unless WEBHOOK_ALLOW_LOCAL_HTTP.
LOCAL_REFUSED = "the address leads to this machine or a private network, where events are not sent"


class BadURL(ValueError):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def check_url(url: str) -> str:
    """The webhook address ``url`` stripped, or BadURL saying what is wrong with it."""
    url = url.strip()
    if len(url) > 500:
        raise BadURL("the address is too long (500 characters at most).")
    try:
        URLValidator(schemes=["http", "https"])(url)
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except (ValidationError, ValueError):
        raise BadURL(
            "enter a web address starting with https://, such as the one Discord or Slack "
            "gives for a channel's webhook."
        ) from None
    if parts.username or parts.password:
        raise BadURL("the address must not hold a user name or password.")
    if not settings.WEBHOOK_ALLOW_LOCAL_HTTP and outbound.local_now(url):
        raise BadURL(f"{LOCAL_REFUSED}.")
    if parts.scheme == "https":
        return url
    if parts.hostname in outbound.LOCAL_HOSTS and settings.WEBHOOK_ALLOW_LOCAL_HTTP:
        return url
    raise BadURL("the address must start with https://: events are not sent unencrypted.")


def shown(url: str) -> str:
    """The address as pages show it: its host only (the path may hold the secret)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/…"


def set_for_game(game_id: int, *, url: str, format: str, active: bool) -> Webhook:
    """The game's webhook set to ``url`` (checked: BadURL), or, with ``url`` blank, its
    current address kept with the new format and switch."""
    new = Webhook(game_id=game_id)
    return _set(Q(game_id=game_id), new, url=url, format=format, active=active)


def set_for_campaign(campaign_id: int, *, url: str, format: str, active: bool) -> Webhook:
    """``set_for_game`` for a campaign: its webhook hears of every game of its league."""
    new = Webhook(campaign_id=campaign_id)
    return _set(Q(campaign_id=campaign_id), new, url=url, format=format, active=active)


def remove(*, game_id: int | None = None, campaign_id: int | None = None) -> bool:
    """The game's (or campaign's) webhook removed, with its deliveries; whether it had one."""
    where = Q(game_id=game_id) if game_id is not None else Q(campaign_id=campaign_id)
    deleted, _ = Webhook.objects.filter(where).delete()
    return bool(deleted)


def _set(where: Q, new: Webhook, *, url: str, format: str, active: bool) -> Webhook:
    if format not in Format.values:
        raise BadURL(f"choose a format: {', '.join(Format.values)}.")
    hook = Webhook.objects.filter(where).first() or new
    if url.strip():
        hook.url = check_url(url)
    elif not hook.url:
        raise BadURL("enter the webhook's address, starting with https://.")
    hook.format, hook.active = format, active
    hook.save()
    return hook


def hooks_of(game: Game) -> list[Webhook]:
    """The active webhooks that hear of ``game``: its own, and its campaign's (one query)."""
    return list(
        Webhook.objects.filter(
            Q(game_id=game.pk)
            | Q(campaign__games__game_id=game.pk)
            | Q(campaign__nights__tables__game_id=game.pk),
            active=True,
        )
        .distinct()
        .order_by("id")
    )


def latest_of_campaign(campaign_id: int, count: int = 10) -> list[WebhookDelivery]:
    """The latest deliveries of a campaign's webhook, for its page."""
    return list(
        WebhookDelivery.objects.filter(webhook__campaign_id=campaign_id)
        .select_related("game")
        .defer("payload", "game__state")[:count]
    )


def latest(game: Game, count: int = 10) -> list[WebhookDelivery]:
    """The game's latest deliveries, to any of its webhooks, for its GM's page."""
    return list(WebhookDelivery.objects.filter(game=game).defer("payload")[:count])


# --- the events ------------------------------------------------------------------------------


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _game(game: Game) -> dict[str, Any]:
    url = f"{settings.SITE_URL}{reverse('games:verify', args=[game.public_id])}"
    return {"id": game.public_id, "title": game.title, "url": url}


def _public(events: Iterable[Event]) -> list[str]:
    return [event.text for event in events if event.to is None]


def step_events(
    game: Game,
    seats: Sequence[Seat],
    engine: Engine[Any, Any, Any],
    state: Any,
    events: list[Event],
    step: Step | None,
    now: datetime,
) -> list[int]:
    """``step.opened`` for the step just opened with the public ``events`` that led to it,
    or ``game.finished`` when ``step`` is None; written for every webhook of the game (in
    the caller's transaction). Returns the ids of the rows pending."""
    hooks = hooks_of(game)
    if not hooks:
        return []
    names = {seat.position: seat.name for seat in seats}
    data: dict[str, Any] = {"version": VERSION, "game": _game(game)}
    data["seats"] = [names[position] for position in sorted(names)]
    if step is None:
        standings: list[Standing] = engine.standings(state) or []
        data["event"] = "game.finished"
        data["standings"] = [
            {"seat": names.get(s.seat, str(s.seat)), "place": s.place, "score": s.score}
            for s in standings
        ]
        data["events"] = _public(events)
        key = f"game.finished:{game.pk}"
    else:
        owed = sorted({prompt["seat"] for prompt in step.prompts})
        data["event"] = "step.opened"
        data["step"] = {
            "number": step.number,
            "name": f"{engine.step_word} {step.number}",
            "deadline": _iso(step.deadline),
            "owed": [names.get(position, str(position)) for position in owed],
        }
        data["events"] = _public(events)
        key = f"step.opened:{game.pk}:{step.number}"
    return _write(game, hooks, key, data, now)


def reminder_events(todo: Iterable[tuple[Step, int | float, int]], now: datetime) -> list[int]:
    """One ``reminder`` per (step, hours before its deadline, seat position) of ``todo``,
    for every webhook of the step's game (in the caller's transaction)."""
    ids: list[int] = []
    hooks: dict[int, list[Webhook]] = {}
    names: dict[int, dict[int, str]] = {}
    for step, hours, position in todo:
        game = step.game
        if game.pk not in hooks:
            hooks[game.pk] = hooks_of(game)
        if not hooks[game.pk]:
            continue
        if game.pk not in names:
            names[game.pk] = dict(game.seats.values_list("position", "name"))
        data = {
            "version": VERSION,
            "event": "reminder",
            "game": _game(game),
            "seat": names[game.pk].get(position, str(position)),
            "hours": hours,
            "step": {
                "number": step.number,
                "name": f"{game.rules.step_word} {step.number}",
                "deadline": _iso(step.deadline),
            },
        }
        stamp = int(step.deadline.timestamp())
        key = f"reminder:{game.pk}:{step.number}:{position}:{hours}:{stamp}"
        ids += _write(game, hooks[game.pk], key, data, now)
    return ids


def _write(
    game: Game, hooks: list[Webhook], key: str, data: dict[str, Any], now: datetime
) -> list[int]:
    """A row per webhook whose key is new, and the pending ones handed to the workers once
    the transaction commits (two queries)."""
    rows = [
        WebhookDelivery(
            webhook=hook,
            game=game,
            dedupe_key=f"{key}:{hook.pk}",
            event=data["event"],
            payload=data,
            created_at=now,
        )
        for hook in hooks
    ]
    return ROWS.write(rows)


# --- the bodies --------------------------------------------------------------------------------


def body(format: str, data: dict[str, Any]) -> dict[str, Any]:
    """What is posted to a webhook of ``format``: the event itself, or its summary in words
    as Slack takes a message. (Discord's one message per game: games.notify.discord.)"""
    if format == Format.SLACK:
        text = summary(data).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        return {"text": text}
    return data


def _when(iso: str) -> str:
    return datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M UTC")


def summary(data: dict[str, Any]) -> str:
    """The event in a few plain lines. (A delivery written before steps had their game's
    name says "step N".)"""
    game = data["game"]
    title = game["title"]
    lines: list[str]
    if data["event"] == "step.opened":
        step = data["step"]
        lines = [*(f"- {text}" for text in data["events"])]
        owed = ", ".join(step["owed"]) or "nobody"
        name = step.get("name", f"step {step['number']}")
        lines.append(
            f"{title}: {name} is open until {_when(step['deadline'])}. Orders owed by {owed}."
        )
    elif data["event"] == "reminder":
        step = data["step"]
        name = step.get("name", f"step {step['number']}")
        lines = [
            f"{title}: {data['seat']} still owes an order for {name}; "
            f"the deadline is {_when(step['deadline'])}."
        ]
    else:
        lines = [*(f"- {text}" for text in data["events"])]
        lines.append(f"{title} is over.")
        lines += [
            f"{s['place']}. {s['seat']}" + ("" if s["score"] is None else f" ({s['score']})")
            for s in data["standings"]
        ]
    lines.append(f"Dice check: {game['url']}")
    return "\n".join(lines)


# --- posting -----------------------------------------------------------------------------------


def _said(row: WebhookDelivery, outcome: str, level: int, reason: str = "") -> None:
    """One line per post: the row, its webhook and game, never the address."""
    log.log(
        level,
        "webhook %s: delivery %s, %s, game %s%s",
        outcome,
        row.pk,
        row.event,
        row.game_id,
        f": {reason}" if reason else "",
        extra={
            "event": "webhook",
            "delivery": row.pk,
            "webhook": row.webhook_id,
            "game": row.game_id,
            "outcome": outcome,
            "attempts": row.attempts,
        },
    )


ROWS = deliveries.Rows(WebhookDelivery, SEND_WEBHOOKS, "webhook", _said)
enqueue, pending_ids, mark_stale = ROWS.enqueue, ROWS.pending_ids, ROWS.mark_stale


def send_batch(ids: Sequence[int], *, now: datetime) -> dict[int, str]:
    """Post every row of ``ids`` that is pending and due, one after another; returns the
    state of each row this call claimed (the others are absent)."""
    return ROWS.send_batch(ids, partial(_post_row, now=now), now=now)


def post(url: str, data: dict[str, Any]) -> None:
    """POST ``data`` as JSON to ``url`` (``moderator.outbound.send``: public addresses
    only)."""
    outbound.send(
        url,
        json.dumps(data, ensure_ascii=False).encode(),
        {"Content-Type": "application/json", "User-Agent": "moderator-webhooks/1"},
    )


def _post_row(row: WebhookDelivery, now: datetime) -> str:
    hook = row.webhook
    if not hook.active:
        return ROWS.fail(row, "the webhook was switched off before this event was posted")
    try:
        if hook.format == Format.DISCORD:
            return discord.post_row(row, ROWS, now)
        post(hook.url, body(hook.format, row.payload))
    except outbound.Answer as error:
        return ROWS.answered(row, error.status, error.reason, now)
    except outbound.NoConnection as error:
        return ROWS.retry(row, f"could not connect: {error}", now)
    except outbound.Unknown as error:
        return ROWS.fail(row, f"{deliveries.NEVER_CONFIRMED} ({error})")
    except outbound.Local:
        return ROWS.fail(row, LOCAL_REFUSED)
    except (ValueError, KeyError) as error:  # Discord's answer was not a message
        return ROWS.fail(row, f"the answer was not a message ({type(error).__name__})")
    return ROWS.sent(row, now)
