"""``/metrics``: the figures an operator watches, for Prometheus (docs/operations.md,
"Metrics", says which alerts to set on them).

Every figure is read from the database when Prometheus scrapes, through a collector of
prometheus-client's: the web processes and the workers share nothing else, so a counter
kept in one process would see only that process's work. The totals the database keeps
(steps resolved, emails sent) only grow, and are exposed as counters.

Off unless ``METRICS_TOKEN`` is set; then a scrape must send it as a bearer token
(Prometheus's ``authorization`` setting), and anything else answers 401. Plain HTTP is
allowed, as for ``/healthz``: the scraper reaches the service inside its network.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.db.models import Count, Min, QuerySet, Sum
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.crypto import constant_time_compare
from django.views.decorators.http import require_GET
from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector

from games import postal
from games.models import Game, Step
from games.records import retention
from moderator.mail.models import InboundMessage, OutboundEmail


class Figures(Collector):
    """The service's figures, read from the database at each scrape."""

    def collect(self) -> Iterator[Metric]:
        now = timezone.now()
        # Due as the steps run hands them out: not a paused game's, nor one whose game
        # waits for its GM (counted below), so the figures wait for workers only.
        due = postal.due_steps(now).aggregate(count=Count("id"), oldest=Min("deadline"))
        yield GaugeMetricFamily(
            "moderator_due_steps",
            "Open steps of running games whose deadline has passed, waiting for a worker.",
            value=due["count"],
        )
        oldest = due["oldest"]
        yield GaugeMetricFamily(
            "moderator_oldest_due_step_age_seconds",
            "How long the oldest due step has waited past its deadline (0: none waits).",
            value=0.0 if oldest is None else (now - oldest).total_seconds(),
        )
        steps = Step.objects.exclude(status=Step.Status.OPEN).aggregate(count=Count("id"))
        yield CounterMetricFamily(
            "moderator_steps_resolved",
            "Steps resolved since the service began.",
            value=steps["count"],
        )
        failures = Step.objects.aggregate(total=Sum("failures"))["total"] or 0
        yield CounterMetricFamily(
            "moderator_step_resolution_failures",
            "Attempts to resolve a step that failed (each is retried; a step that keeps "
            "failing waits for its GM).",
            value=failures,
        )
        waiting = Game.objects.filter(status=Game.Status.RUNNING).exclude(needs_gm="").count()
        yield GaugeMetricFamily(
            "moderator_games_waiting_for_gm",
            "Running games stopped until their GM acts.",
            value=waiting,
        )
        outbox = GaugeMetricFamily(
            "moderator_outbox_emails", "Outbox rows by state.", labels=["state"]
        )
        by_state = _counted(OutboundEmail.objects.all())
        for state in OutboundEmail.State.values:
            outbox.add_metric([state], by_state.get(state, 0))
        yield outbox
        emails = CounterMetricFamily(
            "moderator_emails",
            "Emails sent or failed, by kind (report, receipt, reminder, ...).",
            labels=["kind", "outcome"],
        )
        done = (
            OutboundEmail.objects.filter(
                state__in=[OutboundEmail.State.SENT, OutboundEmail.State.FAILED]
            )
            .order_by()
            .values("kind", "state")
            .annotate(count=Count("id"))
            .values_list("kind", "state", "count")
        )
        for kind, state, count in sorted(done):
            emails.add_metric([kind, state], count)
        yield emails
        inbound = CounterMetricFamily(
            "moderator_inbound_emails",
            "Emails received by the inbound webhooks, by what became of them.",
            labels=["state"],
        )
        received = _counted(InboundMessage.objects.all())
        for state in InboundMessage.State.values:
            inbound.add_metric([state], received.get(state, 0))
        yield inbound
        overdue = GaugeMetricFamily(
            "moderator_retention_overdue_rows",
            "Rows past their retention not pruned yet, by kind (the daily prune removes "
            "them: above 0 for more than a day, it is not running).",
            labels=["kind"],
        )
        for kind, rows in retention.overdue(now).items():
            overdue.add_metric([kind], rows.count())
        yield overdue


def _counted(rows: QuerySet[Any]) -> dict[str, int]:
    """State -> how many of ``rows`` are in it (one grouped count)."""
    counts = rows.order_by().values("state").annotate(count=Count("id"))
    return dict(counts.values_list("state", "count"))


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    token = settings.METRICS_TOKEN
    if not token:
        return HttpResponse("metrics are off: METRICS_TOKEN is not set\n", status=404)
    given = request.headers.get("Authorization", "")
    if not constant_time_compare(given, f"Bearer {token}"):
        response = HttpResponse("a bearer token is needed\n", status=401)
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    registry = CollectorRegistry(auto_describe=False)
    registry.register(Figures())
    # The format the scraper asks for (Accept), as prometheus-client's own server answers.
    encode, content_type = choose_encoder(request.headers.get("Accept", ""))
    return HttpResponse(encode(registry), content_type=content_type)
