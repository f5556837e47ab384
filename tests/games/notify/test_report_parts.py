"""The parts of a step's reports rendered once for all seats (the board, the order syntax,
the events) read as they would in each email: plain in the text part, escaped in HTML."""

from __future__ import annotations

from datetime import datetime

import pytest

from games import postal
from moderator.mail.models import OutboundEmail
from tests.factories import started_game

pytestmark = pytest.mark.django_db

NAME = 'Ann & "<Bob>"'


def test_a_name_with_markup_is_plain_in_the_text_board_and_escaped_in_the_html_board(
    now: datetime,
) -> None:
    game = started_game(now=now, players=[postal.Player(NAME, "ann@example.org"), "cy"])
    for email in OutboundEmail.objects.filter(game=game, kind="report"):
        board = email.text.split("THE BOARD", 1)[1].split("YOUR PRIVATE INFORMATION", 1)[0]
        assert NAME in board
        assert "&amp;" not in email.text and "&lt;" not in email.text
        assert "Ann &amp; &quot;&lt;Bob&gt;&quot;" in email.html
        assert NAME not in email.html


def test_seats_that_saw_the_same_events_get_the_same_what_happened_part(now: datetime) -> None:
    game = started_game(now=now, players=[postal.Player(NAME, "ann@example.org"), "cy"])
    texts = {
        email.to: email.text.split("WHAT HAPPENED\n", 1)[1].split("THE BOARD", 1)[0]
        for email in OutboundEmail.objects.filter(game=game, kind="report")
    }
    rolls = [line for line in texts["ann@example.org"].splitlines() if line.strip()]
    assert rolls and texts["ann@example.org"] == texts["cy@example.org"]
    assert all(line.startswith("  ") for line in rolls)
