"""Choice's autopilot ``best-score`` (games/engines/choice/autopilot.py): exact orders on
sheets from rules/choice.md, and random games, standard and Suppenkasper, where it is
checked at every prompt and where it plays whole games alone."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.engines import registry
from games.engines.base import OrderError
from games.engines.choice.autopilot import STRATEGIES, best_score
from games.engines.choice.rules import (
    Choice,
    ChoiceEngine,
    ChoiceOptions,
    ChoiceOrder,
    ChoiceState,
    Round,
    RoundLine,
    Sheet,
    play_round,
    score,
)
from games.engines.dice import NoDice, VerifiableDice
from tests.games.engines.autopilots import checked_order
from tests.games.engines.test_choice_games import game_setups, random_order
from tests.games.engines.test_suppenkasper_games import game_setups as suppenkasper_setups
from tests.games.engines.test_suppenkasper_games import random_order as random_card_order

engine = ChoiceEngine()
STRATEGY = registry.strategy("choice", "best-score")


def counts(marks: dict[int, int]) -> tuple[int, ...]:
    """A sum track: sum -> times recorded."""
    return tuple(marks.get(total, 0) for total in range(2, 13))


def state_of(
    sheet: Sheet, *rolls: tuple[int, ...], options: ChoiceOptions | None = None
) -> ChoiceState:
    """ann's sheet, with bob beside her, at a postal turn of rounds 21, 22, ... rolled so."""
    return ChoiceState(
        options=options or ChoiceOptions(),
        players=("ann", "bob"),
        sheets=(sheet, Sheet()),
        turn=11,
        rounds=tuple(Round(21 + index, roll) for index, roll in enumerate(rolls)),
        orders=(None, None),
    )


def lines(*choices: tuple[str, int, tuple[int, int], tuple[int, int]]) -> ChoiceOrder:
    return ChoiceOrder(
        tuple(RoundLine(21 + index, Choice(*choice)) for index, choice in enumerate(choices))
    )


def played(state: ChoiceState, order: ChoiceOrder) -> Sheet:
    sheet = state.sheets[0]
    for current, line in zip(state.rounds, order.lines, strict=False):
        sheet = play_round(sheet, current.roll, line, state.options)
    return sheet


def test_the_registry_offers_it_for_choice() -> None:
    assert registry.strategies("choice") == STRATEGIES
    assert STRATEGY is not None and STRATEGY.play is best_score
    assert [s.key for s in STRATEGIES] == ["best-score"]
    assert "Wurfel" in STRATEGIES[0].title


def test_c8_the_forced_wurfel_and_the_pairs_that_complete_two_rows() -> None:
    # C8: roll 1 3 3 4 5, stored 2, 5, 6: the Wurfel must be 5; the pairs make 4 and 7 or
    # 5 and 6. With 5s and 6s at four marks each, 5 and 6 bring both rows to five (0).
    sheet = Sheet(counts=counts({5: 4, 6: 4}), stored=((2, 1), (5, 1), (6, 1)))
    state = state_of(sheet, (1, 3, 3, 4, 5))
    assert best_score(state, 0) == lines(("W", 5, (1, 4), (3, 3)))
    assert score(played(state, best_score(state, 0)).counts) == 0


def test_c8_on_a_blank_track_equal_scores_go_to_the_smaller_sums() -> None:
    # Either pairing opens two rows (-400): the lower sums, 4 and 7, are written.
    state = state_of(Sheet(stored=((2, 1), (5, 1), (6, 1))), (1, 3, 3, 4, 5))
    assert best_score(state, 0) == lines(("W", 5, (1, 3), (3, 4)))


def test_it_plans_the_postal_turn_where_the_nmr_default_plays_round_by_round() -> None:
    # Stored 2, 5, 6; sixes and eights at four marks. Round 21 (3 3 5 6 6): W5 3+3 6+6
    # and W6 3+5 3+6 both score -400 after it, and the default takes the smaller Wurfel, 5.
    # Round 22 (3 3 3 6 6) then forces W6 and 6 + 9: the default ends the turn at -560.
    # Seen together, W6 3+5 3+6 then W6 3+3 3+6 leave 6 and 8 at five, 9 at two: -200.
    sheet = Sheet(counts=counts({6: 4, 8: 4}), stored=((2, 1), (5, 1), (6, 1)))
    state = state_of(sheet, (3, 3, 5, 6, 6), (3, 3, 3, 6, 6))
    assert best_score(state, 0) == lines(("W", 6, (3, 5), (3, 6)), ("W", 6, (3, 3), (3, 6)))
    assert score(played(state, best_score(state, 0)).counts) == -200
    nmr = engine.default(state, 0)
    assert nmr == lines(("W", 5, (3, 3), (6, 6)), ("W", 6, (3, 3), (3, 6)))
    assert score(played(state, nmr).counts) == -560


def test_c11_it_ends_the_game_when_that_scores_most() -> None:
    # C11: stored 1, 5, 6 with 6 seven times; roll 6 2 2 5 1. W6 1+2 2+5 brings 3 and 7 to
    # ten marks (5 x 70 + 5 x 30 = 500) and ends the game, so round 22 has no line.
    sheet = Sheet(counts=counts({3: 9, 7: 9}), stored=((1, 1), (5, 1), (6, 7)))
    state = state_of(sheet, (6, 2, 2, 5, 1), (4, 4, 4, 4, 4))
    order = best_score(state, 0)
    assert order == lines(("W", 6, (1, 2), (2, 5)))
    after = played(state, order)
    assert (after.active, after.ended_round, after.score) == (False, 21, 500)


def test_on_equal_scores_it_keeps_the_game_going() -> None:
    # Stored 1 (x7), 5 and 6; roll 1 5 6 6 6: every legal choice opens two rows (-400).
    # The NMR default takes the smallest Wurfel, 1, which makes eight 1s and ends the
    # game. The autopilot keeps its most-stored value lowest: W5 or W6 leave it at seven,
    # and of those the smaller value is written.
    sheet = Sheet(stored=((1, 7), (5, 1), (6, 1)))
    state = state_of(sheet, (1, 5, 6, 6, 6))
    order = best_score(state, 0)
    assert order == lines(("W", 5, (1, 6), (6, 6)))
    assert played(state, order).active
    nmr = engine.default(state, 0)
    assert nmr == lines(("W", 1, (5, 6), (6, 6)))
    assert not played(state, nmr).active
    assert score(played(state, order).counts) == score(played(state, nmr).counts) == -400


def test_a_free_ride_is_written_as_one() -> None:
    # Stored 2, 4, 6 and a roll of 1 3 3 5 5 shows none of them (W3): a free ride. Fours
    # and eights stand at four marks: F5 1+3 3+5 brings both to five, a score of 0.
    sheet = Sheet(counts=counts({4: 4, 8: 4}), stored=((2, 1), (4, 1), (6, 1)))
    state = state_of(sheet, (1, 3, 3, 5, 5))
    assert best_score(state, 0) == lines(("F", 5, (1, 3), (3, 5)))
    assert score(played(state, best_score(state, 0)).counts) == 0


def test_it_plays_no_card_in_suppenkasper() -> None:
    options = engine.options({"variant": "suppenkasper"})
    sheet = Sheet(stored=((3, 6), (1, 2), (5, 1)), plate=(1, 2, 2, 2, 3))
    state = state_of(sheet, (3, 3, 3, 4, 6), options=options)
    order = best_score(state, 0)
    # K5's roll: the only legal Wurfel is 3, which ends the game at -400 (7 and 9 opened,
    # or 6 and 10); Refusal would avoid that, but the autopilot plays no card.
    assert order.sk is None and all(line.card is None for line in order.lines)
    assert order == lines(("W", 3, (3, 3), (4, 6)))
    assert checked_order(engine, STRATEGIES[0], state, 0) == order


def test_it_refuses_a_seat_that_owes_nothing() -> None:
    state = state_of(Sheet(), (1, 2, 3, 4, 5))
    ended = replace(state, sheets=(Sheet(active=False, ended_round=20, score=0), Sheet()))
    for seat, where in ((0, ended), (2, state), (-1, state)):
        with pytest.raises(OrderError):
            best_score(where, seat)
    assert [prompt.seat for prompt in engine.prompts(ended)] == [1]


def test_it_does_not_read_the_other_players_sealed_orders() -> None:
    sheet = Sheet(counts=counts({6: 4, 8: 4}), stored=((2, 1), (5, 1), (6, 1)))
    state = state_of(sheet, (3, 3, 5, 6, 6), (3, 3, 3, 6, 6))
    state = replace(state, sheets=(sheet, sheet))
    alone = best_score(state, 0)
    for bob in (
        engine.default(state, 1),
        alone,
        lines(("W", 6, (3, 3), (5, 6)), ("W", 6, (3, 3), (3, 6))),
    ):
        assert best_score(replace(state, orders=(None, bob)), 0) == alone
    # Its own sealed order does not change what it plays either.
    assert best_score(replace(state, orders=(engine.default(state, 0), None)), 0) == alone


# Random games of both variants with at most four players: the autopilot plans every
# seat's turn several times over at each prompt.
SETUPS = st.one_of(
    game_setups().map(lambda setup: (setup[0], min(setup[1], 4))), suppenkasper_setups()
)


def other_order(state: ChoiceState, seat: int, rng: random.Random) -> ChoiceOrder:
    """A random legal order, with cards and Suppen-Kasper rounds in Suppenkasper."""
    if state.options.suppenkasper:
        return random_card_order(state, seat, rng)
    return random_order(state, seat, rng)


def hidden_changed(state: ChoiceState, seat: int, rng: random.Random) -> ChoiceState:
    """``state`` with every other seat's sealed order changed (all a seat may not see)."""
    orders = tuple(
        order
        if other == seat or not sheet.active
        else rng.choice([None, other_order(state, other, rng)])
        for other, (order, sheet) in enumerate(zip(state.orders, state.sheets, strict=True))
    )
    return replace(state, orders=orders)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setup=SETUPS, seed=st.binary(min_size=32, max_size=32), rng=st.randoms())
def test_random_games_it_is_legal_at_every_prompt(
    setup: tuple[ChoiceOptions, int], seed: bytes, rng: random.Random
) -> None:
    options, players = setup
    dice = VerifiableDice(seed, game_id=rng.randrange(1, 10**6))
    state, _ = engine.start(options, [f"p{seat}" for seat in range(players)], dice)
    strategy = STRATEGIES[0]
    while not state.finished:
        chosen = {}
        for prompt in engine.prompts(state):
            chosen[prompt.seat] = checked_order(engine, strategy, state, prompt.seat)
            changed = hidden_changed(state, prompt.seat, rng)
            assert strategy.play(changed, prompt.seat) == chosen[prompt.seat]
        for prompt in engine.prompts(state):
            way = rng.choice(["autopilot", "random", "none"])
            if way != "none":
                order = (
                    chosen[prompt.seat]
                    if way == "autopilot"
                    else other_order(state, prompt.seat, rng)
                )
                state, _ = engine.submit(state, prompt.seat, order, NoDice())
        # The sealed orders now in the state change nothing it plays for any seat.
        for seat, order in chosen.items():
            assert strategy.play(state, seat) == order
        state, _ = engine.resolve(state, dice)
    assert engine.prompts(state) == []


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    setup=SETUPS,
    seed=st.binary(min_size=32, max_size=32),
)
def test_games_played_by_the_autopilot_alone_finish(
    setup: tuple[ChoiceOptions, int], seed: bytes
) -> None:
    options, players = setup
    dice = VerifiableDice(seed, game_id=7)
    state, _ = engine.start(options, [f"p{seat}" for seat in range(players)], dice)
    turns = 0
    while not state.finished:
        turns += 1
        assert turns <= options.round_cap
        for prompt in engine.prompts(state):
            order = checked_order(engine, STRATEGIES[0], state, prompt.seat)
            state, _ = engine.submit(state, prompt.seat, order, NoDice())
        state, _ = engine.resolve(state, dice)
        # Every sheet took the autopilot's lines: none was left to the NMR default.
        assert all(not play.default for play in state.history)
    standings = engine.standings(state)
    assert standings is not None
    assert sorted(s.seat for s in standings) == list(range(players))
