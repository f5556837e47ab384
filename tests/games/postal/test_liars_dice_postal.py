"""Liar's Dice by post: cups stay private in every page, email, JSON and calendar of every
seat, for each profile; after a challenge everybody sees every cup of the round; a missed
bidding deadline spends the round reserve, a second one loses the round, both by the
sweep; at the end the seed is revealed and verify recomputes every cup."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from time_machine import TimeMachineFixture

from games import postal, tasks
from games.engines.liars_dice.rules import LiarsDiceEngine, behind
from games.models import Event, Game, Order, Seat, Step
from games.records import archive
from tests.factories import EVERY_HOUR, started_game
from tests.games.web.test_hidden import readable_by

pytestmark = pytest.mark.django_db

ENGINE = LiarsDiceEngine()
NAMES = ("ann", "bob", "cy", "dee")
PROFILES: dict[str, tuple[dict[str, Any], int]] = {
    "classic": ({}, 3),
    "genius_dm": ({"profile": "genius_dm", "summation": True}, 2),
    "genius_team": ({"profile": "genius_team"}, 4),
}


@pytest.fixture(autouse=True)
def frozen(time_machine: TimeMachineFixture, now: datetime) -> None:
    time_machine.move_to(now, tick=False)


def with_distinct_cups(
    now: datetime, options: dict[str, Any], players: int, distinct_sums: bool = False
) -> Game:
    """A started game whose cups all differ, so that each cup is one seat's secret (and,
    with ``distinct_sums``, their sums too). The dice depend on the game's id, so which
    seed gives that depends on the tests that ran before."""
    for number in range(40):
        game = started_game(
            "liars-dice",
            now=now,
            players=players,
            seed=bytes([number]) * 32,
            options=options,
            schedule_spec=EVERY_HOUR,
        )
        hands = ENGINE.state_from_json(game.state).hands
        sums = {sum(hand) for hand in hands}
        if len({tuple(hand) for hand in hands}) == len(hands) and (
            not distinct_sums or len(sums) == len(hands)
        ):
            return game
    pytest.fail("no seed gave distinct cups")


def cup_secrets(state: Any, seat: int) -> list[str]:
    """Every way a page, email or JSON writes the cup of ``seat``."""
    dice = " ".join(map(str, state.hands[seat]))
    name = state.players[seat]
    if state.profile == "genius_team":
        return [
            f"You watch {name}: {dice}",
            f"whose dice are {dice}",
            json.dumps(state.hands[seat]),
        ]
    return [f"Your cup: {dice}", f"your dice are {dice}", json.dumps(list(state.hands[seat]))]


@pytest.mark.parametrize("profile", PROFILES)
def test_no_seat_reads_a_cup_the_rules_do_not_show_it(now: datetime, profile: str) -> None:
    options, players = PROFILES[profile]
    # In Death Match each seat reads the sum of the other's cup: equal sums would read alike.
    game = with_distinct_cups(now, options, players, distinct_sums=profile == "genius_dm")
    state = ENGINE.state_from_json(game.state)
    # Who may read each cup: its owner, or in the team game only the player behind it.
    readers = {
        seat: {next(s for s in range(players) if behind(state, s) == seat)}
        if profile == "genius_team"
        else {seat}
        for seat in range(players)
    }
    seen = {seat: readable_by(game, seat, now) for seat in range(players)}
    for owner in range(players):
        for secret in cup_secrets(state, owner):
            for reader in range(players):
                visible = secret in seen[reader]
                assert visible == (reader in readers[owner]), (profile, owner, reader, secret)
    if profile == "genius_dm":
        for seat in range(2):
            total = sum(state.hands[1 - seat])
            line = f"Summation: your opponent's dice add up to {total}"
            assert (line in seen[seat], line in seen[1 - seat]) == (True, False)


def test_after_a_challenge_every_seat_reads_every_cup_of_the_round(now: datetime) -> None:
    game = with_distinct_cups(now, {}, 3)
    state = ENGINE.state_from_json(game.state)
    opener = state.turn
    postal.accept_order(game_id=game.pk, position=opener, text="bid 1 2", source="web", now=now)
    game.refresh_from_db()
    challenger = ENGINE.state_from_json(game.state).turn
    postal.accept_order(game_id=game.pk, position=challenger, text="liar", source="web", now=now)
    game.refresh_from_db()
    hands = "; ".join(
        f"{state.players[seat]} {' '.join(map(str, state.hands[seat]))}" for seat in range(3)
    )
    for seat in range(3):
        assert f"The dice: {hands}" in readable_by(game, seat, now)


def due(game: Game) -> Step:
    game.refresh_from_db()
    return Step.objects.get(game=game, number=game.step_number)


def sweep_after(step: Step, time_machine: TimeMachineFixture) -> None:
    time_machine.move_to(step.deadline + timedelta(seconds=1), tick=False)
    assert tasks.hand_out_steps() == 1


def test_a_missed_deadline_spends_the_reserve_and_a_second_loses_the_round(
    now: datetime, time_machine: TimeMachineFixture
) -> None:
    game = started_game(
        "liars-dice", now=now, players=2, options={"profile": "genius_dm"}, schedule_spec=EVERY_HOUR
    )
    first = due(game)
    (prompt,) = first.prompts
    seat = prompt["seat"]
    name = NAMES[seat]

    sweep_after(first, time_machine)
    first.refresh_from_db()
    assert (first.status, first.closed_by) == ("done", "deadline")
    second = due(game)
    assert [p["seat"] for p in second.prompts] == [seat]
    assert second.prompts[0]["hint"].endswith("; your round reserve is spent")
    assert second.deadline == first.deadline + timedelta(seconds=1) + timedelta(hours=1)
    state = ENGINE.state_from_json(Game.objects.get(pk=game.pk).state)
    assert (state.round, state.counts) == (1, (4, 4))
    last = Event.objects.filter(step=first).order_by("id").last()
    assert last is not None
    assert last.text == (
        f"round 1: {name} missed the deadline and spends the round reserve; {name} still owes "
        "the move"
    )

    sweep_after(second, time_machine)
    state = ENGINE.state_from_json(Game.objects.get(pk=game.pk).state)
    counts = [4, 4]
    counts[seat] = 5
    assert (state.round, state.counts, state.turn) == (2, tuple(counts), seat)
    texts = list(Event.objects.filter(step=second).values_list("text", flat=True))
    assert texts[0].startswith(f"round 1: {name} missed the deadline again and loses the round")
    assert texts[1] == f"{name} gains a die and now holds 5"
    assert Seat.objects.get(game=game, position=seat).nmr_count == 2
    assert Order.objects.filter(source="default", seat__position=seat).count() == 2


def test_a_match_lost_on_deadlines_ends_with_its_seed_and_every_cup_verified(
    now: datetime, time_machine: TimeMachineFixture
) -> None:
    game = started_game(
        "liars-dice",
        now=now,
        players=2,
        options={"profile": "genius_dm", "max_dice": 5},
        schedule_spec=EVERY_HOUR,
    )
    for _ in range(10):
        game.refresh_from_db()
        if game.status == Game.Status.FINISHED:
            break
        sweep_after(due(game), time_machine)
    game.refresh_from_db()
    assert (game.status, game.seed_revealed) == (Game.Status.FINISHED, True)
    verdict = archive.verify(game)
    assert (verdict.ok, verdict.problems, verdict.rolls) == (True, [], game.dice_drawn)
    assert game.dice_drawn == game.dice_rolls.count() > 8
