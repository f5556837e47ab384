"""Web push (docs/players.md, docs/operations.md): a player's browser told of a seat's news,
on a phone's lock screen or a desktop's corner, without email.

A browser subscribes on the seat's settings page (``static/games/push.js``, the Push API
with the service's VAPID public key) for that seat or for every seat of the address; the
subscription's endpoint and keys are stored (``PushSubscription``). Each new step's report,
and the final standings, become a push to every browser subscribed for the seat by the
address that holds the seat now: what the report's first line says (its subject), in the
seat's language, opening the seat's page. The service worker (``templates/sw.js``) shows it.

A push is a row written in the transaction of its news, sent after it commits with the life
of a webhook's event (``games.notify.deliveries``). Its payload is encrypted for the browser
(RFC 8291, ``http_ece``) and the request signed with the service's key (VAPID, RFC 8292,
``py_vapid``); it goes through ``moderator.outbound``, to public addresses only, as a
webhook does (pywebpush, which wraps the same two libraries, would look the endpoint's host
up itself and post wherever it leads). A push service that answers 404 or 410 has dropped
the subscription: it is removed."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from email.utils import parseaddr
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db.models import Q
from django.urls import reverse
from django.utils import translation
from django.utils.text import capfirst
from django.utils.translation import gettext as _

from games.engines import registry
from games.engines.base import Engine
from games.lib import schedule, words
from games.models import Game, PushDelivery, PushSubscription, Seat, Step
from games.notify import deliveries, email_choices
from moderator import outbound
from moderator.mail import building

log = logging.getLogger(__name__)

SEND_PUSHES = "games.send_pushes"
# The push services' answers that say the subscription is gone (RFC 8030).
GONE = frozenset({404, 410})
# How long a VAPID signature is good for (RFC 8292 allows up to 24 hours).
SIGNATURE_HOURS = 12


def enabled() -> bool:
    """Whether the service has its VAPID keys, so that browsers may subscribe."""
    return bool(settings.VAPID_PUBLIC_KEY and settings.VAPID_PRIVATE_KEY)


class BadSubscription(ValueError):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _key(value: Any, size: int, name: str) -> str:
    """``value`` if it is base64url for ``size`` bytes, else BadSubscription."""
    if not isinstance(value, str) or len(value) > 200:
        raise BadSubscription(_("the browser sent no %(name)s.") % {"name": name})
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        raise BadSubscription(
            _("the browser's %(name)s is not base64url.") % {"name": name}
        ) from None
    if len(raw) != size or (size == 65 and raw[0] != 4):
        raise BadSubscription(
            _("the browser's %(name)s is not a key this service can use.") % {"name": name}
        )
    return value.rstrip("=")


def check(data: Any) -> tuple[str, str, str]:
    """The endpoint and the two keys of a browser's subscription (the JSON of the Push
    API's PushSubscription), checked; BadSubscription says what is wrong."""
    if not isinstance(data, Mapping):
        raise BadSubscription(_("the browser sent no subscription."))
    endpoint = data.get("endpoint")
    if not isinstance(endpoint, str) or not 0 < len(endpoint) <= 1000:
        raise BadSubscription(_("the browser sent no push address."))
    parts = urlsplit(endpoint)
    local = parts.hostname in outbound.LOCAL_HOSTS and settings.WEBHOOK_ALLOW_LOCAL_HTTP
    if parts.scheme != "https" and not (parts.scheme == "http" and local):
        raise BadSubscription(_("the push address must start with https://."))
    if not settings.WEBHOOK_ALLOW_LOCAL_HTTP and outbound.local_now(endpoint):
        raise BadSubscription(
            _("the address leads to this machine or a private network, where nothing is sent.")
        )
    keys = data.get("keys")
    if not isinstance(keys, Mapping):
        raise BadSubscription(_("the browser sent no keys."))
    return (
        endpoint,
        _key(keys.get("p256dh"), 65, _("public key")),
        _key(keys.get("auth"), 16, _("secret")),
    )


def subscribe(seat: Seat, data: Any, *, every_seat: bool, now: datetime) -> PushSubscription:
    """The browser whose subscription is ``data`` told of ``seat``'s news, or (``every_seat``)
    of every seat of the seat's address; once per browser and scope."""
    endpoint, p256dh, auth = check(data)
    subscription, _ = PushSubscription.objects.update_or_create(
        endpoint=endpoint,
        seat=None if every_seat else seat,
        defaults={
            "email": email_choices.normalise(seat.email),
            "p256dh": p256dh,
            "auth": auth,
            "created_at": now,
            "last_error": "",
        },
    )
    return subscription


def unsubscribe(seat: Seat, endpoint: str, *, every_seat: bool) -> int:
    """The browser at ``endpoint`` no longer told of ``seat`` (``every_seat``: of any seat of
    the address); how many subscriptions went."""
    rows = PushSubscription.objects.filter(
        endpoint=endpoint, email=email_choices.normalise(seat.email)
    )
    if not every_seat:
        rows = rows.filter(seat=seat)
    count = rows.count()
    rows.delete()
    return count


def _covering(seats: Iterable[Seat]) -> Q:
    emails = {email_choices.normalise(seat.email) for seat in seats}
    return Q(email__in=emails) & (Q(seat__in=list(seats)) | Q(seat__isnull=True))


def of_seat(seat: Seat) -> list[PushSubscription]:
    """The browsers told of ``seat`` (its own and its address's), newest first."""
    return list(PushSubscription.objects.filter(_covering([seat])).order_by("-created_at", "-id"))


def by_seat(seats: Sequence[Seat]) -> dict[int, list[PushSubscription]]:
    """Seat id -> the browsers told of it, one each (a browser subscribed for the seat and for
    every seat is told once); one query."""
    found: dict[int, dict[str, PushSubscription]] = defaultdict(dict)
    if not seats:
        return {}
    subscriptions = PushSubscription.objects.filter(_covering(seats)).order_by("id")
    for subscription in subscriptions:
        for seat in seats:
            if email_choices.normalise(seat.email) != subscription.email:
                continue
            if subscription.seat_id in (None, seat.pk):
                found[seat.pk].setdefault(subscription.endpoint, subscription)
    return {seat_id: list(by_endpoint.values()) for seat_id, by_endpoint in found.items()}


# --- what a push says ------------------------------------------------------------------------


def seat_url(seat: Seat) -> str:
    return reverse("games:seat", args=[seat.game_id, seat.position])


def news(
    game: Game, seat: Seat, engine: Engine[Any, Any, Any], step: Step | None
) -> dict[str, Any]:
    """What a push of the seat's new report says, in the seat's language: the report's
    subject (its first line), what the seat owes, and the seat's page to open."""
    with translation.override(seat.speaks):
        context: dict[str, Any] = {"game": game, "engine": engine, "step": step}
        if step is None:
            title = building.render("emails/final/subject.txt", context, autoescape=False)
            body = _("The game is over: the final standings are on your seat's page.")
        else:
            owed = words.owed(step.prompts, seat.position)
            context.update(owed=owed, deadline=schedule.local_time(step.deadline, seat.zone))
            title = building.render("emails/report/subject.txt", context, autoescape=False)
            body = _owed_said(owed)
    return {
        "title": title.strip(),
        "body": body,
        "url": seat_url(seat),
        "tag": f"game-{game.pk}-seat-{seat.position}",
    }


def step_pushes(
    game: Game,
    seats: Sequence[Seat],
    engine: Engine[Any, Any, Any],
    step: Step | None,
    now: datetime,
) -> list[int]:
    """A push of each seat's new report (``step``; None: the final standings) to the
    browsers told of it, in the caller's transaction; sent once it commits."""
    if not enabled():
        return []
    told = by_seat(seats)
    rows = []
    news_key = "final" if step is None else f"step:{step.number}"
    for seat in seats:
        if seat.pk not in told:
            continue
        payload = news(game, seat, engine, step)
        for subscription in told[seat.pk]:
            key = f"push:{game.pk}:{seat.position}:{news_key}:{endpoint_key(subscription)}"
            rows.append(_row(subscription, game, key, payload, now))
    return write(rows)


def test_push(seat: Seat, now: datetime) -> list[int]:
    """A push to each browser told of ``seat``, to see that it arrives."""
    if not enabled():
        return []
    with translation.override(seat.speaks):
        payload = {
            "title": _("A test from %(game)s") % {"game": seat.game.title},
            "body": _("Push works on this device: the news of %(seat)s will come here.")
            % {"seat": seat.name},
            "url": seat_url(seat),
            "tag": f"test-{seat.game_id}-{seat.position}",
        }
    stamp = int(now.timestamp() * 1000)
    rows = [
        _row(s, seat.game, f"push:test:{seat.pk}:{stamp}:{endpoint_key(s)}", payload, now)
        for s in of_seat(seat)
    ]
    return write(rows)


def endpoint_key(subscription: PushSubscription) -> str:
    return hashlib.sha256(subscription.endpoint.encode()).hexdigest()[:16]


def _row(
    subscription: PushSubscription, game: Game, key: str, payload: dict[str, Any], now: datetime
) -> PushDelivery:
    return PushDelivery(
        subscription=subscription, game=game, dedupe_key=key, payload=payload, created_at=now
    )


def reminder_row(
    step: Step,
    seat: Seat,
    hours: float,
    subscription: PushSubscription,
    key: str,
    now: datetime,
) -> PushDelivery:
    """A reminder's push (a rung of the seat's ladder: games.notify.ladder), saying what the
    reminder email's subject says."""
    return _row(subscription, step.game, key, reminder_payload(step, seat, hours), now)


def reminder_payload(step: Step, seat: Seat, hours: float) -> dict[str, Any]:
    """What a reminder says when it is not an email (a push, a player's webhook): the
    reminder email's subject, what the seat owes, and its page, in the seat's language."""
    game = step.game
    with translation.override(seat.speaks):
        owed = words.owed(step.prompts, seat.position)
        context = {
            "game": game,
            "engine": registry.get(game.engine),
            "step": step,
            "hours": hours,
            "deadline": schedule.local_time(step.deadline, seat.zone),
        }
        title = building.render("emails/reminder/subject.txt", context, autoescape=False)
        payload = {
            "title": title.strip(),
            "body": _owed_said(owed),
            "url": seat_url(seat),
            "tag": f"game-{game.pk}-seat-{seat.position}",
        }
    return payload


def _owed_said(owed: list[dict[str, Any]]) -> str:
    if not owed:
        return _("Nothing is owed from you this time.")
    return "; ".join(f"{capfirst(str(prompt['kind']))}: {prompt['hint']}" for prompt in owed)


def write(rows: list[PushDelivery]) -> list[int]:
    """The rows whose key is new, handed to the workers once the transaction commits."""
    return ROWS.write(rows)


# --- sending ---------------------------------------------------------------------------------


def _said(row: PushDelivery, outcome: str, level: int, reason: str = "") -> None:
    """One line per push: the row and its subscription, never the endpoint (it is the
    browser's address at its push service)."""
    log.log(
        level,
        "push %s: delivery %s, subscription %s%s",
        outcome,
        row.pk,
        row.subscription_id,
        f": {reason}" if reason else "",
        extra={
            "event": "push",
            "delivery": row.pk,
            "subscription": row.subscription_id,
            "game": row.game_id,
            "outcome": outcome,
            "attempts": row.attempts,
        },
    )


ROWS = deliveries.Rows(PushDelivery, SEND_PUSHES, "subscription", _said)
pending_ids, mark_stale = ROWS.pending_ids, ROWS.mark_stale


def send_batch(ids: Sequence[int], *, now: datetime) -> dict[int, str]:
    """Send every push of ``ids`` that is pending and due; the state of each claimed."""
    return ROWS.send_batch(ids, partial(_send_row, now=now), now=now)


def _b64(value: str) -> bytes:
    return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))


def encrypt(payload: bytes, p256dh: str, auth: str) -> bytes:
    """``payload`` encrypted for the browser (RFC 8291, aes128gcm), with a new key each time."""
    import http_ece  # the workers' only: kept out of the web's start
    from cryptography.hazmat.primitives.asymmetric import ec

    return bytes(
        http_ece.encrypt(
            payload,
            private_key=ec.generate_private_key(ec.SECP256R1()),
            dh=_b64(p256dh),
            auth_secret=_b64(auth),
            version="aes128gcm",
        )
    )


def subject() -> str:
    """Whom a push service may write to about the service's pushes (VAPID's ``sub``)."""
    return settings.VAPID_SUBJECT or f"mailto:{parseaddr(settings.DEFAULT_FROM_EMAIL)[1]}"


def signed(endpoint: str, now: datetime) -> dict[str, str]:
    """The VAPID Authorization header for a push to ``endpoint``, good for SIGNATURE_HOURS."""
    from py_vapid import Vapid02

    parts = urlsplit(endpoint)
    claims = {
        "aud": f"{parts.scheme}://{parts.netloc}",
        "sub": subject(),
        "exp": int(now.timestamp()) + SIGNATURE_HOURS * 3600,
    }
    return dict(Vapid02.from_string(settings.VAPID_PRIVATE_KEY).sign(claims))


def _send_row(row: PushDelivery, now: datetime) -> str:
    subscription = row.subscription
    body = encrypt(
        json.dumps(row.payload, ensure_ascii=False).encode(),
        subscription.p256dh,
        subscription.auth,
    )
    headers = {
        **signed(subscription.endpoint, now),
        "Content-Encoding": "aes128gcm",
        "Content-Type": "application/octet-stream",
        "TTL": str(settings.PUSH_TTL_SECONDS),
        "Urgency": "normal",
    }
    try:
        outbound.send(subscription.endpoint, body, headers)
    except outbound.Answer as error:
        if error.status in GONE:
            return _gone(row, error.status)
        return _failed(row, ROWS.answered(row, error.status, error.reason, now), now)
    except outbound.NoConnection as error:
        return _failed(row, ROWS.retry(row, f"could not connect: {error}", now), now)
    except outbound.Unknown as error:
        return _failed(row, ROWS.fail(row, f"{deliveries.NEVER_CONFIRMED} ({error})"), now)
    except outbound.Local:
        return _failed(row, ROWS.fail(row, outbound.LOCAL_REFUSED), now)
    PushSubscription.objects.filter(pk=subscription.pk).update(last_sent_at=now)
    return ROWS.sent(row, now)


def _failed(row: PushDelivery, state: str, now: datetime) -> str:
    """The subscription's last failure noted, for the seat's settings page."""
    reason = PushDelivery.objects.filter(pk=row.pk).values_list("last_error", flat=True).first()
    PushSubscription.objects.filter(pk=row.subscription_id).update(
        last_failed_at=now, last_error=(reason or "")[:300]
    )
    return state


GONE_STATE = "gone"


def _gone(row: PushDelivery, status: int) -> str:
    """The push service dropped the subscription (the browser unsubscribed, or its data was
    cleared): it is removed, with its pushes."""
    _said(row, GONE_STATE, logging.INFO, f"the push service answered {status}")
    PushSubscription.objects.filter(pk=row.subscription_id).delete()
    return GONE_STATE
