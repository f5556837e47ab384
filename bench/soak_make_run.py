"""Soak: ``make run`` left running, as a GM with one group leaves it, with games moving.

    .venv/bin/python bench/soak_make_run.py [--minutes 60] [--port 8101] [--games 5]
        [--var DIR]

Not a benchmark and not in CI (``make bench`` does not run it): it measures nothing, it
watches. It starts ``make run`` itself (migrate, the demo, supervisord with
supervisord.conf: web, worker and beat on the embedded default: SQLite for the database
and the broker, email written to files), in a folder of its own (``VAR_DIR``, a fresh
temporary one unless ``--var``) and on a port of its own (``PORT``; 8000 may be taken).
Then it creates ``--games`` games of every kind in turn, each on a one-minute schedule,
and while ``make run`` runs the players post orders (the domain's ``accept_order``, as the
web form does): for most seats each step, so that some steps resolve early (every order
in) and others at their deadline (the missing seats' defaults). A game that ends is
replaced by a new one, of the next kind in turn.

Each minute it prints a line: steps resolved, emails written to ``VAR_DIR/mail``, orders
posted, processes restarted (supervisord's "exited:" lines: 0 expected), errors seen
(lines of the output with ERROR, CRITICAL or Traceback). At the end it stops ``make run``
as Ctrl-C does, prints the totals and whether every process stopped cleanly, and exits
non-zero if a process was restarted, an error was seen, or no step was resolved in a
minute past the first two. The whole output of ``make run`` is kept in
``VAR_DIR/../make-run.log``.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.error import URLError
from urllib.request import urlopen

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
# One game of each kind (engine, players, options), created in turn.
KINDS = [
    ("choice", 3, {}),
    ("liars-dice", 3, {}),
    ("drop-shy", 3, {}),
    ("dice-survivor", 3, {}),
    ("first-player", 3, {}),
    ("choice", 4, {"variant": "suppenkasper"}),
]
# How often the players look at their games, and how likely a seat posts its order.
POST_SECONDS = 10
POST_CHANCE = 0.8
ERRORS = re.compile(r"ERROR|CRITICAL|Traceback")


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--port", type=int, default=8101)
    parser.add_argument("--games", type=int, default=5)
    parser.add_argument("--var", type=Path, help="VAR_DIR (default: a new temporary folder)")
    return parser.parse_args()


def embedded_default(var: Path, port: int) -> dict[str, str]:
    """The environment of ``make run`` on a fresh machine: no database, Redis, broker or
    secret of this shell's; its files in ``var``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "SECRET_KEY", "DEBUG"}
        and not key.startswith(("DJANGO_", "CELERY_", "MAKE", "MFLAGS"))
    }
    return env | {"VAR_DIR": str(var), "PORT": str(port)}


def answers(url: str) -> bool:
    try:
        with urlopen(url, timeout=5) as response:
            return bool(response.status == 200)
    except (URLError, OSError):
        return False


class Run:
    """``make run`` in a session of its own, its output appended to ``log``."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.log = log
        with log.open("ab") as output:
            self.process = subprocess.Popen(
                ["make", "--no-print-directory", "run"],
                cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> int:
        """What Ctrl-C does: SIGINT to the terminal's process group (make, supervisord)."""
        os.killpg(self.process.pid, signal.SIGINT)
        try:
            return self.process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            return -9


def counts(run: Run, var: Path) -> dict[str, int]:
    from games.models import Step

    text = run.text()
    lines = text.splitlines()
    return {
        "steps": Step.objects.filter(status=Step.Status.DONE).count(),
        "emails": sum(1 for _ in (var / "mail").glob("*")) if (var / "mail").exists() else 0,
        "restarts": sum(1 for line in lines if " exited: " in line),
        "errors": sum(1 for line in lines if ERRORS.search(line)),
    }


def closed_by() -> str:
    """How the steps were resolved: at their deadline (by the worker), early (every order
    in) or by an order that takes effect at once (both in the request of the order; their
    reports are still written to files by the worker)."""
    from django.db.models import Count

    from games.models import Step

    done = Step.objects.filter(status=Step.Status.DONE).values("closed_by")
    return ", ".join(
        f"{row['closed_by']} {row['n']}"
        for row in done.annotate(n=Count("id")).order_by("closed_by")
    )


def new_game(gm: Any, number: int) -> Any:
    from django.utils import timezone

    from games import postal

    engine, players, options = KINDS[number % len(KINDS)]
    game = postal.create_game(
        gm=gm,
        engine_key=engine,
        title=f"Soak {number}: {engine}",
        players=[
            postal.Player(f"p{number}x{seat}", f"p{number}x{seat}@example.org")
            for seat in range(players)
        ],
        options=options,
        time_zone="UTC",
        schedule_spec={"kind": "interval", "seconds": 60},
    )
    return postal.start_game(game.pk, now=timezone.now())


def post_orders(game_id: int, posted: set[tuple[int, int, int]]) -> tuple[int, int]:
    """The players of the game who have not posted for its open step yet post, each with
    POST_CHANCE (once per step: a seat that skips it is played by its default). (posted,
    refused)."""
    from django.db import close_old_connections
    from django.utils import timezone

    from games import postal
    from games.engines import registry
    from games.models import Game, Order

    close_old_connections()
    game = Game.objects.get(pk=game_id)
    if game.status != Game.Status.RUNNING:
        return 0, 0
    step = game.steps.filter(number=game.step_number).first()
    if step is None or step.status != step.Status.OPEN:
        return 0, 0
    engine = registry.get(game.engine)
    done = refused = 0
    for prompt in step.prompts:
        seat = prompt["seat"]
        key = (game.pk, step.number, seat)
        if key in posted:
            continue
        posted.add(key)
        if random.random() > POST_CHANCE:
            continue
        state = engine.state_from_json(game.state)
        offered = registry.strategies(game.engine)
        try:
            order = offered[0].play(state, seat) if offered else engine.default(state, seat)
            text = engine.canonical(state, seat, order)
            postal.accept_order(
                game_id=game.pk,
                position=seat,
                text=text,
                source=Order.Source.WEB,
                now=timezone.now(),
                step_number=step.number,
            )
            done += 1
        except postal.PostalError:
            refused += 1  # the step moved on meanwhile, or a turn's order went first
        game = Game.objects.get(pk=game_id)
        if game.step_number != step.number:
            break
    return done, refused


def main() -> int:
    args = arguments()
    var = args.var or Path(tempfile.mkdtemp(prefix="soak-make-run-")) / "var"
    var.parent.mkdir(parents=True, exist_ok=True)
    env = embedded_default(var, args.port)
    os.environ.clear()
    os.environ.update(env)
    log = var.parent / "make-run.log"
    print(f"make run in {var} on port {args.port}, {args.minutes:g} minutes; output: {log}")
    started = time.monotonic()
    run = Run(env, log)
    deadline = time.monotonic() + 300
    while not (answers(f"http://127.0.0.1:{args.port}/healthz") and "ready." in run.text()):
        if run.process.poll() is not None or time.monotonic() > deadline:
            print(run.text()[-4000:])
            print("make run did not come up")
            return 1
        time.sleep(1)
    print(f"up after {time.monotonic() - started:.0f} s", flush=True)

    try:
        return soak(args, var, run, log)
    finally:
        if run.process.poll() is None:  # the soak itself failed: make run goes with it
            run.stop()


def soak(args: argparse.Namespace, var: Path, run: Run, log: Path) -> int:
    import django

    sys.path.insert(0, str(ROOT))
    os.environ["DJANGO_SETTINGS_MODULE"] = "moderator.settings"
    os.environ["LOG_LEVEL"] = "WARNING"  # this process's own (the steps its orders resolve)
    django.setup()
    from django.contrib.auth import get_user_model

    from games.models import Game

    gm = get_user_model().objects.get(username="gm")  # the demo's
    games = [new_game(gm, number).pk for number in range(args.games)]
    created = len(games)
    posted: set[tuple[int, int, int]] = set()
    orders = refused = 0
    failures: list[str] = []
    quiet_minutes: list[int] = []
    begin = time.monotonic()
    end = begin + args.minutes * 60
    minute, last_steps = 0, 0
    while time.monotonic() < end:
        for index, game_id in enumerate(games):
            try:
                done, no = post_orders(game_id, posted)
                orders, refused = orders + done, refused + no
                if Game.objects.get(pk=game_id).status == Game.Status.FINISHED:
                    games[index] = new_game(gm, created).pk
                    created += 1
            except Exception as error:  # the soak goes on; what failed is told
                failures.append(f"{type(error).__name__}: {error}")
                print(f"  posting failed: {failures[-1]}", flush=True)
        if time.monotonic() - begin >= (minute + 1) * 60:
            minute += 1
            now = counts(run, var)
            if minute > 2 and now["steps"] == last_steps:
                quiet_minutes.append(minute)
            last_steps = now["steps"]
            web = "up" if answers(f"http://127.0.0.1:{args.port}/healthz") else "DOWN"
            print(
                f"minute {minute:3d}: steps resolved {now['steps']:5d}, emails written "
                f"{now['emails']:5d}, orders posted {orders:5d} ({refused} refused), games "
                f"{created}, restarts {now['restarts']}, errors {now['errors']}, web {web}",
                flush=True,
            )
        if run.process.poll() is not None:
            failures.append(f"make run ended by itself (status {run.process.returncode})")
            break
        time.sleep(POST_SECONDS)

    final = counts(run, var)
    status = run.stop() if run.process.poll() is None else run.process.returncode
    lines = run.text().splitlines()
    stopped = sorted(line.split(" INFO ", 1)[1] for line in lines if " INFO stopped: " in line)
    unclean = [line for line in lines if " WARN stopped: " in line]
    errors = [line for line in lines if ERRORS.search(line)]
    print()
    print(f"Soak of make run, {(time.monotonic() - begin) / 60:.1f} minutes, {created} games")
    print(f"  steps resolved:      {final['steps']} ({closed_by()})")
    print(f"  emails written:      {final['emails']}")
    print(f"  orders posted:       {orders} ({refused} refused: the step had moved on)")
    print(f"  processes restarted: {final['restarts']} (expected 0)")
    print(f"  errors seen:         {len(errors)}")
    for line in errors[:20]:
        print(f"    {line}")
    print(f"  minutes with no step resolved (after the second): {quiet_minutes or 'none'}")
    print(f"  posting failures:    {len(failures)}")
    for failure in failures[:20]:
        print(f"    {failure}")
    print(f"  stopped (Ctrl-C):    make exit status {status}; " + "; ".join(stopped))
    for line in unclean:
        print(f"    {line}")
    print(f"  output of make run:  {log}")
    # make itself ends by the SIGINT it was sent, as after a Ctrl-C in a terminal.
    bad = final["restarts"] or errors or failures or quiet_minutes or unclean
    bad = bad or status not in (0, -signal.SIGINT)
    return 1 if bad or not final["steps"] else 0


if __name__ == "__main__":
    sys.exit(main())
