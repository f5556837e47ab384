"""Order forms. Every form writes the plain order text, which goes through the same parser
and the same checks as an emailed order (rules/README.md, "Web form").

This module holds what every game's form shares. A game with a form of its own keeps it in
``games/forms/<game>.py`` and names it in its registry line; a game without one gets the menu
of its legal orders (when its engine has ``candidates``) or the quick-entry text box alone.
Each form is rendered by ``games/<engine key>/form.html``, else the shared
``games/default/menu.html`` or ``games/default/form.html``.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Callable
from datetime import time
from typing import Any

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.module_loading import import_string
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext, gettext_lazy, pgettext_lazy

from games.engines import registry
from games.engines.base import Engine, OrderError
from games.lib import words
from games.notify import email_choices, ladder, languages, reminders

BLOCKS = "blocks"
TEXT = "text"
MENU = "menu"


class OrderForm(forms.Form):
    """The part every order form shares: the step it was written for, which entry was
    used, and the quick-entry box that takes the order syntax as typed."""

    step = forms.IntegerField(widget=forms.HiddenInput, min_value=1)
    entry = forms.ChoiceField(
        choices=[(BLOCKS, BLOCKS), (TEXT, TEXT), (MENU, MENU)],
        widget=forms.HiddenInput,
        initial=TEXT,
    )
    text = forms.CharField(
        required=False,
        label=gettext_lazy("Type your order"),
        widget=forms.Textarea(attrs={"rows": 4, "autocapitalize": "none", "spellcheck": "false"}),
        max_length=5000,
    )

    def __init__(
        self,
        data: Any = None,
        *,
        engine: Engine[Any, Any, Any] | None = None,
        state: Any,
        position: int,
        step_number: int,
        current: str = "",
    ) -> None:
        super().__init__(data, initial={"step": step_number, "text": current})
        self.engine = engine
        self.state = state
        self.position = position

    @classmethod
    def page_context(cls, view: dict[str, Any]) -> dict[str, Any]:
        """What the game's page templates need beyond the seat's ``view`` (a drawing of the
        board, say); shown on the player page whether or not the seat owes an order."""
        return {}

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if cleaned.get("entry", TEXT) == TEXT and not (cleaned.get("text") or "").strip():
            self.add_error("text", gettext_lazy("Write your order in the box first."))
        return cleaned

    def order_text(self) -> str:
        """The order as plain text; only after ``is_valid()``."""
        return str(self.cleaned_data["text"])

    def add_order_error(self, message: str) -> None:
        """Show the postal layer's rejection where the player will look for it."""
        if self.cleaned_data.get("entry") == TEXT:
            self.add_error("text", message)
        else:
            self.add_error(None, message)


def typed_order(data: Any) -> str | None:
    """The order of a post of the typed-order box (entry "text") that passes the checks
    every order form makes of that entry, else None. Reading it needs nothing of the game,
    so the view hands it to the postal layer before it builds anything of the page."""
    # The form's own fields, each cleaned as the form cleans it, and its clean(): what
    # OrderForm(data).is_valid() decides, without building a form (a deep copy of its
    # fields) for every order.
    fields = OrderForm.base_fields
    try:
        cleaned = {
            name: field.clean(field.widget.value_from_datadict(data, {}, name))
            for name, field in fields.items()
        }
    except ValidationError:
        return None
    if cleaned["entry"] != TEXT or not (cleaned["text"] or "").strip():
        return None
    return str(cleaned["text"])


class _ProbeLimit(Exception):
    """A probed order drew more dice than the probe lends: accepted as far as it went."""


class _ProbeDice:
    """Dice for trying an order on a copy of the state: 1, 2, 3, ... by turns, so that
    re-rolls of ties end. Engines check an order before they draw, so an order they refuse
    is refused before any die; one that needs more than a few hundred dice was accepted."""

    LIMIT = 500

    def __init__(self) -> None:
        self.drawn = 0

    def draw(self, sides: int) -> int:
        self.drawn += 1
        if self.drawn > self.LIMIT:
            raise _ProbeLimit
        return (self.drawn - 1) % sides + 1


def probe(engine: Any, state: Any, position: int, text: str) -> bool:
    """Whether the engine takes order ``text`` of ``position`` now. Engines are pure, so
    trying an order on the state changes nothing."""
    try:
        engine.submit(state, position, engine.parse(state, position, text), _ProbeDice())
    except OrderError:
        return False
    except _ProbeLimit:
        pass  # it drew a few hundred dice without a refusal: legal
    return True


def legal_choices(
    engine: Any,
    state: Any,
    position: int,
    complete: Callable[[str], str] = str,
    keep: Callable[[str], bool] = bool,
) -> list[tuple[str, str]]:
    """The engine's candidate one-line orders for ``position`` now (``engine.candidates``)
    that the engine itself accepts, as (order text, label); ``complete(text)`` is the order
    tried for a candidate when the form adds to it (a field of its own); ``keep(text)``
    says which candidates the menu offers at all (the others have controls of their own)."""
    return [
        (text, label)
        for text, label in engine.candidates(state, position)
        if keep(text) and probe(engine, state, position, complete(text))
    ]


class MenuOrderForm(OrderForm):
    """Games whose orders are mostly one line: a menu of exactly the legal orders now (a
    button each when there are few, else a select), next to the quick-entry box."""

    BUTTONS = 12

    def __init__(
        self,
        data: Any = None,
        *,
        engine: Engine[Any, Any, Any] | None = None,
        state: Any,
        position: int,
        step_number: int,
        current: str = "",
    ) -> None:
        if data is not None and data.get("pick_button"):
            # A button of the menu (or a cell of a board) was pressed: it names the order,
            # whatever the select next to it says.
            data = data.copy()
            data["pick"] = data["pick_button"]
        super().__init__(
            data,
            engine=engine,
            state=state,
            position=position,
            step_number=step_number,
            current=current,
        )
        # Each label said in the language of the page (games.lib.words; as it is in English).
        self.menu: list[tuple[str, str]] = words.shown(_menu(type(self), engine, state, position))
        # A text checked against the menu (clean_pick), not a ChoiceField: its choices
        # would be copied and normalised on every page, and a menu may offer hundreds of
        # bids; menu_options writes them.
        self.fields["pick"] = forms.CharField(
            label=gettext_lazy("Your order"), required=False, strip=False
        )
        self.fields["confirm"] = forms.BooleanField(required=False)
        # (order, what the player ticks) when the pick waits for the player's confirmation.
        self.confirming: tuple[str, str] | None = None

    @classmethod
    def legal_menu(cls, engine: Any, state: Any, position: int) -> list[tuple[str, str]]:
        """The menu's orders: the legal ones now. A pure function of its arguments (the
        menu is kept for each state, ``_menu``)."""
        return legal_choices(engine, state, position)

    @property
    def buttons(self) -> bool:
        return 0 < len(self.menu) <= self.BUTTONS

    @property
    def menu_options(self) -> SafeString:
        """The menu's ``<option>`` elements, the chosen one selected, as ``{{ form.pick }}``
        writes them, in one go: the select widget renders a template per option, and a
        menu may offer hundreds of bids (games/default/pick.html)."""
        value = self["pick"].value()
        chosen = "" if value is None else str(value)
        return mark_safe(  # every text and label escaped here
            "\n".join(
                f'<option value="{html.escape(text)}"{" selected" if text == chosen else ""}>'
                f"{html.escape(str(label))}</option>"
                for text, label in [("", gettext("choose…")), *self.menu]
            )
        )

    def _confirmation(self, text: str) -> str | None:
        """What the player ticks before ``text`` is sent from the menu (the engine's
        ``confirmation``: a once-a-game order), else None."""
        confirm = getattr(self.engine, "confirmation", None)
        label = None if confirm is None else confirm(self.state, self.position, text)
        return None if label is None else words.Said(label)

    @property
    def asks_first(self) -> bool:
        """Whether an order of the menu waits for the player's confirmation."""
        return any(self._confirmation(text) is not None for text, _ in self.menu)

    def clean_pick(self) -> str:
        pick = str(self.cleaned_data["pick"])
        if pick and pick not in {text for text, _ in self.menu}:
            raise ValidationError(
                gettext_lazy(
                    "That order is not one of the legal ones now: choose one from the menu."
                ),
                code="invalid_choice",
            )
        return pick

    def clean(self) -> dict[str, Any]:
        if self.data.get("entry") != MENU:
            return super().clean()
        cleaned = forms.Form.clean(self) or {}
        pick = cleaned.get("pick")
        if not pick and "pick" not in self.errors:
            self.add_error("pick", gettext_lazy("Choose your order first."))
        elif pick and not cleaned.get("confirm"):
            label = self._confirmation(pick)
            if label is not None:
                # A once-a-game order is never sent by one tap: the page asks first.
                self.confirming = (pick, label)
                self.add_error(
                    "pick",
                    gettext(
                        "%(order)s is not sent yet: it can be given once a game. Confirm it below."
                    )
                    % {"order": pick},
                )
        return cleaned

    def order_text(self) -> str:
        if self.cleaned_data.get("entry") == MENU:
            return str(self.cleaned_data["pick"])
        return super().order_text()

    def add_order_error(self, message: str) -> None:
        if self.cleaned_data.get("entry") == MENU:
            self.add_error("pick", message)
        else:
            super().add_order_error(message)


# The menus of the latest states each process has shown: a seat's page is opened again and
# again while its step is open (by its player, by the seats a browser holds), and trying
# every candidate order on the state costs more than the rest of the page.
MENUS_KEPT = 64


@functools.lru_cache(maxsize=MENUS_KEPT)
def _kept_menu(
    form: type[MenuOrderForm], engine: Any, state: Any, position: int
) -> tuple[tuple[str, str], ...]:
    return tuple(form.legal_menu(engine, state, position))


def _menu(
    form: type[MenuOrderForm], engine: Any, state: Any, position: int
) -> list[tuple[str, str]]:
    """The legal menu of ``form`` for ``position`` in ``state``. Engines are pure and
    their states frozen values, so the menu of an equal state is the same menu: it is
    kept (``MENUS_KEPT`` of them), unless the state cannot be a key (a field that is not
    hashable), when it is worked out each time."""
    try:
        return list(_kept_menu(form, engine, state, position))
    except TypeError:
        return form.legal_menu(engine, state, position)


def _has_menu(engine_key: str) -> bool:
    return hasattr(registry.get(engine_key), "candidates")


def form_class(engine_key: str) -> type[OrderForm]:
    """The order form the game's registry line names, else the shared one that fits."""
    path = registry.FORMS.get(engine_key)
    if path is not None:
        form: type[OrderForm] = import_string(path)
        return form
    return MenuOrderForm if _has_menu(engine_key) else OrderForm


def form_templates(engine_key: str) -> list[str]:
    """Template names for ``{% include %}``: the game's own form first, then the shared one."""
    shared = "menu" if issubclass(form_class(engine_key), MenuOrderForm) else "form"
    return [f"games/{engine_key}/form.html", f"games/default/{shared}.html"]


class ReminderChoiceForm(forms.Form):
    """One email per reminder, or one digest a day at an hour of the player's zone."""

    digest = forms.ChoiceField(
        label=gettext_lazy("Reminders"),
        choices=[
            (reminders.EACH, gettext_lazy("one email per game, before each deadline")),
            (reminders.DIGEST, gettext_lazy("one daily digest for all my games")),
            (reminders.NONE, gettext_lazy("none: deadlines pass without a reminder")),
        ],
        widget=forms.RadioSelect,
    )
    hour = forms.TypedChoiceField(
        label=gettext_lazy("Digest at"),
        choices=[(str(hour), f"{hour:02d}:00") for hour in range(24)],
        coerce=int,
        initial="8",
    )


def _clock(value: str) -> time:
    return time.fromisoformat(value)


QUIET_HOURS = [(f"{hour:02d}:00", f"{hour:02d}:00") for hour in range(24)]


class QuietHoursForm(forms.Form):
    """A player's night (games.notify.quiet): no reminder from ``start`` to ``end`` (the
    next morning when it is earlier), in their zone; ``quiet`` unticked: none."""

    quiet = forms.BooleanField(
        required=False, label=gettext_lazy("Quiet hours: no reminder in my night")
    )
    start = forms.TypedChoiceField(
        label=gettext_lazy("From"), choices=QUIET_HOURS, coerce=_clock, initial="22:00"
    )
    end = forms.TypedChoiceField(
        label=gettext_lazy("until"), choices=QUIET_HOURS, coerce=_clock, initial="07:00"
    )

    def clean(self) -> dict[str, Any] | None:
        data = super().clean()
        if data and data.get("quiet") and data.get("start") == data.get("end"):
            raise ValidationError(
                gettext_lazy("The night must end at another hour than it starts.")
            )
        return data


class LadderForm(forms.Form):
    """A reminder ladder (games.notify.ladder): up to ``ladder.MOST_RUNGS`` rungs, each a
    channel and a time before the deadline, for this seat or all the address's seats."""

    scope = forms.ChoiceField(
        label=gettext_lazy("For"),
        choices=[
            ("all", gettext_lazy("all my seats, in every game")),
            ("seat", gettext_lazy("this seat only")),
        ],
        widget=forms.RadioSelect,
        initial="all",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        channels = [("", gettext_lazy("(no rung)")), *ladder.CHANNELS.items()]
        hours = [("", "—"), *((f"{hours:g}", ladder.before(hours)) for hours in ladder.HOURS)]
        for index in range(ladder.MOST_RUNGS):
            self.fields[f"channel_{index}"] = forms.ChoiceField(
                label=gettext_lazy("Rung %(number)d") % {"number": index + 1},
                choices=channels,
                required=False,
            )
            self.fields[f"hours_{index}"] = forms.TypedChoiceField(
                label=gettext_lazy("when"),
                choices=hours,
                coerce=float,
                required=False,
                empty_value=None,
            )

    def rung_fields(self) -> list[tuple[forms.BoundField, forms.BoundField]]:
        return [(self[f"channel_{i}"], self[f"hours_{i}"]) for i in range(ladder.MOST_RUNGS)]

    def rungs(self) -> list[ladder.Rung]:
        """The rungs chosen, once the form is valid."""
        data = self.cleaned_data
        return [
            ladder.Rung(ladder.whole(data[f"hours_{i}"]), data[f"channel_{i}"])
            for i in range(ladder.MOST_RUNGS)
            if data.get(f"channel_{i}") and data.get(f"hours_{i}") is not None
        ]

    def clean(self) -> dict[str, Any] | None:
        data = super().clean()
        for index in range(ladder.MOST_RUNGS):
            if data and data.get(f"channel_{index}") and data.get(f"hours_{index}") is None:
                raise ValidationError(gettext_lazy("Choose when each rung comes."))
        return data


def ladder_initial(rungs: list[ladder.Rung], scope: str) -> dict[str, Any]:
    initial: dict[str, Any] = {"scope": "seat" if scope == "seat" else "all"}
    for index, rung in enumerate(rungs[: ladder.MOST_RUNGS]):
        initial[f"channel_{index}"] = rung.channel
        initial[f"hours_{index}"] = f"{rung.hours:g}"
    return initial


class EmailChoiceForm(forms.Form):
    """How often a seat gets its step reports (``games.notify.email_choices``) and whether
    the orders made on its page are answered by a receipt by email, for this seat or for
    every seat of the player's address."""

    reports = forms.ChoiceField(
        label=gettext_lazy("Email me this game's reports"),
        choices=email_choices.offered(email_choices.ACROSS_GAMES),
        widget=forms.RadioSelect,
        error_messages={
            "required": gettext_lazy("Choose how often you want email about this game."),
            "invalid_choice": gettext_lazy("Choose one of the ways to get email about this game."),
        },
    )
    web_receipts = forms.BooleanField(
        label=gettext_lazy("Email me a receipt of each order I make on this page too"),
        required=False,
    )
    scope = forms.ChoiceField(
        label=pgettext_lazy("for whom", "For"),
        choices=[
            (email_choices.THIS_SEAT, gettext_lazy("this seat only")),
            (
                email_choices.ALL_SEATS,
                gettext_lazy("all my seats, in every game, and the games I join later"),
            ),
        ],
        initial=email_choices.THIS_SEAT,
        widget=forms.RadioSelect,
        error_messages={
            "required": gettext_lazy(
                "Choose whether this is for this seat only or for all your seats."
            ),
            "invalid_choice": gettext_lazy(
                "Choose whether this is for this seat only or for all your seats."
            ),
        },
    )

    def __init__(
        self, *args: Any, step_word: str = email_choices.ACROSS_GAMES, **kwargs: Any
    ) -> None:
        """``step_word``: what the seat's game calls a step, for "every postal turn"."""
        super().__init__(*args, **kwargs)
        reports = self.fields["reports"]
        assert isinstance(reports, forms.ChoiceField)
        reports.choices = email_choices.offered(step_word)


class AutopilotForm(forms.Form):
    """What plays a seat's turn when its player misses a deadline: the game's NMR default
    or one of the autopilots its engine offers (``games.engines.base.Strategy``). It reads
    the player's choice; the seat page writes the choices itself, with each autopilot's
    summary (``templates/games/play.html``)."""

    autopilot = forms.ChoiceField(
        label=gettext_lazy("When I miss a deadline"),
        widget=forms.RadioSelect,
        required=False,
        error_messages={
            "invalid_choice": gettext_lazy("Choose the game's default or one of its autopilots.")
        },
    )

    def __init__(self, *args: Any, engine_key: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["autopilot"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [
            ("", gettext_lazy("the game's no-moves-received default plays")),
            *((strategy.key, strategy.title) for strategy in registry.strategies(engine_key)),
        ]


class AbsenceForm(forms.Form):
    """A player away from one day to another, both included, in their time zone."""

    first_day = forms.DateField(
        label=gettext_lazy("Away from"),
        widget=forms.DateInput(attrs={"type": "date"}),
        error_messages={
            "required": gettext_lazy("Give the first day you are away."),
            "invalid": gettext_lazy("Write the first day as a date, for example 2026-12-24."),
        },
    )
    last_day = forms.DateField(
        label=gettext_lazy("Away until"),
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text=gettext_lazy("the last day you are away, included"),
        error_messages={
            "required": gettext_lazy("Give the last day you are away."),
            "invalid": gettext_lazy("Write the last day as a date, for example 2026-12-31."),
        },
    )
    scope = forms.ChoiceField(
        label=pgettext_lazy("for whom", "For"),
        initial="all",
        widget=forms.RadioSelect,
        error_messages={
            "required": gettext_lazy(
                "Choose whether you are away from one game or from all your games."
            ),
            "invalid_choice": gettext_lazy(
                "Choose whether you are away from one game or from all your games."
            ),
        },
    )

    def __init__(self, *args: Any, games: list[tuple[str, str]], **kwargs: Any) -> None:
        """``games``: (value, words) of each game the player may be away from alone; the
        form's ``scope`` is one of them or "all"."""
        super().__init__(*args, **kwargs)
        field = self.fields["scope"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [*games, ("all", gettext_lazy("all my games"))]


class LostLinksForm(forms.Form):
    """The home page's "email me my links": one address."""

    email = forms.EmailField(
        label=gettext_lazy("Your email address"),
        max_length=254,
        error_messages={
            "required": gettext_lazy("Write the email address your GM invited you with."),
            "invalid": gettext_lazy("That is not an email address: write it as name@example.org."),
        },
    )


class LanguageForm(forms.Form):
    """The language of a seat's page and emails (docs/languages.md): one of its own, or
    "" for its game's. Each language is named in its own words."""

    language = forms.ChoiceField(
        label=gettext_lazy("Language of this seat's page and emails"),
        widget=forms.RadioSelect,
        required=False,
        error_messages={"invalid_choice": gettext_lazy("Choose one of the languages of the list.")},
    )

    def __init__(self, *args: Any, game_language: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["language"]
        assert isinstance(field, forms.ChoiceField)
        game = languages.NAMES.get(game_language, game_language)
        field.choices = [
            ("", gettext("as the game (%(language)s)") % {"language": game}),
            *settings.LANGUAGES,
        ]
