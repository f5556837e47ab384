"""The play of a game, step by step: each step, the orders that answered it, the dice it
drew, the events it made, and what the GM did."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from games.lib import words
from games.models.games import Game
from games.models.seats import Seat


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
    # When the reminders' sweep looks at this open step next (games.notify.reminders): the
    # first moment a rung of one of its seats may fall due, or its deadline when none can.
    # None: not worked out yet, or something it depends on changed (the deadline, an
    # order withdrawn, a player's ladder, night or address): the next sweep works it out.
    # The sweep reads only the open steps whose moment has come, by the index step_remind.
    remind_at = models.DateTimeField(null=True, blank=True)

    # Not a column: set on a step closed by a conditional order (games.postal.orders), the
    # seat's name and the order played, for the report of the step it opened.
    conditional_played: list[tuple[str, str]] | None = None

    class Meta:
        ordering = ["game", "number"]
        constraints = [
            models.UniqueConstraint(fields=["game", "number"], name="step_number_unique")
        ]
        # Due steps in the order they are claimed (postal._claim_due_step): oldest first.
        indexes = [
            models.Index(fields=["status", "deadline", "id"], name="step_due"),
            models.Index(
                fields=["remind_at"], name="step_remind", condition=models.Q(status="open")
            ),
        ]

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
        API = "api", "through the API"
        CONDITIONAL = "conditional", "the player's conditional order"

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
    # The token a program sent it with (docs/api.md).
    token = models.ForeignKey(
        "games.ApiToken", on_delete=models.SET_NULL, null=True, blank=True, related_name="orders"
    )

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
        BOTS = "bots", "bots allowed or not"

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
