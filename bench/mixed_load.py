"""Benchmark: players at work while a rush of deadlines resolves. bench/deadline_rush.py's
rush of 1,000 games (beat, the two workers and gunicorn of docker/compose.yaml, aiosmtpd),
and at its deadline 50 clients start on gunicorn, each a player's browser behind the TLS
proxy: post an order through the web form, open the page the post redirects to, think for
a second, and again; each client plays for 6 players of its own in turn (each from an
address of its own), each post the player's next of several different legal orders.

    .venv/bin/python bench/mixed_load.py [--quick] [--games 1000] [--clients 50]
        [--think 1.0] [--json var/bench/mixed_load.json]

The clients' games are 5-seat Choice games with early processing on; their players are
seats 0 to 3, so every post is checked for a complete step (early processing) and none
completes one: the post that resolves a step is bench/resolving_post.py's. Reported: the
order posts' p50 and p99 (and the page GETs'), how many of each, and the rush's times as
bench/deadline_rush.py reports them.

Database ``<DATABASE_URL>_bench_rush`` (bench/deadline_rush.py's, created and migrated for
the run), Redis database 10 (flushed). Needs wrk.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
import threading
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import deadline_rush as rush  # configures Django: imported first  # noqa: I001

import bench
from bench.choice_orders import TooFewOrders, orders_of
from bench.web import FORM, LUA_CLOCK, Browser
from games.models import Game

NAME = "mixed_load"
PLAYERS_PER_CLIENT = 6
ORDERS_PER_PLAYER = 6
PLAYED_SEATS = 4  # of 5: the fifth never posts, so no post completes its step

LUA = (
    LUA_CLOCK
    + r"""
local clients = %(clients)s
local think_ms = %(think_ms)d
local threads = {}
local count = 0

function setup(thread)
  count = count + 1
  thread:set("number", count)
  table.insert(threads, thread)
end

function init(args)
  players = clients[number]
  turn = 0
  unexpected = 0
  follow = nil
  kind = nil
  started = 0
  post_times = {}
  get_times = {}
end

function delay()
  if follow == nil and turn > 0 then return think_ms end
  return 0
end

function request()
  started = now_us()
  if follow ~= nil then
    kind = "get"
    local headers = {["Cookie"] = follow.cookie, ["X-Forwarded-For"] = follow.address,
                     ["X-Forwarded-Proto"] = "https"}
    return wrk.format("GET", follow.path, headers)
  end
  turn = turn + 1
  local player = players[(turn - 1) %% #players + 1]
  player.sent = (player.sent or 0) %% #player.bodies + 1
  kind = "post"
  current = player
  local headers = {
    ["Content-Type"] = "%(form)s", ["Origin"] = "%(origin)s",
    ["Cookie"] = player.cookie, ["X-Forwarded-For"] = player.address,
    ["X-Forwarded-Proto"] = "https",
  }
  return wrk.format("POST", player.path, headers, player.bodies[player.sent])
end

function response(status, headers, body)
  local took = now_us() - started
  if kind == "post" then
    table.insert(post_times, took)
    if status == 302 then
      local cookie = current.cookie
      local set = headers["Set-Cookie"] or ""
      local message = string.match(set, "messages=([^;]*)")
      if message ~= nil then cookie = cookie .. "; messages=" .. message end
      follow = {path = current.path, cookie = cookie, address = current.address}
    else
      unexpected = unexpected + 1
    end
  else
    follow = nil
    table.insert(get_times, took)
    if status ~= 200 then unexpected = unexpected + 1 end
  end
end

local function merged(name)
  local all = {}
  for _, thread in ipairs(threads) do
    for _, value in ipairs(thread:get(name)) do table.insert(all, value) end
  end
  return all
end

function done(summary, latency, requests)
  local wrong = 0
  for _, thread in ipairs(threads) do wrong = wrong + thread:get("unexpected") end
  local posts, gets = merged("post_times"), merged("get_times")
  local errors = summary.errors
  io.write(string.format(
    'BENCH {"requests": %%d, "duration_us": %%d, "posts": %%d, "gets": %%d, ' ..
    '"post_p50_us": %%d, "post_p99_us": %%d, "get_p50_us": %%d, "get_p99_us": %%d, ' ..
    '"unexpected": %%d, "socket_errors": %%d}\n',
    summary.requests, summary.duration, #posts, #gets,
    percentile(posts, 50), percentile(posts, 99), percentile(gets, 50), percentile(gets, 99),
    wrong, errors.connect + errors.read + errors.write + errors.timeout))
end
"""
)


class Clients:
    """The 50 clients of the mixed load, as rush.Load wants them."""

    def __init__(self, clients: int, think: float) -> None:
        self.clients = clients
        self.think = think
        self.process: subprocess.Popen[str] | None = None
        self.output = ""

    def make_games(self, start: datetime) -> None:
        players = self.clients * PLAYERS_PER_CLIENT
        # A tenth more: a seat whose dice leave it one order is not a player here.
        rush.make_games(-(-players * 11 // (10 * PLAYED_SEATS)), start, "mixed", early=True)

    def prepare(self, port: int) -> None:
        games = Game.objects.filter(title__startswith="mixed ").order_by("id")
        players: list[str] = []
        for game in games:
            for seat in game.seats.filter(position__lt=PLAYED_SEATS).order_by("position"):
                try:
                    texts = orders_of(game.state, seat.position, ORDERS_PER_PLAYER)
                except TooFewOrders:  # the dice left this seat one order: not a player here
                    continue
                browser = Browser(port, 20000 + len(players), https=True)
                play = browser.open_link(seat)
                form = {
                    "csrfmiddlewaretoken": browser.csrf(play),
                    "step": str(game.step_number),
                    "seat": str(seat.position),
                    "entry": "text",
                }
                bodies = [urlencode(form | {"text": text}) for text in texts]
                browser.connection.close()
                cookie = browser.cookie("csrftoken", "sessionid", *browser.cookies)
                players.append(
                    "{"
                    f"path = {json.dumps(play)}, cookie = {json.dumps(cookie)}, "
                    f"address = {json.dumps(browser.address)}, "
                    f"bodies = {{{', '.join(json.dumps(b) for b in bodies)}}}"
                    "}"
                )
        per = PLAYERS_PER_CLIENT
        if len(players) < per * self.clients:
            raise RuntimeError(f"{len(players)} players for {self.clients} clients of {per}")
        clients = [players[n * per : (n + 1) * per] for n in range(self.clients)]
        self.script = LUA % {
            "clients": "{\n" + ",\n".join("{" + ", ".join(c) + "}" for c in clients) + "\n}",
            "think_ms": round(self.think * 1000),
            "form": FORM,
            "origin": f"https://127.0.0.1:{port}",
        }
        self.port = port

    def start(self) -> None:
        self.file = tempfile.NamedTemporaryFile("w", suffix=".lua")  # noqa: SIM115
        self.file.write(self.script)
        self.file.flush()
        command = [
            "wrk", "--threads", str(self.clients), "--connections", str(self.clients),
            "--duration", "3600s", "--timeout", "30s", "--script", self.file.name,
            f"http://127.0.0.1:{self.port}",
        ]  # fmt: skip
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        self.output = self.process.stdout.read()

    def stop(self) -> dict[str, Any]:
        assert self.process is not None
        self.process.send_signal(signal.SIGINT)  # wrk stops, and runs done()
        self.process.wait(timeout=60)
        self.reader.join(timeout=10)
        self.file.close()
        line = next((x for x in self.output.splitlines() if x.startswith("BENCH ")), None)
        if line is None:
            raise RuntimeError(f"wrk printed no figures:\n{self.output}")
        figures: dict[str, Any] = json.loads(line.removeprefix("BENCH "))
        if not figures["posts"] or figures["unexpected"] or figures["socket_errors"]:
            raise RuntimeError(f"the clients' run is void: {figures}")
        return figures


COLUMNS = [
    bench.Column("games", "rush games"),
    bench.Column("clients", "clients"),
    bench.Column("posts", "posts"),
    bench.Column("posts_per_second", "posts/s", ".1f"),
    bench.Column("post_p50", "post p50 ms", ".0f"),
    bench.Column("post_p99", "post p99 ms", ".0f"),
    bench.Column("get_p50", "page p50 ms", ".0f"),
    bench.Column("get_p99", "page p99 ms", ".0f"),
    bench.Column("first", "first report s", ".1f"),
    bench.Column("last", "last report s", ".1f"),
]


def main() -> None:
    parser = bench.arguments(__doc__.splitlines()[0], NAME)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--think", type=float, default=1.0)
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()
    games, clients = (200, 10) if args.quick else (args.games, args.clients)
    run = rush.rush(games, args.timeout, Clients(clients, args.think))
    load = run["load"]
    seconds = load["duration_us"] / 1e6
    row = {
        "games": games,
        "clients": clients,
        "posts": load["posts"],
        "posts_per_second": load["posts"] / seconds,
        "post_p50": load["post_p50_us"] / 1000,
        "post_p99": load["post_p99_us"] / 1000,
        "get_p50": load["get_p50_us"] / 1000,
        "get_p99": load["get_p99_us"] / 1000,
        "first": run["reports"]["first"],
        "last": run["reports"]["last"],
    }
    bench.report(
        args.json,
        name=NAME,
        title="Mixed load: players during a rush",
        quick=args.quick,
        method=(
            f"bench/deadline_rush.py's rush of {games} games; at its deadline {clients} "
            "clients start (wrk, one connection each), each a player's browser behind the "
            "TLS proxy: post an order (the player's next of several legal ones, a new "
            f"revision each time), GET the page the post redirects to, think {args.think:g} "
            f"s, and again, for {PLAYERS_PER_CLIENT} players of its own in turn. Their games "
            "are 5-seat Choice games with early processing on, seats 0-3 played: every post "
            "is checked for a complete step and none completes one. Stopped when the rush's "
            "last report arrived."
        ),
        parameters={"games": games, "clients": clients, "think_seconds": args.think},
        tables=[bench.Table("Order posts and pages during the rush", COLUMNS, [row])],
        targets=[
            bench.Target(
                f"order posts of {clients} clients during the rush, p99",
                "under 200 ms",
                f"{row['post_p99']:.0f} ms",
                row["post_p99"] < 200,
            ),
            bench.Target(
                f"the rush of {games} games under that load: the last report",
                "within 40 s of the deadline",
                f"{row['last']:.1f} s",
                row["last"] <= 40,
            ),
        ],
    )


if __name__ == "__main__":
    main()
