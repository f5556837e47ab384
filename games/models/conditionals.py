"""Conditional orders (games.postal.conditionals, docs/orders.md): what a player whose turn it
is not leaves for what the others might do, until it is played or disarmed."""

from __future__ import annotations

from django.db import models

from games.lib import words
from games.models.games import Game
from games.models.seats import Seat


class ConditionalOrder(models.Model):
    """A conditional order of a seat's player (the seat's ``tenure`` then): as written
    (``text``), as the game says it back (``words``), its stored form for the rules
    (``data``: games.engines.base.Conditions), and what became of it: armed, played (the
    ``order`` it played), disarmed (``reason``, the player told) or withdrawn."""

    class Status(models.TextChoices):
        ARMED = "armed"
        PLAYED = "played"
        DISARMED = "disarmed"
        WITHDRAWN = "withdrawn"

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="conditionals")
    seat = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="conditionals")
    tenure = models.PositiveIntegerField(default=0)
    text = models.TextField()
    words = models.TextField()
    data = models.JSONField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ARMED)
    step_number = models.PositiveIntegerField()
    source = models.CharField(max_length=20)
    created_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    reason = models.TextField(blank=True)
    # How the engine made ``reason``, to say it in the reader's language (games.lib.words).
    reason_message = models.JSONField(null=True, blank=True)
    order = models.ForeignKey(
        "games.Order", on_delete=models.SET_NULL, null=True, blank=True, related_name="conditional"
    )
    token = models.ForeignKey(
        "games.ApiToken",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="conditionals",
    )

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["game", "status"], name="conditional_armed")]

    def __str__(self) -> str:
        return f"{self.words} ({self.status})"

    @property
    def reason_said(self) -> str:
        """Why it was disarmed, in the language active where it is shown."""
        return str(words.Said(self.reason, self.reason_message))
