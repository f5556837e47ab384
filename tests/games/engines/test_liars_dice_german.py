"""Liar's Dice in German: the engine's words (events, prompts, order errors, options, menus,
the autopilot) said in German where they are shown (``games.lib.words.said`` with German
active), in scripted games of every profile; and every text of whole games has German
words. The English is the other tests' business: these games are theirs."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

import pytest
from django.utils import translation

from games.engines.base import JSON, Event, OptionsError, OrderError
from games.engines.dice import NoDice, VerifiableDice
from games.engines.liars_dice.autopilot import STRATEGIES, expected_count_play
from games.engines.liars_dice.rules import (
    BIDDING,
    SETTINGS,
    ActionApplied,
    Bid,
    LiarsDiceEngine,
    LiarsDiceState,
)
from games.engines.text import Text
from games.lib import words
from tests.games.engines.test_liars_dice import (
    ANN,
    BOB,
    CY,
    DM,
    FILLER,
    TEAM,
    cheat_state,
    classic_after_ann_bids,
    deadline,
    dealt,
    dm_state,
    rejected,
    send,
    spot_state,
    team_after_bid,
    team_state,
)

engine = LiarsDiceEngine()


def german(text: Any) -> str:
    with translation.override("de"):
        return words.said(text)


def public(events: Sequence[Event]) -> list[str]:
    return [german(event.text) for event in events if event.to is None]


def private(events: Sequence[Event], seat: int) -> list[str]:
    return [german(event.text) for event in events if event.to == (seat,)]


def owed(state: LiarsDiceState) -> list[tuple[int, str, str]]:
    return [(p.seat, german(p.kind), german(p.hint)) for p in engine.prompts(state)]


def refused(state: LiarsDiceState, seat: int, text: str) -> str:
    return german(rejected(state, seat, text))


# --- classic -------------------------------------------------------------------------------


def test_a_classic_round_in_german() -> None:
    state, events = dealt({"calza": True}, ["ann", "bob", "cy"], ANN + BOB + CY)
    assert public(events) == ["Durchgang 1: Würfel im Spiel: ann 5, bob 5, cy 5; ann eröffnet"]
    assert private(events, 0) == ["Durchgang 1: deine Würfel sind 4 4 1 2 3"]
    assert owed(state) == [(0, "Gebot", "Durchgang 1, Zug 1: eröffne mit einem Gebot")]
    state, events = send(state, 0, "bid 3 4")
    assert public(events) == ["Durchgang 1: ann bietet 3 x 4"]
    assert owed(state) == [
        (
            1,
            "Gebot oder Anzweifeln",
            "Durchgang 1, Zug 2: erhöhe 3 x 4 (ann) oder zweifle an (liar) oder sag spot an",
        )
    ]
    state, events = send(state, 1, "liar", [2] * 5 + [3] * 4 + [5] * 5)
    assert public(events) == [
        "Durchgang 1: bob zweifelt das Gebot 3 x 4 von ann an: es gibt 5 Vieren mit Einsen, "
        "das Gebot hält. Die Würfel: ann 4 4 1 2 3; bob 4 1 5 6 6; cy 2 2 3 5 6",
        "bob verliert einen Würfel und hat jetzt 4",
        "Durchgang 2: Würfel im Spiel: ann 5, bob 4, cy 5; bob eröffnet",
    ]


@pytest.mark.parametrize(
    ("seat", "text", "message"),
    [
        (1, "bid 1 1", "um nach 3 x 4 auf Einsen zu wechseln, biete mindestens 2 x 1"),
        (
            1,
            "bid 3 3",
            "Gebot zu niedrig: nach 3 x 4 biete 3 x 5, 3 x 6 oder 4 oder mehr einer beliebigen "
            "Augenzahl außer 1, oder mindestens 2 x 1",
        ),
        (1, "bid 1000 4", "bid 1000 4: die Anzahl darf höchstens 999 sein (15 Würfel im Spiel)"),
        (
            1,
            "bid three 4",
            "bid three 4: die Anzahl muss eine ganze Zahl aus den Ziffern 0-9 sein, nicht 'three'",
        ),
        (1, "raise", "'raise' ist hier kein Zug: schreib bid <Anzahl> <Augenzahl> oder liar"),
        (
            1,
            "bid 3 4\nliar",
            "Zeile 2: ein Zug pro Nachricht; schreib bid <Anzahl> <Augenzahl> oder liar",
        ),
        (1, "spot", "spot-Ansagen gibt es in diesem Spiel nicht"),
        (2, "liar", "du bist nicht an der Reihe: wir warten auf bob"),
    ],
)
def test_classic_order_errors_in_german(seat: int, text: str, message: str) -> None:
    assert refused(classic_after_ann_bids(), seat, text) == message


def test_a_palifico_round_in_german() -> None:
    state, _ = dealt({"dice_per_player": 2}, ["ann", "bob", "cy"], [5, 5, 1, 2, 3, 4])
    state, _ = send(state, 0, "bid 3 5")
    state, events = send(state, 1, "liar", [6, 6, 1, 4, 4])
    assert public(events)[1:] == [
        "bob verliert einen Würfel und hat jetzt 1",
        "Durchgang 2: Würfel im Spiel: ann 2, bob 1, cy 2; bob eröffnet; dies ist ein "
        "Palifico-Durchgang (Einsen sind keine Joker, die Augenzahl bleibt)",
    ]
    state, _ = send(state, 1, "bid 1 4")
    assert refused(state, 2, "bid 4 5") == (
        "Palifico-Durchgang: die Augenzahl bleibt 4; biete mehr Vieren"
    )
    assert refused(state, 2, "bid 1 4") == "Palifico-Durchgang: biete mehr Vieren als 1 x 4"
    state, events = send(state, 2, "liar", [1, 1, 2, 3])
    # Ones are not wild in a palifico round: no "mit Einsen".
    assert public(events)[0] == (
        "Durchgang 2: cy zweifelt das Gebot 1 x 4 von bob an: es gibt 2 Vieren, das Gebot hält. "
        "Die Würfel: ann 6 6; bob 1; cy 4 4"
    )


def test_spot_calls_in_german() -> None:
    assert refused(replace(spot_state(), bids=()), 1, "spot") == (
        "noch kein Gebot für spot; eröffne mit einem Gebot"
    )
    __, events = send(spot_state(), 1, "spot", FILLER[:15])
    assert public(events)[:2] == [
        "Durchgang 1: bob sagt spot auf 5 x 4 an: es gibt genau 5 Vieren mit Einsen. "
        "Die Würfel: ann 4 4 1 2 3; bob 4 1 5 6 6; cy 2 2 3 5 6",
        "bob bekommt einen Würfel dazu und hat jetzt 5",
    ]
    __, events = send(replace(spot_state(), bids=(Bid(0, 4, 4),)), 1, "spot", FILLER[:13])
    assert public(events)[:2] == [
        "Durchgang 1: bob sagt spot auf 4 x 4 an: es gibt 5 Vieren mit Einsen, nicht 4. "
        "Die Würfel: ann 4 4 1 2 3; bob 4 1 5 6 6; cy 2 2 3 5 6",
        "bob verliert einen Würfel und hat jetzt 3",
    ]


# --- plurals and lists ---------------------------------------------------------------------


def test_plurals_follow_the_count_in_german() -> None:
    three = dm_state({"mulligan": True}, ((1, 2, 3), (4, 4, 4, 4)))
    assert refused(three, 0, "mulligan 1 2 3 4") == (
        "mulligan: du hast 3 Würfel; nenne höchstens 3 verschiedene Positionen"
    )
    one = dm_state({"mulligan": True}, ((5,), (4, 4, 4, 4)))
    assert (
        refused(one, 0, "mulligan 1 2") == "mulligan: du hast 1 Würfel; nenne höchstens 1 Position"
    )
    assert owed(cheat_state((1, 0))) == [
        (0, "Schummeln", "Durchgang 5: cheat yes oder cheat no (du darfst noch einmal schummeln)"),
        (1, "Schummeln", "Durchgang 5: cheat yes oder cheat no (du darfst noch 2-mal schummeln)"),
    ]


def test_the_mulligans_are_listed_in_german() -> None:
    state = dm_state({"mulligan": True}, ((1, 2, 3), (4, 4, 4, 4)))
    assert owed(state)[0] == (
        0,
        "Mulligan",
        "Durchgang 1: mulligan <Positionen> (bis zu 3) oder mulligan none",
    )
    state, events = send(state, 0, "mulligan 3 1")
    assert private(events, 0) == ["Zug erhalten: mulligan 1 3"]
    state, events = deadline(state, [6, 5])
    assert public(events) == [
        "bob hat keinen Mulligan-Zug geschickt: nichts wird neu gewürfelt",
        "Durchgang 1: Mulligans erledigt: ann hat 2 Würfel neu gewürfelt; "
        "bob hat 0 Würfel neu gewürfelt",
    ]
    assert private(events, 0) == ["Durchgang 1: nach deinem Mulligan sind deine Würfel 6 2 5"]


@pytest.mark.parametrize(
    ("cheats", "who"),
    [(("yes", "no"), "ann hat"), (("yes", "yes"), "ann und bob haben")],
)
def test_the_cheaters_are_named_in_german(cheats: tuple[str, str], who: str) -> None:
    state, _ = send(cheat_state(), 0, f"cheat {cheats[0]}")
    state, _ = send(state, 1, f"cheat {cheats[1]}")
    state, events = deadline(state)
    assert public(events) == ["Durchgang 5: die Cheat-Phase ist vorbei; das Bieten beginnt"]
    assert private(events, 0) == ["Durchgang 5: du schummelst; die Würfel von bob sind 2 2 2 2"]
    state, events = send(state, 0, "accuse", FILLER[:9])
    assert public(events)[:2] == [
        "Durchgang 5: ann beschuldigt bob des Schummelns, "
        + ("zu Recht: ann gewinnt" if cheats[1] == "yes" else "zu Unrecht: ann verliert")
        + f". Die Würfel: ann 5 5 5 5; bob 2 2 2 2. {who} in diesem Durchgang geschummelt",
        ("bob" if cheats[1] == "yes" else "ann") + " bekommt einen Würfel dazu und hat jetzt 5",
    ]


# --- the Death Match -----------------------------------------------------------------------


def test_the_round_reserve_in_german() -> None:
    state = dm_state({}, ((1, 2, 3, 4), (1, 2, 3, 4)))
    state, _ = send(state, 0, "bid 2 2")
    state, events = deadline(state)
    assert public(events) == [
        "Durchgang 1: bob hat den Abgabetermin verpasst und verbraucht die Reserve des Durchgangs; "
        "bob ist weiter am Zug"
    ]
    assert owed(state) == [
        (
            1,
            "Gebot oder Anzweifeln",
            "Durchgang 1, Zug 2: erhöhe 2 x 2 (ann) oder zweifle an (liar); "
            "deine Reserve für diesen Durchgang ist verbraucht",
        )
    ]
    state, events = deadline(state, FILLER[:9])
    assert public(events)[:2] == [
        "Durchgang 1: bob hat den Abgabetermin erneut verpasst und verliert den Durchgang. "
        "Die Würfel: ann 1 2 3 4; bob 1 2 3 4",
        "bob bekommt einen Würfel dazu und hat jetzt 5",
    ]


def test_the_anomalies_speak_german() -> None:
    oracle = dm_state({"oracle": True}, ((5, 5, 1, 2), (3, 3, 4, 4)))
    __, events = send(oracle, 0, "bid 3 5")
    assert private(events, 0) == ["Oracle: dein Gebot 3 x 5 stimmt nicht"]
    __, events = send(oracle, 0, "bid 2 5")
    assert private(events, 0) == ["Oracle: dein Gebot 2 x 5 stimmt"]
    shown = dm_state({"revelation": True}, ((1, 2, 3, 4, 5), (6, 6, 6)))
    assert refused(shown, 0, "bid 2 6") == (
        "zeig einen deiner Würfel: ergänze „show <Position>“, z. B. show 1"
    )
    __, events = send(shown, 0, "bid 2 6 show 3")
    assert private(events, 1) == ["ann zeigt dir den Würfel an Position 3: eine 3"]
    summed = {**DM, "summation": True, "mulligan": True}
    state, _ = dealt(summed, ["ann", "bob"], FILLER[:8])
    state, events = deadline(replace(state, hands=((3, 3, 3, 3), (2, 5, 6, 1))))
    assert private(events, 1) == ["Durchgang 1: die Würfel von ann ergeben zusammen 12"]


def test_the_match_ends_in_german() -> None:
    state = dm_state({}, ((1,) * 10, (2, 2, 2, 2)))
    state, _ = send(state, 0, "bid 5 6")
    state, events = send(state, 1, "liar")
    assert public(events) == [
        "Durchgang 1: bob zweifelt das Gebot 5 x 6 von ann an: es gibt 0 Sechsen, das Gebot hält "
        "nicht. Die Würfel: ann 1 1 1 1 1 1 1 1 1 1; bob 2 2 2 2",
        "ann bekommt einen Würfel dazu und hat jetzt 11",
        "die Partie ist vorbei: ann hat mehr als 10 Würfel. 1. bob; 2. ann",
    ]
    assert refused(state, 0, "liar") == "das Spiel ist vorbei; von dir wird kein Zug erwartet"


# --- the team game -------------------------------------------------------------------------


def test_the_team_game_in_german() -> None:
    state, events = team_state()
    assert private(events, 0) == ["Durchgang 1: du siehst die Würfel von dot: 2 2 2 2 2"]
    assert owed(state)[0][1] == "Aktion, Gebot oder Anzweifeln"
    state = team_after_bid()
    __, events = send(state, 1, "reveal 2 reroll\nbid 4 4", [6, 6, 6, 6])
    assert public(events) == [
        "Durchgang 1: bea deckt Würfel 2 von ada auf: eine 2, und würfelt die Würfel 1 3 4 5 "
        "von ada neu",
        "Durchgang 1: bea bietet 4 x 4",
    ]
    assert private(events, 1) == ["Durchgang 1: die Würfel von ada sind jetzt 6 2 6 6 6"]
    __, events = send(state, 1, "reveal 5 learn CID 2")
    assert public(events) == [
        "Durchgang 1: bea deckt Würfel 5 von ada auf: eine 5, und erfährt Würfel 2 von cid"
    ]
    assert private(events, 1) == ["Durchgang 1: Würfel 2 von cid ist eine 6"]
    assert refused(state, 1, "reveal 2 learn ada 1") == (
        "learn: wähle einen anderen Spieler als dich selbst und ada (dessen Würfel siehst du schon)"
    )
    assert (
        refused(state, 1, "reveal 9 reroll") == "reveal: ada hat keinen Würfel 9; ada hat 5 Würfel"
    )
    with pytest.raises(ActionApplied) as error:
        send(state, 1, "reveal 2 reroll\nbid 1 1", [6, 6, 6, 6])
    assert german(error.value.message) == (
        "Zeile 2: Gebot zu niedrig: nach 3 x 6 biete 4 oder mehr einer beliebigen Augenzahl "
        "(deine Aktionszeile wurde ausgeführt und gilt)"
    )


def test_the_sum_phase_in_german() -> None:
    state, _ = team_state()
    state = replace(state, counts=(1, 1, 0, 0), hands=((4,), (6,), (), ()))
    assert owed(state) == [
        (
            0,
            "Gebot",
            "Durchgang 1, Zug 1: eröffne mit einem Gebot; "
            "Gebote nennen eine Summe: bid sum <Summe>",
        )
    ]
    state, events = send(state, 0, "bid sum 7")
    assert public(events) == ["Durchgang 1: ada bietet Summe 7"]
    assert refused(state, 1, "bid sum 5") == (
        "Gebot zu niedrig: nach Summe 7 schreib bid sum 8 oder mehr"
    )
    state, events = send(state, 1, "liar")
    assert public(events) == [
        "Durchgang 1: bea zweifelt das Gebot Summe 7 von ada an: die Summe ist 10, das Gebot hält. "
        "Die Würfel: ada 4; bea 6",
        "bea verliert einen Würfel und hat jetzt 0",
        "bea hat keine Würfel mehr und scheidet aus",
        "das Spiel ist vorbei: 1. ada; 1. cid; 3. bea; 3. dot",
    ]


# --- options, menus, the autopilot ---------------------------------------------------------


def test_the_options_menus_and_autopilot_in_german() -> None:
    assert [german(profile.title) for profile in SETTINGS.profiles] == [
        "Liar's Dice: klassisch",
        "Liar's Dice: Death Match",
        "Liar's Dice: Team",
    ]
    wild = SETTINGS.options_of("classic")[1]
    assert (german(wild.label), german(wild.help)) == (
        "Einsen sind Joker",
        "Einsen zählen als jede Augenzahl.",
    )
    (seating,) = SETTINGS.options_of("genius_team")[1:]
    assert german(seating.words("adjacent")) == "Plätze 1 und 2 gegen 3 und 4"
    labels = [german(label) for __, label in engine.candidates(classic_after_ann_bids(), 1)]
    assert labels[:4] == [
        "liar: das letzte Gebot anzweifeln",
        "spot: das letzte Gebot stimmt genau",
        "accuse: der Gegner hat in diesem Durchgang geschummelt",
        "biete 1 x 1",
    ]
    assert [german(label) for __, label in engine.candidates(cheat_state(), 0)] == [
        "cheat no: nicht schummeln",
        "cheat yes: schummeln",
    ]
    (strategy,) = STRATEGIES
    assert german(strategy.title) == (
        "Erwartete Anzahl: anzweifeln (liar), wenn das Gebot mehr Würfel nennt als erwartet"
    )
    with pytest.raises(OptionsError) as error:
        engine.start(engine.options(DM), ["ann", "bob", "cy"], NoDice())
    assert (
        german(error.value.message) == "Liar's Dice: Death Match braucht genau 2 Spieler, nicht 3"
    )


# --- every word of whole games -------------------------------------------------------------

# Words that are the same in both languages: a game's name.
SAME_IN_GERMAN = {"Liar's Dice: Death Match"}

WHOLE_GAMES: list[tuple[Mapping[str, JSON], int]] = [
    ({"calza": True}, 3),
    ({"wild_ones": False, "dice_per_player": 2}, 2),
    (
        {
            **DM,
            "cheat": True,
            "mulligan": True,
            "oracle": True,
            "revelation": True,
            "summation": True,
            "double_face": True,
        },
        2,
    ),
    ({**DM, "fresh_start": True, "summation": True, "cheat": True, "reserve": False}, 2),
    ({**TEAM, "dice_per_player": 2}, 4),
]
# Orders every seat tries at every step, most of them refused: the refusals are words too.
PROBES = (
    "liar",
    "spot",
    "accuse",
    "bid 0 3",
    "bid 1000 3",
    "bid 2 7",
    "bid 1 1",
    "bid 5 2 show 1",
    "bid 9 6 show 9",
    "bid sum 5",
    "bid sum 13",
    "bid x 3",
    "bid 3",
    "mulligan 1 1",
    "mulligan 9",
    "mulligan 1 2 3 4 5 6",
    "cheat yes",
    "cheat maybe",
    "reveal 1 reroll",
    "reveal 1 learn ann 1",
    "reveal 1 learn bob 2",
    "reveal 1 learn cy 9",
    "reveal 9 reroll",
    "reveal 1 learn zed 1",
    "reveal 1 reroll\nbid 0 0",
    "reveal 1 reroll\nbid 1 1\nliar",
    "hello",
    "",
)


MOVES = 2000


def whole_game(options: Mapping[str, JSON], seats: int, seed: int) -> list[Text]:
    """Every Text of a game played to its end by seeded choices (the autopilot's bids, the
    menu's orders, missed deadlines): events, prompts, menu labels and refusals."""
    choose = random.Random(seed)
    dice = VerifiableDice(bytes(32), seed)
    players = ["ann", "bob", "cy", "dee"][:seats]
    said: list[Any] = []
    state, events = engine.start(engine.options(options), players, dice)
    said += [event.text for event in events]
    for _move in range(MOVES):
        if state.finished:
            break
        prompts = engine.prompts(state)
        said += [word for prompt in prompts for word in (prompt.kind, prompt.hint)]
        for seat in range(seats):
            said += [label for __, label in engine.candidates(state, seat)]
            for probe in PROBES:
                try:
                    order = engine.parse(state, seat, probe)
                    said += [event.text for event in engine.submit(state, seat, order, dice)[1]]
                except OrderError as error:
                    said.append(error.message)
        if choose.random() < 0.1:
            state, events = engine.resolve(state, dice)
        else:
            seat = choose.choice(prompts).seat
            if state.phase == BIDDING:
                order = expected_count_play(state, seat)
            else:
                text = choose.choice(engine.candidates(state, seat))[0]
                order = engine.parse(state, seat, text)
            state, events = engine.submit(state, seat, order, dice)
        said += [event.text for event in events]
    assert state.finished, f"the game ends within {MOVES} moves"
    return [text for text in said if isinstance(text, Text)]


def templates(data: JSON) -> Iterator[tuple[str, str | None]]:
    """The (template, plural) pairs in a Text's ``data``."""
    if isinstance(data, dict):
        if "t" in data:
            yield data["t"], data.get("p")
        for value in data.values():
            yield from templates(value)
    elif isinstance(data, list):
        for value in data:
            yield from templates(value)


def untranslated(template: str, plural: str | None) -> bool:
    with translation.override("de"):
        if plural is None:
            return translation.gettext(template) == template
        return any(
            translation.ngettext(template, plural, count) == (template, plural)[count != 1]
            for count in (1, 2)
        )


@pytest.mark.parametrize(("options", "seats"), WHOLE_GAMES)
def test_every_word_of_a_whole_game_is_german(options: Mapping[str, JSON], seats: int) -> None:
    texts = whole_game(options, seats, seed=7)
    made = {pair for text in texts for pair in templates(text.data())}
    assert [pair for pair in sorted(made, key=str) if untranslated(*pair)] == []
    # Every text is said with its German template and arguments (no placeholder left over).
    assert [text for text in texts if german(text) == text] == []


def test_every_option_and_autopilot_word_is_german() -> None:
    words_of: list[Any] = [word for p in SETTINGS.profiles for word in (p.title, p.summary)]
    for option in SETTINGS.options:
        words_of += [option.label, option.help, *(label for __, label in option.choices)]
    words_of += [word for s in STRATEGIES for word in (s.title, s.summary)]
    assert all(isinstance(word, Text) for word in words_of if word)
    left = [word for word in words_of if word and german(word) == word]
    assert left == sorted(SAME_IN_GERMAN)
