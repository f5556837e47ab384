"""The admin of the postal record. Thin and read-only: the admin never writes game state;
its actions call ``games.postal`` like the GM panel does.

GMs are staff users without model permissions. Every admin here lets a staff user view
the records of the games they run (and act on those games), and nothing of anybody
else's: querysets are scoped to ``gm == request.user`` and a change page of another
GM's record answers 404. Superusers see everything.

Sealed data stays sealed (DESIGN.md section 7): a query string may carry only the lookups
the sidebar's filters write, so nobody filters on the seed, a state or an order to learn
them a prefix at a time, and no hand-written lookup reaches the database (where a value of
the wrong type was a 500). Every page loads its rows without the seed; a finished game's
change page reads its seed on its own, to reveal it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import admin, messages
from django.db.models import Model, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html

from games import postal
from games.models import DiceRoll, Event, Game, Order, Seat, SeatLink, Step
from moderator.admin_selection import CheckedSelectionAdmin


def _staff(request: HttpRequest) -> bool:
    return bool(request.user.is_active and request.user.is_staff)


def sealed_columns(game: str, step: str | None = None) -> tuple[str, ...]:
    """The columns a record's pages never load from its game at ``game`` (the seed, and the
    state no list shows) and from its step at ``step`` (the states)."""
    steps = (f"{step}__state_before", f"{step}__state_after") if step else ()
    return (f"{game}__seed", f"{game}__state", *steps)


class GameFilter(admin.RelatedOnlyFieldListFilter):
    """The sidebar's list of the games whose records are listed, loading each game's id and
    title only (the stock filter loads whole rows, the seed among them)."""

    def field_choices(
        self, field: Any, request: HttpRequest, model_admin: admin.ModelAdmin[Any]
    ) -> list[tuple[str, Any]]:
        listed = model_admin.get_queryset(request).values_list(f"{self.field_path}__pk", flat=True)
        games = Game.objects.filter(pk__in=listed).only("id", "title")
        ordering = self.field_admin_ordering(field, request, model_admin)
        return [(str(game.pk), str(game)) for game in games.order_by(*ordering)]


class GameRecordAdmin(CheckedSelectionAdmin):
    """View-only admin of records that belong to a game, scoped to the user's games."""

    gm_lookup = "game__gm"
    # The only lookups a query string may carry: those the sidebar's filters write.
    # Anything else (``?seed__startswith=``, ``?state__contains=``) is refused with 400.
    filter_lookups: frozenset[str] = frozenset()
    # Columns no page of these records loads: ``sealed_columns`` of the related game, which
    # ``list_select_related`` joins for the lists and the change pages alike.
    deferred: tuple[str, ...] = ()

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        records = super().get_queryset(request)
        if isinstance(self.list_select_related, list | tuple):
            records = records.select_related(*self.list_select_related)
        records = records.defer(*self.deferred)
        if request.user.is_superuser:
            return records
        return records.filter(**{self.gm_lookup: request.user.pk})

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest) -> bool:
        # A NUL is refused in a filter's value too: PostgreSQL has no text holding one, and
        # the query would fail (a 500) instead of finding nothing.
        return lookup in self.filter_lookups and "\x00" not in value

    def get_object(
        self, request: HttpRequest, object_id: str, from_field: str | None = None
    ) -> Any:
        # Outside the user's queryset is 404, not the admin's "perhaps it was deleted?"
        # redirect, so that nobody learns which ids exist.
        found = super().get_object(request, object_id, from_field)
        if found is None:
            raise Http404("no such record among your games")
        return found

    def has_module_permission(self, request: HttpRequest) -> bool:
        return _staff(request)

    def has_view_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return _staff(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


def _postal_action(
    description: str, run: Callable[[Game], str]
) -> Callable[[Any, HttpRequest, QuerySet[Game]], None]:
    """An admin action that calls ``run`` (one postal function) for each selected game."""

    @admin.action(description=description, permissions=["change"])
    def action(modeladmin: Any, request: HttpRequest, queryset: QuerySet[Game]) -> None:
        for game in queryset:
            try:
                done = run(game)
            except postal.PostalError as error:
                modeladmin.message_user(request, f"{game}: {error.message}", messages.ERROR)
            else:
                modeladmin.message_user(request, f"{game}: {done}", messages.SUCCESS)

    action.__name__ = run.__name__.lstrip("_")  # the admin tells its actions by name
    return action


def _pause(game: Game) -> str:
    postal.pause(game.pk, now=timezone.now())
    return "paused"


def _resume(game: Game) -> str:
    postal.resume(game.pk, now=timezone.now())
    return "running again"


def _clear(game: Game) -> str:
    postal.clear_needs_gm(game.pk)
    return "cleared; the sweep tries the open step again"


GAME_FIELDS = (
    "title",
    "gm_page",
    "engine",
    "status",
    "gm",
    "options",
    "time_zone",
    "schedule",
    "early_processing",
    "reminders",
    "step_number",
    "needs_gm",
    "commitment",
    "revealed_seed",
    "dice_drawn",
    "state",
    "paused_at",
    "created_at",
    "started_at",
    "finished_at",
)


@admin.register(Game)
class GameAdmin(GameRecordAdmin):
    gm_lookup = "gm"
    list_display = ["title", "engine", "status", "step_number", "gm", "needs_gm", "created_at"]
    list_filter = ["status", "engine"]
    filter_lookups = frozenset({"status__exact", "engine__exact"})
    search_fields = ["title", "seats__email", "seats__name"]
    list_select_related = ["gm"]
    # The change page reads the state when it shows it, and the seed through revealed_seed.
    deferred = ("seed", "state")
    actions = [
        _postal_action("Pause the selected games", _pause),
        _postal_action("Resume the selected games", _resume),
        _postal_action("Clear “needs the GM” of the selected games", _clear),
    ]
    fields = GAME_FIELDS
    readonly_fields = GAME_FIELDS

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        # Change means the postal actions above; every field is read-only.
        return _staff(request)

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        # Nothing to save here: saving would write the whole row, state included.
        hide = {"show_save": False, "show_save_and_continue": False, "show_delete": False}
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), **hide})

    def save_model(self, request: HttpRequest, obj: Game, form: Any, change: bool) -> None:
        """Never writes: every field is read-only and game state changes go through postal."""

    @admin.display(description="GM page")
    def gm_page(self, game: Game) -> str:
        return format_html('<a href="{}">open the GM page</a>', reverse("gm:game", args=[game.pk]))

    @admin.display(description="seed")
    def revealed_seed(self, game: Game) -> str:
        """The dice seed, only once the game is finished (DESIGN.md section 6), read on its
        own: the page's row was loaded without it."""
        if game.status == Game.Status.FINISHED:
            seed = Game.objects.filter(pk=game.pk).values_list("seed", flat=True).get()
            if seed:
                return bytes(seed).hex()
        return "sealed until the game is finished"


@admin.register(Seat)
class SeatAdmin(GameRecordAdmin):
    list_display = ["name", "email", "game", "position", "status", "nmr_count"]
    list_filter = ["status", ("game", GameFilter)]
    filter_lookups = frozenset({"status__exact", "game__id__exact"})
    search_fields = ["name", "email", "game__title"]
    list_select_related = ["game"]
    deferred = sealed_columns("game")
    exclude = ["link_version"]


@admin.register(SeatLink)
class SeatLinkAdmin(GameRecordAdmin):
    gm_lookup = "seat__game__gm"
    list_display = ["seat", "purpose", "link_version", "created_at", "expires_at"]
    list_filter = ["purpose"]
    filter_lookups = frozenset({"purpose__exact"})
    search_fields = ["seat__name", "seat__email", "seat__game__title"]
    list_select_related = ["seat__game"]
    deferred = sealed_columns("seat__game")
    exclude = ["token_hash"]


@admin.register(Step)
class StepAdmin(GameRecordAdmin):
    list_display = ["game", "number", "status", "deadline", "closed_by", "failures"]
    list_filter = ["status", "closed_by", ("game", GameFilter)]
    filter_lookups = frozenset({"status__exact", "closed_by__exact", "game__id__exact"})
    search_fields = ["game__title"]
    list_select_related = ["game"]
    deferred = sealed_columns("game")


@admin.register(Order)
class OrderAdmin(GameRecordAdmin):
    gm_lookup = "step__game__gm"
    list_display = ["step", "seat_name", "canonical", "source", "received_at"]
    list_filter = ["source", ("step__game", GameFilter)]
    filter_lookups = frozenset({"source__exact", "step__game__id__exact"})
    # Not the order's text: a search is a lookup too.
    search_fields = ["seat__name", "seat__email", "step__game__title"]
    # The seat's game too: a seat is named with its game's title.
    list_select_related = ["step__game", "seat__game"]
    deferred = sealed_columns("step__game", "step") + sealed_columns("seat__game")

    @admin.display(description="seat", ordering="seat__name")
    def seat_name(self, order: Order) -> str:
        return order.seat.name


@admin.register(DiceRoll)
class DiceRollAdmin(GameRecordAdmin):
    list_display = ["game", "index", "sides", "value", "step_number", "label", "rolled_back"]
    list_filter = [("game", GameFilter)]
    filter_lookups = frozenset({"game__id__exact"})
    search_fields = ["game__title", "label"]
    # The step's game too: a step is named with its game's title.
    list_select_related = ["game", "step__game"]
    deferred = sealed_columns("game") + sealed_columns("step__game", "step")

    @admin.display(description="step", ordering="step__number")
    def step_number(self, roll: DiceRoll) -> int:
        return roll.step.number


@admin.register(Event)
class EventAdmin(GameRecordAdmin):
    list_display = ["game", "step_number", "text", "audience"]
    list_filter = [("game", GameFilter)]
    filter_lookups = frozenset({"game__id__exact"})
    search_fields = ["game__title", "text"]
    list_select_related = ["game", "step__game"]
    deferred = sealed_columns("game") + sealed_columns("step__game", "step")

    @admin.display(description="step", ordering="step__number")
    def step_number(self, event: Event) -> int:
        return event.step.number
