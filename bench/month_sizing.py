"""The figures of bench/game_month.py: the database's tables measured, and from a month's
measurements the costs per 1,000 active games and the machine for more of them.

Imported after ``bench.configure`` (it reads the database)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

from django.db import connection

import bench

MONTH = 30 * 86400
# An honest utilisation: the cores busy at most half the time on average, and at most
# 80% in the busiest hour of the month.
AVERAGE_SHARE = 0.5
PEAK_SHARE = 0.8
SIZES = (1_000, 10_000, 100_000)
MB = 1e6
GB = 1e9

# --- the database --------------------------------------------------------------------------

Sizes = dict[str, tuple[int, int]]


def vacuum(*, full: bool) -> None:
    with connection.cursor() as cursor:
        cursor.execute("VACUUM FULL ANALYZE" if full else "VACUUM ANALYZE")


def sizes() -> Sizes:
    """Table -> (bytes with its indexes and TOAST, rows), for every table of the schema."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind = 'r' AND n.nspname = current_schema()"
        )
        measured = dict(cursor.fetchall())
        counted = {}
        for table in measured:
            cursor.execute(f'SELECT count(*) FROM "{table}"')
            row = cursor.fetchone()
            counted[table] = int(row[0]) if row else 0
    return {table: (int(measured[table]), counted[table]) for table in measured}


def database_size() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_database_size(current_database())")
        row = cursor.fetchone()
    return int(row[0]) if row else 0


@dataclass(frozen=True)
class Growth:
    """The tables at the month's start (after VACUUM FULL), at its end as autovacuum left
    them, at its end after VACUUM FULL, then with the setup's email bodies and links pruned
    (they were in the start's figures), then with the month's pruned too (each VACUUM
    FULL)."""

    start: Sizes
    end: Sizes
    live: Sizes
    setup_pruned: Sizes
    pruned: Sizes

    def added(self, table: str) -> int:
        """Rows the month added to ``table``."""
        return self.live[table][1] - self.start.get(table, (0, 0))[1]

    def on_disk(self, table: str) -> int:
        """Bytes ``table`` grew by in the month, as autovacuum left it."""
        return self.end.get(table, (0, 0))[0] - self.start.get(table, (0, 0))[0]

    def written(self, table: str) -> int:
        """Bytes of the rows the month wrote to ``table``, nothing pruned."""
        return self.live[table][0] - self.start.get(table, (0, 0))[0]

    def kept(self, table: str) -> int:
        """Bytes of them left once the month's email bodies and links are pruned."""
        pruned = self.setup_pruned[table][0] - self.pruned[table][0]
        return self.written(table) - pruned


SHOWN = 8  # the tables that grew most, by name; the rest in one row


def growth_rows(growth: Growth, scale: float) -> list[dict[str, Any]]:
    order = sorted(growth.live, key=lambda table: -growth.written(table))
    named, rest = order[:SHOWN], order[SHOWN:]

    def row(name: str, tables: list[str]) -> dict[str, Any]:
        written = sum(growth.written(t) for t in tables)
        kept = sum(growth.kept(t) for t in tables)
        return {
            "table": name,
            "rows": sum(growth.added(t) for t in tables),
            "disk": sum(growth.on_disk(t) for t in tables) / MB,
            "live": written / MB,
            "kept": kept / MB,
            "live_per_thousand": written * scale / MB,
            "kept_per_thousand": kept * scale / MB,
        }

    return [
        *(row(table, [table]) for table in named),
        row(f"{len(rest)} other tables", rest),
        row("total", order),
    ]


GROWTH_COLUMNS = [
    bench.Column("table", "table"),
    bench.Column("rows", "rows added"),
    bench.Column("disk", "MB on disk", ".1f"),
    bench.Column("live", "MB live", ".1f"),
    bench.Column("kept", "MB kept", ".1f"),
    bench.Column("live_per_thousand", "MB/1,000 games/month", ".1f"),
    bench.Column("kept_per_thousand", "kept MB/1,000 games/month", ".1f"),
]

# --- the machine ---------------------------------------------------------------------------


class Polls(Protocol):
    def at(self, name: str, games: float) -> tuple[float, float]: ...

    def per_month(self, games: float) -> float: ...


@dataclass(frozen=True)
class PerThousand:
    """A month of 1,000 active games: CPU seconds of the service (the web and the workers,
    their PostgreSQL backends, PostgreSQL's own processes) and of its busiest hour; bytes
    the database keeps for good and the email bodies it holds for MAIL_RETENTION_DAYS;
    emails a month, on the busiest day and in the busiest hour. ``polls``: the beat's
    polls, whose cost grows with the games running, not in proportion."""

    cpu: float
    peak_hour_cpu: float
    polls: Polls
    kept_bytes: float
    bodies_bytes: float
    emails: float
    peak_day_emails: float
    peak_hour_emails: float


def machine_rows(per: PerThousand) -> list[dict[str, Any]]:
    rows = []
    for games in SIZES:
        times = games / 1000
        polls = per.polls.per_month(games)
        average = (per.cpu * times + polls) / MONTH
        peak = per.peak_hour_cpu * times / 3600 + polls / MONTH
        cores = max(1, math.ceil(max(average / AVERAGE_SHARE, peak / PEAK_SHARE)))
        rows.append(
            {
                "games": games,
                "cpu_hours": (per.cpu * times + polls) / 3600,
                "average": average,
                "peak": peak,
                "cores": cores,
                "sweep": sum(per.polls.at("sweep", games)),
                "disk_month": per.kept_bytes * times / GB,
                "disk_year": (12 * per.kept_bytes + per.bodies_bytes) * times / GB,
                "emails_day": per.emails * times / 30,
                "peak_day": per.peak_day_emails * times,
                "peak_second": per.peak_hour_emails * times / 3600,
            }
        )
    return rows


MACHINE_COLUMNS = [
    bench.Column("games", "active games"),
    bench.Column("cpu_hours", "CPU h/month", ".1f"),
    bench.Column("average", "average cores", ".3f"),
    bench.Column("peak", "busiest hour cores", ".3f"),
    bench.Column("cores", "cores (50% avg, 80% peak)"),
    bench.Column("sweep", "s per sweep", ".2f"),
    bench.Column("disk_month", "disk GB/month", ".2f"),
    bench.Column("disk_year", "disk GB after a year", ".1f"),
    bench.Column("emails_day", "emails/day", ".0f"),
    bench.Column("peak_day", "busiest day", ".0f"),
    bench.Column("peak_second", "busiest hour emails/s", ".2f"),
]
