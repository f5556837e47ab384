"""The messages players and the GM write to one another (games.community.press)."""

from __future__ import annotations

from django.db import models

from games.models.games import Game
from games.models.seats import Seat
from games.models.steps import GM_REASON_LENGTH

# The longest message a player or the GM may write (games.community.press).
MESSAGE_LENGTH = 2000


class Message(models.Model):
    """A message between players (press, games.community.press, docs/players.md "Messages"): from a
    seat or the GM (``sender`` None), to every seat or to one (``recipient``), sent while
    step ``step_number`` was open. No order and no event: spectators, webhooks, the replay
    and the record never see one. The GM may hide it: it is then shown to the GM only,
    and emailed to nobody after."""

    class Source(models.TextChoices):
        WEB = "web"
        EMAIL = "email"
        API = "api"

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="press_messages")
    step_number = models.PositiveIntegerField()
    sender = models.ForeignKey(
        Seat, on_delete=models.CASCADE, null=True, blank=True, related_name="press_sent"
    )
    recipient = models.ForeignKey(
        Seat, on_delete=models.CASCADE, null=True, blank=True, related_name="press_received"
    )
    text = models.TextField()
    sent_at = models.DateTimeField()
    source = models.CharField(max_length=10, choices=Source.choices)
    # The message an emailed reply answers (its press address names it).
    answers = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    hidden_at = models.DateTimeField(null=True, blank=True)
    hidden_reason = models.CharField(max_length=GM_REASON_LENGTH, blank=True)
    # Who held the sender's and the recipient's seats when it was sent (``Seat.tenure``)
    # and their names then: a private message is read by those two players only, and a
    # message of a player who has left their seat is shown under their name, never as
    # the new player's own.
    sender_tenure = models.PositiveIntegerField(default=0, db_default=0)
    sender_name = models.CharField(max_length=60, blank=True, default="", db_default="")
    recipient_tenure = models.PositiveIntegerField(default=0, db_default=0)
    recipient_name = models.CharField(max_length=60, blank=True, default="", db_default="")

    class Meta:
        ordering = ["game", "id"]

    def __str__(self) -> str:
        return f"message {self.pk} of {self.game_id}"
