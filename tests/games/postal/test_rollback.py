"""The GM rolls back the last resolved step (docs/players.md, Rollback): the state the
resolution started from comes back, the step is open again with a new deadline, every seat
is told why; the resolution's dice stay, marked, the next resolution draws the next ones,
and the game still verifies and replays from its record."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from games import postal, records
from games.engines.choice.rules import ChoiceEngine
from games.lib import schedule
from games.models import DiceRoll, Event, Game, GMAction, Order, Seat, Step
from games.postal import steps
from games.records import archive
from moderator.mail.models import OutboundEmail
from tests.factories import GMFactory, started_game
from tests.games.playing import SeedOnlyDice
from tests.games.records.test_archive import play_to_the_end

pytestmark = pytest.mark.django_db

SEED = bytes(range(40, 72))
CHOICE = ChoiceEngine()
REASON = "Bob's postal order was entered for the wrong seat"


@pytest.fixture
def gm() -> User:
    return GMFactory.create(is_staff=True)


def default_text(game: Game, position: int) -> str:
    game.refresh_from_db()
    state = CHOICE.state_from_json(game.state)
    return CHOICE.canonical(state, position, CHOICE.default(state, position))


def order(game: Game, position: int, now: datetime) -> None:
    text = default_text(game, position)
    postal.accept_order(game_id=game.pk, position=position, text=text, source="web", now=now)


def resolved_once(gm: User, now: datetime) -> tuple[Game, dict[str, Any]]:
    """A game of three at step 2: ann ordered in step 1, bob and cy missed the deadline.
    Returns the game and what was true just before step 1 resolved."""
    game = started_game(now=now, seed=SEED, players=3, gm=gm, early_processing=False)
    order(game, 0, now + timedelta(hours=1))
    game.refresh_from_db()
    step = game.steps.get(number=1)
    before: dict[str, Any] = {
        "state": game.state,
        "dice_drawn": game.dice_drawn,
        "events": sorted(game.events.values_list("id", flat=True)),
        "nmr": dict(game.seats.values_list("position", "nmr_count")),
        "orders": list(step.orders.values_list("seat__position", "source", "canonical")),
    }
    assert postal.resolve_due_step(step.pk, now=step.deadline)
    game.refresh_from_db()
    assert (game.step_number, game.dice_drawn > before["dice_drawn"]) == (2, True)
    return game, before


def test_rollback_restores_the_state_and_opens_the_step_again(gm: User, now: datetime) -> None:
    game, before = resolved_once(gm, now)
    drawn = game.dice_drawn
    later = now + timedelta(days=3)
    OutboundEmail.objects.all().delete()
    step = postal.rollback(game.pk, reason=f"  {REASON} ", now=later)
    game.refresh_from_db()
    assert (game.state, game.step_number, game.status) == (before["state"], 1, "running")
    assert list(game.steps.values_list("number", "status")) == [(1, "open")]
    step.refresh_from_db()
    assert (step.state_after, step.closed_at, step.closed_by, step.resolved_from) == (
        None,
        None,
        "",
        None,
    )
    assert step.deadline == schedule.next_deadline(game.schedule, game.time_zone, later)
    assert step.deadline > later
    assert step.rollbacks == [
        {"first": before["dice_drawn"], "count": drawn - before["dice_drawn"]}
    ]
    # The players' orders stand; the resolution's defaults are gone, and its missed turns.
    assert (
        list(step.orders.values_list("seat__position", "source", "canonical")) == before["orders"]
    )
    assert dict(game.seats.values_list("position", "nmr_count")) == before["nmr"]
    assert set(game.seats.values_list("missed_in_row", flat=True)) == {0}
    # The dice stay, the resolution's marked; the next draw comes after them.
    assert game.dice_drawn == drawn
    assert list(DiceRoll.objects.filter(game=game).values_list("index", "rolled_back")) == [
        (index, index >= before["dice_drawn"]) for index in range(drawn)
    ]
    # The resolution's events are gone; the rollback is one.
    events = list(game.events.order_by("id").values_list("id", "text"))
    assert [event_id for event_id, _ in events[:-1]] == before["events"]
    assert events[-1][1] == f"The GM rolled back postal turn 1: {REASON}"
    assert list(
        GMAction.objects.filter(game=game).values_list("kind", "step_number", "reason")
    ) == [("rollback", 1, REASON)]
    assert step.gm_acted
    mails = list(OutboundEmail.objects.order_by("to").values_list("kind", "to", "text"))
    assert [(kind, to) for kind, to, _ in mails] == [
        ("deadline", seat.email) for seat in game.seats.order_by("email")
    ]
    for _, _, text in mails:
        assert "the GM rolled back its resolution" in " ".join(text.split())
        assert REASON in " ".join(text.split())


def test_the_new_resolution_draws_the_next_dice_and_the_game_verifies_and_replays(
    gm: User, now: datetime
) -> None:
    game, before = resolved_once(gm, now)
    rolled_back = game.dice_drawn
    later = now + timedelta(days=3)
    postal.rollback(game.pk, reason=REASON, now=later)
    order(game, 1, later)
    step = game.steps.get(number=1)
    old_reports = set(OutboundEmail.objects.filter(kind="report").values_list("id", flat=True))
    assert postal.resolve_due_step(step.pk, now=step.deadline)
    game.refresh_from_db()
    # The new step 2's reports are written beside the old ones and name the rollback.
    reports = OutboundEmail.objects.filter(kind="report").exclude(id__in=old_reports)
    assert sorted(reports.values_list("dedupe_key", flat=True)) == [
        f"report:{game.pk}:2:{position}" for position in range(3)
    ]
    assert all(
        f"The GM rolled back postal turn 1 ({REASON})" in " ".join(text.split())
        for text in reports.values_list("text", flat=True)
    )
    fresh = DiceRoll.objects.filter(game=game, rolled_back=False, index__gte=before["dice_drawn"])
    assert fresh.order_by("index").first().index == rolled_back  # type: ignore[union-attr]
    assert sorted(fresh.values_list("index", flat=True)) == list(
        range(rolled_back, game.dice_drawn)
    )
    # While running: the record's scripted dice (all of them) replay to the same state.
    record = archive.export(game)
    assert record["moves"][:4] == [
        {"rollback": True, "skip": [before["dice_drawn"], rolled_back - before["dice_drawn"]]},
        {"player": "ann", "order": before["orders"][0][2]},
        {"player": "bob", "order": Order.objects.get(step=step, seat__position=1).canonical},
        {"deadline": True},
    ]
    assert len(record["dice"]) == game.dice_drawn
    assert CHOICE.state_to_json(records.run(json.loads(json.dumps(record))).state) == game.state
    # Finished: verify checks every die, the rolled-back ones too, and the replay.
    game = play_to_the_end(game)
    verdict = archive.verify(game)
    assert (verdict.ok, verdict.problems, verdict.rolls) == (True, [], game.dice_drawn)
    record = archive.export(game)
    assert {
        "rollback": True,
        "skip": [before["dice_drawn"], rolled_back - before["dice_drawn"]],
    } in (record["moves"])
    assert CHOICE.state_to_json(records.run(json.loads(json.dumps(record))).state) == game.state


def test_a_replay_without_the_rollback_move_does_not_match(
    gm: User, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The dice from the seed alone: with a game's id in them, which follows the tests run
    # before, the rolled-back dice and the next ones could happen to lead to the same end.
    monkeypatch.setattr(steps, "VerifiableDice", SeedOnlyDice)
    game, _ = resolved_once(gm, now)
    later = now + timedelta(days=3)
    postal.rollback(game.pk, reason=REASON, now=later)
    step = game.steps.get(number=1)
    postal.resolve_due_step(step.pk, now=step.deadline)
    game = play_to_the_end(game)
    record = archive.export(game)
    # The dice were drawn as game 1's (SeedOnlyDice), whatever this game's id.
    record["game_id"] = 1
    assert CHOICE.state_to_json(records.run(json.loads(json.dumps(record))).state) == game.state
    record["moves"] = [move for move in record["moves"] if "rollback" not in move]
    # The rolled-back dice are read as the step's again: the sheets fill otherwise, and the
    # game ends before its last moves.
    with pytest.raises(records.RecordError) as caught:
        records.run(record)
    assert str(caught.value) == "move 11 (deadline): the game is over"


def test_a_tampered_rolled_back_die_fails_verify(gm: User, now: datetime) -> None:
    game, before = resolved_once(gm, now)
    postal.rollback(game.pk, reason=REASON, now=now + timedelta(days=3))
    game = play_to_the_end(game)
    roll = DiceRoll.objects.get(game=game, index=before["dice_drawn"])
    assert roll.rolled_back
    DiceRoll.objects.filter(pk=roll.pk).update(value=roll.value % roll.sides + 1)
    problems = archive.verify(game).problems
    assert len(problems) == 1 and problems[0].startswith(f"draw {before['dice_drawn']} ")


def test_a_malformed_rollback_move_is_a_broken_record() -> None:
    record = {"game": "choice", "players": ["ann", "bob"], "dice": [1] * 50}
    record["moves"] = [{"rollback": True, "skip": [-1, 2]}]
    with pytest.raises(records.RecordError) as caught:
        records.run(record)
    assert caught.value.status == records.BROKEN_RECORD


def snapshot(game: Game) -> tuple[Any, ...]:
    game.refresh_from_db()
    return (
        (game.state, game.step_number, game.status, game.dice_drawn),
        list(Step.objects.filter(game=game).order_by("number").values()),
        list(Order.objects.filter(step__game=game).order_by("id").values()),
        list(DiceRoll.objects.filter(game=game).order_by("index").values()),
        list(Event.objects.filter(game=game).order_by("id").values()),
        list(Seat.objects.filter(game=game).order_by("id").values()),
        GMAction.objects.filter(game=game).count(),
        OutboundEmail.objects.count(),
    )


def refused(game: Game, message: str, now: datetime, reason: str = REASON) -> None:
    kept = snapshot(game)
    with pytest.raises(postal.PostalError) as caught:
        postal.rollback(game.pk, reason=reason, now=now)
    assert caught.value.message == message
    assert snapshot(game) == kept


def test_refusals_change_nothing(gm: User, now: datetime) -> None:
    fresh = started_game(now=now, seed=SEED, players=2, gm=gm)
    refused(fresh, "the game has no resolved step to roll back", now)
    game, _ = resolved_once(gm, now)
    refused(game, "give the players a reason for rolling the step back", now, reason="  ")
    refused(game, "the reason must be a single line without control characters", now, "a\nb")
    order(game, 2, now + timedelta(days=2))
    refused(
        game,
        "step 2 already has orders: a step can be rolled back only until the next one gets "
        "its first order",
        now,
    )
    finished = play_to_the_end(started_game(now=now, seed=SEED, players=2, gm=gm))
    refused(finished, "only a running or paused game can be rolled back; this one is finished", now)


def test_a_step_closed_without_a_resolution_is_refused(gm: User, now: datetime) -> None:
    game, _ = resolved_once(gm, now)
    Step.objects.filter(game=game, number=1).update(resolved_from=None)
    refused(
        game,
        "step 1 was closed by an order that took effect at once (or before rollbacks "
        "existed), not resolved: it cannot be rolled back",
        now,
    )


def test_a_paused_game_rolls_back_and_only_once(gm: User, now: datetime) -> None:
    game, before = resolved_once(gm, now)
    postal.pause(game.pk, now=now, reason="")
    postal.rollback(game.pk, reason=REASON, now=now)
    game.refresh_from_db()
    assert (game.status, game.step_number, game.state) == ("paused", 1, before["state"])
    refused(game, "the game has no resolved step to roll back", now)


# --- the GM panel ------------------------------------------------------------------------------


def gm_page(gm: User, game: Game) -> str:
    client = Client()
    client.force_login(gm)
    return client.get(reverse("gm:game", args=[game.pk])).content.decode()


def post(gm: User, game: Game, **data: str) -> list[str]:
    client = Client()
    client.force_login(gm)
    # The step the page offers to roll back, as its form says (gm_forms.ShownStep).
    data.setdefault("step", str(Game.objects.get(pk=game.pk).step_number - 1))
    response = client.post(reverse("gm:act", args=[game.pk, "rollback"]), data, follow=True)
    assert response.redirect_chain == [(reverse("gm:game", args=[game.pk]), 302)]
    return [str(message) for message in response.context["messages"]]


def test_the_panel_offers_the_rollback_only_when_allowed_and_it_works(
    gm: User, now: datetime
) -> None:
    fresh = started_game(now=now, seed=SEED, players=2, gm=gm)
    assert 'id="rollback-form"' not in gm_page(gm, fresh)
    game, before = resolved_once(gm, now)
    page = gm_page(gm, game)
    assert 'id="rollback-form"' in page and "Roll back step 1</h3>" in page
    kept = snapshot(game)
    assert post(gm, game, reason=" ") == [
        "Reason (every player is emailed it): give the players a reason for rolling the step back"
    ]
    assert snapshot(game) == kept
    [message] = post(gm, game, reason=REASON)
    game.refresh_from_db()
    deadline = schedule.local_time(game.steps.get().deadline, game.time_zone)
    assert message == (
        f"Step 1 is open again until {deadline}; its orders stand and every player is emailed why."
    )
    assert (game.state, game.step_number) == (before["state"], 1)
    assert 'id="rollback-form"' not in gm_page(gm, game)


def test_the_panel_says_why_a_rollback_is_refused(gm: User, now: datetime) -> None:
    game, _ = resolved_once(gm, now)
    gm_page(gm, game)
    order(game, 2, now + timedelta(days=2))
    assert 'id="rollback-form"' not in gm_page(gm, game)
    kept = snapshot(game)
    assert post(gm, game, reason=REASON) == [
        "step 2 already has orders: a step can be rolled back only until the next one gets "
        "its first order"
    ]
    assert snapshot(game) == kept


def test_a_rollback_after_a_civil_disorder_takeover_works_and_keeps_the_counters_right(
    gm: User, now: datetime
) -> None:
    missed = postal.MissedTurns(civil_disorder_after=1)
    game = started_game(now=now, seed=SEED, players=3, gm=gm, early_processing=False, missed=missed)
    order(game, 0, now + timedelta(hours=1))
    step = game.steps.get(number=1)
    assert postal.resolve_due_step(step.pk, now=step.deadline)
    counters = ("position", "nmr_count", "missed_in_row", "civil_disorder_at")
    assert list(game.seats.order_by("position").values_list(*counters)) == [
        (0, 0, 0, None),
        (1, 1, 1, step.deadline),
        (2, 1, 1, step.deadline),
    ]
    # Bob's seat in civil disorder is taken over by Dee: her counters start at 0.
    later = step.deadline + timedelta(hours=1)
    postal.replace_player(game.pk, position=1, name="dee", email="dee@example.org", now=later)
    [message] = post(gm, game, reason=REASON)
    assert message.startswith("Step 1 is open again until ")
    game.refresh_from_db()
    assert list(game.steps.values_list("number", "status")) == [(1, "open")]
    # Dee keeps her clean record; Cy's missed turn and civil disorder are undone.
    assert list(game.seats.order_by("position").values_list(*counters)) == [
        (0, 0, 0, None),
        (1, 0, 0, None),
        (2, 0, 0, None),
    ]
