"""Benchmark: a deadline rush across hosts, and each host cut off the network in the middle
of one: the services of docker/compose.yaml on hosts of their own (bench/hosts.py: a network
namespace each for web, worker-steps, worker-mail, beat, postgres and redis, joined by a
bridge; a PostgreSQL and a Redis of their own), their commands as compose runs them, no
setting changed; the SMTP server (aiosmtpd, in a process of its own) and the players in
this machine's own namespace.

    .venv/bin/python bench/across_hosts.py [--quick] [--games 1000] [--batch 300]
        [--cut-seconds 30] [--json var/bench/across_hosts.json]

First a rush: ``--games`` 5-seat Choice games whose step 1 falls due at one second, timed
as bench/deadline_rush.py times it (its games, its filters), while players of other games
post orders through the web host, one a second, all along. Then, for each of worker-steps,
worker-mail, redis and postgres in turn, a fresh batch of ``--batch`` games falls due, and
once a tenth of its reports have arrived (steps and mail under way) that host is cut off
the network (its link down: packets dropped, connections stall) for ``--cut-seconds`` and
put back. For each batch: the time from the restore to its last report, and whether every
step was resolved once (closed, its next step opened once, its game's log and state those
of one resolution: replayed from its record) and every report arrived once (arrivals at the
SMTP server per recipient and subject: none twice, none missing). At the end: every order
posted was kept, and its receipt arrived once.

Needs root and iproute2 (network namespaces), PostgreSQL's binaries and redis-server; the
database (``moderator_across_hosts``) and Redis live on the hosts and go with them.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench
from bench import hosts

if TYPE_CHECKING:
    from bench.players import Posting

NAME = "across_hosts"
SEATS = 5
# The hosts cut off, one batch each, in this order.
CUTS = ("worker-steps", "worker-mail", "redis", "postgres")
# Games whose players post orders all along (their deadlines days away), one post a second:
# enough players that none posts twice within a run (a second order of a step would wait
# out RECEIPT_WINDOW_SECONDS for its receipt).
ORDER_GAMES = 160
# A host is cut once this share of its batch's reports have arrived.
UNDER_WAY = 0.1
# The rush falls due this long after every process answers.
LEAD_SECONDS = 3.0


def title_of(host: str) -> str:
    """The title of the games that fall due when ``host`` is cut (and, in their players'
    addresses, what tells their reports apart)."""
    return f"cut-{host}"


def batch_reports(arrivals: list[bench.Arrival], title: str) -> list[bench.Arrival]:
    """The reports of the games titled ``title`` (bench/deadline_rush.py's reports_of for
    another title)."""
    from bench.deadline_rush import RECEIPT

    return [a for a in arrivals if f".{title}" in a.to and not RECEIPT.search(a.subject)]


def wait_until(condition: Callable[[], bool], timeout: float, machine: hosts.Hosts) -> bool:
    """Whether ``condition`` came true within ``timeout`` seconds; every service's process
    must live meanwhile."""
    deadline = time.monotonic() + timeout
    while not condition():
        for service in hosts.SERVICES:
            machine.check(service)
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


# --- the services ------------------------------------------------------------------------


def start(machine: hosts.Hosts, smtp: bench.SmtpServer) -> None:
    """The four services on their hosts, their commands from docker/compose.yaml (gunicorn's
    access log left out, as bench/deadline_rush.py does); returns once every one answers."""
    from bench.deadline_rush import compose_command

    commands = {service: compose_command(service) for service in hosts.SERVICES}
    commands["web"] = [part for part in commands["web"] if part not in ("--access-logfile", "-")]
    env = {
        **os.environ,
        **machine.service_environment(smtp.port, database_url=os.environ["DATABASE_URL"]),
    }
    machine.start_services(commands, env)
    for worker in ("worker-steps", "worker-mail"):
        if not wait_until(partial(bench.worker_answers, worker), 90, machine):
            raise RuntimeError(f"{worker} does not answer")


# --- the rush ----------------------------------------------------------------------------


def rush(
    machine: hosts.Hosts, smtp: bench.SmtpServer, games: int, timeout: float
) -> dict[str, Any]:
    from bench import deadline_rush
    from games.models import Game, Step

    steps = Step.objects.filter(game__in=Game.objects.filter(title__startswith="rush "), number=1)
    expected = games * SEATS
    deadline = time.time() + LEAD_SECONDS
    steps.update(deadline=datetime.fromtimestamp(deadline, UTC))

    def arrived() -> bool:
        return len(deadline_rush.reports_of(smtp.since(deadline))) >= expected

    if not wait_until(arrived, timeout, machine):
        got = len(deadline_rush.reports_of(smtp.since(deadline)))
        raise RuntimeError(f"{got} of {expected} reports of the rush arrived in {timeout:.0f} s")
    reports = [a.at for a in deadline_rush.reports_of(smtp.since(deadline))]
    closed = [moment.timestamp() for moment in steps.values_list("closed_at", flat=True) if moment]
    return {
        "games": games,
        "emails": expected,
        "deadline": deadline,
        "reports": deadline_rush.seconds_after(deadline, reports),
        "steps": deadline_rush.seconds_after(deadline, closed),
    }


# --- the cuts ----------------------------------------------------------------------------


def cut_in_a_batch(
    machine: hosts.Hosts, smtp: bench.SmtpServer, host: str, games: int, seconds: float,
    timeout: float,
) -> dict[str, Any]:  # fmt: skip
    """The batch of ``host`` falls due; once a tenth of its reports arrived, ``host`` is cut
    off for ``seconds``; then the batch's last report is waited for (``timeout`` seconds at
    most after the restore). The times, in seconds after the batch's deadline."""
    from games.models import Game, Step

    title = title_of(host)
    batch = Game.objects.filter(title__startswith=f"{title} ")
    expected = games * SEATS
    deadline = time.time() + 1
    Step.objects.filter(game__in=batch, number=1).update(
        deadline=datetime.fromtimestamp(deadline, UTC)
    )

    def count() -> int:
        return len(batch_reports(smtp.since(deadline), title))

    if not wait_until(lambda: count() >= max(1, int(expected * UNDER_WAY)), 120, machine):
        raise RuntimeError(f"the batch of {host} did not get under way")
    cut_at = time.time()
    before = count()
    with machine.cut_off(host):
        time.sleep(seconds)
    restored = time.time()
    during = count() - before
    complete = wait_until(lambda: count() >= expected, timeout, machine)
    after = sorted(a.at for a in batch_reports(smtp.since(restored), title))
    return {
        "host": host,
        "title": title,
        "games": games,
        "emails": expected,
        "deadline": deadline,
        "cut_at": cut_at,
        "restored": restored,
        "seconds": seconds,
        "before": before,
        "during": during,
        "complete": complete,
        "first_after": after[0] - restored if after else None,
        "recovery": after[-1] - restored if complete and after else None,
    }


def outcome(smtp: bench.SmtpServer, title: str, games: int) -> dict[str, Any]:
    """What became of a batch: its steps (resolved once: closed, the next step opened once,
    the game's events and state those of its record replayed) and its reports (arrivals per
    recipient and subject), its outbox rows by state."""
    from django.db.models import Count

    from games import records
    from games.engines.base import same_state
    from games.models import Game, Seat
    from games.records.archive import export
    from moderator.mail.models import OutboundEmail

    batch = Game.objects.filter(title__startswith=f"{title} ")
    resolved_once = 0
    for game in batch.prefetch_related("steps"):
        steps = sorted((s.number, s.status) for s in game.steps.all())
        replayed = records.run(export(game))
        events = list(game.events.order_by("step__number", "id").values_list("text", flat=True))
        if (
            steps == [(1, "done"), (2, "open")]
            and events == [event.text for event in replayed.log]
            and same_state(replayed.engine, replayed.state, game.state)
        ):
            resolved_once += 1
    seats = set(Seat.objects.filter(game__in=batch).values_list("email", flat=True))
    arrivals = Counter((a.to, a.subject) for a in batch_reports(smtp.since(0), title))
    states = OutboundEmail.objects.filter(game__in=batch, kind="report").values("state")
    by_state = {row["state"]: row["n"] for row in states.annotate(n=Count("id"))}
    return {
        "resolved_once": resolved_once,
        "reports_once": sum(1 for n in arrivals.values() if n == 1),
        "twice": sum(1 for n in arrivals.values() if n > 1),
        "missing": len(seats - {to for to, _ in arrivals}),
        "unknown": by_state.get("unknown", 0),
        "outbox": by_state,
        "games": games,
    }


def orders_and_receipts(posting: Posting, smtp: bench.SmtpServer) -> dict[str, Any]:
    """Every order taken (the post redirected to the seat's page) is kept, and its player
    got one receipt."""
    from games.models import Order

    texts = {email: form["text"] for _, _, form, email in posting.players}
    taken = {post.email for post in posting.posts if post.ok}
    kept = set(
        Order.objects.filter(source="web", seat__email__in=taken).values_list("seat__email", "text")
    )
    receipts = Counter(a.to for a in smtp.since(0) if "order received" in a.subject)
    return {
        "posts": len(posting.posts),
        "taken": len(taken),
        "failed": len(posting.posts) - sum(1 for post in posting.posts if post.ok),
        "kept": sum(1 for email in taken if (email, texts[email]) in kept),
        "receipts_once": sum(1 for email in taken if receipts[email] == 1),
        "receipts_twice": sum(1 for email in taken if receipts[email] > 1),
        "receipts_missing": sum(1 for email in taken if receipts[email] == 0),
        "failures": posting.failures[:5],
    }


def posts_in(posting: Posting, began: float, ended: float) -> dict[str, Any]:
    """The posts begun between ``began`` and ``ended``: how many, their times (with the
    page after), failures."""
    posts = [post for post in posting.posts if began <= post.at < ended]
    seconds = [post.seconds for post in posts]
    return {
        "posts": len(posts),
        "p50_ms": bench.percentile(seconds, 50) * 1000,
        "p99_ms": bench.percentile(seconds, 99) * 1000,
        "slowest": max(seconds, default=0.0),
        "failed": sum(1 for post in posts if not post.ok),
    }


# --- the run -----------------------------------------------------------------------------


def measure(
    machine: hosts.Hosts, games: int, batch: int, seconds: float, timeout: float
) -> dict[str, Any]:
    from django.utils import timezone

    from bench import deadline_rush, players
    from games.models import Game, Seat

    bench.fresh_database()
    began = time.monotonic()
    start_at = timezone.now() - timedelta(hours=1)
    deadline_rush.make_games(games, start_at, "rush")
    for host in CUTS:
        deadline_rush.make_games(batch, start_at, title_of(host))
    deadline_rush.make_games(ORDER_GAMES, start_at, "orders", early=False)
    # They asked for a receipt of each order made on the page (Seat.web_receipts).
    Seat.objects.filter(game__title__startswith="orders ").update(web_receipts=True)
    setup = time.monotonic() - began
    order_games = list(Game.objects.filter(title__startswith="orders ").order_by("id"))
    smtp = bench.SmtpServer(machine.address("root"))
    try:
        start(machine, smtp)
        posting = players.Posting(
            hosts.WEB_PORT, order_games, every=1.0, host=machine.address("web")
        )
        posting.start()
        try:
            the_rush = rush(machine, smtp, games, timeout)
            cuts = [cut_in_a_batch(machine, smtp, host, batch, seconds, timeout) for host in CUTS]
        finally:
            posting.stop()
        for cut in cuts:
            cut["posts"] = posts_in(posting, cut["cut_at"], cut["restored"])
        the_rush["posts"] = posts_in(posting, the_rush["deadline"], cuts[0]["deadline"])
        # The receipts of the last posts (written within RECEIPT_SECONDS, then sent).
        wait_until(lambda: posting.all_received(smtp.since(0)), 60, machine)
        the_rush["receipts"] = posting.receipt_delays(smtp.since(0))
        orders = orders_and_receipts(posting, smtp)
        for cut in cuts:
            cut["outcome"] = outcome(smtp, cut["title"], batch)
    finally:
        smtp.stop()
    return {"setup_seconds": setup, "rush": the_rush, "cuts": cuts, "orders": orders}


# --- the report --------------------------------------------------------------------------

CUT_COLUMNS = [
    bench.Column("host", "host cut off"),
    bench.Column("games", "games"),
    bench.Column("cut_at", "cut at s", ".1f"),
    bench.Column("seconds", "for s", ".0f"),
    bench.Column("before", "reports before"),
    bench.Column("during", "during"),
    bench.Column("first_after", "first after restore s", ".1f"),
    bench.Column("recovery", "restore to last report s", ".1f"),
    bench.Column("posts", "posts during"),
    bench.Column("slowest", "slowest post s", ".1f"),
    bench.Column("failed", "posts failed"),
]
ONCE_COLUMNS = [
    bench.Column("host", "host cut off"),
    bench.Column("steps", "steps resolved once"),
    bench.Column("reports", "reports arrived once"),
    bench.Column("twice", "reports twice"),
    bench.Column("missing", "seats without a report"),
    bench.Column("unknown", "outbox rows unknown"),
]
ORDER_COLUMNS = [
    bench.Column("posts", "posts"),
    bench.Column("taken", "players whose order was taken"),
    bench.Column("failed", "posts failed"),
    bench.Column("kept", "orders kept"),
    bench.Column("receipts_once", "receipts once"),
    bench.Column("receipts_twice", "twice"),
    bench.Column("receipts_missing", "missing"),
]


def tables(figures: dict[str, Any]) -> list[bench.Table]:
    the_rush, cuts, orders = figures["rush"], figures["cuts"], figures["orders"]
    reports, steps, posts = the_rush["reports"], the_rush["steps"], the_rush["posts"]
    receipts = the_rush["receipts"]
    rush_row = {
        "games": the_rush["games"],
        "emails": the_rush["emails"],
        "first": reports["first"],
        "median": reports["median"],
        "last": reports["last"],
        "steps_first": steps["first"],
        "steps_last": steps["last"],
        "post_p50": posts["p50_ms"],
        "post_p99": posts["p99_ms"],
        "posts": posts["posts"],
        "receipts": f"{receipts['received']} of {receipts['posted']}",
        "receipt_max": receipts["max_s"] or 0.0,
    }
    cut_rows = [
        {
            "host": cut["host"],
            "games": cut["games"],
            "cut_at": cut["cut_at"] - cut["deadline"],
            "seconds": cut["seconds"],
            "before": cut["before"],
            "during": cut["during"],
            "first_after": cut["first_after"] if cut["first_after"] is not None else float("nan"),
            "recovery": cut["recovery"] if cut["recovery"] is not None else float("nan"),
            "posts": cut["posts"]["posts"],
            "slowest": cut["posts"]["slowest"],
            "failed": cut["posts"]["failed"],
        }
        for cut in cuts
    ]
    once_rows = [
        {
            "host": cut["host"],
            "steps": f"{cut['outcome']['resolved_once']} of {cut['games']}",
            "reports": f"{cut['outcome']['reports_once']} of {cut['emails']}",
            "twice": cut["outcome"]["twice"],
            "missing": cut["outcome"]["missing"],
            "unknown": cut["outcome"]["unknown"],
        }
        for cut in cuts
    ]
    order_row = {key: orders[key] for key in (c.key for c in ORDER_COLUMNS)}
    from bench import deadline_rush

    # The one-machine rush's columns, but the time per 1,000 games (one size here).
    rush_columns = [c for c in deadline_rush.RUSH_COLUMNS if c.key != "per_thousand"]
    return [
        bench.Table("The rush across hosts: seconds after the deadline", rush_columns, [rush_row]),
        bench.Table(
            "Each host cut off in the middle of a batch: seconds after the batch's deadline, "
            "and from the restore",
            CUT_COLUMNS,
            cut_rows,
        ),
        bench.Table("Each batch afterwards: done once", ONCE_COLUMNS, once_rows),
        bench.Table("The orders posted all along", ORDER_COLUMNS, [order_row]),
    ]


def targets(figures: dict[str, Any]) -> list[bench.Target]:
    cuts, orders = figures["cuts"], figures["orders"]
    found = []
    for cut in cuts:
        done = cut["outcome"]
        once = (
            done["resolved_once"] == cut["games"]
            and done["reports_once"] == cut["emails"]
            and not done["twice"]
            and not done["missing"]
        )
        found.append(
            bench.Target(
                f"{cut['host']} cut off: every step resolved once, every report once",
                "all of them",
                f"{done['resolved_once']} of {cut['games']} steps, {done['reports_once']} of "
                f"{cut['emails']} reports, {done['twice']} twice",
                once,
            )
        )
        recovery = cut["recovery"]
        found.append(
            bench.Target(
                f"{cut['host']} back: its batch's last report",
                "within 60 s of the restore",
                "never" if recovery is None else f"{recovery:.1f} s",
                recovery is not None and recovery <= 60,
            )
        )
    every = orders["taken"]
    found.append(
        bench.Target(
            "orders taken during the rush and the cuts",
            "each kept, its receipt once",
            f"{orders['kept']} of {every} kept, {orders['receipts_once']} receipts once",
            orders["kept"] == every == orders["receipts_once"],
        )
    )
    return found


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C and SIGTERM end the run through its teardown. Not in a process forked from it
    (bench/deadline_rush.py makes its games in a pool): those end as they would."""
    if os.getpid() != OWNER:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    raise KeyboardInterrupt


OWNER = os.getpid()


def main() -> None:
    parser = bench.arguments(__doc__.splitlines()[0] if __doc__ else NAME, NAME)
    parser.add_argument("--games", type=int, default=1000, help="the rush's games")
    parser.add_argument("--batch", type=int, default=300, help="the games due at each cut")
    parser.add_argument("--cut-seconds", type=float, default=30.0)
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    games, batch, seconds = (100, 40, 10.0) if args.quick else (args.games, args.batch,
                                                                 args.cut_seconds)  # fmt: skip
    why_not = hosts.can_make_namespaces()
    if why_not is not None:
        sys.exit(f"{NAME}: {why_not}")
    # No host is left behind (hosts.Hosts removes them on the way out).
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    with hosts.Hosts(logs=bench.LOGS / NAME) as machine:
        redis = f"redis://{machine.address('redis')}:{hosts.REDIS_PORT}"
        bench.configure("_across_hosts", redis_db=0, database=machine.database_url, redis=redis)
        figures = measure(machine, games, batch, seconds, args.timeout)
    bench.report(
        args.json,
        name=NAME,
        title="A deadline rush across hosts, and each host cut off in the middle of one",
        quick=args.quick,
        method=(
            "The services of docker/compose.yaml on hosts of their own: a network namespace "
            "each for web, worker-steps, worker-mail, beat, postgres and redis, joined by a "
            "bridge (bench/hosts.py), their commands as compose runs them with default "
            "settings, a PostgreSQL and a Redis of their own; aiosmtpd and the players in "
            "the machine's namespace. A rush of 5-seat Choice games due at one second, while "
            "one player a second posts an order through the web host. Then for each of "
            "worker-steps, worker-mail, redis and postgres a fresh batch of games falls due, "
            "and once a tenth of its reports arrived that host's link is set down for the "
            "cut's seconds (its packets dropped: connections stall, none is reset) and up "
            "again. Recovery: from the restore to the batch's last report at the SMTP "
            "server. Done once: each step closed, its next step opened once, its game's "
            "events and state equal to its record replayed; each seat's report arrived once "
            "(per recipient and subject)."
        ),
        parameters={
            "games": games,
            "batch": batch,
            "cut_seconds": seconds,
            "cuts": list(CUTS),
            "seats": SEATS,
            "order_games": ORDER_GAMES,
            "setup_seconds": round(figures["setup_seconds"], 1),
        },
        tables=tables(figures),
        targets=targets(figures),
    )


if __name__ == "__main__":
    main()
