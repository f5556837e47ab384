"""Sessions in the database, read through the cache (SESSION_ENGINE when REDIS_URL is set).

Django's database store, with a copy in the cache that the database can do without:

- A cache that does not answer (Redis stopped) is logged and the database answers alone,
  whatever the call. (Django's ``cached_db`` raises when it fills the cache after reading
  the database and when it deletes a session: a new key at every login, a logout.)
- A session stays in the cache SESSION_CACHE_SECONDS at most, not for the session's whole
  life: what a cache that did not answer missed (a session changed or deleted meanwhile)
  is read from the database again that long after, at the latest.

Built on the store's documented parts only: ``load``, ``save``, ``exists`` and ``delete``
of the database store, its ``model``, ``decode``, ``items`` and ``get_expiry_age``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.sessions.backends import db
from django.core.cache import caches
from django.utils import timezone

log = logging.getLogger(__name__)

KEY_PREFIX = "moderator.sessions."


def _cache_call(what: str, call: Callable[..., Any], *args: Any) -> Any:
    try:
        return call(*args)
    except Exception:
        log.warning("session cache: could not %s; the database answers", what, exc_info=True)
        return None


class SessionStore(db.SessionStore):
    cache_key_prefix = KEY_PREFIX

    @property
    def cache(self) -> Any:
        return caches[settings.SESSION_CACHE_ALIAS]

    def cache_key_of(self, session_key: str) -> str:
        return self.cache_key_prefix + session_key

    def load(self) -> dict[str, Any]:
        key = self.session_key
        if key:
            data = _cache_call("read", self.cache.get, self.cache_key_of(key))
            if data is not None:
                return dict(data)
            row = (
                self.model.objects.filter(session_key=key, expire_date__gt=timezone.now())
                .values_list("session_data", "expire_date")
                .first()
            )
            if row is not None:
                data = self.decode(row[0])
                left = int((row[1] - timezone.now()).total_seconds())
                age = min(left, settings.SESSION_CACHE_SECONDS)
                if age > 0:
                    _cache_call("write", self.cache.set, self.cache_key_of(key), data, age)
                return dict(data)
        # Unknown, expired or no key: the database store says so (and forgets the key).
        return super().load()

    def exists(self, session_key: str | None) -> bool:
        if not session_key:
            return False
        cached = _cache_call("read", self.cache.has_key, self.cache_key_of(session_key))
        return bool(cached) or super().exists(session_key)

    def save(self, must_create: bool = False) -> None:
        super().save(must_create)
        if self.session_key:
            age = min(self.get_expiry_age(), settings.SESSION_CACHE_SECONDS)
            data = dict(self.items())
            _cache_call("write", self.cache.set, self.cache_key_of(self.session_key), data, age)

    def delete(self, session_key: str | None = None) -> None:
        key = session_key or self.session_key
        super().delete(session_key)
        if key:
            _cache_call("delete", self.cache.delete, self.cache_key_of(key))
