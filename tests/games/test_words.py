"""The games' words in another language: an engine's English remembers how it was made
(games.engines.text), the service stores that beside the English (Event.message) and says
it in the reader's language (games.words)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.template import Context, Template
from django.utils import translation

from games import postal, reports, words
from games.engines.drop_shy.rules import DropShyEngine
from games.engines.text import _, data, join, ngettext, render
from games.models import Event
from tests.factories import GMFactory

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SEED = bytes(range(32))
ENGINE = DropShyEngine()

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
        # Comparing still sees the English, as stored.
        assert won == "Ann has placed every die and wins"


@pytest.mark.django_db
def test_a_stored_event_is_said_in_the_readers_language() -> None:
    game = postal.create_game(
        gm=GMFactory.create(),
        engine_key="drop-shy",
        title="Shy",
        players=[postal.Player(name, f"{name}@example.org") for name in ("ann", "bob")],
        options={"dice_per_player": 1},
    )
    game = postal.start_game(game.pk, now=NOW, seed=SEED)
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
