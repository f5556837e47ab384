"""Benchmark: order posts that resolve a step, through the web form served by gunicorn, each
followed by the GET of the page it redirects to, as a browser follows it.

    .venv/bin/python bench/resolving_post.py [--quick] [--clients 10] [--seconds 15]
        [--workers 3] [--json var/bench/resolving_post.json]

Two kinds of post, each measured on its own:

- ``choice``: 8-seat Choice games with early processing on, seven of whose seats have
  sent their order (through the postal layer); every post is the last missing order of a
  game, from its eighth player, so every post resolves the step: the engine, eight
  reports and their outbox rows, the next step. Each game is posted to once.
- ``liars``: 2-player classic Liar's Dice games; every post is a bid of the player on
  turn (bench/liars_moves.py), which takes effect at once and opens the next player's
  step with its reports. Each client bids in turn in games of its own.

Every player signs in through a magic link in a browser of its own (bench/web.py), from
an address of its own (X-Forwarded-For), so the product's rate limits apply as to real
players. wrk, one thread and one connection per client: a post, then (on its 302) the GET
of the seat page with the message cookie the post set, as a browser does; the post, the
GET and the pair are timed apart. After each run the database is checked: every post
answered 302 must have resolved its step. In process (Django's test client): CPU and
queries per resolving post.

Needs wrk (``apt-get install wrk``). Database ``<DATABASE_URL>_bench_resolving`` (created
and migrated on each run), Redis database 14 (flushed).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# The in-process measurement speaks plain HTTP to a production-like configuration.
for name, value in {
    "SECURE_SSL_REDIRECT": "false",
    "SESSION_COOKIE_SECURE": "false",
    "CSRF_COOKIE_SECURE": "false",
    "ALLOWED_HOSTS": "testserver",
}.items():
    os.environ.setdefault(name, value)

import bench  # noqa: E402

bench.configure("_bench_resolving", redis_db=14)

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models import Sum  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench import liars_moves  # noqa: E402
from bench.web import FORM, LUA_CLOCK, Browser, gunicorn, production_workers, run_wrk  # noqa: E402
from games import postal  # noqa: E402
from games.engines.registry import get  # noqa: E402
from games.models import Game, Order, Seat  # noqa: E402
from games.postal import access  # noqa: E402
from moderator.mail import queueing  # noqa: E402

NAME = "resolving_post"
CHOICE_SEATS = 8
LIARS_GAMES = 20  # per client: each seat then posts well under its limit per minute
# What a client is supplied for, per second: more than a client can post (a Liar's Dice
# bid took 8 a second once the seat page got cheaper).
POSTS_PER_SECOND = 14

# One thread per client: its posts in order, each followed by the GET its 302 leads to.
LUA = (
    LUA_CLOCK
    + r"""
local clients = %(clients)s
local threads = {}
local count = 0

function setup(thread)
  count = count + 1
  thread:set("number", count)
  table.insert(threads, thread)
end

function init(args)
  posts = clients[number]
  sent = 0
  unexpected = 0
  exhausted = 0
  follow = nil
  kind = nil
  started = 0
  post_us = 0
  post_times = {}
  get_times = {}
  pair_times = {}
end

function request()
  started = now_us()
  if follow ~= nil then
    kind = "get"
    local headers = {["Cookie"] = follow.cookie, ["X-Forwarded-For"] = follow.address}
    return wrk.format("GET", follow.path, headers)
  end
  if sent == #posts then
    -- Nothing left to post: counted, and the run is void (more games are needed).
    kind = "none"
    exhausted = exhausted + 1
    return wrk.format("GET", "/healthz")
  end
  sent = sent + 1
  local post = posts[sent]
  kind = "post"
  local headers = {
    ["Content-Type"] = "%(form)s", ["Origin"] = "%(origin)s",
    ["Cookie"] = post.cookie, ["X-Forwarded-For"] = post.address,
  }
  return wrk.format("POST", post.path, headers, post.body)
end

function response(status, headers, body)
  local took = now_us() - started
  if kind == "post" then
    post_us = took
    table.insert(post_times, took)
    if status == 302 then
      local post = posts[sent]
      local cookie = post.cookie
      local set = headers["Set-Cookie"] or ""
      local message = string.match(set, "messages=([^;]*)")
      if message ~= nil then cookie = cookie .. "; messages=" .. message end
      follow = {path = post.path, cookie = cookie, address = post.address}
    else
      unexpected = unexpected + 1
    end
  elseif kind == "get" then
    follow = nil
    table.insert(get_times, took)
    table.insert(pair_times, post_us + took)
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
  local wrong, empty, posted = 0, 0, 0
  for _, thread in ipairs(threads) do
    wrong = wrong + thread:get("unexpected")
    empty = empty + thread:get("exhausted")
  end
  local posts_all, gets_all, pairs_all = merged("post_times"), merged("get_times"),
    merged("pair_times")
  local errors = summary.errors
  io.write(string.format(
    'BENCH {"requests": %%d, "duration_us": %%d, "posts": %%d, "gets": %%d, ' ..
    '"post_p50_us": %%d, "post_p99_us": %%d, "get_p50_us": %%d, "get_p99_us": %%d, ' ..
    '"pair_p50_us": %%d, "pair_p99_us": %%d, "unexpected": %%d, "exhausted": %%d, ' ..
    '"socket_errors": %%d}\n',
    summary.requests, summary.duration, #posts_all, #gets_all,
    percentile(posts_all, 50), percentile(posts_all, 99),
    percentile(gets_all, 50), percentile(gets_all, 99),
    percentile(pairs_all, 50), percentile(pairs_all, 99),
    wrong, empty, errors.connect + errors.read + errors.write + errors.timeout))
end
"""
)


@dataclass(frozen=True)
class Post:
    """One post as wrk sends it: the seat page, the browser's cookie and address, the form."""

    path: str
    cookie: str
    address: str
    body: str

    def lua(self) -> str:
        return (
            f"{{path = {json.dumps(self.path)}, cookie = {json.dumps(self.cookie)}, "
            f"address = {json.dumps(self.address)}, body = {json.dumps(self.body)}}}"
        )


class Addresses:
    """A new browser number for every player: each has an address of its own."""

    def __init__(self) -> None:
        self.count = 0

    def next(self) -> int:
        self.count += 1
        return self.count


def gm() -> Any:
    return get_user_model().objects.get_or_create(username="bench-gm")[0]


def choice_games(count: int) -> list[Game]:
    """``count`` running 8-seat Choice games, early processing on, whose seats 0-6 have
    sent their orders (their no-moves defaults, as orders of their own)."""
    engine = get("choice")
    names = [f"p{n}" for n in range(CHOICE_SEATS)]
    games = []
    for number in range(count):
        game = postal.create_game(
            gm=gm(),
            engine_key="choice",
            title=f"resolve {number}",
            players=[postal.Player(name, f"{name}@example.org") for name in names],
        )
        game = postal.start_game(game.pk, now=timezone.now())
        state = engine.state_from_json(game.state)
        for position in range(CHOICE_SEATS - 1):
            postal.accept_order(
                game_id=game.pk,
                position=position,
                text=engine.canonical(state, position, engine.default(state, position)),
                source=Order.Source.WEB,
                now=timezone.now(),
                step_number=1,
            )
        games.append(game)
    return games


def last_order(game: Game) -> str:
    engine = get("choice")
    state = engine.state_from_json(game.state)
    position = CHOICE_SEATS - 1
    return engine.canonical(state, position, engine.default(state, position))


def form(csrf: str, step: int, position: int, text: str) -> dict[str, str]:
    fields = {"step": str(step), "seat": str(position), "entry": "text", "text": text}
    return {"csrfmiddlewaretoken": csrf} | fields


def choice_posts(port: int, games: list[Game], addresses: Addresses) -> list[Post]:
    """The last missing order of each game, from its eighth player's browser."""
    posts = []
    for game in games:
        seat = Seat.objects.get(game=game, position=CHOICE_SEATS - 1)
        browser = Browser(port, addresses.next())
        path = browser.open_link(seat)
        browser.connection.close()
        body = form(browser.csrf_token(), 1, seat.position, last_order(game))
        posts.append(Post(path, browser.cookie(), browser.address, urlencode(body)))
    return posts


def liars_games(count: int) -> list[Game]:
    games = []
    for number in range(count):
        game = postal.create_game(
            gm=gm(),
            engine_key="liars-dice",
            title=f"bids {number}",
            players=[postal.Player(name, f"{name}@example.org") for name in ("ann", "bob")],
            options={"profile": "classic"},
        )
        games.append(postal.start_game(game.pk, now=timezone.now()))
    return games


def liars_posts(port: int, games: list[Game], bids: int, addresses: Addresses) -> list[Post]:
    """``bids`` bids in each game, the games taken in turn, each bid from the browser of
    the player on turn, written for the step it opens on."""
    per_game = []
    for game in games:
        browsers = {}
        for seat in Seat.objects.filter(game=game).order_by("position"):
            browser = Browser(port, addresses.next())
            browsers[seat.position] = (browser, browser.open_link(seat))
            browser.connection.close()
        series = liars_moves.bid_series(liars_moves.ENGINE.state_from_json(game.state), bids)
        posts = []
        for number, (position, text) in enumerate(series):
            browser, path = browsers[position]
            body = form(browser.csrf_token(), game.step_number + number, position, text)
            posts.append(Post(path, browser.cookie(), browser.address, urlencode(body)))
        per_game.append(posts)
    return [posts[n] for n in range(bids) for posts in per_game]


def resolved(kind: str, games: list[Game]) -> int:
    """Steps resolved in ``games`` since they were set up (each has one step open)."""
    if kind == "choice":
        return Game.objects.filter(pk__in=[g.pk for g in games], step_number__gt=1).count()
    played = Game.objects.filter(pk__in=[g.pk for g in games])
    now = played.aggregate(n=Sum("step_number"))
    # A move that ends the game resolves its step and opens none.
    ended = played.filter(status=Game.Status.FINISHED).count()
    return int(now["n"] or 0) - sum(game.step_number for game in games) + ended


def run(
    kind: str, port: int, clients: list[list[Post]], games: list[Game], seconds: float
) -> dict[str, Any]:
    script = LUA % {
        "clients": "{"
        + ",\n".join("{" + ", ".join(p.lua() for p in c) + "}" for c in clients)
        + "}",
        "form": FORM,
        "origin": f"http://127.0.0.1:{port}",
    }
    figures = run_wrk(port, script, len(clients), seconds)
    if figures["exhausted"]:
        raise RuntimeError(f"{kind}: the clients ran out of posts: set up more games")
    if figures["posts"] == 0:
        raise RuntimeError(f"{kind}: no post was answered")
    done = resolved(kind, games)
    answered = figures["posts"] - figures["unexpected"]
    if figures["unexpected"] or done == 0:
        raise RuntimeError(
            f"{kind}: {figures['unexpected']} answers not as a browser expects, {done} steps "
            f"resolved for {figures['posts']} posts"
        )
    if done < answered:
        # Reported, not hidden: posts answered as accepted that resolved no step.
        print(f"{kind}: {answered - done} of {answered} posts answered 302 resolved no step")
    figures["resolved"] = done
    figures["answered_without_a_step"] = max(answered - done, 0)
    return figures


def dealt(posts: list[Post], clients: int) -> list[list[Post]]:
    return [posts[n::clients] for n in range(clients)]


def in_process(kind: str, count: int) -> dict[str, float]:
    """CPU of this process and queries per resolving post through Django's test client (the
    post only, not the GET), over ``count`` posts."""
    clients: list[tuple[Client, str, dict[str, str]]] = []
    if kind == "choice":
        for number, game in enumerate(choice_games(count)):
            client = Client(REMOTE_ADDR=f"10.251.{number // 256}.{number % 256}")
            seat = Seat.objects.get(game=game, position=CHOICE_SEATS - 1)
            token = access.mint([seat], now=timezone.now())[seat.position]
            client.post(f"/p/{token}/")
            fields = form("", 1, seat.position, last_order(game))
            clients.append((client, f"/play/{game.pk}/{seat.position}/", fields))
    else:
        # A few bids in each of several games, so that no seat passes its limit of posts.
        bids = 5
        for number, game in enumerate(liars_games(-(-count // bids))):
            by_seat = {}
            for seat in Seat.objects.filter(game=game):
                client = Client(REMOTE_ADDR=f"10.252.{number % 256}.{seat.position}")
                token = access.mint([seat], now=timezone.now())[seat.position]
                client.post(f"/p/{token}/")
                by_seat[seat.position] = (client, f"/play/{game.pk}/{seat.position}/")
            state = liars_moves.ENGINE.state_from_json(game.state)
            for step, (position, text) in enumerate(liars_moves.bid_series(state, bids)):
                fields = form("", game.step_number + step, position, text)
                clients.append((*by_seat[position], fields))
        clients = clients[:count]
    queries = 0
    began = time.process_time()
    for client, path, fields in clients:
        with CaptureQueriesContext(connection) as captured:
            if client.post(path, fields).status_code != 302:
                raise RuntimeError(f"{kind}: a resolving post was not answered 302")
        queries += len(captured)
    cpu = time.process_time() - began
    return {"cpu_ms": 1000 * cpu / count, "queries": queries / count}


COLUMNS = [
    bench.Column("kind", "post"),
    bench.Column("clients", "clients"),
    bench.Column("posts", "posts"),
    bench.Column("rps", "posts/s", ".1f"),
    bench.Column("post_p50_ms", "post p50 ms", ".1f"),
    bench.Column("post_p99_ms", "post p99 ms", ".1f"),
    bench.Column("get_p99_ms", "GET p99 ms", ".1f"),
    bench.Column("pair_p99_ms", "post+GET p99 ms", ".1f"),
    bench.Column("without_a_step", "302s resolving no step"),
    bench.Column("cpu_ms", "CPU ms/post in process", ".1f"),
    bench.Column("queries", "queries/post", ".1f"),
    bench.Column("machine_cpu_pct", "machine CPU %", ".0f"),
]
KINDS = {
    "choice": "the last order of an 8-seat Choice step (early processing)",
    "liars": "a Liar's Dice bid that opens the next player's step",
}


def main() -> None:
    parser = bench.arguments(__doc__.splitlines()[0], NAME)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=15, help="measured time per kind")
    parser.add_argument("--workers", type=int, default=None, help="default: compose.yaml's")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is needed: apt-get install wrk")
    workers = args.workers or production_workers()
    seconds, warmup, processed = (4.0, 1.0, 20) if args.quick else (args.seconds, 3.0, 100)
    clients = args.clients
    per_client = {"run": int(seconds * POSTS_PER_SECOND), "warmup": int(warmup * POSTS_PER_SECOND)}

    bench.fresh_database()
    bench.flush_redis()
    queued = queueing.enqueue
    queueing.enqueue = bench.enqueue_nothing  # the set-up's reports are not what is measured
    began = time.perf_counter()
    try:
        choice = {part: choice_games(clients * n) for part, n in per_client.items()}
        liars = {part: liars_games(clients * LIARS_GAMES) for part in per_client}
    finally:
        queueing.enqueue = queued
    print(f"Games set up in {time.perf_counter() - began:.0f} s")
    connection.close()
    rows = []
    port = bench.free_port()
    with bench.Processes() as processes:
        gunicorn(processes, "gunicorn-resolving", "moderator.wsgi", port, workers)
        addresses = Addresses()
        for kind in KINDS:
            taken: dict[str, dict[str, Any]] = {}
            for part, n in per_client.items():
                if kind == "choice":
                    games = choice[part]
                    posts = choice_posts(port, games, addresses)
                else:
                    games = liars[part]
                    bids = -(-n // LIARS_GAMES)
                    posts = liars_posts(port, games, bids, addresses)
                length = warmup if part == "warmup" else seconds
                taken[part] = run(kind, port, dealt(posts, clients), games, length)
            figures = taken["run"]
            rows.append(
                {
                    "kind": kind,
                    "clients": clients,
                    "posts": int(figures["posts"]),
                    "rps": figures["posts"] / (figures["duration_us"] / 1e6),
                    "post_p50_ms": figures["post_p50_us"] / 1000,
                    "post_p99_ms": figures["post_p99_us"] / 1000,
                    "get_p99_ms": figures["get_p99_us"] / 1000,
                    "pair_p50_ms": figures["pair_p50_us"] / 1000,
                    "pair_p99_ms": figures["pair_p99_us"] / 1000,
                    "machine_cpu_pct": figures["machine_cpu_pct"],
                    "resolved": figures["resolved"],
                    "without_a_step": figures["answered_without_a_step"],
                }
            )
            print(f"{kind}: {rows[-1]['rps']:.1f} posts/s, p99 {rows[-1]['post_p99_ms']:.0f} ms")
    bench.flush_redis()  # the receipts' and reports' tasks that no worker takes
    for row in rows:
        row |= in_process(row["kind"], processed)
    targets = [
        bench.Target(
            f"p99 of {KINDS[row['kind']]}, at {clients} clients",
            "under 300 ms",
            f"{row['post_p99_ms']:.1f} ms (with the GET that follows: {row['pair_p99_ms']:.1f})",
            row["post_p99_ms"] < 300,
        )
        for row in rows
    ]
    bench.report(
        args.json,
        name=NAME,
        title="Order posts that resolve a step (gunicorn)",
        quick=args.quick,
        method=(
            f"gunicorn with {workers} sync workers as in docker/compose.yaml, DEBUG off, "
            "TRUSTED_PROXY_COUNT=1; every player signed in through its magic link from an "
            f"address of its own. wrk with {clients} clients, one thread and one connection "
            f"each, {seconds:.0f} s per kind after {warmup:.0f} s of warm-up on games of its "
            "own. Choice: 8-seat games with early processing on and seven orders in; each "
            "post is the eighth, so it resolves the step (engine, eight reports in the "
            "outbox, the next step). Liar's Dice: 2-player classic games, each post the bid "
            "of the player on turn (the smallest raise), which opens the other's step with "
            f"its reports; a client bids in {LIARS_GAMES} games in turn. Each post is "
            "followed, on its 302, by the GET of the seat page with the message cookie, as "
            "a browser does; the post, the GET and the pair are timed apart (p99 of all "
            "posts of the run). The database is checked after each run: every post "
            "answered 302 resolved its step. In process (Django's test client, the post "
            f"only): CPU of the process and queries per post, over {processed} posts."
        ),
        parameters={
            "clients": clients,
            "seconds": seconds,
            "warmup": warmup,
            "workers": workers,
            "choice_seats": CHOICE_SEATS,
            "liars_games_per_client": LIARS_GAMES,
        },
        tables=[bench.Table("Resolving posts", COLUMNS, rows)],
        targets=targets,
    )


if __name__ == "__main__":
    main()
