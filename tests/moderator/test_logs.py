"""One log line per step resolved and per email sent or failed, with the game, step and
outcome as fields of the record; LOG_FORMAT=json writes each as one JSON object."""

from __future__ import annotations

import json
import logging
import smtplib
from datetime import datetime
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.db import transaction
from django.utils.module_loading import import_string
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks, Settings

from games import postal
from games.models import Game
from moderator.mail import sending
from moderator.mail.models import OutboundEmail
from tests.factories import started_game
from tests.moderator.mail.test_outbox import BACKEND, ScriptedBackend

pytestmark = pytest.mark.django_db


FIELDS = ("event", "game", "step", "outcome", "finished")


def records(caplog: pytest.LogCaptureFixture, event: str) -> list[logging.LogRecord]:
    return [record for record in caplog.records if getattr(record, "event", None) == event]


def resolved(
    caplog: pytest.LogCaptureFixture, now: datetime, on_commit: DjangoCaptureOnCommitCallbacks
) -> tuple[Game, logging.LogRecord]:
    """A game whose step 1 the GM resolved, and the one line that logged it (once its
    transaction committed)."""
    game = started_game(now=now, players=2)
    caplog.set_level(logging.INFO, logger="games.postal")
    with on_commit(execute=True):
        postal.resolve_now(game.pk, now=now)
    (line,) = records(caplog, "step_resolved")
    return game, line


def test_a_resolved_step_is_logged_once_it_is_committed_and_not_before(
    caplog: pytest.LogCaptureFixture,
    now: datetime,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    game = started_game(now=now, players=2)
    caplog.set_level(logging.INFO, logger="games.postal")
    with django_capture_on_commit_callbacks(execute=True):
        postal.resolve_now(game.pk, now=now)
        assert records(caplog, "step_resolved") == []  # resolved, not yet committed
    assert [line.getMessage() for line in records(caplog, "step_resolved")] == [
        f"step resolved: game {game.pk}, step 1, by gm"
    ]


class Killed(Exception):
    """The worker dies between the resolution and its commit."""


def test_a_resolution_rolled_back_logs_nothing(
    caplog: pytest.LogCaptureFixture,
    now: datetime,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    game = started_game(now=now, players=2)
    caplog.set_level(logging.INFO, logger="games.postal")
    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(Killed),
        transaction.atomic(),
    ):
        postal.resolve_now(game.pk, now=now)
        raise Killed
    assert (records(caplog, "step_resolved"), callbacks) == ([], [])
    assert Game.objects.get(pk=game.pk).step_number == 1


def test_a_resolved_step_is_one_line_with_its_game_step_and_outcome(
    caplog: pytest.LogCaptureFixture,
    now: datetime,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    game, line = resolved(caplog, now, django_capture_on_commit_callbacks)
    assert {name: getattr(line, name) for name in FIELDS} == {
        "event": "step_resolved",
        "game": game.pk,
        "step": 1,
        "outcome": "gm",
        "finished": False,
    }
    assert line.getMessage() == f"step resolved: game {game.pk}, step 1, by gm"


def test_each_email_sent_or_failed_is_one_line_without_its_address(
    caplog: pytest.LogCaptureFixture, now: datetime, settings: Settings
) -> None:
    game = started_game(now=now, players=2)
    first, second = OutboundEmail.objects.filter(kind="report").order_by("id")
    caplog.set_level(logging.INFO, logger="moderator.mail.sending")
    assert sending.send(first.pk, now=now) == "sent"
    settings.EMAIL_BACKEND = BACKEND
    ScriptedBackend.script = [smtplib.SMTPRecipientsRefused({"bob@example.org": (550, b"no")})]
    assert sending.send(second.pk, now=now) == "failed"
    ScriptedBackend.script = []
    lines = records(caplog, "email")
    assert [
        (line.outbox, line.kind, line.game, line.outcome, line.attempts)  # type: ignore[attr-defined]
        for line in lines
    ] == [(first.pk, "report", game.pk, "sent", 1), (second.pk, "report", game.pk, "failed", 1)]
    assert [line.levelname for line in lines] == ["INFO", "WARNING"]
    assert not any("@example.org" in line.getMessage() for line in lines)
    assert lines[1].getMessage().endswith("{'<address>': (550, b'no')}")


def test_log_format_json_writes_each_line_as_one_json_object(
    caplog: pytest.LogCaptureFixture,
    now: datetime,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    game, line = resolved(caplog, now, django_capture_on_commit_callbacks)
    # The formatter as LOGGING names it for LOG_FORMAT=json, built as dictConfig builds it.
    logging_config: dict[str, Any] = django_settings.LOGGING
    spec = dict(logging_config["formatters"]["json"])
    formatter = import_string(spec.pop("()"))(**spec)
    written = formatter.format(line)
    data = json.loads(written)
    assert {key: data[key] for key in ("level", "logger", "message", *FIELDS)} == {
        "level": "INFO",
        "logger": "games.postal",
        "message": f"step resolved: game {game.pk}, step 1, by gm",
        "event": "step_resolved",
        "game": game.pk,
        "step": 1,
        "outcome": "gm",
        "finished": False,
    }
    assert "\n" not in written
