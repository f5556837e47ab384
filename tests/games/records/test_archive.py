from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Collection
from datetime import datetime, timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from games import postal, records
from games.engines import dice
from games.engines.base import OrderError
from games.engines.choice.rules import ChoiceEngine, ChoiceState
from games.engines.first_player.rules import FirstPlayerEngine, FirstPlayerState
from games.models import Game, Order
from games.records import archive
from tests.factories import EVERY_HOUR, started_game

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
    game = started_game(now=now, seed=SEED, players=3)
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
    game = started_game(now=now, seed=SEED, players=2)
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
    game = started_game(now=now, seed=SEED, players=2)
    game = play_to_the_end(game)
    verdict = archive.verify(game)
    assert (verdict.ok, verdict.rolls) == (True, game.dice_drawn)
    call_command("verify", str(game.pk))
    assert capsys.readouterr().out.startswith(f"game {game.pk} verified: {game.dice_drawn} rolls")


def test_verify_fails_loudly_on_a_changed_roll_or_commitment(now: datetime) -> None:
    game = started_game(now=now, seed=SEED, players=2)
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
    game = started_game(now=now, seed=SEED, players=2)
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
    game = started_game(now=now, seed=SEED, players=2)
    game = play_to_the_end(game)
    Game.objects.filter(pk=game.pk).update(commitment=hashlib.sha256(b"another seed").hexdigest())
    game.refresh_from_db()
    assert archive.verify(game).problems == [
        "the seed does not match the commitment published at the start"
    ]


def test_verify_refuses_a_running_game_and_an_unknown_one(now: datetime) -> None:
    game = started_game(now=now, seed=SEED, players=2)
    with pytest.raises(CommandError, match="its seed is revealed only when it is finished"):
        call_command("verify", str(game.pk))
    with pytest.raises(CommandError, match="there is no game 999999"):
        call_command("verify", "999999")


def test_export_command_writes_json(now: datetime, capsys: pytest.CaptureFixture[str]) -> None:
    game = started_game(now=now, seed=SEED, players=1)
    call_command("export", str(game.pk))
    assert json.loads(capsys.readouterr().out)["players"] == ["ann"]


# --- A step's orders: each that took effect at once, a sealed one only as it counts -----

FIRST_PLAYER = FirstPlayerEngine()


# A First Player night in free order mode, for started_game with hourly steps.
FREE_ORDER = {"order_mode": "free"}


def send(game: Game, position: int, text: str, now: datetime) -> None:
    postal.accept_order(game_id=game.pk, position=position, text=text, source="web", now=now)


def night_state(game: Game) -> FirstPlayerState:
    state: FirstPlayerState = FIRST_PLAYER.state_from_json(Game.objects.get(pk=game.pk).state)
    return state


def roll_and_reroll(game: Game, position: int, now: datetime) -> None:
    """The seat rolls all its dice, then sets one aside and rerolls the rest if it can."""
    send(game, position, "roll all", now)
    hand = night_state(game).cups[position].hand
    if len(hand) > 1:
        send(game, position, f"reroll set-aside {hand[0]}", now)


def sent_in_turn(game: Game) -> list[dict[str, str]]:
    """Every order a seat sent as a record's move, in the order it was received."""
    orders = (
        Order.objects.filter(step__game=game)
        .exclude(source=Order.Source.DEFAULT)
        .order_by("received_at", "id")
    )
    return [{"player": o.seat.name, "order": o.canonical} for o in orders.select_related("seat")]


def assert_replays(game: Game) -> None:
    """The exported record replays to the game's final state and standings, and verifies."""
    game.refresh_from_db()
    replayed = records.run(json.loads(json.dumps(archive.export(game))))
    assert FIRST_PLAYER.state_to_json(replayed.state) == game.state
    names = list(game.seats.order_by("position").values_list("name", flat=True))
    standings = FIRST_PLAYER.standings(night_state(game)) or []
    assert records.describe(replayed)["standings"] == [
        {"player": names[s.seat], "place": s.place, "score": s.score} for s in standings
    ]
    assert archive.verify(game).problems == []


def test_every_roll_of_a_seat_in_the_rolling_step_is_exported_in_the_order_it_came(
    now: datetime,
) -> None:
    game = started_game(
        "first-player",
        now=now,
        seed=SEED,
        options=FREE_ORDER | {"rounds": 2},
        schedule_spec=EVERY_HOUR,
    )
    for _round in range(2):
        # Each seat acts at its own pace, several orders each in the one rolling step.
        for position in range(3):
            send(game, position, "ready", now)
        roll_and_reroll(game, 0, now)
        send(game, 1, "roll all", now)
        send(game, 1, "arrange desc", now)
        roll_and_reroll(game, 2, now)
        send(game, 0, "arrange desc", now)
        send(game, 2, "arrange desc", now)
    game.refresh_from_db()
    assert game.status == Game.Status.FINISHED
    # The seats, the GM's handovers, the orders, the steps: however many orders and steps
    # there are.
    with CaptureQueriesContext(connection) as queries:
        record = archive.export(game)
    assert len(queries) == 4
    assert record["moves"] == sent_in_turn(game)
    # Round 1's rolling was one step holding every seat's orders, interleaved.
    rolling = game.steps.get(number=2).orders.order_by("received_at", "id")
    assert list(rolling.values_list("seat__name", flat=True)) == [
        "ann", "ann", "bob", "bob", "cy", "cy", "ann", "cy",
    ]  # fmt: skip
    assert_replays(game)


def test_an_order_the_host_set_is_exported_as_its_own_move_and_verifies(
    now: datetime, seed_alone: None
) -> None:
    game = started_game(
        "first-player",
        now=now,
        seed=SEED,
        options=FREE_ORDER | {"rounds": 2},
        schedule_spec=EVERY_HOUR,
    )
    # Round 1: every seat is ready, ann rolls; then the host sets the order at the table.
    for position in range(3):
        send(game, position, "ready", now)
    send(game, 0, "roll all", now)
    postal.set_order(game.pk, names=["cy", "ann", "bob"], now=now, reason="house rule")
    # Round 2 is played by post to its end.
    for position in range(3):
        send(game, position, "ready", now)
    for position in range(3):
        send(game, position, "roll all", now)
        send(game, position, "arrange desc", now)
    game.refresh_from_db()
    assert game.status == Game.Status.FINISHED

    moves = archive.export(game)["moves"]
    host = moves.index({"host_order": ["cy", "ann", "bob"]})
    assert moves[:host] == [
        {"player": "ann", "order": "ready"},
        {"player": "bob", "order": "ready"},
        {"player": "cy", "order": "ready"},
        {"player": "ann", "order": "roll all"},
    ]
    assert moves[host + 1 :] == sent_in_turn(game)[4:]
    assert_replays(game)


def test_a_rolling_step_that_ends_at_its_deadline_is_exported_with_it(now: datetime) -> None:
    game = started_game(
        "first-player", now=now, seed=SEED, options=FREE_ORDER, schedule_spec=EVERY_HOUR
    )
    for position in range(3):
        send(game, position, "ready", now)
    send(game, 0, "roll all", now)
    send(game, 0, "arrange desc", now)
    send(game, 1, "roll 2", now)
    send(game, 2, "roll all", now)
    # Every seat sent an order, so no default is written: bob and cy's dice are arranged
    # high to low by the step's resolve at its deadline.
    step = game.steps.get(number=2)
    assert postal.resolve_due_step(step.pk, now=step.deadline) is True
    assert not step.orders.filter(source=Order.Source.DEFAULT).exists()
    game.refresh_from_db()
    assert game.status == Game.Status.FINISHED
    assert archive.export(game)["moves"] == [*sent_in_turn(game), {"deadline": True}]
    assert_replays(game)


def test_the_lines_that_stood_of_a_partly_refused_order_are_exported(now: datetime) -> None:
    game = started_game(
        "first-player", now=now, seed=SEED, options=FREE_ORDER, schedule_spec=EVERY_HOUR
    )
    for position in range(3):
        send(game, position, "ready", now)
    with pytest.raises(postal.OrderRejected) as refused:
        send(game, 0, "roll 3\narrange 6 6 6", now)
    assert refused.value.partly_played
    for position in range(3):
        send(game, position, "roll all\narrange desc" if position else "arrange desc", now)
    game.refresh_from_db()
    assert game.status == Game.Status.FINISHED
    assert archive.export(game)["moves"][3:] == [
        {"player": "ann", "order": "roll 3"},
        {"player": "ann", "order": "arrange desc"},
        {"player": "bob", "order": "roll all\narrange desc"},
        {"player": "cy", "order": "roll all\narrange desc"},
    ]
    assert_replays(game)


FOUR = ("ann", "bob", "cy", "dee")


@pytest.fixture
def seed_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every die (drawn, replayed, verified) from the seed alone, as if each game were game
    1: the token nights search seeds for a night that gives out two tokens, and with the
    game's id in the dice, which follows the tests run before, what a seed gives changes."""
    real = dice.face

    def face(seed: bytes, game_id: int, index: int, sides: int) -> int:
        return real(seed, 1, index, sides)

    monkeypatch.setattr(dice, "face", face)
    monkeypatch.setattr(archive, "face", face)


def token_night(now: datetime, *, early_processing: bool = True) -> tuple[Game, int]:
    """A night of four with tokens in round 3 of 3, rolling open, and the seat holding
    both tokens: each round before was rolled all and arranged high to low by everyone,
    and its second-to-last got a token; one gave theirs to the other in the gift window
    (seeds are tried until the two rounds gave out two tokens)."""
    for number in range(30):
        game = started_game(
            "first-player",
            now=now,
            seed=bytes([number]) * 32,
            players=FOUR,
            title="Token night",
            options={"order_mode": "free", "tokens": True, "rounds": 3},
            early_processing=early_processing,
        )
        while (state := night_state(game)).round < 3 or state.phase != "gifts":
            if state.phase == "commit":
                seat = next(s for s in state.participants if not state.cups[s].rolls)
                send(game, seat, "roll all\narrange desc", now)
            else:
                postal.resolve_now(game.pk, now=now)
        held = [seat for seat, tokens in enumerate(state.tokens) for _ in range(tokens)]
        if len(held) != 2:
            continue
        if held[0] != held[1]:
            send(game, held[0], f"give {FOUR[held[1]]} 1 tokens", now)
        for position in range(4):
            send(game, position, "ready", now)
        return game, held[1]
    pytest.fail("no seed gave out two tokens in two rounds")


def open_dice(game: Game, seat: int) -> list[int]:
    """The positions of the seat's arranged dice that can take a token."""
    row = night_state(game).cups[seat].row
    return [position for position, die in enumerate(row, start=1) if die.value < 6]


@pytest.mark.usefixtures("seed_alone")
def test_tokens_added_while_rolling_are_all_exported(now: datetime) -> None:
    game, holder = token_night(now)
    send(game, holder, "roll all", now)
    send(game, holder, "arrange desc", now)
    first, second = open_dice(game, holder)[:2]
    # Each token joins the secret arrangement: the second adds to the first.
    send(game, holder, f"token {first}", now)
    send(game, holder, f"token {second}", now)
    for position in range(4):
        if position != holder:
            send(game, position, "roll all", now)
            send(game, position, "arrange desc", now)
    game.refresh_from_db()
    assert game.status == Game.Status.FINISHED
    row = night_state(game).cups[holder].row
    assert (row[first - 1].token, row[second - 1].token) == (True, True)
    moves = archive.export(game)["moves"]
    assert [move for move in moves if "player" in move] == sent_in_turn(game)
    assert_replays(game)


@pytest.mark.usefixtures("seed_alone")
def test_a_token_while_the_others_roll_does_not_close_their_rolling(now: datetime) -> None:
    """Every seat has rolled once; the holder's tokens change nothing any seat owes: the
    rolling stays open for the others to arrange, and closes when the last has."""
    game, holder = token_night(now)
    send(game, holder, "roll all", now)
    send(game, holder, "arrange desc", now)
    others = [position for position in range(4) if position != holder]
    for position in others:
        send(game, position, "roll all", now)
    rolling = game.steps.get(number=Game.objects.get(pk=game.pk).step_number)
    first, second = open_dice(game, holder)[:2]
    send(game, holder, f"token {first}", now)
    send(game, holder, f"token {second}", now)

    rolling.refresh_from_db()
    assert (rolling.status, night_state(game).phase) == ("open", "commit")
    for position in others:
        send(game, position, "arrange desc", now)
    rolling.refresh_from_db()
    assert (rolling.status, rolling.closed_by) == ("done", "order")
    game.refresh_from_db()
    assert game.status == Game.Status.FINISHED
    assert not Order.objects.filter(step=rolling, source=Order.Source.DEFAULT).exists()
    assert_replays(game)


@pytest.mark.usefixtures("seed_alone")
def test_a_revised_token_order_of_a_window_is_exported_once_as_it_counts(now: datetime) -> None:
    game, holder = token_night(now, early_processing=False)
    send(game, holder, "roll all\narrange desc", now)
    for position in range(4):
        if position != holder:
            send(game, position, "roll all\narrange desc", now)
    state = night_state(game)
    assert (state.phase, state.window) == ("tokens", (holder,))
    window = game.steps.get(number=Game.objects.get(pk=game.pk).step_number)
    first, second = open_dice(game, holder)[:2]
    # Sealed until the window closes: the second order replaces the first.
    send(game, holder, f"token {first}", now)
    send(game, holder, f"token {second}", now)
    assert postal.resolve_due_step(window.pk, now=window.deadline) is True
    game.refresh_from_db()
    assert game.status == Game.Status.FINISHED
    orders = [move for move in archive.export(game)["moves"] if "player" in move]
    counting = {"player": FOUR[holder], "order": f"token {second}"}
    assert orders == [*sent_in_turn(game)[:-2], counting]
    assert_replays(game)


def another_choice(state: ChoiceState, text: str) -> str:
    """ann's order ``text`` with its first line chosen otherwise (the same five dice)."""
    first, *rest = text.splitlines()
    chosen = re.search(r"W\d \d\+\d \d\+\d", first)
    assert chosen is not None
    for w, a, b, c, d in itertools.permutations(re.findall(r"\d", chosen[0])):
        line = first.replace(chosen[0], f"W{w} {a}+{b} {c}+{d}")
        other = "\n".join([line, *rest])
        try:
            order = CHOICE.parse(state, 0, other)
        except OrderError:
            continue
        if CHOICE.canonical(state, 0, order) != text:
            return CHOICE.canonical(state, 0, order)
    pytest.fail(f"no other choice than {text!r}")


def test_a_revised_sealed_order_is_exported_once_as_it_counts(now: datetime) -> None:
    game = started_game(now=now, seed=SEED, players=2, early_processing=False)
    step = game.steps.get()
    state = CHOICE.state_from_json(Game.objects.get(pk=game.pk).state)
    ann, bob = (CHOICE.canonical(state, seat, CHOICE.default(state, seat)) for seat in (0, 1))
    revised = another_choice(state, ann)
    # Every order is in, but the step waits for its deadline: ann revises hers.
    for position, text in ((0, ann), (1, bob), (0, revised)):
        postal.accept_order(game_id=game.pk, position=position, text=text, source="web", now=now)
    assert postal.resolve_due_step(step.pk, now=step.deadline) is True
    game.refresh_from_db()
    record = archive.export(game)
    assert record["moves"] == [
        {"player": "bob", "order": bob},
        {"player": "ann", "order": revised},
    ]
    assert CHOICE.state_to_json(records.run(record).state) == game.state


def resolved_to(game: Game, number: int, now: datetime) -> Game:
    """``game`` with its steps resolved by its GM until step ``number`` is open."""
    while game.step_number < number:
        postal.resolve_now(game.pk, now=now)
        game.refresh_from_db()
    return game


def test_the_record_says_who_played_each_seat_from_which_postal_turn(
    now: datetime, seed_alone: None
) -> None:
    game = resolved_to(started_game(now=now, seed=SEED, players=3), 5, now)
    postal.replace_player(game.pk, position=1, name="dan", email="dan@example.org", now=now)
    game = resolved_to(game, 7, now)
    # The same person under another name: the record says the name each turn was played under.
    postal.replace_player(game.pk, position=2, name="cyd", email="cy@example.org", now=now)

    running = archive.export(game)
    finished = archive.export(play_to_the_end(game))

    assert (running["players"], running["played_by"]) == (
        ["ann", "dan", "cyd"],
        [
            "seat 1: ann",
            "seat 2: bob (postal turns 1-4), dan (from postal turn 5)",
            "seat 3: cy (postal turns 1-6), cyd (from postal turn 7)",
        ],
    )
    last = Game.objects.get(pk=game.pk).step_number

    def turns(first: int) -> str:
        # The game's dice follow its id, so it may end in the turn cyd took over.
        return f"postal turn {last}" if first == last else f"postal turns {first}-{last}"

    assert finished["played_by"] == [
        "seat 1: ann",
        f"seat 2: bob (postal turns 1-4), dan ({turns(5)})",
        f"seat 3: cy (postal turns 1-6), cyd ({turns(7)})",
    ]
    # The record replays as before: its moves name each seat as its players list does.
    assert CHOICE.state_to_json(records.run(finished).state) == Game.objects.get(pk=game.pk).state


def test_a_player_replaced_before_the_start_or_after_the_end_is_not_said_to_have_played(
    now: datetime,
) -> None:
    game = postal.create_game(
        gm=started_game(now=now, players=2).gm,
        engine_key="choice",
        players=[postal.Player("ann", "ann@example.org"), postal.Player("bob", "bob@example.org")],
        title="Handed over early",
    )
    postal.replace_player(game.pk, position=1, name="dan", email="dan@example.org", now=now)
    game = play_to_the_end(postal.start_game(game.pk, now=now, seed=SEED))
    assert game.finished_at is not None
    later = game.finished_at + timedelta(hours=1)
    postal.replace_player(game.pk, position=0, name="eve", email="eve@example.org", now=later)

    assert archive.export(Game.objects.get(pk=game.pk))["played_by"] == [
        "seat 1: ann",
        "seat 2: dan",
    ]
