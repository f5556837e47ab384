"""The limits the benchmarks measure the product against, in the same run: the same
database writes in raw SQL (psycopg's pipeline mode: a transaction's statements sent
together, answers read once), and the same messages sent with smtplib.

Imported after ``bench.configure`` (it reads the rows Django wrote)."""

from __future__ import annotations

import multiprocessing
import smtplib
import time
from collections.abc import Sequence
from typing import Any

import psycopg
from django.conf import settings
from django.core.mail.message import sanitize_address
from django.core.mail.utils import DNS_NAME
from django.db import connection, connections
from psycopg.types.json import Jsonb

from games.models import DiceRoll, Game, Order, Seat, Step
from games.models import Event as EventRow
from moderator.mail import building
from moderator.mail.models import OutboundEmail

# (sender, recipients, the message as Django's SMTP backend writes it to the wire)
Prepared = tuple[str, list[str], bytes]


def captured_step(step_id: int) -> dict[str, Any]:
    """The rows one real (resolved) step wrote, to be written again by ``raw_steps``."""
    step = Step.objects.get(pk=step_id)
    game = step.game
    following = Step.objects.get(game=game, number=step.number + 1)
    return {
        "game": Game.objects.filter(pk=game.pk).values("state").get(),
        "step": Step.objects.filter(pk=step.pk).values("state_after").get(),
        "next": Step.objects.filter(pk=following.pk)
        .values("prompts", "state_before", "deadline")
        .get(),
        "orders": list(Order.objects.filter(step=step).values("parsed", "canonical")),
        "dice": list(DiceRoll.objects.filter(step=step).values("index", "sides", "value")),
        "events": list(EventRow.objects.filter(step=step).values("text", "audience")),
        "seats": game.seats.count(),
        "emails": list(
            OutboundEmail.objects.filter(game=game, created_at__gte=step.closed_at)
            .filter(kind="report")
            .values("to", "reply_to", "thread", "subject", "text", "html", "attachments")
        ),
    }


def open_steps(game_ids: Sequence[int]) -> list[tuple[int, int, int, list[int]]]:
    """(game, its open step, that step's number, its seats) for each game."""
    seats: dict[int, list[int]] = {}
    for game_id, seat_id in (
        Seat.objects.filter(game_id__in=game_ids)
        .order_by("game_id", "position")
        .values_list("game_id", "pk")
    ):
        seats.setdefault(game_id, []).append(seat_id)
    return [
        (game_id, step_id, number, seats[game_id])
        for game_id, step_id, number in Step.objects.filter(
            game_id__in=game_ids, status=Step.Status.OPEN
        ).values_list("game_id", "pk", "number")
    ]


ORDER = (
    "INSERT INTO games_order (step_id, seat_id, text, parsed, canonical, source, received_at, "
    "receipt_due, results) VALUES (%s, %s, '', %s, %s, 'default', %s, false, '[]')"
)
NMR = "UPDATE games_seat SET nmr_count = nmr_count + 1 WHERE game_id = %s"
DIE = (
    "INSERT INTO games_diceroll (game_id, index, sides, value, step_id, label) "
    "VALUES (%s, %s, %s, %s, %s, 'raw')"
)
EVENT = "INSERT INTO games_event (game_id, step_id, text, audience) VALUES (%s, %s, %s, %s)"
CLOSE = (
    "UPDATE games_step SET status = 'done', state_after = %s, closed_at = %s, "
    "closed_by = 'deadline' WHERE id = %s"
)
OPEN = (
    "INSERT INTO games_step (game_id, number, status, opened_at, deadline, prompts, "
    "state_before, failures, last_error, closed_by) "
    "VALUES (%s, %s, 'open', %s, %s, %s, %s, 0, '', '')"
)
LINK = (
    "INSERT INTO games_seatlink (seat_id, token_hash, purpose, link_version, created_at, "
    "expires_at) VALUES (%s, %s, 'play', 0, %s, %s)"
)
EMAIL = (
    'INSERT INTO mail_outboundemail (dedupe_key, kind, game_id, "to", reply_to, thread, '
    "subject, text, html, headers, state, attempts, message_id, esp_message_id, last_error, "
    "created_at, attachments, delivery, delivery_detail) VALUES (%s, 'report', %s, %s, %s, "
    "%s, %s, %s, %s, '{}', 'sent', 0, '', '', '', now(), %s, '', '')"
)
GAME = "UPDATE games_game SET state = %s, step_number = %s WHERE id = %s"


def _write_step(
    cur: psycopg.Cursor[Any], rows: dict[str, Any], step: tuple[int, int, int, list[int]]
) -> None:
    game_id, step_id, number, seat_ids = step
    now = rows["next"]["deadline"]
    cur.execute("SELECT id, state FROM games_game WHERE id = %s FOR UPDATE", [game_id])
    cur.execute("SELECT * FROM games_step WHERE id = %s", [step_id])
    cur.execute("SELECT * FROM games_seat WHERE game_id = %s ORDER BY position", [game_id])
    orders = enumerate(rows["orders"])
    cur.executemany(
        ORDER,
        [(step_id, seat_ids[i % len(seat_ids)], Jsonb(o["parsed"]), o["canonical"], now)
         for i, o in orders],
    )  # fmt: skip
    cur.execute(NMR, [game_id])
    cur.executemany(
        DIE,
        [(game_id, 100000 * number + d["index"], d["sides"], d["value"], step_id)
         for d in rows["dice"]],
    )  # fmt: skip
    cur.executemany(
        EVENT, [(game_id, step_id, e["text"], Jsonb(e["audience"])) for e in rows["events"]]
    )
    cur.execute(CLOSE, [Jsonb(rows["step"]["state_after"]), now, step_id])
    following = rows["next"]
    cur.execute(
        OPEN,
        [game_id, number + 1, now, now, Jsonb(following["prompts"]),
         Jsonb(following["state_before"])],
    )  # fmt: skip
    cur.executemany(LINK, [(seat, f"raw-{step_id}-{seat}", now, now) for seat in seat_ids])
    cur.executemany(
        EMAIL,
        [(f"raw:{step_id}:{i}", game_id, e["to"], e["reply_to"], e["thread"], e["subject"],
          e["text"], e["html"], Jsonb(e["attachments"]))
         for i, e in enumerate(rows["emails"])],
    )  # fmt: skip
    cur.execute(GAME, [Jsonb(rows["game"]["state"]), number + 1, game_id])


def _write_steps(rows: dict[str, Any], steps: list[tuple[int, int, int, list[int]]]) -> None:
    """Each step's writes in one transaction, its statements pipelined."""
    database = connection.settings_dict
    with psycopg.connect(
        host=database["HOST"],
        port=database["PORT"] or 5432,
        user=database["USER"],
        dbname=database["NAME"],
    ) as conn:
        for step in steps:
            with conn.transaction(), conn.pipeline(), conn.cursor() as cur:
                _write_step(cur, rows, step)


def prepared(ids: Sequence[int]) -> list[Prepared]:
    """The messages of outbox rows ``ids`` as Django's SMTP backend puts them on the wire."""
    messages = []
    for row in OutboundEmail.objects.filter(pk__in=ids).select_related("game").order_by("id"):
        message = building.email_message(row)
        encoding = message.encoding or settings.DEFAULT_CHARSET
        messages.append(
            (
                sanitize_address(message.from_email, encoding),
                [sanitize_address(address, encoding) for address in message.recipients()],
                message.message().as_bytes(linesep="\r\n"),
            )
        )
    return messages


def send_over_one(port: int, messages: Sequence[Prepared]) -> None:
    with smtplib.SMTP("127.0.0.1", port, local_hostname=DNS_NAME.get_fqdn()) as smtp:
        for sender, recipients, data in messages:
            smtp.sendmail(sender, recipients, data)


def _run(job: tuple[str, Any, Any]) -> float:
    """One process's share of the limit; returns when it finished (time.time())."""
    kind, first, second = job
    if kind == "sql":
        _write_steps(first, second)
    else:
        send_over_one(first, second)
    return time.time()


def steps_and_mail(
    rows: dict[str, Any],
    steps: list[tuple[int, int, int, list[int]]],
    port: int,
    messages: list[Prepared],
    processes: int = 2,
) -> dict[str, float]:
    """The steps' writes in raw SQL from ``processes`` processes, then the messages with
    smtplib from as many: seconds each part took with the machine to itself, and their
    sum, the limit (the rush does both on the same cores)."""
    DNS_NAME.get_fqdn()
    connections.close_all()
    context = multiprocessing.get_context("fork")
    seconds = {}
    for kind, first, work in (("sql", rows, steps), ("smtp", port, messages)):
        jobs = [(kind, first, work[n::processes]) for n in range(processes)]
        with context.Pool(processes) as pool:
            began = time.time()
            ends = pool.map(_run, jobs, chunksize=1)
        seconds[f"{kind}_seconds"] = max(ends) - began
    return seconds | {"seconds": seconds["sql_seconds"] + seconds["smtp_seconds"]}
