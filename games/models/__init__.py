"""The postal record of a game. Thin models: the only code that changes a game is
``games.postal``; the rules live in ``games.engines``."""

from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models.functions import Upper
from django.utils.translation import gettext_lazy
from django.utils.translation import gettext_lazy as _

from games.engines import registry
from games.lib import words

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


class Reports(models.TextChoices):
    """How often a seat is emailed its step reports (games.notify.email_choices). Whatever the
    choice, the first report, the final standings and every email that is not a step
    report (invitations, links, receipts, refusals, reminders) are sent."""

    EVERY = "every", gettext_lazy("every step")
    OWED = "owed", gettext_lazy("only when I owe an order, with what happened since")
    DIGEST = "digest", gettext_lazy("a daily digest of what happened")
    NONE = "none", gettext_lazy("never: I read them on my seat's page")


class PressEmail(models.TextChoices):
    """How a seat is emailed the messages of its game (games.community.press). The GM's
    announcements come by email whatever the choice."""

    EACH = "each", _("each message, as it comes")
    DIGEST = "digest", _("in my daily digest")
    NONE = "none", _("never: I read them on my page")


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


class Step(models.Model):
    class Status(models.TextChoices):
        # Open until the transaction that resolves it (holding the game's lock) makes it
        # done; nothing between is ever committed.
        OPEN = "open"
        DONE = "done"

    class Closed(models.TextChoices):
        EARLY = "early", "every order was in"
        DEADLINE = "deadline", "the deadline passed"
        GM = "gm", "the GM resolved it"
        ORDER = "order", "an order that takes effect at once"

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="steps")
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.OPEN)
    opened_at = models.DateTimeField()
    deadline = models.DateTimeField(db_index=True)
    prompts = models.JSONField(default=list)
    state_before = models.JSONField()
    state_after = models.JSONField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_by = models.CharField(max_length=20, choices=Closed.choices, blank=True)
    failures = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    # The GM acted on the game while this step was open (a GMAction with its number): its
    # report then reads them, and a step without costs no query for them. A database
    # default too: a process of the release before this column inserts steps without it.
    gm_acted = models.BooleanField(default=False, db_default=False)
    # What a rollback of this step's resolution restores (postal.rollback): the state the
    # resolution started from, the first die it drew and the first event id it could
    # write. Set by postal._resolve only; None for a step closed otherwise.
    resolved_from = models.JSONField(null=True, blank=True)
    # The resolutions of this step the GM rolled back, oldest first: each the range of
    # dice it drew, {"first": index, "count": n}, which a replay skips (docs/records.md).
    rollbacks = models.JSONField(null=True, blank=True)
    # The actual order the host set, which closed this step (postal.set_order, The First
    # Player's rule F-16): the seats in order, written to the record as a move of its own
    # (docs/records.md). None for a step closed otherwise.
    host_order = models.JSONField(null=True, blank=True)
    # In a step where each seat acts at its own pace (a First Player roll), the last order
    # that changed what the step owes: only orders after it answer the step for its early
    # resolution, as a replay counts them (records.Replay). None: every order does.
    answers_after = models.BigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["game", "number"]
        constraints = [
            models.UniqueConstraint(fields=["game", "number"], name="step_number_unique")
        ]
        # Due steps in the order they are claimed (postal._claim_due_step): oldest first.
        indexes = [models.Index(fields=["status", "deadline", "id"], name="step_due")]

    def __str__(self) -> str:
        return f"{self.game} step {self.number}"

    @property
    def prompted_seats(self) -> list[int]:
        return sorted({prompt["seat"] for prompt in self.prompts})


class Order(models.Model):
    class Source(models.TextChoices):
        WEB = "web"
        EMAIL = "email"
        GM = "gm"
        DEFAULT = "default", "no moves received"
        AUTOPILOT = "autopilot", "the player's autopilot"
        REPLAY = "replay"
        PAPER = "paper", "entered from a paper record"

    step = models.ForeignKey(Step, on_delete=models.CASCADE, related_name="orders")
    seat = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="orders")
    text = models.TextField(help_text="As typed.")
    parsed = models.JSONField()
    canonical = models.TextField()
    source = models.CharField(max_length=20, choices=Source.choices)
    received_at = models.DateTimeField()
    # An accepted order is owed a receipt by email. The order's transaction writes only
    # this mark; a worker writes the email afterwards and clears it in the same
    # transaction (postal.write_receipts), and the sweep hands out marks whose task was
    # lost. ``results``: what the order did at once, as its seat may see it (the receipt
    # lists it); empty for a sealed order.
    receipt_due = models.BooleanField(default=False)
    results = models.JSONField(default=list, blank=True)
    # The lines of an emailed order after the order that its game reads as no order (a
    # sign-off: "Thanks,", "Ann"): left out of ``text``, and named in the receipt. A
    # database default too: a process of the release before this column (a worker still
    # running during an upgrade) inserts orders without it.
    ignored = models.TextField(blank=True, default="", db_default="")
    # The attachments of an emailed order, by name, that were not kept (orders are read
    # from the text alone): the receipt says so.
    dropped = models.TextField(blank=True, default="", db_default="")
    # When a receipt naming this order was written: a seat's receipts for a step are
    # coalesced to one per RECEIPT_WINDOW_SECONDS (postal.write_receipts).
    receipt_at = models.DateTimeField(null=True, blank=True)

    # Not a field: set on the order ``postal.accept_order`` returns when the order repeated
    # the one that counts, and nothing was written.
    repeated = False
    # Not a field either: set by ``postal.accept_order`` on an order written for a step that
    # was resolved while the player's page was open and taken for the step open now: what
    # moved the game on, in the player's words.
    carried_over: str | None = None

    class Meta:
        ordering = ["step", "received_at", "id"]
        indexes = [
            models.Index(
                fields=["id"], condition=models.Q(receipt_due=True), name="order_receipt_due"
            )
        ]

    def __str__(self) -> str:
        return f"{self.seat.name}: {self.canonical}"


class DiceRoll(models.Model):
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="dice_rolls")
    index = models.PositiveIntegerField()
    sides = models.PositiveSmallIntegerField()
    value = models.PositiveSmallIntegerField()
    step = models.ForeignKey(Step, on_delete=models.CASCADE, related_name="dice_rolls")
    label = models.CharField(max_length=80, blank=True)
    # Drawn by a resolution the GM rolled back (postal.rollback): kept, and verified, but
    # no longer part of the game.
    rolled_back = models.BooleanField(default=False, db_default=False)

    class Meta:
        ordering = ["game", "index"]
        constraints = [
            models.UniqueConstraint(fields=["game", "index"], name="dice_roll_index_unique")
        ]

    def __str__(self) -> str:
        return f"#{self.index} d{self.sides}={self.value}"


class Event(models.Model):
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="events")
    step = models.ForeignKey(Step, on_delete=models.CASCADE, related_name="events")
    text = models.TextField()
    # None: public; else the seat positions that may see it.
    audience = models.JSONField(null=True, blank=True)
    # How an engine made ``text``, to say it in the reader's language (games.lib.words); None
    # for words that are English only.
    message = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["game", "step", "id"]

    def __str__(self) -> str:
        return self.text

    def visible_to(self, position: int | None) -> bool:
        return self.audience is None or (position is not None and position in self.audience)


# The longest reason a GM may give for an action (it is one line on the players' pages).
GM_REASON_LENGTH = 300


class GMAction(models.Model):
    """One thing the GM did to a game, as the players are told of it (docs/players.md,
    "The GM's log"): written by the ``games.postal`` function that did it, in the same
    transaction. ``words`` say what was done in the players' terms and never hold hidden
    information (an order the GM entered is named, not quoted); ``reason`` is the GM's own,
    optional. ``step_number``: the game's step when it was done. ``message``: how the words
    were made (games.engines.text), to say them in each reader's language (``said``); None
    for an action logged before."""

    class Kind(models.TextChoices):
        DEADLINE = "deadline", "deadline moved"
        ORDER = "order", "order entered for a seat"
        HOST_ORDER = "host-order", "actual order set"
        REPLACE = "replace", "player replaced"
        RESOLVE = "resolve", "step resolved early"
        PAUSE = "pause", "game paused"
        RESUME = "resume", "game resumed"
        ROLLBACK = "rollback", "step rolled back"
        IMPORT = "import", "game continued from paper"
        HIDE = "hide-message", "message hidden"
        PRESS = "press", "private messages turned on or off"

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="gm_actions")
    step_number = models.PositiveIntegerField()
    kind = models.CharField(max_length=20, choices=Kind.choices)
    words = models.TextField()
    message = models.JSONField(null=True, blank=True)
    reason = models.CharField(max_length=GM_REASON_LENGTH, blank=True)
    at = models.DateTimeField()
    gm = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="gm_actions",
    )

    class Meta:
        ordering = ["game", "id"]

    def __str__(self) -> str:
        return self.words

    @property
    def said(self) -> str:
        """The words in the language active where they are shown."""
        return words.Said(self.words, self.message)


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


class EmailPreference(models.Model):
    """How a player (an email address, normalised: ``email_choices.normalise``, across
    all their games) wants email: reminders one per game and deadline, or in one daily
    digest at ``hour`` in ``time_zone``, or none (``no_reminders``); and ``reports``, the
    choice new seats of the address start with ("": each game's own default). A later
    account owns this row.

    ``digest_day``: the local day of the latest daily digest of reports, claimed by the
    task that writes it (``email_choices.send_daily_digests``)."""

    email = models.EmailField(unique=True)
    digest = models.BooleanField(default=False)
    no_reminders = models.BooleanField(default=False, db_default=False)
    hour = models.PositiveSmallIntegerField(default=8)
    time_zone = models.CharField(max_length=64, default="UTC")
    reports = models.CharField(max_length=10, choices=Reports.choices, blank=True)
    digest_day = models.DateField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        if self.no_reminders:
            return f"{self.email}: no reminders"
        return f"{self.email}: {'digest' if self.digest else 'each reminder'}"


# --- players: people who sign in by email ------------------------------------------------


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
        UNCONFIRMED = "unconfirmed", gettext_lazy("waiting for the email confirmation")
        WAITING = "waiting", gettext_lazy("on the waiting list")
        ACCEPTED = "accepted", gettext_lazy("has a seat")
        WITHDRAWN = "withdrawn", gettext_lazy("withdrawn")
        DECLINED = "declined", gettext_lazy("declined by the GM")

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


class Webhook(models.Model):
    """Where a game's public events are posted (docs/webhooks.md): set by the game's GM,
    or by a campaign's host for every game of its league. Exactly one of ``game`` and
    ``campaign``. The URL may hold a secret (Discord's and Slack's do): it is never
    logged, and pages show its host only."""

    class Format(models.TextChoices):
        JSON = "json", "JSON (our versioned format)"
        DISCORD = "discord", "Discord"
        SLACK = "slack", "Slack"

    game = models.OneToOneField(
        Game, on_delete=models.CASCADE, null=True, blank=True, related_name="webhook"
    )
    campaign = models.OneToOneField(
        "campaigns.Campaign",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="webhook",
    )
    url = models.URLField(max_length=500)
    format = models.CharField(max_length=10, choices=Format.choices, default=Format.JSON)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(game__isnull=True, campaign__isnull=False)
                | models.Q(game__isnull=False, campaign__isnull=True),
                name="webhook_of_game_or_campaign",
            )
        ]

    def __str__(self) -> str:
        return f"webhook {self.pk} ({self.format})"


class WebhookDelivery(models.Model):
    """One event posted to one webhook, once: the dedupe key names the event and the
    webhook. Written in the transaction of the event, posted after it commits."""

    class State(models.TextChoices):
        PENDING = "pending"
        SENDING = "sending"
        SENT = "sent"
        FAILED = "failed"

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    # The game whose event it is (a campaign's webhook hears of each of its games).
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="webhook_deliveries")
    dedupe_key = models.CharField(max_length=200, unique=True)
    event = models.CharField(max_length=40)
    # The event in our versioned format (docs/webhooks.md); a Discord or Slack webhook
    # gets its summary in words, made when it is posted.
    payload = models.JSONField()
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    sending_since = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["state", "next_attempt_at"], name="webhook_due")]

    def __str__(self) -> str:
        return f"{self.event} to webhook {self.webhook_id}: {self.state}"
