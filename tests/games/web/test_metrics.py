"""``/metrics``: off without METRICS_TOKEN, 401 without the bearer token, and with it the
figures an operator watches, read from the database, in Prometheus's text format."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families
from pytest_django.fixtures import Settings
from time_machine import TimeMachineFixture

from games import postal
from games.engines.choice.rules import ChoiceEngine
from games.models import Game, Step
from moderator.mail import sending
from moderator.mail.models import OutboundEmail
from tests.factories import started_game

pytestmark = pytest.mark.django_db

CHOICE = ChoiceEngine()
TOKEN = "scrape-me-0123456789"


@pytest.fixture(autouse=True)
def token(settings: Settings, time_machine: TimeMachineFixture, now: datetime) -> None:
    time_machine.move_to(now, tick=False)
    settings.METRICS_TOKEN = TOKEN


def scrape() -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def test_metrics_are_off_without_a_token_and_refused_without_the_right_one(
    settings: Settings,
) -> None:
    assert Client().get("/metrics").status_code == 401
    wrong = Client().get("/metrics", HTTP_AUTHORIZATION="Bearer guess")
    assert (wrong.status_code, wrong["WWW-Authenticate"]) == (401, 'Bearer realm="metrics"')
    settings.METRICS_TOKEN = ""
    assert Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 404


def test_the_figures_follow_the_games_and_the_outbox(
    now: datetime, time_machine: TimeMachineFixture
) -> None:
    first = started_game(now=now, players=3)
    started_game(now=now, players=2)
    figures = scrape()
    assert figures[("moderator_due_steps", ())] == 0
    assert figures[("moderator_oldest_due_step_age_seconds", ())] == 0
    assert figures[("moderator_steps_resolved_total", ())] == 0
    assert figures[("moderator_outbox_emails", (("state", "pending"),))] == 5
    assert figures[("moderator_outbox_emails", (("state", "sent"),))] == 0
    # Both deadlines pass; ten minutes later nothing has resolved them yet.
    deadline = Step.objects.get(game=first).deadline
    Step.objects.update(deadline=deadline)
    later = deadline + timedelta(minutes=10)
    for row in OutboundEmail.objects.filter(to="ann@example.org"):
        sending.send(row.pk, now=now)
    time_machine.move_to(later, tick=False)
    with_time = scrape()
    assert with_time[("moderator_due_steps", ())] == 2
    assert with_time[("moderator_oldest_due_step_age_seconds", ())] == 600
    assert with_time[("moderator_emails_total", (("kind", "report"), ("outcome", "sent")))] == 2
    assert with_time[("moderator_outbox_emails", (("state", "sent"),))] == 2
    postal.resolve_now(first.pk, now=later)
    Step.objects.filter(game=first, number=1).update(failures=1)
    Game.objects.exclude(pk=first.pk).update(needs_gm="the engine failed")
    after = scrape()
    # The other game waits for its GM: counted as such, not as due for a worker.
    assert after[("moderator_due_steps", ())] == 0
    assert after[("moderator_steps_resolved_total", ())] == 1
    assert after[("moderator_step_resolution_failures_total", ())] == 1
    assert after[("moderator_games_waiting_for_gm", ())] == 1
    assert after[("moderator_inbound_emails_total", (("state", "order"),))] == 0


def test_a_paused_game_past_its_deadline_is_not_due_until_it_is_resumed(
    now: datetime, time_machine: TimeMachineFixture
) -> None:
    paused = started_game(now=now, players=2)
    abandoned = started_game(now=now, players=2)
    Game.objects.filter(pk=abandoned.pk).update(status=Game.Status.ABANDONED)
    deadline = Step.objects.get(game=paused).deadline
    postal.pause(paused.pk, now=deadline - timedelta(hours=1))
    later = deadline + timedelta(minutes=10)
    time_machine.move_to(later, tick=False)
    figures = scrape()
    assert figures[("moderator_due_steps", ())] == 0
    assert figures[("moderator_oldest_due_step_age_seconds", ())] == 0
    # Resumed: the step owes the hour it had left, then waits for a worker again.
    postal.resume(paused.pk, now=later)
    assert scrape()[("moderator_due_steps", ())] == 0
    time_machine.move_to(later + timedelta(hours=1, minutes=5), tick=False)
    resumed = scrape()
    assert resumed[("moderator_due_steps", ())] == 1
    assert resumed[("moderator_oldest_due_step_age_seconds", ())] == 300


def test_rows_past_their_retention_are_counted_until_the_prune_removes_them(
    now: datetime, time_machine: TimeMachineFixture
) -> None:
    from games.records import retention
    from tests.games.records.test_retention import other_kinds

    other_kinds(now)
    overdue = ("moderator_retention_overdue_rows", (("kind", "push_subscriptions"),))
    assert scrape()[overdue] == 0
    month = now + timedelta(days=31)
    time_machine.move_to(month, tick=False)
    figures = scrape()
    assert {
        labels[0][1]: value
        for (name, labels), value in figures.items()
        if name == "moderator_retention_overdue_rows"
    } == {
        "email_bodies": 0, "links": 0, "sign_ins": 0, "sign_ups": 1, "webhook_deliveries": 1,
        "pushes": 1, "player_posts": 1, "push_subscriptions": 1,
    }  # fmt: skip
    retention.prune(now=month)
    assert scrape()[overdue] == 0
