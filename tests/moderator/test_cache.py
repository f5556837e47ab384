"""The cache in production is Django's Redis cache: every web process and thread counts
together in it (rate limits)."""

from __future__ import annotations

import secrets
import threading

import pytest
from django.core.cache import caches

pytestmark = pytest.mark.redis


def test_threads_count_together_in_the_cache() -> None:
    cache = caches["default"]
    key = f"test-cache-{secrets.token_hex(8)}"
    assert cache.add(key, 0, timeout=30)

    def count() -> None:
        for _ in range(50):
            cache.incr(key)

    threads = [threading.Thread(target=count) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert cache.get(key) == 400
    cache.delete(key)
