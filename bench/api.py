"""Benchmark: what a call of the API costs beside the page it mirrors, and how many calls a
second one token may make.

    .venv/bin/python bench/api.py [--quick] [--steps 60] [--rounds 30] [--json var/bench/api.json]

A classic Liar's Dice game of six players is played through the postal layer to step
``--steps`` (bench/liars_moves.py). The player on turn reads it, in this process through
Django's test client: the seat's page (opened by its magic link, as a browser does) and
its ``view.json``, and the API's reads of the same seat with a token for it (the seat's
view, its legal moves, its events, the list of seats). For each: the queries it makes and
its CPU in this process (the median of ``--rounds``), and its size. The bare view (a
Django view that reads the seat with its game in one query, bench/bare_urls.py), under the
same settings in the same run, is the framework's floor.

One token's calls per second are the service's own limit (``RATES["api-token"]``); the
table says how many such tokens one web process could serve at the cost measured.

Database ``<DATABASE_URL>_bench_api`` (created and migrated on each run), Redis database 12
(flushed).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
for name, value in {
    "SECURE_SSL_REDIRECT": "false",
    "SESSION_COOKIE_SECURE": "false",
    "CSRF_COOKIE_SECURE": "false",
    "ALLOWED_HOSTS": "testserver",
}.items():
    os.environ.setdefault(name, value)

import bench  # noqa: E402

bench.configure("_bench_api", redis_db=12)

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client, override_settings  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench import liars_moves  # noqa: E402
from games import postal  # noqa: E402
from games.community import tokens  # noqa: E402
from games.models import Game, Order, Seat  # noqa: E402
from games.postal import access  # noqa: E402

NAME = "api"
PLAYERS = 6


def play(steps: int) -> Game:
    gm, _ = get_user_model().objects.get_or_create(username="bench-gm")
    began = timezone.now() - timedelta(minutes=steps)
    game = postal.create_game(
        gm=gm,
        engine_key="liars-dice",
        title="API bench",
        players=[postal.Player(f"p{n}", f"p{n}@example.org") for n in range(PLAYERS)],
        options={"profile": "classic", "dice_per_player": 10},
    )
    game = postal.start_game(game.pk, now=began)
    while game.step_number < steps:
        seat, text = liars_moves.next_move(liars_moves.ENGINE.state_from_json(game.state), 20)
        postal.accept_order(
            game_id=game.pk,
            position=seat,
            text=text,
            source=Order.Source.WEB,
            now=began + timedelta(minutes=game.step_number),
            step_number=game.step_number,
        )
        game = Game.objects.get(pk=game.pk)
    return game


def cost(client: Client, path: str, rounds: int, token: str = "") -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    first = client.get(path, headers=headers)
    if first.status_code != 200:
        raise RuntimeError(f"GET {path} answered {first.status_code}")
    with CaptureQueriesContext(connection) as captured:
        client.get(path, headers=headers)
    queries = len(captured)
    taken = []
    for _ in range(rounds):
        began = time.process_time()
        response = client.get(path, headers=headers)
        taken.append(1000 * (time.process_time() - began))
    return {
        "queries": queries,
        "cpu_ms": statistics.median(taken),
        "kb": len(response.content) / 1024,
    }


def main() -> None:
    parser = bench.arguments(__doc__.splitlines()[0], NAME)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    steps, rounds = (12, 5) if args.quick else (args.steps, args.rounds)
    bench.fresh_database()
    bench.flush_redis()
    with override_settings(RATES={**settings.RATES, "api-token": "1000000/m"}):
        game = play(steps)
        seat = Seat.objects.get(
            game=game, position=liars_moves.ENGINE.state_from_json(game.state).turn
        )
        browser = Client(REMOTE_ADDR="10.250.0.1")
        link = access.mint([seat], now=timezone.now())[seat.position]
        if browser.post(f"/p/{link}/").status_code != 302:
            raise RuntimeError("the magic link did not open the seat")
        raw = tokens.mint(
            name="bench",
            scope="seat",
            access="read",
            email=seat.email,
            seat=seat,
            now=timezone.now(),
        )[1]
        program = Client(REMOTE_ADDR="10.250.0.2")
        page = f"/play/{game.pk}/{seat.position}/"
        api = f"/api/v1/seats/{game.pk}/{seat.position}"
        rows = [
            {"call": "seat page (HTML)", **cost(browser, page, rounds)},
            {"call": "seat page view.json", **cost(browser, f"{page}view.json", rounds)},
            {"call": "API seat view", **cost(program, api, rounds, raw)},
            {"call": "API legal moves", **cost(program, f"{api}/moves", rounds, raw)},
            {"call": "API events (all)", **cost(program, f"{api}/events", rounds, raw)},
            {"call": "API my seats", **cost(program, "/api/v1/seats", rounds, raw)},
        ]
        with override_settings(ROOT_URLCONF="bench.bare_urls"):
            rows.append(
                {"call": "bare view (floor)", **cost(Client(), f"/bare/seat/{seat.pk}/", rounds)}
            )
    allowed, _, unit = settings.RATES["api-token"].partition("/")
    per_second = int(allowed) / {"s": 1, "m": 60, "h": 3600}[unit]
    view = next(row for row in rows if row["call"] == "API seat view")
    for row in rows:
        row["tokens_per_core"] = 1000 / row["cpu_ms"] / per_second
    table = bench.Table(
        f"A seat of a {steps}-step game read by its page and by the API (in process)",
        [
            bench.Column("call", "call"),
            bench.Column("queries", "queries"),
            bench.Column("cpu_ms", "CPU ms", ".2f"),
            bench.Column("kb", "kB", ".1f"),
            bench.Column("tokens_per_core", "tokens at the limit per core", ".1f"),
        ],
        rows,
    )
    page_ms = rows[0]["cpu_ms"]
    bench.report(
        args.json,
        name=NAME,
        title="The API beside the page it mirrors",
        quick=args.quick,
        method=__doc__,
        parameters={"steps": steps, "rounds": rounds, "limit": settings.RATES["api-token"]},
        tables=[table],
        targets=[
            bench.Target(
                "one token's calls per second (the limit)",
                "a bot can play",
                f"{per_second:.0f}",
                True,
            ),
            bench.Target(
                "the API's seat view beside the seat page",
                "no dearer than the page",
                f"{view['cpu_ms']:.2f} ms against {page_ms:.2f} ms",
                view["cpu_ms"] <= page_ms,
            ),
        ],
    )


if __name__ == "__main__":
    main()
