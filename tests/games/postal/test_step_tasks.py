"""The sweep hands due steps to the workers in batches; a batch resolves each of its steps
in its own transaction, and skips those already resolved."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.db import connections
from pytest_django.fixtures import Settings

from games import postal, tasks
from games.models import Game, Step
from games.postal import resolving
from moderator import queues
from moderator.mail.models import OutboundEmail
from tests.factories import started_game

pytestmark = pytest.mark.django_db


@pytest.fixture
def step_tasks(published: Callable[[Any], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return published(tasks.resolve_due_steps)


def due_games(count: int, now: datetime) -> list[Game]:
    return [started_game(now=now - timedelta(days=3), players=2) for _ in range(count)]


def test_due_steps_get_one_task_per_step_batch_less_those_waiting(
    settings: Settings, step_tasks: list[dict[str, Any]], now: datetime
) -> None:
    settings.STEP_BATCH = 2
    due_games(5, now)
    started_game(now=now, players=2)  # its deadline is two days away
    assert tasks.top_up_steps(now, waiting=0) == 3
    assert step_tasks == [{"limit": 2}] * 3
    step_tasks.clear()
    assert tasks.top_up_steps(now, waiting=1) == 2
    assert tasks.top_up_steps(now, waiting=3) == 0
    assert tasks.top_up_steps(now, waiting=7) == 0
    assert step_tasks == [{"limit": 2}] * 2


def test_no_due_step_publishes_nothing(step_tasks: list[dict[str, Any]], now: datetime) -> None:
    started_game(now=now, players=2)
    assert tasks.top_up_steps(now, waiting=0) == 0
    assert step_tasks == []


def test_a_paused_game_past_its_deadline_gets_no_task_until_it_is_resumed(
    settings: Settings,
    step_tasks: list[dict[str, Any]],
    now: datetime,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings.STEP_BATCH = 1
    monkeypatch.setattr(queues, "waiting", lambda queue: 0)
    paused, abandoned, waiting = due_games(3, now)  # due since yesterday
    postal.pause(paused.pk, now=now - timedelta(days=2))
    Game.objects.filter(pk=abandoned.pk).update(status=Game.Status.ABANDONED)
    Game.objects.filter(pk=waiting.pk).update(needs_gm="step 1 failed 5 times")
    for _ in range(12):  # a minute of the steps run
        assert tasks.hand_out_steps() == 0
    assert step_tasks == []
    assert postal.due_step_ids(now) == []
    assert tasks.resolve_due_steps(limit=10) == 0
    # Resumed, its deadline moves on by the two days it was paused: then it resolves.
    postal.resume(paused.pk, now=now)
    step = paused.steps.get()
    assert step.deadline == now + timedelta(days=1)
    assert tasks.hand_out_steps() == 0
    later = step.deadline + timedelta(seconds=1)
    assert postal.count_due_steps(later, most=10) == 1
    assert tasks.top_up_steps(later, waiting=0) == 1
    assert step_tasks == [{"limit": 1}]
    assert postal.resolve_due_steps(now=later, limit=1) == 1
    assert list(paused.steps.values_list("number", "status")) == [(1, "done"), (2, "open")]


def test_the_tasks_waiting_are_counted_at_most_step_tasks_most(
    settings: Settings, step_tasks: list[dict[str, Any]], now: datetime
) -> None:
    settings.STEP_BATCH, settings.STEP_TASKS_MOST = 1, 2
    due_games(3, now)
    assert tasks.top_up_steps(now, waiting=0) == 2


def test_the_steps_run_counts_the_steps_queue_on_the_broker(
    settings: Settings,
    step_tasks: list[dict[str, Any]],
    now: datetime,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings.STEP_BATCH = 1
    due_games(2, now)
    asked: list[str] = []

    def one_waiting(queue: str) -> int:
        asked.append(queue)
        return 1

    monkeypatch.setattr(queues, "waiting", one_waiting)
    assert tasks.hand_out_steps() == 1
    assert asked == ["steps"]


def test_a_task_claims_due_steps_up_to_its_limit_and_resolves_each_once(now: datetime) -> None:
    games = due_games(3, now)
    ids = [game.steps.get().pk for game in games]
    started_game(now=now, players=2)  # not due
    assert tasks.resolve_due_steps(limit=2) == 2
    assert Step.objects.filter(pk__in=ids, status="done").count() == 2
    assert tasks.resolve_due_steps(limit=2) == 1
    assert tasks.resolve_due_steps(limit=2) == 0  # again, as after a worker died
    assert [game.steps.count() for game in games] == [2, 2, 2]
    assert Step.objects.filter(status="open", deadline__lte=now).count() == 0


def test_a_claim_pages_past_the_steps_of_games_waiting_for_their_gm(
    now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resolving, "CLAIM_PAGE", 1)
    games = due_games(3, now)
    ids = [game.steps.get().pk for game in games]
    for hours, step_id in zip((3, 2, 1), ids, strict=True):
        Step.objects.filter(pk=step_id).update(deadline=now - timedelta(hours=hours))
    Game.objects.filter(pk__in=[games[0].pk, games[1].pk]).update(needs_gm="step 1 failed")
    assert postal.resolve_due_steps(now=now, limit=5) == 1
    steps = Step.objects.in_bulk(ids)
    assert [steps[i].status for i in ids] == ["open", "open", "done"]
    # Their steps are not due: no task is handed out for them.
    assert postal.count_due_steps(now, most=10) == 0
    assert postal.resolve_due_steps(now=now, limit=5) == 0


def test_steps_another_worker_resolved_after_the_page_was_read_do_not_count(
    now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    games = due_games(4, now)
    ids = [game.steps.get().pk for game in games]
    read_page = resolving._DuePages._next_page

    def another_worker_resolves_two(pages: resolving._DuePages) -> None:
        read_page(pages)  # the page holds all four; then another worker takes two of them
        for step_id in ids[:2]:
            assert postal.resolve_due_step(step_id, now=now)

    monkeypatch.setattr(resolving._DuePages, "_next_page", another_worker_resolves_two)
    # Its limit is spent on steps it resolved itself: the other two.
    assert postal.resolve_due_steps(now=now, limit=2) == 2
    assert Step.objects.filter(pk__in=ids, status="done").count() == 4
    assert [game.steps.count() for game in games] == [2, 2, 2, 2]


# Another worker's row lock (SELECT ... FOR UPDATE), which SQLite has not.
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_claim_skips_the_steps_of_a_game_another_worker_holds(now: datetime) -> None:
    games = due_games(2, now)
    ids = [game.steps.get().pk for game in games]
    Step.objects.filter(pk=ids[0]).update(deadline=now - timedelta(days=5))
    # The first game is locked by another transaction (another worker resolving it).
    other = connections.create_connection("default")
    try:
        other.set_autocommit(False)
        with other.cursor() as cursor:
            cursor.execute("SELECT id FROM games_game WHERE id = %s FOR UPDATE", [games[0].pk])
            assert postal.resolve_due_steps(now=now, limit=5) == 1
        other.rollback()
    finally:
        other.close()
    steps = Step.objects.in_bulk(ids)
    assert [steps[i].status for i in ids] == ["open", "done"]
    assert postal.resolve_due_steps(now=now, limit=5) == 1


def test_a_claimed_step_that_fails_is_counted_and_not_tried_again_by_the_same_task(
    now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    games = due_games(3, now)
    ids = [game.steps.get().pk for game in games]
    resolve = resolving.resolve
    tried: list[int] = []

    def broken_for_the_second(game: Game, step: Step, *args: Any, **kwargs: Any) -> list[int]:
        tried.append(step.pk)
        if step.pk == ids[1]:
            raise RuntimeError("the engine broke")
        return resolve(game, step, *args, **kwargs)

    monkeypatch.setattr(resolving, "resolve", broken_for_the_second)
    assert tasks.resolve_due_steps(limit=10) == 2
    assert sorted(tried) == sorted(ids)  # each once
    steps = Step.objects.in_bulk(ids)
    assert [(steps[i].status, steps[i].failures) for i in ids] == [
        ("done", 0),
        ("open", 1),
        ("done", 0),
    ]


def test_a_batch_resolves_each_due_step_once_even_when_delivered_twice(now: datetime) -> None:
    games = [started_game(now=now - timedelta(days=3), players=2) for _ in range(3)]
    ids = [game.steps.get().pk for game in games]
    assert tasks.resolve_steps(step_ids=ids) == 3
    assert tasks.resolve_steps(step_ids=ids) == 0  # again, as after a worker died
    assert list(Step.objects.filter(pk__in=ids).values_list("status", flat=True)) == ["done"] * 3
    assert [game.steps.count() for game in games] == [2, 2, 2]


def test_a_step_that_fails_does_not_keep_the_others_of_its_batch_from_resolving(
    now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    games = [started_game(now=now - timedelta(days=3), players=2) for _ in range(3)]
    ids = [game.steps.get().pk for game in games]
    resolve = resolving.resolve

    def broken_for_the_second(game: Game, step: Step, *args: Any, **kwargs: Any) -> list[int]:
        if step.pk == ids[1]:
            raise RuntimeError("the engine broke")
        return resolve(game, step, *args, **kwargs)

    monkeypatch.setattr(resolving, "resolve", broken_for_the_second)
    assert tasks.resolve_steps(step_ids=ids) == 2
    steps = Step.objects.in_bulk(ids)
    assert [(steps[i].status, steps[i].failures) for i in ids] == [
        ("done", 0),
        ("open", 1),
        ("done", 0),
    ]


@pytest.fixture
def mail_published(published: Callable[[Any], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    from moderator.mail import tasks as mail_tasks

    return published(mail_tasks.send_emails)


def reports_of(games: list[Game]) -> list[int]:
    """The step-2 reports of the two seats of each of ``games``."""
    keys = [f"report:{game.pk}:2:{position}" for game in games for position in (0, 1)]
    return list(
        OutboundEmail.objects.filter(dedupe_key__in=keys)
        .order_by("id")
        .values_list("id", flat=True)
    )


@pytest.mark.django_db(transaction=True)
def test_a_batch_hands_the_reports_of_all_its_steps_to_the_mail_workers_at_once(
    now: datetime, mail_published: list[dict[str, Any]]
) -> None:
    games = [started_game(now=now - timedelta(days=3), players=2) for _ in range(3)]
    mail_published.clear()  # the step-1 reports of start_game
    assert tasks.resolve_steps(step_ids=[game.steps.get().pk for game in games]) == 3
    assert mail_published == [{"outbound_ids": reports_of(games)}]
    assert len(reports_of(games)) == 6


@pytest.mark.django_db(transaction=True)
def test_a_batch_that_breaks_off_still_hands_over_the_reports_of_the_steps_it_resolved(
    now: datetime, mail_published: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    games = [started_game(now=now - timedelta(days=3), players=2) for _ in range(3)]
    mail_published.clear()
    ids = [game.steps.get().pk for game in games]
    count_failure = resolving._count_failure
    resolve = resolving.resolve

    def database_gone_for_the_third(game: Game, step: Step, *args: Any, **kwargs: Any) -> list[int]:
        if step.pk == ids[2]:
            raise RuntimeError("the server closed the connection")
        return resolve(game, step, *args, **kwargs)

    def cannot_count_either(step_id: int, error: Exception) -> None:
        raise RuntimeError("the server closed the connection")

    monkeypatch.setattr(resolving, "resolve", database_gone_for_the_third)
    monkeypatch.setattr(resolving, "_count_failure", cannot_count_either)
    with pytest.raises(RuntimeError):
        tasks.resolve_steps(step_ids=ids)
    monkeypatch.setattr(resolving, "_count_failure", count_failure)
    assert mail_published == [{"outbound_ids": reports_of(games[:2])}]
    assert len(reports_of(games[:2])) == 4
    assert Step.objects.get(pk=ids[2]).status == Step.Status.OPEN
