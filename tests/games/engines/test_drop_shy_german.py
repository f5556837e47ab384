"""Drop-Shy in German: the engine's events, prompts, order errors, menu labels, options and
autopilot said through the game's own catalogue (games/engines/drop_shy/locale), and every
text of whole scripted games, and every template of the engine, translated."""

from __future__ import annotations

from pathlib import Path

import pytest

from games.engines.base import Event, OptionsError, OrderError
from games.engines.dice import NoDice, ScriptedDice
from games.engines.drop_shy import autopilot, rules
from games.engines.drop_shy.rules import DropShyOrder, DropShyState, follow_up
from tests.games.engines.german import german, source_templates, templates, untranslated
from tests.games.engines.test_drop_shy import (
    TWO,
    board_state,
    bob_with_a_5,
    engine,
    one_cell_game,
    order,
    start,
)


def refused(state: DropShyState, seat: int, text: str) -> str:
    """The German of the message that refuses ``text`` (parsed, then submitted)."""
    with pytest.raises(OrderError) as excinfo:
        engine.submit(state, seat, engine.parse(state, seat, text), NoDice())
    return german(excinfo.value.message)


def section_8_game() -> list[Event]:
    """rules/drop-shy.md section 8: instigator 4, ann 3 1, bob 5 2; bob wins."""
    state, events, __ = start([4, 3, 1, 5, 2], dice_per_player=2)
    for seat, text, dice in [(0, "place 1 0", []), (1, "place 0 1", [6]), (1, "place 2 0", [])]:
        state, more = engine.submit(
            state, seat, engine.parse(state, seat, text), ScriptedDice(dice)
        )
        events += more
    assert state.finished
    return events


def turn_cap_game() -> list[Event]:
    """Four players and a turn cap of 50: ann finishes, cy keeps one die, bob and dee two."""
    state, events, __ = start(
        [1, 2, 3, 6, 6, 3, 6, 6, 6], ("ann", "bob", "cy", "dee"), dice_per_player=2, turn_cap=50
    )
    for seat, placed, dice in [(0, (1, 0), [6]), (2, (2, 0), [6]), (0, (1, 1), [6] * 45)]:
        state, more = engine.submit(state, seat, DropShyOrder(None, placed), ScriptedDice(dice))
        events += more
    assert state.capped
    return events


def two_candidate_game() -> list[Event]:
    """rules/drop-shy.md section 9.1, and a die taken that fits nowhere."""
    state, events, __ = start(
        [3, 4, 10, 2, 3, 6, 8, 5, 8, 4, 2], dice_per_player=2, selection="two_candidate"
    )
    state, more = engine.submit(
        state, 0, engine.parse(state, 0, "take closest\nplace -1 0"), ScriptedDice([4, 2])
    )
    failing = board_state({(0, 0): 5}, [[(2, 10), (6, 3), (4, 7)], [(4, 1)]], TWO)
    failed = engine.submit(
        failing, 0, engine.parse(failing, 0, "take rightmost"), ScriptedDice([1, 15])
    )[1]
    return events + more + failed


def rematch_game() -> list[Event]:
    """A follow-up game: the instigator rolled for the previous winner, the loser first."""
    state = start([3, 6, 2, 4, 6], ("ann", "bob", "cy"), dice_per_player=1)[0]
    players, options = follow_up(order(order(state, 1, "place 1 0"), 2, "place -1 0"))
    return start([3, 2, 4, 4], players, **options)[1]


# --- events --------------------------------------------------------------------------------


def test_a_game_is_told_in_german() -> None:
    assert [german(event.text) for event in section_8_game()] == [
        "der Auslöser ist eine 4 auf (0,0), gewürfelt für den Moderator",
        "Reihe von ann, vorderster Würfel zuerst: 3 1",
        "Reihe von bob, vorderster Würfel zuerst: 5 2",
        "Zug 1: ann legt die 3 auf (1,0)",
        "Zug 2: bob legt die 5 auf (0,1)",
        "Zug 3: die 1 von ann kann nicht gelegt werden: sie wird neu gewürfelt und kommt als 6 "
        "ans Ende der Reihe von ann",
        "Zug 4: bob legt die 2 auf (2,0)",
        "bob hat alle Würfel gelegt und gewinnt",
        "das Spiel ist vorbei: 1. bob; 2. ann, 1 Würfel übrig",
    ]


def test_the_dice_left_at_the_turn_cap_are_counted_in_german() -> None:
    assert german(turn_cap_game()[-1].text) == (
        "Zug 50 ist die Zuggrenze: das Spiel ist vorbei: 1. ann; 2. cy, 1 Würfel übrig; "
        "4. bob, 2 Würfel übrig; 4. dee, 2 Würfel übrig"
    )


def test_the_candidates_are_named_in_german() -> None:
    assert [german(event.text) for event in two_candidate_game()[-3:]] == [
        "Zug 1: ann nimmt den Würfel am nächsten an der Kante, eine 2, und legt sie auf (-1,0)",
        "Zug 2: die 6 von bob kann nicht gelegt werden: sie wird neu gewürfelt und kommt als "
        "4/2 ans Ende der Reihe von bob",
        "Zug 1: ann nimmt den Würfel ganz rechts, eine 2, die nicht gelegt werden kann: sie "
        "wird neu gewürfelt und kommt als 1/15 ans Ende der Reihe von ann",
    ]


def test_a_rematch_is_told_in_german() -> None:
    events = rematch_game()

    assert german(events[0].text) == (
        "der Auslöser ist eine 3 auf (0,0), gewürfelt für bob, den Gewinner des vorigen Spiels"
    )
    assert german(events[-1].text) == "ann, Verlierer des vorigen Spiels, legt zuerst"


def test_a_missing_order_is_told_in_german() -> None:
    __, events = engine.resolve(bob_with_a_5(), ScriptedDice([6]))

    assert [german(event.text) for event in events[:2]] == [
        "bob hat keinen Zug geschickt: der Standardzug wird gespielt",
        "Zug 2: bob legt die 5 auf (0,1)",
    ]


# --- prompts, menus and order errors ---------------------------------------------------------


def test_the_prompt_names_one_cell_or_several_in_german() -> None:
    (several,) = engine.prompts(bob_with_a_5())
    (one,) = engine.prompts(one_cell_game(auto_single=False))

    assert (german(several.kind), german(several.hint)) == (
        "leg deinen Würfel",
        "Zug 2: leg deine 5; erlaubte Felder: (0,1), (-1,0), (0,-1)",
    )
    assert german(one.hint) == "Zug 4: leg deine 5; erlaubtes Feld: (-1,0)"


def test_a_long_list_of_cells_ends_with_how_many_more_in_german() -> None:
    state = board_state({(0, 0): 4, (2, 0): 4, (4, 0): 4}, [[3], [1]])

    assert german(engine.prompts(state)[0].hint) == (
        "Zug 1: leg deine 3; erlaubte Felder: (0,1), (2,1), (4,1), (-1,0), (1,0), (3,0) "
        "und 4 weitere"
    )


def test_the_choice_of_two_candidates_in_german() -> None:
    state = board_state({(0, 0): 4, (0, 1): 5, (1, 0): 3}, [[(3, 12), (6, 2)], [(2, 1)]], TWO)
    (prompt,) = engine.prompts(state)

    assert (german(prompt.kind), german(prompt.hint)) == (
        "wählen und legen",
        "Zug 1: take rightmost (3) oder take closest (6), dann place x y, wenn er passt",
    )
    assert refused(state, 0, "place 1 0") == (
        "wähl zuerst deinen Würfel: take rightmost (3) oder take closest (6)"
    )
    assert refused(state, 0, "take closest") == (
        "deine 6 kann gelegt werden; ergänze place x y (erlaubt: (0,2), (-1,1))"
    )


def test_the_menu_labels_in_german() -> None:
    state = board_state({(0, 0): 5}, [[(2, 10), (6, 3)], [(4, 1)]], TWO)

    assert [(text, german(label)) for text, label in engine.candidates(state, 0)[:2]] == [
        ("take rightmost", "deine 2 (ganz rechts) neu würfeln: sie passt nirgends"),
        ("take closest place 0 1", "deine 6 (am nächsten an der Kante) auf (0,1)"),
    ]
    assert [german(label) for __, label in engine.candidates(bob_with_a_5(), 1)] == [
        "deine 5 auf (0,1)",
        "deine 5 auf (-1,0)",
        "deine 5 auf (0,-1)",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "place 1 1",
            "(1,1) ist für deine 6 nicht erlaubt: es berührt die 1 auf (1,2) und die 3 auf (1,0)",
        ),
        ("place 0 0", "(0,0) ist besetzt"),
        ("place 2 1", "(2,1) liegt neben keinem Würfel (Ecken zählen nicht)"),
        (
            "place 5 5",
            "(5,5) liegt neben keinem Würfel (die Würfel liegen im Bereich x 0 bis 1 "
            "und y 0 bis 2)",
        ),
        ("hello", "\"hello\": 'hello' ist unverständlich; schreib place x y"),
        ("", "der Zug ist leer: schreib place x y, z. B. place 1 0"),
        (
            "take closest",
            '"take closest": take gibt es nur im Zwei-Kandidaten-Modus; in diesem Spiel wird '
            "der vorderste Würfel deiner Reihe gespielt, also schreib place x y",
        ),
    ],
)
def test_order_errors_in_german(text: str, message: str) -> None:
    state = board_state({(0, 0): 4, (1, 0): 3, (0, 1): 5, (1, 2): 1}, [[6], [1]])

    assert refused(state, 0, text) == message


def test_an_order_out_of_turn_in_german() -> None:
    assert refused(bob_with_a_5(), 0, "place 0 1") == (
        "du bist nicht an der Reihe: wir warten auf bob"
    )


# --- options and autopilot -------------------------------------------------------------------


def test_the_options_and_the_autopilot_in_german() -> None:
    selection = next(option for option in rules.SETTINGS.options if option.key == "selection")
    with pytest.raises(OptionsError) as excinfo:
        start([3, 4, 2], ("ann", "bob"), previous_loser="BOB")

    assert german(excinfo.value.message) == (
        "Option previous_loser: bob legt zuerst, also muss bob auf Platz 1 sitzen, nicht auf "
        "Platz 2"
    )
    assert german(rules.SETTINGS.profiles[0].summary) == (
        "Leg deine Würfel auf einen gemeinsamen Tisch neben Würfel mit einem Auge mehr oder "
        "weniger; wer zuerst alle gelegt hat, gewinnt. 2 bis 20 Spieler."
    )
    assert german(selection.label) == "Welcher Würfel gespielt wird"
    assert [german(words) for __, words in selection.choices] == [
        "immer der vorderste deiner Reihe",
        "der Würfel ganz rechts oder der am nächsten an der Kante, nach Wahl",
    ]
    assert german(autopilot.STRATEGIES[0].title) == (
        "Platz für den nächsten Würfel: dorthin legen, wo dein nächster Würfel die meisten "
        "Felder hat"
    )


# --- nothing left in English -----------------------------------------------------------------


def test_every_text_of_whole_scripted_games_is_german() -> None:
    events = section_8_game() + turn_cap_game() + two_candidate_game() + rematch_game()
    found = {found for event in events for found in templates(event.text)}

    assert len(found) >= 12
    assert untranslated(found) == []


def test_every_template_of_the_engine_has_german() -> None:
    found = source_templates(Path(rules.__file__).parent)

    assert len(found) >= 75
    assert untranslated(found) == []
