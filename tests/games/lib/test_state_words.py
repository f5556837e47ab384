"""Words a game keeps in its state (Liar's Dice's round results, Dice Survivor's recent
actions) are stored with how they were made (games.engines.base's codec, a field hinted
``Text``), so each seat reads them in its own language; a state stored before that, with
their English alone, still loads, replays, exports and verifies."""

from __future__ import annotations

import re
from datetime import datetime
from html import unescape
from typing import Any

import pytest
from django.test import Client

from games import postal
from games.engines import dice
from games.engines.text import render
from games.models import Game, Seat
from games.postal import access, steps
from games.records import archive
from moderator.mail.models import OutboundEmail
from tests.factories import EVERY_HOUR, seat_page, started_game
from tests.games.playing import SeedOnlyDice

pytestmark = pytest.mark.django_db

RESULT = "bob challenges ann's 1 x 5: there are 1 5s with ones, the bid holds"


@pytest.fixture(autouse=True)
def seed_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every die (drawn, replayed, verified) from the seed alone, as if each game were
    game 1: what a seed gives does not follow the tests run before."""
    real = dice.face

    def face(seed: bytes, game_id: int, index: int, sides: int) -> int:
        return real(seed, 1, index, sides)

    monkeypatch.setattr(steps, "VerifiableDice", SeedOnlyDice)
    monkeypatch.setattr(dice, "face", face)
    monkeypatch.setattr(archive, "face", face)


def page(game: Game, position: int, now: datetime) -> str:
    client = Client()
    seat = Seat.objects.get(game=game, position=position)
    assert client.post(f"/p/{access.mint([seat], now=now)[position]}/").status_code == 302
    return unescape(client.get(seat_page(game, position)).content.decode())


def revealed(html: str) -> tuple[str, str]:
    """The heading and the result of the board's last revealed round."""
    found = re.search(r'<h3[^>]*>([^<]*)</h3>\s*<p[^>]*>([^<]*)</p>\s*<table id="cups"', html)
    assert found is not None, "no revealed round on the page"
    return found[1], found[2]


def challenged(now: datetime, dice_per_player: int) -> Game:
    """ann and bob: ann bids 1 x 5, bob challenges (the bid holds); bob reads German."""
    game = started_game(
        "liars-dice",
        now=now,
        players=["ann", "bob"],
        options={"profile": "classic", "dice_per_player": dice_per_player},
        schedule_spec=EVERY_HOUR,
    )
    Seat.objects.filter(game=game, position=1).update(language="de")
    postal.accept_order(game_id=game.pk, position=0, text="bid 1 5", source="web", now=now)
    postal.accept_order(game_id=game.pk, position=1, text="liar", source="web", now=now)
    game.refresh_from_db()
    return game


def test_a_round_result_is_read_in_each_seats_language(now: datetime) -> None:
    game = challenged(now, dice_per_player=2)

    assert revealed(page(game, 0, now)) == ("Round 1 revealed", RESULT)
    assert revealed(page(game, 1, now)) == (
        "Durchgang 1 aufgedeckt",
        "bob zweifelt das Gebot 1 x 5 von ann an: es gibt 1 Fünfen mit Einsen, das Gebot hält",
    )
    # Stored once, as the words were made.
    state = game.state
    assert state is not None
    assert state["last"]["result"] == {
        "t": "%(name)s challenges %(bidder)s's %(bid)s: there are %(found)d %(counted)s, "
        "the bid holds",
        "a": {
            "name": "bob",
            "bidder": "ann",
            "bid": "1 x 5",
            "found": 1,
            "counted": {"t": "%(faces)s with ones", "a": {"faces": {"t": "5s"}}},
        },
    }
    assert state["results"] == [
        {
            "t": "round %(round)d: %(result)s",
            "a": {"round": 1, "result": state["last"]["result"]},
        }
    ]
    # The board of bob's report email says it in German too.
    report = OutboundEmail.objects.get(dedupe_key=f"report:{game.pk}:3:1")
    assert (
        "  Durchgang 1: bob zweifelt das Gebot 1 x 5 von ann an: es gibt 1 Fünfen mit Einsen, "
        "das Gebot hält"
    ) in report.text.splitlines()


def english(words: Any) -> str:
    return render(words, str, lambda one, many, count: one if count == 1 else many)


def written_before(state: Any) -> Any:
    """``state`` as it was stored before the game kept its words: their English alone."""
    if state is None or state.get("last") is None:
        return state
    return {
        **state,
        "results": [english(result) for result in state["results"]],
        "last": {**state["last"], "result": english(state["last"]["result"])},
    }


def test_a_state_stored_with_english_words_loads_exports_and_verifies(now: datetime) -> None:
    game = challenged(now, dice_per_player=1)
    assert game.status == Game.Status.FINISHED
    exported = archive.export(game)
    for step in game.steps.all():
        step.state_before = written_before(step.state_before)
        step.state_after = written_before(step.state_after)
        step.save(update_fields=["state_before", "state_after"])
    Game.objects.filter(pk=game.pk).update(state=written_before(game.state))
    game.refresh_from_db()
    assert game.state is not None and game.state["results"] == [f"round 1: {RESULT}"]

    assert archive.export(game) == exported
    assert archive.verify(game).problems == []
    # The German seat reads the English that was stored: nothing else is known of it.
    assert revealed(page(game, 1, now)) == ("Durchgang 1 aufgedeckt", RESULT)


def recent(html: str) -> list[str]:
    """The lines of the board's recent actions, tags dropped, each die drawn read as its
    name and each seat's swatch left out."""
    found = re.search(r'border-left:3px solid #bbb">(.*?)</div>\n</div>', html, re.S)
    assert found is not None, "no recent actions on the page"
    named = re.sub(r'<svg class="die" [^>]*aria-label="([^"]+)">.*?</svg>', r"\1", found[1])
    unswatched = re.sub(r'<span class="swatch" [^>]*>\xa0</span>', "", named)
    lines = (re.sub(r"<[^>]+>", "", line).strip() for line in unswatched.splitlines())
    return [line for line in lines if line]


def test_dice_survivors_recent_actions_are_read_in_each_seats_language(now: datetime) -> None:
    game = started_game("dice-survivor", now=now, schedule_spec=EVERY_HOUR)
    active = game.steps.get(number=game.step_number).prompts[0]["seat"]
    names = dict(Seat.objects.filter(game=game).values_list("position", "name"))
    assert (active, names[0]) == (1, "ann")
    Seat.objects.filter(game=game, position=0).update(language="de")
    postal.accept_order(game_id=game.pk, position=1, text="challenge ann", source="web", now=now)

    assert recent(page(game, 1, now)) == [
        "Turn 1, bob: challenge ann",
        "bob 20 (d20) + 5 PP = 25; ann 5 (d12) 1 (d8) (keeps 1) + 5 PP = 6: natural 20",
        "Result: natural 20: ann gives bob 1 PP: bob 6, ann 4",
    ]
    assert recent(page(game, 0, now)) == [
        "Zug 1, bob: challenge ann",
        "bob 20 (d20) + 5 SP = 25; ann 5 (d12) 1 (d8) (behält 1) + 5 SP = 6: natürliche 20",
        "Ergebnis: natürliche 20: ann gibt bob 1 SP: bob 6, ann 4",
    ]
