"""The GM's log (docs/players.md): every GM action that changes a game is written with its
words and the GM's reason, in the action's transaction; the seat page and the GM's page list
it, and the next step's report names what the GM did during the step. Never hidden
information: an order the GM entered is named, not quoted, and no address is shown."""

from __future__ import annotations

import html
import re
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import translation
from pytest_django.fixtures import DjangoAssertNumQueries, Settings

from games import postal
from games.community import signups
from games.engines.choice.rules import ChoiceEngine
from games.models import Game, GMAction, Order, Seat, SignUp, Step
from games.postal import access
from moderator.mail.models import OutboundEmail
from tests.factories import GMFactory, seat_page, started_game
from tests.games.test_query_counts import PAGE_QUERIES

pytestmark = pytest.mark.django_db

CHOICE = ChoiceEngine()
LATER = datetime(2026, 11, 27, 19, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def site(settings: Settings) -> None:
    """Rate-limit counters of this test alone."""
    settings.CACHES = {
        "default": {**settings.CACHES["default"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"}
    }


@pytest.fixture
def gm() -> User:
    return GMFactory.create(is_staff=True)


def nmr_text(game: Game, position: int) -> str:
    game.refresh_from_db()
    state = CHOICE.state_from_json(game.state)
    return CHOICE.canonical(state, position, CHOICE.default(state, position))


def logged(game: Game) -> list[tuple[str, int, str, str, int | None]]:
    return list(
        GMAction.objects.filter(game=game)
        .order_by("id")
        .values_list("kind", "step_number", "words", "reason", "gm_id")
    )


def gm_order(game: Game, now: datetime, reason: str) -> None:
    postal.accept_order(
        game_id=game.pk,
        position=1,
        text=nmr_text(game, 1),
        source=Order.Source.GM,
        now=now,
        reason=reason,
    )


ACTIONS: dict[str, tuple[Callable[[Game, datetime, str], Any], str, str]] = {
    "deadline": (
        lambda game, now, reason: postal.extend_deadline(
            game.pk, deadline=LATER, now=now, reason=reason
        ),
        "deadline",
        "The GM moved the deadline to Fri 27 Nov 2026 19:00 UTC",
    ),
    "order": (gm_order, "order", "The GM entered an order for bob"),
    "replace": (
        lambda game, now, reason: postal.replace_player(
            game.pk, position=2, name="dee", email="dee@example.org", now=now, reason=reason
        ),
        "replace",
        "The GM handed seat 3 from cy to dee",
    ),
    "resolve": (
        lambda game, now, reason: postal.resolve_now(game.pk, now=now, reason=reason),
        "resolve",
        "The GM resolved postal turn 1 early",
    ),
    "pause": (
        lambda game, now, reason: postal.pause(game.pk, now=now, reason=reason),
        "pause",
        "The GM paused the game",
    ),
}


@pytest.mark.parametrize("action", list(ACTIONS))
def test_each_gm_action_writes_one_entry_with_its_words_and_reason(
    gm: User, now: datetime, action: str
) -> None:
    game = started_game(now=now, gm=gm, early_processing=False)
    run, kind, words = ACTIONS[action]
    run(game, now, "  the player asked  ")
    assert logged(game) == [(kind, 1, words, "the player asked", gm.pk)]
    assert GMAction.objects.get().at == now


def test_resuming_is_logged_after_the_pause(gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm, early_processing=False)
    postal.pause(game.pk, now=now)
    postal.resume(game.pk, now=now + timedelta(hours=2), reason="back from the fair")
    assert logged(game) == [
        ("pause", 1, "The GM paused the game", "", gm.pk),
        ("resume", 1, "The GM resumed the game", "back from the fair", gm.pk),
    ]


def test_a_resolution_that_resolves_nothing_logs_nothing(gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm, early_processing=False)
    postal.pause(game.pk, now=now)
    assert postal.resolve_now(game.pk, now=now, reason="hurry") is False
    assert [row[0] for row in logged(game)] == ["pause"]
    assert Step.objects.get(game=game).status == Step.Status.OPEN


def test_the_host_setting_the_order_is_logged(gm: User, now: datetime) -> None:
    game = started_game("first-player", now=now, gm=gm, options={"order_mode": "free"})
    postal.set_order(game.pk, names=["cy", "ann", "bob"], now=now, reason="house rule")
    assert logged(game) == [
        ("host-order", 1, "The GM set the actual order: cy, ann, bob", "house rule", gm.pk)
    ]


def test_a_replacement_from_the_open_games_is_logged_without_addresses(
    gm: User, now: datetime
) -> None:
    game = started_game(now=now, gm=gm, early_processing=False)
    Game.objects.filter(pk=game.pk).update(offer_seats=True)
    Seat.objects.filter(game=game, position=1).update(civil_disorder_at=now, missed_in_row=3)
    token = signups.sign_up(game.pk, name="zed", email="zed@example.org", now=now, position=1).token
    signups.confirm(token, now=now)
    signups.approve(game.pk, SignUp.objects.get(name="zed").pk, now=now)
    assert logged(game) == [
        (
            "replace",
            1,
            "The GM handed seat 2 from bob to zed",
            "a new player took over the seat from the open games",
            gm.pk,
        )
    ]


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        ("two\nlines", "the reason must be a single line without control characters"),
        ("a\tb", "the reason must be a single line without control characters"),
        ("x" * 301, "the reason has at most 300 characters"),
    ],
)
@pytest.mark.parametrize("action", list(ACTIONS))
def test_a_bad_reason_changes_nothing_in_postal(
    gm: User, now: datetime, action: str, reason: str, message: str
) -> None:
    game = started_game(now=now, gm=gm, early_processing=False)
    before = snapshot(game)
    with pytest.raises(postal.PostalError) as refused:
        ACTIONS[action][0](game, now, reason)
    assert refused.value.message == message
    assert snapshot(game) == before


def snapshot(game: Game) -> tuple[Any, ...]:
    game.refresh_from_db()
    return (
        game.status,
        game.state,
        game.step_number,
        list(Seat.objects.filter(game=game).order_by("id").values_list("name", "email")),
        list(Step.objects.filter(game=game).order_by("id").values_list("status", "deadline")),
        Order.objects.count(),
        GMAction.objects.count(),
        OutboundEmail.objects.count(),
    )


# --- the GM's forms ------------------------------------------------------------------------


# The actions whose forms name the step the page shows.
SHOWN_STEP_ACTIONS = {"resolve", "extend", "order", "replace", "set-order"}


def act(client: Client, game: Game, action: str, **data: Any) -> list[str]:
    if action in SHOWN_STEP_ACTIONS:
        # The step the page shows, as its form does (gm_forms.ShownStep).
        data.setdefault("step", str(Game.objects.get(pk=game.pk).step_number))
    if action == "resolve":
        data.setdefault("confirmed", "yes")  # as the confirmation page posts it
    response = client.post(reverse("gm:act", args=[game.pk, action]), data, follow=True)
    assert response.redirect_chain == [(reverse("gm:game", args=[game.pk]), 302)]
    return [str(message) for message in response.context["messages"]]


def gm_client(gm: User) -> Client:
    client = Client()
    client.force_login(gm)
    return client


def test_the_gm_forms_log_the_reason_and_the_gm_page_shows_it(gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm, early_processing=False)
    client = gm_client(gm)
    assert act(client, game, "extend", deadline="2026-11-27T19:00", reason="ann is ill") == [
        "The deadline of step 1 is now Fri 27 Nov 2026 19:00 UTC; the players who "
        "owe an order, and those who get every report, are emailed."
    ]
    assert act(client, game, "pause", reason="") == ["The game is paused."]
    assert logged(game) == [
        (
            "deadline",
            1,
            "The GM moved the deadline to Fri 27 Nov 2026 19:00 UTC",
            "ann is ill",
            gm.pk,
        ),
        ("pause", 1, "The GM paused the game", "", gm.pk),
    ]
    page = client.get(reverse("gm:game", args=[game.pk])).content.decode()
    assert log_items(page) == [
        "23 Nov 18:00 UTC, postal turn 1: The GM paused the game",
        "23 Nov 18:00 UTC, postal turn 1: The GM moved the deadline to Fri 27 Nov 2026 19:00 UTC "
        "(ann is ill)",
    ]


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        (
            "two\nlines",
            "Reason (players see it): the reason must be a single line without control characters",
        ),
        (
            "x" * 301,
            "Reason (players see it): Ensure this value has at most 300 characters (it has 301).",
        ),
    ],
)
@pytest.mark.parametrize(
    ("action", "data"),
    [
        ("extend", {"deadline": "2026-11-27T19:00"}),
        ("pause", {}),
        ("resolve", {}),
        ("order", {"seat": "1", "text": "placeholder"}),
        ("replace", {"seat": "2", "name": "dee", "email": "dee@example.org"}),
    ],
)
def test_a_bad_reason_in_a_gm_form_is_its_error_and_changes_nothing(
    gm: User, now: datetime, action: str, data: dict[str, str], reason: str, message: str
) -> None:
    game = started_game(now=now, gm=gm, early_processing=False)
    if action == "order":
        data = {**data, "text": nmr_text(game, 1)}
    before = snapshot(game)
    assert act(gm_client(gm), game, action, reason=reason, **data) == [message]
    assert snapshot(game) == before


# --- what players see ------------------------------------------------------------------------


def log_items(page: str) -> list[str]:
    """The GM's log section of a page, one string per entry, tags dropped."""
    section = re.search(r'<section id="gm-log"[^>]*>(.*?)</section>', page, re.S)
    assert section is not None
    items = re.findall(r"<li>(.*?)</li>", section[1], re.S)
    return [html.unescape(re.sub(r"<[^>]+>|\s+(?=\s)", "", item)).strip() for item in items]


def seat_client(game: Game, position: int, now: datetime) -> Client:
    client = Client()
    seat = Seat.objects.get(game=game, position=position)
    token = access.mint([seat], now=now)[position]
    assert client.post(f"/p/{token}/").status_code == 302
    return client


def test_each_reader_sees_the_log_in_their_own_time_zone(gm: User, now: datetime) -> None:
    bob = postal.Player("bob", "bob@example.org", time_zone="Asia/Tokyo")
    game = started_game(
        now=now, gm=gm, players=["ann", bob], time_zone="Europe/Berlin", early_processing=False
    )
    postal.pause(game.pk, now=now, reason="a holiday")

    line = "postal turn 1: The GM paused the game (a holiday)"
    bobs = seat_client(game, 1, now).get(seat_page(game, 1)).content.decode()
    anns = seat_client(game, 0, now).get(seat_page(game, 0)).content.decode()
    gms = gm_client(gm).get(reverse("gm:game", args=[game.pk])).content.decode()
    assert log_items(bobs) == [f"24 Nov 03:00 JST, {line}"]
    assert log_items(anns) == [f"23 Nov 19:00 CET, {line}"]
    assert log_items(gms) == [f"23 Nov 19:00 CET, {line}"]


def test_the_seat_page_shows_the_log_newest_first_without_the_orders_text_or_addresses(
    gm: User, now: datetime
) -> None:
    game = started_game(now=now, gm=gm, early_processing=False)
    text = nmr_text(game, 1)
    postal.accept_order(
        game_id=game.pk,
        position=1,
        text=text,
        source=Order.Source.GM,
        now=now,
        reason="bob phoned it in",
    )
    postal.replace_player(
        game.pk, position=2, name="dee", email="dee@example.org", now=now, reason="cy moved"
    )
    page = seat_client(game, 0, now).get(seat_page(game, 0)).content.decode()
    assert log_items(page) == [
        "23 Nov 18:00 UTC, postal turn 1: The GM handed seat 3 from cy to dee (cy moved)",
        "23 Nov 18:00 UTC, postal turn 1: The GM entered an order for bob (bob phoned it in)",
    ]
    section = re.search(r'<section id="gm-log"[^>]*>(.*?)</section>', page, re.S)
    assert section is not None
    assert (text in section[1], "cy@example.org" in page, "dee@example.org" in page) == (
        False,
        False,
        False,
    )
    assert all(text not in words for _, _, words, _, _ in logged(game))


def test_a_long_log_shows_the_latest_20_with_the_count_within_the_query_budget(
    gm: User, now: datetime, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    game = started_game(now=now, gm=gm, early_processing=False)
    for number in range(25):
        when = now + timedelta(days=number + 1)
        postal.extend_deadline(game.pk, deadline=when, now=now, reason=f"reason {number}")
    client = seat_client(game, 0, now)
    client.get(seat_page(game, 0))  # the CSRF cookie is set once
    with django_assert_num_queries(PAGE_QUERIES):
        page = client.get(seat_page(game, 0)).content.decode()
    items = log_items(page)
    assert (len(items), items[0], items[-1]) == (
        20,
        "23 Nov 18:00 UTC, postal turn 1: The GM moved the deadline to Fri 18 Dec 2026 18:00 UTC "
        "(reason 24)",
        "23 Nov 18:00 UTC, postal turn 1: The GM moved the deadline to Sun 29 Nov 2026 18:00 UTC "
        "(reason 5)",
    )
    assert "The latest 20 of 25 actions." in page


def test_a_game_without_gm_actions_shows_no_log_on_the_seat_page(gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm, early_processing=False)
    page = seat_client(game, 0, now).get(seat_page(game, 0)).content.decode()
    assert ('id="gm-log"' in page, "The GM&#x27;s log" in page) == (False, False)
    postal.extend_deadline(game.pk, deadline=LATER, now=now, reason="ann is ill")
    page = seat_client(game, 0, now).get(seat_page(game, 0)).content.decode()
    assert ('id="gm-log"' in page, len(log_items(page))) == (True, 1)


# --- the next report -------------------------------------------------------------------------


def reports_of(game: Game, step: int) -> list[OutboundEmail]:
    return list(
        OutboundEmail.objects.filter(
            game=game, kind="report", subject__contains=f"postal turn {step}"
        ).order_by("to")
    )


def test_a_new_deadline_in_the_log_is_told_in_each_readers_time_zone(
    gm: User, now: datetime
) -> None:
    bob = postal.Player("bob", "bob@example.org", time_zone="Asia/Tokyo")
    game = started_game(
        now=now, gm=gm, players=["ann", bob], time_zone="Europe/Berlin", early_processing=False
    )
    postal.extend_deadline(game.pk, deadline=LATER, now=now, reason="ann is ill")

    bobs = seat_client(game, 1, now).get(seat_page(game, 1)).content.decode()
    gms = gm_client(gm).get(reverse("gm:game", args=[game.pk])).content.decode()
    assert log_items(bobs) == [
        "24 Nov 03:00 JST, postal turn 1: The GM moved the deadline to Sat 28 Nov 2026 04:00 JST "
        "(19:00 UTC) (ann is ill)"
    ]
    assert log_items(gms) == [
        "23 Nov 19:00 CET, postal turn 1: The GM moved the deadline to Fri 27 Nov 2026 20:00 CET "
        "(19:00 UTC) (ann is ill)"
    ]
    postal.resolve_now(game.pk, now=now + timedelta(hours=1))
    said = {
        email.to: email.text.split("WHAT THE GM DID\n")[1].split("\n")[0]
        for email in reports_of(game, 2)
    }
    assert said == {
        "ann@example.org": "  The GM moved the deadline to Fri 27 Nov 2026 20:00 CET (19:00 UTC) "
        "(ann is ill)",
        "bob@example.org": "  The GM moved the deadline to Sat 28 Nov 2026 04:00 JST (19:00 UTC) "
        "(ann is ill)",
    }


def test_the_next_report_names_what_the_gm_did_during_the_step(gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm, early_processing=False)
    text = nmr_text(game, 1)
    postal.accept_order(
        game_id=game.pk, position=1, text=text, source=Order.Source.GM, now=now, reason="by phone"
    )
    postal.extend_deadline(game.pk, deadline=LATER, now=now, reason="ann is ill")
    postal.resolve_now(game.pk, now=now + timedelta(hours=1))
    emails = reports_of(game, 2)
    assert [email.to for email in emails] == [
        "ann@example.org",
        "bob@example.org",
        "cy@example.org",
    ]
    part = (
        "WHAT THE GM DID\n"
        "  The GM entered an order for bob (by phone)\n"
        "  The GM moved the deadline to Fri 27 Nov 2026 19:00 UTC (ann is ill)\n"
        "  The GM resolved postal turn 1 early\n"
        "\n"
        "THE BOARD\n"
    )
    assert [part in email.text for email in emails] == [True, True, True]
    html_part = re.search(r'<ul id="gm-did"[^>]*>(.*?)</ul>', emails[0].html, re.S)
    assert html_part is not None
    assert re.findall(r"<li>(.*?)</li>", html_part[1]) == [
        "The GM entered an order for bob (by phone)",
        "The GM moved the deadline to Fri 27 Nov 2026 19:00 UTC (ann is ill)",
        "The GM resolved postal turn 1 early",
    ]
    # The step after: nothing done by the GM, nothing named.
    postal.resolve_due_step(Step.objects.get(game=game, number=2).pk, now=now + timedelta(days=9))
    assert [("WHAT THE GM DID" in email.text) for email in reports_of(game, 3)] == [
        False,
        False,
        False,
    ]


def test_the_gm_order_text_is_in_no_email_before_the_step_resolves(gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm, early_processing=False)
    text = nmr_text(game, 1)
    before = set(OutboundEmail.objects.values_list("id", flat=True))
    gm_order(game, now, "by phone")
    postal.write_receipts(now=now)
    later = OutboundEmail.objects.exclude(id__in=before).exclude(to="bob@example.org")
    assert [text in email.text for email in later] == [False] * later.count()


GERMAN_ACTIONS = {
    "deadline": "Der Spielleiter hat den Abgabetermin auf Fr., 27. November 2026, 19:00 UTC "
    "verschoben",
    "order": "Der Spielleiter hat einen Zug für bob eingetragen",
    "replace": "Der Spielleiter hat Platz 3 von cy an dee übergeben",
    "resolve": "Der Spielleiter hat Postzug 1 vorzeitig ausgewertet",
    "pause": "Der Spielleiter hat das Spiel pausiert",
}


@pytest.mark.parametrize("action", list(ACTIONS))
def test_each_gm_action_is_read_in_the_readers_language(
    gm: User, now: datetime, action: str
) -> None:
    game = started_game(now=now, gm=gm, early_processing=False)
    run, _, words = ACTIONS[action]
    run(game, now, "")
    logged = GMAction.objects.get()

    assert (logged.words, str(logged.said)) == (words, words)
    with translation.override("de"):
        assert str(logged.said) == GERMAN_ACTIONS[action]


def test_a_deadline_in_another_zone_is_said_with_both_times(gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm, time_zone="Europe/Berlin", early_processing=False)
    postal.extend_deadline(game.pk, deadline=LATER, now=now)
    logged = GMAction.objects.get()

    assert logged.words == "The GM moved the deadline to Fri 27 Nov 2026 20:00 CET (19:00 UTC)"
    with translation.override("de"):
        assert str(logged.said) == (
            "Der Spielleiter hat den Abgabetermin auf Fr., 27. November 2026, 20:00 CET "
            "(19:00 UTC) verschoben"
        )


def test_a_german_seat_reads_the_log_and_the_report_in_german(gm: User, now: datetime) -> None:
    game = started_game(now=now, gm=gm, early_processing=False)
    Seat.objects.filter(game=game, position=0).update(language="de")
    gm_order(game, now, "per Telefon")
    postal.extend_deadline(game.pk, deadline=LATER, now=now)
    postal.resolve_now(game.pk, now=now + timedelta(hours=1))

    page = seat_client(game, 0, now).get(seat_page(game, 0)).content.decode()
    assert log_items(page) == [
        "23. Nov 19:00 UTC, Postzug 1: Der Spielleiter hat Postzug 1 vorzeitig ausgewertet",
        "23. Nov 18:00 UTC, Postzug 1: Der Spielleiter hat den Abgabetermin auf Fr., "
        "27. November 2026, 19:00 UTC verschoben",
        "23. Nov 18:00 UTC, Postzug 1: Der Spielleiter hat einen Zug für bob eingetragen "
        "(per Telefon)",
    ]
    ann, bob = (
        OutboundEmail.objects.get(dedupe_key=f"report:{game.pk}:2:{position}")
        for position in (0, 1)
    )
    assert (
        "WAS DER SPIELLEITER TAT\n"
        "  Der Spielleiter hat einen Zug für bob eingetragen (per Telefon)\n"
        "  Der Spielleiter hat den Abgabetermin auf Fr., 27. November 2026, 19:00 UTC "
        "verschoben\n"
        "  Der Spielleiter hat Postzug 1 vorzeitig ausgewertet\n"
    ) in ann.text
    assert "  The GM entered an order for bob (per Telefon)\n" in bob.text
