"""Deadlines at the edges: an order one second before the deadline counts, one second
after is refused even when the sweep runs late; a daily game swept every few minutes
across both daylight-saving changes of a year resolves every step once, none skipped."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from pytest_django.fixtures import Settings

from games import postal
from games.engines.choice.rules import ChoiceEngine
from games.models import Game, Order, Step
from tests.factories import started_game

pytestmark = pytest.mark.django_db

CHOICE = ChoiceEngine()
BERLIN = ZoneInfo("Europe/Berlin")


def order_text(game: Game, position: int) -> str:
    game.refresh_from_db()
    state = CHOICE.state_from_json(game.state)
    return CHOICE.canonical(state, position, CHOICE.default(state, position))


def test_an_order_a_second_early_counts_and_a_second_late_does_not_though_the_sweep_is_late(
    now: datetime,
) -> None:
    game = started_game(now=now, players=2, early_processing=False)
    step = Step.objects.get(game=game, number=1)
    text = order_text(game, 0)
    postal.accept_order(
        game_id=game.pk,
        position=0,
        text=text,
        source="web",
        now=step.deadline - timedelta(seconds=1),
    )
    with pytest.raises(postal.OrderRejected) as late:
        postal.accept_order(
            game_id=game.pk,
            position=1,
            text=order_text(game, 1),
            source="web",
            now=step.deadline + timedelta(seconds=1),
        )
    assert late.value.message == (
        "too late: the deadline passed at Wed 25 Nov 2026 18:00 UTC, so nothing was recorded; "
        "postal turn 1 is being resolved and its report comes by email"
    )
    # The sweep comes an hour late: the step is still open, and the late order did nothing.
    assert Step.objects.get(pk=step.pk).status == "open"
    assert postal.resolve_due_step(step.pk, now=step.deadline + timedelta(hours=1)) is True
    orders = Order.objects.filter(step=step).order_by("seat__position")
    assert [(o.seat.position, o.source) for o in orders] == [(0, "web"), (1, "default")]


@pytest.mark.parametrize(
    "start",
    [
        datetime(2026, 3, 26, 12, 0, tzinfo=UTC),  # into summer time (Sun 29 March)
        datetime(2026, 10, 22, 12, 0, tzinfo=UTC),  # out of it (Sun 25 October)
    ],
    ids=["spring", "autumn"],
)
def test_a_daily_game_swept_across_a_dst_change_resolves_each_step_once(
    start: datetime, settings: Settings
) -> None:
    settings.STEP_FAILURE_LIMIT = 1
    game = started_game(
        now=start,
        players=2,
        options={"rolls_per_turn": 1},
        time_zone="Europe/Berlin",
        schedule_spec={"kind": "daily", "time": "02:30"},
    )
    moment = start
    resolved: list[int] = []
    while moment < start + timedelta(days=6):
        moment += timedelta(minutes=7)
        for step_id in postal.due_step_ids(moment):
            assert postal.resolve_due_step(step_id, now=moment) is True
            resolved.append(step_id)
        # A second sweep at the same moment finds nothing more to do.
        assert postal.due_step_ids(moment) == []
    steps = list(Step.objects.filter(game=game).order_by("number"))
    assert len(resolved) == len(set(resolved)) == len(steps) - 1 == 6
    deadlines = [step.deadline.astimezone(BERLIN) for step in steps]
    # 02:30 every day; on the spring day 02:30 does not exist and the step falls due an
    # hour later, 03:30 CEST (games.lib.schedule); no day is skipped and none has two steps.
    days = [d.date() for d in deadlines]
    assert days == sorted(set(days))
    assert (days[-1] - days[0]).days == len(days) - 1
    assert {(d.hour, d.minute) for d in deadlines} <= {(2, 30), (3, 30)}
    assert all(step.closed_at is None or step.closed_at >= step.deadline for step in steps)
    assert Game.objects.get(pk=game.pk).needs_gm == ""
