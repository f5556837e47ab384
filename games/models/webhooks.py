"""Webhooks: where a game's public events are posted, and each posting (docs/webhooks.md)."""

from __future__ import annotations

from django.db import models

from games.models.games import Game


class Delivery(models.Model):
    """What every row posted out of the service after its transaction commits has: its
    state and attempts, the last error, when it is tried again, when it was claimed and
    sent (games.notify.deliveries): a webhook's event, a push, a post to a player's
    webhook."""

    class State(models.TextChoices):
        PENDING = "pending"
        SENDING = "sending"
        SENT = "sent"
        FAILED = "failed"

    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    sending_since = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]


class Webhook(models.Model):
    """Where a game's public events are posted (docs/webhooks.md): set by the game's GM,
    or by a campaign's host for every game of its league. Exactly one of ``game`` and
    ``campaign``. The URL may hold a secret (Discord's and Slack's do): it is never
    logged, and pages show its host only."""

    class Format(models.TextChoices):
        JSON = "json", "JSON (our versioned format)"
        DISCORD = "discord", "Discord"
        SLACK = "slack", "Slack"

    game = models.OneToOneField(
        Game, on_delete=models.CASCADE, null=True, blank=True, related_name="webhook"
    )
    campaign = models.OneToOneField(
        "campaigns.Campaign",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="webhook",
    )
    url = models.URLField(max_length=500)
    format = models.CharField(max_length=10, choices=Format.choices, default=Format.JSON)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(game__isnull=True, campaign__isnull=False)
                | models.Q(game__isnull=False, campaign__isnull=True),
                name="webhook_of_game_or_campaign",
            )
        ]

    def __str__(self) -> str:
        return f"webhook {self.pk} ({self.format})"


class WebhookDelivery(Delivery):
    """One event posted to one webhook, once: the dedupe key names the event and the
    webhook. Written in the transaction of the event, posted after it commits."""

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    # The game whose event it is (a campaign's webhook hears of each of its games).
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="webhook_deliveries")
    dedupe_key = models.CharField(max_length=200, unique=True)
    event = models.CharField(max_length=40)
    # The event in our versioned format (docs/webhooks.md); a Discord or Slack webhook
    # gets its summary in words, made when it is posted.
    payload = models.JSONField()

    class Meta(Delivery.Meta):
        indexes = [models.Index(fields=["state", "next_attempt_at"], name="webhook_due")]

    def __str__(self) -> str:
        return f"{self.event} to webhook {self.webhook_id}: {self.state}"


class WebhookMessage(models.Model):
    """The one Discord message of a game in a webhook's channel (games.notify.discord),
    edited in place as the game moves: its id at Discord, what it shows (``state``: the
    latest step, the reminders of it, the result), and the latest delivery it shows, so an
    older delivery posted late never takes it back."""

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="messages")
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="webhook_messages")
    message_id = models.CharField(max_length=40)
    state = models.JSONField(default=dict)
    delivery_id = models.PositiveBigIntegerField(default=0)
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["webhook", "game"], name="webhook_message_once")
        ]

    def __str__(self) -> str:
        return f"message {self.message_id} of game {self.game_id}"


class PlayerWebhook(models.Model):
    """A player's own webhook (games.notify.player_hooks): where a rung of their reminder
    ladder may post, for every seat of the address ``email``. The URL may hold a secret: it
    is never logged, and pages show its host only."""

    email = models.EmailField(unique=True)  # normalised: email_choices.normalise
    url = models.URLField(max_length=500)
    format = models.CharField(
        max_length=10, choices=Webhook.Format.choices, default=Webhook.Format.JSON
    )
    created_at = models.DateTimeField()
    last_sent_at = models.DateTimeField(null=True, blank=True)
    last_failed_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True)

    def __str__(self) -> str:
        return f"webhook of {self.email} ({self.format})"


class PlayerPost(Delivery):
    """One post to a player's webhook, once (the dedupe key names the reminder): written in
    the transaction of the reminders, posted after it commits, with a webhook delivery's
    life (games.notify.deliveries)."""

    hook = models.ForeignKey(PlayerWebhook, on_delete=models.CASCADE, related_name="posts")
    game = models.ForeignKey(
        Game, on_delete=models.CASCADE, null=True, blank=True, related_name="player_posts"
    )
    dedupe_key = models.CharField(max_length=200, unique=True)
    # What the post says: {"title", "body", "url"} (docs/email.md, "A reminder ladder").
    payload = models.JSONField()

    class Meta(Delivery.Meta):
        indexes = [models.Index(fields=["state", "next_attempt_at"], name="player_post_due")]

    def __str__(self) -> str:
        return f"post {self.pk} to {self.hook_id}: {self.state}"
