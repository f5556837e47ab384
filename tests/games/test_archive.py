from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from datetime import datetime

import pytest
from django.core.management import CommandError, call_command

from games import archive, postal, records
from games.engines.choice.rules import ChoiceEngine
from games.models import Game
from tests.factories import choice_game

pytestmark = pytest.mark.django_db

SEED = bytes(range(100, 132))
CHOICE = ChoiceEngine()


def play_to_the_end(game: Game, orders_from: Collection[int] = ()) -> Game:
    """Seats in ``orders_from`` send their default as a typed order; the rest miss deadlines."""
    while True:
        game.refresh_from_db()
        if game.status == Game.Status.FINISHED:
            return game
        step = game.steps.get(number=game.step_number)
        state = CHOICE.state_from_json(game.state)
        for position in sorted(orders_from):
            if CHOICE.has_order(state, position) or position not in step.prompted_seats:
                continue
            text = CHOICE.canonical(state, position, CHOICE.default(state, position))
            postal.accept_order(
                game_id=game.pk, position=position, text=text, source="web", now=step.opened_at
            )
        game.refresh_from_db()
        if game.step_number == step.number:
            postal.resolve_due_step(step.pk, now=step.deadline)


def test_a_finished_game_exports_its_seed_and_replays_to_the_same_standings(now: datetime) -> None:
    game = choice_game(3)
    postal.start_game(game.pk, now=now, seed=SEED)
    game = play_to_the_end(game, orders_from={0})
    record = archive.export(game)
    assert (record["seed"], record["game_id"], "dice" in record) == (SEED.hex(), game.pk, False)
    assert {
        "player": "ann",
        "order": game.steps.get(number=1).orders.get(seat__position=0).canonical,
    } in record["moves"]
    replayed = records.run(json.loads(json.dumps(record)))
    assert CHOICE.state_to_json(replayed.state) == game.state
    standings = CHOICE.standings(CHOICE.state_from_json(game.state)) or []
    assert records.describe(replayed)["standings"] == [
        {"player": ["ann", "bob", "cy"][s.seat], "place": s.place, "score": s.score}
        for s in standings
    ]


def test_a_running_game_exports_its_dice_not_its_seed(now: datetime) -> None:
    game = choice_game(2)
    postal.start_game(game.pk, now=now, seed=SEED)
    step = game.steps.get()
    postal.resolve_due_step(step.pk, now=step.deadline)
    game.refresh_from_db()
    state = CHOICE.state_from_json(game.state)
    text = CHOICE.canonical(state, 1, CHOICE.default(state, 1))
    postal.accept_order(game_id=game.pk, position=1, text=text, source="web", now=step.deadline)
    game.refresh_from_db()
    record = archive.export(game)
    assert "seed" not in record
    assert SEED.hex() not in json.dumps(record)
    assert record["dice"] == list(game.dice_rolls.values_list("value", flat=True))
    assert record["moves"] == [{"deadline": True}, {"player": "bob", "order": text}]
    assert CHOICE.state_to_json(records.run(record).state) == game.state


def test_verify_passes_for_an_honest_game_and_the_command_says_so(
    now: datetime, capsys: pytest.CaptureFixture[str]
) -> None:
    game = choice_game(2)
    postal.start_game(game.pk, now=now, seed=SEED)
    game = play_to_the_end(game)
    verdict = archive.verify(game)
    assert (verdict.ok, verdict.rolls) == (True, game.dice_drawn)
    call_command("verify", str(game.pk))
    assert capsys.readouterr().out.startswith(f"game {game.pk} verified: {game.dice_drawn} rolls")


def test_verify_fails_loudly_on_a_changed_roll_or_commitment(now: datetime) -> None:
    game = choice_game(2)
    postal.start_game(game.pk, now=now, seed=SEED)
    game = play_to_the_end(game)
    roll = game.dice_rolls.get(index=3)
    roll.value = roll.value % 6 + 1
    roll.save()
    Game.objects.filter(pk=game.pk).update(commitment="0" * 64)
    game.refresh_from_db()
    problems = archive.verify(game).problems
    assert problems[0] == "the seed does not match the commitment published at the start"
    assert problems[1] == (
        f"draw 3 (d6) is stored as {roll.value} but the seed gives {(roll.value - 2) % 6 + 1}"
    )
    with pytest.raises(CommandError) as caught:
        call_command("verify", str(game.pk))
    assert str(caught.value).startswith(f"game {game.pk} FAILED verification:")


def test_verify_finds_a_single_altered_roll_and_nothing_else(now: datetime) -> None:
    game = choice_game(2)
    postal.start_game(game.pk, now=now, seed=SEED)
    game = play_to_the_end(game)
    last = game.dice_drawn - 1
    roll = game.dice_rolls.get(index=last)
    honest = roll.value
    roll.value = honest % roll.sides + 1
    roll.save()
    verdict = archive.verify(game)
    assert (verdict.ok, verdict.rolls) == (False, game.dice_drawn)
    assert verdict.problems == [
        f"draw {last} (d{roll.sides}) is stored as {roll.value} but the seed gives {honest}"
    ]


def test_verify_finds_a_commitment_changed_after_the_start(now: datetime) -> None:
    game = choice_game(2)
    postal.start_game(game.pk, now=now, seed=SEED)
    game = play_to_the_end(game)
    Game.objects.filter(pk=game.pk).update(commitment=hashlib.sha256(b"another seed").hexdigest())
    game.refresh_from_db()
    assert archive.verify(game).problems == [
        "the seed does not match the commitment published at the start"
    ]


def test_verify_refuses_a_running_game_and_an_unknown_one(now: datetime) -> None:
    game = choice_game(2)
    postal.start_game(game.pk, now=now, seed=SEED)
    with pytest.raises(CommandError, match="its seed is revealed only when it is finished"):
        call_command("verify", str(game.pk))
    with pytest.raises(CommandError, match="there is no game 999999"):
        call_command("verify", "999999")


def test_export_command_writes_json(now: datetime, capsys: pytest.CaptureFixture[str]) -> None:
    game = choice_game(1)
    postal.start_game(game.pk, now=now, seed=SEED)
    call_command("export", str(game.pk))
    assert json.loads(capsys.readouterr().out)["players"] == ["ann"]
