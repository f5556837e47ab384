"""A game added through exactly the steps of docs/adding-a-game.md, and played by post:
Guess the Die (tests/games/guess/) is registered for these tests only, its orders taken
through its own web form and the typed box, its reports written by the outbox, and its
record exported and replayed."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client

from games import postal
from games.engines import registry
from games.models import Game, Order, Seat, Step
from games.postal import access
from games.records import archive
from games.web.forms import form_class, form_templates
from moderator.mail.models import OutboundEmail
from tests.factories import GMFactory, seat_page, started_game
from tests.games.guess.form import GuessOrderForm
from tests.games.guess.rules import SETTINGS, GuessEngine

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def guess_registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The registry line of docs/adding-a-game.md, gone after the test: nothing else tells
    Django or the service about the game (its templates are found in its own folder)."""
    game = registry.Game(GuessEngine(), SETTINGS, form="tests.games.guess.form.GuessOrderForm")
    monkeypatch.setitem(registry.ENGINES, game.engine.key, game.engine)
    monkeypatch.setitem(registry.FORMS, game.engine.key, game.form)
    monkeypatch.setitem(registry.SETTINGS, game.engine.key, game.settings)
    monkeypatch.setitem(registry.STRATEGIES, game.engine.key, game.strategies)
    yield


def browser_of(seat: Seat, now: datetime) -> Client:
    client = Client()
    token = access.mint([seat], now=now)[seat.position]
    assert client.post(f"/p/{token}/").status_code == 302
    return client


def post(client: Client, game: Game, seat: Seat, **fields: str) -> int:
    data = {"step": str(game.step_number), "seat": str(seat.position), **fields}
    return client.post(seat_page(game, seat.position), data).status_code


def test_the_registry_line_names_the_games_form_and_its_templates() -> None:
    assert form_class("guess") is GuessOrderForm
    assert form_templates("guess") == ["games/guess/form.html", "games/default/form.html"]
    assert ("guess", "Guess the Die") in registry.choices()


def test_the_game_is_played_by_post_through_its_form_its_reports_and_its_record(
    now: datetime, tmp_path: Path
) -> None:
    game = started_game("guess", now=now, players=2, title="Guessing", options={"rounds": 2})
    ann, bob = Seat.objects.filter(game=game).order_by("position")
    ann_browser, bob_browser = browser_of(ann, now), browser_of(bob, now)
    page = ann_browser.get(seat_page(game, ann.position)).content.decode()
    assert '<form method="post" action="" id="guess-form" novalidate>' in page
    assert "One line: <code>guess</code> and a face 1-6" in page

    # Round 1: ann through the game's own form, bob through the typed-order box.
    assert post(ann_browser, game, ann, entry="blocks", face="3") == 302
    assert post(bob_browser, game, bob, entry="text", text="Guess 1") == 302
    game.refresh_from_db()
    assert game.step_number == 2
    assert [(o.seat.name, o.source, o.canonical) for o in Order.objects.order_by("pk")] == [
        ("ann", "web", "guess 3"),
        ("bob", "web", "guess 1"),
    ]
    rolled = game.rules.state_from_json(game.state).rolls[0]
    report = OutboundEmail.objects.get(dedupe_key=f"report:{game.pk}:2:{ann.position}")
    lines = report.text.splitlines()
    board = lines[lines.index("THE BOARD") + 1 : lines.index("YOUR PRIVATE INFORMATION")]
    points = {name: int(guess == rolled) for name, guess in (("ann", 3), ("bob", 1))}
    assert board == [
        f"  Round 2; the die so far: {rolled}",
        f"  ann: {points['ann']} point{'' if points['ann'] == 1 else 's'}",
        f"  bob: {points['bob']} point{'' if points['bob'] == 1 else 's'}",
        "",
    ]
    syntax = lines.index("HOW TO ORDER") + 1
    assert lines[syntax] == "  One line: guess and a face 1-6, e.g. guess 4"

    # A guess the rules refuse is answered on the page and changes nothing.
    refused = ann_browser.post(
        seat_page(game, ann.position),
        {"step": "2", "seat": str(ann.position), "entry": "blocks", "face": ""},
    )
    assert "Choose a face first." in refused.content.decode()
    assert Order.objects.count() == 2

    # Round 2 ends at the deadline: bob guesses, ann gets the default (guess 1).
    assert post(bob_browser, game, bob, entry="blocks", face="6") == 302
    step = game.steps.get(number=2)
    assert postal.resolve_due_step(step.pk, now=step.deadline)
    game.refresh_from_db()
    assert game.status == Game.Status.FINISHED

    # The record replays to the standings the postal game finished with.
    record = archive.export(game)
    assert record["moves"] == [
        {"player": "ann", "order": "guess 3"},
        {"player": "bob", "order": "guess 1"},
        {"player": "bob", "order": "guess 6"},
        {"deadline": True},
    ]
    path = tmp_path / "guess.json"
    path.write_text(json.dumps(record))
    out = StringIO()
    call_command("replay", str(path), stdout=out)
    replayed = json.loads(out.getvalue())
    state = game.rules.state_from_json(game.state)
    assert replayed["status"] == "finished"
    assert replayed["standings"] == [
        {"player": state.players[s.seat], "place": s.place, "score": s.score}
        for s in game.rules.standings(state) or []
    ]


def test_the_gm_creates_the_game_from_the_new_game_page_with_its_options(
    now: datetime,
) -> None:
    gm = GMFactory.create(is_staff=True)
    client = Client()
    client.force_login(gm)
    ways = client.get("/gm/new/").context["ways"]
    assert [(way.profile.title, way.url) for way in ways][-1] == ("Guess the Die", "/gm/new/guess/")
    form = client.get("/gm/new/guess/").context["form"]
    assert [(f.label, f.initial) for f in form.option_boxes()] == [("Rounds", 2)]
    fields = {
        "title": "Guessing",
        "option_rounds": "3",
        "schedule": "every 24 hours",
        "time_zone": "UTC",
        "players": "ann <ann@example.org>\nbob <bob@example.org>",
    }
    assert client.post("/gm/new/guess/", fields).status_code == 302
    game = Game.objects.get()
    assert (game.engine, game.options) == ("guess", {"rounds": 3})
    page = client.get(f"/gm/{game.pk}/")
    assert page.context["rules"] == ("Guess the Die", [("Rounds", "3")])


def test_the_games_reports_call_a_step_by_the_games_own_word(now: datetime) -> None:
    """Guess the Die calls a step a round (``Engine.step_word``): its reports say "round 2"
    where a Choice game's say "postal turn 2", in the subject, the text and HTML, the footer
    and the calendar file; a German seat reads "Runde 2", "in dieser Runde"."""
    bob = postal.Player("bob", "bob@example.org", language="de")
    game = started_game("guess", now=now, players=["ann", bob], title="Guessing")
    for position in (0, 1):
        postal.accept_order(
            game_id=game.pk, position=position, text="guess 3", source="web", now=now
        )
    english = OutboundEmail.objects.get(dedupe_key=f"report:{game.pk}:2:0")
    assert english.subject == "Guessing: round 2, your order is due Wed 25 Nov 2026 18:00 UTC"
    lines = english.text.splitlines()
    assert lines[0] == "Guessing (Guess the Die by post), round 2"
    assert lines[lines.index("YOUR PRIVATE INFORMATION") + 2] == (
        "  You have sent no order this round yet."
    )
    assert lines[lines.index("HOW OFTEN YOU GET EMAIL") + 1] == (
        "  You get this game's reports every round."
    )
    assert "<title>Guessing, round 2</title>" in english.html
    assert ">Guessing (Guess the Die by post), round 2</h1>" in english.html
    assert (
        '<p id="email-choice" style="margin:16px 0 0;font-size:13px;color:#555">You get '
        "this game's reports every round. "
    ) in english.html
    (attachment,) = english.attachments
    assert attachment["filename"] == "deadline-round-2.ics"
    assert "SUMMARY:Guessing: round 2\\, your order is due\r\n" in attachment["content"]
    german = OutboundEmail.objects.get(dedupe_key=f"report:{game.pk}:2:1")
    assert german.subject == (
        "Guessing: Runde 2, dein Zug ist fällig bis Mi., 25. November 2026, 18:00 UTC"
    )
    lines = german.text.splitlines()
    assert lines[0] == "Guessing (Guess the Die per Post), Runde 2"
    assert lines[lines.index("DEINE GEHEIMEN INFORMATIONEN") + 2] == (
        "  Du hast in dieser Runde noch keinen Zug geschickt."
    )
    assert lines[lines.index("WIE OFT DU E-MAILS BEKOMMST") + 1] == (
        "  Du bekommst die Auswertungen dieses Spiels nach jeder Runde."
    )


def test_a_refused_order_calls_a_step_by_the_games_own_word(now: datetime) -> None:
    """Guess the Die's refusals say "round 2" where a Choice game's say "postal turn 2": an
    order for a round that never opened, one written for a round resolved since, one from a
    seat the round does not ask, one after the deadline; a German seat reads "Runde 2", "in
    dieser Runde". Nothing is recorded."""
    bob = postal.Player("bob", "bob@example.org", language="de")
    game = started_game(
        "guess", now=now, players=["ann", bob], title="Guessing", options={"rounds": 3}
    )

    def refused(position: int, when: datetime, step_number: int | None = None) -> Exception:
        with pytest.raises(postal.OrderRejected) as caught:
            postal.accept_order(
                game_id=game.pk,
                position=position,
                text="guess 3",
                source="web",
                now=when,
                step_number=step_number,
            )
        return caught.value

    assert str(refused(0, now, step_number=5)) == (
        "this form is for round 5, which never opened, so nothing was recorded; reload your "
        "page and send the order from its form"
    )
    for position in (0, 1):
        postal.accept_order(
            game_id=game.pk, position=position, text="guess 3", source="web", now=now
        )
    assert str(refused(0, now, step_number=1)) == (
        "too late: round 1 was resolved at Mon 23 Nov 2026 18:00 UTC when every order was in; "
        "round 2 is open now; new dice were rolled since you wrote it; read the new report "
        "first"
    )
    moved_on = refused(1, now, step_number=1)
    assert isinstance(moved_on, postal.StepMovedOn)
    assert moved_on.happened == (
        "Runde 1 wurde am Mo., 23. November 2026, 18:00 UTC ausgewertet, als alle Züge da "
        "waren; jetzt läuft Runde 2"
    )
    # Round 2 asks ann alone, as a step of a game of turns would: bob owes it no order.
    step = game.steps.get(number=2)
    Step.objects.filter(pk=step.pk).update(
        prompts=[prompt for prompt in step.prompts if prompt["seat"] == 0]
    )
    assert str(refused(1, now)) == (
        "du bist in dieser Runde nicht am Zug, darum wurde nichts gespeichert; die Seite zeigt, "
        "wer am Zug ist"
    )
    late = step.deadline + timedelta(seconds=1)
    assert str(refused(0, late)) == (
        "too late: the deadline passed at Wed 25 Nov 2026 18:00 UTC, so nothing was recorded; "
        "round 2 is being resolved and its report comes by email"
    )
    assert str(refused(1, late)) == (
        "zu spät: der Abgabetermin ist am Mi., 25. November 2026, 18:00 UTC verstrichen, darum "
        "wurde nichts gespeichert; Runde 2 wird gerade ausgewertet, und die Auswertung kommt "
        "per E-Mail"
    )
    assert list(Order.objects.filter(step=step)) == []


def test_a_seats_settings_offer_the_games_reports_every_round(now: datetime) -> None:
    """The seat's settings page says how often its reports come in its game's word, and
    offers the choice so: "every round"."""
    game = started_game("guess", now=now, players=2, title="Guessing")
    ann = Seat.objects.get(game=game, position=0)
    page = browser_of(ann, now).get(f"/play/{game.pk}/0/settings/").content.decode()
    assert (
        '<p id="email-choice">You get this game\'s reports <strong>every round</strong> (the '
        "default of Guess the Die). This page always shows every report.</p>"
    ) in page
    assert re.findall(r'name="reports" value="(\w+)"[^>]*> ([^<]+)</label>', page) == [
        ("every", "Every round"),
        ("owed", "Only when I owe an order, with what happened since"),
        ("digest", "A daily digest of what happened"),
        ("none", "Never: I read them on my seat&#x27;s page"),
    ]
