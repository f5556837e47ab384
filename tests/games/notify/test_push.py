"""Web push (games.notify.push): a browser subscribes on a seat's settings page, and each new
report of the seat reaches a push service on this machine that checks the VAPID signature
and decrypts the payload with the browser's keys, as a real push service and browser do."""

from __future__ import annotations

import base64
import json
import secrets
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import http_ece
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from django.core.management import call_command
from django.test import Client, override_settings
from py_vapid import Vapid02

from games.engines.choice.rules import ChoiceEngine
from games.management.commands.makevapidkeys import new_keys
from games.models import Game, PushDelivery, PushSubscription, Seat
from games.notify import push
from games.postal import access
from moderator.mail.models import OutboundEmail
from tests.factories import started_game
from tests.games.playing import play_choice_step

pytestmark = pytest.mark.django_db

CHOICE = ChoiceEngine()
KEYS = new_keys()


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class PushService(ThreadingHTTPServer):
    """A push service on this machine: each browser an endpoint path with its keys; a
    post is taken (201) only with a valid VAPID signature of the service's public key, and
    its payload decrypted. Paths under /gone/ and /missing/ answer 410 and 404, /busy/ 503."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        self.browsers: dict[str, tuple[ec.EllipticCurvePrivateKey, bytes]] = {}
        self.received: list[dict[str, Any]] = []

    def browser(self, path: str) -> dict[str, Any]:
        """A new browser's subscription, as the Push API's toJSON() gives it."""
        key = ec.generate_private_key(ec.SECP256R1())
        auth = secrets.token_bytes(16)
        self.browsers[path] = (key, auth)
        public = key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {"endpoint": self.url + path, "keys": {"p256dh": b64(public), "auth": b64(auth)}}


class Handler(BaseHTTPRequestHandler):
    server: PushService

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        for prefix, status in (("/gone/", 410), ("/missing/", 404), ("/busy/", 503)):
            if self.path.startswith(prefix):
                return self.answer(status)
        authorization = self.headers["Authorization"]
        if not authorization or not Vapid02.verify(authorization):
            return self.answer(401)
        token = authorization.split("t=", 1)[1].split(",", 1)[0]
        claims = json.loads(unb64(token.split(".")[1]))
        signer = authorization.split("k=", 1)[1]
        key, auth = self.server.browsers[self.path]
        plain = http_ece.decrypt(body, private_key=key, auth_secret=auth, version="aes128gcm")
        self.server.received.append(
            {
                "path": self.path,
                "claims": claims,
                "signer": signer,
                "headers": {name: self.headers[name] for name in ("Content-Encoding", "TTL")},
                "payload": json.loads(plain),
            }
        )
        return self.answer(201)

    def answer(self, status: int) -> None:
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()


def browser_of(game: Game, position: int, now: datetime) -> Client:
    """A browser that opened the seat's link."""
    client = Client(REMOTE_ADDR=f"10.{secrets.randbelow(256)}.{secrets.randbelow(256)}.9")
    seat = Seat.objects.get(game=game, position=position)
    token = access.mint([seat], now=now)[position]
    assert client.post(f"/p/{token}/").status_code == 302
    return client


def turn_on(client: Client, game: Game, position: int, data: Any, every_seat: bool = False) -> Any:
    return client.post(
        f"/play/{game.pk}/{position}/push/on/",
        json.dumps({"subscription": data, "every_seat": every_seat}),
        content_type="application/json",
    )


def send_all(now: datetime) -> dict[int, str]:
    ids = list(PushDelivery.objects.order_by("id").values_list("id", flat=True))
    return push.send_batch(ids, now=now)


def test_each_new_report_reaches_the_browser_signed_and_encrypted(
    service: PushService, now: datetime
) -> None:
    game = started_game(now=now, early_processing=False)
    bob = browser_of(game, 1, now)
    answer = turn_on(bob, game, 1, service.browser("/push/bob-phone"))
    assert answer.json() == {
        "ok": True,
        "message": f"Push is on in this browser for bob in {game.title}.",
    }
    assert PushSubscription.objects.get().email == "bob@example.org"

    play_choice_step(game, now + timedelta(hours=1))
    later = now + timedelta(hours=1, seconds=5)
    assert list(send_all(later).values()) == ["sent"]

    report = OutboundEmail.objects.get(dedupe_key=f"report:{game.pk}:2:1")
    [got] = service.received
    assert got["payload"] == {
        "title": report.subject,
        "body": "Postal turn: rounds 3-4: one line per round, e.g. W5 1+3 3+4",
        "url": f"/play/{game.pk}/1/",
        "tag": f"game-{game.pk}-seat-1",
    }
    assert (
        report.subject
        == f"{game.title}: postal turn 2, your order is due Wed 25 Nov 2026 19:00 UTC"
    )
    assert got["claims"] == {
        "aud": service.url,
        "sub": "mailto:operator@games.example.org",
        "exp": int(later.timestamp()) + 12 * 3600,
    }
    assert got["signer"] == KEYS["public"]
    assert got["headers"] == {"Content-Encoding": "aes128gcm", "TTL": "43200"}
    assert PushSubscription.objects.get().last_sent_at == later
    # The push is sent once: a second batch finds nothing to send.
    assert send_all(later) == {}
    assert len(service.received) == 1


def test_a_browser_on_for_the_seat_and_for_every_game_gets_each_push_once(
    service: PushService, now: datetime
) -> None:
    game = started_game(now=now, early_processing=False)
    other = started_game(now=now, early_processing=False)
    bob = browser_of(game, 1, now)
    phone = service.browser("/push/bob-phone")
    assert turn_on(bob, game, 1, phone).status_code == 200
    assert turn_on(bob, game, 1, phone, every_seat=True).json()["message"] == (
        "Push is on in this browser for every game of bob@example.org."
    )
    PushDelivery.objects.all().delete()

    play_choice_step(game, now)
    play_choice_step(other, now)
    send_all(now)
    assert sorted(got["payload"]["tag"] for got in service.received) == [
        f"game-{game.pk}-seat-1",
        f"game-{other.pk}-seat-1",
    ]


def test_a_seat_that_changes_hands_no_longer_pushes_to_the_player_who_left(
    service: PushService, now: datetime
) -> None:
    game = started_game(now=now, early_processing=False)
    assert (
        turn_on(browser_of(game, 1, now), game, 1, service.browser("/push/bob")).status_code == 200
    )
    Seat.objects.filter(game=game, position=1).update(email="dan@example.org")
    play_choice_step(game, now)
    assert PushDelivery.objects.count() == 0


@pytest.mark.parametrize(("path", "status"), [("/gone/bob", 410), ("/missing/bob", 404)])
def test_a_subscription_the_push_service_dropped_is_removed(
    service: PushService, now: datetime, path: str, status: int
) -> None:
    game = started_game(now=now, early_processing=False)
    turn_on(browser_of(game, 1, now), game, 1, service.browser(path))
    play_choice_step(game, now)
    assert list(send_all(now).values()) == ["gone"]
    assert PushSubscription.objects.count() == 0
    assert PushDelivery.objects.count() == 0


def test_a_push_service_that_is_busy_is_tried_again_and_the_page_shows_the_failure(
    service: PushService, now: datetime
) -> None:
    game = started_game(now=now, early_processing=False)
    bob = browser_of(game, 1, now)
    turn_on(bob, game, 1, service.browser("/busy/bob"))
    play_choice_step(game, now)
    assert list(send_all(now).values()) == ["pending"]
    row = PushDelivery.objects.get()
    assert (row.attempts, row.last_error) == (1, "the server answered 503 Service Unavailable")
    assert row.next_attempt_at is not None and row.next_attempt_at > now
    subscription = PushSubscription.objects.get()
    assert (subscription.last_failed_at, subscription.last_error) == (now, row.last_error)
    page = bob.get(f"/play/{game.pk}/1/settings/").content.decode()
    assert "Last failure 23 Nov 18:00 UTC: the server answered 503 Service Unavailable" in page


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (None, "the browser sent no subscription."),
        (
            {"endpoint": "ftp://push.example.org/x", "keys": {}},
            "the push address must start with https://.",
        ),
        ({"endpoint": "https://push.example.org/x"}, "the browser sent no keys."),
        (
            {"endpoint": "https://push.example.org/x", "keys": {"p256dh": "AAAA", "auth": "AAAA"}},
            "the browser's public key is not a key this service can use.",
        ),
        (
            {"endpoint": "https://push.example.org/x", "keys": {"p256dh": "!!", "auth": "AAAA"}},
            "the browser's public key is not base64url.",
        ),
    ],
)
def test_a_subscription_that_is_not_one_is_refused_in_words_and_nothing_is_kept(
    service: PushService, now: datetime, data: Any, said: str
) -> None:
    game = started_game(now=now, early_processing=False)
    answer = turn_on(browser_of(game, 1, now), game, 1, data)
    assert (answer.status_code, answer.json()) == (
        400,
        {"error": f"Push could not be turned on: {said}"},
    )
    assert PushSubscription.objects.count() == 0


def test_a_push_address_on_this_machine_or_a_private_network_is_refused(
    service: PushService, now: datetime
) -> None:
    game = started_game(now=now, early_processing=False)
    bob = browser_of(game, 1, now)
    data = service.browser("/push/bob")
    with override_settings(WEBHOOK_ALLOW_LOCAL_HTTP=False):
        for endpoint in ("https://127.0.0.1/push", "https://10.0.0.1/push"):
            answer = turn_on(bob, game, 1, {**data, "endpoint": endpoint})
            assert answer.json() == {
                "error": "Push could not be turned on: the address leads to this machine or a "
                "private network, where nothing is sent."
            }
    assert PushSubscription.objects.count() == 0


def test_push_is_off_without_keys_and_the_page_says_so(now: datetime) -> None:
    game = started_game(now=now, early_processing=False)
    bob = browser_of(game, 1, now)
    with override_settings(VAPID_PUBLIC_KEY="", VAPID_PRIVATE_KEY=""):
        page = bob.get(f"/play/{game.pk}/1/settings/").content.decode()
        answer = turn_on(bob, game, 1, {"endpoint": "https://push.example.org/x"})
    assert "This service has no push notifications set up" in page
    assert "push.js" not in page
    assert (answer.status_code, answer.json()) == (
        409,
        {"error": "This service has no push set up."},
    )


def test_a_browser_turned_off_gets_nothing_more(service: PushService, now: datetime) -> None:
    game = started_game(now=now, early_processing=False)
    bob = browser_of(game, 1, now)
    phone = service.browser("/push/bob")
    turn_on(bob, game, 1, phone)
    turn_on(bob, game, 1, phone, every_seat=True)
    answer = bob.post(
        f"/play/{game.pk}/1/push/off/",
        json.dumps({"endpoint": phone["endpoint"], "every_seat": True}),
        content_type="application/json",
    )
    assert answer.json()["message"] == (
        "Push is off in this browser for every game of bob@example.org."
    )
    assert PushSubscription.objects.count() == 0
    play_choice_step(game, now)
    assert PushDelivery.objects.count() == 0


def test_send_me_a_test_reaches_each_browser_and_is_rate_limited(
    service: PushService, now: datetime
) -> None:
    game = started_game(now=now, early_processing=False)
    bob = browser_of(game, 1, now)
    empty = bob.post(f"/play/{game.pk}/1/push/test/", follow=True).content.decode()
    assert "No browser has push on for this seat yet." in empty
    turn_on(bob, game, 1, service.browser("/push/bob-phone"))
    turn_on(bob, game, 1, service.browser("/push/bob-laptop"), every_seat=True)
    page = bob.post(f"/play/{game.pk}/1/push/test/", follow=True).content.decode()
    assert "A test push is on its way to 2 browsers." in page
    send_all(now)
    assert sorted(got["path"] for got in service.received) == [
        "/push/bob-laptop",
        "/push/bob-phone",
    ]
    assert service.received[0]["payload"] == {
        "title": f"A test from {game.title}",
        "body": "Push works on this device: the news of bob will come here.",
        "url": f"/play/{game.pk}/1/",
        "tag": f"test-{game.pk}-1",
    }
    with override_settings(RATES={"push-test": "1/h"}):
        bob.post(f"/play/{game.pk}/1/push/test/")
        limited = bob.post(f"/play/{game.pk}/1/push/test/", follow=True).content.decode()
    assert "Too many tests for now: try again in an hour." in limited


def test_the_settings_page_lists_the_browsers_with_their_last_push(
    service: PushService, now: datetime
) -> None:
    game = started_game(now=now, early_processing=False)
    bob = browser_of(game, 1, now)
    before = bob.get(f"/play/{game.pk}/1/settings/").content.decode()
    assert "No browser gets this seat's news by push yet." in before
    assert 'src="/static/games/push.js"' in before
    turn_on(bob, game, 1, service.browser("/push/bob"))
    play_choice_step(game, now)
    send_all(now)
    page = bob.get(f"/play/{game.pk}/1/settings/").content.decode()
    key = push.endpoint_key(PushSubscription.objects.get())
    assert (
        f'<li data-browser="{key}" data-every="0"><strong class="which" data-this="This '
        'browser">A browser</strong>: this seat, since 23 Nov 2026. Last push 23 Nov 18:00 '
        "UTC.</li>"
    ) in page


def test_the_service_worker_is_served_at_the_root(client: Client) -> None:
    answer = client.get("/sw.js")
    assert answer["Content-Type"] == "application/javascript"
    assert answer["Service-Worker-Allowed"] == "/"
    assert 'icon: "/static/moderator/icon-192.png"' in answer.content.decode()


def test_makevapidkeys_makes_a_pair_that_signs_and_verifies(tmp_path: Any, capsys: Any) -> None:
    call_command("makevapidkeys")
    public, private = (line.split("=", 1)[1] for line in capsys.readouterr().out.splitlines())
    signed = Vapid02.from_string(private).sign(
        {"aud": "https://push.example.org", "sub": "mailto:a@example.org", "exp": 2000000000}
    )
    assert signed["Authorization"].endswith(f"k={public}")
    assert Vapid02.verify(signed["Authorization"])
    keys = tmp_path / "vapid.json"
    with override_settings(VAPID_KEYS_FILE=keys):
        call_command("makevapidkeys", "--file")
        first = keys.read_text()
        call_command("makevapidkeys", "--file")
    assert keys.read_text() == first
    assert set(json.loads(first)) == {"public", "private"}


def test_a_push_speaks_the_seats_language(service: PushService, now: datetime) -> None:
    game = started_game(now=now, early_processing=False)
    Seat.objects.filter(game=game, position=1).update(language="de")
    turn_on(browser_of(game, 1, now), game, 1, service.browser("/push/bob"))
    play_choice_step(game, now)
    send_all(now)
    report = OutboundEmail.objects.get(dedupe_key=f"report:{game.pk}:2:1")
    [got] = service.received
    assert (got["payload"]["title"], got["payload"]["body"]) == (
        report.subject,
        "Zug dieser Runde: Würfe 3-4: eine Zeile pro Wurf, z. B. W5 1+3 3+4",
    )
    assert report.subject.startswith(f"{game.title}: Postzug 2, dein Zug ist fällig bis Mi.")
