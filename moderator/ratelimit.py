"""Who the client is, and how often it may knock.

The counting is ours (fixed windows in the shared cache: Redis in production, so every
web process counts together), the login lock-outs django-axes' (in the database). Both
learn the client's address from ``client_address``, which believes X-Forwarded-For only as
far as ``TRUSTED_PROXY_COUNT`` proxies wrote it.

Each kind of endpoint counts in its own scope (``settings.RATES``): a calendar app
polling its feed never uses up the magic links of the players behind the same address.
A request's counts (an order post counts its seat and its address) go to Redis in one
round trip: a redis-py pipeline to the server of Django's Redis cache, whose key prefix
the counters take. Any other cache (memory, in development) counts through Django's
cache API.
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import logging
import time
import zlib
from typing import Any

import redis
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

# What a request with no usable address counts as (gunicorn on a Unix socket with no
# proxy configured): all such requests share one bucket rather than fail.
UNKNOWN_ADDRESS = "0.0.0.0"


def _address(text: str) -> str | None:
    """The address to count ``text`` under, or None if it is no address. An IPv6 client
    counts by its /64, the block one subscriber is given, so that stepping through the
    addresses of its own block earns it no fresh bucket."""
    try:
        address = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False).network_address)
    return str(address)


def client_address(request: HttpRequest) -> str:
    """The client's address. Each of the ``TRUSTED_PROXY_COUNT`` proxies in front appends
    the address it was reached from to X-Forwarded-For, so the client is the Nth entry from
    the right; whatever stands left of it the client wrote itself and is never believed. A
    request with fewer entries did not pass the proxies (a health check from inside the
    host): its REMOTE_ADDR is the client."""
    remote = _address(request.META.get("REMOTE_ADDR", ""))
    proxies: int = settings.TRUSTED_PROXY_COUNT
    if proxies:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        entries = forwarded.split(",") if forwarded.strip() else []
        if len(entries) >= proxies:
            remote = _address(entries[-proxies]) or remote
    return remote or UNKNOWN_ADDRESS


# --- counting --------------------------------------------------------------------------

# The counters' keys begin with this (after the cache's own prefix and version).
KEY_PREFIX = "rl:"
PERIODS = {"s": 1, "m": 60, "h": 60 * 60, "d": 24 * 60 * 60}
# A window's counter outlives the window by this much: never gone while it is counted.
EXPIRY_MARGIN = 5


def _limit(scope: str) -> tuple[int, int]:
    """(hits allowed, window in seconds) of ``scope``: ``settings.RATES`` reads "20/m".
    Read on every hit, so that a test (or an operator's settings) changes it at once."""
    rates: dict[str, str] = settings.RATES
    count, _, unit = rates[scope].partition("/")
    return int(count), PERIODS[unit]


def _window_end(value: str, period: int, now: int) -> int:
    """When the window ``value`` is counted in at ``now`` ends. Windows are fixed, each
    value's shifted by a fraction of the period of its own, so that the windows of all
    clients do not end at the same moment."""
    end = now - now % period + zlib.crc32(value.encode()) % period
    return end if end >= now else end + period


def seconds_left(scope: str, value: str) -> int:
    """How long the window ``value`` is counted in now in ``scope`` still runs."""
    now = int(time.time())
    return _window_end(value, _limit(scope)[1], now) - now


@functools.cache
def _server(location: str) -> redis.Redis:
    """One client (and its connection pool) per Redis server and process, waiting for Redis
    as the cache does (REDIS_TIMEOUT_SECONDS), not redis-py's 5 s."""
    return redis.Redis.from_url(
        location,
        socket_connect_timeout=settings.REDIS_TIMEOUT_SECONDS,
        socket_timeout=settings.REDIS_TIMEOUT_SECONDS,
    )


def _counts(keys: list[tuple[str, int]]) -> list[int]:
    """Count one hit under each (key, seconds to keep it); the counts, in order."""
    cache = caches["default"]
    if isinstance(cache, RedisCache):
        location = settings.CACHES["default"]["LOCATION"]
        if not isinstance(location, str):
            location = location[0]
        with _server(location.split(",")[0]).pipeline(transaction=False) as pipe:
            for key, seconds in keys:
                pipe.set(key, 0, ex=seconds, nx=True)
                pipe.incr(key)
            replies: list[Any] = pipe.execute()
        return [int(count) for count in replies[1::2]]
    counts = []
    for key, seconds in keys:
        cache.add(key, 0, seconds)
        counts.append(cache.incr(key))
    return counts


def over_limits(hits: list[tuple[str, str]]) -> list[bool]:
    """Count one hit of each (scope, value): a key of ``settings.RATES`` and what is counted
    in it (a client address, a seat); for each, True once its limit is passed in this
    window. All the counts go to the cache in one round trip.

    With the cache away (Redis stopped) every hit is allowed and the outage logged: the
    limits guard 256-bit tokens that cannot be guessed anyway, while refusing everything
    would lock every player out."""
    cache = caches["default"]
    now = int(time.time())
    limits, keys = [], []
    for scope, value in hits:
        allowed, period = _limit(scope)
        end = _window_end(value, period, now)
        limits.append(allowed)
        keys.append((cache.make_key(f"{KEY_PREFIX}{scope}:{value}:{end}"), period + EXPIRY_MARGIN))
    try:
        counts = _counts(keys)
    except (RedisError, OSError):
        for scope, _ in hits:
            log.warning(
                "rate limit %s not counted: the cache does not answer", scope, exc_info=True
            )
        return [False] * len(hits)
    return [count > allowed for count, allowed in zip(counts, limits, strict=True)]


def limited(request: HttpRequest, scope: str) -> bool:
    """Count one hit of this request's client address in ``scope``; True once the scope's
    limit is passed in this window."""
    return over_limits([(scope, client_address(request))])[0]


def order_rate_limited(request: HttpRequest, seat_id: int) -> bool:
    """Count one order post for the seat and for the client address; True when either is
    over its limit (``RATES["order-seat"]``, ``RATES["order-address"]``). Both are counted
    on every post, so a seat's flood also spends its address's allowance."""
    per_seat, per_address = over_limits(
        [("order-seat", f"seat:{seat_id}"), ("order-address", client_address(request))]
    )
    return per_seat or per_address


def lost_links_rate_limited(request: HttpRequest, email: str) -> bool:
    """Count one request for an email address's links, for the address (in any case) and
    for the client address; True when either is over its limit (``RATES["lost-links-email"]``,
    ``RATES["lost-links-address"]``). Known and unknown addresses count alike, so the limit
    tells nobody which addresses play."""
    per_email, per_client = over_limits(
        [
            ("lost-links-email", hashlib.sha256(email.strip().lower().encode()).hexdigest()),
            ("lost-links-address", client_address(request)),
        ]
    )
    return per_email or per_client


def signup_rate_limited(request: HttpRequest, email: str) -> bool:
    """Count one sign-up to an open game, for the email address (in any case) and for the
    client address; True when either is over its limit (``RATES["signup-email"]``,
    ``RATES["signup-address"]``): each sign-up emails the address it names."""
    per_email, per_client = over_limits(
        [
            ("signup-email", hashlib.sha256(email.strip().lower().encode()).hexdigest()),
            ("signup-address", client_address(request)),
        ]
    )
    return per_email or per_client


def signin_rate_limited(request: HttpRequest, email: str) -> bool:
    """Count one request for a sign-in email (games.community.players), for the
    address (in any case)
    and for the client address; True when either is over its limit
    (``RATES["signin-email"]``, ``RATES["signin-address"]``). Every address is counted
    alike, whether it plays here or not."""
    per_email, per_client = over_limits(
        [
            ("signin-email", hashlib.sha256(email.strip().lower().encode()).hexdigest()),
            ("signin-address", client_address(request)),
        ]
    )
    return per_email or per_client


def press_rate_limited(seat_id: int, game_id: int) -> bool:
    """Count one message written by a seat (games.community.press), on the web or by email, for the
    seat and for its game; True when either is over its limit (``RATES["press-seat"]``,
    ``RATES["press-game"]``): each message may email every seat of the game."""
    per_seat, per_game = over_limits(
        [("press-seat", f"seat:{seat_id}"), ("press-game", f"game:{game_id}")]
    )
    return per_seat or per_game


def too_many(request: HttpRequest, kind: str, *, back: str | None = None) -> HttpResponse:
    """The 429 page, worded for ``kind``: "link", "calendar" or "orders" (with ``back``, the
    address of the page the order came from)."""
    return render(request, "games/too_many.html", {"kind": kind, "back": back}, status=429)


def login_locked_out(
    request: HttpRequest, response: HttpResponse | None, credentials: dict[str, Any] | None
) -> HttpResponse:
    """django-axes' answer to a login of a locked (username, address) pair."""
    username = (credentials or {}).get("username") or request.POST.get("username", "")
    context = {
        "username": username,
        "failures": settings.AXES_FAILURE_LIMIT,
        "minutes": int(settings.AXES_COOLOFF_TIME.total_seconds() // 60),
    }
    return render(request, "games/login_locked.html", context, status=429)
