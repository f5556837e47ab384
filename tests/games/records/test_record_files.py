"""Every game record in tests/games/records/ (docs/records.md) replays to the result its
``expect`` key states: the status and the standings, exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from games import records

RECORDS = sorted(Path(__file__).parent.glob("*.json"))


def test_the_records_folder_holds_the_suppenkasper_games() -> None:
    # A glob that found nothing would let every record test pass by not running.
    names = {path.name for path in RECORDS}
    assert {"suppenkasper_full_game.json", "suppenkasper_two_players.json"} <= names


@pytest.mark.parametrize("path", RECORDS, ids=[path.stem for path in RECORDS])
def test_a_record_replays_to_its_expected_result(path: Path) -> None:
    record = json.loads(path.read_text())
    expect = record["expect"]
    assert set(expect) == {"status", "standings"}
    result = records.play(record)
    assert {"status": result["status"], "standings": result.get("standings")} == expect
