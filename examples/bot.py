#!/usr/bin/env python3
"""A reference bot for the play-by-post moderator's API (docs/api.md).

It plays every seat its tokens open, in any game, until those games are over: it asks
each seat what it owes, asks the API for the legal moves now and what each of the game's
own autopilots would play, and sends that order (else the first legal move). It needs
nothing but Python 3.11: the standard library's urllib.

    python3 examples/bot.py --server https://moderator.example.org --token pbp_... \
        [--token pbp_... ...] [--strategy expected-count] [--every 5] [--once]

A bot says it is one: make its token on your tokens page with "A program plays with it
(a bot)" ticked, in a game whose GM allows bots. Be gentle: it looks every ``--every``
seconds, and backs off as the server's 429 ``Retry-After`` asks.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
from typing import Any

OVER = {"finished", "abandoned"}


class Api:
    def __init__(self, server: str, token: str) -> None:
        self.base = server.rstrip("/") + "/api/v1"
        self.token = token

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base + path,
            data=data,
            method=method,
            headers={
                "Authorization": f"Bearer {self.token}",
                "Content-Type": "application/json",
                "Accept": "application/json",
            },
        )
        while True:
            try:
                with urllib.request.urlopen(request, timeout=30) as answer:
                    return answer.status, json.loads(answer.read() or b"null")
            except urllib.error.HTTPError as error:
                if error.code == 429:
                    time.sleep(int(error.headers.get("Retry-After", "5")))
                    continue
                return error.code, json.loads(error.read() or b"null")


def choose(moves: dict[str, Any], strategy: str | None) -> str | None:
    """The order to send: the chosen autopilot's, else the game's first autopilot's, else
    the first legal move."""
    suggestions = moves.get("autopilots") or []
    for suggestion in suggestions:
        if strategy is None or suggestion["strategy"] == strategy:
            return str(suggestion["order"])
    if suggestions:
        return str(suggestions[0]["order"])
    menu = moves.get("menu") or []
    return str(menu[0]["order"]) if menu else None


def play_once(api: Api, strategy: str | None, say: Any = print) -> tuple[int, int]:
    """One look at every seat of the token: (orders sent, seats still in play)."""
    status, seats = api.call("GET", "/seats")
    if status != 200:
        raise SystemExit(f"the server refused the token: {status} {seats}")
    sent = playing = 0
    for seat in seats:
        if seat["status"] in OVER:
            continue
        playing += 1
        if not seat["owes"]:
            continue
        where = f"/seats/{seat['game']}/{seat['position']}"
        status, moves = api.call("GET", where + "/moves")
        if status != 200 or not moves["owes"]:
            continue
        order = choose(moves, strategy)
        if order is None:
            say(f"{seat['title']}, {seat['name']}: no move to make")
            continue
        status, answer = api.call(
            "POST", where + "/orders", {"order": order, "step": moves["step"]}
        )
        if status == 200:
            sent += 1
            say(f"{seat['title']}, {seat['name']}, step {moves['step']}: {answer['canonical']}")
        else:
            say(f"{seat['title']}, {seat['name']}: refused ({status}): {answer['detail']}")
    return sent, playing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True, help="the service's address")
    parser.add_argument("--token", action="append", required=True, help="a token (repeatable)")
    parser.add_argument("--strategy", help="the autopilot to play (default: the game's first)")
    parser.add_argument("--every", type=float, default=5.0, help="seconds between looks")
    parser.add_argument("--once", action="store_true", help="look once, then stop")
    args = parser.parse_args(argv)
    apis = [Api(args.server, token) for token in args.token]
    while True:
        playing = 0
        for api in apis:
            _, still = play_once(api, args.strategy)
            playing += still
        if args.once or playing == 0:
            return 0
        time.sleep(args.every)


if __name__ == "__main__":
    sys.exit(main())
