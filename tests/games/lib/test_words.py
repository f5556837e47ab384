"""The games' words in another language: an engine's English remembers how it was made
(games.engines.text), the service stores that beside the English (Event.message) and says
it in the reader's language (games.lib.words)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from html import unescape

import pytest
from django.template import Context, Template
from django.test import Client
from django.utils import translation

from games import postal
from games.engines.drop_shy.rules import DropShyEngine
from games.engines.liars_dice.rules import LiarsDiceEngine
from games.engines.text import _, data, join, ngettext, render
from games.lib import words
from games.models import Event, Seat
from games.notify import reports
from games.postal import access, steps
from moderator.mail.models import OutboundEmail
from tests.factories import EVERY_HOUR, seat_page, started_game
from tests.games.playing import SeedOnlyDice

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ENGINE = DropShyEngine()
LIARS_DICE = LiarsDiceEngine()

GERMAN = {
    "%(name)s rolls %(dice)s": "%(name)s würfelt %(dice)s",
    " and ": " und ",
    "an ace": "eine Eins",
    "%(count)d die": "%(count)d Würfel (einer)",
    "%(count)d dice": "%(count)d Würfel",
}


def german(text: str) -> str:
    return GERMAN.get(text, text)


def german_plural(singular: str, plural: str, count: int) -> str:
    return german(singular if count == 1 else plural)


def test_the_english_is_a_string_and_remembers_how_it_was_made() -> None:
    rolled = _("%(name)s rolls %(dice)s", name="Ann", dice=join([_("an ace"), "5"], _(" and ")))

    assert rolled == "Ann rolls an ace and 5"
    assert isinstance(rolled, str)
    assert data(rolled) == {
        "t": "%(name)s rolls %(dice)s",
        "a": {
            "name": "Ann",
            "dice": {"j": {"t": " and "}, "i": [{"t": "an ace"}, "5"]},
        },
    }
    assert render(data(rolled), german, german_plural) == "Ann würfelt eine Eins und 5"


def test_a_plural_is_chosen_by_the_count_in_each_language() -> None:
    one, three = (
        ngettext("%(count)d die", "%(count)d dice", 1),
        ngettext("%(count)d die", "%(count)d dice", 3),
    )

    assert (one, three) == ("1 die", "3 dice")
    assert data(three) == {"t": "%(count)d die", "p": "%(count)d dice", "n": 3, "a": {"count": 3}}
    assert render(data(one), german, german_plural) == "1 Würfel (einer)"
    assert render(data(three), german, german_plural) == "3 Würfel"


def test_plain_words_are_said_as_they_are() -> None:
    assert words.message("Ann") is None
    with translation.override("de"):
        assert words.said("Ann") == "Ann"
        assert str(words.Said("Ann")) == "Ann"


def test_said_follows_the_language_active_where_the_words_are_shown() -> None:
    won = words.Said(_("%(name)s has placed every die and wins", name="Ann"))
    page = Template("{{ won }}")

    assert won == "Ann has placed every die and wins"
    assert page.render(Context({"won": won})) == "Ann has placed every die and wins"
    with translation.override("de"):
        assert page.render(Context({"won": won})) == "Ann hat alle Würfel gelegt und gewinnt"
        assert f"{won}" == "Ann hat alle Würfel gelegt und gewinnt"
        assert won.splitlines() == ["Ann hat alle Würfel gelegt und gewinnt"]
        # Comparing still sees the English, as stored.
        assert won == "Ann has placed every die and wins"


@pytest.mark.django_db
def test_a_stored_event_is_said_in_the_readers_language() -> None:
    game = started_game("drop-shy", now=NOW, players=2, title="Shy", options={"dice_per_player": 1})
    state = ENGINE.state_from_json(game.state)
    winner = state.players[state.current]
    order = next(c[0] for c in ENGINE.candidates(state, state.current) if "place" in c[0])
    postal.accept_order(game_id=game.pk, position=state.current, text=order, source="web", now=NOW)

    won = Event.objects.get(game=game, text=f"{winner} has placed every die and wins")
    assert won.message == {"t": "%(name)s has placed every die and wins", "a": {"name": winner}}
    game.refresh_from_db()
    with translation.override("de"):
        said = [str(text) for group in reports.history(game, 0).groups for text in group["events"]]
    assert f"{winner} hat alle Würfel gelegt und gewinnt" in said


def test_a_private_event_is_said_to_an_onlooker_in_the_third_person() -> None:
    told = _("round %(round)d: your dice are %(dice)s", round=1, dice="3 5 2 6 5")

    said = words.onlooker(LIARS_DICE, told, data(told), ["ann"])

    assert (said, str(said)) == ("round 1: ann's dice are 3 5 2 6 5",) * 2
    with translation.override("de"):
        assert str(said) == "Durchgang 1: die Würfel von ann sind 3 5 2 6 5"


def test_a_private_event_told_to_several_seats_names_them_all() -> None:
    told = _("oracle: your claim %(bid)s is false", bid="3 x 5")

    said = words.onlooker(LIARS_DICE, told, data(told), ["ann", "bob"])

    assert said == "oracle: ann, bob's claim 3 x 5 is false"


def test_an_event_that_speaks_to_no_one_is_said_to_an_onlooker_as_it_was_told() -> None:
    receipt = _("order received: %(order)s", order="bid 3 5")

    assert words.onlooker(LIARS_DICE, receipt, data(receipt), ["ann"]) == "order received: bid 3 5"
    # Plain English, written before the words were kept: as stored.
    plain = "round 1: your dice are 3 5 2 6 5"
    assert words.onlooker(LIARS_DICE, plain, None, ["ann"]) == plain


def latest_report(html: str) -> list[str]:
    found = re.search(r'<section id="report">(.*?)</section>', html, re.S)
    assert found is not None, "no latest report on the page"
    return [unescape(item) for item in re.findall(r"<li>(.*?)</li>", found.group(1))]


def owed(html: str) -> str:
    found = re.search(r'<p id="owed">(.*?)<br>', html, re.S)
    assert found is not None, "no owed order on the page"
    return unescape(found.group(1)).strip()


@pytest.mark.django_db
def test_one_game_is_read_by_each_seat_in_its_own_language(
    now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The events are stored once; bob's German seat reads them, the engine's prompt and
    its menu in German, ann's English seat in English."""
    monkeypatch.setattr(steps, "VerifiableDice", SeedOnlyDice)
    game = started_game(
        "liars-dice",
        now=now,
        players=["ann", "bob"],
        options={"profile": "classic", "dice_per_player": 2},
        schedule_spec=EVERY_HOUR,
    )
    Seat.objects.filter(game=game, position=1).update(language="de")
    assert game.steps.get(number=game.step_number).prompted_seats == [0]
    postal.accept_order(game_id=game.pk, position=0, text="bid 1 5", source="web", now=now)
    pages = {}
    for position in (0, 1):
        client = Client()
        seat = Seat.objects.get(game=game, position=position)
        assert client.post(f"/p/{access.mint([seat], now=now)[position]}/").status_code == 302
        pages[position] = client.get(seat_page(game, position)).content.decode()

    assert latest_report(pages[0]) == [
        "round 1: dice in play: ann 2, bob 2; ann opens",
        "round 1: your dice are 3 5",
        "round 1: ann bids 1 x 5",
    ]
    assert latest_report(pages[1]) == [
        "Durchgang 1: Würfel im Spiel: ann 2, bob 2; ann eröffnet",
        "Durchgang 1: deine Würfel sind 2 6",
        "Durchgang 1: ann bietet 1 x 5",
    ]
    assert owed(pages[1]) == (
        "Gebot oder Anzweifeln: Durchgang 1, Zug 2: erhöhe 1 x 5 (ann) oder zweifle an (liar)"
    )
    form = pages[1][pages[1].index('id="menu-form"') :]
    form = form[: form.index("</form>")]
    assert re.findall(r"<legend>(.*?)</legend>", form) == ["Dein Gebot"]
    assert "Vorausgewählt: das niedrigste erlaubte Gebot, 1 x 6." in form
    # The order words stay the game's syntax in both languages.
    assert re.findall(r'name="pick_button" value="(\w+)">(.*?)</button>', form) == [
        ("bid", "Bieten"),
        ("liar", "liar: das letzte Gebot anzweifeln"),
    ]
    # Each seat's report email of the step says the bid in its language.
    report = OutboundEmail.objects.get(dedupe_key=f"report:{game.pk}:2:1")
    assert "Durchgang 1: ann bietet 1 x 5" in report.text
    assert "round 1: ann bids 1 x 5" not in report.text
    stored = Event.objects.get(game=game, text="round 1: ann bids 1 x 5")
    assert stored.message == {
        "t": "round %(round)d: %(name)s bids %(bid)s",
        "a": {"round": 1, "name": "ann", "bid": "1 x 5"},
    }


def test_an_engines_view_is_shown_with_its_words_in_the_pages_language() -> None:
    won = _("%(name)s has placed every die and wins", name="Ann")
    view = {"events": [won], "cells": (1, 2), "names": ["Ann"]}

    assert words.shown(view) is view
    with translation.override("de"):
        shown = words.shown(view)
        assert [str(text) for text in shown["events"]] == ["Ann hat alle Würfel gelegt und gewinnt"]
        assert (shown["cells"], shown["names"]) == ((1, 2), ["Ann"])


@pytest.mark.parametrize(
    ("language", "said"),
    [
        (
            "en",
            {
                "postal turn": ("postal turn 5", "this postal turn", "every postal turn"),
                "turn": ("turn 5", "this turn", "every turn"),
                "round": ("round 5", "this round", "every round"),
            },
        ),
        (
            "de",
            {
                "postal turn": ("Postzug 5", "in diesem Postzug", "nach jedem Postzug"),
                "turn": ("Zug 5", "in diesem Zug", "nach jedem Zug"),
                "round": ("Runde 5", "in dieser Runde", "nach jeder Runde"),
            },
        ),
    ],
)
def test_a_step_is_said_in_its_games_word_with_its_number_this_one_and_every_one(
    language: str, said: dict[str, tuple[str, str, str]]
) -> None:
    template = Template(
        "{% load steps %}{{ 5|step_name:word }}|{{ word|this_step }}|{{ word|every_step }}"
    )
    with translation.override(language):
        assert {
            word: tuple(template.render(Context({"word": word})).split("|")) for word in said
        } == said


def test_a_stored_line_names_the_step_as_its_game_does_and_older_lines_still_translate() -> None:
    line = _("The GM resolved %(step)s early", step=words.step_words("postal turn", 3))
    assert str(line) == "The GM resolved postal turn 3 early"
    with translation.override("de"):
        assert words.said(line) == "Der Spielleiter hat Postzug 3 vorzeitig ausgewertet"
        # A line stored before steps had their game's word keeps its translation.
        earlier = {"t": "The GM resolved step %(number)d early", "a": {"number": 3}}
        assert words.said("The GM resolved step 3 early", earlier) == (
            "Der Spielleiter hat Runde 3 vorzeitig ausgewertet"
        )
    assert [str(words.step_words(word, 2)) for word in ("turn", "round", "postal turn")] == [
        "turn 2",
        "round 2",
        "postal turn 2",
    ]
