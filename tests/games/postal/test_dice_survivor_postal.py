"""Dice Survivor by post: every action is a step with its own deadline, a beaten defender
is asked about a rematch in a step of their own, and when that deadline passes the sweep
applies the default (accept); a late answer is told what was applied."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from time_machine import TimeMachineFixture

from games import postal, tasks
from games.models import Event, Game, Order, Seat, Step
from moderator.mail.models import OutboundEmail
from tests.factories import EVERY_HOUR, started_game

pytestmark = pytest.mark.django_db

HOUR = timedelta(hours=1)
NAMES = ["ann", "bob", "cy"]


def current(game: Game) -> Step:
    game.refresh_from_db()
    return Step.objects.get(game=game, number=game.step_number)


def until_a_rematch_question(game: Game, now: datetime) -> Step:
    """The active player challenges the next seat until a defender loses and is asked.
    Whatever the dice, that happens within a few challenges (each is about even)."""
    names = dict(Seat.objects.filter(game=game).values_list("position", "name"))
    for _ in range(30):
        step = current(game)
        (prompt,) = step.prompts
        if prompt["kind"] == "rematch or accept":
            return step
        assert prompt["kind"] == "action"
        active = prompt["seat"]
        standing = {p["seat"]: p for p in public_view(game)["players"]}
        target = next(
            names[(active + offset) % len(names)]
            for offset in range(1, len(names))
            if not standing[(active + offset) % len(names)]["out"]
        )
        postal.accept_order(
            game_id=game.pk, position=active, text=f"challenge {target}", source="web", now=now
        )
        assert current(game).number == step.number + 1
    pytest.fail("no defender lost in 30 challenges")


def public_view(game: Game) -> dict[str, Any]:
    engine = game.rules
    view: dict[str, Any] = engine.view(engine.state_from_json(game.state), None)
    return view


def test_each_action_is_a_step_of_its_own_with_its_deadline(now: datetime) -> None:
    game = started_game("dice-survivor", now=now, schedule_spec=EVERY_HOUR)
    first = current(game)
    (prompt,) = first.prompts
    assert (prompt["kind"], first.deadline) == ("action", now + HOUR)
    later = now + timedelta(minutes=10)
    postal.accept_order(
        game_id=game.pk, position=prompt["seat"], text="extra", source="web", now=later
    )
    first.refresh_from_db()
    assert (first.status, first.closed_by) == ("done", "order")
    second = current(game)
    assert second.number == first.number + 1
    assert second.deadline == later + HOUR
    assert second.prompts[0]["hint"].startswith("turn 1, action 2 of 2")
    # The seat that owes the new step gets its report, with the Play Points; the others
    # get Dice Survivor's reports by default only when they owe an order.
    reports = OutboundEmail.objects.filter(
        dedupe_key__in=[f"report:{game.pk}:{second.number}:{p}" for p in range(3)]
    )
    assert [report.to for report in reports] == [f"{NAMES[prompt['seat']]}@example.org"]
    view = public_view(game)
    for report in reports:
        for player in view["players"]:
            line = f"  {player['name']:<12} {player['pp']} PP; rematches left 3; KO unused"
            assert line in report.text


def test_a_defender_who_misses_the_rematch_deadline_accepts_by_default(
    now: datetime, time_machine: TimeMachineFixture
) -> None:
    game = started_game("dice-survivor", now=now, schedule_spec=EVERY_HOUR)
    question = until_a_rematch_question(game, now)
    (prompt,) = question.prompts
    defender = prompt["seat"]
    # Nobody answers. Before the deadline the steps run leaves the step alone; after it, the
    # steps run resolves it (tasks run in this process in the tests).
    time_machine.move_to(question.deadline - timedelta(seconds=1), tick=False)
    assert tasks.hand_out_steps() == 0
    time_machine.move_to(question.deadline + timedelta(seconds=1), tick=False)
    assert tasks.hand_out_steps() == 1
    question.refresh_from_db()
    assert (question.status, question.closed_by) == ("done", "deadline")
    (default,) = Order.objects.filter(step=question)
    assert (default.seat.position, default.source, default.canonical) == (
        defender,
        "default",
        "accept",
    )
    assert Seat.objects.get(game=game, position=defender).nmr_count == 1
    texts = list(Event.objects.filter(step=question).values_list("text", flat=True))
    assert any("accept" in text for text in texts), texts
    # The game goes on with a new step that does not ask the defender again.
    after = current(game)
    assert after.number == question.number + 1
    assert all(p["kind"] != "rematch or accept" for p in after.prompts)
    # The defender's late answer is told what was applied, and changes nothing.
    with pytest.raises(postal.OrderRejected) as late:
        postal.accept_order(
            game_id=game.pk,
            position=defender,
            text="rematch",
            source="web",
            now=question.deadline + timedelta(seconds=1),
            step_number=question.number,
        )
    assert late.value.message.startswith(
        f"too late: postal turn {question.number} was resolved at "
    )
    # The dice follow the game's id: the turn after the question may be the defender's.
    now_owed = defender in after.prompted_seats
    assert late.value.message.endswith(
        " when its deadline passed (your no-moves default was played: accept); "
        f"postal turn {after.number} is open now; "
        + (
            "no rematch question is open for you"
            if now_owed
            else "you owe no order in it, so nothing was recorded"
        )
    )
    assert current(game).pk == after.pk
