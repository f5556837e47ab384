"""The sweep hands due steps to the workers in batches; a batch resolves each of its steps
in its own transaction, and skips those already resolved."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from games import postal, tasks
from games.models import Step
from tests.factories import choice_game

pytestmark = pytest.mark.django_db


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(tasks.resolve_steps, "delay", lambda **kwargs: calls.append(kwargs))
    return calls


def test_due_steps_go_out_step_batch_to_a_task(settings, published):
    settings.STEP_BATCH = 4
    tasks.hand_out_steps(list(range(1, 11)))
    assert published == [
        {"step_ids": [1, 2, 3, 4]},
        {"step_ids": [5, 6, 7, 8]},
        {"step_ids": [9, 10]},
    ]


def test_no_due_step_publishes_nothing(published):
    tasks.hand_out_steps([])
    assert published == []


def test_the_sweep_hands_out_every_due_step_and_only_those(settings, published, now):
    settings.STEP_BATCH = 2
    due = [postal.start_game(choice_game(2).pk, now=now - timedelta(days=3)) for _ in range(3)]
    postal.start_game(choice_game(2).pk, now=now)  # its deadline is two days away
    assert tasks.sweep()["steps"] == 3
    ids = [game.steps.get().pk for game in due]
    assert published == [{"step_ids": ids[:2]}, {"step_ids": ids[2:]}]


def test_a_batch_resolves_each_due_step_once_even_when_delivered_twice(now):
    games = [postal.start_game(choice_game(2).pk, now=now - timedelta(days=3)) for _ in range(3)]
    ids = [game.steps.get().pk for game in games]
    assert tasks.resolve_steps(step_ids=ids) == 3
    assert tasks.resolve_steps(step_ids=ids) == 0  # again, as after a worker died
    assert list(Step.objects.filter(pk__in=ids).values_list("status", flat=True)) == ["done"] * 3
    assert [game.steps.count() for game in games] == [2, 2, 2]


def test_a_step_that_fails_does_not_keep_the_others_of_its_batch_from_resolving(now, monkeypatch):
    games = [postal.start_game(choice_game(2).pk, now=now - timedelta(days=3)) for _ in range(3)]
    ids = [game.steps.get().pk for game in games]
    resolve = postal._resolve

    def broken_for_the_second(game, step, *args):
        if step.pk == ids[1]:
            raise RuntimeError("the engine broke")
        return resolve(game, step, *args)

    monkeypatch.setattr(postal, "_resolve", broken_for_the_second)
    assert tasks.resolve_steps(step_ids=ids) == 2
    steps = Step.objects.in_bulk(ids)
    assert [(steps[i].status, steps[i].failures) for i in ids] == [
        ("done", 0),
        ("open", 1),
        ("done", 0),
    ]
