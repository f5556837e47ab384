"""Drop-Shy's board in the reports: the text email's grid of numbers and the HTML email's
table show exactly the board's cells and values, with their coordinates."""

from __future__ import annotations

import re
from datetime import datetime
from html import unescape

import pytest

from games import postal
from games.engines.drop_shy.rules import DropShyEngine
from games.models import Game, Step
from moderator.mail.models import OutboundEmail
from tests.factories import started_game

pytestmark = pytest.mark.django_db

ENGINE = DropShyEngine()


def played(now: datetime, turns: int) -> Game:
    """A 3-player game after ``turns`` orders, each on the first legal cell."""
    game = started_game("drop-shy", now=now, players=3, title="Shy", options={"dice_per_player": 5})
    for _ in range(turns):
        game.refresh_from_db()
        state = ENGINE.state_from_json(game.state)
        ((text, _), *_) = [c for c in ENGINE.candidates(state, state.current) if "place" in c[0]]
        postal.accept_order(
            game_id=game.pk, position=state.current, text=text, source="web", now=now
        )
    game.refresh_from_db()
    return game


def board_of(game: Game) -> dict[tuple[int, int], int]:
    state = ENGINE.state_from_json(game.state)
    return {(placed.x, placed.y): placed.face for placed in state.board}


def latest_report(game: Game) -> OutboundEmail:
    """The report of the step to the seat that owes it (the others get Drop-Shy's reports
    by default only when they owe an order)."""
    step = Step.objects.get(game=game, number=game.step_number)
    (position,) = step.prompted_seats
    return OutboundEmail.objects.get(dedupe_key=f"report:{game.pk}:{step.number}:{position}")


def text_grid(text: str) -> dict[tuple[int, int], int]:
    """The cells with a die in the text email's grid, read by their coordinates."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("The board"))
    header = next(line for line in lines[start + 1 :] if re.fullmatch(r"\s+(-?\d+\s*)+", line))
    xs = [int(x) for x in header.split()]
    found = {}
    for line in lines[lines.index(header) + 1 :]:
        if not line.strip() or line.startswith("Lines"):
            break
        y, marks = int(line[:5]), line[5:]
        for column, x in enumerate(xs):
            mark = marks[column * 3 : column * 3 + 3].strip()
            if mark.isdigit():
                found[(x, y)] = int(mark)
    return found


def html_table(html: str) -> dict[tuple[int, int], int]:
    table = re.search(r'<table id="board".*?</table>', html, re.S)
    assert table is not None
    cells = re.findall(r'<td title="\((-?\d+),(-?\d+)\)"[^>]*>([^<]*)</td>', table[0])
    return {(int(x), int(y)): int(v) for x, y, v in cells if unescape(v).strip().isdigit()}


@pytest.mark.parametrize("turns", [0, 4, 9])
def test_the_text_grid_and_the_html_table_show_exactly_the_board(now: datetime, turns: int) -> None:
    game = played(now, turns)
    board = board_of(game)
    assert (len(board) > 1) == (turns > 0)
    report = latest_report(game)
    assert text_grid(report.text) == board
    assert html_table(report.html) == board
