"""Liar's Dice's order form: a control for every move, the typed order beside it.

- a bid as a quantity and a face (in the sum phase of the team game, a total), the lowest
  legal raise chosen to start with; in the Death Match with Revelation the die the bid shows
  (rules/liars-dice.md 6.2);
- the Death Match's mulligan as a box per die of the player's cup;
- the team game's optional action as the watched die to reveal and what follows it (reroll,
  or learn one die of another player), only the legal ones offered;
- the moves without a choice in them (liar, spot, accuse, cheat yes/no, keep every die) as
  buttons of the shared menu of legal orders.

Each control writes the order the typed syntax gives; the postal layer checks it as it checks
a typed one, so a combination the controls allow but the rules refuse (a bid below the last)
is refused with the rules' own words and changes nothing.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext, gettext_lazy

from games.engines.base import Engine, OrderError
from games.engines.liars_dice.rules import (
    BIDDING,
    FACES,
    MAX_QUANTITY,
    MULLIGAN,
    MULLIGAN_MOST,
    SUM_HIGH,
    SUM_LOW,
    TEAM,
    Action,
    LiarsDiceState,
    action_text,
    behind,
    check_raise,
    check_sum_raise,
    positions_to_show,
)
from games.web.forms import MENU, MenuOrderForm, legal_choices, probe

# What the buttons of the controls send as ``pick`` (the menu's own orders are order texts).
BID = "bid"
REROLL = "mulligan"
ACT = "action"
CONTROLS = (BID, REROLL, ACT)


def legal_bids(state: LiarsDiceState) -> list[tuple[int, int]]:
    """The legal bids (quantity, face) now, by quantity, then face, with
    quantities up to the dice in play or, when no bid that low is legal, the lowest legal
    quantity: a bid above the dice in play is legal (rules L-2) but never worth offering."""
    last = state.bids[-1].quantity if state.bids else 0
    top = min(MAX_QUANTITY, max(sum(state.counts), 2 * last + 1))
    found = []
    for quantity in range(1, top + 1):
        for face in FACES:
            try:
                check_raise(state, quantity, face)
            except OrderError:
                continue
            found.append((quantity, face))
    if not found:
        return []
    most = max(sum(state.counts), found[0][0])
    return [(quantity, face) for quantity, face in found if quantity <= most]


def lowest_bid(state: LiarsDiceState, bids: list[tuple[int, int]]) -> tuple[int, int]:
    """The lowest of the legal ``bids``: the least quantity, then face; where ones are wild a
    bid on ones counts as twice its quantity of another face (after 3 x 5, 3 x 6 comes
    before 2 x 1)."""
    if not state.wilds:
        return bids[0]
    return min(bids, key=lambda bid: (2 * bid[0] if bid[1] == 1 else bid[0], bid[1]))


def legal_sums(state: LiarsDiceState) -> list[int]:
    """The legal sum bids now (the team game's sum phase), lowest first."""
    found = []
    for total in range(SUM_LOW, SUM_HIGH + 1):
        try:
            check_sum_raise(state, total)
        except OrderError:
            continue
        found.append(total)
    return found


def legal_actions(engine: Any, state: LiarsDiceState, position: int) -> list[tuple[int, str, str]]:
    """The team action's legal choices now: (revealed slot, what follows as a value of the
    form's ``then`` field, the order's text)."""
    if state.profile != TEAM or state.acted or state.sum_phase or state.phase != BIDDING:
        return []
    if state.turn != position:
        return []
    watched = behind(state, position)
    follows = [("reroll", None, None)] + [
        (f"{target}:{slot}", target, slot)
        for target in state.seats
        if target not in (position, watched)
        for slot in range(1, state.counts[target] + 1)
    ]
    found = []
    for reveal in range(1, state.counts[watched] + 1):
        for value, target, slot in follows:
            action = Action(reveal, target is not None, target, slot)
            text = action_text(state, action)
            if probe(engine, state, position, text):
                found.append((reveal, value, text))
    return found


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
        super().__init__(
            data,
            engine=engine,
            state=state,
            position=position,
            step_number=step_number,
            current=current,
        )
        self.to_show = positions_to_show(state, position)
        self.actions: list[tuple[int, str, str]] = []
        bidding = state.phase == BIDDING and state.turn == position
        if state.phase == MULLIGAN:
            self._mulligan_fields(state, position)
        elif bidding and state.sum_phase:
            self._sum_fields(state)
        elif bidding:
            self._bid_fields(state, position)
            self.actions = legal_actions(engine, state, position)
            if self.actions:
                self._action_fields(state, position)

    # --- the fields ------------------------------------------------------------------------

    def _bid_fields(self, state: LiarsDiceState, position: int) -> None:
        bids = legal_bids(state)
        if not bids:
            return
        quantities = sorted({quantity for quantity, _ in bids})
        faces = sorted({face for _, face in bids})
        lowest = lowest_bid(state, bids)
        self.fields["quantity"] = forms.TypedChoiceField(
            label=gettext_lazy("How many dice"),
            choices=[(str(quantity), str(quantity)) for quantity in quantities],
            coerce=int,
            initial=str(lowest[0]),
            required=False,
            error_messages={
                "invalid_choice": gettext_lazy("Choose a quantity from the list."),
            },
        )
        self.fields["face"] = forms.TypedChoiceField(
            label=gettext_lazy("Showing"),
            choices=[(str(face), str(face)) for face in faces],
            coerce=int,
            initial=str(lowest[1]),
            required=False,
            widget=forms.RadioSelect,
            error_messages={"invalid_choice": gettext_lazy("Choose a face from the list.")},
        )
        self.lowest = gettext("%(quantity)d x %(face)d") % {
            "quantity": lowest[0],
            "face": lowest[1],
        }
        if self.to_show:
            hand = state.hands[position]
            self.fields["show"] = forms.TypedChoiceField(
                label=gettext_lazy("Show your opponent your die at position"),
                required=False,
                coerce=int,
                widget=forms.RadioSelect,
                choices=[
                    (
                        str(slot),
                        gettext("%(slot)d (a %(value)d)") % {"slot": slot, "value": hand[slot - 1]},
                    )
                    for slot in self.to_show
                ],
                error_messages={"invalid_choice": gettext_lazy("You cannot show that die now.")},
            )

    def _sum_fields(self, state: LiarsDiceState) -> None:
        sums = legal_sums(state)
        if not sums:
            return
        self.fields["total"] = forms.TypedChoiceField(
            label=gettext_lazy("The two dice add up to at least"),
            choices=[(str(total), str(total)) for total in sums],
            coerce=int,
            initial=str(sums[0]),
            required=False,
            error_messages={"invalid_choice": gettext_lazy("Choose a sum from the list.")},
        )
        self.lowest = gettext("sum %(total)d") % {"total": sums[0]}

    def _mulligan_fields(self, state: LiarsDiceState, position: int) -> None:
        hand = state.hands[position]
        self.most = min(MULLIGAN_MOST, len(hand))
        self.fields["reroll"] = forms.TypedMultipleChoiceField(
            label=gettext_lazy("Dice to reroll"),
            required=False,
            coerce=int,
            widget=forms.CheckboxSelectMultiple,
            choices=[
                (
                    str(slot),
                    gettext("die %(slot)d: a %(value)d") % {"slot": slot, "value": value},
                )
                for slot, value in enumerate(hand, start=1)
            ],
            error_messages={"invalid_choice": gettext_lazy("You have no such die.")},
        )

    def _action_fields(self, state: LiarsDiceState, position: int) -> None:
        watched = behind(state, position)
        hand = state.hands[watched]
        name = state.players[watched]
        reveals = sorted({reveal for reveal, _, _ in self.actions})
        self.fields["reveal"] = forms.TypedChoiceField(
            label=gettext_lazy("Reveal %(name)s's die") % {"name": name},
            required=False,
            coerce=int,
            widget=forms.RadioSelect,
            choices=[
                (
                    str(slot),
                    gettext("die %(slot)d: a %(value)d") % {"slot": slot, "value": hand[slot - 1]},
                )
                for slot in reveals
            ],
            error_messages={"invalid_choice": gettext_lazy("You cannot reveal that die now.")},
        )
        thens = []
        self.learn_names: dict[int, str] = {}
        for value in dict.fromkeys(then for _, then, _ in self.actions):
            if value == "reroll":
                label = gettext("reroll %(name)s's other dice") % {"name": name}
            else:
                target, slot = (int(part) for part in value.split(":"))
                # Shown in a group "learn <player>'s die in secret:" (then_groups).
                label = str(slot)
                self.learn_names[target] = state.players[target]
            thens.append((value, label))
        self.fields["then"] = forms.ChoiceField(
            label=gettext_lazy("And then"),
            required=False,
            widget=forms.RadioSelect,
            choices=thens,
            error_messages={"invalid_choice": gettext_lazy("You cannot do that now.")},
        )

    @property
    def then_groups(self) -> list[tuple[str, list[Any]]]:
        """The ``then`` radio buttons grouped for the page: the reroll alone, then one
        group per player whose die may be learnt, each die by its position."""
        radios = list(self["then"])
        groups: list[tuple[str, list[Any]]] = []
        reroll = [radio for radio in radios if radio.data["value"] == "reroll"]
        if reroll:
            groups.append(("", reroll))
        for target, whose in self.learn_names.items():
            prefix = f"{target}:"
            groups.append(
                (
                    gettext("or learn %(name)s's die, in secret:") % {"name": whose},
                    [radio for radio in radios if str(radio.data["value"]).startswith(prefix)],
                )
            )
        return groups

    # --- the menu --------------------------------------------------------------------------

    @classmethod
    def legal_menu(cls, engine: Any, state: Any, position: int) -> list[tuple[str, str]]:
        """The moves without a choice in them; bids, mulligans of some dice and the team
        action have controls of their own."""
        return legal_choices(engine, state, position, keep=lambda text: not text.startswith("bid "))

    @property
    def buttons(self) -> bool:
        return bool(self.menu)

    @property
    def has_controls(self) -> bool:
        return any(name in self.fields for name in ("quantity", "total", "reroll", "reveal"))

    # --- reading a post --------------------------------------------------------------------

    def clean_pick(self) -> str:
        pick = str(self.cleaned_data["pick"])
        if pick == BID and ("quantity" in self.fields or "total" in self.fields):
            return pick
        if pick == REROLL and "reroll" in self.fields:
            return pick
        if pick == ACT and "reveal" in self.fields:
            return pick
        return super().clean_pick()

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if self.data.get("entry") != MENU:
            return cleaned
        pick = cleaned.get("pick")
        if pick == BID:
            self._clean_bid(cleaned)
        elif pick == REROLL:
            self._clean_mulligan(cleaned)
        elif pick == ACT:
            self._clean_action(cleaned)
        return cleaned

    def _clean_bid(self, cleaned: dict[str, Any]) -> None:
        if "total" in self.fields:
            if cleaned.get("total") in (None, "") and "total" not in self.errors:
                self.add_error("total", gettext("Choose the sum you bid."))
            return
        for name, message in (
            ("quantity", gettext("Choose how many dice you bid.")),
            ("face", gettext("Choose the face you bid.")),
        ):
            if cleaned.get(name) in (None, "") and name not in self.errors:
                self.add_error(name, message)
        if self.to_show and cleaned.get("show") in (None, "") and "show" not in self.errors:
            self.add_error(
                "show", gettext("Choose which of your dice your opponent sees with this bid.")
            )

    def _clean_mulligan(self, cleaned: dict[str, Any]) -> None:
        chosen = cleaned.get("reroll") or []
        if "reroll" in self.errors:
            return
        if not chosen:
            self.add_error(
                "reroll",
                gettext("Tick the dice to reroll first, or keep every die with mulligan none."),
            )
        elif len(chosen) > self.most:
            self.add_error(
                "reroll",
                gettext("Tick at most %(most)d dice: you ticked %(count)d.")
                % {"most": self.most, "count": len(chosen)},
            )

    def _clean_action(self, cleaned: dict[str, Any]) -> None:
        reveal, then = cleaned.get("reveal"), cleaned.get("then")
        if reveal in (None, "") and "reveal" not in self.errors:
            self.add_error("reveal", gettext("Choose the die to reveal."))
        if not then and "then" not in self.errors:
            self.add_error("then", gettext("Choose what follows the reveal."))
        if self.errors or self._action() is not None:
            return
        self.add_error(
            None,
            gettext("You cannot reveal die %(slot)d and then do that: choose another pair.")
            % {"slot": reveal},
        )

    def _action(self) -> str | None:
        """The action's order the fields name, if it is one of the legal ones."""
        reveal, then = self.cleaned_data.get("reveal"), self.cleaned_data.get("then")
        return next(
            (text for slot, value, text in self.actions if (slot, value) == (reveal, then)), None
        )

    def order_text(self) -> str:
        if self.cleaned_data.get("entry") != MENU:
            return super().order_text()
        pick = self.cleaned_data.get("pick")
        if pick == BID:
            if "total" in self.fields:
                return f"bid sum {self.cleaned_data['total']}"
            text = f"bid {self.cleaned_data['quantity']} {self.cleaned_data['face']}"
            show = self.cleaned_data.get("show")
            return f"{text} show {show}" if self.to_show and show else text
        if pick == REROLL:
            return "mulligan " + " ".join(map(str, sorted(self.cleaned_data["reroll"])))
        if pick == ACT:
            return self._action() or ""
        return super().order_text()

    def add_order_error(self, message: str) -> None:
        """A refusal of the rules, above the controls (it may be about any of them)."""
        if self.cleaned_data.get("entry") == MENU:
            self.add_error(None, message)
        else:
            super().add_order_error(message)
