from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from games import records

ROOT = Path(__file__).resolve().parents[3]


def replay(record: object) -> dict[str, Any]:
    return records.play(record)


def failure(record: object) -> tuple[int, str]:
    with pytest.raises(records.RecordError) as caught:
        records.play(record)
    return caught.value.status, caught.value.message


def solo(dice: list[int], moves: list[Any], **options: object) -> dict[str, Any]:
    return {"game": "choice", "options": options, "players": ["ann"], "dice": dice, "moves": moves}


# Sackson's solitaire: one player, one round per turn, the same roll every round.
SIXES = [6] * 5 * 40


def test_a_solo_game_of_sixes_ends_when_six_is_stored_eight_times() -> None:
    result = replay(solo(SIXES, [{"deadline": True}] * 8, rolls_per_turn=1))
    assert result["status"] == "finished"
    # Eight rounds of 6+6 twice: sum 12 counted 16 times, scored as 10: 5 x 100.
    assert result["standings"] == [{"player": "ann", "place": 1, "score": 500}]


def test_orders_and_deadlines_replay_like_the_postal_game() -> None:
    moves = [{"player": "ANN", "order": "W6 6+6 6+6"}] * 8
    result = replay(solo(SIXES, moves, rolls_per_turn=1))
    assert result["standings"] == [{"player": "ann", "place": 1, "score": 500}]


def test_a_game_in_progress_is_running_and_says_who_owes_what() -> None:
    result = replay(solo(SIXES, [{"deadline": True}], rolls_per_turn=1))
    assert result["status"] == "running"
    assert "standings" not in result
    assert [owed["player"] for owed in result["owed"]] == ["ann"]


def test_an_illegal_move_names_its_number_and_player() -> None:
    moves = [{"deadline": True}, {"player": "ann", "order": "W5 6+6 6+6"}]
    status, message = failure(solo(SIXES, moves, rolls_per_turn=1))
    assert status == 2
    assert message.startswith("move 2 (ann): round 2: ")


def test_a_move_from_a_stranger_or_after_the_end_is_illegal() -> None:
    assert failure(solo(SIXES, [{"player": "zed", "order": "W6 6+6 6+6"}])) == (
        2,
        "move 1 (zed): 'zed' is not a player of this game",
    )
    moves = [{"deadline": True}] * 9
    assert failure(solo(SIXES, moves, rolls_per_turn=1)) == (
        2,
        "move 9 (deadline): the game is over",
    )


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ([], "broken record: a record is a JSON object"),
        ({"game": "chess", "players": ["a"], "dice": []}, "broken record: unknown game 'chess'"),
        (solo(SIXES, [], rolls_per_turn="2"), "broken record: "),
        (solo(SIXES, [], colour="red"), "broken record: "),
        (solo([1, 2, 3], []), "broken record: the record has too few dice"),
        (solo([7] * 10, []), "broken record: die 1 of the record is 7, not a d6 value 1-6"),
        (solo(SIXES, [{"player": "ann"}]), "broken record: move 1 is neither"),
        (solo(SIXES, [{"deadline": False}]), "broken record: move 1 is neither"),
        (solo(SIXES, [{"host_order": "ann"}]), "broken record: move 1 is neither"),
        (
            solo(SIXES, [{"host_order": ["ann"]}]),
            "broken record: move 1 (the host's order): Choice has no order for the host to set",
        ),
        ({"game": "choice", "players": ["ann"], "moves": []}, "broken record: the record needs"),
        ({"game": "choice", "players": [], "dice": SIXES}, "broken record: Choice takes"),
    ],
)
def test_a_broken_record_exits_3_with_what_is_wrong(record: object, message: str) -> None:
    status, text = failure(record)
    assert status == 3
    assert text.startswith(message), text


def test_too_few_dice_for_a_later_turn_is_a_broken_record() -> None:
    status, message = failure(solo([6] * 5, [{"deadline": True}], rolls_per_turn=1))
    assert status == 3
    assert message.startswith("broken record: move 1 (deadline): the record has too few dice")


def test_a_seed_replays_the_same_dice_every_time() -> None:
    moves = [{"deadline": True}] * 3
    record = {"game": "choice", "players": ["ann", "bob"], "seed": "ab" * 32, "moves": moves}
    assert replay(record)["view"] == replay(record)["view"]
    assert replay(record)["view"] != replay(record | {"seed": "cd" * 32})["view"]
    assert replay(record)["view"] != replay(record | {"game_id": 7})["view"]


def test_email_quotes_and_signatures_are_dropped_from_orders() -> None:
    order = "> W5 1+1 1+1 quoted\nW6 6+6 6+6\n-- \nann, sent from my phone"
    result = replay(solo(SIXES, [{"player": "ann", "order": order}], rolls_per_turn=1))
    assert result["status"] == "running"


def test_the_command_prints_json_and_reads_stdin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "game.json"
    path.write_text(json.dumps(solo(SIXES, [{"deadline": True}] * 8, rolls_per_turn=1)))
    call_command("replay", str(path))
    assert json.loads(capsys.readouterr().out)["standings"][0]["score"] == 500


def test_the_command_exits_2_for_an_illegal_move_and_3_for_a_broken_record(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    path.write_text(json.dumps(solo(SIXES, [{"player": "ann", "order": "nonsense"}])))
    with pytest.raises(CommandError) as caught:
        call_command("replay", str(path))
    assert caught.value.returncode == 2
    path.write_text("{not json")
    with pytest.raises(CommandError) as caught:
        call_command("replay", str(path))
    assert (caught.value.returncode, str(caught.value)) == (
        3,
        "broken record: not JSON (Expecting property name enclosed in double quotes at line 1)",
    )


def test_the_command_line_exit_statuses_are_real() -> None:
    def run(text: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", "replay", "-"],
            input=text,
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
        )

    good = run(json.dumps(solo(SIXES, [{"deadline": True}] * 8, rolls_per_turn=1)))
    assert (good.returncode, json.loads(good.stdout)["status"]) == (0, "finished")
    illegal = run(json.dumps(solo(SIXES, [{"player": "ann", "order": "W1 1+1 1+1"}])))
    assert illegal.returncode == 2
    assert illegal.stderr.strip().startswith("CommandError: move 1 (ann): round 1: ")
    broken = run("[1, 2")
    assert broken.returncode == 3


NIGHT = {
    "game": "first-player",
    "players": ["ann", "bob", "cy"],
    "options": {"order_mode": "free"},
    "seed": "ab" * 32,
}


def test_the_hosts_order_closes_the_round_as_the_host_set_it() -> None:
    played = replay(NIGHT | {"moves": [{"host_order": ["cy", "ann", "bob"]}]})
    assert "round 1: the host sets the actual order" in played["log"]
    assert played["status"] == "finished"
    assert [row["player"] for row in played["standings"]] == ["cy", "ann", "bob"]


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (["cy", "ann", "zed"], "move 1 (the host's order): 'zed' is not a player of this game"),
        (
            ["cy", "ann", "ann"],
            "move 1 (the host's order): the actual order must name every player exactly once",
        ),
    ],
)
def test_a_hosts_order_the_game_refuses_is_an_illegal_move(names: list[str], message: str) -> None:
    assert failure(NIGHT | {"moves": [{"host_order": names}]}) == (2, message)
