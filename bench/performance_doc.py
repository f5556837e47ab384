"""Writes docs/performance.md from the JSON figures of the benchmarks in var/bench/.

    .venv/bin/python bench/performance_doc.py [--figures var/bench] [--out docs/performance.md]

Run the benchmarks first, on a quiet machine (each writes var/bench/<name>.json): ``make
bench`` runs each, then this script; bench/README.md says what each measures.

The document says which machine it describes (CPU, cores, memory, PostgreSQL, Redis and
Python versions, date), gives every benchmark's tables and targets, and ends with a list
for the lead to say what changed each figure. A benchmark without figures here keeps its
section (and its rows of the targets) from the document as it stands, with the date it was
run: benchmarks run on different days each update their own part. One never run is listed
as not run; figures from a ``--quick`` run are marked as such.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# Every benchmark, in the order `make bench` runs them and this document shows them.
BENCHMARKS = {
    "deadline_rush": "A deadline rush, end to end",
    "embedded_limits": "The embedded default's limits",
    "step_costs": "Where a step and an email spend their time",
    "seat_page": "The seat page",
    "live_pages": "Open pages: what live updates cost",
    "resolving_post": "The post that resolves a step",
    "order_submission": "Order submission through the web form",
    "order_cpu": "CPU of one order post",
    "mixed_load": "Mixed load: players during a rush",
    "reminder_sweep": "The reminders' part of each sweep",
    "storage": "Storage per finished step",
    "resolve_steps": "Due steps resolved by the workers",
    "email_delivery": "Email delivery by the mail workers",
    "growth": "Growth with seats and with steps due at once",
    "mailbox": "The development mailbox",
    "across_hosts": "Across hosts: the rush, and hosts cut off",
    # Not in `make bench`: it plays a month of 1,000 games, for hours; run it on its own.
    "game_month": "What a game costs: a month of a realistic mix",
}


# --- the machine -------------------------------------------------------------------------


def _proc_value(path: str, key: str) -> str:
    try:
        for line in Path(path).read_text().splitlines():
            name, _, value = line.partition(":")
            if name.strip() == key:
                return value.strip()
    except OSError:
        pass
    return "unknown"


def _postgres_version() -> str:
    url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    try:
        import psycopg

        with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", connect_timeout=3) as conn:
            row = conn.execute("SHOW server_version").fetchone()
            return f"PostgreSQL {row[0]}" if row else "unknown"
    except Exception as error:
        return f"unknown ({type(error).__name__})"


def _redis_version() -> str:
    try:
        import redis

        info = redis.Redis.from_url("redis://127.0.0.1:6379/0", socket_timeout=3).info("server")
        return f"Redis {info['redis_version']}"
    except Exception as error:
        return f"unknown ({type(error).__name__})"


def _django_version() -> str:
    try:
        import django

        return f"Django {django.get_version()}"
    except ImportError:
        return "unknown"


def machine() -> list[tuple[str, str]]:
    memory = _proc_value("/proc/meminfo", "MemTotal")
    if memory.endswith(" kB"):
        memory = f"{int(memory.split()[0]) / 1024 / 1024:.1f} GiB"
    return [
        ("CPU", _proc_value("/proc/cpuinfo", "model name")),
        ("cores", str(os.cpu_count())),
        ("memory", memory),
        ("database", _postgres_version()),
        ("broker and cache", _redis_version()),
        ("Python", f"{platform.python_implementation()} {platform.python_version()}"),
        ("framework", _django_version()),
        ("system", f"{platform.system()} {platform.release()}"),
        ("document written", datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")),
    ]


# --- tables ------------------------------------------------------------------------------


def cell(value: Any, spec: str = "") -> str:
    if value is None:
        return ""
    if spec:
        try:
            return format(value, spec)
        except (TypeError, ValueError):
            pass
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.0f}" if abs(value) >= 1000 else f"{value:.3g}"
    if isinstance(value, list | tuple):
        return ", ".join(cell(item) for item in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {cell(v)}" for k, v in value.items())
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown(headers: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + " --- |" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def rows_table(rows: list[dict[str, Any]]) -> list[str]:
    """Any list of dicts: a column per key, in the order the keys first appear."""
    keys: list[str] = []
    for row in rows:
        keys += [key for key in row if key not in keys]
    return markdown(keys, [[cell(row.get(key)) for key in keys] for row in rows])


def our_table(table: dict[str, Any]) -> list[str]:
    """A table written by bench.Table: its columns, titles and formats."""
    columns = table["columns"]
    return [
        f"**{table['title']}**",
        "",
        *markdown(
            [column["title"] for column in columns],
            [[cell(row.get(c["key"]), c["format"]) for c in columns] for row in table["rows"]],
        ),
    ]


def figures(data: Any) -> list[str]:
    """The tables of one benchmark's JSON, whatever its shape."""
    if isinstance(data, list):
        dicts = [row for row in data if isinstance(row, dict)]
        return rows_table(dicts) if dicts else [f"`{cell(data)}`"]
    if not isinstance(data, dict):
        return [f"`{cell(data)}`"]
    if isinstance(data.get("tables"), list):
        lines: list[str] = []
        for table in data["tables"]:
            lines += [*our_table(table), ""]
        return lines[:-1]
    lines = []
    scalars = {k: v for k, v in data.items() if not isinstance(v, list | dict)}
    if scalars:
        lines += [*markdown(["", ""], [[k, cell(v)] for k, v in scalars.items()]), ""]
    for key, value in data.items():
        if isinstance(value, list) and value and all(isinstance(r, dict) for r in value):
            lines += [f"**{key}**", "", *rows_table(value), ""]
        elif isinstance(value, dict):
            lines += [f"**{key}**", "", *figures(value), ""]
    return lines[:-1] if lines else ["(no figures)"]


def targets(data: Any) -> list[str]:
    if not isinstance(data, dict) or not data.get("targets"):
        return []
    rows = [
        [t["what"], t["goal"], t["value"], "met" if t["met"] else "**not met**"]
        for t in data["targets"]
    ]
    return ["", "Targets (reported, not asserted):", "", *markdown(["", "goal", "value", ""], rows)]


def section(name: str, path: Path) -> list[str]:
    title = BENCHMARKS.get(name, name)
    command = f"`.venv/bin/python bench/{name}.py`"
    lines = [f"## {title}", ""]
    if not path.exists():
        where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        return [*lines, f"Not run yet: {command} writes `{where}`.", ""]
    data = json.loads(path.read_text())
    run_at = data.get("run_at") if isinstance(data, dict) else None
    if run_at is None:
        run_at = datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat(timespec="seconds")
    lines.append(f"{command}, run at {run_at}.")
    if isinstance(data, dict) and data.get("quick"):
        lines.append("**A `--quick` run: it checks the script; its figures are not to be quoted.**")
    if isinstance(data, dict) and data.get("method"):
        lines += ["", str(data["method"])]
    if isinstance(data, dict) and data.get("parameters"):
        lines += ["", "Parameters: " + cell(data["parameters"]) + "."]
    return [*lines, "", *figures(data), *targets(data), ""]


SUMMARY = "Every target at a glance"


def previous(document: Path) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The document as it stands: each section's lines by its title, and the rows of its
    table of targets by the benchmark's title (without " (quick run)")."""
    sections: dict[str, list[str]] = {}
    title = None
    for line in document.read_text().splitlines() if document.exists() else []:
        if line.startswith("## "):
            title = line[3:].strip()
            sections[title] = []
        if title is not None:
            sections[title].append(line)
    rows: dict[str, list[str]] = {}
    for line in sections.get(SUMMARY, [])[4:]:
        if line.startswith("| "):
            benchmark = line[2:].split(" | ", 1)[0].removesuffix(" (quick run)")
            rows.setdefault(benchmark, []).append(line)
    return sections, rows


def kept(title: str, sections: dict[str, list[str]]) -> list[str] | None:
    """The section of ``title`` as the document had it, if it had figures."""
    lines = sections.get(title)
    if not lines or any(line.startswith("Not run yet") for line in lines):
        return None
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return [*lines, ""]


def summary(folder: Path, before: dict[str, list[str]] | None = None) -> list[str]:
    """Every target of every benchmark that ran, in one table (``before``: the rows of a
    benchmark not run here, as the document had them)."""
    rows = []
    for name in BENCHMARKS:
        path = folder / f"{name}.json"
        if not path.exists():
            rows += [line[2:-2].split(" | ") for line in (before or {}).get(BENCHMARKS[name], [])]
            continue
        data = json.loads(path.read_text())
        if not isinstance(data, dict):
            continue
        quick = " (quick run)" if data.get("quick") else ""
        for target in data.get("targets") or []:
            rows.append(
                [
                    f"{BENCHMARKS[name]}{quick}",
                    cell(target["what"]),
                    cell(target["goal"]),
                    cell(target["value"]),
                    "met" if target["met"] else "**not met**",
                ]
            )
    if not rows:
        return []
    return [
        f"## {SUMMARY}",
        "",
        *markdown(["benchmark", "figure", "goal", "value", ""], rows),
        "",
    ]


def document(folder: Path, earlier: Path | None = None) -> str:
    """The document from the figures in ``folder``; a benchmark without figures there keeps
    its section of ``earlier`` (the document as it stands)."""
    sections, rows = previous(earlier) if earlier is not None else ({}, {})
    lines = [
        "# Performance",
        "",
        "Figures measured on one machine, written by `bench/performance_doc.py` from the JSON",
        "that each benchmark in `bench/` writes to `var/bench/`. Run the benchmarks on a quiet",
        "machine (nothing else running), then `.venv/bin/python bench/performance_doc.py`.",
        "Every benchmark creates its own database and Redis database and starts and stops the",
        "processes it needs. Targets are reported, never asserted. A section whose benchmark",
        "was not run for this document keeps the figures of an earlier run, with its date:",
        "they describe the machine of that day.",
        "",
        "## The machine",
        "",
        *markdown(["", ""], [[key, value] for key, value in machine()]),
        "",
        *summary(folder, rows),
    ]
    for name in BENCHMARKS:
        path = folder / f"{name}.json"
        before = None if path.exists() else kept(BENCHMARKS[name], sections)
        lines += before if before is not None else section(name, path)
    changes = ROOT / "bench" / "changes.md"
    lines += [
        "## What changed each figure",
        "",
        *(changes.read_text().strip().splitlines() if changes.exists() else ["Nothing yet."]),
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--figures", type=Path, default=ROOT / "var" / "bench")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "performance.md")
    args = parser.parse_args()
    args.out.write_text(document(args.figures.resolve(), earlier=args.out))
    print(f"Written: {args.out}")


if __name__ == "__main__":
    main()
