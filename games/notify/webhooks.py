"""Outgoing webhooks (docs/webhooks.md): a game's public events posted to an address its GM
chose, or a campaign's host for every game of the league.

Events are written as delivery rows in the transaction of what they report (``postal``'s
step, ``reminders``' reminder), once per event and webhook (the dedupe key), and posted by
the mail workers once it commits; the sweep posts the rows whose hand-over was lost and the
retries that are due. Retries follow the email's settings (``MAIL_RETRY_*``,
``MAIL_MAX_ATTEMPTS``), so a webhook down for an hour misses nothing.

A row is posted at most once: it is claimed (pending -> sending) by a conditional UPDATE
before its post, so the sweep and a task racing for it post it once. A post whose answer
never came (the request sent, then a timeout or a dropped connection) may have arrived: it
fails and is not posted again. The row's life::

    pending --claim--> sending --> sent
                          |------> pending again, with next_attempt_at (5xx, 408, 429,
                          |        no connection)
                          |------> failed (4xx, a redirect, out of attempts, or no
                          |        answer after the post: maybe delivered)
                          '------> failed (the sweep: never confirmed)

Only public information leaves: events whose audience is everybody, seat names, the
deadline, the standings and the dice check's address. Never an email address, a link of a
seat, or anything one seat sees alone. The URL itself may hold a secret (Discord's and
Slack's do): it is never logged, never written into an error, and pages show its host only.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import logging
import socket
import ssl
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any
from urllib.parse import SplitResult, urlsplit

from celery import current_app
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.urls import reverse

from games.engines.base import Engine, Event, Standing
from games.models import Game, Seat, Step, Webhook, WebhookDelivery
from moderator.mail.sending import retry_delay

log = logging.getLogger(__name__)

VERSION = 1
State = WebhookDelivery.State
Format = Webhook.Format
SEND_WEBHOOKS = "games.send_webhooks"
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost"})
DISCORD_LIMIT = 2000
NEVER_CONFIRMED = "posted, never confirmed: it may have arrived, so it is not posted again"
# Too many requests, request timeout: the receiver asks us to come back later.
RETRY_LATER_STATUS = frozenset({408, 429})


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
    if not settings.WEBHOOK_ALLOW_LOCAL_HTTP and _local_now(url):
        raise BadURL(f"{LOCAL_REFUSED}.")
    if parts.scheme == "https":
        return url
    if parts.hostname in LOCAL_HOSTS and settings.WEBHOOK_ALLOW_LOCAL_HTTP:
        return url
    raise BadURL("the address must start with https://: events are not sent unencrypted.")


# Events go to the internet only: an address on this machine or a private network (a
# service behind the firewall) is refused when set and again when posting, where its name
# is looked up once and the post connects to an address of that look-up (docs/webhooks.md),
# unless WEBHOOK_ALLOW_LOCAL_HTTP (tests, a local try).
LOCAL_REFUSED = "the address leads to this machine or a private network, where events are not sent"

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
# IPv6 addresses that carry an IPv4 one in their last 32 bits and reach it: NAT64's
# well-known prefix (RFC 6052). The local-use one (RFC 8215) and the deprecated
# IPv4-compatible ::a.b.c.d (with :: and ::1) are refused whole.
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
REFUSED_V6 = (ipaddress.IPv6Network("64:ff9b:1::/48"), ipaddress.IPv6Network("::/96"))


def is_public(address: Address) -> bool:
    """Whether ``address`` is on the public internet, the IPv4 address an IPv6 one carries
    (mapped, NAT64, 6to4, Teredo) included."""
    if isinstance(address, ipaddress.IPv4Address):
        return _public_alone(address)
    if address.ipv4_mapped is not None:
        return _public_alone(address.ipv4_mapped)
    if address in NAT64:
        return _public_alone(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    if any(address in network for network in REFUSED_V6):
        return False
    carried: list[ipaddress.IPv4Address] = []
    if address.sixtofour is not None:
        carried.append(address.sixtofour)
    if address.teredo is not None:
        carried += address.teredo
    return _public_alone(address) and all(_public_alone(inner) for inner in carried)


def _public_alone(address: Address) -> bool:
    return address.is_global and not (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or (isinstance(address, ipaddress.IPv6Address) and address.is_site_local)
    )


def _local_name(host: str) -> bool:
    """Whether ``host`` names this machine or a private network without a look-up: a
    local name, or an address that is not a public one."""
    host = host.lower().rstrip(".")
    if host in LOCAL_HOSTS or host.endswith(".localhost"):
        return True
    try:
        return not is_public(ipaddress.ip_address(host.partition("%")[0]))
    except ValueError:
        return False  # a name: looked up


def _local_now(url: str) -> bool:
    """Whether ``url``'s host is, or is looked up now as, an address that is not public.
    A name that cannot be looked up now is left to the post, which looks it up again."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if _local_name(host):
        return True
    try:
        addresses = look_up(host, _port(parts))
    except (OSError, UnicodeError):
        return False
    return not all(is_public(ipaddress.ip_address(address)) for address in addresses)


def _port(parts: SplitResult) -> int:
    return parts.port or (443 if parts.scheme == "https" else 80)


def look_up(host: str, port: int) -> list[str]:
    """The addresses the name ``host`` is looked up as (the system's resolver), in its
    order; OSError when it cannot be now."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]).partition("%")[0] for info in found))


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
    WebhookDelivery.objects.bulk_create(rows, ignore_conflicts=True)
    ids = list(
        WebhookDelivery.objects.filter(
            state=State.PENDING, dedupe_key__in=[row.dedupe_key for row in rows]
        ).values_list("id", flat=True)
    )
    if ids:
        transaction.on_commit(partial(enqueue, ids))
    return ids


# --- the bodies --------------------------------------------------------------------------------


def body(format: str, data: dict[str, Any]) -> dict[str, Any]:
    """What is posted to a webhook of ``format``: the event itself, or its summary in words
    as Discord (at most 2000 characters, no one pinged) or Slack take a message."""
    if format == Format.DISCORD:
        text = summary(data)
        if len(text) > DISCORD_LIMIT:
            text = text[: DISCORD_LIMIT - 1] + "…"
        return {"content": text, "allowed_mentions": {"parse": []}}
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


def enqueue(ids: list[int]) -> None:
    """Hand the rows to the workers (one task). With the broker away nothing is lost: the
    rows stay pending and the sweep hands them out."""
    try:
        current_app.tasks[SEND_WEBHOOKS].delay(delivery_ids=ids)
    except Exception:
        log.warning("could not enqueue webhook deliveries %s; the sweep will", ids, exc_info=True)


def pending_ids(limit: int, *, older_than: datetime, now: datetime) -> list[int]:
    """Pending rows that are due: a retry whose time has come, or a first attempt written
    before ``older_than`` (its hand-over may have been lost)."""
    return list(
        WebhookDelivery.objects.filter(state=State.PENDING)
        .filter(
            Q(next_attempt_at__isnull=True, created_at__lt=older_than) | Q(next_attempt_at__lte=now)
        )
        .order_by("id")
        .values_list("id", flat=True)[:limit]
    )


def mark_stale(now: datetime) -> int:
    """Rows posted longer than MAIL_SENDING_TIMEOUT_SECONDS ago and never confirmed (the
    worker died mid-post) fail: they may have arrived. Returns how many."""
    stale = now - timedelta(seconds=settings.MAIL_SENDING_TIMEOUT_SECONDS)
    return WebhookDelivery.objects.filter(state=State.SENDING, sending_since__lt=stale).update(
        state=State.FAILED, last_error=NEVER_CONFIRMED, next_attempt_at=None
    )


def send_batch(ids: Sequence[int], *, now: datetime) -> dict[int, str]:
    """Post every row of ``ids`` that is pending and due, one after another; returns the
    state of each row this call claimed (the others are absent)."""
    states: dict[int, str] = {}
    for pk in sorted(set(ids)):
        row = _claim(pk, now)
        if row is not None:
            states[pk] = _post_row(row, now)
    return states


def _claim(pk: int, now: datetime) -> WebhookDelivery | None:
    due = Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now)
    claimed = WebhookDelivery.objects.filter(due, pk=pk, state=State.PENDING).update(
        state=State.SENDING, attempts=F("attempts") + 1, sending_since=now
    )
    if not claimed:
        return None
    return WebhookDelivery.objects.select_related("webhook").get(pk=pk)


def _attempt(row: WebhookDelivery) -> QuerySet[WebhookDelivery]:
    return WebhookDelivery.objects.filter(
        pk=row.pk, state=State.SENDING, sending_since=row.sending_since
    )


class _Answer(Exception):
    """The server answered with a status other than 2xx (a redirect included: it is an
    answer, not an address to post to, since it may lead anywhere)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(status, reason)
        self.status, self.reason = status, reason


class _NoConnection(Exception):
    """No connection was made: nothing was sent."""


class _Unknown(Exception):
    """The request went out and no answer came: it may have arrived."""


class _Local(Exception):
    """The address is looked up as this machine or a private network: nothing is sent."""


class _Pinned(http.client.HTTPConnection):
    """An HTTP connection to the addresses its host was looked up as and checked, in turn:
    the host names the request (its Host header, and for TLS the name the server's
    certificate must show) and is never looked up again."""

    def __init__(self, host: str, port: int, addresses: Sequence[str], timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.addresses = addresses

    def connect(self) -> None:
        error: OSError = OSError("the name was looked up as no address")
        for address in self.addresses:
            try:
                self.sock = socket.create_connection((address, self.port), self.timeout)
            except OSError as failed:
                error = failed
            else:
                return
        raise error


class _PinnedTLS(_Pinned):
    default_port = 443

    def connect(self) -> None:
        super().connect()
        tls = ssl.create_default_context()
        self.sock = tls.wrap_socket(self.sock, server_hostname=self.host)


def _addresses(host: str, port: int) -> list[str]:
    """The addresses to connect to for ``host``, from one look-up: all of them public
    (unless WEBHOOK_ALLOW_LOCAL_HTTP), else _Local; _NoConnection when the name cannot be
    looked up now."""
    if not settings.WEBHOOK_ALLOW_LOCAL_HTTP and _local_name(host):
        raise _Local
    try:
        addresses = look_up(host, port)
    except (OSError, UnicodeError) as error:
        raise _NoConnection(f"the name could not be looked up ({type(error).__name__})") from None
    if not settings.WEBHOOK_ALLOW_LOCAL_HTTP and not all(
        is_public(ipaddress.ip_address(address)) for address in addresses
    ):
        raise _Local
    return addresses


def post(url: str, data: dict[str, Any]) -> None:
    """POST ``data`` as JSON to ``url``, connecting to an address its host was looked up
    as, once, and checked; raises _Local (nothing sent) when one of them is not public,
    _NoConnection when no connection was made, _Answer for an answer other than 2xx,
    _Unknown when the answer never came."""
    parts = urlsplit(url)
    host, port = parts.hostname or "", _port(parts)
    pinned = _PinnedTLS if parts.scheme == "https" else _Pinned
    connection = pinned(host, port, _addresses(host, port), settings.WEBHOOK_TIMEOUT_SECONDS)
    try:
        try:
            connection.connect()
        except OSError as error:
            raise _NoConnection(str(error)[:300]) from None
        target = parts.path or "/"
        if parts.query:
            target += f"?{parts.query}"
        try:
            connection.request(
                "POST",
                target,
                body=json.dumps(data, ensure_ascii=False).encode(),
                headers={"Content-Type": "application/json", "User-Agent": "moderator-webhooks/1"},
            )
            answer = connection.getresponse()
            answer.read(1024)
        except (OSError, http.client.HTTPException) as error:
            raise _Unknown(type(error).__name__) from error
    finally:
        connection.close()
    if not 200 <= answer.status < 300:
        raise _Answer(answer.status, answer.reason)


def _post_row(row: WebhookDelivery, now: datetime) -> str:
    hook = row.webhook
    if not hook.active:
        return _fail(row, "the webhook was switched off before this event was posted")
    try:
        post(hook.url, body(hook.format, row.payload))
    except _Answer as error:
        reason = f"the server answered {error.status} {error.reason}"
        transient = error.status >= 500 or error.status in RETRY_LATER_STATUS
        return _retry(row, reason, now) if transient else _fail(row, reason)
    except _NoConnection as error:
        return _retry(row, f"could not connect: {error}", now)
    except _Unknown as error:
        return _fail(row, f"{NEVER_CONFIRMED} ({error})")
    except _Local:
        return _fail(row, LOCAL_REFUSED)
    _attempt(row).update(state=State.SENT, sent_at=now, next_attempt_at=None, last_error="")
    _log(row, "sent", logging.INFO)
    return State.SENT


def _retry(row: WebhookDelivery, reason: str, now: datetime) -> str:
    if row.attempts >= settings.MAIL_MAX_ATTEMPTS:
        return _fail(row, f"gave up after {row.attempts} attempts; the last one: {reason}")
    _attempt(row).update(
        state=State.PENDING, last_error=reason, next_attempt_at=now + retry_delay(row.attempts)
    )
    _log(row, "retry", logging.INFO, reason)
    return State.PENDING


def _fail(row: WebhookDelivery, reason: str) -> str:
    _attempt(row).update(state=State.FAILED, last_error=reason, next_attempt_at=None)
    _log(row, "failed", logging.WARNING, reason)
    return State.FAILED


def _log(row: WebhookDelivery, outcome: str, level: int, reason: str = "") -> None:
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
