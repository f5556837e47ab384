"""Sessions in the database, read through the cache (SESSION_ENGINE when REDIS_URL is set).

Django's ``cached_db`` store, with two differences:

- The cache is a copy the database can do without. A cache that does not answer (Redis
  stopped) is logged and the database answers alone, whatever the call: Django's store
  raises when it fills the cache after reading the database and when it deletes a session
  (a new key at every login, a logout).
- A session stays in the cache SESSION_CACHE_SECONDS at most, not for the session's whole
  life: what a cache that did not answer missed (a session changed or deleted meanwhile)
  is read from the database again that long after, at the latest.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.contrib.sessions.backends import cached_db
from django.contrib.sessions.backends.db import SessionStore as DatabaseStore
from django.core.cache.backends.base import BaseCache

log = logging.getLogger(__name__)


class SessionStore(cached_db.SessionStore):
    # Set and used by Django's stores; the type stubs do not name them.
    _cache: BaseCache
    _session: dict[str, Any]

    def _cache_seconds(self, age: int) -> int:
        return min(age, settings.SESSION_CACHE_SECONDS)

    def _cache_call(self, what: str, call: Any, *args: Any) -> Any:
        try:
            return call(*args)
        except Exception:
            log.warning("session cache: could not %s; the database answers", what, exc_info=True)
            return None

    def load(self) -> dict[str, Any]:
        data: dict[str, Any] | None = self._cache_call("read", self._cache.get, self.cache_key)
        if data is not None:
            return data
        session = self._get_session_from_db()  # type: ignore[attr-defined]  # not in the stubs
        if session is None:
            return {}
        data = self.decode(session.session_data)
        age = self._cache_seconds(self.get_expiry_age(expiry=session.expire_date))
        self._cache_call("write", self._cache.set, self.cache_key, data, age)
        return data

    def exists(self, session_key: str | None) -> bool:
        if not session_key:
            return False
        key = self.cache_key_prefix + session_key
        return bool(self._cache_call("read", self._cache.has_key, key)) or DatabaseStore.exists(
            self, session_key
        )

    def save(self, must_create: bool = False) -> None:
        DatabaseStore.save(self, must_create)
        age = self._cache_seconds(self.get_expiry_age())
        self._cache_call("write", self._cache.set, self.cache_key, self._session, age)

    def delete(self, session_key: str | None = None) -> None:
        DatabaseStore.delete(self, session_key)
        if session_key is None:
            if self.session_key is None:
                return
            session_key = self.session_key
        self._cache_call("delete", self._cache.delete, self.cache_key_prefix + session_key)
