"""Columns added by a release have a database default: a process of the release before
(a worker still running during an upgrade) writes rows without them, and they must take."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.db import connection

from games.models import EmailPreference, Order, Seat, Step
from tests.factories import started_game

pytestmark = pytest.mark.django_db


def test_rows_written_without_this_releases_columns_take_their_defaults(now: datetime) -> None:
    game = started_game(now=now, players=2)
    step = Step.objects.get(game=game, number=1)
    seat = Seat.objects.get(game=game, position=0)
    with connection.cursor() as cursor:
        # As the release before writes them: without Order.ignored, EmailPreference.no_reminders.
        cursor.execute(
            "INSERT INTO games_order (step_id, seat_id, text, parsed, canonical, source, "
            "received_at, receipt_due, results) VALUES (%s, %s, 'x', '{}', 'x', 'web', %s, "
            "false, '[]')",
            [step.pk, seat.pk, now],
        )
        cursor.execute(
            "INSERT INTO games_emailpreference (email, digest, hour, time_zone, reports, "
            "updated_at) VALUES ('ann@example.org', false, 8, 'UTC', '', %s)",
            [now],
        )
    assert Order.objects.get(seat=seat, text="x").ignored == ""
    assert EmailPreference.objects.get(email="ann@example.org").no_reminders is False
