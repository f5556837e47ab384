"""Benchmark: the embedded default's limits: how many games ``make run`` carries (SQLite for
the database and the broker, one worker, email written to files) before its deadlines fall
behind.

    .venv/bin/python bench/embedded_limits.py [--quick] [--games 50 100 ... 6400]
        [--stop-after 180] [--batches 4] [--period 60] [--per-batch M ...]
        [--json var/bench/embedded_limits.json]

Each run is ``make run`` itself (migrate, the demo, supervisord with supervisord.conf: the
web server, one worker ``--pool solo`` on every queue, and beat) in a folder of its own
(``VAR_DIR``, emptied for each run; the whole temporary folder is removed at the end) and
on a port of its own, with the environment of a fresh machine (no database, Redis, broker
or secret of this shell's): the settings' defaults, nothing changed for the benchmark. The
5-seat Choice games are made in its database before it starts (made once, kept in a
stock database copied for each run; their first reports marked sent: they are not
measured). Reports are the messages Django's file backend writes to ``VAR_DIR/mail`` (one
file per connection, a mail task's batch of messages in each), each timed when this script
first sees it whole (it looks four times a second).

1. The rush: step 1 of N games falls due at one second, N growing (50, 100, 200, ...)
   until a rush's last report is more than ``--stop-after`` seconds late. Seconds after
   the deadline to the first and last step resolved and the first and last report
   written; steps a second; and the worker's time: on a core, waiting for one (other
   processes on the cores), blocked (the rest: a message, a lock, the disk).
2. The steady schedule: every ``--period`` seconds (a minute) the steps of a batch of M
   games fall due, ``--batches`` times. A batch's lag is the time from its deadline to its
   last report. The schedule keeps up while the lag stays flat; it falls behind when the
   lag grows from batch to batch, or when the worker has no moment free (each batch still
   being written when the next batch's first step is resolved) and the lag does not come
   down. M is tried at fractions of what the largest rush's rate does in a period, upwards,
   until one falls behind: the largest M that kept up is the steps a minute the embedded
   default sustains, translated into games of a few kinds.

Beside them, when ``var/bench/deadline_rush.json`` exists, the largest rush of
bench/deadline_rush.py (PostgreSQL, Redis and the workers of docker/compose.yaml).

Every ``make run``'s output is kept in ``var/bench/logs/embedded-<run>.log``. Its lines with
ERROR, CRITICAL, a traceback or "database is locked", its processes restarted, steps whose
resolution failed and emails other than the reports are counted; a run with any of them,
or with a report missing, is reported so and the script exits non-zero.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench
from bench.soak_make_run import Run, embedded_default

NAME = "embedded_limits"
SEATS = 5
# A deadline comes this long after make run answers and its worker is ready.
LEAD_SECONDS = 5
# How often the mail folder is looked at.
LOOK_SECONDS = 0.25
# A schedule whose last batch's lag is this much longer than the shortest lag of the
# batches before has fallen behind (the noise of a shared machine, of the steps run every
# STEP_SWEEP_SECONDS and of a fresh worker's first tasks is less).
GROWTH_SECONDS = 10.0
# A lag that comes down by less than this has not come down (the same noise).
LEEWAY_SECONDS = 2.0
# The batch sizes tried, as fractions of what the largest rush's rate resolves in a period;
# past the last, each next one half again, until one falls behind or MOST_SCHEDULES ran
# (when the first falls behind, half as many, until one keeps up).
FRACTIONS: tuple[float, ...] = (0.6, 0.8, 0.9, 1.0, 1.1, 1.25)
MOST_SCHEDULES = 8
QUICK_FRACTIONS = (0.5, 1.5)
ERRORS = re.compile(r"ERROR|CRITICAL|Traceback|database is locked")
RECIPIENT = re.compile(rb"^To: (.*)$", re.M)
# The players' addresses: p<seat>.g<number of the game>@example.org.
PLAYER = re.compile(r"\.g(\d+)@example\.org")


# --- the embedded default ------------------------------------------------------------------


def copy_database(source: Path, target: Path) -> None:
    """A consistent copy of a SQLite database (its WAL included), by SQLite's backup."""
    with closing(sqlite3.connect(source)) as origin, closing(sqlite3.connect(target)) as copy:
        origin.backup(copy)


class Embedded:
    """One folder for ``make run``'s VAR_DIR, emptied before each run, and this process's
    Django working in it too (the settings read VAR_DIR once). Beside it a stock database,
    migrated, with every game made so far: each run starts from a copy, so games are made
    once (make run's migrate then finds nothing to do)."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="embedded-limits-"))
        self.var = self.folder / "var"
        self.stock = self.folder / "stock.sqlite3"
        self.games: list[int] = []  # the stock's games, in the order they were made
        self.port = bench.free_port()
        self.env = embedded_default(self.var, self.port)
        for key in list(os.environ):
            if key not in self.env:
                del os.environ[key]
        os.environ.update(self.env)
        # This process's own: the steps its games open log nothing.
        os.environ["LOG_LEVEL"] = "WARNING"
        os.environ["DJANGO_SETTINGS_MODULE"] = "moderator.settings"
        import django
        from django.core.management import call_command
        from django.db import connections

        try:
            django.setup()
            self.var.mkdir(parents=True, exist_ok=True)
            call_command("migrate", verbosity=0)
            connections.close_all()
            copy_database(self.var / "db.sqlite3", self.stock)
        except BaseException:
            self.remove()
            raise

    def fresh(self, games: int) -> list[int]:
        """An empty VAR_DIR whose database holds at least ``games`` games; their ids."""
        from django.db import connections

        connections.close_all()
        shutil.rmtree(self.var, ignore_errors=True)
        self.var.mkdir(parents=True)
        copy_database(self.stock, self.var / "db.sqlite3")
        if len(self.games) < games:
            self.games += make_games(len(self.games), games - len(self.games))
            connections.close_all()
            copy_database(self.var / "db.sqlite3", self.stock)
        return self.games[:games]

    def start(self, label: str) -> Run:
        """``make run`` in VAR_DIR, once its web answers, its worker is ready and beat has
        started."""
        from django.db import connections

        connections.close_all()
        bench.LOGS.mkdir(parents=True, exist_ok=True)
        log = bench.LOGS / f"embedded-{label}.log"
        log.unlink(missing_ok=True)
        run = Run(self.env, log)
        deadline = time.monotonic() + 180
        healthz = f"http://127.0.0.1:{self.port}/healthz"
        while not (
            "ready." in run.text() and "beat: Starting" in run.text() and bench.answers(healthz)
        ):
            if run.process.poll() is not None or time.monotonic() > deadline:
                if run.process.poll() is None:
                    run.stop()
                raise RuntimeError(f"make run did not come up; the end of its log:\n{tail(run)}")
            time.sleep(0.5)
        return run

    def remove(self) -> None:
        from django.db import connections

        connections.close_all()
        shutil.rmtree(self.folder, ignore_errors=True)


def tail(run: Run) -> str:
    return run.text()[-3000:]


def trouble(run: Run, since: datetime) -> dict[str, Any]:
    """What went wrong: error lines and processes restarted in make run's output (and the
    first few lines), steps whose resolution failed, and emails to the benchmark's
    players other than reports (a reminder would be one: none is expected)."""
    from games.models import Step
    from moderator.mail.models import OutboundEmail

    lines = run.text().splitlines()
    errors = [line for line in lines if ERRORS.search(line)]
    other = OutboundEmail.objects.filter(created_at__gte=since, game__gm__username="bench-gm")
    return {
        "errors": len(errors),
        "restarts": sum(1 for line in lines if " exited: " in line),
        "first_errors": errors[:5],
        "failed_steps": Step.objects.filter(failures__gt=0).count(),
        "other_emails": other.exclude(kind="report").count(),
    }


# --- the worker's time ---------------------------------------------------------------------

WORKER = "celery -A moderator worker"


class WorkerClock:
    """The time of make run's worker (make leads the run's session: started in a session of
    its own), sampled with each look at the mail folder: seconds so far on a core, and
    runnable but waiting for one (the cores busy with other processes), its threads
    together (/proc/<pid>/task/*/schedstat). The rest of its time it was blocked: waiting
    for a message, a lock, the disk."""

    def __init__(self, session: int) -> None:
        self.pid = next(
            (pid for pid, command in session_processes(session) if WORKER in command), None
        )
        if self.pid is None:
            raise RuntimeError("make run's worker is not running")
        self.samples: list[tuple[float, float, float]] = []  # when, on a core, waiting
        self.sample()

    def sample(self) -> None:
        on_core = waiting = 0
        try:
            for task in Path(f"/proc/{self.pid}/task").iterdir():
                fields = (task / "schedstat").read_text().split()
                on_core, waiting = on_core + int(fields[0]), waiting + int(fields[1])
        except OSError:
            return  # the worker stopped
        self.samples.append((time.time(), on_core / 1e9, waiting / 1e9))

    def over(self, start: float, end: float) -> tuple[float, float]:
        """The shares of the time from ``start`` to ``end`` the worker spent on a core and
        waiting for one, between the samples nearest outside them."""
        before = [sample for sample in self.samples if sample[0] <= start] or self.samples[:1]
        after = [sample for sample in self.samples if sample[0] >= end] or self.samples[-1:]
        (began, core0, wait0), (ended, core1, wait1) = before[-1], after[0]
        if ended <= began:
            return math.nan, math.nan
        return (core1 - core0) / (ended - began), (wait1 - wait0) / (ended - began)


def session_processes(session: int) -> list[tuple[int, str]]:
    """The processes of ``session``: pid and command line."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # After the command: state, ppid, pgrp, session, ...
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(fields[3]) == session:
            found.append((int(entry.name), command))
    return found


# --- the games ------------------------------------------------------------------------------


def make_games(first: int, count: int) -> list[int]:
    """``count`` running 5-seat Choice games numbered from ``first`` (titles "g <n>",
    players p<seat>.g<n>@example.org), their step 1 due in two days; their first reports
    are marked sent, never written (they are not measured). Their ids."""
    from django.contrib.auth import get_user_model

    from games import postal
    from moderator.mail import queueing
    from moderator.mail.models import OutboundEmail

    gm, _ = get_user_model().objects.get_or_create(username="bench-gm")
    now = datetime.now(UTC)
    ids = []
    enqueue = queueing.enqueue
    queueing.enqueue = bench.enqueue_nothing
    try:
        for number in range(first, first + count):
            game = postal.create_game(
                gm=gm,
                engine_key="choice",
                title=f"g {number}",
                players=[
                    postal.Player(f"p{seat}", f"p{seat}.g{number}@example.org")
                    for seat in range(SEATS)
                ],
            )
            ids.append(postal.start_game(game.pk, now=now).pk)
    finally:
        queueing.enqueue = enqueue
    OutboundEmail.objects.filter(state=OutboundEmail.State.PENDING).update(
        state=OutboundEmail.State.SENT, sent_at=now
    )
    return ids


def fall_due(games: list[int], at: float) -> None:
    """Step 1 of each of ``games`` falls due at ``at`` (a time.time()), having opened an
    hour before: the reminders of a step (24 and 2 hours before its deadline by default)
    whose time came before it opened are not sent."""
    from games.models import Step

    deadline = datetime.fromtimestamp(at, UTC)
    for start in range(0, len(games), 5000):
        Step.objects.filter(game_id__in=games[start : start + 5000], number=1).update(
            deadline=deadline, opened_at=deadline - timedelta(hours=1)
        )


def closed_at(games: list[int]) -> list[float]:
    """When step 1 of each of ``games`` was resolved (of those resolved), in order."""
    from games.models import Step

    moments: list[float] = []
    for start in range(0, len(games), 5000):
        steps = Step.objects.filter(game_id__in=games[start : start + 5000], number=1)
        moments += [m.timestamp() for m in steps.values_list("closed_at", flat=True) if m]
    return sorted(moments)


# --- the mail folder ------------------------------------------------------------------------


@dataclass(frozen=True)
class Written:
    """A message make run wrote: when this script first saw it whole, and the number of
    the game whose player it was written to (None: another's, the demo's)."""

    at: float
    game: int | None


class MailFolder:
    """The messages of VAR_DIR/mail, each timed when first seen whole. Django's file
    backend writes one file per connection (a mail task's batch), appending each message
    and a line of dashes after it, and never touches a file again once it is closed."""

    def __init__(self, folder: Path) -> None:
        from moderator.mail.mailfiles import SEPARATOR

        self.folder = folder
        self.separator = SEPARATOR
        self.read: dict[str, tuple[int, int]] = {}  # file name: bytes and messages read
        self.messages: list[Written] = []
        self.counts: Counter[int] = Counter()  # messages to each game's players

    def look(self) -> None:
        now = time.time()
        if not self.folder.is_dir():
            return
        with os.scandir(self.folder) as scan:
            files = [item for item in scan if item.is_file() and not item.name.startswith(".")]
        for item in files:
            size, known = self.read.get(item.name, (0, 0))
            if item.stat().st_size == size:
                continue
            data = Path(item.path).read_bytes()
            whole = data.split(self.separator)[:-1]
            for message in whole[known:]:
                found = RECIPIENT.search(message.partition(b"\n\n")[0])
                player = PLAYER.search(found.group(1).decode(errors="replace")) if found else None
                game = int(player[1]) if player else None
                self.messages.append(Written(now, game))
                if game is not None:
                    self.counts[game] += 1
            self.read[item.name] = (len(data), len(whole))

    def count(self, numbers: range) -> int:
        """How many messages were written to the players of the games numbered ``numbers``."""
        return sum(self.counts[number] for number in numbers)

    def to(self, numbers: range) -> list[float]:
        """When the messages to the players of the games numbered ``numbers`` were written,
        in order."""
        return sorted(m.at for m in self.messages if m.game is not None and m.game in numbers)


def watch(
    run: Run,
    mail: MailFolder,
    clock: WorkerClock,
    done: Callable[[], bool],
    timeout: float,
    what: str,
) -> bool:
    """Look at the mail folder and the worker's time until ``done``; False after
    ``timeout`` seconds."""
    began = time.monotonic()
    while not done():
        if run.process.poll() is not None:
            raise RuntimeError(f"make run ended during {what}; the end of its log:\n{tail(run)}")
        if time.monotonic() - began > timeout:
            return False
        time.sleep(LOOK_SECONDS)
        mail.look()
        clock.sample()
    return True


# --- 1. the rush ----------------------------------------------------------------------------


def rush(embedded: Embedded, games: int, timeout: float) -> dict[str, Any]:
    """Step 1 of ``games`` games falls due at one second."""
    began = time.monotonic()
    ids = embedded.fresh(games)
    setup = time.monotonic() - began
    run = embedded.start(f"rush-{games}")
    since = datetime.now(UTC)
    numbers = range(games)
    expected = games * SEATS
    mail = MailFolder(embedded.var / "mail")
    try:
        mail.look()
        deadline = float(math.ceil(time.time()) + LEAD_SECONDS)
        fall_due(ids, deadline)
        clock = WorkerClock(run.process.pid)
        complete = watch(
            run,
            mail,
            clock,
            lambda: mail.count(numbers) >= expected,
            timeout,
            f"a rush of {games}",
        )
    finally:
        run.stop()
    mail.look()  # whatever was written after: a report written twice would show
    reports = mail.to(numbers)
    closed = closed_at(ids)
    if not reports or not closed:
        raise RuntimeError(f"a rush of {games}: {len(closed)} steps and {len(reports)} reports")
    working = reports[-1] - closed[0]  # from the first step resolved to the last report
    on_core, waiting = clock.over(closed[0], reports[-1])
    return {
        "games": games,
        "setup_seconds": setup,
        "complete": complete,
        "reports": len(reports),
        "expected": expected,
        "steps": len(closed),
        "first_step": closed[0] - deadline,
        "last_step": closed[-1] - deadline,
        "first_report": reports[0] - deadline,
        "last_report": reports[-1] - deadline,
        "steps_per_second": len(closed) / max(closed[-1] - closed[0], 1e-3),
        "games_per_second": games / working,
        "worker_cpu": on_core,
        "worker_waiting": waiting,
        **trouble(run, since),
    }


# --- 2. the steady schedule -----------------------------------------------------------------


def steady(
    embedded: Embedded, per_batch: int, batches: int, period: float, timeout: float
) -> dict[str, Any]:
    """``batches`` batches of ``per_batch`` games, the steps of each batch due ``period``
    seconds after the batch before's."""
    ids = embedded.fresh(per_batch * batches)
    run = embedded.start(f"steady-{per_batch}")
    since = datetime.now(UTC)
    groups = [range(k * per_batch, (k + 1) * per_batch) for k in range(batches)]
    expected = per_batch * SEATS
    mail = MailFolder(embedded.var / "mail")
    try:
        mail.look()
        first = float(math.ceil(time.time()) + LEAD_SECONDS)
        deadlines = [first + k * period for k in range(batches)]
        for group, at in zip(groups, deadlines, strict=True):
            fall_due(ids[group.start : group.stop], at)
        clock = WorkerClock(run.process.pid)
        complete = watch(
            run,
            mail,
            clock,
            lambda: all(mail.count(group) >= expected for group in groups),
            batches * period + timeout,
            f"a steady schedule of {per_batch}",
        )
    finally:
        run.stop()
    mail.look()  # whatever was written after: a report written twice would show
    lags, lasts, firsts = [], [], []
    for group, at in zip(groups, deadlines, strict=True):
        written = mail.to(group)
        lasts.append(written[-1] if len(written) >= expected else math.inf)
        lags.append(lasts[-1] - at)
        firsts.append(min(closed_at(ids[group.start : group.stop]), default=math.inf))
    on_core, waiting = clock.over(first, max(m.at for m in mail.messages))
    growth = lags[-1] - min(lags[:-1]) if batches > 1 else 0.0
    # A batch still being written when the next one's first step is resolved: the worker
    # had no moment free between them.
    overlaps = sum(lasts[k] > firsts[k + 1] for k in range(batches - 1))
    # Behind: the lag grows, or the worker had no moment free and the lag did not come
    # down (a first batch slowed by a fresh worker or a busy machine, caught up after, is
    # not behind).
    busy = batches > 1 and overlaps == batches - 1
    behind = growth > GROWTH_SECONDS or (busy and growth > -LEEWAY_SECONDS)
    return {
        "per_batch": per_batch,
        "per_minute": per_batch * 60 / period,
        "batches": batches,
        "lags": lags,
        "growth": growth,
        "overlaps": f"{overlaps} of {batches - 1}",
        "keeps_up": complete and not behind,
        "reports": sum(mail.count(group) for group in groups),
        "expected": expected * batches,
        "worker_cpu": on_core,
        "worker_waiting": waiting,
        **trouble(run, since),
    }


# --- beside PostgreSQL and Redis ------------------------------------------------------------


def production_rush(path: Path) -> dict[str, Any] | None:
    """The largest rush of bench/deadline_rush.py's figures at ``path`` (PostgreSQL, Redis,
    the workers of docker/compose.yaml), if that benchmark has run here."""
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    rows: list[dict[str, Any]] = next(
        (t["rows"] for t in data.get("tables", []) if t["title"].startswith("The rush:")), []
    )
    if not rows:
        return None
    row = max(rows, key=lambda row: row["games"])
    resolving = row["steps_last"] - row["steps_first"]
    return {
        "where": "PostgreSQL + Redis (bench/deadline_rush.py"
        + (", a quick run" if data.get("quick") else "")
        + f", {data.get('run_at', '')})",
        "games": row["games"],
        "last_step": row["steps_last"],
        "last_report": row["last"],
        "steps_per_second": row["games"] / resolving if resolving > 0 else math.nan,
        "games_per_second": row["games"] / (row["last"] - row["steps_first"]),
    }


# --- what it carries ------------------------------------------------------------------------

# A Liar's Dice game with daily deadlines: how many of its moves (each a step, each with its
# reports) the worker resolves or reports in a day. An assumption, not a measure: six
# players who each move about twice a day.
LIARS_MOVES_A_DAY = 12


def carried(per_minute: float, rate: float, latency: float, within: float) -> list[dict[str, Any]]:
    """What ``per_minute`` steps a minute sustained, and a rush's ``rate`` games a second
    starting ``latency`` seconds after the deadline, carry: games of a few kinds."""
    shared = max(rate * (within - latency), 0.0)
    return [
        {"games": "Choice (5 seats), all sharing one deadline",
         "carried": f"{shared:,.0f}",
         "from": f"the rush: {rate:.1f} games a second from {latency:.0f} s after the "
                 f"deadline, the last report within {within / 60:g} minutes"},
        {"games": "Choice (5 seats), weekly deadlines at 20:00, each game on one evening",
         "carried": f"{7 * shared:,.0f}",
         "from": "each evening's games a rush (the line above), seven evenings a week"},
        {"games": "Choice (5 seats), weekly deadlines spread over every minute of the week",
         "carried": f"{per_minute * 7 * 24 * 60:,.0f}",
         "from": f"{per_minute:,.0f} steps a minute sustained (the steady schedule); games "
                 "sharing a minute are a rush (first line)"},
        {"games": f"Liar's Dice, daily deadlines, {LIARS_MOVES_A_DAY} moves a game a day",
         "carried": f"{per_minute * 24 * 60 / LIARS_MOVES_A_DAY:,.0f}",
         "from": f"{per_minute:,.0f} steps a minute sustained, the moves spread over the "
                 "day; a move counted as a Choice step (it writes fewer reports)"},
    ]  # fmt: skip


# --- the report -----------------------------------------------------------------------------

TROUBLE = "errors, restarts, failed steps, other emails"
RUSH_COLUMNS = [
    bench.Column("where", "where"),
    bench.Column("games", "games"),
    bench.Column("written", "reports"),
    bench.Column("first_step", "1st step s", ".1f"),
    bench.Column("last_step", "last step s", ".1f"),
    bench.Column("first_report", "1st report s", ".1f"),
    bench.Column("last_report", "last report s", ".1f"),
    bench.Column("steps_per_second", "steps/s", ".1f"),
    bench.Column("games_per_second", "games/s", ".1f"),
    bench.Column("worker_cpu", "worker on a core", ".0%"),
    bench.Column("worker_waiting", "waiting for one", ".0%"),
    bench.Column("trouble", TROUBLE),
]
STEADY_COLUMNS = [
    bench.Column("per_batch", "games a batch"),
    bench.Column("per_minute", "steps a minute", ".0f"),
    bench.Column("lags_text", "lag of each batch s"),
    bench.Column("growth", "growth s", ".1f"),
    bench.Column("overlaps", "overlapping the next"),
    bench.Column("verdict", "verdict"),
    bench.Column("written", "reports"),
    bench.Column("worker_cpu", "worker on a core", ".0%"),
    bench.Column("worker_waiting", "waiting for one", ".0%"),
    bench.Column("trouble", TROUBLE),
]
BESIDE_COLUMNS = [
    bench.Column("where", "where"),
    bench.Column("games", "games"),
    bench.Column("last_step", "last step s", ".1f"),
    bench.Column("last_report", "last report s", ".1f"),
    bench.Column("steps_per_second", "steps/s", ".1f"),
    bench.Column("games_per_second", "games/s", ".1f"),
]
CARRIED_COLUMNS = [
    bench.Column("games", "games"),
    bench.Column("carried", "carried"),
    bench.Column("from", "from"),
]


def troubles(run: dict[str, Any]) -> str:
    return f"{run['errors']}, {run['restarts']}, {run['failed_steps']}, {run['other_emails']}"


def main() -> None:
    parser = bench.arguments(__doc__.splitlines()[0], NAME)
    parser.add_argument("--games", type=int, nargs="+", default=[50, 100, 200, 400, 800, 1600,
                        3200, 6400], help="the rushes' sizes, tried in turn")  # fmt: skip
    parser.add_argument("--stop-after", type=float, default=180,
                        help="no larger rush once one's last report is this late (s)")  # fmt: skip
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--period", type=float, default=60, help="between batches (s)")
    parser.add_argument("--per-batch", type=int, nargs="+", help="instead of the fractions")
    parser.add_argument("--within", type=float, default=300,
                        help="a rush's acceptable end, for what it carries (s)")  # fmt: skip
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()
    fractions, most = FRACTIONS, MOST_SCHEDULES
    if args.quick:
        args.games, args.batches, args.period = [40, 200], 3, 10.0
        fractions, most = QUICK_FRACTIONS, len(QUICK_FRACTIONS)
    embedded = Embedded()
    try:
        rushes: list[dict[str, Any]] = []
        for games in args.games:
            rushes.append(rush(embedded, games, args.timeout))
            last = rushes[-1]
            print(f"  a rush of {games}: last report {last['last_report']:.1f} s", flush=True)
            if not last["complete"] or last["last_report"] > args.stop_after:
                break
        rate = rushes[-1]["games_per_second"]
        sizes = list(args.per_batch or [round(rate * args.period * f) for f in fractions])
        schedules: list[dict[str, Any]] = []
        while sizes and len(schedules) < most:
            per_batch = max(sizes.pop(0), 1)
            if any(run["per_batch"] == per_batch for run in schedules):
                continue
            schedules.append(steady(embedded, per_batch, args.batches, args.period, args.timeout))
            last = schedules[-1]
            lags = ", ".join(f"{lag:.1f}" for lag in last["lags"])
            print(f"  {per_batch} games a batch: lags {lags} s", flush=True)
            if args.per_batch:
                if not last["keeps_up"]:
                    break
            elif not last["keeps_up"]:
                if any(run["keeps_up"] for run in schedules) or per_batch == 1:
                    break
                sizes = [per_batch // 2]  # none kept up yet: half as many
            elif not sizes:
                sizes = [round(per_batch * 1.5)]
    finally:
        embedded.remove()
    finish(args, rushes, schedules)


def finish(args: Any, rushes: list[dict[str, Any]], schedules: list[dict[str, Any]]) -> None:
    rows = [
        run | {"where": "make run", "written": f"{run['reports']} of {run['expected']}",
               "trouble": troubles(run)}
        for run in rushes
    ]  # fmt: skip
    tables = [bench.Table("The rush: seconds after the deadline", RUSH_COLUMNS, rows)]
    beside = production_rush(bench.ROOT / "var" / "bench" / "deadline_rush.json")
    if beside is not None:
        ours = max(rushes, key=lambda run: run["games"]) | {"where": "make run (above)"}
        tables.append(bench.Table("Beside PostgreSQL and Redis", BESIDE_COLUMNS, [ours, beside]))
    steady_rows = [
        run
        | {
            "lags_text": ", ".join(f"{lag:.0f}" for lag in run["lags"]),
            "verdict": "keeps up" if run["keeps_up"] else "falls behind",
            "written": f"{run['reports']} of {run['expected']}",
            "trouble": troubles(run),
        }
        for run in schedules
    ]
    sustained = max((run["per_minute"] for run in schedules if run["keeps_up"]), default=0.0)
    fell = any(not run["keeps_up"] for run in schedules)
    measured = [*rushes, *(run for run in schedules if run["keeps_up"])]
    clean = all(
        run["reports"] == run["expected"]
        and not (run["errors"] or run["restarts"] or run["failed_steps"] or run["other_emails"])
        for run in measured
    )
    largest = rushes[-1]
    by_size = {run["games"]: run for run in rushes}
    targets = [
        bench.Target(f"every report written; {TROUBLE}: none",
                     "in every rush and every schedule that kept up", "yes" if clean else "no",
                     clean),
    ]  # fmt: skip
    for games, goal in ((100, 60.0), (1000, 300.0)):
        if games in by_size:
            last = by_size[games]["last_report"]
            targets.append(
                bench.Target(f"{games:,} games sharing a deadline: the last report",
                             f"within {goal:.0f} s of the deadline", f"{last:.1f} s",
                             last <= goal)
            )  # fmt: skip
    targets.append(
        bench.Target("steps a minute sustained on a steady schedule", "at least 100",
                     f"{sustained:,.0f}" + ("" if fell else " (none fell behind)"),
                     sustained >= 100)
    )  # fmt: skip
    period = f"{args.period:g} s"
    bench.report(
        args.json,
        name=NAME,
        title="The embedded default's limits",
        quick=args.quick,
        method=(
            "Each run is `make run` itself (migrate, demo, supervisord: runserver, one worker "
            "`--pool solo` on every queue, beat) in a fresh VAR_DIR and a port of its own, "
            "with a fresh machine's environment: SQLite for the database, kombu's SQLAlchemy "
            "transport on a SQLite file for the broker, Django's file backend for email; no "
            "setting changed. The 5-seat Choice games are made in its database before it "
            "starts, their first reports marked sent. Reports are the messages written to "
            "VAR_DIR/mail, each timed when the script first saw it whole (4 looks a second). "
            "The rush: step 1 of N games falls due at one second, a few seconds after the "
            "worker is ready (and so just after one of beat's hand-outs of due steps: the "
            "first step waits most of STEP_SWEEP_SECONDS, 5 s, for the next); N grows "
            "until the last report is more than "
            f"{args.stop_after:.0f} s late. Steps/s: steps resolved over the time from the "
            "first to the last; games/s: games over the time from the first step resolved "
            "to the last report. The worker's time over the same (100%: all of it): on a "
            "core, and runnable but waiting for one (the machine's cores busy with other "
            "processes; /proc's schedstat); the rest it was blocked (a message, a lock, the "
            f"disk). The steady schedule: every {period}, the steps of a batch of M games "
            f"fall due, {args.batches} times; a batch's lag is its last report after its "
            "deadline. The schedule falls behind when the lag grows (the last batch's "
            f"exceeds the shortest before it by more than {GROWTH_SECONDS:.0f} s), or when "
            "the worker has no moment free (every batch's last report written after the "
            "next batch's first step was resolved: overlapping the next) and the lag does "
            f"not come down (by {LEEWAY_SECONDS:.0f} s or more). M is tried at fractions of "
            "the largest rush's games a second times the period, upwards, until one falls "
            "behind (if the first does, downwards until one keeps up); the worker's time "
            "over the time from the first deadline to the last report. What that carries: "
            "the steps "
            "a minute sustained and the rush's rate, as games under the assumptions beside "
            "each figure. Beside PostgreSQL and Redis: the largest rush here and "
            "bench/deadline_rush.py's largest, if it has run here. Errors: lines of make "
            "run's output with ERROR, CRITICAL, a traceback or 'database is locked'; "
            "restarts: supervisord's 'exited:' lines; failed steps: steps whose resolution "
            "failed at least once; other emails: to the games' players, not reports."
        ),
        parameters={
            "games": [run["games"] for run in rushes],
            "seats": SEATS,
            "period_seconds": args.period,
            "batches": args.batches,
            "per_batch": [run["per_batch"] for run in schedules],
            "stop_after_seconds": args.stop_after,
        },
        tables=[
            *tables,
            bench.Table(
                f"A steady schedule: a batch falls due every {period}", STEADY_COLUMNS, steady_rows
            ),
            bench.Table(
                "What the embedded default carries",
                CARRIED_COLUMNS,
                carried(sustained, largest["games_per_second"], largest["first_step"], args.within),
            ),
        ],
        targets=targets,
    )
    if not clean:
        sys.exit(1)


if __name__ == "__main__":
    main()
