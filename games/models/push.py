"""Web push (games.notify.push, docs/players.md): the browsers that asked to be told of a
seat, or of every seat of an address, and each push sent to one of them."""

from __future__ import annotations

from django.db import models

from games.models.games import Game
from games.models.seats import Seat
from games.models.webhooks import Delivery


class PushSubscription(models.Model):
    """A browser's push subscription (the Push API's endpoint and keys), for one seat or,
    with ``seat`` null, for every seat of the address ``email``. A seat's pushes go to the
    subscriptions of the address that holds the seat now: a seat that changes hands stops
    reaching the browsers of the player who left it."""

    email = models.EmailField(db_index=True)  # normalised: email_choices.normalise
    seat = models.ForeignKey(
        Seat, on_delete=models.CASCADE, null=True, blank=True, related_name="push_subscriptions"
    )
    endpoint = models.URLField(max_length=1000)
    # The browser's public key (P-256, base64url) and authentication secret: the payload is
    # encrypted for them (RFC 8291), so the push service reads none of it.
    p256dh = models.CharField(max_length=100)
    auth = models.CharField(max_length=50)
    created_at = models.DateTimeField()
    last_sent_at = models.DateTimeField(null=True, blank=True)
    last_failed_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["endpoint", "seat"], nulls_distinct=False, name="push_endpoint_once"
            )
        ]

    def __str__(self) -> str:
        where = f"seat {self.seat_id}" if self.seat_id else "every seat"
        return f"push to {self.email}, {where}"


class PushDelivery(Delivery):
    """One push to one subscription, once (the dedupe key names the news and the
    endpoint): written in the transaction of the news, sent after it commits, with the
    life of a webhook's delivery (games.notify.webhooks)."""

    subscription = models.ForeignKey(
        PushSubscription, on_delete=models.CASCADE, related_name="deliveries"
    )
    game = models.ForeignKey(
        Game, on_delete=models.CASCADE, null=True, blank=True, related_name="push_deliveries"
    )
    dedupe_key = models.CharField(max_length=200, unique=True)
    # What the notification says and opens: {"title", "body", "url", "tag"}.
    payload = models.JSONField()

    class Meta(Delivery.Meta):
        indexes = [models.Index(fields=["state", "next_attempt_at"], name="push_due")]

    def __str__(self) -> str:
        return f"push {self.pk} to subscription {self.subscription_id}: {self.state}"
