"""The push service on this machine (tests.games.notify.test_push.PushService), for every
test of games.notify that pushes."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from django.test import override_settings

from tests.games.notify.test_push import KEYS, PushService


@pytest.fixture
def service() -> Iterator[PushService]:
    server = PushService()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    with override_settings(
        VAPID_PUBLIC_KEY=KEYS["public"],
        VAPID_PRIVATE_KEY=KEYS["private"],
        VAPID_SUBJECT="mailto:operator@games.example.org",
        WEBHOOK_ALLOW_LOCAL_HTTP=True,
    ):
        yield server
    server.shutdown()
    server.server_close()
