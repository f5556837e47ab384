"""Real parts for end-to-end tests: an SMTP server (aiosmtpd) and the distribution's
Chromium driven by Playwright. Either is missing: the test skips, or fails under
REQUIRE_SERVICES=1."""

from __future__ import annotations

import shutil
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import TYPE_CHECKING, Any

import pytest
from pytest_django.fixtures import Settings

from tests.services import missing

if TYPE_CHECKING:
    from aiosmtpd.smtp import Envelope
    from playwright.sync_api import Browser, Page

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Inbox:
    """What the SMTP server received, in order."""

    messages: list[EmailMessage] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    port: int = 0

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = message_from_bytes(envelope.original_content, policy=policy.default)
        with self.lock:
            self.messages.append(message)
        return "250 OK"

    def to(self, address: str) -> list[EmailMessage]:
        with self.lock:
            return [m for m in self.messages if m["To"] == address]


def data_of(envelope: Envelope) -> bytes:
    """The message a client sent, as the SMTP server received it: aiosmtpd keeps it as
    bytes (``content`` is text only with ``decode_data``, which no server here sets)."""
    assert isinstance(envelope.content, bytes)
    return envelope.content


def text_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content())


@contextmanager
def serving_smtp(handler: Any, settings: Settings) -> Iterator[int]:
    """aiosmtpd with ``handler`` on a free local port, which the outbox sends to through
    moderator.mail.smtp.EmailBackend (``settings``: pytest-django's fixture)."""
    from aiosmtpd.controller import Controller

    port = free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    settings.EMAIL_BACKEND = "moderator.mail.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", port, 10
    try:
        yield port
    finally:
        controller.stop()


@pytest.fixture
def smtp_server() -> Iterator[Inbox]:
    from aiosmtpd.controller import Controller

    inbox = Inbox(port=free_port())
    controller = Controller(inbox, hostname="127.0.0.1", port=inbox.port)
    controller.start()
    try:
        yield inbox
    finally:
        controller.stop()


@pytest.fixture
def web_server(transactional_db: None) -> Iterator[str]:
    """Django served on a free local port for this test only (pytest-django's live_server
    lives for the whole session and keeps a database connection past its teardown). Static
    files are served from the apps' folders, as StaticLiveServerTestCase does: the tests
    run no collectstatic."""
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.test.testcases import LiveServerThread

    thread = LiveServerThread("localhost", StaticFilesHandler, port=0)
    thread.daemon = True
    thread.start()
    thread.is_ready.wait()
    if thread.error:
        raise thread.error
    try:
        yield f"http://localhost:{thread.port}"
    finally:
        thread.terminate()


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> Iterator[Browser]:
    path = chromium_path()
    if path is None:
        missing("Chromium (install the distribution's chromium package)")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the Django calls the test
    # makes between browser steps are ordinary blocking calls.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=path, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            launched.close()
            # ORM calls made while Playwright's loop runs get connections of their own
            # (asgiref's context-local storage); close them before the database goes.
            from django.db import connections

            connections.close_all()


@pytest.fixture(scope="module")
def module_server(django_db_setup: None, django_db_blocker: Any) -> Iterator[str]:
    """Django served on a free local port for every test of one module (each test still
    asks for ``transactional_db``): the browser tests of a module share it rather than
    start a server each. Stopped, and its database connections closed, after the module."""
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.test.testcases import LiveServerThread

    with django_db_blocker.unblock():
        thread = LiveServerThread("localhost", StaticFilesHandler, port=0)
        thread.daemon = True
        thread.start()
        thread.is_ready.wait()
    if thread.error:
        raise thread.error
    try:
        yield f"http://localhost:{thread.port}"
    finally:
        thread.terminate()


@pytest.fixture(scope="module")
def module_browser() -> Iterator[Browser]:
    """One Chromium for every test of a module (``browser``, for one module)."""
    path = chromium_path()
    if path is None:
        missing("Chromium (install the distribution's chromium package)")
    from playwright.sync_api import sync_playwright

    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        launched = playwright.chromium.launch(
            executable_path=path, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            launched.close()
            from django.db import connections

            connections.close_all()


# The impacts of axe-core's findings that fail a page (docs/accessibility.md).
FAILING_IMPACTS = ("serious", "critical")


def axe_violations(page: Page, impacts: tuple[str, ...] = FAILING_IMPACTS) -> list[str]:
    """axe-core's violations on the page as it stands, of the given impacts, one readable
    line each (rule, impact, what it means, the elements): [] is a page that passes. Every
    rule axe runs by default (WCAG 2.0-2.2 A and AA, and its best practices), and the
    size of touch targets (WCAG 2.2 AA), which axe leaves off by default."""
    from axe_playwright_python.sync_playwright import Axe

    # A page reached by a form or a link may still be loading its stylesheet: the sizes of
    # its touch targets are the styled ones only once it has loaded.
    page.wait_for_load_state("load")
    options = {"resultTypes": ["violations"], "rules": {"target-size": {"enabled": True}}}
    found = Axe().run(page, options=options).response["violations"]
    return [
        f"{page.url}: {violation['id']} ({violation['impact']}) {violation['help']}: "
        + "; ".join(" ".join(node["target"]) for node in violation["nodes"])
        for violation in found
        if violation["impact"] in impacts
    ]


def duplicate_ids(page: Page) -> list[str]:
    """Every id the page gives to more than one element, one line each: axe-core no longer
    checks this (its duplicate-id rules are retired), and a label or an aria reference to a
    repeated id finds the wrong element."""
    repeated: list[str] = page.evaluate(
        """() => {
            const seen = new Map();
            for (const e of document.querySelectorAll('[id]')) {
                seen.set(e.id, (seen.get(e.id) || 0) + 1);
            }
            return [...seen].filter(([, n]) => n > 1).map(([id, n]) => `${id} (${n} times)`);
        }"""
    )
    return [f"{page.url}: duplicate id {line}" for line in repeated]
