"""Where a benchmark's CPU went: user and system seconds of each part (the processes it
started, with their children; PostgreSQL's server; this process), read from /proc before
and after, so that a figure can be put beside the cores' time it shared."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def _stat(entry: Path) -> tuple[str, list[str]] | None:
    try:
        text = (entry / "stat").read_text()
    except OSError:
        return None
    name = text[text.index("(") + 1 : text.rindex(")")]
    return name, text.rpartition(")")[2].split()


def postmaster() -> int:
    """The process id of the PostgreSQL server Django's connection talks to (the parent
    of its backend), on this machine."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    read = _stat(Path(f"/proc/{backend}"))
    assert read is not None
    return int(read[1][1])


def snapshot(
    groups: Mapping[str, int], server: int, alone: Mapping[str, int] | None = None
) -> dict[str, float]:
    """CPU seconds so far of each named process group (a process started in a session of
    its own and its children, by their process group id), of the PostgreSQL server
    ``server`` (its pid) with its backends, and of this process. Ended children are
    counted through their parent's ``cutime``. ``alone``: processes counted by their own
    pid (without children), such as a server the benchmark started in its own group."""
    alone = alone or {}
    seconds = dict.fromkeys([*groups, *alone, "postgres", "benchmark"], 0.0)
    by_group = {pgrp: name for name, pgrp in groups.items()}
    by_pid = {pid: name for name, pid in alone.items()}
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        read = _stat(entry)
        if read is None:
            continue
        fields = read[1]
        # After the name: state ppid pgrp session tty tpgid flags minflt cminflt majflt
        # cmajflt utime stime cutime cstime ...
        own = (int(fields[11]) + int(fields[12])) / TICKS
        ended = (int(fields[13]) + int(fields[14])) / TICKS
        if int(entry.name) in by_pid:
            seconds[by_pid[int(entry.name)]] += own
        elif int(entry.name) == me:
            seconds["benchmark"] += own
        elif int(entry.name) == server or int(fields[1]) == server:
            seconds["postgres"] += own + ended
        elif int(fields[2]) in by_group:
            seconds[by_group[int(fields[2])]] += own + ended
    return seconds


def spent(before: Mapping[str, float], after: Mapping[str, float]) -> dict[str, float]:
    """CPU seconds of each part between two snapshots."""
    return {name: after[name] - before.get(name, 0.0) for name in after}
