"""The outbox: every email is a row before it is a message (DESIGN.md section 5)."""

from __future__ import annotations

from django.db import models


class OutboundEmail(models.Model):
    class Delivery(models.TextChoices):
        """What the ESP's tracking webhooks last said of the message (blank: nothing yet)."""

        QUEUED = "queued"
        DELIVERED = "delivered"
        DEFERRED = "deferred"
        BOUNCED = "bounced"
        COMPLAINED = "complained"
        REJECTED = "rejected"

    class State(models.TextChoices):
        PENDING = "pending"
        SENDING = "sending"
        SENT = "sent"
        UNKNOWN = "unknown", "handed over, outcome unknown"
        FAILED = "failed"

    dedupe_key = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=40)
    # The game the email belongs to: its List-Id, and whose GM hears of a failure.
    game = models.ForeignKey(
        "games.Game", on_delete=models.SET_NULL, null=True, blank=True, related_name="emails"
    )
    to = models.EmailField()
    reply_to = models.CharField(max_length=254, blank=True)
    # Emails with the same thread key answer one stable root Message-ID, so mail clients
    # show a game as one conversation.
    thread = models.CharField(max_length=100, blank=True)
    subject = models.CharField(max_length=300)
    text = models.TextField()
    html = models.TextField(blank=True)
    headers = models.JSONField(default=dict, blank=True)
    state = models.CharField(max_length=20, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    # Minted before the first attempt and kept, so that a retry is the same message.
    message_id = models.CharField(max_length=250, blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    # When the current attempt was handed out; it also tells one attempt from the next.
    sending_since = models.DateTimeField(null=True, blank=True)
    # When the current attempt's message was handed to the backend (committed on its own
    # just before the send; cleared by the next claim): a row claimed and never handed
    # over delivered nothing, and is sent again by itself (moderator/mail/sending.py).
    handed_over_at = models.DateTimeField(null=True, blank=True)
    esp_message_id = models.CharField(max_length=200, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    # Files sent with the message: [{"filename", "content", "mimetype"}] (text only).
    attachments = models.JSONField(default=list, blank=True)
    delivery = models.CharField(max_length=20, choices=Delivery.choices, blank=True)
    delivery_detail = models.TextField(blank=True)
    delivery_at = models.DateTimeField(null=True, blank=True)
    # When the body (text, html, attachments) was removed, MAIL_RETENTION_DAYS after the
    # row was written and its sending was over (moderator/mail/pruning.py): the row stays,
    # saying to whom, what and how it went, and can no longer be sent again.
    pruned_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["state", "created_at"], name="outbox_state"),
            models.Index(fields=["state", "next_attempt_at"], name="outbox_due"),
            # The rows whose body is still kept though their sending is over: what pruning
            # looks for, without reading the pruned rows again on every run.
            models.Index(
                fields=["created_at"],
                condition=models.Q(pruned_at__isnull=True, state__in=["sent", "failed", "unknown"]),
                name="outbox_unpruned",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} to {self.to}: {self.subject}"


class DeliveryEvent(models.Model):
    """One tracking event of an ESP, recorded once: a webhook delivered again finds its
    event here and changes nothing."""

    esp = models.CharField(max_length=40)
    event_id = models.CharField(max_length=200)
    event_type = models.CharField(max_length=30)
    email = models.ForeignKey(
        OutboundEmail,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="delivery_events",
    )
    recipient = models.CharField(max_length=254, blank=True)
    detail = models.TextField(blank=True)
    received_at = models.DateTimeField()

    class Meta:
        ordering = ["-received_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["esp", "event_id"], name="delivery_event_once")
        ]

    def __str__(self) -> str:
        return f"{self.esp} {self.event_type} {self.recipient}"


class InboundMessage(models.Model):
    """Every email that reached an inbound webhook, kept before anything is done with it,
    once per Message-ID: a message delivered twice is one row and at most one order.

    The webhook keeps the post as the ESP sent it (``payload``, at most INBOUND_MAX_BYTES)
    and answers at once; a mail worker reads it (``moderator/mail/inbound.py``), and the
    row then names the email (its Message-ID, sender, subject) and what became of it. The
    payload is dropped once it is read."""

    class State(models.TextChoices):
        RECEIVED = "received", "received, not yet handled"
        ORDER = "order", "became an order"
        MESSAGE = "message", "became a message between players"
        COMMAND = "command", "a command by email, answered"
        REJECTED = "rejected", "refused, and the seat told why"
        STOPPED = "stopped", "a one-click unsubscribe, carried out"
        IGNORED = "ignored"
        HELD = "held", "held for the GM"
        NOTE = "note", "no order: passed to the GM"
        DISCARDED = "discarded", "held, then discarded by the GM"

    class Reason(models.TextChoices):
        """Why an email was held, or refused unread (what its player and GM are told)."""

        SENDER = "sender", "from another address than the seat's"
        VERDICT = "verdict", "failed the mail provider's spam or sender checks"
        TOO_LARGE = "too-large", "too large to read"
        TOO_MANY_PARTS = "too-many-parts", "too many parts to read"
        TOO_DEEP = "too-deep", "nested too deeply to read"
        UNREADABLE = "unreadable", "could not be read"

    message_id = models.CharField(max_length=300, unique=True)
    esp = models.CharField(max_length=40)
    recipient = models.CharField(max_length=254, blank=True)
    sender = models.CharField(max_length=254, blank=True)
    subject = models.CharField(max_length=300, blank=True)
    text = models.TextField(blank=True)
    state = models.CharField(max_length=20, choices=State.choices, default=State.RECEIVED)
    note = models.TextField(blank=True)
    order = models.ForeignKey(
        "games.Order", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    received_at = models.DateTimeField()
    # The post as the ESP sent it, until a worker has read it: its body, its content type,
    # its headers (what anymail reads besides the body) and the webhook that took it.
    payload = models.BinaryField(null=True, blank=True, editable=False)
    content_type = models.CharField(max_length=200, blank=True)
    headers = models.JSONField(default=dict, blank=True)
    webhook = models.CharField(max_length=40, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # The seat whose address (order, message or stop) the email was sent to, as the
    # webhook found it; the GM of its game sees the row.
    game = models.ForeignKey(
        "games.Game",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="inbound_messages",
    )
    seat = models.ForeignKey(
        "games.Seat", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # The reply's own words as read (what a held email becomes when the GM releases it),
    # and the message it answers when it was sent to a message's address.
    words = models.TextField(blank=True)
    answered = models.PositiveIntegerField(null=True, blank=True)
    # Why it was held or refused unread (blank otherwise), and, when held, who held the
    # seat then (``Seat.tenure``): a held email is never released as a later player's.
    reason = models.CharField(max_length=20, choices=Reason.choices, blank=True)
    tenure = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-received_at", "-id"]
        indexes = [
            # What the sweep hands to the workers again: posts kept and not yet read.
            models.Index(
                fields=["received_at"],
                condition=models.Q(state="received"),
                name="inbound_unread",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.sender}: {self.subject} ({self.state})"
