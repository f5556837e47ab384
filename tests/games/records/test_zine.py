"""The zine page (docs/players.md, "The zine page"): a resolved step of a GM's game as every
player may read it, as a printable page and as plain text of at most 72 columns. While the
game runs it never holds a seat's private part (a Liar's Dice cup); once the game is over it
shows each seat's. Another GM's game answers 404, and so does a step that is not resolved."""

from __future__ import annotations

import html
import re
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from time_machine import TimeMachineFixture

from games import postal, tasks
from games.engines.liars_dice.rules import LiarsDiceEngine
from games.models import DiceRoll, Game, Step
from games.records import zine
from games.records.zine import wrap
from moderator.mail import building
from tests import pdf
from tests.factories import GMFactory, started_game
from tests.games.postal.test_liars_dice_postal import with_distinct_cups
from tests.services import REQUIRE_SERVICES

pytestmark = pytest.mark.django_db

ENGINE = LiarsDiceEngine()
HEADINGS = ("The rules", "What happened", "The dice", "The board", "The players")
TEXT_HEADINGS = (
    "THE RULES",
    "WHAT HAPPENED",
    "THE DICE",
    "THE BOARD",
    "THE PLAYERS",
    "STANDINGS",
    "NEXT DEADLINE",
)


def client_of(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def resolved_choice(now: datetime) -> Game:
    """A running Choice game whose step 1 was resolved by its GM; step 2 is open."""
    gm = GMFactory.create(is_staff=True)
    game = started_game(now=now, players=3, gm=gm, title="Zine Choice")
    postal.resolve_now(game.pk, now=now)
    game.refresh_from_db()
    assert game.step_number == 2
    return game


def headings(page: str) -> list[str]:
    return [html.unescape(h) for h in re.findall(r"<h3>([^<]*)</h3>", page)]


def test_a_game_zine_has_every_section_in_html_and_text(now: datetime) -> None:
    game = resolved_choice(now)
    client = client_of(game.gm)
    page = client.get(reverse("gm:zine", args=[game.pk]))
    assert page.status_code == 200
    content = page.content.decode()
    assert headings(content) == [*HEADINGS, "Standings", "Next deadline"]
    assert "<h2>Zine Choice</h2>" in content
    assert "step 1" in content
    step2 = Step.objects.get(game=game, number=2)
    assert f"Step 2, due {step2.deadline:%a %d %b %Y %H:%M} UTC" in content
    text = client.get(reverse("gm:zine", args=[game.pk]), {"format": "text"})
    assert text["Content-Type"] == "text/plain; charset=utf-8"
    body = text.content.decode()
    lines = body.splitlines()
    assert lines[0] == "ZINE CHOICE"
    assert [line for line in lines if line in TEXT_HEADINGS] == list(TEXT_HEADINGS)
    assert f"  Step 2, due {step2.deadline:%a %d %b %Y %H:%M} UTC" in lines
    assert max(len(line) for line in lines) <= 72
    # The dice are sealed while the game runs: their count, never their values.
    rolled = DiceRoll.objects.filter(step__game=game, step__number=1).count()
    if rolled:
        assert f"{rolled} dice rolled; their values are shown" in body


def test_the_text_version_wraps_long_lines_at_72_columns() -> None:
    long = "    " + " ".join(["word"] * 40)
    wrapped = wrap(long).splitlines()
    assert max(len(line) for line in wrapped) <= 72
    assert len(wrapped) > 1
    assert all(line.startswith("    ") for line in wrapped)
    assert " ".join(line.strip() for line in wrapped) == long.strip()


def test_another_gm_gets_404_and_sees_nothing_of_the_game(now: datetime) -> None:
    game = resolved_choice(now)
    other = client_of(GMFactory.create(is_staff=True))
    assert other.get(reverse("gm:zine", args=[game.pk])).status_code == 404
    assert other.get(reverse("gm:zine", args=[game.pk]), {"format": "text"}).status_code == 404
    page = other.get(reverse("gm:zines"))
    assert page.status_code == 200
    assert "Zine Choice" not in page.content.decode()
    assert "None of your games is running" in page.content.decode()


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ("9", "Zine Choice has no step 9. The latest resolved step is 1."),
        (
            "2",
            "Step 2 of Zine Choice is still open: a zine shows resolved steps."
            " The latest resolved step is 1.",
        ),
    ],
)
def test_a_step_that_is_not_resolved_answers_404_with_its_reason(
    now: datetime, step: str, message: str
) -> None:
    game = resolved_choice(now)
    client = client_of(game.gm)
    page = client.get(reverse("gm:zine", args=[game.pk]), {"step": step})
    assert page.status_code == 404
    assert message in html.unescape(page.content.decode())
    text = client.get(reverse("gm:zine", args=[game.pk]), {"step": step, "format": "text"})
    assert (text.status_code, text.content.decode()) == (404, wrap(message))
    assert max(len(line) for line in text.content.decode().splitlines()) <= 72


@pytest.mark.parametrize(
    "step",
    # Superscript 2 passes str.isdigit() and int() refused it (500); Arabic-Indic and
    # fullwidth 3 were read as 3.
    ["two", "0", "-1", "1.0", "\u00b2", "\u0663", "\uff13", "9" * 5000],
    ids=[
        "word",
        "zero",
        "negative",
        "decimal",
        "superscript",
        "arabic",
        "fullwidth",
        "huge",
    ],
)
def test_a_step_that_is_not_written_in_digits_answers_400_and_says_so(
    now: datetime, step: str
) -> None:
    game = resolved_choice(now)
    client = client_of(game.gm)
    message = f"“{step[:20]}” is not a step number: write it in digits 0-9, from 1."
    page = client.get(reverse("gm:zine", args=[game.pk]), {"step": step})
    assert page.status_code == 400
    assert message in html.unescape(page.content.decode())
    text = client.get(reverse("gm:zine", args=[game.pk]), {"step": step, "format": "text"})
    assert (text.status_code, text.content.decode()) == (400, wrap(message))


def test_a_game_without_a_resolved_step_says_so(now: datetime) -> None:
    gm = GMFactory.create(is_staff=True)
    game = started_game(now=now, players=3, gm=gm, title="Fresh")
    client = client_of(gm)
    page = client.get(reverse("gm:zine", args=[game.pk]))
    assert page.status_code == 404
    assert "Fresh has no resolved step yet." in page.content.decode()
    every = client.get(reverse("gm:zines")).content.decode()
    assert "Not shown, no step resolved yet: Fresh." in every


def test_all_zines_shows_every_running_game_of_the_gm(now: datetime) -> None:
    game = resolved_choice(now)
    second = started_game(now=now, players=2, gm=game.gm, title="Second")
    postal.resolve_now(second.pk, now=now)
    client = client_of(game.gm)
    page = client.get(reverse("gm:zines")).content.decode()
    assert re.findall(r"<h2>([^<]*)</h2>", page) == ["Second", "Zine Choice"]
    text = client.get(reverse("gm:zines"), {"format": "text"}).content.decode()
    assert [line for line in text.splitlines() if line in ("SECOND", "ZINE CHOICE")] == [
        "SECOND",
        "ZINE CHOICE",
    ]
    assert max(len(line) for line in text.splitlines()) <= 72


def private_texts(game: Game, state: Any) -> dict[int, str]:
    """What each seat's private block says (its cup), as its reports write it."""
    return {
        seat: building.render(
            "games/liars-dice/private.txt", {"view": ENGINE.view(state, seat)}, autoescape=False
        ).strip()
        for seat in range(len(state.players))
    }


def zine_of(game: Game, **query: str) -> str:
    """The zine's print page, its plain text and its PDF's text, one after the other."""
    client = client_of(game.gm)
    page = client.get(reverse("gm:zine", args=[game.pk]), query)
    text = client.get(reverse("gm:zine", args=[game.pk]), {**query, "format": "text"})
    printed = client.get(reverse("gm:zine", args=[game.pk]), {**query, "format": "pdf"})
    # Without Pango no PDF is made at all (the print page answers instead, 503).
    made = printable()
    assert (page.status_code, text.status_code, printed.status_code) == (
        200,
        200,
        200 if made else 503,
    )
    pages = pdf.pages(printed.content) if made else []
    return "\n".join([page.content.decode(), text.content.decode(), *pages])


def printable() -> bool:
    """Whether this machine makes PDFs (WeasyPrint with Debian's Pango); CI requires it."""
    if zine.pdf_available():
        return True
    if REQUIRE_SERVICES:
        pytest.fail("Pango (WeasyPrint's PDF) is required (REQUIRE_SERVICES=1) but missing")
    return False


def test_a_running_liars_dice_zine_never_shows_a_cup(now: datetime) -> None:
    game = with_distinct_cups(now, {}, 3)
    game.gm.is_staff = True
    game.gm.save()
    opener = ENGINE.state_from_json(game.state).turn
    postal.accept_order(game_id=game.pk, position=opener, text="bid 1 2", source="web", now=now)
    game.refresh_from_db()
    state = ENGINE.state_from_json(Step.objects.get(game=game, number=1).state_after)
    zine = zine_of(game, step="1")
    privates = private_texts(game, state)
    for seat, private in privates.items():
        dice = " ".join(map(str, state.hands[seat]))
        assert f"Your cup: {dice}" in private
        assert f"Your cup: {dice}" not in zine, seat
        assert private not in zine
    assert "Your cup" not in zine
    assert "Each player's private part is shown once the game is over." in zine


def test_a_finished_liars_dice_zine_shows_every_seat_s_private_part(
    now: datetime, time_machine: TimeMachineFixture
) -> None:
    game = with_distinct_cups(now, {"profile": "genius_dm", "max_dice": 5}, 2)
    game.gm.is_staff = True
    game.gm.save()
    for _ in range(12):
        game.refresh_from_db()
        if game.status == Game.Status.FINISHED:
            break
        step = Step.objects.get(game=game, number=game.step_number)
        time_machine.move_to(step.deadline + timedelta(seconds=1), tick=False)
        assert tasks.hand_out_steps() == 1
    game.refresh_from_db()
    assert game.status == Game.Status.FINISHED
    # An earlier step: its cups were secret then and are not now.
    state = ENGINE.state_from_json(Step.objects.get(game=game, number=1).state_after)
    zine = zine_of(game, step="1")
    printed = client_of(game.gm).get(
        reverse("gm:zine", args=[game.pk]), {"step": "1", "format": "pdf"}
    )
    # A machine without Pango makes no PDF (zine_of checks its 503); CI has Pango.
    printed_text = "\n".join(pdf.pages(printed.content)) if printable() else None
    for seat, private in private_texts(game, state).items():
        dice = " ".join(map(str, state.hands[seat]))
        assert f"Your cup: {dice}" in private
        # Under the seat's name, in the words of an onlooker: a zine's reader is not the seat.
        assert f"\n    Cup: {dice}\n" in zine, seat
        # The PDF's text shows a cup when there is one to show: its absence from a running
        # game's PDF means something.
        if printed_text is not None:
            # Each die a box with its number (as in an HTML email): the PDF's text runs the
            # boxes' numbers together.
            boxed = "".join(map(str, state.hands[seat]))
            assert f"Cup: {boxed}" in printed_text.splitlines(), seat
    assert ("Only you see this" in zine, "Your cup" in zine, "your dice" in zine) == (
        False,
        False,
        False,
    )
    rolls = DiceRoll.objects.filter(step__game=game, step__number=1).order_by("index")
    for roll in rolls:
        assert f"{roll.label}: d{roll.sides} rolled {roll.value}" in zine
    assert "Final standings, at the game's end:" in zine
    assert "Each player's private part, as only they saw it during the game:" in zine
    latest = zine_of(game)
    assert "None: the game is over" in latest
    names = {seat.position: seat.name for seat in game.seats.all()}
    final = ENGINE.standings(ENGINE.state_from_json(game.state)) or []
    assert len(final) == 2
    for standing in final:
        assert f"  {standing.place}. {names[standing.seat]}" in latest
    assert "  Final standings:" in latest


def test_the_gm_pages_link_the_zine(now: datetime) -> None:
    game = resolved_choice(now)
    client = client_of(game.gm)
    assert (
        reverse("gm:zine", args=[game.pk])
        in client.get(reverse("gm:game", args=[game.pk])).content.decode()
    )
    assert reverse("gm:zines") in client.get(reverse("gm:dashboard")).content.decode()


# --- the PDF -------------------------------------------------------------------------------


@pytest.mark.pango
def test_a_game_zine_pdf_is_the_print_page_on_a4(now: datetime) -> None:
    game = resolved_choice(now)
    client = client_of(game.gm)
    page = client.get(reverse("gm:zine", args=[game.pk])).content.decode()
    assert '<a href="?format=pdf" id="zine-pdf">PDF</a>' in page
    response = client.get(reverse("gm:zine", args=[game.pk]), {"format": "pdf"})
    assert response.status_code == 200
    assert response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"] == 'attachment; filename="zine-choice-step-1.pdf"'
    assert response.content.startswith(b"%PDF-")
    assert pdf.media_box(response.content) == [0.0, 0.0, 595.275591, 841.889764]  # A4
    text = "\n".join(pdf.pages(response.content))
    lines = text.splitlines()
    # The print style leaves out the site's header and the page's tools.
    assert lines[:2] == ["Zine Choice", "Choice, step 1"]
    assert [line for line in lines if line in [*HEADINGS, "Standings", "Next deadline"]] == [
        *HEADINGS,
        "Standings",
        "Next deadline",
    ]
    step2 = Step.objects.get(game=game, number=2)
    assert lines[-1] == f"Step 2, due {step2.deadline:%a %d %b %Y %H:%M} UTC"
    assert "Zine page" not in text
    assert "GM panel" not in text


@pytest.mark.pango
def test_a_pdf_of_another_step_is_named_by_it_and_an_open_step_is_refused(
    now: datetime,
) -> None:
    game = resolved_choice(now)
    postal.resolve_now(game.pk, now=now)
    client = client_of(game.gm)
    page = client.get(reverse("gm:zine", args=[game.pk]), {"step": "1"}).content.decode()
    assert '<a href="?step=1&amp;format=pdf" id="zine-pdf">PDF</a>' in page
    first = client.get(reverse("gm:zine", args=[game.pk]), {"step": "1", "format": "pdf"})
    assert first["Content-Disposition"] == 'attachment; filename="zine-choice-step-1.pdf"'
    assert pdf.pages(first.content)[0].splitlines()[1] == "Choice, step 1"
    open_step = client.get(reverse("gm:zine", args=[game.pk]), {"step": "3", "format": "pdf"})
    assert (open_step.status_code, open_step["Content-Type"]) == (404, "text/html; charset=utf-8")
    assert (
        "Step 3 of Zine Choice is still open: a zine shows resolved steps. The latest resolved"
        " step is 2." in html.unescape(open_step.content.decode())
    )


@pytest.mark.pango
def test_every_game_s_pdf_starts_each_game_on_a_new_page(now: datetime) -> None:
    game = resolved_choice(now)
    second = started_game(now=now, players=2, gm=game.gm, title="Second")
    postal.resolve_now(second.pk, now=now)
    client = client_of(game.gm)
    response = client.get(reverse("gm:zines"), {"format": "pdf"})
    assert response["Content-Disposition"] == 'attachment; filename="zine-2026-11-23.pdf"'
    texts = pdf.pages(response.content)
    starts = [text.splitlines()[0] for text in texts]
    assert starts[0] == "Second"
    assert starts.index("Zine Choice") > 0
    assert set(starts) <= {"Second", "Zine Choice", "The board", "The players"}
    assert "".join(texts).count("Next deadline") == 2


def test_a_server_without_pango_offers_the_print_page_instead_of_the_pdf(
    now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """WeasyPrint's import raises OSError where Pango is missing: ``pdf_available`` says
    so, and nothing offers or makes a PDF."""
    game = resolved_choice(now)
    monkeypatch.setattr(zine, "pdf_available", lambda: False)
    client = client_of(game.gm)
    page = client.get(reverse("gm:zine", args=[game.pk])).content.decode()
    assert "format=pdf" not in page
    assert 'id="zine-pdf-missing"' in page
    response = client.get(reverse("gm:zine", args=[game.pk]), {"format": "pdf"})
    assert (response.status_code, response["Content-Type"]) == (503, "text/html; charset=utf-8")
    content = html.unescape(response.content.decode())
    assert (
        "This server cannot make the PDF: it needs the Pango library (Debian's libpango), which"
        " is not installed. Print this page instead" in content
    )
    assert "<h2>Zine Choice</h2>" in content
    assert headings(content) == [*HEADINGS, "Standings", "Next deadline"]
    every = client.get(reverse("gm:zines"), {"format": "pdf"})
    assert every.status_code == 503


@pytest.mark.pango
def test_pdf_available_is_false_when_weasyprint_cannot_load_pango(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The import itself fails as it does without libpango: an OSError from ``dlopen``."""
    import builtins
    import sys

    real_import = builtins.__import__

    def without_pango(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "weasyprint":
            raise OSError("cannot load library 'libpango-1.0-0'")
        return real_import(name, *args, **kwargs)

    zine.pdf_available.cache_clear()
    monkeypatch.delitem(sys.modules, "weasyprint")
    monkeypatch.setattr(builtins, "__import__", without_pango)
    try:
        assert zine.pdf_available() is False
    finally:
        zine.pdf_available.cache_clear()
    monkeypatch.undo()
    assert zine.pdf_available() is True


@pytest.mark.pango
def test_the_pdf_loads_the_site_s_stylesheet_and_nothing_else() -> None:
    fetcher = zine.static_fetcher("http://testserver/")
    css = fetcher.fetch("http://testserver/static/moderator/site.css")
    assert (css.content_type, css.read()[:2]) == ("text/css", b"/*")
    for url in (
        "http://testserver/static/../../settings.py",
        "http://testserver/gm/",
        "http://example.org/static/moderator/site.css",
        "file:///etc/hostname",
    ):
        with pytest.raises(ValueError, match="a zine's PDF loads only the site's static files"):
            fetcher.fetch(url)
