"""The outbox in the admin: read-only, for finding out what was sent to whom and why it
failed. A staff GM sees the emails of the games they run; emails of no game, and those of
other GMs' games, only superusers see.

A query string may carry only the lookups of the sidebar's filters and the GM page's link
to a game's emails: nobody filters on a body (a player's link is in it) or on the game's
sealed seed, and no hand-written lookup reaches the database.

A GM reads their players' emails here, and an admin everyone's: the body, the reply
address and the headers are shown masked (``masking``), so that no link or address shown
opens a seat, orders for it or signs its player in."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Model, QuerySet
from django.http import Http404, HttpRequest

from moderator.admin_selection import CheckedSelectionAdmin
from moderator.mail.masking import mask, mask_json
from moderator.mail.models import OutboundEmail

# The fields that may hold a recipient's secrets, shown through ``masking`` only.
MASKED = {
    "reply_to": "reply_to_shown",
    "text": "text_shown",
    "html": "html_shown",
    "headers": "headers_shown",
    "attachments": "attachments_shown",
}


@admin.register(OutboundEmail)
class OutboundEmailAdmin(CheckedSelectionAdmin):
    list_display = ["created_at", "kind", "to", "subject", "state", "attempts", "sent_at"]
    list_filter = ["state", "kind"]
    # The kind filter writes ``kind`` (every value of a field without choices); links
    # written by hand say ``kind__exact``; the GM page links to a game's older emails.
    filter_lookups = frozenset({"state__exact", "kind", "kind__exact", "game__id__exact"})
    search_fields = ["to", "subject", "dedupe_key"]
    list_select_related = ["game"]
    readonly_fields = list(MASKED.values())
    fields = [
        MASKED.get(field.name, field.name)
        for field in OutboundEmail._meta.concrete_fields
        if field.name != "id"
    ]

    @admin.display(description="reply to")
    def reply_to_shown(self, email: OutboundEmail) -> str:
        return mask(email.reply_to, email.kind)

    @admin.display(description="text")
    def text_shown(self, email: OutboundEmail) -> str:
        return mask(email.text, email.kind)

    @admin.display(description="html")
    def html_shown(self, email: OutboundEmail) -> str:
        return mask(email.html, email.kind)

    @admin.display(description="headers")
    def headers_shown(self, email: OutboundEmail) -> str:
        return mask_json(email.headers, email.kind)

    @admin.display(description="attachments")
    def attachments_shown(self, email: OutboundEmail) -> str:
        return mask_json(email.attachments, email.kind)

    def get_queryset(self, request: HttpRequest) -> QuerySet[OutboundEmail]:
        # The change page names the email's game: joined, without its sealed seed and its
        # state (games.admin.sealed_columns; this app does not import the games app).
        emails = super().get_queryset(request).select_related("game")
        emails = emails.defer("game__seed", "game__state")
        if request.user.is_superuser:
            return emails
        return emails.filter(game__gm=request.user.pk)

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest) -> bool:
        # As games.admin.GameRecordAdmin: a NUL would fail in PostgreSQL (a 500).
        return lookup in self.filter_lookups and "\x00" not in value

    def get_object(
        self, request: HttpRequest, object_id: str, from_field: str | None = None
    ) -> OutboundEmail:
        found: OutboundEmail | None = super().get_object(request, object_id, from_field)
        if found is None:
            raise Http404("no such email among your games")
        return found

    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_active and request.user.is_staff)

    def has_view_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return bool(request.user.is_active and request.user.is_staff)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
