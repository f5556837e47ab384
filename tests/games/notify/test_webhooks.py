"""Outgoing webhooks against a real HTTP server on 127.0.0.1: a step opened, a reminder and
the game's end are posted once each, in our versioned JSON or as Discord's and Slack's
messages; a 500 is retried until it succeeds; the sweep and a task racing post once; a
failure shows on the GM's page; a bad address is refused and nothing saved; and no payload
of a Liar's Dice game holds a cup."""

from __future__ import annotations

import json
import re
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import time_machine
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from django.test import Client
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks, Settings

from games import postal, tasks
from games.engines import registry
from games.engines.liars_dice.rules import LiarsDiceEngine
from games.models import Event, Game, Webhook, WebhookDelivery
from games.notify import deliveries, reminders, webhooks
from tests.factories import EVERY_HOUR, SEED, GameFactory, GMFactory, choice_game, new_game
from tests.games.playing import SHORT_CHOICE, play_out

pytestmark = pytest.mark.django_db

HOUR = timedelta(hours=1)
STEP_1 = {"number": 1, "name": "postal turn 1", "deadline": "2026-11-25T18:00:00Z"}
State = WebhookDelivery.State


class Receiver:
    """A webhook's receiving end: every post's JSON body in ``posts``; the statuses to
    answer with, in turn, in ``answers`` (200 once they run out)."""

    def __init__(self) -> None:
        self.posts: list[dict[str, Any]] = []
        self.hosts: list[str] = []
        self.paths: list[str] = []
        self.answers: list[int] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers["Content-Length"])
                receiver.posts.append(json.loads(self.rfile.read(length)))
                receiver.hosts.append(self.headers["Host"])
                receiver.paths.append(self.path)
                status = receiver.answers.pop(0) if receiver.answers else 200
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook/secret-token"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()

    def events(self) -> list[str]:
        return [post["event"] for post in self.posts]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch, settings: Settings) -> Iterator[Receiver]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    settings.WEBHOOK_ALLOW_LOCAL_HTTP = True
    settings.SITE_URL = "https://dice.example.org"
    server = Receiver()
    yield server
    server.close()


@pytest.fixture
def commit(
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> Callable[[], AbstractContextManager[Any]]:
    """``with commit():`` what the block hands to the workers after its commits is handed
    when it ends (Celery runs eagerly in tests)."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


def hooked_game(url: str, format: str = "json", players: int = 3, **kwargs: Any) -> Game:
    game = choice_game(players, **kwargs)
    webhooks.set_for_game(game.pk, url=url, format=format, active=True)
    return game


def verify(game: Game) -> str:
    return f"https://dice.example.org/games/{game.public_id}/verify/"


def public_texts(game: Game, step: int) -> list[str]:
    events = Event.objects.filter(game=game, step__number=step, audience__isnull=True).order_by(
        "id"
    )
    return list(events.values_list("text", flat=True))


def test_a_step_opened_is_posted_with_its_deadline_and_who_owes(
    now: datetime, receiver: Receiver, commit: Callable[[], AbstractContextManager[Any]]
) -> None:
    game = hooked_game(receiver.url, title="Tuesday Choice")
    with commit():
        game = postal.start_game(game.pk, now=now, seed=SEED)
    opening = public_texts(game, 1)
    assert len(opening) == 1
    assert receiver.posts == [
        {
            "version": 1,
            "event": "step.opened",
            "game": {"id": game.public_id, "title": "Tuesday Choice", "url": verify(game)},
            "step": {
                "number": 1,
                "name": "postal turn 1",
                "deadline": "2026-11-25T18:00:00Z",
                "owed": ["ann", "bob", "cy"],
            },
            "seats": ["ann", "bob", "cy"],
            "events": opening,
        }
    ]
    with commit():
        postal.resolve_now(game.pk, now=now + HOUR)
    second = receiver.posts[1]
    resolved = public_texts(game, 1)[1:]
    assert resolved != []
    assert (second["event"], second["step"]["number"], second["events"]) == (
        "step.opened",
        2,
        resolved,
    )
    assert list(WebhookDelivery.objects.values_list("state", "attempts")) == [(State.SENT, 1)] * 2


def test_a_reminder_is_posted_once_per_seat_that_owes(
    now: datetime, receiver: Receiver, commit: Callable[[], AbstractContextManager[Any]]
) -> None:
    with commit():
        game = postal.start_game(hooked_game(receiver.url).pk, now=now, seed=SEED)
    with commit():
        postal.accept_order(
            game_id=game.pk, position=0, text=_default(game, 0), source="web", now=now
        )
    receiver.posts.clear()
    for minutes in (0, 10, 20):
        with commit():
            assert reminders.send_reminders(now + 24 * HOUR + timedelta(minutes=minutes)) >= 0
    assert [(p["event"], p["seat"], p["hours"], p["step"]) for p in receiver.posts] == [
        ("reminder", "bob", 24, STEP_1),
        ("reminder", "cy", 24, STEP_1),
    ]


def _default(game: Game, position: int) -> str:
    game.refresh_from_db()
    engine = registry.get(game.engine)
    state = engine.state_from_json(game.state)
    return str(engine.canonical(state, position, engine.default(state, position)))


def test_the_end_is_posted_with_the_standings_by_seat_name(
    now: datetime, receiver: Receiver, commit: Callable[[], AbstractContextManager[Any]]
) -> None:
    game = hooked_game(receiver.url, options=SHORT_CHOICE)
    with commit():
        game = play_out(
            postal.start_game(game.pk, now=now, seed=SEED), sending={"ann", "bob", "cy"}
        )
    finished = receiver.posts[-1]
    assert receiver.events() == ["step.opened"] * (game.step_number) + ["game.finished"]
    engine = registry.get(game.engine)
    standings = engine.standings(engine.state_from_json(game.state)) or []
    assert len(standings) == 3
    names = dict(game.seats.values_list("position", "name"))
    assert finished["standings"] == [
        {"seat": names[s.seat], "place": s.place, "score": s.score} for s in standings
    ]
    assert finished["game"]["url"] == verify(game)


def test_slack_gets_a_message_in_words(
    now: datetime, receiver: Receiver, commit: Callable[[], AbstractContextManager[Any]]
) -> None:
    game = hooked_game(receiver.url, format="slack", title="<Night> & day")
    with commit():
        postal.start_game(game.pk, now=now, seed=SEED)
    (opening,) = public_texts(game, 1)
    text = (
        f"- {opening}\n"
        "<Night> & day: postal turn 1 is open until 2026-11-25 18:00 UTC. Orders owed by ann, "
        "bob, cy.\n"
        f"Dice check: {verify(game)}"
    )
    assert receiver.posts == [
        {"text": text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")}
    ]


def test_a_reminder_in_words_names_the_step_as_its_game_does() -> None:
    game = {"id": "x", "title": "Tuesday", "url": "https://dice.example.org/games/x/verify/"}
    reminder = {"version": 1, "event": "reminder", "game": game, "seat": "bob", "hours": 24}
    assert webhooks.summary(reminder | {"step": STEP_1}) == (
        "Tuesday: bob still owes an order for postal turn 1; the deadline is 2026-11-25 18:00 "
        "UTC.\nDice check: https://dice.example.org/games/x/verify/"
    )
    # A delivery written before steps had their game's name, retried now.
    earlier = {"number": 1, "deadline": "2026-11-25T18:00:00Z"}
    assert webhooks.summary(reminder | {"step": earlier}).startswith(
        "Tuesday: bob still owes an order for step 1; "
    )


def test_a_500_is_retried_by_the_sweep_until_it_is_taken(
    now: datetime,
    receiver: Receiver,
    commit: Callable[[], AbstractContextManager[Any]],
    settings: Settings,
) -> None:
    settings.MAIL_RETRY_BASE_SECONDS = 60
    receiver.answers = [500, 503]
    with commit():
        game = postal.start_game(hooked_game(receiver.url).pk, now=now, seed=SEED)
    delivery = WebhookDelivery.objects.get(game=game)
    assert (delivery.state, delivery.attempts, delivery.last_error) == (
        State.PENDING,
        1,
        "the server answered 500 Internal Server Error",
    )
    assert delivery.next_attempt_at is not None
    assert now + timedelta(seconds=30) <= delivery.next_attempt_at <= now + timedelta(seconds=60)
    with time_machine.travel(now + timedelta(minutes=1), tick=False), commit():
        tasks.sweep()
    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts) == (State.PENDING, 2)
    with time_machine.travel(now + timedelta(minutes=5), tick=False), commit():
        tasks.sweep()
    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts, delivery.last_error) == (State.SENT, 3, "")
    assert receiver.events() == ["step.opened"] * 3


def test_a_refusal_fails_at_once_and_shows_on_the_gm_page(
    now: datetime, receiver: Receiver, commit: Callable[[], AbstractContextManager[Any]]
) -> None:
    receiver.answers = [404]
    gm = GMFactory.create(is_staff=True)
    with commit():
        game = postal.start_game(hooked_game(receiver.url, gm=gm).pk, now=now, seed=SEED)
    delivery = WebhookDelivery.objects.get(game=game)
    assert (delivery.state, delivery.last_error) == (
        State.FAILED,
        "the server answered 404 Not Found",
    )
    client = Client()
    client.force_login(gm)
    page = client.get(f"/gm/{game.pk}/").content.decode()
    assert "the server answered 404 Not Found" in page
    assert '<details class="fold" open>\n<summary><h2>Webhook</h2>' in page
    assert "secret-token" not in page
    assert f"http://127.0.0.1:{receiver.server.server_port}/…" in page
    with time_machine.travel(now + HOUR, tick=False), commit():
        tasks.sweep()
    assert receiver.events() == ["step.opened"]


def test_the_sweep_and_a_task_racing_post_once(
    now: datetime, receiver: Receiver, commit: Callable[[], AbstractContextManager[Any]]
) -> None:
    # Started without its hand-over to the workers (as if the broker were away): pending.
    game = postal.start_game(hooked_game(receiver.url).pk, now=now, seed=SEED)
    ids = [WebhookDelivery.objects.get(game=game).pk]
    assert receiver.posts == []
    later = now + timedelta(minutes=5)
    with time_machine.travel(later, tick=False):
        with commit():
            assert tasks.sweep()["webhooks"] == 1
        assert webhooks.send_batch(ids, now=later) == {}
        assert tasks.send_webhooks(delivery_ids=ids) == {}
        with commit():
            assert tasks.sweep()["webhooks"] == 0
    assert receiver.events() == ["step.opened"]
    assert WebhookDelivery.objects.get().attempts == 1


def test_a_claimed_row_is_posted_by_whoever_claimed_it_only(now: datetime) -> None:
    game = postal.start_game(hooked_game("https://hooks.example.org/x").pk, now=now, seed=SEED)
    delivery = WebhookDelivery.objects.get(game=game)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(state=State.SENDING, sending_since=now)
    assert webhooks.send_batch([delivery.pk], now=now) == {}
    # Never confirmed after MAIL_SENDING_TIMEOUT_SECONDS: failed, not posted again.
    assert webhooks.mark_stale(now + timedelta(minutes=10)) == 1
    delivery.refresh_from_db()
    assert (delivery.state, delivery.last_error) == (State.FAILED, deliveries.NEVER_CONFIRMED)


def test_an_event_is_written_once_however_often_it_is_reported(
    now: datetime, receiver: Receiver, commit: Callable[[], AbstractContextManager[Any]]
) -> None:
    with commit():
        game = postal.start_game(hooked_game(receiver.url).pk, now=now, seed=SEED)
    engine = registry.get(game.engine)
    state = engine.state_from_json(game.state)
    step = game.steps.get(number=1)
    with commit():
        ids = webhooks.step_events(game, list(game.seats.all()), engine, state, [], step, now)
    assert ids == []
    assert WebhookDelivery.objects.count() == 1
    assert receiver.events() == ["step.opened"]


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://example.org/hook", "the address must start with https://"),
        ("ftp://example.org/hook", "enter a web address starting with https://"),
        ("not a url", "enter a web address starting with https://"),
        ("https://user:pw@example.org/hook", "the address must not hold a user name or password"),
        ("https://127.0.0.1/hook", webhooks.LOCAL_REFUSED),
        ("https://10.1.2.3/hook", webhooks.LOCAL_REFUSED),
        ("https://[::1]:8443/hook", webhooks.LOCAL_REFUSED),
        ("https://169.254.169.254/latest", webhooks.LOCAL_REFUSED),
        ("https://printer.localhost/x", webhooks.LOCAL_REFUSED),
        ("", "enter the webhook's address"),
    ],
)
def test_a_bad_address_is_refused_and_nothing_saved(
    now: datetime, settings: Settings, url: str, message: str
) -> None:
    settings.WEBHOOK_ALLOW_LOCAL_HTTP = False
    gm = GMFactory.create(is_staff=True)
    game = GameFactory.create(seats=3, gm=gm)
    client = Client()
    client.force_login(gm)
    response = client.post(
        f"/gm/{game.pk}/webhook/", {"url": url, "format": "json", "active": "on"}, follow=True
    )
    shown = [str(m) for m in response.context["messages"]]
    assert len(shown) == 1
    assert shown[0].startswith(f"Webhook URL: {message}")
    assert Webhook.objects.count() == 0


def test_plain_http_to_this_machine_only_when_allowed(settings: Settings) -> None:
    settings.WEBHOOK_ALLOW_LOCAL_HTTP = False
    with pytest.raises(webhooks.BadURL):
        webhooks.check_url("http://127.0.0.1:9/hook")
    settings.WEBHOOK_ALLOW_LOCAL_HTTP = True
    assert webhooks.check_url(" http://127.0.0.1:9/hook ") == "http://127.0.0.1:9/hook"
    with pytest.raises(webhooks.BadURL):
        webhooks.check_url("http://10.0.0.1/hook")


# --- addresses on this machine or a private network ----------------------------------------

# IPv6 forms that reach 127.0.0.1 (or a private network), and others that are no public
# address; each is refused when set and when posting.
LOCAL_FORMS = [
    "::7f00:1",  # IPv4-compatible
    "::ffff:127.0.0.1",  # IPv4-mapped
    "64:ff9b::7f00:1",  # NAT64, well-known prefix
    "64:ff9b::a00:7",  # NAT64 of 10.0.0.7
    "64:ff9b:1::7f00:1",  # NAT64, local-use prefix
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:c0a8:101::1",  # 6to4 of 192.168.1.1
    "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo, client 127.0.0.1
    "fec0::1",  # site-local
    "ff02::1",  # multicast
    "::",
    "0.0.0.0",
    "100.64.0.1",  # carrier-grade NAT
    "224.0.0.1",
]
PUBLIC = "93.184.215.14"


def literal(address: str) -> str:
    return f"[{address}]" if ":" in address else address


@pytest.mark.parametrize("address", LOCAL_FORMS)
def test_an_address_that_is_not_public_is_refused_when_set(
    settings: Settings, address: str
) -> None:
    settings.WEBHOOK_ALLOW_LOCAL_HTTP = False
    gm = GMFactory.create(is_staff=True)
    game = GameFactory.create(seats=3, gm=gm)
    client = Client()
    client.force_login(gm)
    url = f"https://{literal(address)}/hook"
    response = client.post(
        f"/gm/{game.pk}/webhook/", {"url": url, "format": "json", "active": "on"}, follow=True
    )
    assert [str(m) for m in response.context["messages"]] == [
        f"Webhook URL: {webhooks.LOCAL_REFUSED}."
    ]
    assert Webhook.objects.count() == 0


class Network:
    """The world's edge, answered by the test: the resolver (``socket.getaddrinfo``) looks
    names up in ``names`` (a list of answers per name, taken in turn, the last one kept),
    and a connection (``socket.create_connection``) to an address of ``routes`` reaches
    the local port it maps to; any other is refused. ``connected`` lists where each
    connection was asked to go."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.names: dict[str, list[list[str]]] = {}
        self.routes: dict[tuple[str, int], int] = {}
        self.looked_up: list[str] = []
        self.connected: list[tuple[str, int]] = []
        resolve, connect = socket.getaddrinfo, socket.create_connection

        def getaddrinfo(host: str, port: int, *args: Any, **kwargs: Any) -> Any:
            if host not in self.names:
                return resolve(host, port, *args, **kwargs)
            self.looked_up.append(host)
            answers = self.names[host]
            addresses = answers.pop(0) if len(answers) > 1 else answers[0]
            return [
                (
                    socket.AF_INET6 if ":" in address else socket.AF_INET,
                    socket.SOCK_STREAM,
                    6,
                    "",
                    (address, port, 0, 0) if ":" in address else (address, port),
                )
                for address in addresses
            ]

        def create_connection(address: tuple[str, int], *args: Any, **kwargs: Any) -> Any:
            self.connected.append(address)
            if address not in self.routes:
                raise ConnectionRefusedError(111, "Connection refused")
            return connect(("127.0.0.1", self.routes[address]), *args, **kwargs)

        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
        monkeypatch.setattr(socket, "create_connection", create_connection)


@pytest.fixture
def network(monkeypatch: pytest.MonkeyPatch, settings: Settings) -> Network:
    settings.WEBHOOK_ALLOW_LOCAL_HTTP = False
    return Network(monkeypatch)


@pytest.mark.parametrize("address", [*LOCAL_FORMS, "127.0.0.1", "10.0.0.7", "::1"])
def test_a_name_looked_up_as_an_address_not_public_is_sent_nothing(
    now: datetime,
    network: Network,
    commit: Callable[[], AbstractContextManager[Any]],
    address: str,
) -> None:
    """Public when the GM set it, the name is looked up as ``address`` when the event is
    posted: the event fails and no connection is made. An address written before these
    forms were refused fails the same way."""
    network.names["hooks.example.org"] = [[PUBLIC], [address]]
    game = hooked_game("https://hooks.example.org/x")
    other = GameFactory.create(seats=3)
    Webhook.objects.create(game=other, url=f"https://{literal(address)}/x", format="json")
    with commit():
        postal.start_game(game.pk, now=now, seed=SEED)
        postal.start_game(other.pk, now=now, seed=SEED)
    assert (
        list(WebhookDelivery.objects.order_by("game_id").values_list("state", "last_error"))
        == [(State.FAILED, webhooks.LOCAL_REFUSED)] * 2
    )
    assert network.looked_up == ["hooks.example.org"] * 2
    assert network.connected == []


def test_a_name_looked_up_as_a_public_and_a_private_address_is_refused(
    now: datetime, network: Network, commit: Callable[[], AbstractContextManager[Any]]
) -> None:
    network.names["hooks.example.org"] = [[PUBLIC, "10.0.0.7"]]
    with pytest.raises(webhooks.BadURL, match=webhooks.LOCAL_REFUSED):
        webhooks.set_for_game(
            GameFactory.create(seats=3).pk,
            url="https://hooks.example.org/x",
            format="json",
            active=True,
        )
    assert Webhook.objects.count() == 0
    # Set before the name changed: the post fails, nothing is sent.
    game = choice_game(3)
    Webhook.objects.create(game=game, url="https://hooks.example.org/x", format="json")
    with commit():
        postal.start_game(game.pk, now=now, seed=SEED)
    delivery = WebhookDelivery.objects.get(game=game)
    assert (delivery.state, delivery.last_error) == (State.FAILED, webhooks.LOCAL_REFUSED)
    assert network.connected == []


def _certificate(directory: Path, name: str) -> tuple[Path, Path]:
    """A self-signed certificate for ``name`` and its key, written to ``directory``."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(datetime(2000, 1, 1, tzinfo=UTC))
        .not_valid_after(datetime(2100, 1, 1, tzinfo=UTC))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def test_the_post_goes_to_the_address_that_was_checked(
    now: datetime,
    network: Network,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    commit: Callable[[], AbstractContextManager[Any]],
) -> None:
    """DNS rebinding: the name is looked up as a public address, then as 127.0.0.1. The
    post goes to the public address (a TLS server for the name, reached through the test's
    network), with the name as its Host and TLS name; the service on this machine hears
    nothing, and the name is looked up once per post."""
    cert, key = _certificate(tmp_path, "hooks.example.org")
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    public, inside = Receiver(), Receiver()
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    public.server.socket = tls.wrap_socket(public.server.socket, server_side=True)
    network.routes = {
        (PUBLIC, 443): public.server.server_port,
        ("127.0.0.1", 443): inside.server.server_port,
    }
    try:
        network.names["hooks.example.org"] = [[PUBLIC], [PUBLIC], ["127.0.0.1"]]
        game = hooked_game("https://hooks.example.org/hook/secret")
        with commit():
            postal.start_game(game.pk, now=now, seed=SEED)
    finally:
        public.close()
        inside.close()
    assert (public.events(), public.hosts, public.paths) == (
        ["step.opened"],
        ["hooks.example.org"],
        ["/hook/secret"],
    )
    assert inside.posts == []
    assert network.connected == [(PUBLIC, 443)]
    assert network.looked_up == ["hooks.example.org"] * 2  # when set, when posted
    assert WebhookDelivery.objects.get().state == State.SENT


def test_a_certificate_for_another_name_is_no_connection(
    now: datetime,
    network: Network,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    commit: Callable[[], AbstractContextManager[Any]],
) -> None:
    """The TLS name is the address's host, not the address connected to: a server whose
    certificate names another host is not posted to, and the event is tried again."""
    cert, key = _certificate(tmp_path, "other.example.org")
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    public = Receiver()
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    public.server.socket = tls.wrap_socket(public.server.socket, server_side=True)
    network.routes = {(PUBLIC, 443): public.server.server_port}
    network.names["hooks.example.org"] = [[PUBLIC]]
    try:
        game = hooked_game("https://hooks.example.org/hook")
        with commit():
            postal.start_game(game.pk, now=now, seed=SEED)
    finally:
        public.close()
    delivery = WebhookDelivery.objects.get()
    assert delivery.state == State.PENDING
    assert delivery.last_error.startswith("could not connect: [SSL: CERTIFICATE_VERIFY_FAILED]")
    assert public.posts == []


def test_the_gm_sets_and_removes_the_webhook(now: datetime) -> None:
    gm = GMFactory.create(is_staff=True)
    game = GameFactory.create(seats=3, gm=gm)
    client = Client()
    client.force_login(gm)
    url = "https://discord.com/api/webhooks/1/secret"
    response = client.post(
        f"/gm/{game.pk}/webhook/", {"url": url, "format": "discord", "active": "on"}, follow=True
    )
    assert [str(m) for m in response.context["messages"]] == [
        "The webhook is set to https://discord.com/… (Discord); it gets the game's events."
    ]
    assert list(Webhook.objects.values_list("game_id", "url", "format", "active")) == [
        (game.pk, url, "discord", True)
    ]
    # Blank keeps the address (the page never shows it); the format and switch change.
    client.post(f"/gm/{game.pk}/webhook/", {"url": "", "format": "slack"}, follow=True)
    assert list(Webhook.objects.values_list("url", "format", "active")) == [(url, "slack", False)]
    response = client.post(f"/gm/{game.pk}/remove-webhook/", follow=True)
    assert [str(m) for m in response.context["messages"]] == [
        "The webhook is removed, with its deliveries."
    ]
    assert Webhook.objects.count() == 0


def test_a_liars_dice_webhook_never_holds_a_cup(
    now: datetime, receiver: Receiver, commit: Callable[[], AbstractContextManager[Any]]
) -> None:
    engine = LiarsDiceEngine()
    game = new_game("liars-dice", title="Liars", schedule_spec=EVERY_HOUR)
    webhooks.set_for_game(game.pk, url=receiver.url, format="json", active=True)
    with commit():
        game = postal.start_game(game.pk, now=now, seed=SEED)
    state = engine.state_from_json(game.state)
    with commit():
        postal.accept_order(
            game_id=game.pk, position=state.turn, text="bid 1 2", source="web", now=now
        )
    # Every body each format would post, for every delivery written.
    bodies = [
        json.dumps(webhooks.body(format, delivery.payload), ensure_ascii=False)
        for delivery in WebhookDelivery.objects.all()
        for format in Webhook.Format.values
    ]
    assert receiver.events() == ["step.opened", "step.opened"]
    posted = json.dumps(receiver.posts, ensure_ascii=False)
    private = list(Event.objects.filter(game=game, audience__isnull=False))
    assert private != []
    for seat in range(3):
        cup = json.dumps(list(state.hands[seat]))
        view = json.dumps(engine.view(state, seat))
        # The seat's own view holds its cup; no webhook body does.
        assert cup in view
        assert cup not in posted
        assert all(cup not in body for body in bodies)
    for event in private:
        assert event.text not in posted
        assert all(event.text not in body for body in bodies)


# --- a campaign's webhook ---------------------------------------------------------------------


def test_a_campaigns_webhook_hears_of_its_games_set_on_its_page(
    now: datetime, receiver: Receiver, commit: Callable[[], AbstractContextManager[Any]]
) -> None:
    from campaigns import postal as campaigns
    from tests.campaigns.test_postal import league_of

    league = league_of(now)
    league.host.is_staff = True
    league.host.save(update_fields=["is_staff"])
    client = Client()
    client.force_login(league.host)
    page = f"/gm/campaigns/{league.pk}/"
    bad = client.post(f"{page}webhook/", {"url": "ftp://x", "format": "json", "active": "on"})
    assert bad.status_code == 302
    assert not Webhook.objects.filter(campaign=league).exists()
    client.post(f"{page}webhook/", {"url": receiver.url, "format": "slack", "active": "on"})
    hook = Webhook.objects.get(campaign=league)
    assert (hook.url, hook.format, hook.active) == (receiver.url, "slack", True)
    with commit():
        entry = campaigns.start_league_game(league.pk, now=now, seed=SEED)
    assert len(receiver.posts) == 1
    assert f"{entry.game.title}: postal turn 1 is open" in receiver.posts[0]["text"]
    html = client.get(page).content.decode()
    assert "secret-token" not in html
    assert re.findall(
        r'<tr id="delivery-\d+"><td class="nowrap">[^<]*</td><td>(.*?)</td>', html
    ) == [entry.game.title]
    another = Client()
    another.force_login(GMFactory.create(is_staff=True))
    assert another.post(f"{page}webhook/", {"remove": "1"}).status_code == 404
    client.post(f"{page}webhook/", {"remove": "1"})
    assert not Webhook.objects.filter(campaign=league).exists()
