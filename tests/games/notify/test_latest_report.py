"""The latest report as a seat's page shows it: a short one whole, a long one folded with the
lines that concern the seat and its last line kept in view."""

from __future__ import annotations

from games.models import Game
from games.notify.reports import LatestReport, latest_report

RUNNING = Game(step_number=6, status=Game.Status.RUNNING)


def test_a_report_of_five_events_is_shown_whole() -> None:
    events = ["one", "two", "three", "four", "five"]

    assert latest_report(RUNNING, "ann", events) == LatestReport(5, events)


def test_a_long_report_keeps_the_seats_last_three_lines_and_its_last_line() -> None:
    events = [
        "the instigator is a 3 at (0,0)",
        "ann's line, front first: 5 2 6",
        "turn 1: ann's 5 cannot be placed",
        "turn 2: bob places his 4",
        "your die went to the back",
        "turn 3: Anna places her 6",  # another name that starts with ann's
        "turn 4: ANN places her 2",
        "turn 5: cy places his 1",
        "postal turn 6: bob to place",
    ]

    report = latest_report(RUNNING, "ann", events)

    assert report == LatestReport(
        5,
        events,
        [
            "turn 1: ann's 5 cannot be placed",
            "your die went to the back",
            "turn 4: ANN places her 2",
            "postal turn 6: bob to place",
        ],
    )


def test_a_finished_games_report_is_of_its_last_step() -> None:
    finished = Game(step_number=9, status=Game.Status.FINISHED)
    events = [f"line {n}" for n in range(7)]

    assert latest_report(finished, "cy", events) == LatestReport(9, events, ["line 6"])
