"""Guess the Die, the rules: every round each player guesses a face (``guess 4``), sealed;
when the round resolves one die is rolled and every right guess scores a point. The most
points after ``rounds`` rounds wins. No guess in time: ``guess 1``.

Pure like every engine: no Django, every die drawn through the dice source.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from games.engines.base import (
    JSON,
    Dice,
    Event,
    JsonCodec,
    Option,
    OrderError,
    Prompt,
    Standing,
    check_option_keys,
    check_players,
    competition_places,
    option_int,
    order_lines,
    order_number,
    single_profile,
)

FACES = range(1, 7)


@dataclass(frozen=True)
class GuessOptions:
    rounds: int = 2


# What the GM sets on the new-game form, and reads in words on every page.
SETTINGS = single_profile(
    "Guess the Die",
    "Guess the face of the next die; a point for every right guess. 2 to 6 players.",
    Option("rounds", "Rounds", "Rounds to play.", low=1, high=5),
)


@dataclass(frozen=True)
class Guess:
    face: int


@dataclass(frozen=True)
class GuessState:
    options: GuessOptions
    players: tuple[str, ...]
    round: int
    scores: tuple[int, ...]
    # Each seat's sealed guess of this round; None until it sends one.
    guesses: tuple[int | None, ...]
    rolls: tuple[int, ...] = ()

    @property
    def finished(self) -> bool:
        return self.round > self.options.rounds


class GuessEngine(JsonCodec):
    key = "guess"
    title = "Guess the Die"
    min_players = 2
    max_players = 6
    sequential = False
    step_word = "round"
    # Its guesses are told to everyone: no private event speaks to its seat.
    onlooker_words: Mapping[str, str] = {}
    State = GuessState
    Order = Guess

    def options(self, data: Mapping[str, JSON]) -> GuessOptions:
        check_option_keys(self.title, data, ["rounds"])
        return GuessOptions(rounds=option_int("rounds", data.get("rounds", 2), 1, 5))

    def start(
        self, options: GuessOptions, players: Sequence[str], dice: Dice
    ) -> tuple[GuessState, list[Event]]:
        check_players(self.title, self.min_players, self.max_players, len(players))
        state = GuessState(
            options=options,
            players=tuple(players),
            round=1,
            scores=(0,) * len(players),
            guesses=(None,) * len(players),
        )
        return state, [Event(f"Round 1 of {options.rounds}: guess the die.")]

    def prompts(self, state: GuessState) -> list[Prompt]:
        if state.finished:
            return []
        # The round in the hint: the prompts of a new step differ from the last step's.
        hint = f"round {state.round}: guess a face 1-6, e.g. guess 4"
        return [Prompt(seat, "guess", hint) for seat in range(len(state.players))]

    def parse(self, state: GuessState, seat: int, text: str) -> Guess:
        lines = order_lines(text)
        if len(lines) != 1:
            raise OrderError("write one line: guess and a face 1-6, e.g. guess 4")
        words = lines[0].split()
        face = order_number(words[1]) if len(words) == 2 and words[0] == "guess" else None
        if face is None or face not in FACES:
            raise OrderError(f"line 1: {lines[0]!r} is not a guess; write e.g. guess 4")
        return Guess(face)

    def submit(
        self, state: GuessState, seat: int, order: Guess, dice: Dice
    ) -> tuple[GuessState, list[Event]]:
        if state.finished:
            raise OrderError("the game is over")
        guesses = list(state.guesses)
        guesses[seat] = order.face
        return replace(state, guesses=tuple(guesses)), []

    def resolve(self, state: GuessState, dice: Dice) -> tuple[GuessState, list[Event]]:
        guesses = [1 if face is None else face for face in state.guesses]
        rolled = dice.draw(6)
        right = [seat for seat, face in enumerate(guesses) if face == rolled]
        scores = tuple(score + (seat in right) for seat, score in enumerate(state.scores))
        names = ", ".join(state.players[seat] for seat in right) or "nobody"
        events = [Event(f"Round {state.round}: the die shows {rolled}; right: {names}.")]
        after = replace(
            state,
            round=state.round + 1,
            scores=scores,
            guesses=(None,) * len(state.players),
            rolls=(*state.rolls, rolled),
        )
        return after, events

    def default(self, state: GuessState, seat: int) -> Guess:
        return Guess(1)

    def canonical(self, state: GuessState, seat: int, order: Guess) -> str:
        return f"guess {order.face}"

    def view(self, state: GuessState, seat: int | None) -> dict[str, JSON]:
        view: dict[str, JSON] = {
            "round": min(state.round, state.options.rounds),
            "rolls": list(state.rolls),
            "scores": dict(zip(state.players, state.scores, strict=True)),
        }
        if seat is not None:
            guess = state.guesses[seat]
            view["you"] = {
                "has_order": guess is not None,
                "order": None if guess is None else f"guess {guess}",
            }
        return view

    def standings(self, state: GuessState) -> list[Standing] | None:
        if not state.finished:
            return None
        places = competition_places([(seat, -score) for seat, score in enumerate(state.scores)])
        return [Standing(seat, place, state.scores[seat]) for seat, place in places]
