"""Web push in Chromium: the seat's settings page registers the service worker, a click turns
push on (the browser's subscription sent to the service and listed as "This browser"), and
a push delivered to the worker (by the DevTools protocol, standing in for the browser's
push service, which is on the internet) is shown as a notification that names the seat's
news and opens its page."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from django.core.cache import cache
from django.utils import timezone
from pytest_django.fixtures import Settings

from games.management.commands.makevapidkeys import new_keys
from games.models import PushSubscription, Seat
from games.postal import access
from tests.factories import started_game
from tests.integration.every_game import PHONE

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

# The browser's push service is Google's, on the internet: its subscription is made here,
# at that edge, with an endpoint of the test's and the keys a browser would give.
FAKE_SUBSCRIPTION = r"""
(() => {
  const made = {
    endpoint: "https://push.example.org/send/chromium-1",
    toJSON() {
      return {endpoint: this.endpoint, keys: {
        p256dh: "BGoF8JhgGGsoUikXz3yR6Dlx-y4OQ0WD27aRjUlWbew4W6zBEqjxdFZA"
          + "-BXjXiuYDHNYNGRddfrLXMMR128viCo",
        auth: "AAECAwQFBgcICQoLDA0ODw"}};
    },
  };
  let subscribed = localStorage.getItem("subscribed") === "1";
  PushManager.prototype.subscribe = function (options) {
    const key = String.fromCharCode(...new Uint8Array(options.applicationServerKey));
    const url = btoa(key).replace(/\+/g, "-").replace(/\//g, "_");
    localStorage.setItem("key", url.replace(/=+$/, ""));
    subscribed = true;
    localStorage.setItem("subscribed", "1");
    return Promise.resolve(made);
  };
  PushManager.prototype.getSubscription = function () {
    return Promise.resolve(subscribed ? made : null);
  };
})();
"""


@pytest.fixture
def context(module_browser: Browser, module_server: str) -> Iterator[BrowserContext]:
    cache.clear()
    context = module_browser.new_context(viewport=PHONE)
    context.grant_permissions(["notifications"], origin=module_server)
    yield context
    context.close()


def open_settings(page: Page, server: str, seat: Seat) -> None:
    token = access.mint([seat], now=timezone.now())[seat.position]
    page.goto(f"{server}/p/{token}/")
    page.click("button[type=submit]")
    page.wait_for_url(f"{server}/play/{seat.game_id}/{seat.position}/")
    page.goto(f"{server}/play/{seat.game_id}/{seat.position}/settings/#push")


def worker_registration(page: Page) -> str:
    """The id the DevTools protocol knows the page's service worker registration by."""
    session = page.context.new_cdp_session(page)
    found: list[str] = []
    session.on(
        "ServiceWorker.workerRegistrationUpdated",
        lambda event: found.extend(r["registrationId"] for r in event["registrations"]),
    )
    session.send("ServiceWorker.enable")
    for _ in range(50):
        if found:
            break
        page.wait_for_timeout(100)
    assert found, "no service worker registration"
    page.session = session  # type: ignore[attr-defined]
    return found[0]


def notifications(page: Page) -> list[dict[str, Any]]:
    for _ in range(50):
        shown = page.evaluate(
            """navigator.serviceWorker.ready
              .then((r) => r.getNotifications())
              .then((all) => all.map((n) => ({title: n.title, body: n.body, tag: n.tag,
                                              url: n.data.url})))"""
        )
        if shown:
            return list(shown)
        page.wait_for_timeout(100)
    return []


def test_push_turned_on_in_chromium_and_a_push_shown_as_a_notification(
    transactional_db: None, module_server: str, context: BrowserContext, settings: Settings
) -> None:
    keys = new_keys()
    settings.VAPID_PUBLIC_KEY, settings.VAPID_PRIVATE_KEY = keys["public"], keys["private"]
    settings.SITE_URL = module_server
    game = started_game(now=timezone.now(), title="Tuesday Choice")
    bob = Seat.objects.get(game=game, position=1)
    context.add_init_script(FAKE_SUBSCRIPTION)
    page = context.new_page()
    open_settings(page, module_server, bob)

    scope = page.evaluate("navigator.serviceWorker.ready.then((r) => r.active.scriptURL)")
    assert scope == f"{module_server}/sw.js"
    assert page.locator("#push-unsupported").is_hidden()
    with page.expect_navigation():
        page.get_by_role("button", name="Turn on for this seat").click()
    # The browser subscribed with the service's public key.
    assert page.evaluate("localStorage.getItem('key')") == keys["public"]
    assert page.locator(".messages").inner_text() == (
        "Push is on in this browser for bob in Tuesday Choice."
    )
    subscription = PushSubscription.objects.get()
    assert (subscription.endpoint, subscription.seat_id) == (
        "https://push.example.org/send/chromium-1",
        bob.pk,
    )
    line = page.locator("#push-browsers li")
    line.locator(".which", has_text="This browser").wait_for()
    assert line.inner_text().startswith("This browser: this seat, since ")
    assert page.get_by_role("button", name="Turn on for this seat").is_hidden()
    assert page.get_by_role("button", name="Turn on for all my games").is_visible()
    assert page.get_by_role("button", name="Turn off in this browser").is_visible()

    news = {
        "title": "Tuesday Choice: postal turn 2, your order is due Wed 25 Nov 2026 19:00 UTC",
        "body": "Postal turn: rounds 3-4: one line per round, e.g. W5 1+3 3+4",
        "url": f"/play/{game.pk}/1/",
        "tag": f"game-{game.pk}-seat-1",
    }
    registration = worker_registration(page)
    page.session.send(  # type: ignore[attr-defined]
        "ServiceWorker.deliverPushMessage",
        {"origin": module_server, "registrationId": registration, "data": json.dumps(news)},
    )
    assert notifications(page) == [news]

    with page.expect_navigation():
        page.get_by_role("button", name="Turn off in this browser").click()
    assert PushSubscription.objects.count() == 0
    assert page.locator("#push-none").inner_text() == (
        "No browser gets this seat's news by push yet."
    )
