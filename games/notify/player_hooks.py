"""A player's own webhook (docs/email.md, "A reminder ladder"): an address of theirs (a
Discord or Slack channel, an automation) that a rung of their reminder ladder may post to,
for every seat of their address. Set on a seat's settings page, checked as a game's webhook
is (``webhooks.check_url``: https, public addresses only), tried with a test post; each post
is a row written with the reminders and posted after they commit, with a webhook delivery's
life (``games.notify.deliveries``). A rung for a webhook that fails, or that the player
has not set, goes by email (``reminders``)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from functools import partial
from typing import Any

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext as _

from games.models import PlayerPost, PlayerWebhook, Seat, Webhook
from games.notify import deliveries, email_choices, push, webhooks
from moderator import outbound

log = logging.getLogger(__name__)

SEND_PLAYER_POSTS = "games.send_player_posts"
Format = Webhook.Format


def of_address(email: str) -> PlayerWebhook | None:
    return PlayerWebhook.objects.filter(email=email_choices.normalise(email)).first()


def of_addresses(emails: Sequence[str]) -> dict[str, PlayerWebhook]:
    """Normalised address -> its webhook, for those of ``emails`` that set one (one query)."""
    wanted = {email_choices.normalise(email) for email in emails}
    if not wanted:
        return {}
    return {hook.email: hook for hook in PlayerWebhook.objects.filter(email__in=wanted)}


def works(hook: PlayerWebhook) -> bool:
    """Whether the webhook takes posts: none failed since the last one it took."""
    if hook.last_failed_at is None:
        return True
    return hook.last_sent_at is not None and hook.last_sent_at > hook.last_failed_at


def set_hook(seat: Seat, *, url: str, format: str, now: datetime) -> PlayerWebhook:
    """The webhook of the seat's address set to ``url`` (checked: ``webhooks.BadURL``)."""
    if format not in Format.values:
        raise webhooks.BadURL(f"choose a format: {', '.join(Format.values)}.")
    hook, _ = PlayerWebhook.objects.update_or_create(
        email=email_choices.normalise(seat.email),
        defaults={
            "url": webhooks.check_url(url),
            "format": format,
            "created_at": now,
            "last_sent_at": None,
            "last_failed_at": None,
            "last_error": "",
        },
    )
    return hook


def remove(seat: Seat) -> bool:
    deleted, _ = PlayerWebhook.objects.filter(email=email_choices.normalise(seat.email)).delete()
    return bool(deleted)


def post_row(
    hook: PlayerWebhook, game_id: int | None, key: str, payload: dict[str, Any], now: datetime
) -> PlayerPost:
    return PlayerPost(hook=hook, game_id=game_id, dedupe_key=key, payload=payload, created_at=now)


def test_post(seat: Seat, hook: PlayerWebhook, now: datetime) -> list[int]:
    """A post to the address's webhook, to see that it arrives."""
    with translation.override(seat.speaks):
        payload = {
            "title": _("A test from %(game)s") % {"game": seat.game.title},
            "body": _("Your webhook works: reminders of %(seat)s may come here.")
            % {"seat": seat.name},
            "url": push.seat_url(seat),
        }
    key = f"player-post:test:{hook.pk}:{int(now.timestamp() * 1000)}"
    return write([post_row(hook, seat.game_id, key, payload, now)])


def write(rows: list[PlayerPost]) -> list[int]:
    """The rows whose key is new, handed to the workers once the transaction commits."""
    return ROWS.write(rows)


def body(format: str, payload: dict[str, Any]) -> dict[str, Any]:
    """What is posted: the reminder in our JSON, or in words as Discord and Slack take it."""
    url = f"{settings.SITE_URL}{payload['url']}"
    if format == Format.DISCORD:
        text = f"**{payload['title']}**\n{payload['body']}\n{url}"
        return {"content": text[:2000], "allowed_mentions": {"parse": []}}
    if format == Format.SLACK:
        text = f"{payload['title']}\n{payload['body']}\n{url}"
        return {"text": text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")}
    return {"version": 1, "event": "player.reminder", **payload, "url": url}


def _said(row: PlayerPost, outcome: str, level: int, reason: str = "") -> None:
    """One line per post, never the address."""
    log.log(
        level,
        "player webhook %s: post %s, hook %s%s",
        outcome,
        row.pk,
        row.hook_id,
        f": {reason}" if reason else "",
        extra={"event": "player-webhook", "post": row.pk, "outcome": outcome},
    )


ROWS = deliveries.Rows(PlayerPost, SEND_PLAYER_POSTS, "hook", _said)
pending_ids, mark_stale = ROWS.pending_ids, ROWS.mark_stale


def send_batch(ids: Sequence[int], *, now: datetime) -> dict[int, str]:
    return ROWS.send_batch(ids, partial(_post_row, now=now), now=now)


def _post_row(row: PlayerPost, now: datetime) -> str:
    hook = row.hook
    try:
        webhooks.post(hook.url, body(hook.format, row.payload))
    except outbound.Answer as error:
        state = ROWS.answered(row, error.status, error.reason, now)
    except outbound.NoConnection as error:
        state = ROWS.retry(row, f"could not connect: {error}", now)
    except outbound.Unknown as error:
        state = ROWS.fail(row, f"{deliveries.NEVER_CONFIRMED} ({error})")
    except outbound.Local:
        state = ROWS.fail(row, webhooks.LOCAL_REFUSED)
    else:
        PlayerWebhook.objects.filter(pk=hook.pk).update(last_sent_at=now)
        return ROWS.sent(row, now)
    reason = PlayerPost.objects.filter(pk=row.pk).values_list("last_error", flat=True).first()
    PlayerWebhook.objects.filter(pk=hook.pk).update(
        last_failed_at=now, last_error=(reason or "")[:300]
    )
    return state
