"""The deployment of docker/compose.yaml without Docker (no engine runs on CI machines):
the compose file validates, and its own commands for web (gunicorn), a worker per queue
and one beat run a game on the real PostgreSQL and Redis: players order over HTTP, the
steps worker resolves every step, the mail worker sends every email."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.utils import timezone

from games import postal
from games.engines.choice.rules import ChoiceEngine
from games.models import Game, Order, Seat, Step
from games.postal import access
from moderator.mail.models import OutboundEmail
from tests.browser import free_port
from tests.factories import choice_game, seat_page
from tests.integration.conftest import ROOT, Services, wait_for
from tests.integration.test_outages import Browser
from tests.services import missing

pytestmark = [pytest.mark.integration, pytest.mark.postgres, pytest.mark.redis]

COMPOSE = ROOT / "docker" / "compose.yaml"
CHOICE = ChoiceEngine()


def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return data


def test_the_compose_file_is_valid_and_has_the_topology() -> None:
    binary = shutil.which("docker-compose")
    if binary is None:
        missing("docker-compose (the distribution's package validates compose files)")
    assert binary is not None
    result = subprocess.run(
        [binary, "-f", str(COMPOSE), "config", "--quiet"],
        env={"PATH": "/usr/bin:/bin", "MODERATOR_ENV_FILE": str(ROOT / "docker/env.example")},
        capture_output=True,
        text=True,
        check=False,
    )
    assert (result.returncode, result.stderr) == (0, "")
    services = compose()["services"]
    assert sorted(services) == [
        "beat", "migrate", "postgres", "redis", "web", "worker-mail", "worker-steps",
    ]  # fmt: skip
    assert services["beat"]["deploy"]["replicas"] == 1
    for name in ("postgres", "redis", "web", "worker-steps", "worker-mail"):
        assert "healthcheck" in services[name], name
    queues = {
        name: services[name]["command"][services[name]["command"].index("--queues") + 1]
        for name in ("worker-steps", "worker-mail")
    }
    assert queues == {"worker-steps": "urgent,steps", "worker-mail": "urgent,mail"}
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text()
    assert "COPY requirements.lock requirements-esp.lock pyproject.toml ./" in dockerfile
    assert "\nUSER moderator\n" in dockerfile


def run(services: Services, name: str, command: list[str], log: Path) -> None:
    """One compose service's command, as compose would run it, with the services' env."""
    executable = {"gunicorn": [sys.executable, "-m", "gunicorn"],
                  "celery": [sys.executable, "-m", "celery"]}[command[0]]  # fmt: skip
    out = open(log, "wb")  # noqa: SIM115 - closed with the process
    services.processes[name] = subprocess.Popen(
        [*executable, *command[1:]],
        cwd=ROOT,
        env=services.env,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def test_the_compose_commands_run_a_game_with_a_worker_per_queue(
    services: Services, tmp_path: Path
) -> None:
    port = free_port()
    definitions = compose()["services"]
    web = [
        f"127.0.0.1:{port}" if part == "0.0.0.0:8000" else part
        for part in definitions["web"]["command"]
    ]
    beat = [
        str(tmp_path / "beat-schedule") if part.endswith("celerybeat-schedule") else part
        for part in definitions["beat"]["command"]
    ]
    site = f"http://127.0.0.1:{port}"
    services.env.update(SITE_URL=site)
    run(services, "web", web, tmp_path / "web.log")
    run(services, "worker-steps", definitions["worker-steps"]["command"], tmp_path / "steps.log")
    run(services, "worker-mail", definitions["worker-mail"]["command"], tmp_path / "mail.log")
    run(services, "beat", beat, tmp_path / "beat.log")
    for _ in range(300):
        try:
            with urllib.request.urlopen(f"{site}/healthz", timeout=1) as response:
                assert response.read() == b"ok\n"
            break
        except OSError:
            time.sleep(0.1)

    game = choice_game(
        3, options={"rolls_per_turn": 4}, schedule_spec={"kind": "interval", "seconds": 3}
    )
    game = postal.start_game(game.pk, now=timezone.now())
    # Every player orders step 1 over HTTP through gunicorn; the rest goes by deadline.
    state = CHOICE.state_from_json(game.state)
    for position in range(3):
        seat = Seat.objects.get(game=game, position=position)
        browser = Browser(site)
        token = access.mint([seat], now=timezone.now())[position]
        page = seat_page(game, position)
        assert browser.post(f"/p/{token}/", {}) == (302, page)
        text = CHOICE.canonical(state, position, CHOICE.default(state, position))
        order = {"step": "1", "seat": str(position), "entry": "text", "text": text}
        assert browser.post(page, order) == (302, page)

    def finished() -> bool:
        return Game.objects.get(pk=game.pk).status == Game.Status.FINISHED

    wait_for(finished, 240, "the game to finish", services)
    wait_for(
        lambda: not OutboundEmail.objects.exclude(state="sent").exists(),
        60,
        "every email to be sent",
        services,
    )
    game.refresh_from_db()
    steps = list(
        Step.objects.filter(game=game).order_by("number").values_list("closed_by", flat=True)
    )
    assert steps[0] == "early" and set(steps[1:]) == {"deadline"}
    assert Order.objects.filter(step__number=1, source="web").count() == 3
    # Each queue's work was done by its own worker.
    steps_log = (tmp_path / "steps.log").read_text()
    mail_log = (tmp_path / "mail.log").read_text()
    assert re.search(r"Task games\.resolve_due_steps\[.*\] succeeded", steps_log)
    assert "Task mail.send_emails[" not in steps_log
    assert re.search(r"Task mail\.send_emails\[.*\] succeeded", mail_log)
    assert "Task games.resolve_due_steps[" not in mail_log
