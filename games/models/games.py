"""A game and the settings its GM chooses: how players join, who may watch, what an
absence does, and the templates a GM saves for later games."""

from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.db import models

from games.engines import registry

# The languages players are written to in (settings.LANGUAGES; docs/languages.md).
LANGUAGES = settings.LANGUAGES
ENGLISH = settings.LANGUAGE_CODE


def default_reminders() -> list[int]:
    return [24, 2]


def new_public_id() -> str:
    """The name of a game in public addresses (its dice check): 96 random bits, so that
    nobody can list the games by counting."""
    while (public_id := secrets.token_urlsafe(12)).isdigit():
        continue  # never all digits: those addresses are the old numbered ones
    return public_id


class SignUpMode(models.TextChoices):
    """How players join a game: only by the GM's invitation, or by signing up on the list
    of open games (games.community.signups), seated in the order they confirmed or as the GM
    approves them."""

    CLOSED = "", "only the players I invite"
    FIRST = "first", "open: first come, first seated"
    APPROVE = "approve", "open: I approve each player"


class Publicity(models.TextChoices):
    """Who may watch a game (docs/players.md, "Spectators and the archive")."""

    AUTO = "auto", "Public once finished"
    YES = "yes", "Public now"
    NO = "no", "Never public"


class AbsencePolicy(models.TextChoices):
    """What a player's declared absence does to their turns (games.community.absences)."""

    EXTEND = "extend", "the deadline waits for them (up to the game's cap)"
    DEFAULT = "default", "their turns are played as if missed (extensions kept)"
    AUTOPILOT = "autopilot", "an autopilot plays their turns"


class Game(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft"
        RECRUITING = "recruiting"
        RUNNING = "running"
        PAUSED = "paused"
        FINISHED = "finished"
        ABANDONED = "abandoned"

    engine = models.CharField(max_length=40, choices=registry.choices)
    title = models.CharField(max_length=200)
    public_id = models.CharField(max_length=16, unique=True, default=new_public_id, editable=False)
    options = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.DRAFT)
    gm = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="games_run"
    )
    time_zone = models.CharField(max_length=64, default="UTC")
    schedule = models.JSONField(default=dict)
    early_processing = models.BooleanField(default=True)
    # Dice (DESIGN.md section 6): the seed stays secret until the game is finished.
    seed = models.BinaryField(max_length=32, null=True, blank=True, editable=False)
    commitment = models.CharField(max_length=64, blank=True, editable=False)
    seed_revealed = models.BooleanField(default=False)
    dice_drawn = models.PositiveIntegerField(default=0, editable=False)
    state = models.JSONField(null=True, blank=True, editable=False)
    step_number = models.PositiveIntegerField(default=0)
    needs_gm = models.TextField(blank=True, help_text="Why the game waits for its GM.")
    # Hours before a deadline at which seats that still owe an order are reminded.
    reminders = models.JSONField(default=default_reminders, blank=True)
    # A deadline that would fall in every player's quiet hours moves to the first morning
    # (games.notify.quiet.outside_every_night).
    avoid_nights = models.BooleanField(default=False, db_default=False)
    # Whether programs may play its seats (a bot's token, docs/api.md); open games say so.
    bots_allowed = models.BooleanField(default=False, db_default=False)
    paused_at = models.DateTimeField(null=True, blank=True)
    # The game this one follows ("play again" with the same players).
    previous = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="next_games"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Open games (games.community.signups): how players join, and how many seats the game has.
    signup = models.CharField(
        max_length=10, choices=SignUpMode.choices, blank=True, default="", db_default=""
    )
    seats_wanted = models.PositiveSmallIntegerField(null=True, blank=True)
    # Missed turns and absences (games.community.absences): each seat's automatic extensions (a
    # missed deadline first moves by ``extension_hours``), what a declared absence does
    # and how many hours in all one seat's absences may hold the game, and after how many
    # missed turns in a row a seat falls into civil disorder (0: never).
    extensions = models.PositiveSmallIntegerField(default=0, db_default=0)
    extension_hours = models.PositiveSmallIntegerField(default=24, db_default=24)
    absence_policy = models.CharField(
        max_length=10,
        choices=AbsencePolicy.choices,
        default=AbsencePolicy.EXTEND,
        db_default=AbsencePolicy.EXTEND,
    )
    absence_cap_hours = models.PositiveSmallIntegerField(default=168, db_default=168)
    civil_disorder_after = models.PositiveSmallIntegerField(default=3, db_default=3)
    # A seat in civil disorder is offered on the list of open games for a new player.
    offer_seats = models.BooleanField(default=False, db_default=False)
    # A finished rated game counts in its game's ratings (games.community.ratings).
    rated = models.BooleanField(default=False, db_default=False)
    # When its result went into the ratings (games.community.ratings claims the game with it, so a
    # game counts once); None for a game not (yet) counted.
    rated_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Who may watch the game at /games/<public_id>/ and in the archive (games.records.spectators).
    public = models.CharField(
        max_length=4, choices=Publicity.choices, default=Publicity.AUTO, db_default=Publicity.AUTO
    )
    # A game continued from paper (postal.import_game, docs/records.md): its first
    # ``paper_steps`` steps were entered by its GM from a paper record, and its first
    # ``paper_dice`` draws were rolled by hand (the seed gives every later one).
    paper_steps = models.PositiveIntegerField(default=0, db_default=0, editable=False)
    paper_dice = models.PositiveIntegerField(default=0, db_default=0, editable=False)
    # Players may write private messages to one another (games.community.press); off, every message
    # goes to every seat.
    private_press = models.BooleanField(default=True, db_default=True)
    # The language its players are written to in, unless a seat chose its own
    # (docs/languages.md): set by the GM.
    language = models.CharField(
        max_length=8, choices=LANGUAGES, default=ENGLISH, db_default=ENGLISH
    )

    # Not a column: seat names by position, kept on this instance by a caller that has the
    # seats loaded already (a step's emails, the GM page), so standings read no seat again.
    seat_names: dict[int, str] | None = None
    # Not a column either: the names of the seats played by a bot, kept the same way
    # (games.notify.reports.bot_names).
    bot_names: list[str] | None = None

    class Meta:
        ordering = ["-created_at"]
        # The games whose due steps are resolved (postal.due_steps): running, not waiting
        # for their GM. A join from the due steps reads only these, however many games
        # are paused, abandoned or over.
        indexes = [
            models.Index(
                fields=["id"],
                condition=models.Q(status="running", needs_gm=""),
                name="game_live",
            )
        ]

    def __str__(self) -> str:
        return self.title

    @property
    def rules(self) -> Any:
        return registry.get(self.engine)


# The longest name a GM may give a template of a game's settings.
TEMPLATE_NAME_LENGTH = 200


class GameTemplate(models.Model):
    """A game's settings saved by its GM for later games: the game, its options, its rhythm.
    The new-game form starts from it; players and title are typed each time."""

    gm = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="game_templates"
    )
    name = models.CharField(max_length=TEMPLATE_NAME_LENGTH)
    engine = models.CharField(max_length=40, choices=registry.choices)
    options = models.JSONField(default=dict, blank=True)
    time_zone = models.CharField(max_length=64, default="UTC")
    schedule = models.JSONField(default=dict)
    early_processing = models.BooleanField(default=True)
    language = models.CharField(
        max_length=8, choices=LANGUAGES, default=ENGLISH, db_default=ENGLISH
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["gm", "name"], name="game_template_name_unique")
        ]

    def __str__(self) -> str:
        return self.name
