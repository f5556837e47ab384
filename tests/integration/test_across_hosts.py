"""The services on hosts of their own, as docker/compose.yaml places them (bench/hosts.py: a
network namespace each for web, worker-steps, worker-mail, beat, postgres and redis, joined
by a bridge; a PostgreSQL and a Redis of their own; the SMTP server and the players here),
each of worker-steps, worker-mail, redis and postgres cut off the network in the middle of
a batch of due steps (its link down: packets dropped, connections stall, none is reset).
Afterwards every step was resolved once, every seat's report arrived once, every order a
player posted meanwhile was kept and its receipt arrived once, and a player who asked for
their links while Redis was away was answered without waiting for it (and, asking again
once it was back, had them once).

bench/across_hosts.py runs the same at a larger size and times it."""

from __future__ import annotations

import os
import re
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from email.message import EmailMessage
from functools import partial
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from django.core.management import call_command
from django.db import connection
from django.utils import timezone
from pytest_django import DjangoDbBlocker

from bench import enqueue_nothing, free_port
from bench.hosts import SERVICES, Hosts, can_make_namespaces
from games import postal, records
from games.engines.base import same_state
from games.engines.choice.rules import ChoiceEngine
from games.models import Game, Order, Seat, Step
from games.postal import access
from games.records.archive import export
from moderator.mail import queueing
from moderator.mail.models import OutboundEmail
from tests.browser import Inbox
from tests.factories import GMFactory, seat_page
from tests.integration.test_outages import Browser
from tests.integration.test_topology import compose
from tests.services import missing

pytestmark = [pytest.mark.integration, pytest.mark.postgres, pytest.mark.redis]

CHOICE = ChoiceEngine()
SEATS = 5
# Each host cut off this long, in this order: the database as long as the benchmark's cuts,
# the others shorter, to keep the test near two minutes.
CUTS = {"worker-steps": 8.0, "worker-mail": 8.0, "redis": 12.0, "postgres": 30.0}
GAMES = 25  # due at each cut
# A host is cut once this many of its batch's reports arrived: steps and mail under way.
UNDER_WAY = GAMES * SEATS // 10
# Most seconds a player waits for the home page and the answer to "email me my links"
# while Redis is away (a cache read and the publish's two tries, REDIS_TIMEOUT_SECONDS
# each, besides the pages): less than the cut, which a request waiting on Redis would last.
ANSWER_SECONDS = 8.0


@pytest.fixture
def hosts(tmp_path: Path) -> Iterator[Hosts]:
    """The hosts, removed with everything started on them whatever the test did; the
    processes' logs in the test's folder."""
    why_not = can_make_namespaces()
    if why_not is not None:
        missing(f"network namespaces ({why_not})")
    with Hosts(logs=tmp_path) as made:
        yield made


@pytest.fixture
def hosts_database(hosts: Hosts, django_db_blocker: DjangoDbBlocker) -> Iterator[None]:
    """This process's ORM on the postgres host's database (migrated), for the test's body;
    the test database's settings back afterwards."""
    parts = urllib.parse.urlsplit(hosts.database_url)
    saved = connection.settings_dict
    with django_db_blocker.unblock():
        connection.close()
        connection.settings_dict = {
            **saved,
            "NAME": parts.path.lstrip("/"),
            "USER": parts.username,
            "PASSWORD": "",
            "HOST": parts.hostname,
            "PORT": str(parts.port),
        }
        try:
            call_command("migrate", verbosity=0)
            yield
        finally:
            connection.close()
            connection.settings_dict = saved


@pytest.fixture
def inbox(hosts: Hosts) -> Iterator[Inbox]:
    """aiosmtpd on the bridge's address, where the hosts reach this namespace."""
    found = Inbox(port=free_port(hosts.address("root")))
    controller = Controller(found, hostname=hosts.address("root"), port=found.port)
    controller.start()
    try:
        yield found
    finally:
        controller.stop()


# --- the games ------------------------------------------------------------------------------


def due_later(title: str, count: int, *, early: bool = True) -> list[Game]:
    """``count`` 5-seat Choice games titled ``title N``, started an hour ago (step 1 due in
    two days), each seat's address its own: p0.<title>N@example.org."""
    gm = GMFactory.create()
    started = timezone.now() - timedelta(hours=1)
    games = []
    for number in range(count):
        game = postal.create_game(
            gm=gm,
            engine_key="choice",
            title=f"{title} {number}",
            players=[
                postal.Player(f"p{seat}", f"p{seat}.{title}{number}@example.org")
                for seat in range(SEATS)
            ],
            early_processing=early,
        )
        games.append(postal.start_game(game.pk, now=started))
    return games


@dataclass
class Player:
    """A player of the orders game, signed in through the web host before the cuts."""

    seat: Seat
    browser: Browser
    order: str
    answers: list[tuple[int, str]] = field(default_factory=list)

    def post_order(self) -> None:
        """Post the order as a player does (the page, then its form); the answer is kept."""
        page = seat_page(self.seat.game, self.seat.position)
        form = {"step": "1", "seat": str(self.seat.position), "entry": "text", "text": self.order}
        try:
            self.answers.append(self.browser.post(page, form))
        except OSError as error:  # an error page, or no answer in the browser's time
            self.answers.append((0, repr(error)))


def players(hosts: Hosts, game: Game) -> list[Player]:
    state = CHOICE.state_from_json(game.state)
    signed_in = []
    for seat in game.seats.order_by("position"):
        token = access.mint([seat], now=timezone.now())[seat.position]
        browser = Browser(hosts.web_url)
        assert browser.post(f"/p/{token}/", {}) == (302, seat_page(game, seat.position))
        order = CHOICE.canonical(state, seat.position, CHOICE.default(state, seat.position))
        signed_in.append(Player(seat, browser, order))
    return signed_in


# --- the services ---------------------------------------------------------------------------


def start_services(hosts: Hosts, inbox: Inbox, logs: Path) -> None:
    definitions = compose()["services"]
    commands = {service: ["-m", *definitions[service]["command"]] for service in SERVICES}
    env = {
        **os.environ,
        **hosts.service_environment(inbox.port),
        "STEP_SWEEP_SECONDS": "1",
        "SWEEP_SECONDS": "2",
        "RECEIPT_SECONDS": "1",
        "MAIL_RETRY_BASE_SECONDS": "1",
        "LOG_LEVEL": "INFO",
    }
    hosts.start_services(commands, env)
    for service in ("worker-steps", "worker-mail"):
        log = logs / f"{service}.log"
        # Celery's own line once the worker consumes (LOG_LEVEL=INFO).
        wait(partial(ready, log), 90, service, hosts, logs)


def ready(log: Path) -> bool:
    return " ready." in log.read_text()


def wait(
    condition: Callable[[], object],
    timeout: float,
    what: str | Callable[[], str],
    hosts: Hosts,
    logs: Path,
) -> None:
    """Until ``condition`` holds; fails after ``timeout`` seconds, or when a service dies,
    with the end of each service's log."""
    deadline = time.monotonic() + timeout
    while not condition():
        dead = [name for name in SERVICES if hosts.processes[name].poll() is not None]
        if dead or time.monotonic() > deadline:
            tails = "\n".join(
                f"--- {path.name}\n{path.read_text(errors='replace')[-3000:]}"
                for path in sorted(logs.glob("*.log"))
            )
            said = what if isinstance(what, str) else what()
            pytest.fail(f"{'; '.join(dead) + ' died' if dead else 'timed out'}: {said}\n{tails}")
        time.sleep(0.25)


# --- what arrived -------------------------------------------------------------------------


def reports(inbox: Inbox, title: str) -> list[EmailMessage]:
    """The step reports the players of the games titled ``title`` received."""
    with inbox.lock:
        return [
            m
            for m in inbox.messages
            if f".{title}" in str(m["To"]) and not is_receipt(str(m["Subject"]))
        ]


def have_arrived(inbox: Inbox, title: str, count: int) -> bool:
    return len(reports(inbox, title)) >= count


def is_receipt(subject: str) -> bool:
    return ": order received for " in subject


def in_thread(work: Callable[[], object]) -> threading.Thread:
    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    return thread


def ask_for_links(hosts: Hosts, email: str, answered: list[float] | None = None) -> None:
    """The home page and its "email me my links", as a browser asks; the seconds both took
    go to ``answered``."""
    browser = Browser(hosts.web_url)
    began = time.monotonic()
    browser.get("/")
    status, _ = browser.post("/", {"email": email})
    assert status == 200
    if answered is not None:
        answered.append(time.monotonic() - began)


def sweeps(logs: Path) -> int:
    """How many sweeps (``games.sweep``) the workers have finished, by their logs."""
    return sum(
        len(SWEPT.findall(path.read_text(errors="replace"))) for path in logs.glob("worker-*.log")
    )


SWEPT = re.compile(r"Task games\.sweep\[[^\]]*\] succeeded")


# --- the test -------------------------------------------------------------------------------


def test_hosts_cut_off_mid_batch_resolve_each_step_and_send_each_email_once(
    hosts: Hosts,
    hosts_database: None,
    inbox: Inbox,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    began = time.monotonic()
    # The games' first reports are not this test's: written, not sent, then marked sent.
    with monkeypatch.context() as patched:
        patched.setattr(queueing, "enqueue", enqueue_nothing)
        batches = {host: due_later(f"cut-{host}", GAMES) for host in CUTS}
        (orders_game,) = due_later("orders", 1, early=False)
    OutboundEmail.objects.filter(state="pending").update(state="sent", sent_at=timezone.now())
    Seat.objects.filter(game=orders_game).update(web_receipts=True)
    start_services(hosts, inbox, tmp_path)
    *posting, asker = players(hosts, orders_game)
    ready_at = time.monotonic() - began
    answered: list[float] = []
    recovered = {}

    for (host, seconds), player in zip(CUTS.items(), posting, strict=True):
        title = f"cut-{host}"
        Step.objects.filter(game__in=batches[host], number=1).update(deadline=timezone.now())
        wait(partial(have_arrived, inbox, title, UNDER_WAY), 60, title, hosts, tmp_path)
        with hosts.cut_off(host):
            # A player posts an order, and (Redis away) another asks for their links.
            clients = [in_thread(player.post_order)]
            if host == "redis":
                asking = partial(ask_for_links, hosts, asker.seat.email, answered)
                clients.append(in_thread(asking))
            time.sleep(seconds)
        restored = time.monotonic()
        for client in clients:
            client.join()
        every = partial(have_arrived, inbox, title, GAMES * SEATS)
        wait(every, 120, f"every report of {title}", hosts, tmp_path)
        recovered[host] = time.monotonic() - restored
    print(f"ready after {ready_at:.1f} s; from each restore to its batch's last report, s:",
          {host: round(seconds, 1) for host, seconds in recovered.items()},
          "; links asked with Redis away answered in (s):", answered)  # fmt: skip
    # Asked for while the broker was away, the links were not sent (postal.ask_lost_links):
    # asked again, they are.
    ask_for_links(hosts, asker.seat.email)

    def outstanding() -> dict[str, int]:
        with inbox.lock:
            subjects = [(str(m["To"]), str(m["Subject"])) for m in inbox.messages]
        return {
            "receipts owed": Order.objects.filter(receipt_due=True).count(),
            "receipts": sum(1 for _, subject in subjects if is_receipt(subject)),
            "links": sum(1 for to, _ in subjects if to == asker.seat.email),
            "emails not sent": OutboundEmail.objects.exclude(state="sent").count(),
        }

    done = {"receipts owed": 0, "receipts": len(CUTS), "links": 1, "emails not sent": 0}
    wait(
        lambda: outstanding() == done,
        60,
        lambda: f"the receipts and the links: {outstanding()}",
        hosts,
        tmp_path,
    )
    # Three more sweeps: what a sweep might still do twice, they would have done.
    swept = sweeps(tmp_path) + 3
    wait(lambda: sweeps(tmp_path) >= swept, 30, "three more sweeps", hosts, tmp_path)

    # Each step was resolved once: step 1 closed at its deadline, step 2 opened once, and
    # the game's events and state are those of its record replayed.
    for host, games in batches.items():
        for game in games:
            game.refresh_from_db()
            steps = game.steps.order_by("number").values_list("number", "status", "closed_by")
            assert list(steps) == [(1, "done", "deadline"), (2, "open", "")], (host, game.pk)
            replayed = records.run(export(game))
            events = game.events.order_by("step__number", "id").values_list("text", flat=True)
            assert list(events) == [event.text for event in replayed.log], (host, game.pk)
            assert same_state(replayed.engine, replayed.state, game.state), (host, game.pk)
    # Each seat's report arrived once, and nothing else arrived twice.
    for host, games in batches.items():
        arrived = Counter((str(m["To"]), str(m["Subject"])) for m in reports(inbox, f"cut-{host}"))
        seats = Seat.objects.filter(game__in=games).values_list("email", flat=True)
        assert sorted(to for to, _ in arrived) == sorted(seats), host
        assert set(arrived.values()) == {1}, host
    with inbox.lock:
        message_ids = Counter(str(m["Message-ID"]) for m in inbox.messages)
    assert [message_id for message_id, n in message_ids.items() if n > 1] == []
    assert set(OutboundEmail.objects.values_list("state", flat=True)) == {"sent"}
    # Each order posted during a cut was kept, and its receipt arrived once.
    for player in posting:
        assert player.answers == [(302, seat_page(orders_game, player.seat.position))]
        kept = Order.objects.filter(seat=player.seat, source="web").values_list("text", flat=True)
        assert list(kept) == [player.order]
    with inbox.lock:
        receipts = Counter(str(m["To"]) for m in inbox.messages if is_receipt(str(m["Subject"])))
    assert receipts == Counter(player.seat.email for player in posting)
    # Asked for while Redis was away, the links' page answered without waiting for it.
    assert len(answered) == 1 and answered[0] < ANSWER_SECONDS, answered
