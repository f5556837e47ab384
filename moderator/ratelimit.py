"""Who the client is, and how often it may knock.

The counting is django-ratelimit's (fixed windows in the shared cache: Redis in
production, so every web process counts together); the login lock-outs are django-axes'
(in the database). Both learn the client's address from ``client_address``, which
believes X-Forwarded-For only as far as ``TRUSTED_PROXY_COUNT`` proxies wrote it.

Each kind of endpoint counts in its own scope (``settings.RATES``): a calendar app
polling its feed never uses up the magic links of the players behind the same address.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django_ratelimit.core import is_ratelimited
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


def _rate(group: str, request: HttpRequest) -> str:
    # Read on every hit, so that a test (or an operator's settings) changes it at once.
    rates: dict[str, str] = settings.RATES
    return rates[group]


def limited(
    request: HttpRequest, scope: str, key: str | Callable[[str, HttpRequest], str] = "ip"
) -> bool:
    """Count one hit of this request in ``scope`` (a key of ``settings.RATES``), by client
    address or by ``key``; True once the scope's limit is passed in this window.

    With the cache away (Redis stopped) every hit is allowed and the outage logged: the
    limits guard 256-bit tokens that cannot be guessed anyway, while refusing everything
    would lock every player out. (django-ratelimit's RATELIMIT_FAIL_OPEN covers a cache
    that answers nothing, not one that raises, as Django's Redis cache does.)"""
    try:
        return bool(is_ratelimited(request, group=scope, key=key, rate=_rate, increment=True))
    except (RedisError, OSError):
        log.warning("rate limit %s not counted: the cache does not answer", scope, exc_info=True)
        return False


def order_rate_limited(request: HttpRequest, seat_id: int) -> bool:
    """Count one order post for the seat and for the client address; True when either is
    over its limit (``RATES["order-seat"]``, ``RATES["order-address"]``). Both are counted
    on every post, so a seat's flood also spends its address's allowance."""

    def seat(group: str, request: HttpRequest) -> str:
        return f"seat:{seat_id}"

    per_seat = limited(request, "order-seat", key=seat)
    per_address = limited(request, "order-address")
    return per_seat or per_address


def lost_links_rate_limited(request: HttpRequest, email: str) -> bool:
    """Count one request for an email address's links, for the address (in any case) and
    for the client address; True when either is over its limit (``RATES["lost-links-email"]``,
    ``RATES["lost-links-address"]``). Known and unknown addresses count alike, so the limit
    tells nobody which addresses play."""

    def address(group: str, request: HttpRequest) -> str:
        return "email:" + hashlib.sha256(email.strip().lower().encode()).hexdigest()

    per_email = limited(request, "lost-links-email", key=address)
    per_client = limited(request, "lost-links-address")
    return per_email or per_client


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
