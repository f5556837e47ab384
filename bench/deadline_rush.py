"""Benchmark: a rush of deadlines, end to end, as in production: N Choice games of 5 seats
whose step 1 falls due at the same second, beat, the two workers of docker/compose.yaml
(worker-steps and worker-mail, their commands as written there), gunicorn, and a local SMTP
server (aiosmtpd, in a process of its own); no setting changed for the benchmark.

    .venv/bin/python bench/deadline_rush.py [--quick] [--games 1000 10000]
        [--json var/bench/deadline_rush.json]

For each size it reports the time from the deadline to the first, the median and the last
report email accepted by the SMTP server, the steps' own times (first and last resolved),
and the resident memory of every web and worker process after the rush. While the rush
runs, players of other games (their deadlines days away) post orders through gunicorn,
one a second, as a browser does (the page GET after the redirect included); the time of
each post and the time from each post to its receipt at the SMTP server are reported.

Next to them, the limits measured in the same run on the same database and SMTP server:
the same database writes of the same number of steps in raw SQL (psycopg's pipeline mode,
one transaction per step, two processes as there are two steps workers' worth of cores),
and the same messages sent with smtplib over one connection per process (two processes).

Database ``<DATABASE_URL>_bench_rush`` (created and migrated for each size), Redis
database 10 (flushed).
"""

from __future__ import annotations

import multiprocessing
import os
import re
import sys
import time
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any, Protocol

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench

bench.configure("_bench_rush", redis_db=10)

import yaml  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connections  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench import cpu, limits, players  # noqa: E402
from games import postal  # noqa: E402
from games.models import Game, Seat, Step  # noqa: E402
from moderator.mail import queueing  # noqa: E402
from moderator.mail.models import OutboundEmail  # noqa: E402

NAME = "deadline_rush"
SEATS = 5
COMPOSE = bench.ROOT / "docker" / "compose.yaml"
# Games whose players post orders during the rush (their own deadlines days away), one
# post a second: enough players that each posts once before the longest rush ends.
ORDER_GAMES = 80
# The rush's deadline comes this long after every process answers.
LEAD_SECONDS = 8.0

# --- the games ---------------------------------------------------------------------------


def _make(first: int, count: int, start: datetime, title: str, early: bool) -> None:
    connections.close_all()
    gm = get_user_model().objects.get(username="bench-gm")
    names = [f"p{n}" for n in range(SEATS)]
    queueing.enqueue = bench.enqueue_nothing  # the first reports are not measured
    for number in range(first, first + count):
        game = postal.create_game(
            gm=gm,
            engine_key="choice",
            title=f"{title} {number}",
            players=[postal.Player(n, f"{n}.{title}{number}@example.org") for n in names],
            early_processing=early,
        )
        postal.start_game(game.pk, now=start)
    connections.close_all()


def make_games(count: int, start: datetime, title: str, early: bool = True) -> None:
    """``count`` running 5-seat Choice games started at ``start``, in two processes; their
    first reports are marked sent (they are not part of the rush)."""
    get_user_model().objects.get_or_create(username="bench-gm")
    connections.close_all()
    halves = [(0, count // 2), (count // 2, count - count // 2)]
    context = multiprocessing.get_context("fork")
    with context.Pool(2) as pool:
        pool.starmap(_make, [(first, size, start, title, early) for first, size in halves])
    OutboundEmail.objects.filter(state=OutboundEmail.State.PENDING).update(
        state=OutboundEmail.State.SENT, sent_at=start
    )


# --- the processes -----------------------------------------------------------------------


def compose_command(service: str) -> list[str]:
    """The service's command in docker/compose.yaml, run with this Python."""
    command = list(yaml.safe_load(COMPOSE.read_text())["services"][service]["command"])
    return ["-m", *command]


def start_services(processes: bench.Processes, smtp_port: int, web_port: int) -> None:
    env = {
        "EMAIL_BACKEND": "moderator.mail.smtp.EmailBackend",
        "EMAIL_HOST": "127.0.0.1",
        "EMAIL_PORT": str(smtp_port),
        "SITE_URL": f"http://127.0.0.1:{web_port}",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "TRUSTED_PROXY_COUNT": "1",
        "LOG_LEVEL": "WARNING",
    }
    web = [
        f"127.0.0.1:{web_port}" if part == "0.0.0.0:8000" else part
        for part in compose_command("web")
        if part != "--access-logfile" and part != "-"
    ]
    schedule = bench.LOGS.parent / "rush-beat-schedule"
    schedule.unlink(missing_ok=True)
    beat = [
        str(schedule) if part.endswith("celerybeat-schedule") else part
        for part in compose_command("beat")
    ]
    processes.start("web", web, env)
    processes.start("worker-steps", compose_command("worker-steps"), env)
    processes.start("worker-mail", compose_command("worker-mail"), env)
    processes.wait_until("web", lambda: bench.answers(f"http://127.0.0.1:{web_port}/healthz"))
    for worker in ("worker-steps", "worker-mail"):
        processes.wait_until(worker, partial(bench.worker_answers, worker))
    processes.start("beat", beat, env)


# --- one rush ----------------------------------------------------------------------------


def seconds_after(moment: float, values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "first": ordered[0] - moment,
        "median": bench.percentile(ordered, 50) - moment,
        "last": ordered[-1] - moment,
    }


class Load(Protocol):
    """More load while the rush runs (bench/mixed_load.py): its games made with the rush's,
    its clients signed in before the deadline, started at it, stopped when the rush is done."""

    def make_games(self, start: datetime) -> None: ...

    def prepare(self, port: int) -> None: ...

    def start(self) -> None: ...

    def stop(self) -> dict[str, Any]: ...


def rush(games: int, timeout: float, load: Load | None = None) -> dict[str, Any]:
    bench.fresh_database()
    bench.flush_redis()
    began = time.monotonic()
    start = timezone.now() - timedelta(hours=1)
    make_games(games, start, "rush")
    # Their players post once each, then again (a new revision of the same step).
    make_games(ORDER_GAMES, start, "orders", early=False)
    # They asked for a receipt of each order made on the page (Seat.web_receipts).
    Seat.objects.filter(game__title__startswith="orders ").update(web_receipts=True)
    if load is not None:
        load.make_games(start)
    setup = time.monotonic() - began
    rush_games = Game.objects.filter(title__startswith="rush ")
    order_games = list(Game.objects.filter(title__startswith="orders ").order_by("id"))
    rush_steps = Step.objects.filter(game__in=rush_games, number=1)
    server = bench.SmtpServer()
    web_port = bench.free_port()
    postmaster = cpu.postmaster()
    expected = games * SEATS
    try:
        with bench.Processes() as processes:
            start_services(processes, server.port, web_port)
            posting = players.Posting(web_port, order_games, every=1.0)
            if load is not None:
                load.prepare(web_port)
            # Every process answers: the rush's steps fall due in a few seconds.
            deadline = time.time() + LEAD_SECONDS
            rush_steps.update(deadline=datetime.fromtimestamp(deadline, UTC))
            posting_began = time.time()
            posting.start()
            if load is not None:
                load.start()
            parts = {name: process.pid for name, process in processes.running.items()}
            alone = {"smtp server": server.process.pid}
            cpu_before = cpu.snapshot(parts, postmaster, alone)
            cpu_from = time.time() - deadline
            waited = time.time()
            while len(reports_of(server.since(deadline))) < expected:
                for name in list(processes.running):
                    processes.check(name)
                if time.time() - waited > timeout:
                    raise RuntimeError(
                        f"{len(reports_of(server.since(deadline)))} of {expected} reports "
                        f"arrived in {timeout:.0f} s"
                    )
                time.sleep(0.5)
            spent = cpu.spent(cpu_before, cpu.snapshot(parts, postmaster, alone))
            posting.stop()
            loaded = load.stop() if load is not None else {}
            memory = bench.resident_memory(processes)
            # The receipts of the last posts (written within RECEIPT_SECONDS, then sent).
            owed = time.time() + 40
            while time.time() < owed and not posting.all_received(server.since(posting_began)):
                time.sleep(0.5)
        arrivals = server.since(deadline)
        receipts = posting.receipt_delays(server.since(posting_began))
        limit = the_limit(rush_games, rush_steps, server)
    finally:
        server.stop()
    report_times = [a.at for a in reports_of(arrivals)]
    closed = [
        moment.timestamp()
        for moment in rush_steps.values_list("closed_at", flat=True)
        if moment is not None
    ]
    if len(closed) != games or len(report_times) != expected:
        raise RuntimeError(f"{len(closed)} steps closed, {len(report_times)} reports arrived")
    return {
        "games": games,
        "emails": expected,
        "setup_seconds": setup,
        "deadline": deadline,
        "reports": seconds_after(deadline, report_times),
        "steps": seconds_after(deadline, closed),
        "posts": posting.figures(),
        "receipts": receipts,
        "memory": memory,
        "cpu": spent,
        "cpu_from": cpu_from,
        "limit": limit,
        "load": loaded,
    }


def the_limit(rush_games: Any, rush_steps: Any, server: bench.SmtpServer) -> dict[str, Any]:
    """The same writes in raw SQL, then the same messages with smtplib, and the CPU they
    took: the server's, the SMTP server's and the clients' (raw SQL and smtplib)."""
    first = rush_steps.order_by("id").first()
    assert first is not None
    rows = limits.captured_step(first.pk)
    steps = limits.open_steps(list(rush_games.values_list("pk", flat=True)))
    ids = OutboundEmail.objects.filter(game__in=rush_games, created_at__gte=first.closed_at)
    messages = limits.prepared(list(ids.filter(kind="report").values_list("pk", flat=True)))
    postmaster = cpu.postmaster()
    alone = {"smtp server": server.process.pid}
    before, clients = cpu.snapshot({}, postmaster, alone), os.times()
    seconds = limits.steps_and_mail(rows, steps, server.port, messages)
    spent = cpu.spent(before, cpu.snapshot({}, postmaster, alone))
    after = os.times()
    spent["clients"] = after.children_user + after.children_system
    spent["clients"] -= clients.children_user + clients.children_system
    del spent["benchmark"]
    return seconds | {"cpu": spent}


RECEIPT = re.compile(r": order received for step \d+$")


def reports_of(arrivals: list[bench.Arrival]) -> list[bench.Arrival]:
    """The rush games' reports (their players' addresses end in .rushN@example.org)."""
    return [a for a in arrivals if ".rush" in a.to and not RECEIPT.search(a.subject)]


# --- the report --------------------------------------------------------------------------

RUSH_COLUMNS = [
    bench.Column("games", "games"),
    bench.Column("emails", "reports"),
    bench.Column("first", "first s", ".1f"),
    bench.Column("median", "median s", ".1f"),
    bench.Column("last", "last s", ".1f"),
    bench.Column("steps_first", "1st step s", ".1f"),
    bench.Column("steps_last", "last step s", ".1f"),
    bench.Column("per_thousand", "s per 1,000 games", ".1f"),
    bench.Column("post_p50", "post p50 ms", ".0f"),
    bench.Column("post_p99", "post p99 ms", ".0f"),
    bench.Column("posts", "posts"),
    bench.Column("receipts", "receipts"),
    bench.Column("receipt_max", "receipt max s", ".1f"),
]
LIMIT_COLUMNS = [
    bench.Column("games", "games"),
    bench.Column("work", "rush s", ".1f"),
    bench.Column("sql", "raw SQL s", ".1f"),
    bench.Column("smtp", "smtplib s", ".1f"),
    bench.Column("limit", "limit s", ".1f"),
    bench.Column("ratio", "limit / rush", ".2f"),
]
CPU_COLUMNS = [
    bench.Column("games", "games"),
    bench.Column("what", "what"),
    bench.Column("worker-steps", "worker-steps", ".1f"),
    bench.Column("worker-mail", "worker-mail", ".1f"),
    bench.Column("postgres", "PostgreSQL", ".1f"),
    bench.Column("smtp server", "SMTP server", ".1f"),
    bench.Column("clients", "raw SQL + smtplib", ".1f"),
    bench.Column("others", "web, beat, players", ".1f"),
    bench.Column("total", "total", ".1f"),
    bench.Column("cores", "of the cores' s", ".1f"),
]
MEMORY_COLUMNS = [
    bench.Column("process", "process"),
    bench.Column("role", "role"),
    bench.Column("pid", "pid"),
    bench.Column("rss_mb", "RSS MB", ".1f"),
]


def main() -> None:
    parser = bench.arguments(__doc__.splitlines()[0], NAME)
    parser.add_argument("--games", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()
    sizes = [200] if args.quick else args.games
    runs = [rush(games, args.timeout) for games in sizes]
    rows, limit_rows, cpu_rows = [], [], []
    for run in runs:
        reports, steps, posts, receipts = (
            run["reports"],
            run["steps"],
            run["posts"],
            run["receipts"],
        )
        rows.append(
            {
                "games": run["games"],
                "emails": run["emails"],
                "first": reports["first"],
                "median": reports["median"],
                "last": reports["last"],
                "steps_first": steps["first"],
                "steps_last": steps["last"],
                "per_thousand": reports["last"] * 1000 / run["games"],
                "post_p50": posts["p50_ms"],
                "post_p99": posts["p99_ms"],
                "posts": posts["posts"],
                "receipts": f"{receipts['received']} of {receipts['posted']}",
                "receipt_max": receipts["max_s"],
            }
        )
        work = reports["last"] - steps["first"]
        limit = run["limit"]
        used, used_limit = run["cpu"], limit["cpu"]
        others = sum(used.get(name, 0.0) for name in ("web", "beat", "benchmark"))
        cores = os.cpu_count() or 1
        cpu_rows += [
            {"games": run["games"], "what": "the rush", "worker-steps": used["worker-steps"],
             "worker-mail": used["worker-mail"], "postgres": used["postgres"],
             "smtp server": used["smtp server"], "clients": 0.0, "others": others,
             "total": sum(used.values()),
             "cores": cores * (reports["last"] - run["cpu_from"])},
            {"games": run["games"], "what": "the limit", "worker-steps": 0.0,
             "worker-mail": 0.0, "postgres": used_limit["postgres"],
             "smtp server": used_limit["smtp server"], "clients": used_limit["clients"],
             "others": 0.0, "total": sum(used_limit.values()),
             "cores": cores * limit["seconds"]},
        ]  # fmt: skip
        limit_rows.append(
            {
                "games": run["games"],
                "work": work,
                "sql": limit["sql_seconds"],
                "smtp": limit["smtp_seconds"],
                "limit": limit["seconds"],
                "ratio": limit["seconds"] / work,
            }
        )
    largest = runs[-1]
    by_size = {row["games"]: row for row in rows}
    targets = []
    if 10000 in by_size:
        big = by_size[10000]
        targets += [
            bench.Target("10,000 games: the last report", "within 300 s of the deadline",
                         f"{big['last']:.1f} s", big["last"] <= 300),
            bench.Target("10,000 games: the first report", "within 10 s of the deadline",
                         f"{big['first']:.1f} s", big["first"] <= 10),
        ]  # fmt: skip
    if 1000 in by_size:
        small = by_size[1000]
        targets.append(
            bench.Target("1,000 games: the last report", "within 40 s of the deadline",
                         f"{small['last']:.1f} s", small["last"] <= 40)
        )  # fmt: skip
    slowest_receipt = max(row["receipt_max"] or 0 for row in rows)
    missing = [
        run["games"] for run in runs if run["receipts"]["received"] < run["receipts"]["posted"]
    ]
    missed = f", missing in {missing}" if missing else ""
    targets.append(
        bench.Target(
            "order receipts during the rush",
            "each within 30 s of its post",
            f"slowest {slowest_receipt:.1f} s{missed}",
            slowest_receipt <= 30 and not missing,
        )
    )
    heaviest = max(largest["memory"], key=lambda row: row["rss_mb"])
    targets.append(
        bench.Target(
            f"resident memory of each process after {largest['games']:,} games",
            "at most 150 MB",
            f"largest {heaviest['rss_mb']:.1f} MB ({heaviest['process']})",
            heaviest["rss_mb"] <= 150,
        )
    )
    targets += [
        bench.Target(f"{row['games']:,} games: the rush's work against the limit",
                     "at least 0.67", f"{row['ratio']:.2f}", row["ratio"] >= 0.67)
        for row in limit_rows
    ]  # fmt: skip
    bench.report(
        args.json,
        name=NAME,
        title="A deadline rush, end to end",
        quick=args.quick,
        method=(
            "For each size, that many 5-seat Choice games (and 80 more whose players post "
            "orders) are started, their first reports marked sent; then gunicorn, "
            "worker-steps, worker-mail and beat are started with their commands in "
            "docker/compose.yaml and default settings (Django's SMTP backend to aiosmtpd "
            "in a process of its own), and once every process answers, step 1 of every "
            "rush game is made due at one second, a few seconds ahead. Times are seconds "
            "after that deadline: report emails accepted by the SMTP server, and the "
            "steps' closing. Meanwhile one player a second posts an order through gunicorn "
            "(its page GET after the redirect included) and its receipt is timed to the "
            "SMTP server. Resident memory of every process after the rush. The limit, in "
            "the same run: the rush's database writes (captured from a real resolution) in "
            "raw SQL with psycopg's pipeline mode from 2 processes, then its messages sent "
            "with smtplib over one connection from 2 processes; the rush does both on the "
            "same two cores, so the limit is the sum of the two. 'rush s' is from the first "
            "step closed to the last report. CPU seconds of each part (from /proc) over the "
            "rush, from the posts' start to the last report, and over the limit, beside "
            "the cores' seconds of that time."
        ),
        parameters={"games": sizes, "seats": SEATS, "order_games": ORDER_GAMES},
        tables=[
            bench.Table("The rush: seconds after the deadline", RUSH_COLUMNS, rows),
            bench.Table("The rush against the limit, same run", LIMIT_COLUMNS, limit_rows),
            bench.Table(
                "Where the CPU went: seconds of each part, the rush against the limit",
                CPU_COLUMNS,
                cpu_rows,
            ),
            bench.Table(
                f"Resident memory after {largest['games']:,} games",
                MEMORY_COLUMNS,
                [
                    {k: row[k] for k in ("process", "role", "pid", "rss_mb")}
                    for row in largest["memory"]
                ],
            ),
        ],
        targets=targets,
    )


if __name__ == "__main__":
    main()
