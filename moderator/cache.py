"""Django's Redis cache, with one client per connection pool.

Django makes a new ``redis.Redis`` for every cache call, and making one (its table of
response callbacks) was most of the time a cache read took: a session read, a rate limit.
A client is a handle on its connection pool, which it takes a connection from for each
command, so one client per pool serves every call and every thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient


class Client(RedisCacheClient):
    # Django's own, which the type stubs do not name.
    _client: Any
    _get_connection_pool: Callable[[bool], Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)
        return client


class RedisCache(DjangoRedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = Client
