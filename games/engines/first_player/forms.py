"""The First Player's order form: the shared menu of legal one-line orders (roll, reroll,
arrange from high to low, tokens, ready) and, in the gift window, a gift as whom to give
to, how many and (with tokens) what: only other players, and only as many as the player
may give (they keep at least one die). The arrangement of the player's own choosing is
tapped on the dice (form.html). Each control writes the order the typed syntax gives."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext, gettext_lazy, ngettext

from games.engines.base import Engine, counted
from games.engines.first_player.rules import GIFTS, FirstPlayerState
from games.web.forms import MENU, MenuOrderForm

GIVE = "give"


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
        return super().clean_pick()

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
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

    def order_text(self) -> str:
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
