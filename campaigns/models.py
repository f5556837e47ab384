"""Campaigns carry players and dice across games and game nights. Thin models: the only
code that changes a campaign is ``campaigns.postal``; the rules of a night are
``games.engines.first_player.rules``, played one game per table through ``games.postal``.

Dice never change hands without a ``LedgerEntry``: every movement is two entries (the
giver's -n, the receiver's +n; the "box" gives the dice that new members bring and takes
back temporary dice), so every count can be rebuilt from the ledger and the entries of a
campaign always add up to zero.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Campaign(models.Model):
    class Kind(models.TextChoices):
        FIRST_PLAYER = "first-player", "The First Player (game nights)"
        LEAGUE = "league", "League of postal games"

    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    host = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="campaigns"
    )
    # First Player: order_mode, tokens, reserve_to_second_last, rounds, schedule.
    # League: engine, game options, points per place, schedule, time zone.
    options = models.JSONField(default=dict, blank=True)
    # Cached from the ledger (campaigns.postal keeps it right in the same transaction).
    reserve = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.name


class Member(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="members")
    name = models.CharField(max_length=60)
    email = models.EmailField()
    time_zone = models.CharField(max_length=64, blank=True)
    # Cached from the ledger.
    dice = models.PositiveIntegerField(default=0)
    joined_at = models.DateTimeField()

    class Meta:
        ordering = ["campaign", "id"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "name"], name="member_name_unique")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.campaign})"


class Night(models.Model):
    """A game night (a session) of a First Player campaign."""

    class Status(models.TextChoices):
        OPEN = "open"
        CLOSED = "closed"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="nights")
    number = models.PositiveIntegerField()
    date = models.DateField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    opened_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["campaign", "number"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "number"], name="night_number_unique")
        ]

    def __str__(self) -> str:
        return f"{self.campaign}, night {self.number} ({self.date})"


class Attendance(models.Model):
    night = models.ForeignKey(Night, on_delete=models.CASCADE, related_name="attendance")
    member = models.ForeignKey(Member, on_delete=models.CASCADE, related_name="attendance")
    present = models.BooleanField()
    # The member's dice when the night opened.
    had = models.PositiveIntegerField()

    class Meta:
        ordering = ["night", "member"]
        constraints = [models.UniqueConstraint(fields=["night", "member"], name="attendance_once")]

    def __str__(self) -> str:
        return f"{self.member.name}: {'present' if self.present else 'absent'}"


class Table(models.Model):
    """One table of a night: one First Player game (one engine game per table)."""

    night = models.ForeignKey(Night, on_delete=models.CASCADE, related_name="tables")
    number = models.PositiveSmallIntegerField()
    game = models.OneToOneField(
        "games.Game", on_delete=models.PROTECT, related_name="campaign_table"
    )
    # The table that holds the campaign's reserve (and takes the absences) this night.
    has_reserve = models.BooleanField(default=False)
    ledgered = models.BooleanField(default=False)

    class Meta:
        ordering = ["night", "number"]
        constraints = [
            models.UniqueConstraint(fields=["night", "number"], name="table_number_unique")
        ]

    def __str__(self) -> str:
        return f"{self.night}, table {self.number}"


class LedgerEntry(models.Model):
    class Holder(models.TextChoices):
        MEMBER = "member"
        RESERVE = "reserve"
        BOX = "box", "the box (dice brought in or taken out by the rules)"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="ledger")
    night = models.ForeignKey(
        Night, on_delete=models.CASCADE, null=True, blank=True, related_name="ledger"
    )
    table = models.ForeignKey(
        Table, on_delete=models.CASCADE, null=True, blank=True, related_name="ledger"
    )
    holder = models.CharField(max_length=10, choices=Holder.choices)
    member = models.ForeignKey(
        Member, on_delete=models.PROTECT, null=True, blank=True, related_name="ledger"
    )
    unit = models.CharField(max_length=10, default="dice")
    delta = models.IntegerField()
    # Which movement: the round of the night (0: the night's opening) and the rules' reason.
    round = models.PositiveSmallIntegerField(default=0)
    reason = models.CharField(max_length=60)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["campaign", "id"]
        indexes = [models.Index(fields=["campaign", "unit"], name="ledger_campaign_unit")]

    def __str__(self) -> str:
        who = self.member.name if self.member else self.holder
        return f"{who} {self.delta:+d} {self.unit} ({self.reason})"


class LeagueGame(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="games")
    number = models.PositiveIntegerField()
    game = models.OneToOneField("games.Game", on_delete=models.PROTECT, related_name="league_entry")

    class Meta:
        ordering = ["campaign", "number"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "number"], name="league_game_unique")
        ]

    def __str__(self) -> str:
        return f"{self.campaign}, game {self.number}"
