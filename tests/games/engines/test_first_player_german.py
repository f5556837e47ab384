"""The First Player in German: the engine's English remembers how it was made
(games.engines.text), and ``games.lib.words.said`` says it with the game's catalogue
(games/engines/first_player/locale). No database: the engine is pure and the catalogue is a
file. Three scripted nights: a campaign night of six (absences, gifts, temporary dice, a
tiebreak, the reserve and a token), a token night of three (both token windows) and a night
whose order the host sets."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from django.utils import translation

from games.engines.base import Event, GameError, OptionsError, OrderError
from games.engines.dice import NoDice, ScriptedDice
from games.engines.first_player.rules import SETTINGS, FirstPlayerEngine, FirstPlayerState
from games.engines.text import Text, data
from games.lib.words import said

engine = FirstPlayerEngine()

# Templates that are the same in German: punctuation that joins a line's name to its message.
SAME_IN_GERMAN = {"%(where)s: %(message)s"}


def german(text: Any) -> str:
    with translation.override("de"):
        return said(text)


@dataclass
class Night:
    """A night played order by order, keeping every word the engine said: events, prompts,
    the web form's labels and the messages of refused orders."""

    state: FirstPlayerState
    events: list[Event] = field(default_factory=list)
    words: list[str] = field(default_factory=list)

    def heard(self, events: Sequence[Event]) -> list[str]:
        """German ``events``; the prompts and labels of the state now are kept too."""
        self.events += events
        self.words += [event.text for event in events]
        for prompt in engine.prompts(self.state):
            self.words += [prompt.kind, prompt.hint]
        for seat in range(len(self.state.players)):
            self.words += [label for __, label in engine.candidates(self.state, seat)]
        return [german(event.text) for event in events]

    def send(self, name: str, text: str, dice: Sequence[int] = ()) -> list[str]:
        seat = self.state.players.index(name)
        source = ScriptedDice(dice)
        order = engine.parse(self.state, seat, text)
        self.state, events = engine.submit(self.state, seat, order, source)
        assert source.position == len(dice)
        return self.heard(events)

    def refused(self, name: str, text: str, dice: Sequence[int] = ()) -> str:
        """The German message of an order that is refused; lines that stand are kept."""
        seat = self.state.players.index(name)
        with pytest.raises(OrderError) as caught:
            order = engine.parse(self.state, seat, text)
            engine.submit(self.state, seat, order, ScriptedDice(dice))
        self.words.append(caught.value.message)
        if caught.value.applied is not None:
            self.state, events = caught.value.applied
            self.heard(events)
        return german(caught.value.message)

    def deadline(self, dice: Sequence[int] = ()) -> list[str]:
        source = ScriptedDice(dice)
        self.state, events = engine.resolve(self.state, source)
        assert source.position == len(dice)
        return self.heard(events)

    def prompt(self, seat: int) -> tuple[str, str]:
        (owed,) = [prompt for prompt in engine.prompts(self.state) if prompt.seat == seat]
        return german(owed.kind), german(owed.hint)

    def labels(self, seat: int) -> list[tuple[str, str]]:
        return [(text, german(label)) for text, label in engine.candidates(self.state, seat)]


def start(players: Sequence[str], **options: Any) -> Night:
    state, events = engine.start(engine.options(options), list(players), NoDice())
    night = Night(state)
    night.heard(events)
    return night


def campaign_night() -> Night:
    """Six at the table, two absent, two without dice; two rounds."""
    night = start(
        ("ann", "bob", "cy", "dee", "eve", "fay"),
        order_mode="free",
        tokens=True,
        rounds=2,
        reserve=1,
        dice={"ann": 4, "bob": 1, "cy": 0, "dee": 0, "gus": 0},
        absent=["gus", "hal"],
    )
    night.send("ann", "give bob 1 die")
    night.refused("ann", "give bob 3 dice")
    night.refused("ann", "give bob 1 token")
    night.refused("ann", "give zed 1 die")
    night.refused("ann", "ready\ngive bob 1 die")
    night.send("ann", "ready")
    night.deadline()
    night.refused("cy", "roll 1")
    night.refused("ann", "roll 4")
    night.send("ann", "roll 3", [6, 2, 2])
    night.refused("ann", "reroll set-aside 5")
    night.send("ann", "reroll set-aside 6", [3, 3])
    night.refused("bob", "roll 2\narrange 6 2 2")
    night.send("eve", "roll 2\narrange desc", [6, 3])
    night.send("fay", "roll all\narrange desc", [6, 3, 3])
    # ann has not arranged and bob has not rolled; cy and dee roll temporary dice, twice.
    night.deadline([4, 2, 3, 3, 2, 5])
    night.deadline()
    night.refused("ann", "roll 2\narrange desc\ntoken 1", [6, 4])  # the lines before stand
    night.send("ann", "token 2")
    night.send("bob", "roll 2\narrange desc", [6, 2])
    night.send("cy", "roll 1\narrange desc", [6])
    night.send("dee", "roll 1\narrange desc", [6])
    night.send("eve", "roll 3\narrange desc", [6, 2, 1])
    # fay's roll closes the rolling: cy and dee tie twice on their one die.
    night.send("fay", "roll 2\narrange desc", [1, 1, 3, 3, 5, 2])
    assert night.state.finished
    return night


def token_night() -> Night:
    """Three with tokens: a token window after the reveal and one after a tiebreak roll."""
    night = start(("A", "B", "C"), order_mode="free", tokens=True)
    night.deadline()
    night.state = replace(night.state, tokens=(2, 1, 1))
    night.send("A", "roll 2\narrange desc", [5, 3])
    night.send("B", "roll 2\narrange desc", [5, 3])
    night.send("C", "roll 2\narrange desc", [6, 6])
    night.refused("A", "roll 1")
    night.refused("A", "token none\ntoken 1")
    night.refused("C", "token 1")
    night.send("A", "token none")
    night.send("B", "token none")
    night.deadline([4, 4])
    night.refused("A", "token 3")
    night.send("A", "token 1 2")
    night.send("B", "token 1")
    night.deadline()
    assert night.state.finished
    return night


def host_night() -> Night:
    """Six in seating mode; the host sets the order, whose first two hold no die."""
    night = start(("P1", "P2", "P3", "P4", "P5", "P6"), dice={"P1": 0, "P2": 0})
    night.state, events = engine.host_order(night.state, (0, 1, 2, 3, 4, 5))
    night.heard(events)
    assert night.state.finished
    return night


# --- the campaign night ----------------------------------------------------------------------


def test_the_night_opens_in_german() -> None:
    night = start(
        ("ann", "bob", "cy", "dee", "eve", "fay"),
        order_mode="free",
        tokens=True,
        rounds=2,
        reserve=1,
        dice={"ann": 4, "bob": 1, "cy": 0, "dee": 0, "gus": 0},
        absent=["gus", "hal"],
    )

    assert [german(event.text) for event in night.events] == [
        "gus fehlt und hat keine Würfel: nichts bewegt sich",
        "hal fehlt: ein Würfel geht in den Vorrat (3 -> 2)",
        "hal steigt mit 3 Würfeln in die Kampagne ein",
        "eve steigt mit 3 Würfeln in die Kampagne ein",
        "fay steigt mit 3 Würfeln in die Kampagne ein",
        "der Abend beginnt: ann 4, bob 1, cy 0, dee 0, eve 3, fay 3; Vorrat 2; Chips: keine",
        "Durchgang 1 von 2: die Geschenkphase läuft (give <player> <n> dice oder ready)",
    ]
    assert night.prompt(0) == (
        "Geschenke oder bereit",
        "Durchgang 1, Geschenke: give <player> <n> dice oder tokens, oder ready "
        "(du hast 4 Würfel und 0 Chips)",
    )
    assert night.prompt(1)[1] == (
        "Durchgang 1, Geschenke: give <player> <n> dice oder tokens, oder ready "
        "(du hast 1 Würfel und 0 Chips)"
    )
    assert night.labels(0) == [("ready", "Bereit: keine Geschenke mehr von mir")]


def test_gifts_and_their_refusals_in_german() -> None:
    night = start(("ann", "bob", "cy"), dice={"ann": 3, "bob": 3, "cy": 0})

    assert night.send("ann", "give bob 1 die") == ["Durchgang 1: ann schenkt bob 1 Würfel"]
    assert night.send("bob", "give ann 2 dice") == ["Durchgang 1: bob schenkt ann 2 Würfel"]
    assert night.refused("ann", "give bob 4 dice") == (
        "give bob 4 dice: Geschenk abgelehnt: dir blieben 0 Würfel (du hast 4)"
    )
    assert night.refused("ann", "give bob 1 token") == (
        "give bob 1 token: in diesem Spiel gibt es keine Chips"
    )
    assert night.refused("ann", "give zed 1 die") == (
        "give zed 1 die: zed spielt in diesem Spiel nicht mit (Spieler: ann, bob, cy)"
    )
    assert night.refused("ann", "give bob x dice") == (
        "give bob x dice: 'x' ist keine Anzahl Würfel; schreib sie mit den Ziffern 0-9"
    )
    assert night.refused("ann", "give bob 0 dice") == (
        "give bob 0 dice: ein Geschenk braucht mindestens 1 Würfel"
    )
    assert night.refused("ann", "ready\ngive bob 1 die") == (
        "Zeile 2 (give bob 1 die): du hast ready geschickt: in diesem Durchgang keine Geschenke "
        "mehr von dir"
    )
    assert night.refused("ann", "shout") == (
        "shout: unbekannter Zug; die Züge lauten give <player> <n> dice, give <player> <n> "
        "tokens, ready, roll <n>, roll all, reroll set-aside <value>, arrange <values>, "
        "arrange desc, token <positions>, token none"
    )
    assert night.send("ann", "ready") == ["Durchgang 1: ann ist bereit"]
    assert night.prompt(0) == (
        "bereit",
        "Durchgang 1, Geschenke: du bist bereit (du hast 4 Würfel); gewürfelt wird, sobald alle "
        "bereit sind",
    )
    assert night.send("bob", "ready") == ["Durchgang 1: bob ist bereit"]
    assert night.send("cy", "ready") == [
        "Durchgang 1: cy ist bereit",
        "Durchgang 1: die Geschenkphase ist vorbei; jetzt wird gewürfelt; "
        "ohne Würfel setzen aus: cy",
    ]


def test_rolling_in_german() -> None:
    night = start(("ann", "bob", "cy"), dice={"ann": 3, "bob": 1, "cy": 0}, tokens=True)
    night.deadline()
    night.state = replace(night.state, tokens=(0, 1, 0))

    assert night.prompt(0) == ("würfeln", "Durchgang 1: roll <n> (1 bis 3) oder roll all")
    assert night.labels(0) == [
        ("roll 1", "Mit 1 Würfel würfeln"),
        ("roll 2", "Mit 2 Würfeln würfeln"),
        ("roll 3", "Mit 3 Würfeln würfeln"),
        ("roll all", "Mit allen deinen Würfeln würfeln (3)"),
    ]
    assert night.refused("ann", "roll 4") == "roll 4: du hast 3 Würfel: roll 1 bis 3"
    assert night.refused("bob", "roll 2") == "roll 2: du hast 1 Würfel: roll 1 bis 1"
    assert night.refused("ann", "arrange desc") == (
        "arrange desc: du hast noch nicht gewürfelt: erst roll <n>"
    )
    assert night.send("ann", "roll 3", [6, 2, 2]) == [
        "Durchgang 1: du würfelst 6 2 2",
        "Durchgang 1: ann hat gewürfelt",
    ]
    assert night.prompt(0) == (
        "neu würfeln oder anordnen",
        "Durchgang 1: reroll set-aside <value> oder arrange <values> / arrange desc (nach Wurf 1)",
    )
    assert night.labels(0) == [
        ("reroll set-aside 6", "Eine 6 beiseitelegen und den Rest neu würfeln"),
        ("reroll set-aside 2", "Eine 2 beiseitelegen und den Rest neu würfeln"),
        ("arrange desc", "Von hoch nach niedrig anordnen"),
    ]
    assert night.refused("ann", "reroll set-aside 5") == (
        "reroll set-aside 5: du hast keine 5 (deine Würfel: 6 2 2)"
    )
    assert night.send("ann", "reroll set-aside 6", [3, 3]) == [
        "Durchgang 1: du legst eine 6 beiseite und würfelst neu: 3 3",
        "Durchgang 1: ann legt einen Würfel beiseite und würfelt neu",
    ]
    assert night.refused("ann", "arrange 6 3 3") == (
        "arrange 6 3 3: arrange muss genau deine Würfel verwenden: 3 3"
    )
    assert night.refused("ann", "arrange 3 3\ntoken 1") == (
        "Zeile 2 (token 1): du hast keinen Chip"
    )
    assert night.refused("bob", "roll 1\narrange 6 2") == (
        "Zeile 2 (arrange 6 2): arrange muss genau deine Würfel verwenden: den 1 Würfel, den du "
        "dann hast"
    )
    assert night.refused("bob", "roll 1\narrange desc\ntoken 1", [6]) == (
        "Zeile 3 (token 1): Würfel 1 zeigt 6 und kann nicht höher (die Zeilen davor gelten: "
        "deine Würfel sind schon geworfen)"
    )
    assert night.refused("cy", "roll 1") == (
        "von dir wird jetzt kein Zug erwartet: du hast in diesem Durchgang keine Würfel"
    )
    assert night.send("ann", "arrange desc") == [
        "Durchgang 1: du ordnest an: 3 3",
        "Durchgang 1: ann hat angeordnet",
        "Durchgang 1, aufgedeckt: ann 3 3; bob 6",
        "Durchgang 1, tatsächliche Reihenfolge: bob, cy, ann",
        "Durchgang 1, Auswertung: bob gibt ann einen Würfel",
        "nach Durchgang 1: ann 4, bob 0, cy 0; Vorrat 0; Chips: bob 1",
        "der Abend ist vorbei; Kampagnenbogen: ann 4, bob 0, cy 0, Vorrat 0",
    ]


def test_a_campaign_night_in_german() -> None:
    night = campaign_night()
    public = [german(event.text) for event in night.events if event.to is None]
    private = [german(event.text) for event in night.events if event.to == (0,)]

    assert public[16:29] == [
        "Durchgang 1: ann hat nicht angeordnet: von hoch nach niedrig",
        "Durchgang 1: ann hat angeordnet",
        "Durchgang 1: bob hat nicht gewürfelt: alle Würfel werden geworfen und von hoch nach "
        "niedrig angeordnet",
        "Durchgang 1: bob hat gewürfelt",
        "Durchgang 1: bob hat angeordnet",
        "Durchgang 1, aufgedeckt: ann 3 3; bob 4 2; eve 6 3; fay 6 3 3",
        "Durchgang 1, Leihwürfel: cy 3; dee 3",
        "Durchgang 1, Leihwürfel noch einmal: cy 2; dee 5",
        "Durchgang 1, tatsächliche Reihenfolge: fay, eve, bob, ann, dee, cy",
        "Durchgang 1, Auswertung: fay gibt cy einen Würfel; der Vorrat gibt dee einen Würfel; "
        "ann bekommt einen Chip",
        "nach Durchgang 1: ann 3, bob 2, cy 1, dee 1, eve 3, fay 2; Vorrat 1; Chips: ann 1",
        "Durchgang 2 von 2: die Geschenkphase läuft (give <player> <n> dice oder ready)",
        "Durchgang 2: die Geschenkphase ist vorbei; jetzt wird gewürfelt",
    ]
    assert public[-7:] == [
        "Durchgang 2, aufgedeckt: ann 6 4+1; bob 6 2; cy 6; dee 6; eve 6 2 1; fay 1 1",
        "Durchgang 2, Stechwurf 1: cy 3 (3); dee 3 (3)",
        "Durchgang 2, Stechwurf 2: cy 5 (5); dee 2 (2)",
        "Durchgang 2, tatsächliche Reihenfolge: ann, eve, bob, cy, dee, fay",
        "Durchgang 2, Auswertung: ann gibt fay einen Würfel; der Vorrat gibt dee einen Würfel; "
        "cy bekommt einen Chip",
        "nach Durchgang 2: ann 2, bob 2, cy 1, dee 2, eve 3, fay 3; Vorrat 0; Chips: cy 1",
        "der Abend ist vorbei; Kampagnenbogen: ann 2, bob 2, cy 1, dee 2, eve 3, fay 3, gus 0, "
        "hal 3(-1), Vorrat 0",
    ]
    assert private == [
        "Durchgang 1: du würfelst 6 2 2",
        "Durchgang 1: du legst eine 6 beiseite und würfelst neu: 3 3",
        "Durchgang 1: du ordnest an: 3 3",
        "Durchgang 2: du würfelst 6 4",
        "Durchgang 2: du ordnest an: 6 4",
        "Durchgang 2: deine Anordnung mit Chips: 6 4+1",
    ]


def test_a_token_placed_while_rolling_is_told_in_german() -> None:
    night = start(("ann", "bob"), tokens=True)
    night.deadline()
    night.state = replace(night.state, tokens=(1, 0))
    night.send("ann", "roll 2\narrange desc", [5, 4])

    assert night.prompt(0) == (
        "Chip",
        "Durchgang 1: angeordnet; token <position> geht noch, bis das Würfeln endet",
    )
    assert night.labels(0) == [
        ("token 1", "Einen Chip auf Würfel 1 legen (aus 5 wird 6)"),
        ("token 2", "Einen Chip auf Würfel 2 legen (aus 4 wird 5)"),
    ]
    assert night.refused("ann", "token 3") == (
        "token 3: es gibt keinen Würfel 3: deine Reihe hat 2 Würfel"
    )
    assert night.refused("ann", "token none") == (
        "token none: token none gibt es nur in Chip-Phasen"
    )
    assert night.refused("ann", "give bob 1 die") == (
        "give bob 1 die: Geschenke gehen erst wieder, wenn dieser Durchgang ausgewertet ist"
    )
    assert night.send("ann", "token 2") == ["Durchgang 1: deine Anordnung mit Chips: 5 4+1"]
    assert night.refused("ann", "token 2") == (
        "token 2: Würfel 2 hat in diesem Durchgang schon einen Chip"
    )


# --- the token windows -----------------------------------------------------------------------


def test_token_windows_in_german() -> None:
    night = start(("A", "B", "C"), order_mode="free", tokens=True)
    night.deadline()
    night.state = replace(night.state, tokens=(2, 1, 1))
    night.send("A", "roll 2\narrange desc", [5, 3])
    night.send("B", "roll 2\narrange desc", [5, 3])

    assert night.send("C", "roll 2\narrange desc", [6, 6])[-1] == (
        "Durchgang 1, aufgedeckt: A 5 3; B 5 3; C 6 6"
    )
    assert night.prompt(0) == (
        "Chip",
        "Durchgang 1, Chip-Phase nach dem Aufdecken: token <positions> oder token none",
    )
    assert night.labels(0) == [
        ("token none", "Jetzt keinen Chip einsetzen"),
        ("token 1", "Einen Chip auf Würfel 1 legen (aus 5 wird 6)"),
        ("token 2", "Einen Chip auf Würfel 2 legen (aus 3 wird 4)"),
    ]
    assert night.refused("A", "roll 1") == (
        "roll 1: das Würfeln ist vorbei; in dieser Phase gehen nur token-Zeilen"
    )
    assert night.refused("A", "token none\ntoken 1") == (
        "Zeile 2 (token 1): token none geht nicht zusammen mit Chips im selben Zug"
    )
    assert night.refused("C", "token 1") == "von dir wird jetzt kein Zug erwartet"
    assert night.send("A", "token none") == ["Durchgang 1, Chip-Phase: dein Zug ist token none"]
    night.send("B", "token none")
    assert night.deadline([4, 4]) == [
        "Durchgang 1: A setzt keinen Chip ein",
        "Durchgang 1: B setzt keinen Chip ein",
        "Durchgang 1, Stechwurf 1: A 4 (5 4); B 4 (5 4)",
    ]
    assert night.prompt(1) == (
        "Chip",
        "Durchgang 1, Chip-Phase nach Stechwurf 1: token <positions> oder token none",
    )
    assert night.refused("B", "token 1 2") == "token 1 2: du hast keinen Chip"
    assert night.send("A", "token 1 2") == ["Durchgang 1, Chip-Phase: dein Zug ist token 1 2"]
    night.send("B", "token 1")
    assert night.deadline() == [
        "Durchgang 1: A legt je einen Chip auf die Würfel 1 2: 5+1 4+1",
        "Durchgang 1: B legt einen Chip auf Würfel 1: 5+1 4",
        "Durchgang 1, tatsächliche Reihenfolge: C, A, B",
        "Durchgang 1, Auswertung: C gibt B einen Würfel",
        "nach Durchgang 1: A 3, B 4, C 2; Vorrat 0; Chips: C 1",
        "der Abend ist vorbei; Kampagnenbogen: A 3, B 4, C 2, Vorrat 0",
    ]
    assert night.refused("A", "token none") == (
        "der Abend ist vorbei; von dir wird kein Zug erwartet"
    )


# --- the host, the options, the game's errors ------------------------------------------------


def test_the_host_sets_the_order_in_german() -> None:
    night = host_night()

    assert [german(event.text) for event in night.events[-5:-1]] == [
        "Durchgang 1: der Gastgeber legt die tatsächliche Reihenfolge fest",
        "Durchgang 1, tatsächliche Reihenfolge: P1, P2, P3, P4, P5, P6",
        "Durchgang 1, Auswertung: P1 hat keinen Würfel abzugeben; P2 hat keinen Würfel: "
        "P5 bekommt nichts",
        "nach Durchgang 1: P1 0, P2 0, P3 3, P4 3, P5 3, P6 3; Vorrat 0",
    ]


def game_refusals() -> list[str]:
    """The host's order after the reveal and without a player, and a deadline after the
    night."""
    over = host_night().state
    calls: list[Callable[[], object]] = [
        lambda: engine.host_order(over, (0, 1, 2, 3, 4, 5)),
        lambda: engine.host_order(night_at("gifts"), (0, 1, 1)),
        lambda: engine.resolve(over, NoDice()),
    ]
    messages = []
    for call in calls:
        with pytest.raises(GameError) as refused:
            call()
        messages.append(refused.value.message)
    return messages


def test_the_host_and_the_deadline_refused_in_german() -> None:
    assert [german(message) for message in game_refusals()] == [
        "der Gastgeber kann die tatsächliche Reihenfolge nur vor dem Aufdecken festlegen",
        "die tatsächliche Reihenfolge muss jeden Spieler genau einmal nennen",
        "der Abend ist vorbei; es gibt nichts mehr auszuwerten",
    ]


def night_at(phase: str) -> FirstPlayerState:
    """ann (3 dice), bob (1) and cy (0) in a night with tokens, bob holding one: the gift
    window; "rolling" (ann has rolled 6 2 2); "arranged" (bob has arranged a 4); or, without
    tokens, "plain" (ann has arranged) and "over" (the night is)."""
    tokens = phase not in ("plain", "over")
    night = start(("ann", "bob", "cy"), dice={"ann": 3, "bob": 1, "cy": 0}, tokens=tokens)
    if phase == "gifts":
        return night.state
    night.deadline()
    night.state = replace(night.state, tokens=(0, 1, 0) if tokens else (0, 0, 0))
    if phase == "rolling":
        night.send("ann", "roll 3", [6, 2, 2])
    if phase == "arranged":
        night.send("bob", "roll 1\narrange desc", [4])
    if phase == "plain":
        night.send("ann", "roll 1\narrange desc", [5])
    if phase == "over":
        night.send("ann", "roll 1\narrange desc", [5])
        night.send("bob", "roll 1\narrange desc", [4])
    return night.state


REFUSED = [
    ("gifts", 9, "ready", "in diesem Spiel gibt es keinen Platz 9"),
    (
        "gifts",
        0,
        "",
        "der Zug ist leer; die Züge lauten give <player> <n> dice, give <player> <n> tokens, "
        "ready, roll <n>, roll all, reroll set-aside <value>, arrange <values>, arrange desc, "
        "token <positions>, token none",
    ),
    ("gifts", 0, "give bob", "give bob: schreib give <player> <n> dice (oder tokens)"),
    (
        "gifts",
        0,
        "give bob x dice",
        "give bob x dice: 'x' ist keine Anzahl Würfel; schreib sie mit den Ziffern 0-9",
    ),
    (
        "gifts",
        0,
        "shout",
        "shout: unbekannter Zug; die Züge lauten give <player> <n> dice, give <player> <n> "
        "tokens, ready, roll <n>, roll all, reroll set-aside <value>, arrange <values>, "
        "arrange desc, token <positions>, token none",
    ),
    ("gifts", 0, "ready now", "ready now: nach ready kommt nichts mehr"),
    ("gifts", 0, "give ann 1 die", "give ann 1 die: ein Geschenk geht an einen anderen Spieler"),
    (
        "gifts",
        0,
        "give bob 0 tokens",
        "give bob 0 tokens: ein Geschenk braucht mindestens 1 Chip",
    ),
    (
        "gifts",
        0,
        "give bob x tokens",
        "give bob x tokens: 'x' ist keine Anzahl Chips; schreib sie mit den Ziffern 0-9",
    ),
    (
        "gifts",
        0,
        "roll 1",
        "roll 1: das Würfeln hat noch nicht begonnen: die Geschenkphase läuft; schick ready, um "
        "sie früher zu beenden",
    ),
    ("rolling", 1, "roll", "roll: schreib roll <n> oder roll all"),
    ("rolling", 1, "arrange desc", "arrange desc: du hast noch nicht gewürfelt: erst roll <n>"),
    ("rolling", 0, "arrange desc\ntoken 2", "Zeile 2 (token 2): du hast keinen Chip"),
    ("rolling", 1, "reroll 5", "reroll 5: schreib reroll set-aside <value>"),
    ("rolling", 1, "arrange", "arrange: schreib arrange <values> oder arrange desc"),
    ("rolling", 1, "arrange 7", "arrange 7: '7' ist kein Würfelwert 1-6"),
    ("rolling", 1, "token", "token: schreib token <position> ... oder token none"),
    ("rolling", 1, "token 0", "token 0: '0' ist keine Würfelposition (1 = ganz links)"),
    ("rolling", 0, "roll 1", "roll 1: du hast schon gewürfelt"),
    (
        "rolling",
        1,
        "roll 1\nreroll set-aside 3",
        "Zeile 2 (reroll set-aside 3): du brauchst mindestens 2 Würfel in der Hand, um einen "
        "beiseitezulegen",
    ),
    (
        "rolling",
        1,
        "token 1",
        "token 1: erst anordnen: ein Chip kommt auf einen angeordneten Würfel",
    ),
    (
        "rolling",
        0,
        "ready",
        "ready: Geschenke gehen erst wieder, wenn dieser Durchgang ausgewertet ist",
    ),
    ("arranged", 1, "arrange desc", "arrange desc: du hast schon angeordnet"),
    ("arranged", 1, "token none", "token none: token none gibt es nur in Chip-Phasen"),
    ("arranged", 1, "token 1 1", "token 1 1: Würfel 1 hat in diesem Durchgang schon einen Chip"),
    ("arranged", 1, "token 1 2", "token 1 2: es gibt keinen Würfel 2: deine Reihe hat 1 Würfel"),
    (
        "plain",
        0,
        "token 1",
        "von dir wird jetzt kein Zug erwartet: du hast angeordnet; aufgedeckt wird, sobald alle "
        "angeordnet haben",
    ),
    (
        "plain",
        1,
        "roll 1\narrange desc\ntoken 1",
        "Zeile 3 (token 1): in diesem Spiel gibt es keine Chips",
    ),
    ("over", 0, "ready", "der Abend ist vorbei; von dir wird kein Zug erwartet"),
]


def refusal(phase: str, seat: int, text: str) -> str:
    """The message (as the engine made it) of the order ``text`` of ``seat``."""
    state = night_at(phase)
    with pytest.raises(OrderError) as refused:
        engine.submit(state, seat, engine.parse(state, seat, text), NoDice())
    return refused.value.message


@pytest.mark.parametrize(("phase", "seat", "text", "message"), REFUSED)
def test_orders_refused_in_german(phase: str, seat: int, text: str, message: str) -> None:
    assert german(refusal(phase, seat, text)) == message


OPTIONS_REFUSED: list[tuple[dict[str, Any], tuple[str, ...], str]] = [
    (
        {"order_mode": "fast"},
        ("ann", "bob"),
        "Option order_mode muss seating oder free sein, nicht 'fast'",
    ),
    (
        {"dice": ["ann"]},
        ("ann", "bob"),
        "Option dice muss jedem Mitglied eine Würfelzahl 0-30 zuordnen",
    ),
    ({"dice": {"ann": 1, "ANN": 2}}, ("ann", "bob"), "Option dice nennt ANN zweimal"),
    (
        {"absent": "cy"},
        ("ann", "bob"),
        "Option absent muss eine Liste von Namen der Mitglieder sein",
    ),
    ({"absent": [""]}, ("ann", "bob"), "Option absent: '' ist nicht der Name eines Mitglieds"),
    ({"absent": ["cy", "CY"]}, ("ann", "bob"), "Option absent nennt CY zweimal"),
    ({}, ("ann",), "The First Player braucht 2 bis 20 Spieler, nicht 1"),
    (
        {},
        ("Reserve", "bob"),
        "der Name reserve ist für die Zeile des Vorrats im Kampagnenbogen vorbehalten",
    ),
    (
        {"absent": ["ann"]},
        ("ann", "bob"),
        "Option absent: ann ist abwesend und spielt zugleich mit",
    ),
    ({"dice": {"zed": 2}}, ("ann", "bob"), "Option dice: zed ist weder Spieler noch abwesend"),
    (
        {"dice": {"ann": 0, "bob": 0}},
        ("ann", "bob"),
        "niemand hat einen Würfel: der Abend kann nicht beginnen",
    ),
]


def options_refusal(options: dict[str, Any], players: tuple[str, ...]) -> str:
    with pytest.raises(OptionsError) as refused:
        engine.start(engine.options(options), list(players), NoDice())
    return refused.value.message


@pytest.mark.parametrize(("options", "players", "message"), OPTIONS_REFUSED)
def test_options_refused_in_german(
    options: dict[str, Any], players: tuple[str, ...], message: str
) -> None:
    assert german(options_refusal(options, players)) == message


def test_the_options_in_german() -> None:
    (profile,) = SETTINGS.profiles
    order_mode, rounds, *__ = SETTINGS.options

    assert german(profile.summary) == (
        "Ein schnelles Würfelspiel vor dem eigentlichen Spiel entscheidet, wer es beginnt; die "
        "Würfelzahlen bleiben von Abend zu Abend erhalten. 2 bis 20 Spieler."
    )
    assert german(order_mode.label) == "Reihenfolge im eigentlichen Spiel"
    assert [german(words) for __, words in order_mode.choices] == [
        "nach Plätzen, beginnend beim Gewinner",
        "nach der ganzen Rangfolge",
    ]
    assert (german(rounds.label), german(rounds.help)) == (
        "Eigentliche Spiele heute Abend",
        "Ein Durchgang The First Player pro eigentlichem Spiel.",
    )


# --- no English left -------------------------------------------------------------------------


def templates(value: Any) -> Iterator[tuple[str, str | None, int | None]]:
    """Every (template, plural, count) in a Text's data, its arguments' too."""
    if not isinstance(value, dict):
        return
    if "j" in value:
        yield from templates(value["j"])
        for part in value["i"]:
            yield from templates(part)
        return
    yield value["t"], value.get("p"), value.get("n")
    for argument in value.get("a", {}).values():
        yield from templates(argument)


def everything_said() -> list[str]:
    """Every word of the three nights, of the refused orders, options and host orders, and
    the options' own words."""
    words: list[str] = []
    for night in (campaign_night(), token_night(), host_night()):
        words += night.words
    words += [refusal(phase, seat, text) for phase, seat, text, __ in REFUSED]
    words += [options_refusal(options, players) for options, players, __ in OPTIONS_REFUSED]
    words += game_refusals()
    (profile,) = SETTINGS.profiles
    words.append(profile.summary)
    for option in SETTINGS.options:
        words += [option.label, *([option.help] if option.help else [])]
        words += [label for __, label in option.choices]
    return words


def test_every_word_the_engine_says_is_said_in_german() -> None:
    words = everything_said()
    plain = [text for text in words if not isinstance(text, Text)]
    found = {made for text in words for made in templates(data(text))}
    with translation.override("de"):
        untranslated = sorted(
            template
            for template, plural, count in found
            if template not in SAME_IN_GERMAN
            and (
                translation.gettext(template) == template
                if plural is None
                else translation.ngettext(template, plural, count or 0)
                == (template if count == 1 else plural)
            )
        )

    assert plain == []
    assert untranslated == []
    # Every template of the catalogue but "this order is not for rolling": parse gives the
    # rolling no other verb.
    assert len({made[0] for made in found}) == 139
