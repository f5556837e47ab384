"""People by their email address, across all their games: how they want email, their
sign-ins and accounts, their absences, their sign-ups to open games and their ratings."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from games.engines import registry
from games.models.games import LANGUAGES, Game, new_public_id
from games.models.seats import Reports


class EmailPreference(models.Model):
    """How a player (an email address, normalised: ``email_choices.normalise``, across
    all their games) wants email: reminders one per game and deadline, or in one daily
    digest at ``hour`` in ``time_zone``, or none (``no_reminders``); and ``reports``, the
    choice new seats of the address start with ("": each game's own default), and
    ``web_receipts``, whether they get receipts of orders made on their pages; and the
    player's quiet hours. A later account owns this row.

    ``digest_day``: the local day of the latest daily digest of reports, claimed by the
    task that writes it (``email_choices.send_daily_digests``)."""

    email = models.EmailField(unique=True)
    digest = models.BooleanField(default=False)
    no_reminders = models.BooleanField(default=False, db_default=False)
    hour = models.PositiveSmallIntegerField(default=8)
    time_zone = models.CharField(max_length=64, default="UTC")
    reports = models.CharField(max_length=10, choices=Reports.choices, blank=True)
    # Whether the new seats of the address get receipts of the orders made on their pages
    # (``Seat.web_receipts``), as a seat page's "all my seats" chose.
    web_receipts = models.BooleanField(default=False, db_default=False)
    digest_day = models.DateField(null=True, blank=True)
    # Quiet hours (games.notify.quiet): the player's night in ``time_zone``, from
    # ``quiet_from`` to ``quiet_until`` (the next morning when it is earlier); both unset: none.
    quiet_from = models.TimeField(null=True, blank=True)
    quiet_until = models.TimeField(null=True, blank=True)
    # The reminder ladder of every seat of the address (games.notify.ladder):
    # [{"channel": "email" | "push", "hours": 24}, ...]; null: each game's default.
    ladder = models.JSONField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        if self.no_reminders:
            return f"{self.email}: no reminders"
        return f"{self.email}: {'digest' if self.digest else 'each reminder'}"


class Player(models.Model):
    """A person who signed in with their email address (games.community.players): a Django user
    without a password, and what they set for all their seats. Their seats are the seats
    of the address, in every game; a player who never signs in keeps their seat links."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="player"
    )
    email = models.EmailField(unique=True)  # normalised: email_choices.normalise
    # The name of the player's public page (their record and ratings): never the address.
    public_id = models.CharField(max_length=16, unique=True, default=new_public_id, editable=False)
    name = models.CharField(max_length=60, blank=True)
    time_zone = models.CharField(max_length=64, blank=True)
    # The language of the player's pages and of all their seats ("": each game's own).
    language = models.CharField(
        max_length=8, choices=LANGUAGES, blank=True, default="", db_default=""
    )
    created_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.name or self.email


class SignIn(models.Model):
    """A sign-in asked for an address: a link (its token) and a code to type, both stored
    hashed, single use, valid until ``expires_at``; a code typed wrong too often voids it."""

    email = models.EmailField(db_index=True)  # normalised
    token_hash = models.CharField(max_length=64, unique=True)
    code_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # Where the player was going (a local path), taken after signing in.
    next = models.CharField(max_length=200, blank=True)
    # The SHA-256 of the random id of the browser that asked (games.community.players): its code is
    # taken from that browser alone ("" for sign-ins asked before: their link only).
    browser_hash = models.CharField(max_length=64, blank=True)

    def __str__(self) -> str:
        return f"sign-in of {self.email}"


class Absence(models.Model):
    """A player away from ``first_day`` to ``last_day`` (both included, in their time
    zone ``zone``), for all the games of the address or one (games.community.absences)."""

    email = models.EmailField(db_index=True)  # normalised
    game = models.ForeignKey(
        Game, on_delete=models.CASCADE, null=True, blank=True, related_name="absences"
    )
    first_day = models.DateField()
    last_day = models.DateField()
    zone = models.CharField(max_length=64)
    # The same days as instants: from the first day's midnight to the end of the last.
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["starts_at", "id"]

    def __str__(self) -> str:
        return f"{self.email} away {self.first_day} to {self.last_day}"


class SignUp(models.Model):
    """A person's wish to play an open game (games.community.signups). It counts once its address
    is confirmed (the link emailed to it); then it holds a seat (``ACCEPTED``), waits for
    one or for the GM (``WAITING``), or ended."""

    class State(models.TextChoices):
        UNCONFIRMED = "unconfirmed", _("waiting for the email confirmation")
        WAITING = "waiting", _("on the waiting list")
        ACCEPTED = "accepted", _("has a seat")
        WITHDRAWN = "withdrawn", _("withdrawn")
        DECLINED = "declined", _("declined by the GM")

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="signups")
    name = models.CharField(max_length=60)
    email = models.EmailField()
    state = models.CharField(max_length=12, choices=State.choices, default=State.UNCONFIRMED)
    # The link that confirms the address and later lets the player withdraw (hashed).
    token_hash = models.CharField(max_length=64, unique=True)
    # A sign-up for a seat in civil disorder of a running game: its position.
    position = models.PositiveSmallIntegerField(null=True, blank=True)
    created_at = models.DateTimeField()
    confirmed_at = models.DateTimeField(null=True, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["game", "confirmed_at", "id"]

    def __str__(self) -> str:
        return f"{self.name} for {self.game}"


class Rating(models.Model):
    """A player's rating in one game (games.community.ratings), from the finished rated games of
    their address: the skill estimate ``mu`` and its uncertainty ``sigma``."""

    engine = models.CharField(max_length=40, choices=registry.choices)
    email = models.EmailField()  # normalised
    name = models.CharField(max_length=60)
    mu = models.FloatField()
    sigma = models.FloatField()
    games = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["engine", "-mu"]
        constraints = [
            models.UniqueConstraint(fields=["engine", "email"], name="rating_once_per_game")
        ]

    def __str__(self) -> str:
        return f"{self.name} in {self.engine}: {self.mu:.1f}"
