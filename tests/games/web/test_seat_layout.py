"""The seat's page puts the game first (issue 41, part 2): what is owed and by when, the
player's private block and the order form, then the board, then what happened, then the
rest; its settings are on a page of their own, and the words of play by post are explained
where they appear and on a glossary page. A refused order (part 5) is said at the top of
the page, focused, with what the player entered kept in the form."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from datetime import datetime

import pytest
from django.test import Client

from games import postal
from games.engines import registry
from games.models import Game, Order, Seat
from games.postal import access
from tests.factories import seat_page, settings_page, started_game
from tests.games.guess.rules import SETTINGS, GuessEngine

pytestmark = pytest.mark.django_db

# The settings' forms, each posted to the URL it always had.
SETTINGS_FORMS = {
    "email-form": "email/",
    "press-email-form": "messages/email/",
    "language-form": "language/",
    "autopilot-form": "autopilot/",
    "reminder-form": None,  # /play/reminders/, for every seat of the address
}


@pytest.fixture
def client() -> Client:
    # A client address of its own: the link rate limit counts per address.
    return Client(REMOTE_ADDR=f"10.{secrets.randbelow(256)}.{secrets.randbelow(256)}.41")


def open_seat(client: Client, game: Game, position: int, now: datetime) -> None:
    seat = Seat.objects.get(game=game, position=position)
    assert client.post(f"/p/{access.mint([seat], now=now)[position]}/").status_code == 302


def ids_in_order(html: str, ids: list[str]) -> list[str]:
    """``ids`` as they come in the page, each by its element's first ``id="..."``."""
    return sorted(ids, key=lambda name: html.index(f'id="{name}"'))


@pytest.mark.parametrize(
    ("engine", "options", "private"),
    [
        ("liars-dice", {}, "Your cup:"),
        ("choice", {}, "Only you see this."),
        ("first-player", {}, "You own 3 dice"),
    ],
)
def test_the_order_and_private_block_come_first_then_the_board_then_what_happened(
    client: Client, now: datetime, engine: str, options: dict[str, str], private: str
) -> None:
    game = started_game(engine, now=now, options=options)
    on_turn = game.steps.get().prompts[0]["seat"]
    open_seat(client, game, on_turn, now)
    html = client.get(seat_page(game, on_turn)).content.decode()
    sections = ["now", "private", "order", "board-section", "report", "history", "messages"]
    sections += ["rules-section", "dice", "seat-links"]
    assert ids_in_order(html, sections) == sections
    private_block = html.split('id="private"')[1].split("</div>")[0]
    assert private in private_block
    # An empty GM's log is not shown; the settings are on their own page.
    assert [name for name in ["gm-log", *SETTINGS_FORMS] if f'id="{name}"' in html] == []
    assert f'href="{settings_page(game, on_turn)}"' in html
    assert 'href="/glossary/"' in html


def test_the_settings_page_has_every_setting_and_is_the_seats_only(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now)
    open_seat(client, game, 1, now)
    html = client.get(settings_page(game, 1)).content.decode()
    actions = {
        name: re.findall(rf'<form method="post" action="([^"]+)" id="{name}"', html)
        for name in SETTINGS_FORMS
    }
    assert actions == {
        name: [f"/play/{game.pk}/1/{path}" if path else "/play/reminders/"]
        for name, path in SETTINGS_FORMS.items()
    }
    assert access.calendar_url(Seat.objects.get(game=game, position=1)) in html
    assert "Times on your pages and in your emails are in <strong>UTC</strong>." in html
    assert f'<a href="{seat_page(game, 1)}">Back to the game</a>' in html
    # Another seat's settings are not this browser's: the one answer, nothing said.
    assert client.get(settings_page(game, 0)).status_code == 404
    assert Client().get(settings_page(game, 1)).status_code == 404


def test_a_setting_saved_goes_back_to_the_settings_page_with_what_it_did(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now)
    open_seat(client, game, 0, now)
    for path, data in [
        ("email/", {"reports": "every", "scope": "seat"}),
        ("messages/email/", {"press_email": "none"}),
        ("language/", {"language": "en"}),
        ("autopilot/", {"autopilot": ""}),
    ]:
        response = client.post(f"/play/{game.pk}/0/{path}", data)
        assert (response.status_code, response["Location"].split("#")[0]) == (
            302,
            settings_page(game, 0),
        )
    seat = Seat.objects.get(game=game, position=0)
    response = client.post("/play/reminders/", {"seat": seat.pk, "digest": "each", "hour": 8})
    assert (response.status_code, response["Location"]) == (302, settings_page(game, 0))
    assert (seat.reports, seat.press_email, seat.language) == ("every", "none", "en")


def test_a_refused_order_is_said_at_the_top_focused_and_keeps_what_was_typed(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now)
    open_seat(client, game, 0, now)
    typed = "W9 1+3 3+4\nW5 1+3 3+4"
    response = client.post(
        seat_page(game, 0), {"step": "1", "seat": "0", "entry": "text", "text": typed}
    )
    assert response.status_code == 200
    html = response.content.decode()
    summary = re.search(r'<div id="error-summary" ([^>]*)>(.*?)</div>', html, re.S)
    assert summary is not None
    assert summary.group(1) == 'class="alert" role="alert" tabindex="-1" autofocus'
    errors = re.findall(r"<li>(.*?)</li>", summary.group(2))
    inline = re.findall(r'<ul class="errors" id="text-errors"><li>(.*?)</li>', html)
    assert (len(errors), errors == inline) == (1, True)
    assert errors[0].startswith("round 1:")
    assert "<strong>Your order was not sent.</strong>" in summary.group(2)
    # Under the title, before what is owed and the form; focused by a script the page's
    # policy allows; what was typed is in the box.
    assert html.index('id="error-summary"') < html.index('id="now"') < html.index('id="order"')
    assert re.search(
        r'<script nonce="[\w-]+">document.getElementById\("error-summary"\).focus\(\);</script>',
        html,
    )
    assert f">\n{typed}</textarea>" in html
    assert Order.objects.count() == 0


def test_an_accepted_order_and_a_refusal_by_redirect_show_at_the_top(
    client: Client, now: datetime
) -> None:
    game = started_game("dice-survivor", now=now)
    on_turn = game.steps.get().prompts[0]["seat"]
    idle = (on_turn + 1) % 3
    open_seat(client, game, idle, now)
    response = client.post(
        seat_page(game, idle),
        {"step": "1", "seat": str(idle), "entry": "text", "text": "pass"},
        follow=True,
    )
    html = response.content.decode()
    top = html.split('<div id="messages-top" tabindex="-1" role="status">')[1].split("</div>")[0]
    assert re.findall(r'<li class="(\w+)">', top) == ["error"]
    assert html.index('id="messages-top"') < html.index('id="now"')
    assert 'document.getElementById("messages-top").focus();' in html


def test_the_glossary_explains_the_words_and_the_pages_link_to_it(
    client: Client, now: datetime
) -> None:
    html = Client().get("/glossary/").content.decode()
    assert re.findall(r'<dt id="([\w-]+)">', html) == [
        "deadline",
        "turn",
        "nmr",
        "civil-disorder",
        "autopilot",
        "extension",
        "away",
        "commitment",
    ]
    assert '<dt id="nmr">NMR (no moves received)</dt>' in html
    game = started_game(
        now=now, missed=postal.MissedTurns(extensions=1, extension_hours=6, civil_disorder_after=2)
    )
    open_seat(client, game, 0, now)
    page = client.get(seat_page(game, 0)).content.decode()
    assert re.findall(r'href="/glossary/#([\w-]+)"', page) == ["extension", "commitment"]
    settings = client.get(settings_page(game, 0)).content.decode()
    assert re.findall(r'href="/glossary/#([\w-]+)"', settings) == [
        "nmr",
        "autopilot",
        "extension",
        "civil-disorder",
        "away",
    ]


def test_an_nmr_in_the_report_is_explained_where_it_appears(client: Client, now: datetime) -> None:
    game = started_game(now=now, early_processing=False)
    postal.resolve_now(game.pk, now=now)
    open_seat(client, game, 0, now)
    html = client.get(seat_page(game, 0)).content.decode()
    report = html.split('<section id="report">')[1].split("</section>")[0]
    history = html.split('<section id="history"')[1].split("</section>")[0]
    assert "NMR default" in report
    assert re.findall(r'id="history-terms"><li>NMR: .*?<a href="([^"]+)">', history) == [
        "/glossary/#nmr"
    ]
    assert re.findall(
        r'<ul class="muted terms" id="report-terms"><li>(.*?) <a href="([^"]+)">', report
    ) == [
        (
            "NMR: no moves received, a missed turn; the game's default (or the player's "
            "autopilot) played it.",
            "/glossary/#nmr",
        )
    ]


@pytest.fixture
def guess_registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    game = registry.Game(GuessEngine(), SETTINGS, form="tests.games.guess.form.GuessOrderForm")
    monkeypatch.setitem(registry.ENGINES, game.engine.key, game.engine)
    monkeypatch.setitem(registry.FORMS, game.engine.key, game.form)
    monkeypatch.setitem(registry.SETTINGS, game.engine.key, game.settings)
    monkeypatch.setitem(registry.STRATEGIES, game.engine.key, game.strategies)
    yield


def test_each_game_names_its_steps_in_its_own_word(
    client: Client, now: datetime, guess_registered: None
) -> None:
    said = {}
    for engine in ["choice", "liars-dice", "drop-shy", "dice-survivor", "first-player", "guess"]:
        game = started_game(engine, now=now, players=3, early_processing=False)
        postal.resolve_now(game.pk, now=now)
        on_turn = game.steps.get(number=2).prompts[0]["seat"]
        open_seat(client, game, on_turn, now)
        html = client.get(seat_page(game, on_turn)).content.decode()
        history = html.split('id="history"')[1].split("</section>")[0]
        said[engine] = (
            re.findall(r"; this is ([\w ]+ \d)\.</p>", html),
            re.findall(r"<h3>(.*?)</h3>", history),
        )
    turns = (["postal turn 2"], ["Postal turn 1, resolved"])
    assert said == {
        "choice": turns,
        "liars-dice": turns,
        "drop-shy": turns,
        "dice-survivor": turns,
        "first-player": turns,
        "guess": (["round 2"], ["Round 1, resolved"]),
    }
