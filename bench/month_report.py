"""What bench/game_month.py reports of a month: its games by kind, where the CPU went, the
figures per 1,000 active games, the database's growth, the machine for more games, and
the checks that nothing was lost, sent twice or failed.

Imported after ``bench.configure`` (it reads the database)."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings

import bench
from bench import month_sizing
from bench.month_mix import START, Mix
from games.models import Game, Order, Step
from moderator.mail.models import OutboundEmail

# The kinds of work, in the order the report lists them.
WORK = {
    "web": "orders on the web (page, post, page)",
    "email": "orders by email (webhook, reader)",
    "receipts": "receipts written",
    "deadline": "steps resolved at their deadline",
    "send": "email sent over SMTP",
    "sweep": "the sweep (reminders, digests, retries)",
    "prune": "the daily pruning",
    "games": "new games (created, invited, started)",
}
# The kinds of work run every tick of the month, and their idle run (game_month.poll_calls).
PERIODIC = {"deadline": "steps run", "receipts": "receipts", "sweep": "sweep"}
# The beat's polls in production, and the seconds between two (the settings).
CADENCE = {
    "hand out": settings.STEP_SWEEP_SECONDS,
    "receipts": settings.RECEIPT_SECONDS,
    "sweep": settings.SWEEP_SECONDS,
}


# The periodic runs whose idle cost grows with the running games: the sweep reads every
# running game's open step (its reminders). The others read an index of what is due
# (orders owed a receipt, due steps), empty when nothing is: their cost is taken as the
# same for any number of games.
GROWS = frozenset({"sweep"})


@dataclass(frozen=True)
class Polls:
    """Each periodic run's CPU seconds (app, PostgreSQL) when nothing is due, measured
    before the first game (``empty``) and sampled through the month with ``games``
    running (``full``). ``at(n)``: the cost with ``n`` games; for a run that grows with
    the games (GROWS), on the line through the two from the month's (never falling: a run
    varies by more than it could grow with a few games)."""

    empty: dict[str, tuple[float, float]]
    full: dict[str, tuple[float, float]]
    games: int

    def at(self, name: str, games: float) -> tuple[float, float]:
        app, database = self.full[name]
        if name not in GROWS:
            return app, database
        more = (games - self.games) / self.games
        app0, database0 = self.empty[name]
        return app + max(app - app0, 0.0) * more, database + max(database - database0, 0.0) * more

    def per_month(self, games: float) -> float:
        """The beat's polls at their cadence for a month with ``games``, CPU seconds."""
        return sum(
            sum(self.at(name, games)) * month_sizing.MONTH / seconds
            for name, seconds in CADENCE.items()
        )


@dataclass
class Measured:
    """What a month's run measured. ``work``: kind -> (calls, app s, PostgreSQL s);
    ``hours``: hour of the month -> app and PostgreSQL s; ``ticks``: the periodic runs of
    the month."""

    games: int
    days: float
    mix: Mix
    counts: Counter[str]
    kinds_ever: dict[int, str]
    running: Counter[str]
    hours: dict[int, float]
    sent_by_hour: Counter[int]
    ticks: int
    work: dict[str, tuple[int, float, float]]
    postgres_own: float
    smtp_server: float
    benchmark: float
    arrivals: list[bench.Arrival]
    polls: Polls
    growth: month_sizing.Growth
    database: tuple[int, int]
    wall: float
    active: int

    @property
    def end(self) -> datetime:
        return START + timedelta(days=self.days)

    @property
    def per_games(self) -> float:
        """From these games to 1,000."""
        return 1000 / self.games

    @property
    def scale(self) -> float:
        """From these games and days to 1,000 games and 30 days."""
        return self.per_games * 30 / self.days

    def idle(self, kind: str) -> tuple[float, float]:
        """The idle part of a periodic kind of work: the month's ticks times its idle poll."""
        if kind not in PERIODIC:
            return 0.0, 0.0
        app, database = self.polls.full[PERIODIC[kind]]
        return self.ticks * app, self.ticks * database

    def own(self, kind: str | None = None) -> tuple[float, float]:
        """The games' own work, app and PostgreSQL, of ``kind`` (None: of every kind): as
        metered, less the periodic runs' idle part (the beat's polls: ``Polls.per_month``),
        never below nothing (the idle part is sampled apart, and a run's cost varies by
        more than a quiet month's work)."""
        if kind is None:
            kinds = [self.own(key) for key in self.work]
            return sum(app for app, _ in kinds), sum(database for _, database in kinds)
        _, app, database = self.work.get(kind, (0, 0.0, 0.0))
        idle_app, idle_database = self.idle(kind)
        return max(app - idle_app, 0.0), max(database - idle_database, 0.0)


def kind_rows(measured: Measured) -> list[dict[str, Any]]:
    """By kind of game: games, steps closed in the month, orders by way, emails."""
    kind_of, end = measured.kinds_ever, measured.end
    rows: dict[str, dict[str, Any]] = {
        kind.key: {"kind": kind.title, "active": measured.running[kind.key], "started": 0,
                   "steps": 0, "web": 0, "email": 0, "default": 0, "emails": 0}
        for kind in measured.mix.kinds
    }  # fmt: skip
    started = Game.objects.filter(pk__in=list(kind_of), started_at__gte=START)
    for game_id in started.values_list("pk", flat=True):
        rows[kind_of[game_id]]["started"] += 1
    closed = Step.objects.filter(closed_at__gte=START, closed_at__lt=end)
    for game_id in closed.values_list("game_id", flat=True):
        rows[kind_of[game_id]]["steps"] += 1
    orders = Order.objects.filter(received_at__gte=START, received_at__lt=end)
    for game_id, source in orders.values_list("step__game_id", "source"):
        rows[kind_of[game_id]][source if source in ("web", "email") else "default"] += 1
    emails = OutboundEmail.objects.filter(sent_at__gte=START, sent_at__lt=end)
    for game_id in emails.values_list("game_id", flat=True):
        if game_id in kind_of:
            rows[kind_of[game_id]]["emails"] += 1
    return list(rows.values())


KIND_COLUMNS = [
    bench.Column("kind", "kind of game"),
    bench.Column("active", "running at the end"),
    bench.Column("started", "started in the month"),
    bench.Column("steps", "steps closed"),
    bench.Column("web", "web orders"),
    bench.Column("email", "email orders"),
    bench.Column("default", "defaults, autopilots"),
    bench.Column("emails", "emails sent"),
]


def email_rows(measured: Measured) -> list[dict[str, Any]]:
    """The emails of the month by kind (the outbox row's), with the bytes the SMTP server
    took of them, matched by recipient and subject (the server keeps a long subject's first
    line only)."""
    sent = OutboundEmail.objects.filter(sent_at__gte=START, sent_at__lt=measured.end)
    by_address: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for to, subject, kind in sent.values_list("to", "subject", "kind"):
        by_address[to].append((" ".join(subject.split()), kind))
    counted: Counter[str] = Counter()
    sizes: Counter[str] = Counter()
    for arrival in measured.arrivals:
        line = " ".join(arrival.subject.split())
        kinds = (kind for subject, kind in by_address[arrival.to] if subject.startswith(line))
        kind = next(kinds, "(not matched)")
        counted[kind] += 1
        sizes[kind] += arrival.size
    rows = [
        {"kind": kind, "emails": n, "per_thousand": n * measured.scale,
         "kb": sizes[kind] / n / 1000, "mb": sizes[kind] * measured.scale / month_sizing.MB}
        for kind, n in counted.most_common()
    ]  # fmt: skip
    total = sum(counted.values())
    rows.append(
        {"kind": "total", "emails": total, "per_thousand": total * measured.scale,
         "kb": sum(sizes.values()) / max(total, 1) / 1000,
         "mb": sum(sizes.values()) * measured.scale / month_sizing.MB}
    )  # fmt: skip
    return rows


EMAIL_COLUMNS = [
    bench.Column("kind", "email"),
    bench.Column("emails", "sent"),
    bench.Column("per_thousand", "per 1,000 games a month", ",.0f"),
    bench.Column("kb", "kB each", ".1f"),
    bench.Column("mb", "MB per 1,000 games a month", ",.0f"),
]


def work_rows(measured: Measured) -> list[dict[str, Any]]:
    """Each kind of work: as metered, its idle part, and the games' own per 1,000 games a
    month; then the parts outside the service's code."""
    rows: list[dict[str, Any]] = []
    for key, title in WORK.items():
        calls, app, database = measured.work.get(key, (0, 0.0, 0.0))
        idle = sum(measured.idle(key))
        rows.append(
            {"what": title, "calls": calls, "app": app, "database": database,
             "ms_per_call": 1000 * (app + database) / calls if calls else 0.0, "idle": idle,
             "per_thousand": sum(measured.own(key)) * measured.scale}
        )  # fmt: skip
    rows.append(
        {"what": "total", "calls": sum(row["calls"] for row in rows),
         "app": sum(row["app"] for row in rows),
         "database": sum(row["database"] for row in rows), "ms_per_call": 0.0,
         "idle": sum(row["idle"] for row in rows),
         "per_thousand": sum(row["per_thousand"] for row in rows)}
    )  # fmt: skip
    apart = [
        ("PostgreSQL's own processes", 0.0, measured.postgres_own),
        ("the SMTP server (the provider's side)", measured.smtp_server, 0.0),
        ("the benchmark's players and bookkeeping", measured.benchmark, 0.0),
    ]
    rows += [
        {"what": what, "calls": 0, "app": app, "database": database, "ms_per_call": 0.0,
         "idle": 0.0, "per_thousand": (app + database) * measured.scale}
        for what, app, database in apart
    ]  # fmt: skip
    return rows


WORK_COLUMNS = [
    bench.Column("what", "work"),
    bench.Column("calls", "calls"),
    bench.Column("app", "app CPU s", ".1f"),
    bench.Column("database", "PostgreSQL CPU s", ".1f"),
    bench.Column("ms_per_call", "ms/call", ".1f"),
    bench.Column("idle", "idle runs s", ".1f"),
    bench.Column("per_thousand", "games' own s/1,000 games/month", ".0f"),
]


def poll_rows(measured: Measured) -> list[dict[str, Any]]:
    polls = measured.polls
    rows = []
    for name, (app, database) in polls.full.items():
        empty = sum(polls.empty[name])
        month = (app + database) * month_sizing.MONTH / CADENCE[name] if name in CADENCE else 0.0
        rows.append(
            {"poll": name, "empty": 1000 * empty, "app": 1000 * app, "database": 1000 * database,
             "per_game": 1000 * max(app + database - empty, 0.0) / polls.games
             if name in GROWS else 0.0,
             "month": month}
        )  # fmt: skip
    rows.append(
        {"poll": "the beat's polls", "empty": 0.0, "app": 0.0, "database": 0.0, "per_game": 0.0,
         "month": polls.per_month(polls.games)}
    )  # fmt: skip
    return rows


POLL_COLUMNS = [
    bench.Column("poll", "run, nothing due"),
    bench.Column("empty", "no games: CPU ms", ".2f"),
    bench.Column("app", "the month's games: app ms", ".2f"),
    bench.Column("database", "PostgreSQL ms", ".2f"),
    bench.Column("per_game", "ms per game", ".3f"),
    bench.Column("month", "s a month at the beat's cadence", ".0f"),
]


def per_thousand(measured: Measured) -> tuple[list[dict[str, Any]], month_sizing.PerThousand]:
    """The month per 1,000 active games, and what the machine needs of it."""
    per_games, scale, counts = measured.per_games, measured.scale, measured.counts
    app, database = measured.own()
    service = app + database + measured.postgres_own
    idle_hour = sum(sum(measured.idle(kind)) for kind in PERIODIC) / (measured.days * 24)
    busiest = max(measured.hours.values(), default=0.0) - idle_hour
    # PostgreSQL's own processes, in the busiest hour as in the month.
    peak_hour = busiest * service / max(app + database, 1e-9)
    closed = Counter(
        Step.objects.filter(closed_at__gte=START, closed_at__lt=measured.end).values_list(
            "closed_by", flat=True
        )
    )
    by_day: Counter[int] = Counter()
    for hour, sent in measured.sent_by_hour.items():
        by_day[hour // 24] += sent
    growth = measured.growth
    written = sum(growth.written(table) for table in growth.live)
    kept = sum(growth.kept(table) for table in growth.live)
    sent_bytes = sum(arrival.size for arrival in measured.arrivals)
    mb = month_sizing.MB
    rows = [
        ("CPU: the web and the workers (app)", app * scale, "s"),
        ("CPU: their PostgreSQL backends", database * scale, "s"),
        ("CPU: PostgreSQL's own processes", measured.postgres_own * scale, "s"),
        ("CPU: the busiest hour of the month, all of the above", peak_hour * per_games, "s"),
        ("CPU: the beat's polls at their cadence, with 1,000 games (not in proportion)",
         measured.polls.per_month(1000), "s"),
        ("steps resolved", sum(closed.values()) * scale, ""),
        ("  at their deadline", closed["deadline"] * scale, ""),
        ("  early (every order in)", closed["early"] * scale, ""),
        ("  by an order that takes effect at once", closed["order"] * scale, ""),
        ("orders taken on the web", counts["web orders taken"] * scale, ""),
        ("orders taken by email", counts["email orders taken"] * scale, ""),
        ("games ended and replaced", counts["games ended"] * scale, ""),
        ("emails sent", counts["emails sent"] * scale, ""),
        ("  bytes sent (SMTP DATA)", sent_bytes * scale / mb, "MB"),
        ("  on the busiest day", max(by_day.values(), default=0) * per_games, ""),
        ("database growth, nothing pruned (VACUUM FULL)", written * scale / mb, "MB"),
        ("database growth kept after the retention", kept * scale / mb, "MB"),
    ]  # fmt: skip
    per = month_sizing.PerThousand(
        cpu=service * scale,
        peak_hour_cpu=peak_hour * per_games,
        polls=measured.polls,
        kept_bytes=kept * scale,
        bodies_bytes=(written - kept) * scale,
        emails=counts["emails sent"] * scale,
        peak_day_emails=max(by_day.values(), default=0) * per_games,
        peak_hour_emails=max(measured.sent_by_hour.values(), default=0) * per_games,
    )
    return [{"figure": f, "value": v, "unit": u} for f, v, u in rows], per


FIGURE_COLUMNS = [
    bench.Column("figure", "per 1,000 active games, a month"),
    bench.Column("value", "value", ",.0f"),
    bench.Column("unit", "unit"),
]


def checks(measured: Measured, errors: list[str]) -> list[bench.Target]:
    """Nothing lost, nothing twice, nothing failed."""
    counts, end = measured.counts, measured.end
    orders = Counter(
        Order.objects.filter(received_at__gte=START, received_at__lt=end).values_list(
            "source", flat=True
        )
    )
    taken = (counts["web orders taken"], counts["email orders taken"])
    recorded = (orders["web"], orders["email"])
    sent = OutboundEmail.objects.filter(sent_at__gte=START, sent_at__lt=end).count()
    left = Counter(
        OutboundEmail.objects.exclude(state=OutboundEmail.State.SENT).values_list(
            "state", flat=True
        )
    )
    failed = Step.objects.filter(failures__gt=0).count()
    stuck = Game.objects.exclude(needs_gm="").count()
    arrived = len(measured.arrivals)
    return [
        bench.Target("orders taken (web, email) against orders recorded", "the same",
                     f"{taken} against {recorded}", taken == recorded),
        bench.Target("emails at the SMTP server against outbox rows sent", "the same",
                     f"{arrived} against {sent}", arrived == sent),
        bench.Target("outbox rows not sent at the end", "none",
                     ", ".join(f"{n} {state}" for state, n in left.items()) or "none",
                     not left),
        bench.Target("steps that failed, games waiting for their GM, errors logged", "none",
                     f"{failed}, {stuck}, {len(errors)}", not (failed or stuck or errors)),
    ]  # fmt: skip


def method(measured: Measured) -> str:
    mix = measured.mix
    shares = ", ".join(f"{kind.title} {mix.shares[kind.key]:g}" for kind in mix.kinds)
    return (
        f"{measured.games} games kept running for {measured.days:g} days of a fixed clock "
        "(after a day of warm-up, not counted), each game that ends replaced by a new one "
        f"of its kind. Mix by weight: {shares}. Choice on a weekly deadline (a day and an "
        "evening hour of the GM's), Liar's Dice with a day per move, Drop-Shy and Dice "
        "Survivor with 4, 6 or 8 hours per move (deadlines moved out of the players' "
        "nights); 2 to 6 seats as each game allows; GMs and players in seven time zones. "
        "Players answer after an exponential while (on average 36 h for Choice, 6 h for "
        "Liar's Dice, 1.5 h for the fast games), never between 23:00 and 07:00 their time, "
        f"with their game's first autopilot's order; {mix.email:.0%} by email reply "
        "(Postmark's inbound post to the webhook, read as the mail worker reads it), "
        f"{mix.never:.0%} never, the rest on the web (Django's test client: the seat page, "
        "the order form posted, the page after it; the link of their latest email when "
        f"their browser holds no seat); {mix.digest:.0%} chose a daily digest. The workers' "
        "domain functions are called as the tasks call them, with the month's moment as "
        "now (time-machine holds the process's clock there too): the steps run 5 s after "
        "each deadline and every 5 minutes, the receipts and the sweep every 5 minutes, "
        "the pruning daily, every email sent at once over SMTP to aiosmtpd in its own "
        "process. CPU: this process's main thread and its PostgreSQL backend (/proc "
        "schedstat) by kind of work; PostgreSQL's own processes (checkpointer, background "
        "writer, WAL writer, autovacuum; read at every periodic run, so an autovacuum "
        "worker that ends between two loses its last part; on a shared server they work "
        "for the other databases too). The periodic runs' "
        "idle part (each run's cost when nothing is due, sampled every half hour of the "
        "month right after a run, times the month's runs) is taken out of the games' own "
        "work and counted as the "
        "beat's polls at their real cadence (5 s, 5 s, 30 s); the sweep's, which reads every "
        "running game's open step, for other numbers of games on the line through its "
        "cost with none and with the month's. "
        "Extrapolated, not measured: the figures per 1,000 games and per 30 days (linear "
        "in the games and days run), the beat's polls at their cadence, and the machines "
        "for 10,000 and 100,000 games (linear in the games, the busiest hour too, which "
        "overstates a larger service's peak). Not included: gunicorn's and Celery's own "
        "work, Redis, the provider's side of email (the SMTP server's CPU is apart), WAL "
        "and backups. Database: every table (pg_total_relation_size) at the month's start "
        "after VACUUM FULL, at its end as autovacuum left it ('on disk'), after VACUUM FULL "
        "('live'), and what is left of the month's rows once the daily pruning has removed "
        "their email bodies and links after their retention ('kept')."
    )


def tables(measured: Measured) -> tuple[list[bench.Table], month_sizing.PerThousand]:
    figures, per = per_thousand(measured)
    return [
        bench.Table("The month by kind of game", KIND_COLUMNS, kind_rows(measured)),
        bench.Table("Per 1,000 active games, a month", FIGURE_COLUMNS, figures),
        bench.Table("Where the CPU went", WORK_COLUMNS, work_rows(measured)),
        bench.Table("Emails by kind", EMAIL_COLUMNS, email_rows(measured)),
        bench.Table("The periodic runs when nothing is due", POLL_COLUMNS, poll_rows(measured)),
        bench.Table(
            "Database growth by table",
            month_sizing.GROWTH_COLUMNS,
            month_sizing.growth_rows(measured.growth, measured.scale),
        ),
        bench.Table(
            "The machine for more games",
            month_sizing.MACHINE_COLUMNS,
            month_sizing.machine_rows(per),
        ),
    ], per
