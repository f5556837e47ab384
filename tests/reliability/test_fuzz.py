"""Fuzzing: arbitrary text into every order parser, arbitrary requests into every form and
webhook endpoint, and CR/LF wherever a header could be built.

The only outcomes allowed are the ones a player or a caller can act on: a parsed order or an
``OrderError`` with a one-line message; a page (2xx/3xx) or a refusal (4xx) that changes
nothing. Every fuzzed input is counted; the totals are printed at the end of the run
(``pytest -s``) for docs/operations.md.
"""

from __future__ import annotations

import base64
import json
import secrets
import string
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

import pytest
from django.test import Client
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pytest_django.fixtures import Settings
from time_machine import TimeMachineFixture

from campaigns import postal as campaigns_postal
from campaigns.models import Campaign, Member
from games import postal
from games.engines import registry
from games.engines.base import Engine, OrderError
from games.engines.dice import VerifiableDice
from games.engines.registry import ENGINES
from games.models import DiceRoll, EmailPreference, Game, Order, Seat, Step
from games.postal import access
from games.web.options import PREFIX
from moderator.mail.models import DeliveryEvent, InboundMessage, OutboundEmail
from tests.factories import SEED, GMFactory, seat_page, started_game

NAMES = ["ann", "bob", "cy", "dee"]
FUZZED: Counter[str] = Counter()


@pytest.fixture(scope="session", autouse=True)
def report_counts(request: pytest.FixtureRequest) -> Iterator[None]:
    """Print how many inputs each parser and endpoint took (the figure goes into docs)."""
    yield
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print()
        for name, count in sorted(FUZZED.items()):
            print(f"fuzzed {name}: {count}")
        print(f"fuzzed in total: {FUZZED.total()}")


# --- A.1: the order parsers -------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    name: str
    key: str
    options: dict[str, Any]
    players: int
    words: tuple[str, ...]


CHOICE_WORDS = ("w", "f", "w5", "f6", "+", "1+3", "3+4", ":", "21:", "0.5", "1.5:")
CARD_WORDS = ("flip", "swap", "half", "double", "refuse", "sk", "eat", "21.5:", "2.5:")
LIARS_WORDS = ("bid", "liar", "challenge", "dudo", "spot", "calza", "x", "sum")
DM_WORDS = ("accuse", "mulligan", "none", "cheat", "yes", "no", "show")
TEAM_WORDS = ("reveal", "reroll", "learn", "sum")
DROP_WORDS = ("place", "take", "closest", "rightmost", "(", ")", ",", "-1", "-0")
SURVIVOR_WORDS = ("challenge", "double", "extra", "ko", "pass", "rematch", "accept", "d12=")
FIRST_WORDS = ("give", "dice", "die", "tokens", "token", "ready", "roll", "all", "reroll")
FIRST_MORE = ("set-aside", "arrange", "desc", "none", "line")
GENIUS_DM = {
    "profile": "genius_dm",
    "cheat": True,
    "double_face": True,
    "fresh_start": True,
    "mulligan": True,
    "oracle": True,
    "revelation": True,
    "summation": True,
}
CONFIGS = [
    Config("choice", "choice", {}, 3, CHOICE_WORDS),
    Config(
        "choice-suppenkasper", "choice", {"variant": "suppenkasper"}, 3, CHOICE_WORDS + CARD_WORDS
    ),
    Config(
        "liars-dice-classic", "liars-dice", {"profile": "classic", "calza": True}, 3, LIARS_WORDS
    ),
    Config("liars-dice-genius_dm", "liars-dice", GENIUS_DM, 2, LIARS_WORDS + DM_WORDS),
    Config(
        "liars-dice-genius_team",
        "liars-dice",
        {"profile": "genius_team"},
        4,
        LIARS_WORDS + TEAM_WORDS,
    ),
    Config("drop-shy-strict_queue", "drop-shy", {"selection": "strict_queue"}, 3, DROP_WORDS),
    Config("drop-shy-two_candidate", "drop-shy", {"selection": "two_candidate"}, 3, DROP_WORDS),
    Config("dice-survivor", "dice-survivor", {}, 3, SURVIVOR_WORDS),
    Config("first-player", "first-player", {"tokens": True}, 3, FIRST_WORDS + FIRST_MORE),
]
STEPS = 3


def test_every_engine_in_the_registry_is_fuzzed() -> None:
    assert sorted({config.key for config in CONFIGS}) == sorted(ENGINES)


def reachable(config: Config) -> list[tuple[Any, int]]:
    """The start state, the states after one and two steps resolved with NMR defaults, and
    each of them with the first prompted seat's default order already in (where the default
    is an order a seat could send: a Death Match "timeout" is not): (state, next draw).
    """
    engine = ENGINES[config.key]
    dice = VerifiableDice(SEED, 1)
    state, _ = engine.start(engine.options(config.options), NAMES[: config.players], dice)
    states = [(state, dice.next_index)]
    for _ in range(STEPS - 1):
        if not engine.prompts(state):
            break
        state, _ = engine.resolve(state, dice)
        states.append((state, dice.next_index))
    partial = []
    for state, start in states:
        prompts = engine.prompts(state)
        if prompts:
            seat = prompts[0].seat
            dice = VerifiableDice(SEED, 1, start)
            try:
                after, _ = engine.submit(state, seat, engine.default(state, seat), dice)
            except OrderError:
                continue
            partial.append((after, dice.next_index))
    return states + partial


STATES = {config.name: reachable(config) for config in CONFIGS}


def order_texts(words: Sequence[str]) -> st.SearchStrategy[str]:
    """Arbitrary text, control characters and all; very long lines; and lines built from the
    game's own words, the players' names and random numbers, which get past the first word."""
    word = st.sampled_from([*words, *NAMES]) | st.integers(-(10**30), 10**30).map(str)
    separator = st.sampled_from([" ", "  ", ",", "\t", "\n", "\r\n", "\r", "\x0b", "\u2028"])
    built = st.lists(st.tuples(word, separator), max_size=12).map(
        lambda pairs: "".join(w + s for w, s in pairs)
    )
    long_line = st.tuples(st.text(min_size=1, max_size=8), st.integers(200, 3000)).map(
        lambda pair: pair[0] * pair[1]
    )
    long_order = st.tuples(built, st.integers(50, 400)).map(lambda pair: pair[0] + "9" * pair[1])
    # Messages quote lines with repr(), which doubles backslashes and escapes quotes: lines
    # of them just under and over the longest line read.
    escaped = st.tuples(word, st.sampled_from("\\'\""), st.integers(90, 130)).map(
        lambda parts: f"{parts[0]} {parts[1] * parts[2]}"
    )
    return (
        st.text() | st.text(st.characters(codec="ascii")) | built | long_line | long_order | escaped
    )


def check_message(error: OrderError) -> None:
    message = str(error)
    assert message == error.message
    assert message.strip() != ""
    assert len(message.splitlines()) == 1, message
    assert len(message) < 500, message


@pytest.mark.parametrize("config", CONFIGS, ids=lambda config: config.name)
def test_order_parsers_accept_or_refuse_arbitrary_text(config: Config) -> None:
    engine: Engine[Any, Any, Any] = ENGINES[config.key]
    states = STATES[config.name]

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(text=order_texts(config.words))
    def fuzz(text: str) -> None:
        for state, start in states:
            for seat in range(config.players):
                FUZZED[f"parser {config.name}"] += 1
                try:
                    order = engine.parse(state, seat, text)
                    engine.submit(state, seat, order, VerifiableDice(SEED, 1, start))
                except OrderError as error:
                    check_message(error)

    fuzz()


# --- A.2: the form and webhook endpoints -------------------------------------------------

ENDPOINT_SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
SECRET = "u:p"
AUTH: dict[str, Any] = {"HTTP_AUTHORIZATION": "Basic " + base64.b64encode(SECRET.encode()).decode()}
# Form values: anything a browser (or a script) can send in a field.
junk = st.text(max_size=60) | st.integers(-(10**20), 10**20).map(str)
die = st.sampled_from(["", "1", "2", "3", "4", "5", "6", "0", "7"]) | junk
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@pytest.fixture(autouse=True)
def frozen(time_machine: TimeMachineFixture, now: datetime) -> None:
    time_machine.move_to(now, tick=False)


@pytest.fixture(autouse=True)
def mail_settings(settings: Settings) -> None:
    settings.ANYMAIL = {"WEBHOOK_SECRET": [SECRET], "MAILGUN_WEBHOOK_SIGNING_KEY": "k"}
    settings.INBOUND_ADDRESS = "orders@in.example.org"


def fresh_ip() -> str:
    """An address of its own: the link rate limit counts per address in the shared cache."""
    return "10." + ".".join(str(secrets.randbelow(256)) for _ in range(3))


def world() -> tuple[Any, ...]:
    """Everything a request could change: games, seats, steps, orders, dice, the outbox,
    reminder choices, campaigns, inbound emails and delivery events."""
    return (
        list(Game.objects.order_by("pk").values_list("pk", "status", "step_number", "state")),
        list(Seat.objects.order_by("pk").values_list("pk", "name", "email", "link_version")),
        list(Step.objects.order_by("pk").values_list("pk", "status", "prompts", "deadline")),
        list(Order.objects.order_by("pk").values_list("pk", "text")),
        DiceRoll.objects.count(),
        list(OutboundEmail.objects.order_by("pk").values_list("pk", "state", "to", "subject")),
        list(EmailPreference.objects.order_by("pk").values_list("pk", "digest", "hour")),
        list(Campaign.objects.order_by("pk").values_list("pk", "name")),
        list(Member.objects.order_by("pk").values_list("pk", "name", "email")),
        list(InboundMessage.objects.order_by("pk").values_list("pk", "state")),
        DeliveryEvent.objects.count(),
    )


def levels(response: Any) -> list[str]:
    """The tags of the messages the request queued (success, error)."""
    return [message.level_tag for message in response.wsgi_request._messages._queued_messages]


def shown_again(response: Any) -> bool:
    """A 200 page that shows the form again: with its errors, or empty for an empty post."""
    form = (response.context or {}).get("form") if response.status_code == 200 else None
    return form is not None and (bool(form.errors) or not form.is_bound)


def player_browser(game: Game, position: int, now: datetime) -> Client:
    client = Client(REMOTE_ADDR=fresh_ip())
    seat = Seat.objects.get(game=game, position=position)
    token = access.mint([seat], now=now)[position]
    assert client.post(f"/p/{token}/").status_code == 302
    return client


def order_fields(data: st.DataObject, game: Game, position: int) -> dict[str, str]:
    """The fields of the order form of the seat at ``position`` with arbitrary values:
    step, seat (its own, another's, or none), entry, text, pick and pick_button, and every
    Choice round block (kind, value, pairs, card)."""
    game.refresh_from_db()
    seats = [str(position), "0", "1", "2", "", "3", "-1"]
    fields: dict[str, str] = {
        "step": data.draw(st.sampled_from([str(game.step_number), "", "0", "-1"]) | junk),
        "seat": data.draw(st.sampled_from(seats) | junk),
        "entry": data.draw(st.sampled_from(["text", "blocks", "menu"]) | junk),
        "text": data.draw(order_texts(CHOICE_WORDS + CARD_WORDS + LIARS_WORDS)),
        "pick": data.draw(st.sampled_from(["liar", "bid 1 2", "bid 9 6"]) | junk),
    }
    if data.draw(st.booleans()):
        fields["pick_button"] = data.draw(st.sampled_from(["liar", "bid 2 3"]) | junk)
    rounds = [r["number"] for r in (game.state or {}).get("rounds", [])] or [1]
    for number in [*rounds, rounds[-1] + 1]:
        prefix = f"r{number}_"
        fields[prefix + "kind"] = data.draw(st.sampled_from(["W", "F", ""]) | junk)
        fields[prefix + "value"] = data.draw(die)
        for part in ("a", "b", "c", "d", "card_value", "card_plate"):
            fields[prefix + part] = data.draw(die)
        fields[prefix + "card"] = data.draw(st.sampled_from([*CARD_WORDS, ""]) | junk)
    for part in ("slot", "kind", "value", "a", "b", "c", "d", *(f"eat{n}" for n in range(1, 6))):
        fields[f"sk_{part}"] = data.draw(st.sampled_from(["0.5", "1.5", "W", "3"]) | die)
    # Only the fields drawn as present are sent: a browser may leave any of them out.
    keep = data.draw(st.sets(st.sampled_from(sorted(fields))))
    return {name: value for name, value in fields.items() if name in keep or name == "step"}


@pytest.mark.parametrize(
    ("engine", "options"),
    [("choice", {"variant": "suppenkasper"}), ("liars-dice", {"profile": "classic"})],
    ids=["choice-suppenkasper", "liars-dice"],
)
@pytest.mark.django_db
def test_the_order_form_answers_every_post_and_a_refused_one_changes_nothing(
    engine: str, options: dict[str, Any], now: datetime
) -> None:
    game = started_game(engine, now=now, options=options, early_processing=False)
    browsers = [player_browser(game, position, now) for position in range(3)]

    @ENDPOINT_SETTINGS
    @given(data=st.data())
    def fuzz(data: st.DataObject) -> None:
        FUZZED[f"endpoint POST /play/<game>/<seat>/ ({engine})"] += 1
        position = data.draw(st.integers(0, 2))
        client = browsers[position]
        client.cookies.pop("messages", None)
        # Mostly the browser's own seat's page; sometimes another seat's, which it may not
        # open.
        page = data.draw(st.sampled_from([position, position, position, (position + 1) % 3]))
        fields = order_fields(data, game, position)
        before = world()
        response = client.post(seat_page(game, page), fields)
        if page != position:
            assert response.status_code == 404
        else:
            assert response.status_code in (200, 302)
        if response.status_code == 302 and levels(response) == ["success"]:
            # Only the form of this page's seat is taken, and only for that seat.
            assert fields.get("seat") == str(position)
            assert Order.objects.filter(seat__position=position, source="web").exists()
        else:
            assert world() == before

    fuzz()


def url_part(text: str) -> str:
    return quote(text, safe="")


tokens = (
    st.text(max_size=120)
    | st.text(st.sampled_from(string.ascii_letters + string.digits + "-_"), max_size=60)
    # Stable seat tokens and GM feed tokens look like <digits>-<digits>-<26 letters>: any
    # digits a user agent may send, Unicode ones too.
    | st.builds(
        lambda game, seat, mac: f"{game}-{seat}-{mac}",
        st.text(st.characters(categories=["Nd", "No"]), min_size=1, max_size=13),
        st.text(st.characters(categories=["Nd", "No"]), min_size=1, max_size=5),
        st.text(st.sampled_from(string.ascii_lowercase + "234567"), min_size=26, max_size=26),
    )
    | st.builds(
        lambda user, mac: f"{user}-{mac}",
        st.text(st.characters(categories=["Nd", "No"]), min_size=1, max_size=13),
        st.text(st.sampled_from(string.ascii_lowercase + "234567"), min_size=26, max_size=26),
    )
)


@pytest.mark.django_db
def test_magic_links_and_calendar_feeds_answer_every_token_and_change_nothing(
    now: datetime,
) -> None:
    game = started_game(now=now, early_processing=False)
    seat = Seat.objects.get(game=game, position=0)
    real = access.mint([seat], now=now)[0]

    @ENDPOINT_SETTINGS
    # Found by this test: "²".isdigit() is true but int("²") raises (a 500 on the GM feed).
    @example(token="\u00b2-" + "a" * 26)
    @given(token=tokens | st.builds(lambda cut, tail: real[:cut] + tail, st.integers(0, 43), junk))
    def fuzz(token: str) -> None:
        client = Client(REMOTE_ADDR=fresh_ip())
        before = world()
        for method, url, name in [
            ("get", f"/p/{url_part(token)}/", "GET /p/<token>/"),
            ("post", f"/p/{url_part(token)}/", "POST /p/<token>/"),
            ("get", f"/calendar/{url_part(token)}.ics", "GET /calendar/<token>.ics"),
            ("get", f"/calendar/gm/{url_part(token)}.ics", "GET /calendar/gm/<token>.ics"),
        ]:
            FUZZED[f"endpoint {name}"] += 1
            response = getattr(client, method)(url)
            assert response.status_code in (200, 302, 404), (method, url)
            if token != real:
                assert response.status_code == 404, (method, url)
                assert not {"sessionid", "seats"} & set(response.cookies)
        assert world() == before

    fuzz()


PLAYERS_BOX = "ann <ann@example.org>\nbob, bob@example.org\ncy <cy@example.org>"
player_lines = st.lists(
    st.sampled_from(["ann <ann@example.org>", "bob, bob@example.org", "cy <cy@x.org>"])
    | st.builds(
        lambda name, address: f"{name} <{address}>",
        junk,
        st.sampled_from(["a@example.org", "a@b", "x"]) | junk,
    )
    | junk,
    max_size=5,
).map("\n".join)
option_texts = (
    st.sampled_from(["{}", '{"variant": "suppenkasper"}', '{"profile": "genius_dm"}', "[]"])
    | json_values.map(json.dumps)
    | junk
)


NEW_GAME_FORMS = [
    (url, [PREFIX + o.key for o in registry.settings(key).options_of(profile.key)])
    for key, profile in registry.profiles()
    for url in [f"/gm/new/{key}/{profile.key}/" if profile.key else f"/gm/new/{key}/"]
]
option_values = st.sampled_from(["", "on", "0", "1", "3", "20", "decreasing", "free", "sk"]) | junk


@pytest.mark.django_db
def test_the_new_game_forms_create_or_show_errors_and_write_nothing(now: datetime) -> None:
    client = Client()
    client.force_login(GMFactory.create(is_staff=True))

    @ENDPOINT_SETTINGS
    @given(
        form=st.sampled_from(NEW_GAME_FORMS),
        options=st.dictionaries(st.integers(0, 20), option_values | st.lists(junk, max_size=3)),
        fields=st.fixed_dictionaries(
            {},
            optional={
                "title": st.sampled_from(["Friday", "a\r\nBcc: x@y"]) | junk,
                "time_zone": st.sampled_from(["UTC", "Europe/Berlin", "Mars/Base"]) | junk,
                "schedule": st.sampled_from(["every 48 hours", "daily at 18:00"]) | junk,
                "early_processing": st.sampled_from(["on", ""]) | junk,
                "players": st.just(PLAYERS_BOX) | player_lines,
            },
        ),
    )
    def fuzz(form: tuple[str, list[str]], options: dict[int, Any], fields: dict[str, Any]) -> None:
        url, names = form
        FUZZED["endpoint POST /gm/new/<game>/"] += 1
        before = world()
        chosen = {names[i % len(names)]: value for i, value in options.items() if names}
        response = client.post(url, fields | chosen)
        assert response.status_code in (200, 302)
        if response.status_code == 302:
            game = Game.objects.latest("pk")
            assert response["Location"] == f"/gm/{game.pk}/"
            assert "\n" not in game.title and "\r" not in game.title
            registry.get(game.engine).options(game.options)
        else:
            assert shown_again(response)
            assert world() == before

    fuzz()


@pytest.mark.django_db
def test_the_create_campaign_form_creates_or_shows_errors_and_writes_nothing(
    now: datetime,
) -> None:
    client = Client()
    client.force_login(GMFactory.create(is_staff=True))

    forms = [("/gm/campaigns/new/first-player/", ["option_order_mode", "option_rounds"])] + [
        (url.replace("/gm/new/", "/gm/campaigns/new/league/"), [*names, "points"])
        for url, names in NEW_GAME_FORMS
        if "first-player" not in url
    ]

    @ENDPOINT_SETTINGS
    @given(
        form=st.sampled_from(forms),
        options=st.dictionaries(st.integers(0, 20), option_values | st.lists(junk, max_size=3)),
        fields=st.fixed_dictionaries(
            {},
            optional={
                "name": st.sampled_from(["Thursdays", "a\r\nBcc: x@y"]) | junk,
                "members": st.just(PLAYERS_BOX) | player_lines,
                "schedule": st.sampled_from(["every 1 hour", "daily at 18:00"]) | junk,
                "time_zone": st.sampled_from(["UTC", "Mars/Base"]) | junk,
            },
        ),
    )
    def fuzz(form: tuple[str, list[str]], options: dict[int, Any], fields: dict[str, Any]) -> None:
        url, names = form
        FUZZED["endpoint POST /gm/campaigns/new/..."] += 1
        before = world()
        chosen = {names[i % len(names)]: value for i, value in options.items()}
        response = client.post(url, fields | chosen)
        assert response.status_code in (200, 302)
        if response.status_code == 302:
            campaign = Campaign.objects.latest("pk")
            assert response["Location"] == f"/gm/campaigns/{campaign.pk}/"
        else:
            assert shown_again(response)
            assert world() == before

    fuzz()


@pytest.mark.django_db
def test_the_reminder_form_takes_a_valid_choice_and_nothing_else(now: datetime) -> None:
    game = started_game(now=now, early_processing=False)
    client = player_browser(game, 0, now)
    seat = Seat.objects.get(game=game, position=0)

    @ENDPOINT_SETTINGS
    @given(
        fields=st.fixed_dictionaries(
            {},
            optional={
                "seat": st.sampled_from([str(seat.pk), str(seat.pk + 1)]) | junk,
                "digest": st.sampled_from(["0", "1"]) | junk,
                "hour": st.sampled_from(["0", "8", "23", "24"]) | junk,
            },
        )
    )
    def fuzz(fields: dict[str, str]) -> None:
        FUZZED["endpoint POST /play/reminders/"] += 1
        client.cookies.pop("messages", None)
        before = world()
        response = client.post("/play/reminders/", fields)
        assert response.status_code in (302, 404)
        if response.status_code == 404 or levels(response) != ["success"]:
            assert world() == before
        else:
            choice = EmailPreference.objects.get()
            assert (str(int(choice.digest)), str(choice.hour)) == (
                fields["digest"],
                fields.get("hour", str(choice.hour)),
            )

    fuzz()


def postmark_inbound(to: str, text: str, message_id: str) -> dict[str, Any]:
    """An inbound email as Postmark posts it (tests/games/notify/test_replies.py has the shape)."""
    hash_ = to.split("+")[-1].split("@")[0]
    return {
        "FromName": "Ann",
        "From": "ann@example.org",
        "FromFull": {"Email": "ann@example.org", "Name": "Ann", "MailboxHash": ""},
        "To": to,
        "ToFull": [{"Email": to, "Name": "", "MailboxHash": hash_}],
        "Cc": "",
        "CcFull": [],
        "OriginalRecipient": to,
        "Subject": "Re: Fuzzed choice, step 1",
        "MessageID": "73e6d360-66eb-11e1-8e72-a8904824019b",
        "ReplyTo": "",
        "MailboxHash": hash_,
        "Date": "Mon, 23 Nov 2026 18:00:00 +0000",
        "TextBody": text,
        "HtmlBody": "",
        "StrippedTextReply": "",
        "Tag": "",
        "Headers": [{"Name": "Message-ID", "Value": message_id}],
        "Attachments": [],
    }


def postmark_tracking(row: OutboundEmail) -> dict[str, Any]:
    return {
        "RecordType": "Bounce",
        "ID": 4323372036854775807,
        "Type": "HardBounce",
        "TypeCode": 1,
        "MessageID": "883953f4-6105-42a2-a16a-77a8eac79483",
        "Email": row.to,
        "BouncedAt": "2026-11-23T18:00:05Z",
        "Details": "smtp;550 5.1.1 no such user",
        "Metadata": {"outbox": str(row.pk)},
    }


def mutated(payload: dict[str, Any]) -> st.SearchStrategy[Any]:
    """``payload`` with some of its values replaced by arbitrary JSON, some keys dropped."""
    return st.builds(
        lambda changes, dropped: {
            key: changes.get(key, value) for key, value in payload.items() if key not in dropped
        },
        st.dictionaries(st.sampled_from(sorted(payload)), json_values, max_size=3),
        st.sets(st.sampled_from(sorted(payload)), max_size=2),
    )


@pytest.mark.django_db
def test_the_webhooks_answer_every_json_body_and_a_refused_one_changes_nothing(
    now: datetime,
) -> None:
    game = started_game(now=now, title="Fuzzed choice", early_processing=False)
    seat = Seat.objects.get(game=game, position=0)
    address = access.reply_address(seat)
    assert address is not None
    report = OutboundEmail.objects.filter(kind="report").first()
    assert report is not None
    client = Client()

    @ENDPOINT_SETTINGS
    @given(
        kind=st.sampled_from(["inbound", "tracking"]),
        body=json_values
        | mutated(postmark_inbound(address, "W5 1+3 3+4", "<fuzz@mail.example.net>"))
        | mutated(postmark_tracking(report))
        | st.builds(postmark_inbound, st.just(address), order_texts(CHOICE_WORDS), junk),
        raw=st.booleans(),
    )
    # Found by this test: a NUL in the text (PostgreSQL refuses it), a header with a line
    # break Python's email package refuses, and bodies that are not a JSON object.
    @example(kind="inbound", body=postmark_inbound(address, "W5\x00", "<nul@x>"), raw=False)
    @example(kind="inbound", body=postmark_inbound(address, "", "\x1e0"), raw=False)
    @example(kind="tracking", body=None, raw=False)
    @example(kind="tracking", body={"Metadata": []}, raw=False)
    @example(kind="inbound", body={}, raw=True)
    def fuzz(kind: str, body: Any, raw: bool) -> None:
        FUZZED[f"endpoint POST postmark/{kind}"] += 1
        data = json.dumps(body) if not raw else json.dumps(body)[:-1]
        before = world()
        response = client.post(
            f"/mail/webhooks/postmark/{kind}/", data=data, content_type="application/json", **AUTH
        )
        assert response.status_code in (200, 400), response.content
        if response.status_code == 400:
            assert world() == before

    fuzz()


@pytest.mark.django_db
def test_an_order_holding_a_nul_is_refused_before_it_reaches_the_record(now: datetime) -> None:
    """Found by the webhook fuzzing: PostgreSQL cannot store a NUL, and a NUL on a quoted
    line gets past every parser. The postal layer refuses it for every route."""
    game = started_game(now=now, early_processing=False)
    engine = ENGINES["choice"]
    state = engine.state_from_json(game.state)
    valid = engine.canonical(state, 0, engine.default(state, 0))
    before = world()
    with pytest.raises(postal.OrderRejected) as refused:
        postal.accept_order(
            game_id=game.pk, position=0, text=f"> \x00\n{valid}", source="email", now=now
        )
    assert refused.value.message == (
        "the order holds a NUL character, so nothing was recorded; write it as plain text"
    )
    assert world() == before


# Issue 39's inputs: a NUL, digits Python reads but no one types (superscripts, other
# scripts, fullwidth), numbers past bigint and past int()'s 4,300 digits, and JSON nested
# deeper than Python parses.
hostile = (
    st.sampled_from(
        [
            "\x00",
            "1\x00",
            "/me/\x00",
            "\u00b2",
            "\u0663",
            "\uff13",
            "9" * 30,
            "9" * 5000,
            "-" + "9" * 5000,
            "[" * 5000 + "]" * 5000,
            '{"game": "choice", "x": ' + "[" * 5000 + "]" * 5000 + "}",
            '{"game": "choice", "seed": ' + "7" * 5000 + "}",
            "game: choice\ndice: " + "7" * 5000,
        ]
    )
    | junk
)


@pytest.mark.django_db
def test_every_page_answers_hostile_query_strings_and_forms_without_a_500(now: datetime) -> None:
    game = started_game(now=now, gm=GMFactory.create(is_staff=True), early_processing=False)
    Game.objects.filter(pk=game.pk).update(public="yes")
    gm = Client()
    gm.force_login(game.gm)
    player = player_browser(game, 0, now)
    pages = [
        (Client(), "get", "/games/archive/choice/", ("player", "page")),
        (Client(), "get", f"/games/{game.public_id}/", ("before",)),
        (Client(), "get", f"/games/{game.public_id}/replay/", ("step",)),
        (Client(), "get", "/signin/", ("next",)),
        (Client(), "get", "/signin/code/", ("email",)),
        (Client(), "post", "/signin/", ("email", "next")),
        (Client(), "post", "/signin/code/", ("email", "code")),
        (player, "get", seat_page(game, 0), ("before",)),
        (gm, "get", f"/gm/{game.pk}/zine/", ("step", "format")),
        (gm, "get", "/admin/games/game/", ("q", "p", "o")),
        (gm, "post", "/admin/games/game/", ("action", "_selected_action")),
        (gm, "post", "/gm/import/", ("title", "record", "players", "schedule")),
    ]

    @ENDPOINT_SETTINGS
    @given(page=st.sampled_from(pages), values=st.lists(hostile, min_size=4, max_size=4))
    def fuzz(page: tuple[Client, str, str, tuple[str, ...]], values: list[str]) -> None:
        client, method, url, names = page
        path = url.replace(game.public_id, "<game>").replace(f"/{game.pk}/", "/<id>/")
        FUZZED[f"endpoint {method.upper()} {path} (issue 39 inputs)"] += 1
        data = dict(zip(names, values, strict=False))
        if "action" in data:
            data["action"] = "pause"
        before = world()
        response = getattr(client, method)(url, data)
        assert response.status_code < 500, (method, url, data)
        assert response.status_code != 405, (method, url)
        assert world() == before

    fuzz()


# --- A.3: header injection at input ---------------------------------------------------------

# CR/LF in every spelling, and the other characters str.splitlines() breaks a line at.
BREAKS = ["\r\n", "\r", "\n", "\x0b", "\x0c", "\x1c", "\x1e", "\x85", "\u2028", "\u2029"]


def players(**changes: str) -> list[postal.Player]:
    people = [postal.Player(name, f"{name}@example.org") for name in NAMES[:3]]
    people[1] = postal.Player(changes.get("name", "bob"), changes.get("email", "bob@example.org"))
    return people


@pytest.mark.parametrize("brk", BREAKS, ids=repr)
@pytest.mark.django_db
def test_create_game_refuses_a_line_break_in_a_title_name_or_address(brk: str) -> None:
    injected = f"{brk}Bcc: x@y.org"
    gm = GMFactory.create(is_staff=True)
    before = world()
    cases: list[tuple[dict[str, Any], str]] = [
        ({"title": f"Friday{injected}"}, "the title must be a single line"),
        ({"players": players(name=f"bob{injected}")}, "the name of player 2 must be a single line"),
        (
            {"players": players(email=f"bob@example.org{injected}")},
            "the email of bob must be a single line",
        ),
    ]
    for changes, message in cases:
        kwargs: dict[str, Any] = {"title": "Friday", "players": players()} | changes
        with pytest.raises(postal.PostalError) as refused:
            postal.create_game(gm=gm, engine_key="choice", **kwargs)
        assert refused.value.message == message
    assert world() == before


@pytest.mark.parametrize("brk", BREAKS, ids=repr)
@pytest.mark.django_db
def test_replace_player_refuses_a_line_break_in_a_name_or_address(brk: str, now: datetime) -> None:
    game = started_game(now=now, early_processing=False)
    injected = f"{brk}Bcc: x@y.org"
    before = world()
    for name, email, message in [
        (f"bea{injected}", "bea@example.org", "the name must be a single line"),
        ("bea", f"bea@example.org{injected}", "the email must be a single line"),
    ]:
        with pytest.raises(postal.PostalError) as refused:
            postal.replace_player(game.pk, position=1, name=name, email=email, now=now)
        assert refused.value.message == message
    assert world() == before


@pytest.mark.parametrize("brk", BREAKS, ids=repr)
@pytest.mark.django_db
def test_create_campaign_refuses_a_line_break_in_a_name_or_address(brk: str, now: datetime) -> None:
    injected = f"{brk}Bcc: x@y.org"
    host = GMFactory.create(is_staff=True)
    before = world()
    for name, members, message in [
        (f"Thursdays{injected}", players(), "the name must be one line of text"),
        ("Thursdays", players(name=f"bob{injected}"), "a member's name must be one line of text"),
        (
            "Thursdays",
            players(email=f"bob@example.org{injected}"),
            "the email of bob must be one line of text",
        ),
    ]:
        with pytest.raises(campaigns_postal.CampaignError) as refused:
            campaigns_postal.create_campaign(
                host=host, kind="first-player", name=name, members=members, now=now
            )
        assert refused.value.message == message
    assert world() == before
