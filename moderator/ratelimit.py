"""Fixed-window rate limits in the shared cache (Redis in production, so every web
process counts together; local memory in the embedded default)."""

from __future__ import annotations

import logging
import time

from django.core.cache import cache

log = logging.getLogger(__name__)


def allow(scope: str, key: str, *, limit: int, window: int) -> bool:
    """Count one hit of ``key`` in ``scope``; False once ``limit`` hits fell in this window.

    Without the cache (Redis stopped) every hit is allowed and the outage is logged: the
    limits guard 256-bit tokens that cannot be guessed anyway, while refusing every link
    would lock every player out."""
    bucket = int(time.time() // window)
    name = f"ratelimit:{scope}:{key}:{bucket}"
    try:
        if cache.add(name, 1, timeout=window + 1):
            return True
        try:
            count = cache.incr(name)
        except ValueError:  # expired between add and incr
            cache.add(name, 1, timeout=window + 1)
            return True
    except Exception:
        log.warning("rate limit %s not counted: the cache does not answer", scope, exc_info=True)
        return True
    return count <= limit


def client_ip(meta: dict[str, str]) -> str:
    return meta.get("REMOTE_ADDR", "") or "unknown"
