"""Choice and its Suppenkasper variant in German: the engine's events, prompts, order errors,
options and autopilot said through the game's own catalogue (games/engines/choice/locale),
and every text of whole scripted games, and every template of the engine, translated."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from games.engines.base import Event, OrderError
from games.engines.choice import autopilot, rules
from games.engines.choice.rules import ChoiceEngine, ChoiceState, Sheet
from games.engines.dice import NoDice, ScriptedDice
from tests.games.engines import test_choice as standard
from tests.games.engines import test_suppenkasper as suppenkasper
from tests.games.engines.german import german, source_templates, templates, untranslated
from tests.games.engines.test_suppenkasper_games import play_game_112

engine = ChoiceEngine()


def refused(text: str, state: ChoiceState) -> str:
    """The German of the message that refuses ``text`` (parsed, then submitted)."""
    with pytest.raises(OrderError) as excinfo:
        engine.submit(state, 0, engine.parse(state, 0, text), NoDice())
    return german(excinfo.value.message)


# --- events --------------------------------------------------------------------------------


def test_a_standard_game_is_told_in_german() -> None:
    state, log, _dice = standard.play_full_game("shared")

    assert state.finished
    assert [german(event.text) for event in log[0]] == [
        "Runde 1, Würfe 1-2: Wurf 1 zeigt 1 6 6 6 6; Wurf 2 zeigt 1 6 6 6 6"
    ]
    assert [german(event.text) for event in log[2]] == [
        "ann, Wurf 3: W1 6+6 6+6 (Summen 12, 12)",
        "bob, Wurf 3: W6 1+6 6+6 (Summen 7, 12)",
        "cy, Wurf 3: W6 1+6 6+6 (Summen 7, 12)",
        "das Spiel von ann endet im Wurf 3 mit 100 Punkten",
        "das Spiel von cy endet im Wurf 3 mit -400 Punkten",
        "bob, Wurf 4: W6 6+6 6+6 (Summen 12, 12)",
        "Runde 3, Würfe 5-6: Wurf 5 zeigt 1 6 6 6 6; Wurf 6 zeigt 6 6 6 6 6",
    ]
    assert [german(event.text) for event in log[3]] == [
        "bob, Wurf 5: W6 1+6 6+6 (Summen 7, 12)",
        "das Spiel von bob endet im Wurf 5 mit 100 Punkten",
        "das Spiel ist vorbei: 1. ann (100); 1. bob (100); 3. cy (-400)",
    ]


def test_the_plate_and_the_dog_are_told_in_german() -> None:
    log = play_game_112()[1]

    assert [german(event.text) for event in log[1][:2]] == [
        "ann, Wurf 1: flip 2 W5 1+3 4+6 (Summen 4, 10); 2 auf den Teller",
        "ann, Wurf 2: double W6 2+6 1+3 (Summen 8, 8); 1 und 3 auf den Teller",
    ]
    assert [german(event.text) for event in log[3][:3]] == [
        "ann, Wurf 5: swap 1 5 W5 1+2 2+3 (Summen 3, 5); 5 vom Teller; 1 auf den Teller",
        "ann, Wurf 6: half W6 3+4 2+2 (Summen 7); 2 und 2 auf den Teller",
        "ann, Einschub 6.5: SK eat 1 2 2 2 3 F1 2+2 2+3 (Summen 4, 5); der Hund bekommt 1",
    ]


def test_a_missing_order_and_the_round_cap_are_told_in_german() -> None:
    dice = ScriptedDice([1, 1, 2, 2, 3] * 3 + [4, 4, 5, 5, 6] * 7)
    options = engine.options({"rolls_per_turn": 4, "round_cap": 10})
    state, __ = engine.start(options, ["ann"], dice)
    state = replace(state, sheets=(standard.sheet_with({1: 1, 2: 1, 3: 1}),))
    state, events = engine.resolve(state, dice)

    assert german(events[0].text) == "ann hat keinen Zug geschickt: der Standardzug wird gespielt"
    state, __ = engine.resolve(state, dice)
    state, events = engine.resolve(state, dice)
    score = state.sheets[0].score
    assert [german(event.text) for event in events[-2:]] == [
        f"Wurf 10 ist die Wurfgrenze: das Spiel von ann endet mit {score} Punkten",
        f"das Spiel ist vorbei: 1. ann ({score})",
    ]


def test_the_receipt_is_said_in_german_with_the_order_as_written() -> None:
    state = standard.state_94()
    order = engine.parse(state, 0, "W3 1+4 3+5\nW6 2+2 4+6")

    __, (receipt,) = engine.submit(state, 0, order, NoDice())

    assert receipt == Event(
        "order received for rounds 21-22:\n21: W3 1+4 3+5\n22: W6 2+2 4+6", (0,)
    )
    assert german(receipt.text) == "Zug erhalten für Würfe 21-22:\n21: W3 1+4 3+5\n22: W6 2+2 4+6"


# --- prompts and order errors ----------------------------------------------------------------


def test_the_prompt_kind_and_hint_in_german() -> None:
    (prompt,) = engine.prompts(standard.state_94())
    (single,) = engine.prompts(standard.turn_state(Sheet(), {28: (1, 3, 3, 4, 5)}))

    assert (german(prompt.kind), german(prompt.hint)) == (
        "Zug dieser Runde",
        "Würfe 21-22: eine Zeile pro Wurf, z. B. W5 1+3 3+4",
    )
    assert german(single.hint) == "Wurf 28: eine Zeile, z. B. W5 1+3 3+4"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "W5 1+3 3+4\nW6 2+2 4+6",
            "Wurf 21: du hast 3, 4, 6 gelagert und der Wurf zeigt 3 und 4, also musst du "
            "3 oder 4 lagern",
        ),
        (
            "W3 1+1 4+5\nW6 2+2 4+6",
            "Wurf 21: der Wurf ist 1 3 3 4 5, aber deine Zeile verwendet 1 1 3 4 5",
        ),
        (
            "F5 1+3 3+4\nW6 2+2 4+6",
            "Wurf 21: Freifahrt nicht erlaubt; der Wurf zeigt deine gelagerten Werte 3, 4",
        ),
        ("W3 1+4 3+5", "Wurf 22: Zeile fehlt"),
        ("W7 1+3 3+4", "Wurf 21: 7 ist keine Würfelzahl; Würfel zeigen 1 bis 6"),
        ("flip 2 W5 1+3 3+4", "Wurf 21: Karten gibt es nur in der Variante Suppenkasper"),
        (
            "hello",
            "Wurf 21: 'hello' ist nicht lesbar; schreib W (Würfel) oder F (Freifahrt), den "
            "beiseitegelegten Würfel und zwei Paare, z. B. W5 1+3 3+4",
        ),
        (
            "W3 1+4 3+5\nW6 2+2 4+6\nW6 2+2 4+6",
            "Wurf 23: diesen Wurf gibt es in dieser Runde nicht",
        ),
    ],
)
def test_order_errors_in_german(text: str, message: str) -> None:
    assert refused(text, standard.state_94()) == message


def test_three_values_are_joined_with_und_and_oder() -> None:
    state = standard.turn_state(standard.SHEET_94, {21: (3, 4, 6, 1, 1)})

    assert refused("W1 1+3 4+6", state) == (
        "Wurf 21: du hast 3, 4, 6 gelagert und der Wurf zeigt 3, 4 und 6, also musst du "
        "3, 4 oder 6 lagern"
    )


def test_an_order_from_a_player_whose_game_ended_in_german() -> None:
    ended = replace(standard.SHEET_94, active=False, ended_round=19, score=-600)
    state = standard.turn_state(ended, standard.ROLLS_94, others=(Sheet(),))

    assert refused("W3 1+4 3+5", state) == (
        "dein Spiel endete im Wurf 19; von dir wird kein Zug erwartet"
    )


@pytest.mark.parametrize(
    ("plate", "message"),
    [
        (
            [4, 4, 1, 6],
            "Einschub 20.5: Suppen-Kasper braucht 5 Zahlen auf deinem Teller; er enthält dann 4",
        ),
        (
            [],
            "Einschub 20.5: Suppen-Kasper braucht 5 Zahlen auf deinem Teller; er ist dann leer",
        ),
    ],
)
def test_suppen_kasper_errors_in_german(plate: list[int], message: str) -> None:
    state = suppenkasper.turn_state(suppenkasper.sheet_with(plate=plate), suppenkasper.ROLLS_94)
    text = "20.5: SK eat 4 4 1 6 6 W1 4+4 6+6\nW1 3+3 4+5\nW1 2+4 6+6"

    assert refused(text, state) == message


def test_card_errors_in_german() -> None:
    plate = suppenkasper.sheet_with({2: 1, 4: 1, 6: 1}, plate=[1, 4, 6])
    free_ride = suppenkasper.sheet_with({1: 1, 2: 1, 3: 1})

    assert refused(
        "swap 5 2 W6 1+1 3+3", suppenkasper.turn_state(plate, {21: (1, 1, 3, 3, 5)})
    ) == ("Wurf 21: swap 5 2 braucht eine 2 auf deinem Teller; er enthält dann 1 4 6")
    assert refused(
        "refuse F6 4+4 5+5", suppenkasper.turn_state(free_ride, {21: (4, 4, 5, 5, 6)})
    ) == (
        "Wurf 21: bei einer Freifahrt gibt es nichts zu verweigern; refuse gehört zu einem "
        "gelagerten Würfel, z. B. refuse W5 1+3 3+4"
    )


# --- options and autopilot -------------------------------------------------------------------


def test_the_options_and_the_autopilot_in_german() -> None:
    cards = next(option for option in rules.SETTINGS.options if option.key == "cards")

    assert german(rules.SETTINGS.profile("suppenkasper").summary) == (
        "Choice mit Karten, die je einmal gespielt werden, und einem Teller voller Reste zum "
        "Aufessen. 1 bis 20 Spieler."
    )
    assert (german(cards.label), german(cards.help)) == (
        "Karten im Spiel",
        "Jeder Spieler hat jede dieser Karten einmal.",
    )
    assert [german(words) for __, words in cards.choices] == [
        "Kopfüber",
        "Halbe Portion",
        "Doppelte Portion",
        "Verweigerung",
        "Vom Teller",
        "Suppenkasper",
    ]
    assert german(autopilot.STRATEGIES[0].title) == (
        "Beste Punkte: die gelagerten Würfel und Paare, die in dieser Runde die meisten Punkte "
        "bringen"
    )


# --- nothing left in English -----------------------------------------------------------------


def test_every_text_of_whole_scripted_games_is_german() -> None:
    logs = [
        standard.play_full_game("shared")[1],
        standard.play_full_game("fewer_rounds")[1],
        play_game_112()[1],
    ]
    found = {found for log in logs for events in log for e in events for found in templates(e.text)}

    assert len(found) >= 10
    assert untranslated(found) == []


def test_every_template_of_the_engine_has_german() -> None:
    found = source_templates(Path(rules.__file__).parent)

    assert len(found) >= 90
    assert untranslated(found) == []
