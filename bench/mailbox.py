"""Benchmark: the local mailbox (``/mailbox/``, DEBUG only) with 10,000 emails in the
file backend's directory: how long its pages take, unfiltered and filtered.

    .venv/bin/python bench/mailbox.py [--quick] [--emails 10000] [--per-file 5]
        [--requests 100] [--json var/bench/mailbox.json]

The emails are written by Django's file backend as the mail workers write them: one file
per connection, ``--per-file`` messages in each (the reports of one step), to one of 40
games' players (a List-Id per game), with a text part of about 2 kB and an HTML part of
about 6 kB, like a turn report's. The pages are asked through Django's test client in this
process (the view, middleware and template, no HTTP): the first page once with no index
(the index is built), then ``--requests`` times each of the first page, a page deep in the
list, one recipient's emails and one game's; then the first page as a new process sees it
(the index read from disk), and after each of 20 new files. Figures: p50 and p99 in
milliseconds.

Database ``<DATABASE_URL>_bench_mailbox`` (created and migrated on each run: the mailbox
names the games of its filter), Redis database 11 (flushed); the mail directory is
var/bench/mailbox/ (emptied on each run).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench

os.environ["DEBUG"] = "1"  # the mailbox exists only in DEBUG
bench.configure("_bench_mailbox", redis_db=11)

from django.conf import settings  # noqa: E402
from django.core.mail import EmailMultiAlternatives, get_connection  # noqa: E402
from django.test import Client  # noqa: E402

from moderator.mail import mailfiles  # noqa: E402

NAME = "mailbox"
DIRECTORY = bench.ROOT / "var" / "bench" / "mailbox"
GAMES = 40
PLAYERS = 5
FILE_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
COLUMNS = [
    bench.Column("page", "page"),
    bench.Column("shown", "emails listed", "d"),
    bench.Column("p50", "p50 ms", ".1f"),
    bench.Column("p99", "p99 ms", ".1f"),
]


def message(number: int) -> EmailMultiAlternatives:
    game, player = (number // PLAYERS) % GAMES + 1, number % PLAYERS
    text = f"Hello player {player},\n\n" + "The board after step 3: 3 4 4 5 6 | 1 2 2 5.\n" * 45
    html = "<p>" + "<span>The board after step 3: 3 4 4 5 6</span>" * 130 + "</p>"
    email = EmailMultiAlternatives(
        f"Game {game}: step {number // (PLAYERS * GAMES) + 1} report",
        text,
        "Moderator <moderator@localhost>",
        [f"player{player}.game{game}@example.org"],
        headers={"List-Id": f"<game-{game}.localhost>"},
    )
    email.attach_alternative(html, "text/html")
    return email


def fill(emails: int, per_file: int) -> None:
    shutil.rmtree(DIRECTORY, ignore_errors=True)
    DIRECTORY.mkdir(parents=True)
    for first in range(0, emails, per_file):
        batch = [message(n) for n in range(first, min(first + per_file, emails))]
        get_connection(FILE_BACKEND, file_path=str(DIRECTORY)).send_messages(batch)


def timed(client: Client, url: str, requests: int) -> tuple[list[float], int]:
    times = []
    shown = 0
    for _ in range(requests):
        start = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, (url, response.status_code)
        shown = response.content.count(b'href="/mailbox/files/')
    return times, shown


def row(title: str, shown: int, times: list[float]) -> dict[str, object]:
    return {
        "page": title,
        "shown": shown,
        "p50": bench.percentile(times, 50),
        "p99": bench.percentile(times, 99),
    }


def main() -> None:
    parser = bench.arguments(__doc__ or "", NAME)
    parser.add_argument("--emails", type=int, default=10_000)
    parser.add_argument("--per-file", type=int, default=5)
    parser.add_argument("--requests", type=int, default=100)
    args = parser.parse_args()
    emails, requests = (500, 10) if args.quick else (args.emails, args.requests)
    bench.fresh_database()
    bench.flush_redis()
    settings.EMAIL_BACKEND = FILE_BACKEND
    settings.EMAIL_FILE_PATH = DIRECTORY
    start = time.perf_counter()
    fill(emails, args.per_file)
    print(f"{emails} emails written in {time.perf_counter() - start:.1f} s")
    client = Client()
    pages = [
        ("first page, no index yet", "/mailbox/", 1),
        ("first page", "/mailbox/", requests),
        ("page 100", "/mailbox/?page=100", requests),
        ("one recipient", "/mailbox/?to=player1.game7%40example.org", requests),
        ("one game", "/mailbox/?game=7", requests),
    ]
    rows = []
    for title, url, count in pages:
        times, shown = timed(client, url, count)
        rows.append(row(title, shown, times))
    # A new process (make run started again) reads the index from disk once.
    times = []
    for _ in range(requests):
        mailfiles.forget()
        more, shown = timed(client, "/mailbox/", 1)
        times += more
    rows.append(row("first page, index read from disk", shown, times))
    # A step's reports arrive: the new file alone is parsed.
    times = []
    for number in range(min(requests, 20)):
        get_connection(FILE_BACKEND, file_path=str(DIRECTORY)).send_messages(
            [message(emails + number * args.per_file + n) for n in range(args.per_file)]
        )
        more, shown = timed(client, "/mailbox/", 1)
        times += more
    emails_word = "email" if args.per_file == 1 else "emails"
    rows.append(row(f"first page, {args.per_file} new {emails_word} each time", shown, times))
    worst = max(float(str(line["p99"])) for line in rows[1:])
    bench.report(
        args.json,
        name=NAME,
        title="The local mailbox with many emails",
        quick=args.quick,
        method=(
            f"{emails} emails in files of Django's file backend, {args.per_file} per file; "
            "each page asked through Django's test client"
        ),
        parameters={"emails": emails, "per_file": args.per_file, "requests": requests},
        tables=[bench.Table(f"/mailbox/ with {emails} emails", COLUMNS, rows)],
        targets=[
            bench.Target(
                what="slowest p99 of the mailbox's pages (index built)",
                goal="under 300 ms",
                value=f"{worst:.0f} ms",
                met=worst < 300,
            )
        ],
    )


if __name__ == "__main__":
    main()
