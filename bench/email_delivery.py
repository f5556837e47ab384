"""Benchmark: turn reports delivered per second to a local SMTP server by 1 and by 2 Celery
mail workers, next to the limit: smtplib sending the same messages over one connection.

    .venv/bin/python bench/email_delivery.py [--quick] [--games 400] [--seats 5]
        [--json var/bench/email_delivery.json]

The reports are real: ``--games`` Choice games of ``--seats`` seats started with
postal.start_game, one report per seat in the outbox. For each number of workers the rows
are set pending again, the workers (``celery worker --queues mail --concurrency 1`` each,
moderator.mail.smtp.EmailBackend: Django's SMTP backend, extended) are started and answer
a ping, and the clock runs from
moderator.mail.queueing.enqueue until the SMTP server (aiosmtpd, in a process of its own)
has received every message. The workers send batches of MAIL_BATCH rows, each over one
SMTP connection, so the limit is smtplib sending the messages the workers sent (built by
building.email_message(row).message()) over one connection per process, from as many processes
as workers. smtplib with one connection per message (as ``EmailMessage.send()`` does, and
as the workers did before batches) is measured too, for reference.

Database ``<DATABASE_URL>_bench_mail`` (created and migrated on each run), Redis
database 9 (flushed).
"""

from __future__ import annotations

import multiprocessing
import smtplib
import socket
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench

bench.configure("_bench_mail", redis_db=9)

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.mail.utils import DNS_NAME  # noqa: E402
from django.db import connections  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench import limits  # noqa: E402
from bench.limits import Prepared  # noqa: E402
from games import postal  # noqa: E402
from moderator.celery import app  # noqa: E402
from moderator.mail import queueing  # noqa: E402
from moderator.mail.models import OutboundEmail  # noqa: E402

NAME = "email_delivery"
State = OutboundEmail.State


def make_reports(games: int, seats: int) -> list[int]:
    """Start ``games`` Choice games; returns the ids of their reports, one per seat."""
    gm, _ = get_user_model().objects.get_or_create(username="bench-gm")
    names = [f"p{n}" for n in range(seats)]
    queued = queueing.enqueue
    queueing.enqueue = bench.enqueue_nothing  # each run enqueues the rows itself
    try:
        for number in range(games):
            game = postal.create_game(
                gm=gm,
                engine_key="choice",
                title=f"mail {number}",
                players=[postal.Player(name, f"{name}@example.org") for name in names],
            )
            postal.start_game(game.pk, now=timezone.now())
    finally:
        queueing.enqueue = queued
    return list(
        OutboundEmail.objects.filter(kind="report").order_by("id").values_list("id", flat=True)
    )


def pending_again(ids: list[int]) -> None:
    """Every row as it was when the report was written: pending, never attempted (with the
    Message-ID the builder minted)."""
    OutboundEmail.objects.filter(pk__in=ids).update(
        state=State.PENDING,
        attempts=0,
        next_attempt_at=None,
        sending_since=None,
        sent_at=None,
        esp_message_id="",
        last_error="",
    )


def start_workers(processes: bench.Processes, count: int, smtp_port: int) -> list[str]:
    env = {
        "EMAIL_BACKEND": "moderator.mail.smtp.EmailBackend",
        "EMAIL_HOST": "127.0.0.1",
        "EMAIL_PORT": str(smtp_port),
        "LOG_LEVEL": "WARNING",
    }
    names = [f"mail{n}-bench@{socket.gethostname()}" for n in range(1, count + 1)]
    for name in names:
        args = [
            "-m", "celery", "-A", "moderator", "worker", "--queues", "mail",
            "--concurrency", "1", "--hostname", name, "--loglevel", "WARNING",
        ]  # fmt: skip
        processes.start(name.partition("@")[0], args, env)
    for name in names:
        processes.wait_until(name.partition("@")[0], answering(name))
    return names


def answering(worker: str) -> Callable[[], bool]:
    return lambda: bool(app.control.ping(destination=[worker], timeout=0.5))


def delivered_by_workers(
    ids: list[int], workers: int, server: bench.SmtpServer, timeout: float
) -> dict[str, Any]:
    pending_again(ids)
    bench.flush_redis()
    with bench.Processes() as processes:
        name = start_workers(processes, workers, server.port)[0].partition("@")[0]
        already = server.received
        began = time.time()
        queueing.enqueue(ids)
        enqueued = time.time() - began
        last = server.wait_for(already + len(ids), timeout)
        # The last row is marked sent just after the server took its message.
        sent = OutboundEmail.objects.filter(pk__in=ids, state=State.SENT)
        processes.wait_until(name, lambda: sent.count() == len(ids), timeout=30)
    seconds = last - began
    return {
        "sender": f"{workers} Celery mail worker{'s' if workers > 1 else ''}",
        "parallel": workers,
        "messages": len(ids),
        "seconds": seconds,
        "per_second": len(ids) / seconds,
        "enqueue_seconds": enqueued,
    }


def send_each(port: int, messages: Sequence[Prepared]) -> None:
    """One connection per message, as EmailMessage.send() opens and closes one."""
    for sender, recipients, data in messages:
        with smtplib.SMTP("127.0.0.1", port, local_hostname=DNS_NAME.get_fqdn()) as smtp:
            smtp.sendmail(sender, recipients, data)


def limit(
    messages: list[Prepared], senders: int, server: bench.SmtpServer, one_connection: bool = False
) -> dict[str, Any]:
    """smtplib alone, from ``senders`` processes sharing the messages."""
    send = limits.send_over_one if one_connection else send_each
    shares = [(server.port, messages[n::senders]) for n in range(senders)]
    DNS_NAME.get_fqdn()  # resolved once, as in a worker, before the clock runs
    connections.close_all()
    already = server.received
    with multiprocessing.get_context("fork").Pool(senders) as pool:
        began = time.time()
        pool.starmap(send, shares)
        last = server.wait_for(already + len(messages), timeout=600)
    seconds = last - began
    how = "over one connection" if one_connection else "one connection per message"
    return {
        "sender": f"smtplib, {how}, {senders} process{'es' if senders > 1 else ''}",
        "parallel": senders,
        "messages": len(messages),
        "seconds": seconds,
        "per_second": len(messages) / seconds,
        "enqueue_seconds": None,
    }


COLUMNS = [
    bench.Column("sender", "sender"),
    bench.Column("messages", "messages"),
    bench.Column("seconds", "seconds", ".2f"),
    bench.Column("per_second", "messages/s", ".1f"),
]
RATIO_COLUMNS = [
    bench.Column("workers", "workers"),
    bench.Column("workers_per_second", "workers msg/s", ".1f"),
    bench.Column("limit_per_second", "limit msg/s", ".1f"),
    bench.Column("ratio", "share of limit", ".2f"),
]


def main() -> None:
    parser = bench.arguments(__doc__.splitlines()[0], NAME)
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--seats", type=int, default=5)
    args = parser.parse_args()
    games, seats = (20, 5) if args.quick else (args.games, args.seats)

    bench.fresh_database()
    bench.flush_redis()
    ids = make_reports(games, seats)
    server = bench.SmtpServer()
    try:
        workers = [delivered_by_workers(ids, n, server, timeout=600) for n in (1, 2)]
        messages = limits.prepared(ids)
        each = [limit(messages, n, server) for n in (1, 2)]
        over_one = [limit(messages, n, server, one_connection=True) for n in (1, 2)]
    finally:
        server.stop()
    rows = [*workers, *over_one, *each]
    ratios = [
        {
            "workers": worker["parallel"],
            "workers_per_second": worker["per_second"],
            "limit_per_second": smtp["per_second"],
            "ratio": worker["per_second"] / smtp["per_second"],
        }
        for worker, smtp in zip(workers, over_one, strict=True)
    ]
    bench.report(
        args.json,
        name=NAME,
        title="Email delivery by the Celery mail workers (SMTP)",
        quick=args.quick,
        method=(
            f"{len(ids)} turn reports of {games} Choice games of {seats} seats, started with "
            "postal.start_game. Workers: `celery worker --queues mail --concurrency 1` "
            "each, moderator.mail.smtp.EmailBackend (Django's SMTP backend, extended), to "
            "aiosmtpd in a process of its own; timed from "
            "queueing.enqueue of every row until the SMTP server received the last message; "
            "the workers send batches of MAIL_BATCH rows (default 50), each over one SMTP "
            "connection. Limit: the same messages (building.email_message(row).message()) sent "
            "with smtplib over one connection per process, from as many processes as "
            "workers. smtplib with one connection per message (what the workers did before "
            "batches) is shown for reference."
        ),
        parameters={"games": games, "seats": seats, "messages": len(ids)},
        tables=[
            bench.Table("Every run", COLUMNS, rows),
            bench.Table("Workers against the limit", RATIO_COLUMNS, ratios),
        ],
        targets=[
            bench.Target(
                f"messages per second of {r['workers']} worker(s), as a share of smtplib's "
                f"over one connection from {r['workers']} process(es)",
                "at least 0.50",
                f"{r['ratio']:.2f}",
                r["ratio"] >= 0.5,
            )
            for r in ratios
        ],
    )


if __name__ == "__main__":
    main()
