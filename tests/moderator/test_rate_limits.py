"""Rate limits count the real client behind the proxies, each kind of endpoint in its own
scope, and lock out nobody but the one who knocks too often: the client's address from
TRUSTED_PROXY_COUNT, links apart from calendar feeds (which are cached), order posts per
seat and per address, and admin logins locked per (username, address) by django-axes."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.cache.backends.base import BaseCache
from django.test import Client, RequestFactory
from django.urls import reverse
from pytest_django.fixtures import Settings
from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from time_machine import TimeMachineFixture

from games.models import Seat
from games.postal import access
from moderator import ratelimit
from tests.factories import GMFactory, started_game

BASE_DIR = Path(__file__).resolve().parents[2]
PROXY = "10.0.0.1"  # the TLS proxy in front of gunicorn: every request's REMOTE_ADDR
PASSWORD = "a long and good password"


@pytest.fixture(autouse=True)
def frozen(time_machine: TimeMachineFixture, now: datetime) -> None:
    """Every hit of a test falls into one window of the counters."""
    time_machine.move_to(now, tick=False)


@pytest.fixture(autouse=True)
def own_cache(settings: Settings) -> None:
    """Counters and cached feeds of this test alone: a key prefix of its own in the shared
    cache, so that no earlier test or run (whose games had the same ids, so the same feed
    tokens) counts or is cached here."""
    settings.CACHES = {
        "default": {**settings.CACHES["default"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"}
    }


def behind_proxy(client_address: str) -> Client:
    """A browser at ``client_address``, reaching gunicorn through the proxy, which appends
    the address it was reached from to X-Forwarded-For."""
    return Client(REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=client_address)


# --- the client's address -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("proxies", "remote", "forwarded", "client"),
    [
        (0, "203.0.113.7", "198.51.100.1", "203.0.113.7"),  # no proxy: the header is ignored
        (1, PROXY, "198.51.100.1", "198.51.100.1"),
        (1, PROXY, "6.6.6.6, 198.51.100.1", "198.51.100.1"),  # the left one is the client's
        (2, "10.0.0.2", "6.6.6.6, 198.51.100.1,10.0.0.1", "198.51.100.1"),
        (2, "10.0.0.2", "198.51.100.1", "10.0.0.2"),  # did not pass both proxies
        (1, PROXY, "", PROXY),  # a health check from inside the host
        (1, PROXY, "not-an-address", PROXY),
        (0, "2001:db8:1:2:3:4:5:6", "", "2001:db8:1:2::"),  # an IPv6 client is its /64
        (0, "::ffff:198.51.100.9", "", "198.51.100.9"),
        (0, "", "", "0.0.0.0"),  # a Unix socket without a proxy
    ],
)
def test_the_client_address_believes_x_forwarded_for_only_as_far_as_the_proxies_wrote_it(
    settings: Settings, proxies: int, remote: str, forwarded: str, client: str
) -> None:
    settings.TRUSTED_PROXY_COUNT = proxies
    request = RequestFactory().get("/", REMOTE_ADDR=remote, HTTP_X_FORWARDED_FOR=forwarded)
    assert ratelimit.client_address(request) == client


def proxy_count_setting(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """TRUSTED_PROXY_COUNT as the settings read it from ``env`` at start."""
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from django.conf import settings; print(settings.TRUSTED_PROXY_COUNT)",
        ],
        cwd=BASE_DIR,
        env={
            "PATH": os.environ["PATH"],
            "DJANGO_SETTINGS_MODULE": "moderator.settings",
            "VAR_DIR": str(tmp_path),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_trusted_proxy_count_comes_from_the_environment_and_a_bad_value_stops_the_start(
    tmp_path: Path,
) -> None:
    assert proxy_count_setting(tmp_path).stdout == "0\n"
    assert proxy_count_setting(tmp_path, TRUSTED_PROXY_COUNT="2").stdout == "2\n"
    for bad, message in [
        ("-1", "must be at least 0, not -1"),
        ("one", "must be a whole number, not 'one'"),
    ]:
        result = proxy_count_setting(tmp_path, TRUSTED_PROXY_COUNT=bad)
        assert (result.returncode, result.stderr.splitlines()[-1]) == (
            1,
            f"django.core.exceptions.ImproperlyConfigured: TRUSTED_PROXY_COUNT {message}",
        )


@pytest.mark.django_db
def test_behind_one_proxy_each_client_has_its_own_bucket(settings: Settings) -> None:
    settings.TRUSTED_PROXY_COUNT = 1
    settings.RATES = {**settings.RATES, "link": "3/m"}
    first, second = behind_proxy("198.51.100.1"), behind_proxy("198.51.100.2")
    assert [first.get("/p/wrong/").status_code for _ in range(4)] == [404, 404, 404, 429]
    assert second.get("/p/wrong/").status_code == 404


@pytest.mark.django_db
def test_a_spoofed_entry_left_of_the_proxys_earns_no_fresh_bucket(settings: Settings) -> None:
    settings.TRUSTED_PROXY_COUNT = 1
    settings.RATES = {**settings.RATES, "link": "3/m"}
    codes = [
        behind_proxy(f"192.0.2.{n}, 198.51.100.1").get("/p/wrong/").status_code for n in range(4)
    ]
    assert codes == [404, 404, 404, 429]


@pytest.mark.django_db
def test_without_a_trusted_proxy_x_forwarded_for_is_ignored(settings: Settings) -> None:
    settings.TRUSTED_PROXY_COUNT = 0
    settings.RATES = {**settings.RATES, "link": "3/m"}
    codes = [behind_proxy(f"198.51.100.{n}").get("/p/wrong/").status_code for n in range(4)]
    assert codes == [404, 404, 404, 429]


# --- calendar feeds and links ---------------------------------------------------------------


@pytest.mark.django_db
def test_a_calendar_app_polling_a_feed_does_not_block_its_addresss_links(now: datetime) -> None:
    game = started_game(now=now, players=2)
    seat = Seat.objects.get(game=game, position=0)
    feed = access.calendar_url(seat).removeprefix("http://127.0.0.1:8000")
    link = f"/p/{access.mint([seat], now=now)[0]}/"
    office = Client(REMOTE_ADDR="198.51.100.20")
    assert [office.get(feed).status_code for _ in range(100)] == [200] * 100
    response = office.get(link)
    assert (response.status_code, response.templates[0].name) == (200, "games/continue.html")


@pytest.mark.django_db
def test_guessing_feeds_is_limited_in_its_own_scope_and_spends_no_link(now: datetime) -> None:
    game = started_game(now=now, players=2)
    link = f"/p/{access.mint([Seat.objects.get(game=game, position=0)], now=now)[0]}/"
    guesser = Client(REMOTE_ADDR="198.51.100.21")
    codes = [guesser.get(f"/calendar/{n}-0-{'a' * 26}.ics").status_code for n in range(61)]
    assert codes == [404] * 60 + [429]
    response = guesser.get(f"/calendar/gm/1-{'a' * 26}.ics")
    assert (response.status_code, response.context["kind"]) == (429, "calendar")
    assert guesser.get(link).status_code == 200


@pytest.mark.django_db
def test_a_feed_is_served_from_the_cache_without_a_query(
    now: datetime, django_assert_num_queries: Any
) -> None:
    game = started_game(now=now, players=2)
    seat = Seat.objects.get(game=game, position=0)
    urls = [
        access.calendar_url(seat).removeprefix("http://127.0.0.1:8000"),
        access.gm_calendar_url(game.gm).removeprefix("http://127.0.0.1:8000"),
    ]
    client = Client(REMOTE_ADDR="198.51.100.22")
    first = [client.get(url) for url in urls]
    assert [response.status_code for response in first] == [200, 200]
    with django_assert_num_queries(0):
        again = [client.get(url) for url in urls]
    assert [response.content for response in again] == [response.content for response in first]
    assert [response["Cache-Control"] for response in again] == ["private, max-age=300"] * 2


# --- order posts ----------------------------------------------------------------------------


def order_post(address: str) -> Any:
    return RequestFactory().post("/play/1/0/", REMOTE_ADDR=address)


def test_the_limits_are_the_documented_numbers(settings: Settings) -> None:
    assert settings.RATES == {
        "link": "30/m",
        "calendar": "60/m",
        "order-seat": "20/m",
        "order-address": "60/m",
        "lost-links-email": "3/h",
        "lost-links-address": "10/h",
        "signup-email": "5/h",
        "signup-address": "20/h",
        "signin-email": "5/h",
        "signin-address": "20/h",
        "signin-code": "30/h",
        "press-seat": "20/h",
        "press-game": "100/h",
        "command-email": "10/h",
        "push-test": "10/h",
        "email-test": "5/h",
        "webhook-test": "5/h",
        "api-token": "600/m",
    }
    assert (10, timedelta(minutes=15)) == (settings.AXES_FAILURE_LIMIT, settings.AXES_COOLOFF_TIME)
    assert settings.CALENDAR_CACHE_SECONDS == 300


def test_order_posts_are_counted_per_seat_from_every_address(settings: Settings) -> None:
    settings.RATES = {**settings.RATES, "order-seat": "3/m"}
    limited = [
        ratelimit.order_rate_limited(order_post(f"198.51.100.{n}"), seat_id=7) for n in range(4)
    ]
    assert limited == [False, False, False, True]
    assert ratelimit.order_rate_limited(order_post("198.51.100.9"), seat_id=8) is False


def test_order_posts_are_counted_per_address_for_every_seat(settings: Settings) -> None:
    settings.RATES = {**settings.RATES, "order-address": "3/m"}
    limited = [
        ratelimit.order_rate_limited(order_post("198.51.100.30"), seat_id=seat)
        for seat in range(10, 14)
    ]
    assert limited == [False, False, False, True]
    assert ratelimit.order_rate_limited(order_post("198.51.100.31"), seat_id=14) is False


def main_text(response: Any) -> str:
    """The page's <main>, its white space collapsed."""
    text = " ".join(response.content.decode().split())
    return text[text.index("<main>") + len("<main>") : text.index("</main>")].strip()


def test_too_many_orders_answers_a_page_that_says_to_wait_a_minute() -> None:
    response = ratelimit.too_many(order_post("198.51.100.32"), "orders", back="/play/1/0/")
    assert response.status_code == 429
    assert main_text(response) == (
        "<h1>Too many orders: wait a minute</h1> <p>This order was not taken: more orders "
        "came from your seat or your address in the last minute than the moderator accepts. "
        "The orders taken before it still stand.</p> <p>Wait a minute, then send your order "
        'again.</p> <p><a href="/play/1/0/">Back to your game</a></p>'
    )


class DownCache(BaseCache):
    """A cache whose server does not answer, as Django's Redis cache raises then."""

    def __init__(self, location: str, params: dict[str, Any]) -> None:
        super().__init__(params)

    def _down(self, *args: Any, **kwargs: Any) -> Any:
        raise RedisConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    add = get = set = incr = delete = _down


@pytest.mark.django_db
def test_with_the_cache_away_nothing_is_limited_and_feeds_are_built_afresh(
    settings: Settings, now: datetime, caplog: pytest.LogCaptureFixture
) -> None:
    game = started_game(now=now, players=2)
    seat = Seat.objects.get(game=game, position=0)
    settings.CACHES = {"default": {"BACKEND": f"{__name__}.DownCache"}}
    settings.RATES = {name: "1/m" for name in settings.RATES}
    post = order_post("198.51.100.40")
    assert [ratelimit.order_rate_limited(post, seat_id=seat.pk) for _ in range(3)] == [False] * 3
    client = Client(REMOTE_ADDR="198.51.100.40")
    feed = access.calendar_url(seat).removeprefix("http://127.0.0.1:8000")
    assert [client.get(feed).status_code for _ in range(3)] == [200] * 3
    assert [client.get("/p/wrong/").status_code for _ in range(3)] == [404] * 3
    warnings = [r.getMessage() for r in caplog.records if r.name == "moderator.ratelimit"]
    not_counted = "rate limit {} not counted: the cache does not answer".format
    assert warnings == (
        [not_counted("order-seat"), not_counted("order-address")] * 3
        + [not_counted("calendar")] * 3
        + [not_counted("link")] * 3
    )


@pytest.mark.redis
def test_an_order_posts_counts_are_kept_in_redis_for_their_window_and_a_little(
    settings: Settings, now: datetime
) -> None:
    assert ratelimit.order_rate_limited(order_post("198.51.100.41"), seat_id=21) is False
    assert ratelimit.order_rate_limited(order_post("198.51.100.41"), seat_id=21) is False
    server = Redis.from_url(settings.CACHES["default"]["LOCATION"])
    keys = sorted(server.scan_iter(match=f"{cache.make_key(ratelimit.KEY_PREFIX)}*"))
    ends = {
        scope: ratelimit.seconds_left(scope, value) + int(now.timestamp())
        for scope, value in [("order-seat", "seat:21"), ("order-address", "198.51.100.41")]
    }
    assert [key.decode().split(":", 2)[2] for key in keys] == [
        f"rl:order-address:198.51.100.41:{ends['order-address']}",
        f"rl:order-seat:seat:21:{ends['order-seat']}",
    ]
    assert [int(server.get(key) or 0) for key in keys] == [2, 2]
    # The window's minute and five seconds, as Redis counts them down in real time.
    assert all(60 < server.ttl(key) <= 65 for key in keys)


@pytest.mark.django_db
def test_with_redis_away_nothing_is_limited_and_the_outage_is_logged(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nobody listens there
        }
    }
    settings.RATES = {name: "1/m" for name in settings.RATES}
    post = order_post("198.51.100.42")
    assert [ratelimit.order_rate_limited(post, seat_id=22) for _ in range(3)] == [False] * 3
    assert [Client(REMOTE_ADDR="198.51.100.42").get("/p/wrong/").status_code] == [404]
    warnings = [r.getMessage() for r in caplog.records if r.name == "moderator.ratelimit"]
    not_counted = "rate limit {} not counted: the cache does not answer".format
    assert warnings == [not_counted("order-seat"), not_counted("order-address")] * 3 + [
        not_counted("link")
    ]


# --- admin and GM panel logins --------------------------------------------------------------


def gm_named(username: str) -> User:
    gm = GMFactory.create(username=username, is_staff=True)
    gm.set_password(PASSWORD)
    gm.save()
    return gm


def log_in(client: Client, username: str, password: str = PASSWORD) -> Any:
    return client.post(reverse("admin:login"), {"username": username, "password": password})


@pytest.mark.django_db
def test_failed_logins_lock_one_username_at_one_address_and_nobody_else(settings: Settings) -> None:
    settings.TRUSTED_PROXY_COUNT = 1
    gm_named("alice")
    gm_named("bob")
    attacker = behind_proxy("198.51.100.50")
    codes = [log_in(attacker, "alice", "wrong").status_code for _ in range(15)]
    assert codes == [200] * 9 + [429] * 6
    locked = log_in(attacker, "alice")
    assert locked.status_code == 429
    assert main_text(locked) == (
        "<h1>Login paused</h1> <p>10 logins as <strong>alice</strong> from your address "
        "failed, so logging in as alice from here is paused for 15 minutes. Then you can try "
        "again.</p> <p>Other accounts are not affected, nor this account from another "
        "address.</p> <p>Forgotten your password? Ask whoever runs this moderator to set a "
        "new one.</p>"
    )
    # Another GM behind the same address, and alice from her own, log in.
    assert log_in(behind_proxy("198.51.100.50"), "bob").status_code == 302
    assert log_in(behind_proxy("198.51.100.51"), "alice").status_code == 302


@pytest.mark.django_db
def test_a_locked_login_opens_again_after_fifteen_minutes(
    time_machine: TimeMachineFixture, now: datetime
) -> None:
    gm_named("carol")
    client = Client(REMOTE_ADDR="198.51.100.60")
    assert [log_in(client, "carol", "wrong").status_code for _ in range(10)] == [200] * 9 + [429]
    time_machine.move_to(now + timedelta(minutes=14, seconds=59), tick=False)
    assert log_in(client, "carol").status_code == 429
    time_machine.move_to(now + timedelta(minutes=15, seconds=1), tick=False)
    assert log_in(client, "carol").status_code == 302
