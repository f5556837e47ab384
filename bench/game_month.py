"""Benchmark: what a game costs: a month of a realistic mix of games at accelerated time,
per 1,000 active games, and the machine that runs 10,000 and 100,000 of them.

    .venv/bin/python bench/game_month.py [--quick] [--games 1000] [--days 30]
        [--email-share 0.3] [--silent-share 0.05] [--digest-share 0.1] [--seed 1]
        [--mix choice=27,suppenkasper=8,...] [--json var/bench/game_month.json]

``--games`` games are kept running for ``--days`` days of a fixed clock that the benchmark
moves forward, after a day of warm-up that is not counted (``--quick``: 40 games, 6 days).
bench/month_mix.py has the mix: Choice and Suppenkasper on a weekly deadline, Liar's Dice
with a day per move, Drop-Shy and Dice Survivor with a few hours per move; a game that
ends is replaced by a new one of its kind. Its players answer each prompt after a while of
their own (never in their night) with their game's first autopilot's order: a share of
them by email reply, posted to the Postmark inbound webhook as Postmark posts it and read
as the mail worker reads it; the others on the web, each from a browser of its own
(Django's test client: the seat's page, the order form's post, the page it redirects to;
the link of their latest email when the browser holds no seat); some never, and their
seats get the game's defaults, then civil disorder.

The clock: every event (an answer, a deadline, the periodic run every five minutes) moves
it forward, and the domain functions the workers call are called as the tasks call them,
with ``now`` at it: the steps run (``postal.resolve_due_steps``) a few seconds after each
deadline and in every periodic run, ``postal.write_receipts`` and the sweep's task in
every periodic run, ``sending.send_batch`` (over SMTP to aiosmtpd in a process of its
own) after every event, the daily pruning at 03:30. time-machine holds this process's
clock at the same moment, so the views, the inbound reader and the sweep, which read the
time themselves, read the month's: nothing mixes the real clock with the month's.

Measured: CPU seconds of this process's main thread (time.thread_time) and of the
PostgreSQL backend serving it (/proc/<pid>/schedstat), by kind of work and by hour of the
month; PostgreSQL's own processes and the SMTP server over the month; each periodic run's
cost when nothing is due, before the first game and every half hour of the month (the
beat's polls at their real cadence are counted from them, apart from the games' own
work); steps, orders, emails and the bytes the SMTP server took (DATA); every table's
size at the month's start and end, and once the month's email bodies and links are
pruned (VACUUM FULL). bench/month_report.py turns them into the figures per 1,000 active
games per month (scaled linearly from ``--games`` and ``--days``), bench/month_sizing.py
into the machine for 10,000 and 100,000 games. The run checks that every order a player
made is recorded, every email sent arrived once, and no step failed; it exits non-zero
otherwise.

The default run takes hours (five to seven on two cores, by the quick run's pace): it
plays every step, order and email of a month of 1,000 games in one process. Database
``<DATABASE_URL>_bench_month`` (created and migrated on each run), Redis database 15
(flushed: the rate limits count there).
"""

from __future__ import annotations

import base64
import heapq
import json
import logging
import math
import os
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

INBOUND = "orders@in.example.org"
SECRET = "bench:game-month"
# The test client speaks plain HTTP to a production-like configuration (bench/order_cpu.py);
# replies by email reach the webhook with its secret; email goes out over SMTP.
for name, value in {
    "SECURE_SSL_REDIRECT": "false",
    "SESSION_COOKIE_SECURE": "false",
    "CSRF_COOKIE_SECURE": "false",
    "ALLOWED_HOSTS": "testserver",
}.items():
    os.environ.setdefault(name, value)
os.environ["EMAIL_BACKEND"] = "moderator.mail.smtp.EmailBackend"
os.environ["INBOUND_ADDRESS"] = INBOUND
os.environ["ANYMAIL_WEBHOOK_SECRET"] = SECRET

import bench  # noqa: E402

bench.configure("_bench_month", redis_db=15)

import time_machine  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402

from bench import cpu, month_report, month_sizing  # noqa: E402
from bench.month_mix import START, Kind, Mix, Player, order_text, parse_mix  # noqa: E402
from games import postal, tasks  # noqa: E402
from games.models import Game, Step  # noqa: E402
from games.records import retention  # noqa: E402
from moderator.mail import inbound, pruning, queueing, sending, webhooks  # noqa: E402
from moderator.mail.models import OutboundEmail  # noqa: E402

NAME = "game_month"
# One periodic run in this many is followed by each run again, when nothing is due: Idle.
IDLE_EVERY = 6
# The periodic run: the steps run, the receipts, the sweep (production: every 5, 5 and
# 30 seconds; their cost at that cadence is measured on its own: ``polls``).
TICK = timedelta(minutes=5)
# A deadline's steps are resolved this long after it (the steps run's period).
LAG = timedelta(seconds=settings.STEP_SWEEP_SECONDS)
# A browser's seats are in a signed cookie of SESSION_COOKIE_AGE (two weeks): a player
# opens the link of their latest email a day before it runs out.
COOKIE = timedelta(seconds=settings.SESSION_COOKIE_AGE) - timedelta(days=1)
TICKS = os.sysconf("SC_CLK_TCK")
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
LINK = re.compile(r"/p/([A-Za-z0-9_-]+)/")
FORM = "application/x-www-form-urlencoded"
WEBHOOK = "/mail/webhooks/postmark/inbound/"
AUTHORIZATION = "Basic " + base64.b64encode(SECRET.encode()).decode()

# --- the clock and the meter --------------------------------------------------------------


class Clock:
    """The month's moment: passed as ``now`` to the domain, and what this process's clock
    reads (time-machine, not ticking), so the code that reads the time itself agrees."""

    def __init__(self, moment: datetime) -> None:
        self.now = moment
        self.travel = time_machine.travel(moment, tick=False)
        self.traveller = self.travel.start()

    def to(self, moment: datetime) -> None:
        if moment > self.now:
            self.now = moment
            self.traveller.move_to(moment)

    def stop(self) -> None:
        self.travel.stop()


def backend_seconds(pid: int) -> float:
    """CPU seconds the PostgreSQL backend ``pid`` has run (schedstat: nanoseconds, exact,
    where /proc's stat counts in ticks of 10 ms); 0.0 once it is gone."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9
    except (OSError, ValueError):
        return 0.0


def backend_pid() -> int:
    connection.ensure_connection()
    assert connection.connection is not None
    return int(connection.connection.info.backend_pid)


# PostgreSQL's own processes, by their title; client backends (this benchmark's or anyone
# else's on a shared server) are not among them.
AUXILIARY = ("checkpointer", "background writer", "walwriter", "autovacuum")


class Background:
    """CPU seconds of PostgreSQL's own processes (checkpointer, background writer, WAL
    writer, autovacuum) since the first look, read from /proc at every look: a process
    that ends between two looks (an autovacuum worker) loses its last part."""

    def __init__(self, postmaster: int) -> None:
        self.postmaster = postmaster
        self.seen: dict[int, tuple[float, float]] = {}  # pid -> (at the first look, last)
        self.looked = False

    def look(self) -> None:
        pm = self.postmaster
        for pid in Path(f"/proc/{pm}/task/{pm}/children").read_text().split():
            try:
                title = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
                if not any(word in title for word in AUXILIARY):
                    continue
                fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue  # ended meanwhile
            seconds = (int(fields[11]) + int(fields[12])) / TICKS
            first = self.seen.get(int(pid), (seconds if not self.looked else 0.0, 0.0))[0]
            self.seen[int(pid)] = (first, seconds)
        self.looked = True

    @property
    def seconds(self) -> float:
        return sum(last - first for first, last in self.seen.values())


@dataclass
class Spent:
    calls: int = 0
    app: float = 0.0
    database: float = 0.0


@dataclass
class Meter:
    """CPU seconds of each kind of work within the month: this process's main thread (the
    product's code; the SMTP server's reader thread is not counted) and its PostgreSQL
    backend, and the same by hour of the month. Work before the month is not counted."""

    clock: Clock
    kinds: dict[str, Spent] = field(default_factory=lambda: defaultdict(Spent))
    hours: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    counting: bool = False

    @contextmanager
    def __call__(self, kind: str) -> Iterator[None]:
        pid = backend_pid()
        app, database = time.thread_time(), backend_seconds(pid)
        try:
            yield
        finally:
            app, database = time.thread_time() - app, backend_seconds(pid) - database
            if self.counting:
                spent = self.kinds[kind]
                spent.calls += 1
                spent.app += app
                spent.database += max(database, 0.0)
                hour = int((self.clock.now - START).total_seconds() // 3600)
                self.hours[hour] += app + max(database, 0.0)


class Idle:
    """Each periodic run's CPU when nothing is due, sampled through the month: run again
    right after the periodic run has done what was due, as production's beat runs it
    every few seconds in between (the hand-out and the receipts every 5, the sweep every
    30). What the sweep reads grows with the running games: it reads every open step."""

    def __init__(self) -> None:
        self.spent: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
        self.seconds = 0.0  # all of it, app and PostgreSQL: not the month's work

    def sample(self, calls: dict[str, Callable[[], object]]) -> None:
        for name, call in calls.items():
            app, database = timed(call, 1)
            spent = self.spent[name]
            spent[0], spent[1], spent[2] = spent[0] + 1, spent[1] + app, spent[2] + database
            self.seconds += app + database

    def mean(self, name: str) -> tuple[float, float]:
        runs, app, database = self.spent[name]
        return (app / runs, database / runs) if runs else (0.0, 0.0)


# --- the month ---------------------------------------------------------------------------


@dataclass(order=True)
class Event:
    at: datetime
    number: int
    what: str = field(compare=False)
    data: tuple[int, ...] = field(compare=False, default=())


class Month:
    """The games, their players and the month's events, played in time order."""

    def __init__(self, mix: Mix, games: int, end: datetime) -> None:
        self.mix, self.end = mix, end
        self.clock = Clock(START - timedelta(days=1))
        self.meter = Meter(self.clock)
        self.events: list[Event] = []
        self.pushed = 0
        self.kind_of: dict[int, Kind] = {}
        self.kinds_ever: dict[int, str] = {}
        self.players: dict[tuple[int, int], Player] = {}
        self.outbox: list[int] = []
        self.kept: list[int] = []
        self.last_step = 0
        self.deadlines: set[datetime] = set()
        self.counts: Counter[str] = Counter()
        self.sent_by_hour: Counter[int] = Counter()
        self.webhook = Client()
        self.background = Background(cpu.postmaster())
        self.ticks = 0
        self.idle = Idle()
        self.gm = get_user_model().objects.create(username="bench-gm", email="gm@example.org")
        # The workers' hand-over, in this process: rows to send and posts to read are
        # kept here and handled after each event, as a worker would at once.
        queueing.enqueue = self.enqueue
        # sending's own name for it (rows a batch hands back), imported from queueing.
        sending.enqueue = self.enqueue  # type: ignore[attr-defined]
        inbound.hand_out = self.hand_out
        for kind, start in mix.first_games(games):
            self.push(start, "start", (mix.kinds.index(kind),))
        self.push(START, "begin")
        moment = START
        while moment < end:
            self.push(moment, "tick")
            moment += TICK

    def enqueue(self, ids: list[int], *, urgent: bool = False) -> None:
        self.outbox += ids

    def hand_out(self, ids: list[int]) -> None:
        self.kept += ids

    def push(self, at: datetime, what: str, data: tuple[int, ...] = ()) -> None:
        self.pushed += 1
        heapq.heappush(self.events, Event(at, self.pushed, what, data))

    def run(self, on_begin: Callable[[], None]) -> None:
        """Every event before the end, in time order, each followed by the email it wrote
        being sent and the steps it opened being handed to their players."""
        handlers = {
            "start": lambda data: self.new_game(self.mix.kinds[data[0]]),
            "begin": lambda data: on_begin(),
            "order": lambda data: self.answer(*data),
            "deadline": lambda data: self.resolve(),
            "tick": lambda data: self.tick(),
        }
        day = -1
        while self.events and self.events[0].at < self.end:
            event = heapq.heappop(self.events)
            self.clock.to(event.at)
            handlers[event.what](event.data)
            self.send()
            self.discover()
            if self.meter.counting and (self.clock.now - START).days != day:
                day = (self.clock.now - START).days
                progress(self)

    # --- games and players ---------------------------------------------------------------

    def new_game(self, kind: Kind) -> None:
        """A game of ``kind`` as its GM sets it up: created, its players invited, some of
        them choosing a daily digest on their settings page, started."""
        plan = self.mix.plan(kind)
        now = self.clock.now
        with self.meter("games"):
            game = postal.create_game(
                gm=self.gm,
                engine_key=kind.engine,
                title=f"{kind.title} {len(self.kind_of) + 1}",
                players=[postal.Player(p.name, p.email, plan.zone) for p in plan.players],
                options=dict(kind.options),
                time_zone=plan.zone,
                schedule_spec=plan.schedule,
                missed=postal.MissedTurns(avoid_nights=plan.avoid_nights),
            )
            postal.invite(game.pk, now=now)
            for position, player in enumerate(plan.players):
                if player.digest:
                    postal.choose_reports(
                        game.pk, position=position, choice="digest", everywhere=False
                    )
            postal.start_game(game.pk, now=now, seed=plan.seed)
        self.counts["games started"] += self.meter.counting
        self.kind_of[game.pk] = kind
        self.kinds_ever[game.pk] = kind.key
        for position, player in enumerate(plan.players):
            self.players[(game.pk, position)] = player

    def replace_finished(self) -> None:
        over = (
            Game.objects.filter(
                pk__in=list(self.kind_of), status__in=[Game.Status.FINISHED, Game.Status.ABANDONED]
            )
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        for game_id in over:
            kind = self.kind_of.pop(game_id)
            self.counts["games ended"] += self.meter.counting
            for key in [key for key in self.players if key[0] == game_id]:
                del self.players[key]
            self.new_game(kind)

    def discover(self) -> None:
        """The steps opened since the last look: their deadlines, and each prompted
        player's answer, if they answer in time."""
        opened = (
            Step.objects.filter(pk__gt=self.last_step, status=Step.Status.OPEN)
            .order_by("pk")
            .values_list("pk", "game_id", "number", "opened_at", "deadline", "prompts")
        )
        for pk, game_id, number, opened_at, deadline, prompts in opened:
            self.last_step = pk
            kind = self.kind_of.get(game_id)
            if kind is None:
                continue
            if deadline not in self.deadlines:
                self.deadlines.add(deadline)
                self.push(deadline + LAG, "deadline")
            for position in sorted({prompt["seat"] for prompt in prompts}):
                at = self.mix.answer_at(
                    kind, self.players[(game_id, position)], opened_at, deadline
                )
                if at is not None:
                    self.push(max(at, self.clock.now), "order", (game_id, number, position))

    def answer(self, game_id: int, number: int, position: int) -> None:
        """A player's answer to the prompt of step ``number``, unless the game moved on."""
        row = (
            Game.objects.filter(pk=game_id, status=Game.Status.RUNNING, step_number=number)
            .values_list("engine", "state")
            .first()
        )
        player = self.players.get((game_id, position))
        if row is None or player is None:
            self.counts["answers too late: the game moved on"] += self.meter.counting
            return
        text = order_text(row[0], row[1], position)
        if player.way == "email":
            self.email_order(game_id, player, text)
        else:
            self.web_order(game_id, position, number, player, text)

    def web_order(
        self, game_id: int, position: int, number: int, player: Player, text: str
    ) -> None:
        link = None
        if player.browser is None or self.clock.now - player.opened >= COOKIE:
            link = self.latest_link(game_id, player.email)
            player.browser = player.browser or Client(
                enforce_csrf_checks=True, REMOTE_ADDR=player.address
            )
            player.opened = self.clock.now
        browser, page = player.browser, f"/play/{game_id}/{position}/"
        with self.meter("web"):
            if link is not None:
                opened = browser.get(link)
                browser.post(link, urlencode({"csrfmiddlewaretoken": csrf(opened)}), FORM)
            form = {"step": number, "seat": position, "entry": "text", "text": text}
            form["csrfmiddlewaretoken"] = csrf(browser.get(page))
            posted = browser.post(page, urlencode(form), FORM)
            if posted.status_code == 302:
                browser.get(posted["Location"])
        taken = posted.status_code == 302
        self.counts["web orders taken" if taken else "web orders refused"] += self.meter.counting

    def latest_link(self, game_id: int, email: str) -> str:
        """The link in the player's latest email of the game (their inbox, not the
        product's work)."""
        for body in (
            OutboundEmail.objects.filter(game_id=game_id, to=email)
            .order_by("-pk")
            .values_list("text", flat=True)[:5]
        ):
            if found := LINK.search(body):
                return found[0]
        raise RuntimeError(f"no email of game {game_id} to {email} holds a link")

    def email_order(self, game_id: int, player: Player, text: str) -> None:
        """A reply to the player's latest email, the order above the quoted email, posted
        as Postmark posts it; the mail worker reads it at once."""
        latest = (
            OutboundEmail.objects.filter(game_id=game_id, to=player.email)
            .exclude(reply_to="")
            .order_by("-pk")
            .values_list("subject", "text", "message_id", "reply_to")
            .first()
        )
        assert latest is not None, f"no email of game {game_id} to {player.email}"
        self.counts["emails posted"] += 1
        payload = postmark_reply(player, latest, text, self.counts["emails posted"], self.clock.now)
        with self.meter("email"):
            answer = self.webhook.post(
                WEBHOOK, payload, "application/json", HTTP_AUTHORIZATION=AUTHORIZATION
            )
            kept, self.kept = self.kept, []
            states = [inbound.read(pk, now=self.clock.now, views=webhooks.VIEWS) for pk in kept]
        taken = answer.status_code == 200 and states == ["order"]
        self.counts["email orders taken" if taken else "email orders refused"] += (
            self.meter.counting
        )

    # --- the workers' periodic work ------------------------------------------------------

    def resolve(self) -> None:
        with self.meter("deadline"):
            done = self.steps_run()
        self.counts["steps resolved by the steps run"] += done * self.meter.counting

    def steps_run(self) -> int:
        """The steps run: the due steps counted (the hand-out), then claimed and resolved
        STEP_BATCH to a task, each task's email handed over at its end; how many."""
        most = settings.STEP_BATCH * settings.STEP_TASKS_MOST
        postal.count_due_steps(self.clock.now, most=most)
        resolved = 0
        while True:
            with queueing.enqueue_after():
                done = postal.resolve_due_steps(now=self.clock.now, limit=settings.STEP_BATCH)
            resolved += done
            if done < settings.STEP_BATCH:
                return resolved

    def tick(self) -> None:
        now = self.clock.now
        with self.meter("receipts"):
            while postal.write_receipts(now=now) >= settings.SWEEP_BATCH:
                pass
        self.resolve()
        with self.meter("sweep"):
            tasks.sweep()
        if (now.hour, now.minute) == (3, 30):
            with self.meter("prune"):
                retention.prune(now=now)
        self.replace_finished()
        if self.meter.counting:
            self.background.look()
            self.ticks += 1
            if self.ticks % IDLE_EVERY == 0:
                self.idle.sample(poll_calls(self))

    def send(self) -> None:
        """What the mail workers send at once: the rows written, MAIL_BATCH to a task."""
        rounds = 0
        while self.outbox:
            batch, self.outbox = (
                self.outbox[: settings.MAIL_BATCH],
                self.outbox[settings.MAIL_BATCH :],
            )
            with self.meter("send"):
                states = sending.send_batch(batch, now=self.clock.now)
            sent = sum(state == OutboundEmail.State.SENT for state in states.values())
            if self.meter.counting:
                self.counts["emails sent"] += sent
                self.sent_by_hour[int((self.clock.now - START).total_seconds() // 3600)] += sent
            rounds += 1
            if rounds > 1000:
                raise RuntimeError("the outbox does not empty: is the SMTP server there?")


def csrf(page: Any) -> str:
    found = CSRF.search(page.content.decode())
    if found is None:
        raise RuntimeError(f"{page.request['PATH_INFO']} answered {page.status_code}, no form")
    return found[1]


def postmark_reply(
    player: Player, latest: tuple[str, str, str, str], text: str, number: int, now: datetime
) -> str:
    """Postmark's inbound post of a player's reply: the order, then the email quoted."""
    subject, body, message_id, reply_to = latest
    date = format_datetime(now)
    quoted = "\n".join(f"> {line}" for line in body.splitlines())
    return json.dumps(
        {
            "From": player.email,
            "FromFull": {"Email": player.email, "Name": player.name, "MailboxHash": ""},
            "To": reply_to,
            "ToFull": [{"Email": reply_to, "Name": "", "MailboxHash": ""}],
            "OriginalRecipient": reply_to,
            "Subject": f"Re: {subject}",
            "MessageID": f"bench-month-{number}",
            "Date": date,
            "TextBody": f"{text}\n\nOn {date}, the moderator wrote:\n{quoted}\n",
            "HtmlBody": "",
            "Headers": [
                {"Name": "Message-ID", "Value": f"<month-{number}@mail.example.net>"},
                {"Name": "In-Reply-To", "Value": message_id},
            ],
            "Attachments": [],
        }
    )


# --- measuring ---------------------------------------------------------------------------


class Errors(logging.Handler):
    """The product's log records of ERROR and above during the run."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(f"{record.name}: {record.getMessage()}"[:300])


def poll_calls(month: Month) -> dict[str, Callable[[], object]]:
    """The periodic runs, each as the month runs it: the beat's hand-out of due steps
    (their count), the steps run (the count, and claims), the receipts run, the sweep."""
    most = settings.STEP_BATCH * settings.STEP_TASKS_MOST
    return {
        "hand out": lambda: postal.count_due_steps(month.clock.now, most=most),
        "steps run": month.steps_run,
        "receipts": lambda: postal.write_receipts(now=month.clock.now),
        "sweep": tasks.sweep,
    }


def timed(call: Callable[[], object], count: int) -> tuple[float, float]:
    """CPU seconds (app, PostgreSQL) of one ``call``, the mean of ``count``."""
    pid = backend_pid()
    app, database = time.thread_time(), backend_seconds(pid)
    for _ in range(count):
        call()
    app, database = time.thread_time() - app, backend_seconds(pid) - database
    return app / count, database / count


def empty_polls(month: Month, count: int) -> dict[str, tuple[float, float]]:
    """Each periodic run's CPU when there is no game at all (before the first)."""
    calls = poll_calls(month)
    for call in calls.values():  # the statements prepared first
        for _ in range(10):
            call()
    return {name: timed(call, count) for name, call in calls.items()}


def grown(month: Month, start: month_sizing.Sizes, end: datetime) -> month_sizing.Growth:
    """The tables as the month left them; after VACUUM FULL; after the setup's own email
    bodies and links are pruned (they are in the start's figures), VACUUM FULL; and after
    the month's are pruned too, as the daily pruning will once their retention has passed
    (a body MAIL_RETENTION_DAYS after it was written, a link LINK_DAYS after it was
    minted), VACUUM FULL."""
    as_left = month_sizing.sizes()
    month_sizing.vacuum(full=True)
    live = month_sizing.sizes()
    pruning.prune_bodies(now=START + timedelta(days=settings.MAIL_RETENTION_DAYS))
    retention.prune_links(now=START + timedelta(days=settings.LINK_DAYS))
    month_sizing.vacuum(full=True)
    setup_pruned = month_sizing.sizes()
    later = max(settings.MAIL_RETENTION_DAYS, settings.LINK_DAYS) + 1
    pruned = retention.prune(now=end + timedelta(days=later))
    if pruned.bodies == 0:
        raise SystemExit("pruning removed no email body: nothing was measured")
    month_sizing.vacuum(full=True)
    return month_sizing.Growth(start, as_left, live, setup_pruned, month_sizing.sizes())


# --- the run -----------------------------------------------------------------------------


def play(games: int, days: float, mix: Mix, server: bench.SmtpServer) -> month_report.Measured:
    end = START + timedelta(days=days)
    month = Month(mix, games, end)
    alone = {"smtp server": server.process.pid}
    marks: dict[str, Any] = {}

    def begin() -> None:
        month_sizing.vacuum(full=True)
        sent = OutboundEmail.objects.filter(state=OutboundEmail.State.SENT).count()
        if sent:
            server.wait_for(sent, 60)
        pid = backend_pid()
        marks.update(
            start=month_sizing.sizes(),
            database=month_sizing.database_size(),
            received=server.received,
            active=len(month.kind_of),
            wall=time.perf_counter(),
            thread=time.thread_time(),
            cpu=cpu.snapshot({}, month.background.postmaster, alone),
            backend=(pid, backend_seconds(pid)),
        )
        month.background.look()
        month.meter.counting = True

    empty = empty_polls(month, count=100)
    month.run(begin)
    month.meter.counting = False
    month.background.look()
    spent = cpu.spent(marks["cpu"], cpu.snapshot({}, month.background.postmaster, alone))
    pid, backend_then = marks["backend"]
    backend = backend_seconds(pid) - backend_then if pid == backend_pid() else math.nan
    thread = time.thread_time() - marks["thread"]
    wall = time.perf_counter() - marks["wall"]
    month.clock.to(end)
    work = {key: (on.calls, on.app, on.database) for key, on in month.meter.kinds.items()}
    # Every message the month sent has arrived (and any sent twice, too).
    if month.counts["emails sent"]:
        server.wait_for(marks["received"] + month.counts["emails sent"], 60)
    arrivals = server.since(0)[marks["received"] :]
    metered = sum(app + database for _, app, database in work.values())
    full = {name: month.idle.mean(name) for name in empty}
    growth = grown(month, marks["start"], end)
    month.clock.stop()
    return month_report.Measured(
        games=games,
        days=days,
        mix=mix,
        counts=month.counts,
        kinds_ever=month.kinds_ever,
        running=Counter(kind.key for kind in month.kind_of.values()),
        hours=month.meter.hours,
        sent_by_hour=month.sent_by_hour,
        ticks=month.meter.kinds["sweep"].calls,
        work=work,
        postgres_own=month.background.seconds,
        smtp_server=spent["smtp server"],
        benchmark=thread + backend - metered - month.idle.seconds,
        arrivals=arrivals,
        polls=month_report.Polls(empty, full, games),
        growth=growth,
        database=(marks["database"], month_sizing.database_size()),
        wall=wall,
        active=marks["active"],
    )


def progress(month: Month) -> None:
    day = (month.clock.now - START).days
    print(
        f"day {day:3d}: {month.counts['steps resolved by the steps run']} steps at their "
        f"deadline, {month.counts['web orders taken']} web and "
        f"{month.counts['email orders taken']} email orders, {month.counts['emails sent']} "
        f"emails, {len(month.kind_of)} games",
        flush=True,
    )


def main() -> None:
    parser = bench.arguments(__doc__.splitlines()[0], NAME)
    parser.add_argument("--games", type=int, default=1000, help="active games")
    parser.add_argument("--days", type=float, default=30, help="days of the month")
    parser.add_argument("--email-share", type=float, default=0.3, help="players by email")
    parser.add_argument("--silent-share", type=float, default=0.05, help="players who never answer")
    parser.add_argument("--digest-share", type=float, default=0.1, help="players with a digest")
    parser.add_argument("--mix", default="", help="weights by kind: choice=27,drop-shy=20,...")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    games, days = (QUICK_GAMES, QUICK_DAYS) if args.quick else (args.games, args.days)
    mix = Mix(
        parse_mix(args.mix),
        email=args.email_share,
        never=args.silent_share,
        digest=args.digest_share,
        seed=args.seed,
    )
    bench.fresh_database()
    bench.flush_redis()
    errors = Errors()
    logging.getLogger().addHandler(errors)
    server = bench.SmtpServer()
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", server.port
    try:
        measured = play(games, days, mix, server)
    finally:
        server.stop()
    tables, per = month_report.tables(measured)
    machine = {row["games"]: row for row in month_sizing.machine_rows(per)}
    checks = month_report.checks(measured, errors.records)
    targets = [
        *checks,
        bench.Target(
            "10,000 active games: cores at 50% on average and 80% in the busiest hour",
            "at most 2 (this machine's)",
            f"{machine[10_000]['cores']} ({machine[10_000]['average']:.3f} on average, "
            f"{machine[10_000]['peak']:.3f} in the busiest hour)",
            machine[10_000]["cores"] <= 2,
        ),
        *(
            bench.Target(
                f"{games:,} active games: one sweep's CPU, nothing due",
                f"under SWEEP_SECONDS ({settings.SWEEP_SECONDS} s)",
                f"{machine[games]['sweep']:.1f} s",
                machine[games]["sweep"] < settings.SWEEP_SECONDS,
            )
            for games in (10_000, 100_000)
        ),
    ]
    counts = measured.counts
    bench.report(
        args.json,
        name=NAME,
        title="What a game costs: a month of a realistic mix, per 1,000 active games",
        quick=args.quick,
        method=month_report.method(measured),
        parameters={
            "games": games,
            "days": days,
            "games_at_start": measured.active,
            "email_share": args.email_share,
            "silent_share": args.silent_share,
            "digest_share": args.digest_share,
            "seed": args.seed,
            "database_mb_at_start": round(measured.database[0] / month_sizing.MB, 1),
            "database_mb_at_end": round(measured.database[1] / month_sizing.MB, 1),
            "wall_seconds": round(measured.wall),
            "answers_too_late": counts["answers too late: the game moved on"],
            "web_orders_refused": counts["web orders refused"],
            "email_orders_refused": counts["email orders refused"],
        },
        tables=tables,
        targets=targets,
    )
    for record in errors.records[:10]:
        print(f"  logged: {record}")
    if not all(target.met for target in checks):
        raise SystemExit("an order was lost, an email sent twice or a step failed: see above")


QUICK_GAMES = 40
QUICK_DAYS = 6


if __name__ == "__main__":
    main()
