"""Dice Survivor in German: the engine's English remembers how it was made
(games.engines.text), and ``games.lib.words.said`` says it with the game's catalogue
(games/engines/dice_survivor/locale) and the one the games share (games/engines/locale).
No database: the engine is pure and the catalogues are files."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import polib
import pytest
from django.utils import translation

from games.engines import dice_survivor as engine_module
from games.engines.base import Dice, DiceError, Event, GameError, OptionsError, OrderError
from games.engines.dice import ScriptedDice, VerifiableDice
from games.engines.dice_survivor import conditions
from games.engines.dice_survivor.autopilot import STRATEGIES
from games.engines.dice_survivor.rules import (
    SETTINGS,
    DiceSurvivorEngine,
    SurvivorOptions,
    SurvivorState,
)
from games.engines.text import Text, data
from games.lib.words import said
from tests.games.engines.test_dice_survivor import NAMES, game, play, rejected, seat

engine = DiceSurvivorEngine()


def german(text: Any) -> str:
    with translation.override("de"):
        return said(text)


def german_events(events: list[Event]) -> list[str]:
    return [german(event.text) for event in events]


def german_prompt(state: SurvivorState) -> tuple[str, str]:
    (prompt,) = engine.prompts(state)
    return german(prompt.kind), german(prompt.hint)


def test_a_short_game_is_told_in_german() -> None:
    """The game of rules section 11.1, event by event."""
    dice = ScriptedDice(
        [9, 14, 14, 6, 11, 1, 7, 3, 13, 5, 8, 4, 8, 8, 11, 2, 6, 20, 1, 1, 17, 3, 2]
    )
    state, events = engine.start(SurvivorOptions(), NAMES[:3], dice)
    assert german_events(events) == [
        "Initiative: ann 9, bob 14, cy 14; Stechwurf: bob 6, cy 11; cy ist Spieler 1. "
        "Zugreihenfolge: cy, ann, bob. Alle beginnen mit 5 SP",
        "Zug 1: cy ist an der Reihe (2 Aktionen)",
    ]
    assert german_prompt(state) == (
        "Aktion",
        "Zug 1, Aktion 1 von 2: challenge <player> [double], extra, ko <player> oder pass",
    )

    def send(name: str, text: str) -> list[str]:
        nonlocal state
        order = engine.parse(state, seat(name), text)
        state, events = engine.submit(state, seat(name), order, dice)
        return german_events(events)

    assert send("cy", "challenge ann") == [
        "cy: challenge ann\n"
        "cy d20 1 + 5 SP = 6; ann d12/d8 7/3 (behält 3) + 5 SP = 8: natürliche 1\n"
        "natürliche 1: cy gibt ann 1 SP: cy 4, ann 6",
        "Zug 1: cy macht weiter mit Aktion 2 von 2",
    ]
    assert german_prompt(state) == (
        "Aktion",
        "Zug 1, Aktion 2 von 2: challenge <player>, extra oder pass",
    )
    assert send("cy", "challenge bob") == [
        "cy: challenge bob\n"
        "cy d20 13 + 4 SP = 17; bob d12/d8 5/8 (behält 5) + 5 SP = 10: bob niedriger\n"
        "bob hat verloren und wird gefragt: Revanche (noch 3) oder annehmen (1 SP zahlen)"
    ]
    assert german_prompt(state) == (
        "Revanche oder annehmen",
        "Zug 1: du hast die Herausforderung von cy verloren (Einsatz 1): rematch (noch 3) "
        "oder accept (1 SP zahlen)",
    )
    assert send("bob", "rematch") == [
        "bob: rematch\ncy d20 4 + 4 SP = 8; bob d12/d8 8/8 (behält 8) + 5 SP = 13: bob höher\n"
        "cy zahlt 1 SP: cy 3",
        "Zug 2: ann ist an der Reihe (2 Aktionen)",
    ]
    assert send("ann", "ko cy") == [
        "ann: ko cy\nann d20 11 + 6 SP = 17; cy d12/d8 2/6 (behält 2) + 3 SP = 5: ann höher\n"
        "cy verliert alle SP und ist k.o.",
        "cy scheidet aus",
        "Zug 3: bob ist an der Reihe (2 Aktionen)",
    ]
    assert send("bob", "challenge ann double") == [
        "bob: challenge ann double\n"
        "bob d20 20 + 5 SP = 25; ann d12/d8 1/1 (behält 1) + 6 SP = 7: natürliche 20\n"
        "natürliche 20: ann gibt bob 1 SP: bob 6, ann 5",
        "Zug 4: ann ist an der Reihe (2 Aktionen)",
    ]
    assert german_prompt(state) == (
        "Aktion",
        "Zug 4, Aktion 1 von 2: challenge <player> [double], extra oder pass",
    )
    assert send("ann", "pass") == [
        "ann: pass\nann beendet den Zug",
        "Zug 5: bob ist an der Reihe (2 Aktionen)",
    ]
    assert send("bob", "ko ann")[-2:] == [
        "ann scheidet aus",
        "das Spiel ist vorbei: 1. bob (6); 2. ann (0); 3. cy (0)",
    ]
    assert german(rejected(state, "bob", "pass")) == (
        "das Spiel ist vorbei; von dir wird kein Zug erwartet"
    )
    with pytest.raises(GameError) as excinfo:
        engine.resolve(state, ScriptedDice([]))
    assert german(excinfo.value.message) == "das Spiel ist vorbei; es gibt nichts mehr auszuwerten"


def test_the_english_stays_as_it_was() -> None:
    __, events = play(game([5, 4, 5]), "ann", "extra", [3])
    assert [event.text for event in events] == [
        "ann: extra\nann d20 3 + 5 PP = 8: below 10\nann gains nothing",
        "turn 7: ann goes on with action 2 of 2",
    ]
    assert german_events(events) == [
        "ann: extra\nann d20 3 + 5 SP = 8: unter 10\nann erhält nichts",
        "Zug 7: ann macht weiter mit Aktion 2 von 2",
    ]
    with translation.override("en"):
        assert said(events[0].text) == events[0].text


def test_a_finals_turn_has_one_action_and_losers_are_joined() -> None:
    """The plural of actions with 1 (a Finals turn) and 2 (above), and of losers with one and
    with two, joined by "und"."""
    finals = game([5, 5, 5, 0, 0, 0], finals=True)

    __, events = play(finals, "ann", "challenge d12=bob", [10, 10, 2])
    assert german_events(events) == [
        "ann: challenge d12=bob\n"
        "ann d20 10 + 5 SP = 15; bob d12 10 + 5 SP = 15; cy d8 2 + 5 SP = 7: "
        "cy unter der höchsten Summe 15\n"
        "cy verliert 1 SP: cy 4",
        "Finale, Zug 8: bob ist an der Reihe (1 Aktion)",
    ]

    state, events = play(finals, "ann", "challenge d12=bob", [10, 3, 2])
    assert german_events(events)[0].endswith(
        "bob und cy unter der höchsten Summe 15\nbob und cy verlieren 1 SP: bob 4, cy 4"
    )
    assert german_prompt(state) == (
        "Aktion im Finale",
        "Finale, Zug 8, Aktion 1 von 1: challenge d12=<player> oder ko <player>",
    )


def test_order_errors_are_german() -> None:
    state = game([5, 5, 5])

    assert german(rejected(state, "bob", "pass")) == (
        "du bist nicht an der Reihe: wir warten auf ann"
    )
    assert german(rejected(state, "ann", "dance")) == (
        "„dance“ ist kein Zug: schreib challenge <player> [double], extra, ko <player> oder pass"
    )
    assert german(rejected(state, "ann", "challenge zed")) == (
        "challenge: es gibt keinen Spieler „zed“; die Spieler sind ann, bob, cy"
    )
    assert german(rejected(state, "ann", "ko ann")) == "du kannst dich nicht selbst k.o. schlagen"
    assert german(rejected(state, "ann", "pass\nextra")) == (
        "ein Zug pro Nachricht: diese Nachricht hat 2 Zugzeilen; "
        "schick jede Aktion in einer eigenen Nachricht"
    )
    # The words every game shares (games/engines/locale).
    assert german(rejected(state, "ann", "x" * 121)) == (
        "Zeile 1: 121 Zeichen sind zu lang für eine Zugzeile (höchstens 120)"
    )
    assert german(rejected(state, "ann", "pass\x07")) == (
        "Zeile 1: das Zeichen U+0007 kann nicht gelesen werden; schreib den Zug als einfachen Text"
    )


def test_options_and_their_errors_are_german() -> None:
    options = engine.options({"ko_half": "ceil"})

    assert [(german(label), german(words)) for label, words in SETTINGS.describe({}, options)] == [
        ("Spielpunkte zu Beginn", "5"),
        ("Revanchen pro Spieler", "3"),
        ("Ein gescheiterter K.o. kostet", "die Hälfte der Spielpunkte, aufgerundet"),
        ("Der Würfel des Verteidigers beim K.o.", "der niedrigere von d12 und d8"),
        ("Im Finale zählen die Spielpunkte mit", "ja"),
        ("Zuggrenze", "300"),
    ]
    assert german(SETTINGS.options[1].help) == (
        "Revanchen, die jeder Spieler pro Spiel fordern darf."
    )
    refusals: list[tuple[dict[str, Any], str]] = [
        ({"start_pp": 0}, "Option start_pp muss 1-20 sein, nicht 0"),
        ({"ko_half": "round"}, "Option ko_half muss eines von floor, ceil sein, nicht 'round'"),
        (
            {"turn_cap": 19},
            "Option turn_cap muss 0 (aus) oder eine ganze Zahl 20-5000 sein, nicht 19",
        ),
    ]
    for bad, words in refusals:
        with pytest.raises(OptionsError) as excinfo:
            engine.options(bad)
        assert german(excinfo.value.message) == words
    with pytest.raises(OptionsError) as excinfo:
        engine.start(SurvivorOptions(), NAMES[:2], ScriptedDice([]))
    assert german(excinfo.value.message) == (
        "Dice Survivor wird mit 3 bis 8 Spielern gespielt, nicht mit 2"
    )


def test_menu_labels_confirmation_and_autopilot_are_german() -> None:
    state = game([5, 5, 5])

    assert [(text, german(label)) for text, label in engine.candidates(state, 0)] == [
        ("pass", "passen: deinen Zug beenden"),
        ("extra", "extra: einen Extra-Spielpunkt holen"),
        ("challenge bob", "bob herausfordern (Einsatz 1)"),
        ("challenge cy", "cy herausfordern (Einsatz 1)"),
        ("challenge bob double", "bob doppelt herausfordern (Einsatz 2)"),
        ("challenge cy double", "cy doppelt herausfordern (Einsatz 2)"),
        ("ko bob", "K.o. gegen bob (beide Aktionen, einmal pro Spiel)"),
        ("ko cy", "K.o. gegen cy (beide Aktionen, einmal pro Spiel)"),
    ]
    assert german(engine.confirmation(state, 0, "ko bob")) == (
        "Ja, ich setze meinen einzigen K.o. des Spiels gegen bob ein"
    )
    (odds,) = STRATEGIES
    assert german(odds.title) == (
        "Chancen: erst der Extra-Spielpunkt, dann nur herausfordern, wenn ein Sieg "
        "wahrscheinlicher ist"
    )


# --- every word of whole games ------------------------------------------------------------

RECORDS = Path(__file__).resolve().parents[1] / "records"
CATALOGUE = Path(engine_module.__file__).parent / "locale" / "de" / "LC_MESSAGES" / "django.po"
Step = Callable[[SurvivorState], tuple[SurvivorState, list[Event]] | None]


def templates(value: Any) -> Iterator[tuple[str, str | None]]:
    """Every (template, plural) in ``data(text)``'s JSON."""
    if not isinstance(value, dict):
        return
    if "j" in value:
        yield from templates(value["j"])
        for part in value["i"]:
            yield from templates(part)
        return
    yield value["t"], value.get("p")
    for argument in value.get("a", {}).values():
        yield from templates(argument)


def probes(state: SurvivorState) -> list[str]:
    """Orders, good and bad, to try from every seat."""
    first, second = state.players[:2]
    texts = ["pass", "extra", "rematch", "accept", "challenge", "ko", "dance", "pass now", ""]
    texts += ["pass\nextra", "x" * 121, "pass\x07", f"challenge {first} twice"]
    texts += [f"challenge {first} {second}", f"ko {first} {second}"]
    for name in [*state.players, "zed"]:
        texts += [f"challenge {name}", f"challenge {name} double", f"challenge d12={name}"]
        texts += [f"ko {name}"]
    return texts


def refusals(state: SurvivorState) -> list[str]:
    """What every seat (and one past the last) hears for every probe, and for a default."""
    refused = []
    for position in range(len(state.players) + 1):
        for text in probes(state):
            try:
                engine.parse(state, position, text)
            except OrderError as error:
                refused.append(error.message)
        try:
            engine.default(state, position)
        except OrderError as error:
            refused.append(error.message)
    return refused


def told(state: SurvivorState, events: list[Event], step: Step, dice: Dice) -> list[Any]:
    """Everything a game says from ``state`` on, ``step`` playing each owed order."""
    spoken: list[Any] = [event.text for event in events]
    while engine.prompts(state):
        (prompt,) = engine.prompts(state)
        spoken += [prompt.kind, prompt.hint, *refusals(state)]
        spoken += [label for __, label in engine.candidates(state, prompt.seat)]
        spoken.append(engine.confirmation(state, prompt.seat, f"ko {state.players[0]}"))
        played = step(state)
        if played is None:
            return spoken
        state, events = played
        spoken += [event.text for event in events]
    with pytest.raises(GameError) as over:
        engine.resolve(state, dice)
    return [*spoken, over.value.message, *refusals(state)]


def recorded_games() -> list[Any]:
    """What the recorded games of Dice Survivor say (tests/games/records)."""
    spoken: list[Any] = []
    for path in sorted(RECORDS.glob("dice_survivor_*.json")):
        record = json.loads(path.read_text())
        dice = ScriptedDice(record["dice"])
        options = engine.options(record["options"])
        state, events = engine.start(options, record["players"], dice)
        spoken += told(state, events, recorded(iter(record["moves"]), dice), dice)
    return spoken


def recorded(moves: Iterator[dict[str, Any]], dice: ScriptedDice) -> Step:
    """The record's ``moves`` one by one: an order, or a missed deadline."""

    def step(state: SurvivorState) -> tuple[SurvivorState, list[Event]] | None:
        move = next(moves, None)
        if move is None:
            return None
        if move.get("deadline"):
            return engine.resolve(state, dice)
        position = state.players.index(move["player"])
        order = engine.parse(state, position, move["order"])
        return engine.submit(state, position, order, dice)

    return step


def random_games() -> list[Any]:
    """What games of random legal orders and missed deadlines say: to the end, through the
    Finals, to the turn cap, with no rematches."""
    spoken: list[Any] = []
    setups: list[tuple[int, dict[str, Any]]] = [
        (3, {"start_pp": 2, "rematches": 0}),
        (6, {"start_pp": 6, "rematches": 1, "finals_add_pp": False}),
        (8, {"start_pp": 20, "ko_half": "ceil", "ko_defender": "higher", "turn_cap": 20}),
    ]
    for number, (players, options) in enumerate(setups):
        dice = VerifiableDice(bytes(32), game_id=number + 1)
        state, events = engine.start(engine.options(options), NAMES[:players], dice)
        spoken += told(state, events, at_random(random.Random(number), dice), dice)
    return spoken


def at_random(rng: random.Random, dice: VerifiableDice) -> Step:
    """A legal order picked by ``rng``, or (one time in five) a missed deadline."""

    def step(state: SurvivorState) -> tuple[SurvivorState, list[Event]]:
        if rng.random() < 0.2:
            return engine.resolve(state, dice)
        (prompt,) = engine.prompts(state)
        order = rng.choice(engine.legal_orders(state, prompt.seat))
        return engine.submit(state, prompt.seat, order, dice)

    return step


def rare_moments() -> list[Any]:
    """Throws the games above may miss: the Finals' naturals, a failed Extra Play Point, a
    tie thrown again."""
    finals = game([5, 5, 5, 0, 0, 0], finals=True)
    spoken: list[Any] = []
    for state, name, text, dice in [
        (finals, "ann", "challenge d12=bob", [1, 5, 5]),
        (finals, "ann", "challenge d12=bob", [20, 5, 5]),
        (game([3, 5, 5]), "ann", "extra", [2]),
        (game([3, 5, 5]), "ann", "challenge bob", [10, 8, 8, 12, 3, 4]),
    ]:
        __, events = play(state, name, text, dice)
        spoken += [event.text for event in events]
    return spoken


def settings_said() -> list[Any]:
    """The words of the options, their refusals and the autopilot, and a broken record's."""
    spoken: list[Any] = [SETTINGS.profiles[0].summary]
    for option in SETTINGS.options:
        spoken += [option.label, option.help, *(words for __, words in option.choices)]
        spoken += [option.words(True), option.words(False)] if option.kind == "flag" else []
    spoken += [words for strategy in STRATEGIES for words in (strategy.title, strategy.summary)]
    bad: list[Any] = [{"start_pp": "5"}, {"start_pp": 0}, {"ko_half": 1}, {"finals_add_pp": 1}]
    bad += [{"turn_cap": 2}, {"colour": "red"}, []]
    for options in bad:
        with pytest.raises(OptionsError) as refused:
            engine.options(options)
        spoken.append(refused.value.message)
    with pytest.raises(OptionsError) as refused:
        engine.start(SurvivorOptions(), NAMES[:2], ScriptedDice([]))
    spoken.append(refused.value.message)
    for broken in ([], [21]):
        with pytest.raises(DiceError) as broke:
            engine.start(SurvivorOptions(), NAMES[:3], ScriptedDice(broken))
        spoken.append(broke.value.message)
    return spoken


def conditions_said() -> list[Any]:
    """What its conditional orders say (games/engines/dice_survivor/conditions.py): each
    refusal, each reason to disarm one, and the hint the seat's page shows."""
    spoken: list[Any] = [conditions.CONDITIONS.hint]
    state = game([5, 4, 5])
    for position, state_of, text in [
        (0, state, "if challenged: rematch"),
        (1, state, "if challenged: fold"),
        (1, state, "rematch"),
        (1, state, "if challenged for 3 or more: rematch"),
        (1, state, "if challenged: rematch; accept"),
        (1, game([5, 4, 5], rematches_used=(0, 3, 0)), "if challenged: rematch"),
        (1, game([5, 0, 5]), "if challenged: rematch"),
        (1, game([5, 4, 0], finals=True), "if challenged: rematch"),
        (1, replace(state, finished=True), "if challenged: rematch"),
    ]:
        try:
            conditions.parse(state_of, position, text)
        except OrderError as error:
            spoken.append(error.message)
    single = conditions.parse(state, 1, "if challenged for 2 or more: rematch")
    asked, __ = play(state, "ann", "challenge bob", [12, 9, 3])
    over, __ = play(state, "ann", "pass")
    spoken += [
        conditions.play(asked, 1, single).reason,
        conditions.play(over, 1, single).reason,
        conditions.play(replace(state, finished=True), 1, single).reason,
    ]
    return spoken


@pytest.fixture(scope="module")
def spoken() -> list[Any]:
    """Everything Dice Survivor says in whole games, and about its options."""
    everything = (
        recorded_games() + random_games() + rare_moments() + settings_said() + conditions_said()
    )
    return [words for words in everything if words]


def test_everything_the_engine_says_remembers_how_it_was_made(spoken: list[Any]) -> None:
    assert [words for words in spoken if not isinstance(words, Text)] == []


def test_every_template_of_whole_games_is_german(spoken: list[Any]) -> None:
    seen = {template for words in spoken for template in templates(data(words))}
    with translation.override("de"):
        english = [
            template
            for template, plural in seen
            if translation.gettext(template) == template
            or (plural is not None and translation.ngettext(template, plural, 2) == plural)
        ]
    assert english == []
    # And so no text of a whole game reads in German as it does in English.
    assert [words for words in spoken if german(words) == words] == []


def test_the_catalogue_holds_what_the_games_say(spoken: list[Any]) -> None:
    """Every entry of the game's catalogue that its rules write is said somewhere in the
    games above: none is stale, and the games reach every kind of text. (The catalogue
    also holds the words of the game's templates, which pages and emails say.)"""
    seen = {template for words in spoken for template, __ in templates(data(words))}
    assert msgids(CATALOGUE) - seen == set()


def msgids(path: Path) -> set[str]:
    """The msgids of a .po file that the game's Python modules write, not its templates
    or its order form."""
    return {
        entry.msgid
        for entry in polib.pofile(str(path))
        if not entry.obsolete
        and any(
            name.endswith(".py") and not name.endswith("forms.py") for name, __ in entry.occurrences
        )
    }
