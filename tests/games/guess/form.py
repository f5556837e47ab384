"""Guess the Die, the web side: an order form with one select of the faces, which writes
the same ``guess N`` text a player would type."""

from __future__ import annotations

from typing import Any

from django import forms

from games.web.forms import BLOCKS, OrderForm


class GuessOrderForm(OrderForm):
    face = forms.ChoiceField(
        label="Your guess",
        required=False,
        choices=[("", "choose…")] + [(str(face), str(face)) for face in range(1, 7)],
    )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if cleaned.get("entry") != BLOCKS:
            return cleaned
        if not cleaned.get("face"):
            self.add_error("face", "Choose a face first.")
        else:
            cleaned["text"] = f"guess {cleaned['face']}"
        return cleaned
