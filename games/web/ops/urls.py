"""The operators' addresses: /metrics for Prometheus (``metrics``)."""

from __future__ import annotations

from django.urls import path

from games.web.ops.metrics import metrics

urlpatterns = [
    path("metrics", metrics, name="metrics"),
]
