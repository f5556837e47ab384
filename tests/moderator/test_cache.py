"""The Redis cache (moderator/cache.py) is Django's with one client per connection pool:
every call and every thread shares it, and the cache behaves as Django's does."""

from __future__ import annotations

import secrets
import threading

import pytest
from django.core.cache import caches

from moderator.cache import RedisCache

pytestmark = pytest.mark.redis


def test_every_call_shares_one_client_per_connection_pool() -> None:
    cache = caches["default"]
    assert isinstance(cache, RedisCache)
    client = cache._cache.get_client()
    assert cache._cache.get_client("key", write=True) is client
    key = f"test-cache-{secrets.token_hex(8)}"
    cache.set(key, {"seats": [[1, 0]]}, timeout=30)
    assert cache.get(key) == {"seats": [[1, 0]]}
    assert cache._cache.get_client() is client
    cache.delete(key)
    assert cache.get(key) is None


def test_threads_count_together_through_the_shared_client() -> None:
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
