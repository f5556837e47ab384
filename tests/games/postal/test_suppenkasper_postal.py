"""A Suppenkasper game by post: a Suppen-Kasper extra round ordered between the two rounds
of one postal turn is played between them when the sweep resolves the step at its
deadline (rules/choice.md 7.5, slot order)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

import pytest

from games import postal
from games.engines.choice.rules import (
    Card,
    ChoiceEngine,
    ChoiceState,
    RoundLine,
    Sheet,
    SkLine,
    legal_choices,
    round_outcome,
    sk_outcome,
)
from games.models import Event, Game, Step
from moderator.mail.models import OutboundEmail
from tests.factories import started_game

pytestmark = pytest.mark.django_db

CHOICE = ChoiceEngine()


def state_of(game: Game) -> ChoiceState:
    game.refresh_from_db()
    state: ChoiceState = CHOICE.state_from_json(game.state)
    return state


def line_for(sheet: Sheet, number: int, roll: tuple[int, ...], card: Card | None) -> RoundLine:
    """The first legal line for ``roll`` with ``card``; Upside Down turns the first die."""
    dice = list(roll)
    if card is not None and card.name == "flip":
        dice[0] = 7 - dice[0]
    return RoundLine(number, legal_choices(sheet, dice)[0], card)


def order_turn(game: Game, cards: list[str | None]) -> tuple[list[RoundLine], Sheet]:
    """ann's lines for the open postal turn, sent by email; the sheet they will leave."""
    state = state_of(game)
    sheet = state.sheets[0]
    lines = []
    for current, name in zip(state.rounds, cards, strict=True):
        card = None if name is None else Card(name, current.roll[0] if name == "flip" else None)
        line = line_for(sheet, current.number, current.roll, card)
        lines.append(line)
        sheet = round_outcome(sheet, current.roll, line, state.options).sheet
    text = "\n".join(line.text() for line in lines)
    postal.accept_order(game_id=game.pk, position=0, text=text, source="email", now=game_now(game))
    return lines, sheet


def game_now(game: Game) -> datetime:
    return game.steps.get(number=game.step_number).opened_at


def sweep(game: Game) -> Step:
    """The sweep at the open step's deadline: the step is due and resolved by it."""
    step = game.steps.get(number=game.step_number)
    assert postal.due_step_ids(step.deadline) == [step.pk]
    assert postal.resolve_due_step(step.pk, now=step.deadline) is True
    game.refresh_from_db()
    step.refresh_from_db()
    assert (step.status, step.closed_by) == ("done", "deadline")
    return step


def tally(lines: list[RoundLine | SkLine]) -> dict[int, int]:
    """The sums the lines record, by hand: Half records the first pair once, Double twice."""
    counts: Counter[int] = Counter()
    for line in lines:
        choice = line.choice
        card = line.card.name if isinstance(line, RoundLine) and line.card else None
        if card == "half":
            counts[sum(choice.first)] += 1
        elif card == "double":
            counts[sum(choice.first)] += 2
        else:
            counts.update(choice.sums)
    return dict(counts)


def test_a_suppen_kasper_round_between_two_rounds_is_played_between_them_by_the_sweep(
    now: datetime,
) -> None:
    game = started_game(
        now=now,
        players=1,
        options={"variant": "suppenkasper", "rolls_per_turn": 2},
        early_processing=False,
    )
    # Rounds 1-4 feed the plate: Half and Double two numbers each, Refusal and Flip one.
    turn1, _ = order_turn(game, ["half", "double"])
    sweep(game)
    turn2, sheet = order_turn(game, ["refuse", "flip"])
    sweep(game)
    assert turn2[1].card is not None
    flipped = turn2[1].card.value
    assert flipped is not None
    plate = sorted(
        [
            *turn1[0].choice.second,  # Half Portion: the second pair
            *turn1[1].choice.second,  # Double Portion: the second pair
            turn2[0].choice.value,  # Refusal: the refused Wurfel
            flipped,  # Upside Down: the die as rolled
        ]
    )
    state = state_of(game)
    assert state.sheets[0].plate == tuple(plate)
    assert [r.number for r in state.rounds] == [5, 6]
    # Postal turn 3: round 5, the Suppen-Kasper round at 5.5 eating five of the six numbers
    # (the dog gets the sixth), then round 6.
    round5, round6 = state.rounds
    line5 = line_for(sheet, 5, round5.roll, None)
    sheet = round_outcome(sheet, round5.roll, line5, state.options).sheet
    eaten, dog = tuple(plate[:5]), plate[5]
    sk = SkLine(5, eaten, legal_choices(sheet, eaten)[0])
    sheet = sk_outcome(sheet, sk, state.options).sheet
    line6 = line_for(sheet, 6, round6.roll, None)
    text = f"{line5.text()}\n{line6.text()}\n5.5: {sk.text()}"
    postal.accept_order(game_id=game.pk, position=0, text=text, source="email", now=game_now(game))
    step = sweep(game)

    def sums(line: RoundLine | SkLine) -> str:
        return ", ".join(map(str, line.choice.sums))

    eat = " ".join(map(str, eaten))
    state = state_of(game)
    assert list(Event.objects.filter(step=step).order_by("id").values_list("text", flat=True)) == [
        f"order received for rounds 5-6:\n5: {line5.text()}\n5.5: SK eat {eat} "
        f"{sk.choice.text()}\n6: {line6.text()}",
        f"ann, round 5: {line5.text()} (sums {sums(line5)})",
        f"ann, slot 5.5: SK eat {eat} {sk.choice.text()} (sums {sums(sk)}); the dog gets {dog}",
        f"ann, round 6: {line6.text()} (sums {sums(line6)})",
        "postal turn 4, rounds 7-8: "
        + "; ".join(f"round {r.number} rolls {' '.join(map(str, r.roll))}" for r in state.rounds),
    ]
    ann = state.sheets[0]
    recorded = tally([*turn1, *turn2, line5, sk, line6])
    assert {total: ann.count(total) for total in range(2, 13)} == {
        total: recorded.get(total, 0) for total in range(2, 13)
    }
    assert ann.plate == ()
    assert ann.cards_used == ("half", "double", "refuse", "flip", "sk")
    assert (ann.active, ann.ended_round) == (True, None)
    # The next report tells it the same way, the extra round labelled 5.5.
    report = OutboundEmail.objects.get(dedupe_key=f"report:{game.pk}:4:0")
    assert (
        f"  ann, slot 5.5: SK eat {eat} {sk.choice.text()} (sums {sums(sk)}); the dog gets {dog}"
        in report.text.splitlines()
    )
    assert "  ann: plate empty; cards left swap; cards used half, double, refuse, flip, sk" in (
        report.text.splitlines()
    )
