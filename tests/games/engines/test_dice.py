"""Dice sources: scripted records and verifiable draws (DESIGN.md section 6)."""

from __future__ import annotations

import hashlib
import hmac
from collections import Counter
from typing import Any

import pytest

from games.engines.base import DiceError
from games.engines.dice import (
    Draw,
    NoDice,
    ScriptedDice,
    VerifiableDice,
    commitment,
    face,
    new_seed,
)

SEED = bytes(range(32))


def reference_face(seed: bytes, game_id: int, index: int, sides: int) -> int:
    """An independent reading of the formula: HMAC-SHA256(seed, "g:i:attempt"), first 8 bytes
    big-endian, rejected at or above the largest multiple of ``sides`` below 2**64."""
    attempt = 0
    while True:
        mac = hmac.new(seed, f"{game_id}:{index}:{attempt}".encode(), "sha256").digest()
        number = int.from_bytes(mac[:8], "big")
        if number < (2**64 // sides) * sides:
            return number % sides + 1
        attempt += 1


def test_scripted_dice_return_the_values_in_order_and_record_them() -> None:
    dice = ScriptedDice([3, 1, 4, 8])
    assert [dice.draw(6), dice.draw(6), dice.draw(6), dice.draw(8)] == [3, 1, 4, 8]
    assert dice.draws == [Draw(0, 6, 3), Draw(1, 6, 1), Draw(2, 6, 4), Draw(3, 8, 8)]
    assert dice.position == 4


def test_scripted_dice_running_out() -> None:
    dice = ScriptedDice([2])
    dice.draw(6)
    with pytest.raises(DiceError) as excinfo:
        dice.draw(20)
    assert excinfo.value.message == (
        "the record has too few dice: draw 2 (a d20) is needed but only 1 values are given"
    )


@pytest.mark.parametrize("value", [0, 7, -1, True, "3", 2.0])
def test_scripted_dice_reject_a_value_that_is_not_a_d6_face(value: Any) -> None:
    dice = ScriptedDice([1, value])
    dice.draw(6)
    with pytest.raises(DiceError) as excinfo:
        dice.draw(6)
    assert excinfo.value.message == f"die 2 of the record is {value!r}, not a d6 value 1-6"
    assert dice.position == 1


def test_no_dice_refuses_to_draw() -> None:
    with pytest.raises(RuntimeError):
        NoDice().draw(6)


@pytest.mark.parametrize("sides", [6, 8, 12, 20])
def test_face_matches_the_published_formula(sides: int) -> None:
    for game_id in (1, 42):
        for index in range(40):
            assert face(SEED, game_id, index, sides) == reference_face(SEED, game_id, index, sides)


@pytest.mark.parametrize("sides", [6, 8, 12, 20])
def test_faces_stay_in_range_and_all_appear(sides: int) -> None:
    values = Counter(face(SEED, 7, index, sides) for index in range(sides * 60))
    assert set(values) == set(range(1, sides + 1))


def test_face_needs_two_sides() -> None:
    with pytest.raises(DiceError) as excinfo:
        face(SEED, 1, 0, 1)
    assert excinfo.value.message == "a die needs at least 2 sides, not 1"


def test_face_rejects_the_biased_top_of_the_range(monkeypatch: pytest.MonkeyPatch) -> None:
    # 2**64 - 1 lies above the largest multiple of 6 below 2**64, so attempt 0 is rejected
    # and attempt 1 decides. Rejection is too rare to meet with real digests.
    real_new = hmac.new
    messages: list[bytes] = []

    class Rejected:
        def digest(self) -> bytes:
            return b"\xff" * 32

    def fake_new(key: bytes, msg: bytes, digestmod: Any) -> Any:
        messages.append(msg)
        if msg.endswith(b":0"):
            return Rejected()
        return real_new(key, msg, digestmod)

    monkeypatch.setattr(hmac, "new", fake_new)
    value = face(SEED, 5, 9, 6)
    assert messages == [b"5:9:0", b"5:9:1"]
    number = int.from_bytes(real_new(SEED, b"5:9:1", hashlib.sha256).digest()[:8], "big")
    assert value == number % 6 + 1


def test_verifiable_dice_are_deterministic() -> None:
    first = VerifiableDice(SEED, 12)
    second = VerifiableDice(SEED, 12)
    sequence = [first.draw(6) for _ in range(30)]
    assert [second.draw(6) for _ in range(30)] == sequence
    assert sequence == [face(SEED, 12, index, 6) for index in range(30)]
    assert first.draws == [Draw(index, 6, value) for index, value in enumerate(sequence)]


def test_verifiable_dice_resume_at_a_draw_index() -> None:
    whole = VerifiableDice(SEED, 3)
    values = [whole.draw(sides) for sides in (6, 6, 20, 8, 6)]
    resumed = VerifiableDice(SEED, 3, start=2)
    assert [resumed.draw(sides) for sides in (20, 8, 6)] == values[2:]
    assert resumed.next_index == 5


def test_games_and_seeds_draw_different_sequences() -> None:
    base = [face(SEED, 1, index, 20) for index in range(20)]
    assert [face(SEED, 2, index, 20) for index in range(20)] != base
    assert [face(bytes(32), 1, index, 20) for index in range(20)] != base


def test_commitment_is_the_sha256_of_the_seed() -> None:
    seed = new_seed()
    assert len(seed) == 32
    assert commitment(seed) == hashlib.sha256(seed).hexdigest()
    assert new_seed() != seed
