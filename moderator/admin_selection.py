"""The rows an admin action is asked to act on, checked before the action runs.

Django's changelist filters its rows by the posted ``_selected_action`` values as they
come: ``abc`` (or a number past bigint) raised in the database (a 500), and ``٣`` was
taken as row 3. A selection must name rows as the list writes them (for a number:
ASCII digits, moderator.numbers), else nothing is done and the list says why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import ValidationError
from django.db import models
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect

from moderator.numbers import whole_number

# The largest primary key: PostgreSQL's bigint.
MOST_ID = 2**63 - 1


if TYPE_CHECKING:
    # The stubs' ModelAdmin is generic in its model; Django's class takes no parameters.
    ModelAdmin = admin.ModelAdmin[Any]
else:
    ModelAdmin = admin.ModelAdmin


class CheckedSelectionAdmin(ModelAdmin):
    """The project's ModelAdmin: an action posted with a selection that names no row of
    the list (not a primary key) changes nothing and says so on the list."""

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        if request.method == "POST" and "_save" not in request.POST:
            unreadable = [
                value
                for value in request.POST.getlist(helpers.ACTION_CHECKBOX_NAME)
                if not self._is_key(value)
            ]
            if unreadable:
                shown = unreadable[0][:40]
                self.message_user(
                    request,
                    f"The selection holds {shown!r}, which is no row of this list: nothing "
                    "was done. Tick the rows in the list, then choose the action again.",
                    messages.ERROR,
                )
                return HttpResponseRedirect(request.get_full_path())
        return super().changelist_view(request, extra_context)

    def _is_key(self, value: str) -> bool:
        key = self.model._meta.pk
        if isinstance(key, models.IntegerField):
            return whole_number(value, most=MOST_ID) is not None and value == value.strip()
        try:
            key.to_python(value)
        except ValidationError:
            return False
        return "\x00" not in value
