"""The outbox: every email is a row before it is a message (DESIGN.md section 5)."""

from __future__ import annotations

from django.db import models


class OutboundEmail(models.Model):
    class State(models.TextChoices):
        PENDING = "pending"
        SENDING = "sending"
        SENT = "sent"
        UNKNOWN = "unknown", "handed over, outcome unknown"
        FAILED = "failed"

    dedupe_key = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=40)
    # The game the email belongs to: its List-Id, and whose GM hears of a failure.
    game = models.ForeignKey(
        "games.Game", on_delete=models.SET_NULL, null=True, blank=True, related_name="emails"
    )
    to = models.EmailField()
    reply_to = models.CharField(max_length=254, blank=True)
    # Emails with the same thread key answer one stable root Message-ID, so mail clients
    # show a game as one conversation.
    thread = models.CharField(max_length=100, blank=True)
    subject = models.CharField(max_length=300)
    text = models.TextField()
    html = models.TextField(blank=True)
    headers = models.JSONField(default=dict, blank=True)
    state = models.CharField(max_length=20, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    # Minted before the first attempt and kept, so that a retry is the same message.
    message_id = models.CharField(max_length=250, blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    # When the current attempt was handed out; it also tells one attempt from the next.
    sending_since = models.DateTimeField(null=True, blank=True)
    esp_message_id = models.CharField(max_length=200, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["state", "created_at"], name="outbox_state"),
            models.Index(fields=["state", "next_attempt_at"], name="outbox_due"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} to {self.to}: {self.subject}"
