"""Tokens of the API (games.community.tokens, docs/api.md): a program's key to one seat, to
all the seats of an address, or to a GM's games, and what was done with each."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from games.models.games import Game
from games.models.seats import Seat


class ApiToken(models.Model):
    """A key a player or a GM made for a program. Only its SHA-256 is kept (``token_hash``);
    ``prefix``, its first characters, names it in lists. ``scope``: one seat (``seat``,
    while the seat is still the address ``email``'s), every seat of ``email``, or every game
    of the GM ``gm``. ``access``: reading only, or playing too (orders, messages, the GM's
    actions). ``bot``: a program plays with it, and the seats it plays say so."""

    class Scope(models.TextChoices):
        SEAT = "seat", "one seat"
        SEATS = "seats", "all my seats"
        GM = "gm", "my games as GM"

    class Access(models.TextChoices):
        READ = "read", "read only"
        PLAY = "play", "read and play"

    name = models.CharField(max_length=60)
    scope = models.CharField(max_length=10, choices=Scope.choices)
    access = models.CharField(max_length=10, choices=Access.choices)
    bot = models.BooleanField(default=False)
    email = models.EmailField(blank=True, db_index=True)  # normalised; "" for a GM's
    seat = models.ForeignKey(
        Seat, on_delete=models.CASCADE, null=True, blank=True, related_name="api_tokens"
    )
    gm = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="api_tokens",
    )
    token_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=16)
    created_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name})"

    @property
    def plays(self) -> bool:
        return self.access == self.Access.PLAY


class TokenAction(models.Model):
    """One change made with a token: an order, a message, a GM's action; ``words`` say
    which, as its owner's token list shows them (never a sealed order's text)."""

    class Kind(models.TextChoices):
        ORDER = "order"
        MESSAGE = "message"
        GM = "gm", "GM action"

    token = models.ForeignKey(ApiToken, on_delete=models.CASCADE, related_name="actions")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="token_actions")
    position = models.PositiveSmallIntegerField(null=True, blank=True)
    step_number = models.PositiveIntegerField(null=True, blank=True)
    # The row it wrote (an Order's, a Message's or a GMAction's id).
    row_id = models.PositiveBigIntegerField(null=True, blank=True)
    words = models.CharField(max_length=200)
    at = models.DateTimeField()

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return self.words
