"""The First Player's order form: the shared menu of legal one-line orders (roll, reroll,
arrange from high to low, tokens, ready) and, in the gift window, a gift as whom to give
to, how many and (with tokens) what: only other players, and only as many as the player
may give (they keep at least one die). The arrangement of the player's own choosing is a
choice of die for each place, left to right, and with JavaScript is tapped on the dice
(form.html). Each control writes the order the typed syntax gives."""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import QueryDict
from django.utils.translation import gettext, gettext_lazy, ngettext

from games.engines.base import Engine, counted
from games.engines.first_player.rules import COMMIT, GIFTS, FirstPlayerState
from games.web.forms import MENU, MenuOrderForm

GIVE = "give"
TOKENS = "tokens"
ARRANGE = "arrange"


class FirstPlayerOrderForm(MenuOrderForm):
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
        assert isinstance(state, FirstPlayerState)
        super().__init__(
            data,
            engine=engine,
            state=state,
            position=position,
            step_number=step_number,
            current=current,
        )
        self.sent_ready = state.phase == GIFTS and state.ready[position]
        if state.phase == GIFTS and not self.sent_ready:
            self._gift_fields(state, position)
        self._token_field(state, position)
        self._place_fields(state, position)

    def _place_fields(self, state: FirstPlayerState, position: int) -> None:
        """The arrangement of the player's own choosing, without JavaScript: a choice of die
        for each place of the row, leftmost first, each starting at the hand from high to
        low (what "arrange desc" gives)."""
        self.hand: tuple[int, ...] = ()
        if state.phase != COMMIT or position not in state.participants:
            return
        cup = state.cups[position]
        if not cup.rolls or cup.row:
            return
        self.hand = tuple(sorted(cup.hand, reverse=True))
        faces = [(str(value), str(value)) for value in sorted(set(cup.hand), reverse=True)]
        missing = [n for n in range(1, len(self.hand) + 1) if f"place_{n}" not in self.data]
        if self.is_bound and missing:
            # A post of another control (a typed order refused, say) shows the places as
            # they start, not each at the first die.
            data = self.data.copy() if isinstance(self.data, QueryDict) else dict(self.data)
            for n in missing:
                data[f"place_{n}"] = str(self.hand[n - 1])
            self.data = data
        for place, value in enumerate(self.hand, start=1):
            self.fields[f"place_{place}"] = forms.TypedChoiceField(
                label=gettext("Place %(place)d") % {"place": place},
                coerce=int,
                required=False,
                choices=faces,
                initial=str(value),
                error_messages={"invalid_choice": gettext_lazy("Choose one of your dice.")},
            )

    @property
    def places(self) -> list[forms.BoundField]:
        """The arrangement's choices, leftmost place first ([] when none is owed)."""
        return [self[f"place_{place}"] for place in range(1, len(self.hand) + 1)]

    def _token_field(self, state: FirstPlayerState, position: int) -> None:
        """Tokens on several dice at once (one message: a new one replaces the last in a
        token window), when the player holds more than one: a box per die that can take one."""
        cup = state.cups[position] if position < len(state.cups) else None
        left = state.tokens[position] - (cup.secret_tokens if cup is not None else 0)
        slots = [text.split()[1] for text, _ in self.menu if text.startswith("token ")]
        slots = [slot for slot in slots if slot.isdigit()]
        if left < 2 or len(slots) < 2:
            return
        assert cup is not None
        self.tokens_left = left
        self.fields["tokens"] = forms.TypedMultipleChoiceField(
            label=gettext_lazy("Dice to put a token on"),
            required=False,
            coerce=int,
            widget=forms.CheckboxSelectMultiple,
            choices=[
                (
                    slot,
                    gettext("die %(position)s (a %(value)d)")
                    % {"position": slot, "value": cup.row[int(slot) - 1].value},
                )
                for slot in slots
            ],
            error_messages={"invalid_choice": gettext_lazy("That die cannot take a token now.")},
        )

    def _gift_fields(self, state: FirstPlayerState, position: int) -> None:
        dice = state.counts[position] - 1  # a player keeps at least one die
        tokens = state.tokens[position] if state.options.tokens else 0
        if max(dice, tokens) < 1:
            return
        self.fields["to"] = forms.TypedChoiceField(
            label=gettext_lazy("Give to"),
            coerce=int,
            required=False,
            choices=[
                (str(seat), name) for seat, name in enumerate(state.players) if seat != position
            ],
            error_messages={"invalid_choice": gettext_lazy("Choose another player of the game.")},
        )
        units = []
        if dice:
            units.append(("dice", gettext("dice")))
        if tokens:
            units.append(("token", gettext("tokens")))
        self.fields["count"] = forms.TypedChoiceField(
            label=gettext_lazy("How many"),
            coerce=int,
            required=False,
            choices=[(str(n), str(n)) for n in range(1, max(dice, tokens) + 1)],
            initial="1",
            error_messages={"invalid_choice": gettext_lazy("Choose how many from the list.")},
        )
        self.fields["unit"] = forms.ChoiceField(
            label=gettext_lazy("Of"),
            required=False,
            choices=units,
            initial=units[0][0],
            widget=forms.RadioSelect,
            error_messages={"invalid_choice": gettext_lazy("Choose dice or tokens.")},
        )
        self.most = {"dice": dice, "token": tokens}

    def clean_pick(self) -> str:
        pick = str(self.cleaned_data["pick"])
        if pick == GIVE and "to" in self.fields:
            return pick
        if pick == TOKENS and "tokens" in self.fields:
            return pick
        if pick == ARRANGE and self.hand:
            return pick
        return super().clean_pick()

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if self.data.get("entry") == MENU and cleaned.get("pick") == TOKENS:
            chosen = cleaned.get("tokens") or []
            if not chosen and "tokens" not in self.errors:
                self.add_error("tokens", gettext("Tick the dice to put a token on first."))
            elif len(chosen) > self.tokens_left:
                self.add_error(
                    "tokens",
                    ngettext(
                        "You hold %(count)d token: tick at most that many dice.",
                        "You hold %(count)d tokens: tick at most that many dice.",
                        self.tokens_left,
                    )
                    % {"count": self.tokens_left},
                )
            return cleaned
        if self.data.get("entry") == MENU and cleaned.get("pick") == ARRANGE:
            self._check_places(cleaned)
            return cleaned
        if self.data.get("entry") != MENU or cleaned.get("pick") != GIVE:
            return cleaned
        for name, message in (
            ("to", gettext("Choose whom to give to.")),
            ("count", gettext("Choose how many to give.")),
            ("unit", gettext("Choose dice or tokens.")),
        ):
            if cleaned.get(name) in (None, "") and name not in self.errors:
                self.add_error(name, message)
        if self.errors:
            return cleaned
        unit, count = cleaned["unit"], cleaned["count"]
        most = self.most[unit]
        if count > most:
            if unit == "dice":
                message = ngettext(
                    "You may give at most %(most)d die: you keep at least one.",
                    "You may give at most %(most)d dice: you keep at least one.",
                    most,
                )
            else:
                message = ngettext(
                    "You hold %(most)d token: give at most that.",
                    "You hold %(most)d tokens: give at most that many.",
                    most,
                )
            self.add_error("count", message % {"most": most})
        return cleaned

    def _check_places(self, cleaned: dict[str, Any]) -> None:
        """Every place chosen, and each die of the hand used once."""
        chosen = [cleaned.get(f"place_{place}") for place in range(1, len(self.hand) + 1)]
        faces = [value for value in chosen if isinstance(value, int)]
        if len(faces) < len(chosen):
            if not self.errors:
                self.add_error(None, gettext("Choose a die for every place."))
            return
        if sorted(faces, reverse=True) != list(self.hand):
            self.add_error(
                None,
                gettext("Use each of your dice once: you hold %(hand)s.")
                % {"hand": ", ".join(map(str, self.hand))},
            )

    def order_text(self) -> str:
        if self.cleaned_data.get("entry") == MENU and self.cleaned_data.get("pick") == ARRANGE:
            places = range(1, len(self.hand) + 1)
            return "arrange " + " ".join(str(self.cleaned_data[f"place_{n}"]) for n in places)
        if self.cleaned_data.get("entry") == MENU and self.cleaned_data.get("pick") == TOKENS:
            return "token " + " ".join(map(str, sorted(self.cleaned_data["tokens"])))
        if self.cleaned_data.get("entry") == MENU and self.cleaned_data.get("pick") == GIVE:
            assert isinstance(self.state, FirstPlayerState)
            name = self.state.players[self.cleaned_data["to"]]
            count, unit = self.cleaned_data["count"], self.cleaned_data["unit"]
            amount = counted(count, "die", "dice") if unit == "dice" else counted(count, "token")
            return f"give {name} {amount}"
        return super().order_text()

    def add_order_error(self, message: str) -> None:
        if self.cleaned_data.get("entry") == MENU:
            self.add_error(None, message)
        else:
            super().add_order_error(message)
