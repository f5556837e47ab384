"""Players posting orders through the web form at a player's pace while a benchmark runs
(bench/web.py's browsers), following each redirect as a browser does.

Imported after ``bench.configure`` (it uses Django and the project)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import bench
from bench.choice_orders import TooFewOrders, orders_of
from bench.web import Browser
from games.models import Game, Seat


def sign_in(
    port: int, number: int, game: Game, position: int, host: str = "127.0.0.1"
) -> tuple[Browser, str]:
    """A player opens its magic link as a browser behind the TLS proxy does; returns its
    browser and its page (``host``: the web's address, this machine's by default)."""
    browser = Browser(port, number, https=True, host=host)
    return browser, browser.open_link(Seat.objects.get(game=game, position=position))


@dataclass
class Post:
    email: str
    at: float
    seconds: float
    # The order was taken (the post redirected to the seat's page).
    ok: bool = True


class Posting:
    """Players of ``games`` posting orders through the web form, one post every ``every``
    seconds (each player once, then again from the first), each post followed by the
    GET of the page it redirects to, as a browser does; in a thread of its own. ``host``:
    the web's address (bench/hosts.py's web host), this machine's by default."""

    def __init__(self, port: int, games: list[Game], every: float, host: str = "127.0.0.1") -> None:
        self.every = every
        self.players: list[tuple[Browser, str, dict[str, str], str]] = []
        number = 0
        for game in games:
            for seat in game.seats.order_by("position"):
                number += 1
                try:
                    text = orders_of(game.state, seat.position, 2)[0]
                except TooFewOrders:  # the dice left this seat one order: not a player here
                    continue
                browser, play = sign_in(port, number, game, seat.position, host)
                form = {
                    "csrfmiddlewaretoken": browser.csrf(play),
                    "step": str(game.step_number),
                    "seat": str(seat.position),
                    "entry": "text",
                    "text": text,
                }
                self.players.append((browser, play, form, seat.email))
        self.posts: list[Post] = []
        self.failures: list[str] = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=60)

    def _run(self) -> None:
        turn = 0
        next_at = time.monotonic()
        while not self.stopping.is_set():
            browser, play, form, email = self.players[turn % len(self.players)]
            turn += 1
            at = time.time()
            began = time.perf_counter()
            ok = False
            try:
                answer = browser.request("POST", play, form)
                ok = (answer.status, answer.location) == (302, play)
                if ok:
                    page = browser.request("GET", play)
                    if page.status != 200:
                        self.failures.append(f"GET {play} after the post: {page.status}")
                else:
                    self.failures.append(f"POST {play}: {answer.status} {answer.text[:200]}")
            except OSError as error:  # no answer in the browser's time (a server cut off)
                browser.connection.close()
                self.failures.append(f"POST {play}: {error!r}")
            self.posts.append(Post(email, at, time.perf_counter() - began, ok))
            next_at += self.every
            self.stopping.wait(max(0.0, next_at - time.monotonic()))

    def figures(self) -> dict[str, Any]:
        if not self.posts or self.failures:
            raise RuntimeError(f"{len(self.posts)} posts, failures: {self.failures[:5]}")
        seconds = [post.seconds * 1000 for post in self.posts]
        return {
            "posts": len(seconds),
            "p50_ms": bench.percentile(seconds, 50),
            "p99_ms": bench.percentile(seconds, 99),
            "max_ms": max(seconds),
        }

    def all_received(self, arrivals: list[Any]) -> bool:
        figures = self.receipt_delays(arrivals)
        return bool(figures["received"] == figures["posted"])

    def receipt_delays(self, arrivals: list[Any]) -> dict[str, Any]:
        """From each player's first post to its receipt at the SMTP server (later posts of
        the same step are coalesced into one receipt RECEIPT_WINDOW_SECONDS later)."""
        first: dict[str, float] = {}
        for post in self.posts:
            first.setdefault(post.email, post.at)
        received: dict[str, float] = {}
        for arrival in arrivals:
            if "order received" in arrival.subject and arrival.to in first:
                received.setdefault(arrival.to, arrival.at)
        delays = [received[email] - first[email] for email in first if email in received]
        return {
            "posted": len(first),
            "received": len(delays),
            "median_s": bench.percentile(delays, 50) if delays else None,
            "max_s": max(delays) if delays else None,
        }
