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
    to = models.EmailField()
    subject = models.CharField(max_length=300)
    text = models.TextField()
    html = models.TextField(blank=True)
    headers = models.JSONField(default=dict, blank=True)
    state = models.CharField(max_length=20, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    esp_message_id = models.CharField(max_length=200, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["state", "created_at"], name="outbox_state")]

    def __str__(self) -> str:
        return f"{self.kind} to {self.to}: {self.subject}"
