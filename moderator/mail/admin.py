"""The outbox in the admin: read-only, for finding out what was sent to whom and why it
failed. A staff GM sees the emails of the games they run; emails of no game, and those of
other GMs' games, only superusers see."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Model, QuerySet
from django.http import Http404, HttpRequest

from moderator.mail.models import OutboundEmail


@admin.register(OutboundEmail)
class OutboundEmailAdmin(admin.ModelAdmin):
    list_display = ["created_at", "kind", "to", "subject", "state", "attempts", "sent_at"]
    list_filter = ["state", "kind"]
    search_fields = ["to", "subject", "dedupe_key"]
    list_select_related = ["game"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[OutboundEmail]:
        emails = super().get_queryset(request)
        if request.user.is_superuser:
            return emails
        return emails.filter(game__gm=request.user.pk)

    def get_object(
        self, request: HttpRequest, object_id: str, from_field: str | None = None
    ) -> OutboundEmail:
        found = super().get_object(request, object_id, from_field)
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
