"""Liar's Dice's order form: the shared menu of legal orders, and in the Death Match with
Revelation a "show" menu of the bidder's unshown dice while a bid must show one (rules/
liars-dice.md 6.2): the bid and the die to show are chosen apart, so the bid menu stays as
short as in the other profiles."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext, gettext_lazy

from games.engines.base import Engine
from games.engines.liars_dice.rules import LiarsDiceState, positions_to_show
from games.web.forms import MENU, MenuOrderForm, legal_choices


def _is_bid(text: str) -> bool:
    return text.startswith("bid ")


class LiarsDiceOrderForm(MenuOrderForm):
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
        assert isinstance(state, LiarsDiceState)
        self.to_show = positions_to_show(state, position)
        super().__init__(
            data,
            engine=engine,
            state=state,
            position=position,
            step_number=step_number,
            current=current,
        )
        if self.to_show:
            hand = state.hands[position]
            self.fields["show"] = forms.ChoiceField(
                label=gettext_lazy("Show your opponent your die at position"),
                required=False,
                choices=[
                    ("", gettext("choose…")),
                    *(
                        (
                            str(slot),
                            gettext("%(slot)d (a %(value)d)")
                            % {"slot": slot, "value": hand[slot - 1]},
                        )
                        for slot in self.to_show
                    ),
                ],
                error_messages={"invalid_choice": gettext_lazy("You cannot show that die now.")},
            )

    @classmethod
    def legal_menu(cls, engine: Any, state: Any, position: int) -> list[tuple[str, str]]:
        to_show = positions_to_show(state, position)
        if not to_show:
            return super().legal_menu(engine, state, position)
        # Every bid must show a die: a bid is legal with one die as with any other.
        slot = to_show[0]
        return legal_choices(
            engine,
            state,
            position,
            complete=lambda text: f"{text} show {slot}" if _is_bid(text) else text,
        )

    @property
    def buttons(self) -> bool:
        # A bid needs the die to show, chosen beside it: one press cannot send both.
        return not self.to_show and super().buttons

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if self.data.get("entry") != MENU or not self.to_show:
            return cleaned
        if _is_bid(cleaned.get("pick") or "") and not cleaned.get("show"):
            self.add_error(
                "show", gettext("Choose which of your dice your opponent sees with this bid.")
            )
        return cleaned

    def order_text(self) -> str:
        text = super().order_text()
        if self.cleaned_data.get("entry") == MENU and self.to_show and _is_bid(text):
            return f"{text} show {self.cleaned_data['show']}"
        return text
