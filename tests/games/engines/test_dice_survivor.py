"""Dice Survivor: the worked examples of rules/dice-survivor.md section 11, the order syntax
and its messages, the options, the no-moves defaults, naturals, ties, rematches, KO and the
Finals."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest

from games.engines.base import Event, GameError, OptionsError, OrderError, Prompt, Standing
from games.engines.dice import NoDice, ScriptedDice
from games.engines.dice_survivor.rules import (
    DiceSurvivorEngine,
    Participant,
    Question,
    SurvivorOptions,
    SurvivorOrder,
    SurvivorState,
    ko_loss,
)

engine = DiceSurvivorEngine()
NAMES = ("ann", "bob", "cy", "dee", "eve", "fay", "gus", "hal")


def game(
    pp: Sequence[int],
    *,
    active: int = 0,
    actions_left: int = 2,
    finals: bool = False,
    turn: int = 7,
    options: SurvivorOptions | None = None,
    rematches_used: Sequence[int] = (),
    **changes: Any,
) -> SurvivorState:
    """A game in the middle: seat i holds pp[i] PP (0: eliminated earlier)."""
    participants = []
    for seat, points in enumerate(pp):
        used = rematches_used[seat] if seat < len(rematches_used) else 0
        if points:
            participants.append(Participant(points, rematches_used=used))
        else:
            participants.append(Participant(0, used, out_turn=1, out_action=0))
    state = SurvivorState(
        options=options or SurvivorOptions(),
        players=NAMES[: len(pp)],
        participants=tuple(participants),
        initiative=(),
        first_player=0,
        turn=turn,
        active=active,
        actions_left=1 if finals else actions_left,
        finals=finals,
        actions_done=3,
    )
    return replace(state, **changes)


def seat(name: str) -> int:
    return NAMES.index(name)


def play(
    state: SurvivorState, name: str, text: str, dice: Sequence[int] = ()
) -> tuple[SurvivorState, list[Event]]:
    """``name`` sends ``text``; every die in ``dice`` must be drawn, and no other."""
    scripted = ScriptedDice(dice)
    order = engine.parse(state, seat(name), text)
    before = engine.prompts(state)
    state, events = engine.submit(state, seat(name), order, scripted)
    assert scripted.position == len(dice)
    assert engine.prompts(state) != before
    assert all(event.to is None for event in events)
    return roundtrip(state), events


def deadline(state: SurvivorState, dice: Sequence[int] = ()) -> SurvivorState:
    scripted = ScriptedDice(dice)
    state, _ = engine.resolve(state, scripted)
    assert scripted.position == len(dice)
    return roundtrip(state)


def roundtrip(state: SurvivorState) -> SurvivorState:
    restored: SurvivorState = engine.state_from_json(
        json.loads(json.dumps(engine.state_to_json(state)))
    )
    assert restored == state
    json.dumps(engine.view(state, None))
    return restored


def pps(state: SurvivorState) -> list[int]:
    return [p.pp for p in state.participants]


def rejected(state: SurvivorState, name: str, text: str) -> str:
    with pytest.raises(OrderError) as excinfo:
        engine.parse(state, seat(name), text)
    return excinfo.value.message


def prompt_of(state: SurvivorState) -> tuple[str, str]:
    (prompt,) = engine.prompts(state)
    return state.players[prompt.seat], prompt.kind


# --- section 2: options --------------------------------------------------------------------


def test_options_defaults() -> None:
    assert engine.options({}) == SurvivorOptions(
        start_pp=5,
        rematches=3,
        ko_half="floor",
        ko_defender="lower",
        finals_add_pp=True,
        turn_cap=300,
    )


def test_every_option_key_is_read() -> None:
    options = engine.options(
        {
            "start_pp": 20,
            "rematches": 0,
            "ko_half": "ceil",
            "ko_defender": "higher",
            "finals_add_pp": False,
            "turn_cap": 0,
        }
    )
    assert options == SurvivorOptions(20, 0, "ceil", "higher", False, 0)
    assert engine.options({"turn_cap": 20}).turn_cap == 20
    assert engine.options({"turn_cap": 5000, "start_pp": 1}).turn_cap == 5000


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {"colour": "red"},
            "unknown option 'colour' (Dice Survivor options: start_pp, "
            "rematches, ko_half, ko_defender, finals_add_pp, turn_cap)",
        ),
        ({"start_pp": 0}, "option start_pp must be 1-20, not 0"),
        ({"start_pp": 21}, "option start_pp must be 1-20, not 21"),
        ({"start_pp": "5"}, "option start_pp must be a whole number 1-20, not '5'"),
        ({"start_pp": True}, "option start_pp must be a whole number 1-20, not True"),
        ({"rematches": 11}, "option rematches must be 0-10, not 11"),
        ({"rematches": -1}, "option rematches must be 0-10, not -1"),
        ({"ko_half": "round"}, "option ko_half must be one of floor, ceil, not 'round'"),
        ({"ko_defender": "d12"}, "option ko_defender must be one of lower, higher, not 'd12'"),
        ({"finals_add_pp": "yes"}, "option finals_add_pp must be true or false, not 'yes'"),
        ({"turn_cap": 19}, "option turn_cap must be 0 (off) or a whole number 20-5000, not 19"),
        ({"turn_cap": 5001}, "option turn_cap must be 0 (off) or a whole number 20-5000, not 5001"),
        ({"turn_cap": 2.5}, "option turn_cap must be 0 (off) or a whole number 20-5000, not 2.5"),
    ],
)
def test_bad_options_are_rejected(data: dict[str, object], expected: str) -> None:
    with pytest.raises(OptionsError) as excinfo:
        engine.options(data)
    assert excinfo.value.message == expected


@pytest.mark.parametrize("players", [2, 9])
def test_three_to_eight_players(players: int) -> None:
    with pytest.raises(OptionsError) as excinfo:
        engine.start(SurvivorOptions(), NAMES[:2] if players == 2 else [*NAMES, "ivy"], NoDice())
    assert excinfo.value.message == f"Dice Survivor takes 3 to 8 players, not {players}"


def test_start_pp_is_what_everyone_starts_with() -> None:
    state, _ = engine.start(engine.options({"start_pp": 9}), NAMES[:3], ScriptedDice([3, 2, 1]))
    assert pps(state) == [9, 9, 9]


@pytest.mark.parametrize(
    ("half", "pp", "loss"),
    [
        ("floor", 5, 2),
        ("floor", 3, 1),
        ("floor", 1, 1),
        ("floor", 8, 4),
        ("ceil", 5, 3),
        ("ceil", 1, 1),
        ("ceil", 4, 2),
    ],
)
def test_ko_half(half: str, pp: int, loss: int) -> None:
    assert ko_loss(SurvivorOptions(ko_half=half), pp) == loss


# --- section 3: setup (V17) ----------------------------------------------------------------


def test_v17_initiative_ties_are_rolled_again_by_the_tied_only() -> None:
    dice = ScriptedDice([17, 17, 9, 3, 4, 12])
    state, events = engine.start(SurvivorOptions(), NAMES[:4], dice)
    assert dice.position == 6
    assert state.first_player == seat("bob")
    assert prompt_of(state) == ("bob", "action")
    assert events[0].text == (
        "initiative: ann 17, bob 17, cy 9, dee 3; re-roll: ann 4, bob 12; bob is Player 1. "
        "Turn order: bob, cy, dee, ann. Everyone starts with 5 PP"
    )
    assert engine.view(state, None)["initiative"] == [
        [
            {"player": "ann", "d20": 17},
            {"player": "bob", "d20": 17},
            {"player": "cy", "d20": 9},
            {"player": "dee", "d20": 3},
        ],
        [{"player": "ann", "d20": 4}, {"player": "bob", "d20": 12}],
    ]
    # the turns go bob, cy, dee, ann
    order = []
    for _ in range(5):
        order.append(prompt_of(state)[0])
        state = deadline(state)
    assert order == ["bob", "cy", "dee", "ann", "bob"]


# --- section 11.1: a short game, step by step ----------------------------------------------


def test_11_1_dice_and_orders_of_a_short_game() -> None:
    dice = ScriptedDice(
        [9, 14, 14, 6, 11, 1, 7, 3, 13, 5, 8, 4, 8, 8, 11, 2, 6, 20, 1, 1, 17, 3, 2]
    )
    state, _ = engine.start(SurvivorOptions(), NAMES[:3], dice)
    assert dice.position == 5
    assert state.first_player == seat("cy")
    assert engine.prompts(state) == [
        Prompt(
            2,
            "action",
            "turn 1, action 1 of 2: challenge <player> [double], extra, ko <player> or pass",
        )
    ]

    def send(name: str, text: str, draws: int) -> list[Event]:
        nonlocal state
        start = dice.position
        state, events = engine.submit(
            state, seat(name), engine.parse(state, seat(name), text), dice
        )
        assert dice.position - start == draws
        return events

    events = send("cy", "challenge ann", 3)
    assert events[0].text == (
        "cy: challenge ann\n"
        "cy d20 1 + 5 PP = 6; ann d12/d8 7/3 (keeps 3) + 5 PP = 8: natural 1\n"
        "natural 1: cy gives ann 1 PP: cy 4, ann 6"
    )
    assert pps(state) == [6, 5, 4]
    assert engine.prompts(state)[0].hint.startswith("turn 1, action 2 of 2: ")

    send("cy", "challenge bob", 3)
    assert pps(state) == [6, 5, 4]
    assert state.question == Question(seat("bob"), 1)
    assert engine.prompts(state) == [
        Prompt(
            1,
            "rematch or accept",
            "turn 1: you lost cy's challenge (stake 1): rematch (3 left) or accept (pay 1 PP)",
        )
    ]

    send("bob", "rematch", 3)
    assert pps(state) == [6, 5, 3]
    assert state.participants[seat("bob")].rematches_used == 1
    assert (state.turn, prompt_of(state)) == (2, ("ann", "action"))

    send("ann", "ko cy", 3)
    assert pps(state) == [6, 5, 0]
    assert state.participants[seat("cy")].out
    assert state.participants[seat("ann")].ko_turn == 2
    assert (state.turn, prompt_of(state)) == (3, ("bob", "action"))

    send("bob", "challenge ann double", 3)
    assert pps(state) == [5, 6, 0]
    assert state.question is None
    assert (state.turn, prompt_of(state)) == (4, ("ann", "action"))

    send("ann", "pass", 0)
    assert (state.turn, prompt_of(state)) == (5, ("bob", "action"))

    events = send("bob", "ko ann", 3)
    assert events[-1].text == "the game is over: 1. bob (6); 2. ann (0); 3. cy (0)"
    assert dice.position == len(dice.values)
    assert engine.prompts(state) == []
    assert engine.standings(state) == [Standing(1, 1, 6), Standing(0, 2, 0), Standing(2, 3, 0)]
    with pytest.raises(GameError):
        engine.resolve(state, NoDice())
    assert rejected(state, "bob", "pass") == "the game is over; no order is expected from you"


# --- section 11: the worked examples -------------------------------------------------------


def test_v1_defender_lower_accepts_and_pays_the_stake() -> None:
    state, _ = play(game([5, 4, 5]), "ann", "challenge bob", [12, 9, 3])
    assert state.log[-1].throws[0].rolls[0].total == 17
    assert state.log[-1].throws[0].rolls[1].total == 7
    assert prompt_of(state) == ("bob", "rematch or accept")
    state, _ = play(state, "bob", "accept")
    assert pps(state) == [5, 3, 5]
    assert prompt_of(state) == ("ann", "action")
    assert state.actions_left == 1


def test_v2_active_lower_pays_the_double_stake_and_has_no_rematch() -> None:
    state, _ = play(game([5, 4, 5]), "ann", "challenge bob double", [6, 11, 8])
    assert pps(state) == [3, 4, 5]
    assert state.question is None
    assert (state.turn, prompt_of(state)) == (8, ("bob", "action"))


def test_v3_rematch_won_by_the_defender_costs_the_active_player_the_stake() -> None:
    state, _ = play(game([6, 5, 5]), "ann", "challenge bob", [10, 4, 7])
    state, _ = play(state, "bob", "rematch", [3, 8, 6])
    assert pps(state) == [5, 5, 5]
    assert state.participants[seat("bob")].rematches_used == 1
    assert engine.view(state, None)["players"][1]["rematches_left"] == 2


def test_rematch_lost_again_costs_the_defender_twice_the_stake() -> None:
    state, _ = play(game([6, 5, 5]), "ann", "challenge bob double", [10, 4, 7])
    state, _ = play(state, "bob", "rematch", [15, 8, 6])
    assert pps(state) == [6, 1, 5]
    assert prompt_of(state) == ("bob", "action")


@pytest.mark.parametrize("text", ["challenge bob", "challenge bob double"])
def test_v5_natural_1_moves_one_pp_to_the_defender(text: str) -> None:
    state, events = play(game([5, 5, 5]), "ann", text, [1, 12, 8])
    assert pps(state) == [4, 6, 5]
    assert state.question is None
    assert events[0].text.endswith("natural 1: ann gives bob 1 PP: ann 4, bob 6")


def test_v6_natural_20_moves_one_pp_to_the_active_player_without_a_rematch() -> None:
    state, _ = play(game([2, 7, 5]), "ann", "challenge bob double", [20, 1, 1])
    assert pps(state) == [3, 6, 5]
    assert state.question is None
    assert prompt_of(state) == ("bob", "action")


def test_natural_20_counts_even_when_the_defender_total_is_higher() -> None:
    state, _ = play(game([1, 20, 5]), "ann", "challenge bob", [20, 12, 8])
    assert pps(state) == [2, 19, 5]


@pytest.mark.parametrize(("pp", "d20", "after"), [(3, 6, 3), (3, 7, 4), (9, 1, 10)])
def test_v8_extra_play_point(pp: int, d20: int, after: int) -> None:
    state, _ = play(game([pp, 5, 5]), "ann", "extra", [d20])
    assert pps(state) == [after, 5, 5]
    assert state.bank == pp - after
    assert state.extra_used
    assert state.actions_left == 1


def test_v9_ko_eliminates_the_defender_and_is_used() -> None:
    state, _ = play(game([5, 6, 5]), "ann", "ko bob", [13, 10, 8])
    assert pps(state) == [5, 0, 5]
    assert state.participants[seat("bob")].out
    assert state.participants[seat("ann")].ko_turn == 7
    assert state.bank == 6
    assert (state.turn, prompt_of(state)) == (8, ("cy", "action"))


def test_v11_a_failed_ko_with_1_pp_costs_the_last_point() -> None:
    state, events = play(game([1, 4, 5]), "ann", "ko bob", [3, 6, 6])
    assert pps(state) == [0, 5, 5]
    assert state.participants[seat("ann")].out
    assert events[1].text == "ann is eliminated"
    assert prompt_of(state) == ("bob", "action")


def test_v12_a_ko_tie_does_nothing_and_uses_the_ko() -> None:
    state, _ = play(game([4, 3, 5]), "ann", "ko bob", [6, 9, 7])
    assert pps(state) == [4, 3, 5]
    assert state.participants[seat("ann")].ko_turn == 7
    assert prompt_of(state) == ("bob", "action")


def test_ko_has_no_naturals() -> None:
    state, _ = play(game([5, 1, 5]), "ann", "ko bob", [1, 1, 1])
    assert pps(state) == [5, 0, 5]
    state, _ = play(game([1, 20, 5]), "ann", "ko bob", [20, 12, 8])
    assert pps(state) == [0, 21, 5]


def test_ko_options_ceil_and_higher_die() -> None:
    options = SurvivorOptions(ko_half="ceil", ko_defender="higher")
    state, _ = play(game([5, 4, 5], options=options), "ann", "ko bob", [10, 12, 2])
    # 15 against the higher die 12 + 4 = 16: ann gives ceil(5 / 2) = 3
    assert pps(state) == [2, 7, 5]


def test_v15_finals_natural_1_pays_each_opponent() -> None:
    state = game([3, 2, 2, 0, 0, 0], finals=True)
    state, _ = play(state, "ann", "challenge d12=bob", [1, 5, 5])
    assert pps(state)[:3] == [1, 3, 3]


def test_finals_natural_1_pays_clockwise_until_the_pp_run_out() -> None:
    state = game([0, 0, 2, 0, 1, 3], active=4, finals=True)
    state, events = play(state, "eve", "challenge d12=cy", [1, 12, 8])
    assert pps(state) == [0, 0, 2, 0, 0, 4]
    assert events[1].text == "eve is eliminated"
    assert (prompt_of(state), state.finals) == (("fay", "Finals action"), True)


def test_finals_natural_20_each_opponent_pays() -> None:
    state = game([3, 1, 2, 0, 0, 0], finals=True)
    state, _ = play(state, "ann", "challenge d12=cy", [20, 12, 8])
    assert pps(state)[:3] == [5, 0, 1]
    assert prompt_of(state) == ("cy", "Finals action")


def test_v16_finals_all_equal_roll_again() -> None:
    state = game([2, 5, 0, 0, 0, 0], finals=True)
    state, _ = play(state, "ann", "challenge", [15, 12, 4, 2])
    assert [len(t.rolls) for t in state.log[-1].throws] == [2, 2]
    assert state.log[-1].throws[0].decided == "all totals equal: everyone rolls again"
    assert pps(state)[:2] == [1, 5]


@pytest.mark.parametrize(
    ("dice", "after"),
    [
        # ann 10 + 3 = 13, bob 11 + 2 = 13, cy 3 + 2 = 5: only cy loses (the text's case)
        ([10, 11, 3], [3, 2, 1]),
        # ann 2 + 3 = 5, bob d12 8 + 2 = 10, cy d8 8 + 2 = 10: only ann loses
        ([2, 8, 8], [2, 2, 2]),
        # ann 15 + 3 = 18 above two equal totals: both opponents lose
        ([15, 4, 4], [3, 1, 1]),
        # three different totals: the two lower lose
        ([9, 1, 5], [3, 1, 1]),
    ],
)
def test_s12_finals_everyone_below_the_highest_loses_one(dice: list[int], after: list[int]) -> None:
    state = game([3, 2, 2, 0, 0, 0], finals=True)
    state, _ = play(state, "ann", "challenge d12=bob", dice)
    assert pps(state)[:3] == after


def test_finals_without_pp_compares_the_bare_dice() -> None:
    options = SurvivorOptions(finals_add_pp=False)
    state = game([9, 1, 1, 0, 0, 0], finals=True, options=options)
    state, _ = play(state, "ann", "challenge d12=bob", [5, 6, 2])
    assert pps(state)[:3] == [8, 1, 0]


def test_finals_ko_uses_the_single_action() -> None:
    state = game([3, 2, 2, 0, 0, 0], finals=True)
    state, _ = play(state, "ann", "ko cy", [15, 1, 1])
    assert pps(state)[:3] == [3, 2, 0]
    assert prompt_of(state) == ("bob", "Finals action")
    assert state.turn == 8


def test_v18_no_rematch_question_when_the_quota_is_spent() -> None:
    state = game([5, 4, 5], rematches_used=[0, 3, 0])
    state, events = play(state, "ann", "challenge bob", [12, 9, 3])
    assert pps(state) == [5, 3, 5]
    assert state.question is None
    assert events[0].text.endswith("bob has no rematch left and pays 1 PP: bob 3")
    assert prompt_of(state) == ("ann", "action")


def test_the_rematch_quota_counts_three_calls_per_game() -> None:
    state = game([9, 9, 9], turn=1)
    for call in range(3):
        state, _ = play(state, "ann", "challenge bob", [12, 9, 3])
        state, _ = play(state, "bob", "rematch", [2, 1, 8])
        assert state.participants[seat("bob")].rematches_used == call + 1
        state = replace(state, active=0, actions_left=2)
    state, _ = play(state, "ann", "challenge bob", [12, 9, 3])
    assert state.question is None
    assert rejected(state, "bob", "rematch") == "no rematch question is open for you"


def test_no_rematches_with_option_zero() -> None:
    state = game([5, 4, 5], options=SurvivorOptions(rematches=0))
    state, _ = play(state, "ann", "challenge bob", [12, 9, 3])
    assert (pps(state), state.question) == ([5, 3, 5], None)


def test_v19_finals_start_when_an_elimination_leaves_three_of_six() -> None:
    state = game([5, 5, 1, 4, 0, 0], active=1)
    state, events = play(state, "bob", "challenge cy", [12, 9, 3])
    state, events = play(state, "cy", "accept")
    assert pps(state) == [5, 5, 0, 4, 0, 0]
    assert [e.text for e in events[1:]] == [
        "cy is eliminated",
        "three participants remain (ann, bob, dee): the Finals begin",
        "Finals turn 8: dee to act (1 action)",
    ]
    assert state.finals
    assert state.finals_turn == 8
    assert (prompt_of(state), state.actions_left) == (("dee", "Finals action"), 1)


def test_a_game_that_started_with_five_has_no_finals() -> None:
    state = game([5, 5, 1, 4, 0])
    state, _ = play(state, "ann", "challenge cy", [12, 9, 3])
    state, _ = play(state, "cy", "accept")
    assert not state.finals
    assert (prompt_of(state), state.actions_left) == (("ann", "action"), 1)


def test_ties_are_rolled_again_and_naturals_count_on_the_re_roll() -> None:
    # ann 5 + 5 = 10 against 5 + 5 = 10; then a natural 20
    state, _ = play(game([5, 5, 5]), "ann", "challenge bob", [5, 5, 6, 20, 12, 8])
    assert pps(state) == [6, 4, 5]
    assert [t.decided for t in state.log[-1].throws] == [
        "equal totals: both roll again",
        "natural 20",
    ]


def test_rematch_ties_are_rolled_again_and_naturals_count() -> None:
    state, _ = play(game([5, 5, 5]), "ann", "challenge bob", [12, 9, 3])
    state, _ = play(state, "bob", "rematch", [5, 5, 6, 1, 1, 1])
    assert pps(state) == [4, 6, 5]


def test_s15_the_active_player_eliminated_ends_the_turn() -> None:
    state, _ = play(game([1, 5, 5]), "ann", "challenge bob", [2, 12, 8])
    assert pps(state) == [0, 5, 5]
    assert (state.turn, prompt_of(state)) == (8, ("bob", "action"))


def test_a_loss_larger_than_the_holdings_stops_at_zero() -> None:
    state, _ = play(game([5, 1, 5]), "ann", "challenge bob double", [12, 9, 3])
    state, _ = play(state, "bob", "accept")
    assert pps(state) == [5, 0, 5]
    assert state.bank == 1


def test_the_eliminated_never_act_and_are_skipped() -> None:
    state = game([5, 0, 5], active=0)
    state, _ = play(state, "ann", "pass")
    assert prompt_of(state) == ("cy", "action")
    assert rejected(state, "bob", "pass") == (
        "you are out of the game since turn 1; no order is expected from you"
    )


# --- KO once per game ----------------------------------------------------------------------


def test_ko_once_per_game() -> None:
    state, _ = play(game([5, 5, 5, 5]), "ann", "ko bob", [6, 9, 7])
    for _ in range(3):
        state = deadline(state)
    assert prompt_of(state) == ("ann", "action")
    assert rejected(state, "ann", "ko cy") == "you used your KO in turn 7"
    finals = game(
        [3, 2, 2, 0, 0, 0],
        finals=True,
        participants=(
            Participant(3, ko_turn=4),
            Participant(2),
            Participant(2),
            *(Participant(0, 0, 1, 0),) * 3,
        ),
    )
    assert rejected(finals, "ann", "ko bob") == "you used your KO in turn 4"


# --- section 9: order examples and messages -------------------------------------------------


def test_order_examples() -> None:
    state = game([5, 5, 5])
    assert engine.parse(state, 0, "challenge bob") == SurvivorOrder("challenge", 1)
    after, _ = play(state, "ann", "challenge bob", [12, 12, 8])
    assert after.actions_left == 1
    assert engine.parse(state, 0, "Challenge BOB double") == SurvivorOrder("challenge", 1, True)
    assert engine.parse(state, 0, "ko cy") == SurvivorOrder("ko", 2)
    assert engine.parse(state, 0, "  PASS ") == SurvivorOrder("pass")
    assert rejected(state, "ann", "challenge bob cy") == (
        "one target per challenge: write challenge <player> [double]"
    )
    assert rejected(state, "ann", "challenge bob triple") == (
        'write "challenge bob" or "challenge bob double"'
    )
    after, _ = play(state, "ann", "extra", [3])
    assert after.actions_left == 1
    assert engine.parse(after, 0, "challenge cy") == SurvivorOrder("challenge", 2)
    assert rejected(after, "ann", "ko cy") == "a KO needs both actions; you have 1 left"
    assert rejected(state, "bob", "rematch") == "no rematch question is open for you"
    finals = game([3, 2, 2, 0, 0, 0], finals=True)
    assert engine.parse(finals, 0, "challenge d12=cy") == SurvivorOrder("challenge", 2, d12=True)
    assert engine.parse(finals, 0, "challenge d12 = cy") == SurvivorOrder("challenge", 2, d12=True)
    assert rejected(finals, "ann", "challenge d12=ann") == "the d12 goes to one of your opponents"


@pytest.mark.parametrize(
    ("state", "name", "text", "expected"),
    [
        (
            game([5, 5, 5], actions_left=1),
            "ann",
            "challenge cy double",
            "a double challenge needs 2 actions; you have 1",
        ),
        (
            game([5, 5, 5], extra_used=True, actions_left=1),
            "ann",
            "extra",
            "Extra Play Point is allowed once per turn",
        ),
        (game([5, 5, 5, 0]), "ann", "challenge dee", "dee is out of the game"),
        (game([5, 5, 5, 0]), "ann", "ko dee", "dee is out of the game"),
        (game([5, 5, 5]), "ann", "challenge ann", "you cannot challenge yourself"),
        (game([5, 5, 5]), "ann", "ko ann", "you cannot KO yourself"),
        (
            game([3, 2, 2, 0, 0, 0], finals=True),
            "ann",
            "pass",
            "the Finals allow only a challenge or a KO: challenge d12=<player> or ko <player>",
        ),
        (
            game([3, 2, 2, 0, 0, 0], finals=True),
            "ann",
            "extra",
            "the Finals allow only a challenge or a KO: challenge d12=<player> or ko <player>",
        ),
        (
            game([3, 2, 2, 0, 0, 0], finals=True),
            "ann",
            "challenge",
            "name who rolls the d12: challenge d12=<player>",
        ),
        (
            game([3, 2, 2, 0, 0, 0], finals=True),
            "ann",
            "challenge bob",
            "in the Finals you challenge all your opponents: write challenge d12=<player> to "
            "name who rolls the d12",
        ),
        (
            game([3, 2, 2, 0, 0, 0], finals=True),
            "ann",
            "challenge d12=dee",
            "dee is out of the game",
        ),
        (game([5, 5, 5], active=1), "ann", "challenge cy", "not your turn: waiting for bob"),
        (game([5, 5, 5], active=1), "ann", "hello", "not your turn: waiting for bob"),
        (
            game([5, 5, 5], question=Question(1, 1)),
            "ann",
            "pass",
            "not your turn: waiting for bob to answer the rematch question",
        ),
        (
            game([5, 5, 5], question=Question(1, 1)),
            "bob",
            "pass",
            "pass: first answer the rematch question: rematch or accept",
        ),
        (
            game([5, 5, 5], question=Question(1, 1)),
            "cy",
            "accept",
            "no rematch question is open for you",
        ),
        (
            game([5, 5, 5]),
            "ann",
            "challenge zed",
            'challenge: there is no player "zed"; the players are ann, bob, cy',
        ),
        (game([5, 5, 5]), "ann", "ko", "ko: name the player: ko <player>"),
        (game([5, 5, 5]), "ann", "ko bob cy", "ko: one target per KO: write ko <player>"),
        (
            game([5, 5, 5]),
            "ann",
            "challenge",
            "challenge: name the player you challenge: challenge <player>",
        ),
        (
            game([5, 5, 5]),
            "ann",
            "challenge d12=bob",
            "challenge d12=<player> is for the Finals: write challenge <player> or "
            "challenge <player> double",
        ),
        (game([5, 5, 5]), "ann", "extra please", 'extra: write just "extra"'),
        (
            game([5, 5, 5]),
            "ann",
            "attack bob",
            '"attack" is not an order: write challenge '
            "<player> [double], extra, ko <player> or pass",
        ),
        (
            game([5, 5, 5]),
            "ann",
            "> quoted\n\n",
            "the message holds no order: write "
            "challenge <player> [double], extra, ko <player> or pass",
        ),
        (
            game([5, 5, 5]),
            "ann",
            "extra\nchallenge bob",
            "one order per message: this message "
            "has 2 order lines; send each action in its own message",
        ),
    ],
)
def test_error_messages(state: SurvivorState, name: str, text: str, expected: str) -> None:
    assert rejected(state, name, text) == expected


def test_submit_checks_the_order_too() -> None:
    state = game([5, 5, 5], actions_left=1)
    with pytest.raises(OrderError) as excinfo:
        engine.submit(state, 0, SurvivorOrder("ko", 1), NoDice())
    assert excinfo.value.message == "a KO needs both actions; you have 1 left"


def test_email_quotes_signatures_and_commas_are_ignored() -> None:
    state = game([5, 5, 5])
    text = "> challenge cy\n\nchallenge,  BOB\tdouble\n-- \nann\nko cy"
    assert engine.parse(state, 0, text) == SurvivorOrder("challenge", 1, double=True)


def test_player_names_with_spaces() -> None:
    state = replace(game([5, 5, 5]), players=("ann", "Bob Ray", "cy"))
    assert engine.parse(state, 0, "challenge bob ray double") == SurvivorOrder("challenge", 1, True)
    assert engine.canonical(state, 0, SurvivorOrder("challenge", 1, True)) == (
        "challenge Bob Ray double"
    )


@pytest.mark.parametrize(
    ("order", "text"),
    [
        (SurvivorOrder("challenge", 1), "challenge bob"),
        (SurvivorOrder("challenge", 1, double=True), "challenge bob double"),
        (SurvivorOrder("ko", 2), "ko cy"),
        (SurvivorOrder("extra"), "extra"),
        (SurvivorOrder("pass"), "pass"),
    ],
)
def test_canonical_text_parses_back(order: SurvivorOrder, text: str) -> None:
    state = game([5, 5, 5])
    assert engine.canonical(state, 0, order) == text
    assert engine.parse(state, 0, text) == order


def test_a_finals_challenge_against_one_opponent_names_the_d12() -> None:
    state = game([2, 5, 0, 0, 0, 0], finals=True)
    order = engine.parse(state, 0, "challenge")
    assert order == SurvivorOrder("challenge", 1, d12=True)
    assert engine.canonical(state, 0, order) == "challenge d12=bob"
    assert engine.parse(state, 0, "challenge d12=bob") == order


# --- section 7: no-moves defaults ----------------------------------------------------------


def test_nmr_active_player_passes() -> None:
    state = game([5, 5, 5], actions_left=1)
    assert engine.default(state, 0) == SurvivorOrder("pass")
    scripted = ScriptedDice([])
    after, events = engine.resolve(state, scripted)
    assert events[0].text == "ann sent no order: the no-moves default is pass"
    assert (after.turn, prompt_of(after)) == (8, ("bob", "action"))
    assert after.log[-1].default


def test_nmr_defender_accepts() -> None:
    state, _ = play(game([5, 4, 5]), "ann", "challenge bob double", [12, 9, 3])
    assert engine.default(state, 1) == SurvivorOrder("accept")
    state = deadline(state)
    assert pps(state) == [5, 2, 5]
    assert state.participants[1].rematches_used == 0
    assert (state.turn, prompt_of(state)) == (8, ("bob", "action"))


@pytest.mark.parametrize(
    ("pp", "holder"),
    [([3, 2, 4, 0, 0, 0], 2), ([3, 4, 2, 0, 0, 0], 1), ([3, 2, 2, 0, 0, 0], 1)],
)
def test_nmr_finals_challenge_gives_the_d12_to_the_richer_opponent(
    pp: list[int], holder: int
) -> None:
    state = game(pp, finals=True)
    assert engine.default(state, 0) == SurvivorOrder("challenge", holder, d12=True)
    after = deadline(state, [10, 1, 1])
    assert after.log[-1].throws[0].rolls[1].seat == holder
    assert after.log[-1].throws[0].rolls[1].dice == "d12"


def test_nmr_finals_tie_goes_to_the_first_clockwise_from_the_active_player() -> None:
    state = game([0, 2, 0, 2, 0, 3], active=5, finals=True)
    assert engine.default(state, 5) == SurvivorOrder("challenge", 1, d12=True)


def test_default_is_only_for_the_prompted_seat() -> None:
    with pytest.raises(OrderError) as excinfo:
        engine.default(game([5, 5, 5]), 1)
    assert excinfo.value.message == "not your turn: waiting for ann"


# --- the cap and standings -----------------------------------------------------------------


def test_the_turn_cap_ends_the_game_and_ranks_survivors_by_pp() -> None:
    options = SurvivorOptions(turn_cap=20)
    state = game([4, 6, 4, 0], turn=20, options=options, active=2)
    state = deadline(state)
    assert state.finished and state.capped
    assert engine.prompts(state) == []
    assert engine.standings(state) == [
        Standing(1, 1, 6),
        Standing(0, 2, 4),
        Standing(2, 2, 4),
        Standing(3, 4, 0),
    ]


def test_the_cap_is_checked_at_the_turn_end_forced_by_the_finals() -> None:
    options = SurvivorOptions(turn_cap=20)
    state = game([5, 5, 1, 4, 0, 0], active=1, turn=20, options=options)
    state, _ = play(state, "bob", "challenge cy", [12, 9, 3])
    state, _ = play(state, "cy", "accept")
    assert state.finished and state.capped


def test_eliminated_by_the_same_action_share_a_place() -> None:
    state = game([3, 1, 1, 0, 0, 0], finals=True)
    participants = list(state.participants)
    participants[3:] = [Participant(0, out_turn=1, out_action=n) for n in (2, 1, 0)]
    state = replace(state, participants=tuple(participants))
    state, _ = play(state, "ann", "challenge d12=bob", [15, 1, 1])
    assert engine.standings(state) == [
        Standing(0, 1, 3),
        Standing(1, 2, 0),
        Standing(2, 2, 0),
        Standing(3, 4, 0),
        Standing(4, 5, 0),
        Standing(5, 6, 0),
    ]


# --- what players see ----------------------------------------------------------------------


def test_view_shows_everything_public_and_what_you_owe() -> None:
    state, _ = play(game([5, 4, 5]), "ann", "challenge bob", [12, 9, 3])
    view = engine.view(state, 1)
    json.dumps(view)
    assert view["phase"] == "normal"
    assert view["rematch_question"] == {
        "defender": "bob",
        "challenger": "ann",
        "stake": 1,
        "rematches_left": 3,
    }
    assert view["you"] == {
        "seat": 1,
        "name": "bob",
        "pp": 4,
        "owed": "rematch or accept",
        "hint": "turn 7: you lost ann's challenge (stake 1): rematch (3 left) or accept (pay 1 PP)",
        "orders": ["rematch", "accept"],
    }
    assert view["this_turn"] == [
        {
            "turn": 7,
            "player": "ann",
            "order": "challenge bob",
            "default": False,
            "throws": [
                {
                    "rolls": [
                        {
                            "seat": 0,
                            "player": "ann",
                            "dice": "d20",
                            "values": [12],
                            "faces": [{"value": 12, "sides": 20}],
                            "kept": 12,
                            "pp": 5,
                            "total": 17,
                        },
                        {
                            "seat": 1,
                            "player": "bob",
                            "dice": "d12/d8",
                            "values": [9, 3],
                            "faces": [{"value": 9, "sides": 12}, {"value": 3, "sides": 8}],
                            "kept": 3,
                            "pp": 4,
                            "total": 7,
                        },
                    ],
                    "decided": "bob lower",
                    "text": "ann d20 12 + 5 PP = 17; bob d12/d8 9/3 (keeps 3) + 4 PP = 7: "
                    "bob lower",
                }
            ],
            "result": "bob lost and is asked: rematch (3 left) or accept (pay 1 PP)",
        }
    ]
    public = engine.view(state, None)
    assert "you" not in public
    assert public["players"][0] == {
        "seat": 0,
        "name": "ann",
        "pp": 5,
        "out": False,
        "out_turn": None,
        "active": True,
        "rematches_used": 0,
        "rematches_left": 3,
        "ko_left": True,
        "ko_turn": None,
    }


def test_view_lists_the_orders_still_allowed() -> None:
    state, _ = play(game([5, 5, 5]), "ann", "extra", [3])
    assert engine.view(state, 0)["you"]["orders"] == [
        "challenge bob",
        "challenge cy",
        "pass",
    ]
    assert engine.view(state, 1)["you"]["orders"] == []


# --- the hint lists only what is still possible this turn ----------------------------------


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, "turn 7, action 1 of 2: challenge <player> [double], extra, ko <player> or pass"),
        (
            {"actions_left": 1, "extra_used": True},
            "turn 7, action 2 of 2: challenge <player> or pass",
        ),
        ({"actions_left": 1}, "turn 7, action 2 of 2: challenge <player>, extra or pass"),
        (
            {"participants": (Participant(5, ko_turn=3), Participant(5), Participant(5))},
            "turn 7, action 1 of 2: challenge <player> [double], extra or pass",
        ),
        ({"finals": True}, "Finals turn 7, action 1 of 1: challenge d12=<player> or ko <player>"),
        (
            {
                "finals": True,
                "participants": (Participant(5, ko_turn=3), Participant(5), Participant(5)),
            },
            "Finals turn 7, action 1 of 1: challenge d12=<player>",
        ),
    ],
    ids=["fresh", "extra-spent", "one-action", "ko-spent", "finals", "finals-ko-spent"],
)
def test_the_hint_lists_only_the_actions_still_possible(
    changes: dict[str, Any], expected: str
) -> None:
    finals = changes.pop("finals", False)
    state = game([5, 5, 5], finals=finals, **changes)
    assert [prompt.hint for prompt in engine.prompts(state)] == [expected]


def test_the_hint_after_an_extra_play_point_drops_it() -> None:
    state, _ = play(game([5, 5, 5]), "ann", "extra", [12])
    assert [prompt.hint for prompt in engine.prompts(state)] == [
        "turn 7, action 2 of 2: challenge <player> or pass"
    ]
