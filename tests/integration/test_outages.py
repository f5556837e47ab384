"""Outages and doubles with real parts: two beats and two workers do every piece of work
once; Redis stopped and then flushed while steps are due, emails are pending and a player
sends an order through the web: the order is kept, and when Redis is back everything due
is done, once."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from games import postal
from games.engines.choice.rules import ChoiceEngine
from games.models import Game, Order, Seat, Step
from games.postal import access
from moderator.mail.models import OutboundEmail
from tests.browser import Inbox, free_port
from tests.factories import choice_game, seat_page
from tests.integration.conftest import ROOT, Services, wait_for, wait_for_sweeps

pytestmark = [pytest.mark.integration, pytest.mark.postgres, pytest.mark.redis]

CHOICE = ChoiceEngine()


def smtp_env(services: Services, smtp: Inbox) -> None:
    services.env.update(
        EMAIL_BACKEND="moderator.mail.smtp.EmailBackend",
        EMAIL_HOST="127.0.0.1",
        EMAIL_PORT=str(smtp.port),
    )


def due_games(count: int) -> list[Game]:
    """Started two minutes ago with one-minute deadlines: step 1 of each is due."""
    started = []
    for _ in range(count):
        game = choice_game(3, schedule_spec={"kind": "interval", "seconds": 60})
        started.append(postal.start_game(game.pk, now=timezone.now() - timedelta(minutes=2)))
    return started


def assert_done_once(games: list[Game], smtp: Inbox) -> None:
    for game in games:
        steps = list(Step.objects.filter(game=game).order_by("number"))
        assert [(s.number, s.status) for s in steps] == [(1, "done"), (2, "open")]
        defaults = Counter(
            Order.objects.filter(step=steps[0], source="default").values_list(
                "seat__position", flat=True
            )
        )
        assert defaults == Counter({0: 1, 1: 1, 2: 1})
        indices = list(game.dice_rolls.order_by("index").values_list("index", flat=True))
        assert indices == list(range(Game.objects.get(pk=game.pk).dice_drawn))
    # Each row's message (its Message-ID is minted once and kept) arrived exactly once.
    received = Counter(str(m["Message-ID"]) for m in smtp.messages)
    assert set(received.values()) == {1}
    assert set(received) == set(OutboundEmail.objects.values_list("message_id", flat=True))
    assert set(OutboundEmail.objects.values_list("state", flat=True)) == {"sent"}


def test_two_beats_and_two_workers_do_every_piece_of_work_once(
    services: Services, smtp_server: Inbox, tmp_path: Path
) -> None:
    smtp_env(services, smtp_server)
    games = due_games(6)
    services.worker("worker-1")
    services.worker("worker-2")
    services.beat()
    services.start("beat-2", "beat", "--schedule", str(tmp_path / "beat-2-schedule"))

    def finished() -> bool:
        done = Step.objects.filter(game__in=games, number=1, status="done").count()
        return done == 6 and not OutboundEmail.objects.exclude(state="sent").exists()

    wait_for(finished, 120, "every step and email", services)
    wait_for_sweeps(6, services)  # three more sweeps from each beat: nothing is done twice
    assert OutboundEmail.objects.count() == 6 * 3 * 2
    assert_done_once(games, smtp_server)


# --- Redis away -------------------------------------------------------------------------------


def real_clock_environment() -> dict[str, str]:
    """This environment without libfaketime's (``make test-later``): Redis, like the
    PostgreSQL server, is a service outside the tests and keeps the real clock (it does not
    start under libfaketime)."""
    return {
        name: value
        for name, value in os.environ.items()
        if name != "LD_PRELOAD" and not name.startswith("FAKETIME")
    }


class PrivateRedis:
    """A Redis server of this test only, so that it can be stopped and flushed."""

    def __init__(self, tmp_path: Path) -> None:
        self.port = free_port()
        self.dir = tmp_path
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.dir)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=real_clock_environment(),
        )  # fmt: skip
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the private Redis did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None

    def flush(self) -> None:
        import redis

        redis.Redis.from_url(self.url).flushall()


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def start_web(services: Services, tmp_path: Path, name: str = "web") -> str:
    """gunicorn serving the service with the services' environment as it is now; stopped
    with the other processes."""
    port = free_port()
    tmp_path.mkdir(parents=True, exist_ok=True)
    log = open(tmp_path / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
    services.processes[name] = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "moderator.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", "1", "--timeout", "60"],
        cwd=ROOT,
        env=services.env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(url + "/", timeout=1).close()
            return url
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("gunicorn did not start")


class Browser:
    """Just enough of a browser: cookies, and the CSRF token of the last page."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(CookieJar()),
            NoRedirect(),
        )

    def get(self, path: str) -> str:
        with self.opener.open(self.base + path, timeout=60) as response:
            page: str = response.read().decode()
            return page

    def post(self, path: str, data: dict[str, str]) -> tuple[int, str]:
        page = self.get(path)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert token is not None
        body = urllib.parse.urlencode({"csrfmiddlewaretoken": token[1], **data}).encode()
        request = urllib.request.Request(
            self.base + path, data=body, headers={"Referer": self.base + path}
        )
        try:
            with self.opener.open(request, timeout=60) as response:
                return response.status, response.headers.get("Location", "")
        except urllib.error.HTTPError as error:
            return error.code, error.headers.get("Location", "")


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def test_redis_stopped_and_flushed_loses_no_order_and_does_everything_once_when_back(
    services: Services, smtp_server: Inbox, private_redis: PrivateRedis, tmp_path: Path
) -> None:
    smtp_env(services, smtp_server)
    services.env.update(REDIS_URL=private_redis.url, CELERY_BROKER_URL=private_redis.url)
    web = start_web(services, tmp_path)
    services.worker()
    services.beat()
    player_game = postal.start_game(choice_game(2, early_processing=False).pk, now=timezone.now())
    wait_for(
        lambda: not OutboundEmail.objects.exclude(state="sent").exists(),
        60,
        "the start reports",
        services,
    )

    private_redis.stop()
    games = due_games(3)  # due steps and pending reports while Redis is away

    # A player sends an order through the web while Redis is away: it is kept.
    ann = Seat.objects.get(game=player_game, position=0)
    # She asked for receipts of the orders she makes on the page.
    Seat.objects.filter(pk=ann.pk).update(web_receipts=True)
    token = access.mint([ann], now=timezone.now())[0]
    browser = Browser(web)
    page = seat_page(player_game, 0)
    assert browser.post(f"/p/{token}/", {}) == (302, page)
    state = CHOICE.state_from_json(player_game.state)
    text = CHOICE.canonical(state, 0, CHOICE.default(state, 0))
    status, location = browser.post(page, {"step": "1", "seat": "0", "entry": "text", "text": text})
    assert (status, location) == (302, page)
    assert Order.objects.get(step__game=player_game).canonical == text

    # Redis comes back empty (as if flushed): nothing of the outage is in it.
    private_redis.start()
    private_redis.flush()
    back = time.monotonic()

    def caught_up() -> bool:
        done = Step.objects.filter(game__in=games, number=1, status="done").count()
        receipt_owed = Order.objects.filter(receipt_due=True).exists()
        return (
            done == 3
            and not receipt_owed
            and not OutboundEmail.objects.exclude(state="sent").exists()
        )

    wait_for(caught_up, 120, "the work due during the outage", services)
    print(f"caught up {time.monotonic() - back:.1f} s after Redis came back")
    wait_for_sweeps(3, services)
    assert_done_once(games, smtp_server)
    receipts = [m for m in smtp_server.messages if "order received" in str(m["Subject"])]
    assert [str(m["To"]) for m in receipts] == ["ann@example.org"]
