"""The ledger (games.notify.ledger, docs/players.md): what was decided for a player without
them, one row each, for their seat's page and the GM's."""

from __future__ import annotations

from django.db import models

from games.models.games import Game
from games.models.seats import Seat


class Decision(models.Model):
    """One decision taken for a seat's player without them: what (``kind``), in which
    step, with what it needs to be said again in any language (``details``: the order
    played, the hours, the rule's numbers)."""

    class Kind(models.TextChoices):
        DEFAULT = "default", "a missed turn played by the game's default"
        AUTOPILOT = "autopilot", "a missed turn played by an autopilot"
        EXTENSION = "extension", "an automatic extension spent"
        ABSENCE = "absence", "a deadline held for an absence"
        CIVIL_DISORDER = "civil-disorder", "civil disorder"
        HELD = "held", "a reminder moved out of quiet hours"
        MOVED = "moved", "a reminder sent by another channel"
        CONDITIONAL = "conditional", "a conditional order played or disarmed"

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="decisions")
    seat = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="decisions")
    step_number = models.PositiveIntegerField(null=True, blank=True)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["seat", "created_at"], name="decision_seat")]

    def __str__(self) -> str:
        return f"{self.kind} for seat {self.seat_id}"
