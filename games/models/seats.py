"""A seat of a game: the player who holds it, how they are emailed, the players who left
it, and its magic links."""

from __future__ import annotations

from django.db import models
from django.db.models.functions import Upper
from django.utils.translation import gettext_lazy as _

from games.models.games import LANGUAGES, Game


class Reports(models.TextChoices):
    """How often a seat is emailed its step reports (games.notify.email_choices). Whatever the
    choice, the first report, the final standings and every email that is not a step
    report (invitations, links, receipts of orders sent by email, refusals, reminders) are
    sent; a receipt of an order made on the seat's page only when ``Seat.web_receipts``."""

    EVERY = "every", _("every step")
    OWED = "owed", _("only when I owe an order, with what happened since")
    DIGEST = "digest", _("a daily digest of what happened")
    NONE = "none", _("never: I read them on my seat's page")


class PressEmail(models.TextChoices):
    """How a seat is emailed the messages of its game (games.community.press). The GM's
    announcements come by email whatever the choice."""

    EACH = "each", _("each message, as it comes")
    DIGEST = "digest", _("in my daily digest")
    NONE = "none", _("never: I read them on my page")


class Seat(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active"
        OUT = "out"
        REPLACED = "replaced"

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="seats")
    position = models.PositiveSmallIntegerField()
    name = models.CharField(max_length=60)
    email = models.EmailField()
    time_zone = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACTIVE)
    link_version = models.PositiveIntegerField(default=0)
    nmr_count = models.PositiveIntegerField(default=0)
    # Set when the ESP reports a bounce, complaint or rejection for the address: the GM
    # sees it; the player keeps the web page. Cleared when the address changes.
    email_failing = models.TextField(blank=True)
    email_failing_at = models.DateTimeField(null=True, blank=True)
    # How often the seat gets its step reports ("": the game's default, from its engine;
    # games.notify.email_choices), and the latest event an email has told it of: a report sent
    # when it owes an order, a daily digest or the final standings tell every event since.
    reports = models.CharField(max_length=10, choices=Reports.choices, blank=True)
    reported_through = models.PositiveBigIntegerField(default=0)
    # What plays the seat's turn when it misses a deadline: "" the game's NMR default, else
    # the key of one of its engine's strategies (games.engines.base.Strategy).
    autopilot = models.CharField(max_length=40, blank=True, default="", db_default="")
    # The seat's own reminder ladder (games.notify.ladder); null: its address's, or the game's.
    ladder = models.JSONField(null=True, blank=True)
    # Automatic extensions spent, missed turns in a row (an order sets it back to 0), the
    # hours the seat's absences held the game, and when it fell into civil disorder.
    extensions_used = models.PositiveSmallIntegerField(default=0, db_default=0)
    missed_in_row = models.PositiveSmallIntegerField(default=0, db_default=0)
    away_hours_used = models.PositiveIntegerField(default=0, db_default=0)
    civil_disorder_at = models.DateTimeField(null=True, blank=True)
    # When the seat's player took it over from another (postal.replace_player; None: they
    # have held it from the start). Their record counts the seat's turns from then on.
    held_since = models.DateTimeField(null=True, blank=True)
    # How the seat is emailed its game's messages (games.community.press), and the latest message a
    # daily digest told it of.
    press_email = models.CharField(
        max_length=10,
        choices=PressEmail.choices,
        default=PressEmail.EACH,
        db_default=PressEmail.EACH,
    )
    press_told = models.PositiveBigIntegerField(default=0, db_default=0)
    # The seat's own language ("": its game's), chosen on its page or set on every seat of
    # a signed-in player by their settings (docs/languages.md).
    language = models.CharField(
        max_length=8, choices=LANGUAGES, blank=True, default="", db_default=""
    )
    # Which of the seat's players holds it: 0 from the start, one more at each new player
    # (postal.replace_player). A private message belongs to the tenures that wrote and
    # received it (``Message.sender_tenure``), never to a later player of the seat.
    tenure = models.PositiveIntegerField(default=0, db_default=0)
    # Whether an order made on the seat's page is answered by a receipt by email too (the
    # page shows it at once): off unless the player turns it on. An order by email always
    # gets one (games.postal.orders).
    web_receipts = models.BooleanField(default=False, db_default=False)
    # Played by a program: set when an order comes with a bot's token (docs/api.md), said
    # wherever the seat is named; a new player of the seat starts without it.
    bot = models.BooleanField(default=False, db_default=False)

    class Meta:
        ordering = ["game", "position"]
        constraints = [
            models.UniqueConstraint(fields=["game", "position"], name="seat_position_unique")
        ]
        # Every seat of a person (their games, their record): addresses compared whatever
        # their case, as ``email__iexact`` does.
        indexes = [models.Index(Upper("email"), name="seat_email_upper")]

    def __str__(self) -> str:
        return f"{self.name} ({self.game})"

    @property
    def zone(self) -> str:
        return self.time_zone or self.game.time_zone

    @property
    def speaks(self) -> str:
        """The language the seat is written to in: its own, else its game's."""
        return self.language or self.game.language


class Handover(models.Model):
    """A player who left a seat to another (postal.replace_player): who, and the time they
    held it, so their record counts the seat as abandoned with the turns they owed then."""

    seat = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="handovers")
    name = models.CharField(max_length=60)
    email = models.EmailField()
    held_since = models.DateTimeField(null=True, blank=True)  # None: from the start
    left_at = models.DateTimeField()

    class Meta:
        ordering = ["seat", "left_at", "id"]
        indexes = [models.Index(Upper("email"), name="handover_email_upper")]

    def __str__(self) -> str:
        return f"{self.name} left {self.seat}"


class SeatLink(models.Model):
    """A magic link of a seat: 32 random bytes, only their SHA-256 is stored. A link is
    valid for its purpose until it expires or the seat's link version moves on (rotation,
    replacement)."""

    class Purpose(models.TextChoices):
        PLAY = "play", "player pages"

    seat = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="links")
    token_hash = models.CharField(max_length=64, unique=True)
    purpose = models.CharField(max_length=20, choices=Purpose.choices)
    link_version = models.PositiveIntegerField()
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.purpose} link of {self.seat}"
