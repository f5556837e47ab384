"""Liar's Dice: the worked examples of rules/liars-dice.md (sections 12 and 12.1), options,
the order parser and its messages, NMR defaults, the reserve rule, palifico, spot calls,
wild ones, every Death Match anomaly, the team game's watching ring and its sum phase."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace

import pytest

from games.engines.base import JSON, Event, OptionsError, OrderError, Prompt, Standing
from games.engines.dice import NoDice, ScriptedDice
from games.engines.liars_dice.rules import (
    ActionApplied,
    Bid,
    Learnt,
    LiarsDiceEngine,
    LiarsDiceOptions,
    LiarsDiceOrder,
    LiarsDiceState,
    check_raise,
    face_table,
)

engine = LiarsDiceEngine()


def dealt(
    options: Mapping[str, JSON], players: Sequence[str], values: Sequence[int]
) -> tuple[LiarsDiceState, list[Event]]:
    """The engine's start with the cups rolled from ``values``, every one of them drawn."""
    dice = ScriptedDice(values)
    state, events = engine.start(engine.options(options), players, dice)
    assert dice.position == len(values), "every scripted die is drawn"
    return state, events


def send(
    state: LiarsDiceState, seat: int, text: str, values: Sequence[int] = ()
) -> tuple[LiarsDiceState, list[Event]]:
    dice = ScriptedDice(values)
    order = engine.parse(state, seat, text)
    state, events = engine.submit(state, seat, order, dice)
    assert dice.position == len(values), "every scripted die is drawn"
    return state, events


def rejected(state: LiarsDiceState, seat: int, text: str) -> str:
    with pytest.raises(OrderError) as error:
        send(state, seat, text)
    return error.value.message


def deadline(
    state: LiarsDiceState, values: Sequence[int] = ()
) -> tuple[LiarsDiceState, list[Event]]:
    dice = ScriptedDice(values)
    state, events = engine.resolve(state, dice)
    assert dice.position == len(values), "every scripted die is drawn"
    return state, events


def private(events: Sequence[Event], seat: int) -> list[str]:
    return [event.text for event in events if event.to == (seat,)]


def public(events: Sequence[Event]) -> list[str]:
    return [event.text for event in events if event.to is None]


FILLER = [3] * 200

# --- options -------------------------------------------------------------------------------


def test_options_defaults_follow_the_profile() -> None:
    assert engine.options({}) == LiarsDiceOptions()
    dm = engine.options({"profile": "genius_dm"})
    assert (dm.dice_per_player, dm.wild_ones, dm.palifico, dm.max_dice) == (4, False, False, 10)
    team = engine.options({"profile": "genius_team", "team_seating": "adjacent"})
    assert (team.dice_per_player, team.wild_ones, team.team_seating) == (5, False, "adjacent")


def test_options_of_another_profile_are_ignored() -> None:
    options = engine.options({"profile": "classic", "cheat": True, "max_dice": 3})
    assert (options.cheat, options.max_dice) == (False, 10)
    dm = engine.options({"profile": "genius_dm", "wild_ones": True, "calza": True})
    assert (dm.wild_ones, dm.calza) == (False, False)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"colour": "red"}, "unknown option 'colour'"),
        ({"profile": "perudo"}, "option profile must be one of classic, genius_dm, genius_team"),
        ({"dice_per_player": 0}, "option dice_per_player must be 1-10, not 0"),
        ({"dice_per_player": "5"}, "option dice_per_player must be a whole number 1-10"),
        ({"max_dice": 21}, "option max_dice must be 2-20, not 21"),
        ({"calza": "yes"}, "option calza must be true or false, not 'yes'"),
        ({"team_seating": "circle"}, "option team_seating must be one of alternate, adjacent"),
        (
            {"profile": "genius_dm", "dice_per_player": 6, "max_dice": 5},
            "option dice_per_player (6) must not be above max_dice (5)",
        ),
    ],
)
def test_bad_options_are_rejected(data: dict[str, JSON], message: str) -> None:
    with pytest.raises(OptionsError) as error:
        engine.options(data)
    assert error.value.message.startswith(message)


@pytest.mark.parametrize(
    ("profile", "players", "message"),
    [
        ("classic", 1, "Liar's Dice: classic takes 2 to 6 players, not 1"),
        ("classic", 7, "Liar's Dice: classic takes 2 to 6 players, not 7"),
        ("genius_dm", 3, "Liar's Dice: Death Match takes exactly 2 players, not 3"),
        ("genius_team", 2, "Liar's Dice: team takes exactly 4 players, not 2"),
    ],
)
def test_player_counts_the_profile_does_not_allow_are_rejected(
    profile: str, players: int, message: str
) -> None:
    names = [f"p{number}" for number in range(players)]
    with pytest.raises(OptionsError) as error:
        engine.start(engine.options({"profile": profile}), names, ScriptedDice(FILLER))
    assert error.value.message == message


# --- classic: 12.1 and the bidding core ----------------------------------------------------

CLASSIC_3 = {"palifico": False}
ANN = [4, 4, 1, 2, 3]
BOB = [4, 1, 5, 6, 6]
CY = [2, 2, 3, 5, 6]


def classic_after_ann_bids() -> LiarsDiceState:
    state, events = dealt(CLASSIC_3, ["ann", "bob", "cy"], ANN + BOB + CY)
    assert private(events, 0) == ["round 1: your dice are 4 4 1 2 3"]
    assert private(events, 1) == ["round 1: your dice are 4 1 5 6 6"]
    state, _ = send(state, 0, "bid 3 4")
    return state


@pytest.mark.parametrize("text", ["bid 3 5", "BID 4 2", "bid 2 1", "bid, 9  6"])
def test_12_1_legal_raises(text: str) -> None:
    state, events = send(classic_after_ann_bids(), 1, text)
    assert state.turn == 2
    assert public(events)[0].startswith("round 1: bob bids")


@pytest.mark.parametrize(
    ("seat", "text", "message"),
    [
        (1, "bid 1 1", "to switch to ones after 3 x 4 bid at least 2 x 1"),
        (
            1,
            "bid 3 3",
            "bid must raise: after 3 x 4 bid 3 x 5, 3 x 6 or 4 or more of any face other "
            "than 1, or at least 2 x 1",
        ),
        (2, "liar", "not your turn: waiting for bob"),
        (1, "spot", "spot calls are not used in this game"),
    ],
)
def test_12_1_rejected_orders(seat: int, text: str, message: str) -> None:
    assert rejected(classic_after_ann_bids(), seat, text) == message


def test_12_1_liar_reveals_all_hands_and_counts_fours_with_ones() -> None:
    next_round = [*[2] * 5, *[3] * 4, *[5] * 5]
    state, events = send(classic_after_ann_bids(), 1, "liar", next_round)
    assert public(events)[:2] == [
        "round 1: bob challenges ann's 3 x 4: there are 5 4s with ones, the bid holds. "
        "The dice: ann 4 4 1 2 3; bob 4 1 5 6 6; cy 2 2 3 5 6",
        "bob loses a die and now holds 4",
    ]
    assert state.counts == (5, 4, 5)
    assert (state.round, state.opener, state.turn) == (2, 1, 1)
    assert state.hands == ((2,) * 5, (3,) * 4, (5,) * 5)
    view = engine.view(state, 2)
    assert view["last_round"] == {
        "round": 1,
        "result": "bob challenges ann's 3 x 4: there are 5 4s with ones, the bid holds",
        "hands": [
            {"seat": 0, "name": "ann", "dice": ANN},
            {"seat": 1, "name": "bob", "dice": BOB},
            {"seat": 2, "name": "cy", "dice": CY},
        ],
        "bids": [
            {
                "seat": 0,
                "player": "ann",
                "text": "3 x 4",
                "quantity": 3,
                "face": 4,
                "sum": False,
                "showed": False,
            }
        ],
        "cheated": [],
    }


def test_a_failed_bid_costs_the_bidder_a_die_and_the_bidder_opens() -> None:
    state = classic_after_ann_bids()
    state, _ = send(state, 1, "bid 7 6")
    state, events = send(state, 2, "dudo", FILLER[:14])
    assert public(events)[0].startswith(
        "round 1: cy challenges bob's 7 x 6: there are 5 6s with ones, the bid fails."
    )
    assert state.counts == (5, 4, 5)
    assert state.opener == 1


@pytest.mark.parametrize(
    ("bids", "text", "message"),
    [
        ((), "liar", "no bid to challenge yet; open with a bid"),
        ((), "bid 3 1", "you cannot open on ones"),
        ((Bid(0, 7, 4),), "bid 3 1", "to switch to ones after 7 x 4 bid at least 4 x 1"),
        ((Bid(0, 4, 1),), "bid 8 5", "to leave ones after 4 x 1 bid at least 9 of another face"),
        ((Bid(0, 4, 1),), "bid 4 1", "bid must raise: after 4 x 1 bid at least 5 x 1 or 9 of"),
        ((Bid(0, 2, 3),), "bid 0 4", "bid 0 4: the quantity must be at least 1"),
        ((Bid(0, 2, 3),), "bid 3 7", "bid 3 7: the face must be 1-6"),
        ((Bid(0, 2, 3),), "bid three 4", "bid three 4: the quantity must be a whole number"),
        ((Bid(0, 2, 3),), "bid 3", "'bid 3': write bid <quantity> <face>, e.g. bid 5 3"),
        ((Bid(0, 2, 3),), "raise", "'raise' is not an order here: write bid <quantity>"),
        ((Bid(0, 2, 3),), "bid 3 4\nliar", "line 2: one move per message"),
        ((Bid(0, 2, 3),), "bid 3 4 show 1", "show: showing dice is not used in this game"),
        ((Bid(0, 2, 3),), "accuse", "accusations are not used in this game"),
        ((Bid(0, 2, 3),), "mulligan 1", "mulligan: mulligans are not used in this game"),
        ((Bid(0, 2, 3),), "bid sum 7", "bid sum: sum bids are only used when two single"),
        ((Bid(0, 2, 3),), "reveal 1 reroll", "reveal: the optional action is only used in the"),
        ((Bid(0, 2, 3),), "", "the order is empty"),
    ],
)
def test_classic_messages(bids: tuple[Bid, ...], text: str, message: str) -> None:
    state, _ = dealt({}, ["ann", "bob"], FILLER[:10])
    state = replace(state, bids=bids, turn=1)
    assert rejected(state, 1, text).startswith(message)


def test_raise_rules_without_wild_ones() -> None:
    state, _ = dealt({"wild_ones": False}, ["ann", "bob"], FILLER[:10])
    check_raise(state, 1, 1)
    state = replace(state, bids=(Bid(0, 5, 3),), turn=1)
    assert rejected(state, 1, "bid 5 2") == (
        "bid must raise: after 5 x 3 bid 5 x 4, 5 x 5, 5 x 6 or 6 or more of any face"
    )
    state = replace(state, bids=(Bid(0, 5, 6),))
    assert rejected(state, 1, "bid 5 1") == "bid must raise: after 5 x 6 bid 6 or more of any face"


def test_without_wild_ones_ones_count_only_as_ones() -> None:
    state, _ = dealt({"wild_ones": False}, ["ann", "bob"], [1, 1, 1, 4, 4, 1, 4, 2, 2, 2])
    state, _ = send(state, 0, "bid 4 4")
    state, events = send(state, 1, "liar", FILLER[:9])
    assert public(events)[0].startswith(
        "round 1: bob challenges ann's 4 x 4: there are 3 4s, the bid fails."
    )
    assert state.counts == (4, 5)


# --- classic: NMR defaults, palifico, spot -------------------------------------------------


def test_classic_nmr_defaults() -> None:
    state, _ = dealt({}, ["ann", "bob"], [2] * 10)
    assert engine.prompts(state) == [Prompt(0, "bid", "round 1, move 1: open with a bid")]
    assert engine.default(state, 0) == LiarsDiceOrder("bid", 1, 2)
    assert engine.canonical(state, 0, engine.default(state, 0)) == "bid 1 2"
    state, events = deadline(state)
    assert public(events) == [
        "ann sent no order: the NMR default bid 1 2 is played",
        "round 1: ann bids 1 x 2",
    ]
    assert engine.prompts(state) == [
        Prompt(1, "bid or challenge", "round 1, move 2: raise 1 x 2 (ann) or call liar")
    ]
    assert engine.default(state, 1) == LiarsDiceOrder("liar")
    state, _ = deadline(state, FILLER[:9])
    assert state.counts == (5, 4)
    no_wilds, _ = dealt({"wild_ones": False}, ["ann", "bob"], [2] * 10)
    assert engine.default(no_wilds, 0) == LiarsDiceOrder("bid", 1, 1)


def palifico_state() -> LiarsDiceState:
    """bob drops from 2 dice to 1: round 2 is a palifico round opened by bob."""
    options = {"dice_per_player": 2}
    state, _ = dealt(options, ["ann", "bob", "cy"], [5, 5, 1, 2, 3, 4])
    state, _ = send(state, 0, "bid 3 5")
    state, events = send(state, 1, "liar", [6, 6, 1, 4, 4])
    assert public(events)[-1] == (
        "round 2: dice in play: ann 2, bob 1, cy 2; bob opens; this is a palifico round "
        "(ones are not wild, the face stays)"
    )
    return state


def test_palifico_round_keeps_the_face_and_ones_are_not_wild() -> None:
    state = palifico_state()
    assert state.palifico and state.palifico_done == (False, True, False)
    assert engine.default(state, 1) == LiarsDiceOrder("bid", 1, 1)
    state, _ = send(state, 1, "bid 1 4")
    assert rejected(state, 2, "bid 4 5") == "palifico round: the face stays 4; bid more 4s"
    assert rejected(state, 2, "bid 1 4") == "palifico round: bid more 4s than 1 x 4"
    state, _ = send(state, 2, "bid 2 4")
    state, events = send(state, 0, "liar", FILLER[:4])
    # Ones are not wild: cy's 4 4 make two fours, the 1s do not count.
    assert public(events)[0].startswith(
        "round 2: ann challenges cy's 2 x 4: there are 2 4s, the bid holds."
    )
    assert state.counts == (1, 1, 2)
    # ann's drop from two to one makes the next round a palifico round again.
    assert state.palifico and state.opener == 0


def test_palifico_may_open_on_ones_and_happens_once_per_player() -> None:
    state = palifico_state()
    state, _ = send(state, 1, "bid 2 1")
    # bob regains nothing; a second drop of bob to one later does not repeat palifico.
    state = replace(state, counts=(2, 2, 2), palifico=False, bids=(Bid(0, 9, 6),), turn=1)
    state = replace(state, hands=((1, 1), (2, 2), (3, 3)))
    state, _ = send(state, 1, "liar", FILLER[:5])
    assert state.counts == (1, 2, 2)
    assert state.palifico
    state = replace(state, counts=(2, 2, 2), palifico=False, bids=(Bid(1, 9, 6),), turn=0)
    state = replace(state, hands=((1, 1), (2, 2), (3, 3)), palifico_done=(True, True, False))
    state, _ = send(state, 0, "liar", FILLER[:5])
    assert state.counts == (2, 1, 2)
    assert not state.palifico


def test_palifico_off_never_starts_one() -> None:
    options = {"dice_per_player": 2, "palifico": False}
    state, _ = dealt(options, ["ann", "bob", "cy"], [5, 5, 1, 2, 3, 4])
    state, _ = send(state, 0, "bid 3 5")
    state, _ = send(state, 1, "liar", [6, 6, 1, 4, 4])
    assert not state.palifico


def spot_state(counts: tuple[int, int, int] = (5, 4, 5)) -> LiarsDiceState:
    state, _ = dealt({"calza": True}, ["ann", "bob", "cy"], ANN + BOB + CY)
    return replace(state, counts=counts, bids=(Bid(0, 5, 4),), turn=1)


def test_a_correct_spot_call_regains_a_die_but_not_above_the_start() -> None:
    state, events = send(spot_state(), 1, "spot", FILLER[:15])
    assert public(events)[:2] == [
        "round 1: bob calls spot on 5 x 4: there are exactly 5 4s with ones. "
        "The dice: ann 4 4 1 2 3; bob 4 1 5 6 6; cy 2 2 3 5 6",
        "bob gains a die and now holds 5",
    ]
    assert (state.counts, state.opener) == ((5, 5, 5), 1)
    state, events = send(spot_state((5, 5, 5)), 1, "calza", FILLER[:15])
    assert public(events)[1].startswith("round 2: dice in play")
    assert state.counts == (5, 5, 5)


def test_a_wrong_spot_call_costs_the_caller_a_die() -> None:
    state = replace(spot_state(), bids=(Bid(0, 4, 4),))
    state, events = send(state, 1, "spot", FILLER[:13])
    assert public(events)[1] == "bob loses a die and now holds 3"
    assert (state.counts, state.opener) == ((5, 3, 5), 1)
    assert rejected(replace(spot_state(), bids=()), 1, "spot") == (
        "no bid to spot yet; open with a bid"
    )


def test_classic_standings_rank_by_elimination() -> None:
    state, _ = dealt({"dice_per_player": 1}, ["ann", "bob", "cy"], [2, 3, 4])
    state, _ = send(state, 0, "bid 2 5")
    state, events = send(state, 1, "liar", [5, 4])
    assert public(events)[1:3] == [
        "ann loses a die and now holds 0",
        "ann has no dice left and is out",
    ]
    assert (state.opener, state.counts) == (1, (0, 1, 1))
    state, _ = send(state, 1, "bid 1 6")
    state, events = send(state, 2, "liar")
    assert public(events)[0] == (
        "round 2: cy challenges bob's 1 x 6: there are 0 6s with ones, the bid fails. "
        "The dice: bob 5; cy 4"
    )
    assert state.finished
    assert engine.prompts(state) == []
    assert engine.standings(state) == [
        Standing(2, 1, None),
        Standing(1, 2, None),
        Standing(0, 3, None),
    ]
    assert public(events)[-1] == "the game is over: 1. cy; 2. bob; 3. ann"
    with pytest.raises(OrderError):
        engine.parse(state, 2, "bid 1 2")


# --- Death Match ---------------------------------------------------------------------------

DM = {"profile": "genius_dm"}


def dm_state(options: Mapping[str, JSON], hands: tuple[tuple[int, ...], ...]) -> LiarsDiceState:
    merged = {**DM, **options}
    state, _ = dealt(merged, ["ann", "bob"], FILLER[: 2 * engine.options(merged).start_dice])
    counts = tuple(len(hand) for hand in hands)
    return replace(state, hands=hands, counts=counts)


def test_l1_claims_after_three_threes() -> None:
    state = replace(dm_state({}, ((1, 2, 3, 4), (1, 2, 3, 4))), bids=(Bid(0, 3, 3),), turn=1)
    for text in ("bid 3 4", "bid 4 2", "bid 100 1"):
        assert send(state, 1, text)[0].turn == 0
    for text in ("bid 2 5", "bid 3 2", "bid 3 3"):
        assert rejected(state, 1, text).startswith("bid must raise: after 3 x 3 bid 3 x 4")


def test_l3_ones_are_not_wild_and_the_challenger_wins() -> None:
    state = dm_state({}, ((1, 1, 6, 2), (6, 4, 4, 1)))
    state, _ = send(state, 0, "bid 3 6")
    state, events = send(state, 1, "liar", FILLER[:9])
    assert public(events)[:2] == [
        "round 1: bob challenges ann's 3 x 6: there are 2 6s, the bid fails. "
        "The dice: ann 1 1 6 2; bob 6 4 4 1",
        "ann gains a die and now holds 5",
    ]
    assert (state.counts, state.opener, state.round) == ((5, 4), 0, 2)


def test_l4_more_than_max_dice_ends_the_match() -> None:
    state = dm_state({}, ((1,) * 10, (2, 2, 2, 2)))
    state, _ = send(state, 0, "bid 5 1")
    state, _ = send(state, 1, "bid 6 1")
    state, events = send(state, 0, "liar")
    assert state.finished and state.counts == (11, 4)
    assert engine.standings(state) == [Standing(1, 1, None), Standing(0, 2, None)]
    assert public(events)[-1] == ("the match is over: ann holds more than 10 dice. 1. bob; 2. ann")


def test_l5_six_lost_rounds_each_lead_to_ten_ten_and_round_13_decides() -> None:
    state, _ = dealt({**DM, "reserve": False}, ["ann", "bob"], [1] * 8)
    for _ in range(12):
        state, _ = send(state, state.turn, "bid 1 1")
        state, _ = deadline(state, [1] * (sum(state.counts) + 1))
    assert (state.counts, state.round, state.finished) == ((10, 10), 13, False)
    state, _ = send(state, state.turn, "bid 1 1")
    state, _ = deadline(state)
    assert state.finished
    assert engine.standings(state) == [Standing(0, 1, None), Standing(1, 2, None)]


def test_the_reserve_is_spent_first_and_the_second_miss_loses_the_round() -> None:
    state = dm_state({}, ((1, 2, 3, 4), (1, 2, 3, 4)))
    state, _ = send(state, 0, "bid 2 2")
    assert engine.default(state, 1) == LiarsDiceOrder("timeout")
    assert engine.canonical(state, 1, LiarsDiceOrder("timeout")) == "no move (deadline missed)"
    before = engine.prompts(state)
    state, events = deadline(state)
    assert public(events) == [
        "round 1: bob missed the deadline and spends the round reserve; bob still owes the move"
    ]
    after = engine.prompts(state)
    assert after == [
        Prompt(
            1,
            "bid or challenge",
            "round 1, move 2: raise 2 x 2 (ann) or call liar; your round reserve is spent",
        )
    ]
    assert after != before
    state, events = deadline(state, FILLER[:9])
    assert public(events)[0].startswith(
        "round 1: bob missed the deadline again and loses the round."
    )
    assert (state.counts, state.opener, state.reserve_spent) == ((4, 5), 1, (False, False))


def test_without_the_reserve_the_first_miss_loses_the_round() -> None:
    state = dm_state({"reserve": False}, ((1, 2, 3, 4), (1, 2, 3, 4)))
    state, events = deadline(state, FILLER[:9])
    assert public(events)[0].startswith(
        "round 1: ann missed the deadline and has no reserve and loses the round."
    )
    assert state.counts == (5, 4)


def test_l6_revelation_shows_until_three_dice_are_unshown() -> None:
    state = dm_state({"revelation": True}, ((1, 2, 3, 4, 5), (6, 6, 6)))
    assert rejected(state, 0, "bid 2 6") == (
        'show one of your dice: add "show <position>", e.g. show 1'
    )
    assert rejected(state, 0, "bid 2 6 show 6") == (
        "show: you have no die at position 6; you hold 5 dice"
    )
    state, events = send(state, 0, "bid 2 6 show 3")
    assert private(events, 1) == ["ann shows you their die at position 3: a 3"]
    assert private(events, 0) == []
    state, _ = send(state, 1, "bid 3 6")  # bob holds 3 dice: he never shows
    assert rejected(state, 0, "bid 4 6 show 3") == (
        "show: you showed your die at position 3 already this round"
    )
    state, _ = send(state, 0, "bid 4 6 show 1")
    assert engine.view(state, 1)["you"]["shown_to_you"] == [
        {"slot": 3, "value": 3},
        {"slot": 1, "value": 1},
    ]
    assert engine.view(state, 0)["you"]["you_showed"] == [3, 1]
    state, _ = send(state, 1, "bid 5 6")
    assert rejected(state, 0, "bid 6 6 show 2") == (
        "show: you have 3 unshown dice left; claim without show"
    )
    state, _ = send(state, 0, "bid 6 6")
    assert [bid.show for bid in state.bids] == [3, None, 1, None, None]
    bob_three = dm_state({"revelation": True}, ((1, 2, 3), (6, 6, 6)))
    assert rejected(bob_three, 0, "bid 2 6 show 1").startswith("show: you have 3 unshown")


def test_l7_summation_with_fresh_start_needs_four_opponent_dice() -> None:
    options = {**DM, "fresh_start": True, "summation": True, "mulligan": True}
    state, _ = dealt(options, ["ann", "bob"], [1, 1])
    assert state.counts == (1, 1) and state.phase == "mulligan"
    short = replace(state, counts=(4, 3), hands=((3, 3, 3, 3), (2, 5, 6)))
    short, events = deadline(short)
    assert short.sums == (None, 12)
    assert private(events, 0) == []
    assert private(events, 1) == ["round 1: the dice of ann add up to 12"]
    four = replace(state, counts=(4, 4), hands=((3, 3, 3, 3), (2, 5, 6, 1)))
    four, events = deadline(four)
    assert four.sums == (14, 12)
    assert private(events, 0) == ["round 1: the dice of bob add up to 14"]
    assert engine.view(four, 0)["you"]["opponent_sum"] == 14


def test_l8_double_face_maps_d9_values() -> None:
    assert face_table((2, 4, 6)) == (1, 2, 2, 3, 4, 4, 5, 6, 6)
    options = {**DM, "double_face": True}
    # d6 draws 4, 4 (a repeat, discarded), 2, 6; then eight d9 dice.
    state, events = dealt(options, ["ann", "bob"], [4, 4, 2, 6, 1, 2, 3, 4, 5, 6, 7, 9])
    assert state.faces == (2, 4, 6)
    assert state.hands == ((1, 2, 2, 3), (4, 4, 5, 6))
    assert public(events) == [
        "round 1: dice in play: ann 4, bob 4; ann opens; the doubled faces are 2, 4, 6"
    ]
    assert engine.view(state, None)["double_faces"] == [2, 4, 6]


def test_double_face_applies_to_mulligan_rerolls() -> None:
    options = {**DM, "double_face": True, "mulligan": True}
    state, _ = dealt(options, ["ann", "bob"], [1, 3, 5] + [1] * 8)
    state, _ = send(state, 0, "mulligan 2")
    state, _ = send(state, 1, "mulligan none")
    state, _ = deadline(state, [9])
    assert state.hands == ((1, 6, 1, 1), (1, 1, 1, 1))


def cheat_state(cheats_used: tuple[int, int] = (0, 0)) -> LiarsDiceState:
    state = dm_state({"cheat": True}, ((5, 5, 5, 5), (2, 2, 2, 2)))
    assert state.phase == "cheat"
    return replace(state, round=5, cheats_used=cheats_used)


def test_l9_a_caught_cheater_loses_the_round() -> None:
    state = cheat_state()
    assert engine.prompts(state) == [
        Prompt(0, "cheat", "round 5: cheat yes or cheat no (2 cheats left)"),
        Prompt(1, "cheat", "round 5: cheat yes or cheat no (2 cheats left)"),
    ]
    state, _ = send(state, 0, "cheat yes")
    assert engine.prompts(state) == engine.prompts(cheat_state())
    state, _ = send(state, 1, "cheat no")
    state, events = deadline(state)
    assert private(events, 0) == ["round 5: you cheat; bob's dice are 2 2 2 2"]
    assert private(events, 1) == []
    assert engine.view(state, 0)["you"]["opponent_cup"] == [2, 2, 2, 2]
    assert engine.view(state, 1)["you"]["opponent_cup"] is None
    state, _ = send(state, 0, "bid 4 2")
    state, events = send(state, 1, "accuse", FILLER[:9])
    assert public(events)[:2] == [
        "round 5: bob accuses ann, who cheated: bob wins. The dice: ann 5 5 5 5; bob 2 2 2 2. "
        "ann cheated this round",
        "ann gains a die and now holds 5",
    ]
    assert state.cheats_used == (1, 0)
    assert engine.view(state, None)["last_round"]["cheated"] == ["ann"]


def test_l9_an_unfounded_accusation_loses_the_round() -> None:
    state, _ = deadline(cheat_state())
    state, events = send(state, 0, "accuse", FILLER[:9])
    assert public(events)[0].startswith("round 5: ann accuses bob, who did not cheat: ann loses.")
    assert state.counts == (5, 4)


def test_l9_two_cheats_are_the_most() -> None:
    state = cheat_state((2, 1))
    assert engine.prompts(state) == [
        Prompt(1, "cheat", "round 5: cheat yes or cheat no (1 cheat left)")
    ]
    assert rejected(state, 0, "cheat yes") == (
        "cheat: you have cheated in 2 rounds already; no order is expected from you now"
    )
    assert rejected(state, 1, "bid 2 2") == (
        "round 5 is at the cheat step: send cheat yes or cheat no"
    )
    assert engine.default(state, 1) == LiarsDiceOrder("cheat", cheat=False)
    state, _ = send(state, 1, "cheat yes")
    state, _ = deadline(state)
    assert state.cheated == (False, True)
    done = cheat_state((2, 2))
    done, _ = send(replace(done, phase="bidding"), 0, "bid 1 5")
    done, _ = send(done, 1, "liar", FILLER[:9])
    assert done.phase == "bidding"


def test_l10_the_oracle_tells_the_claimant_alone() -> None:
    state = dm_state({"oracle": True}, ((5, 5, 1, 2), (3, 3, 4, 4)))
    state, events = send(state, 0, "bid 3 5")
    assert private(events, 0) == ["oracle: your claim 3 x 5 is false"]
    assert private(events, 1) == []
    state, events = send(state, 1, "bid 4 5")
    assert private(events, 1) == ["oracle: your claim 4 x 5 is false"]
    state, events = send(state, 0, "bid 5 1")
    assert private(events, 0) == ["oracle: your claim 5 x 1 is false"]
    assert engine.view(state, 0)["you"]["oracle"] == [
        {"bid": "3 x 5", "true": False},
        {"bid": "5 x 1", "true": False},
    ]
    true_state = dm_state({"oracle": True}, ((5, 5, 1, 2), (3, 3, 4, 4)))
    _, events = send(true_state, 0, "bid 2 5")
    assert private(events, 0) == ["oracle: your claim 2 x 5 is true"]


def test_l11_mulligan_positions() -> None:
    state = dm_state({"mulligan": True}, ((1, 2, 3), (4, 4, 4, 4)))
    assert state.phase == "mulligan"
    assert rejected(state, 0, "mulligan 1 2 3 4") == (
        "mulligan: you hold 3 dice; name at most 3 different positions"
    )
    assert rejected(state, 0, "mulligan 1 1") == "mulligan: name each position once"
    assert rejected(state, 0, "mulligan 4") == "mulligan: you have no die 4; you hold 3 dice"
    assert rejected(state, 0, "bid 2 2").startswith("round 1 is at the mulligan step")
    assert engine.default(state, 0) == LiarsDiceOrder("mulligan")
    state, _ = send(state, 0, "mulligan 3 1")
    assert engine.canonical(state, 0, engine.parse(state, 0, "mulligan 3 1")) == "mulligan 1 3"
    state, _ = send(state, 1, "Mulligan 4, 2")
    # Seat 1's positions in increasing order, then seat 2's.
    state, events = deadline(state, [6, 5, 2, 1])
    assert state.hands == ((6, 2, 5), (4, 2, 4, 1))
    assert private(events, 0) == ["round 1: after your mulligan your dice are 6 2 5"]
    assert private(events, 1) == ["round 1: after your mulligan your dice are 4 2 4 1"]
    assert public(events) == ["round 1: mulligans done: ann rerolled 2 dice; bob rerolled 2 dice"]
    assert state.phase == "bidding"


def test_mulligan_nmr_rerolls_nothing_and_the_step_prompts_both() -> None:
    state = dm_state({"mulligan": True}, ((1, 2, 3), (4, 4, 4, 4)))
    assert [prompt.seat for prompt in engine.prompts(state)] == [0, 1]
    state, events = deadline(state)
    assert state.hands == ((1, 2, 3), (4, 4, 4, 4))
    assert public(events)[:2] == [
        "ann sent no mulligan order: nothing is rerolled",
        "bob sent no mulligan order: nothing is rerolled",
    ]
    assert state.reserve_spent == (False, False)


# --- the team game -------------------------------------------------------------------------

TEAM = {"profile": "genius_team"}
ADA, BEA, CID, DOT = [1, 2, 3, 4, 5], [3, 3, 6, 2, 5], [6, 6, 6, 6, 6], [2, 2, 2, 2, 2]


def team_state(options: Mapping[str, JSON] = TEAM) -> tuple[LiarsDiceState, list[Event]]:
    return dealt(options, ["ada", "bea", "cid", "dot"], ADA + BEA + CID + DOT)


def test_team_players_watch_the_player_behind_them() -> None:
    state, events = team_state()
    assert private(events, 0) == ["round 1: you watch dot, whose dice are 2 2 2 2 2"]
    assert private(events, 1) == ["round 1: you watch ada, whose dice are 1 2 3 4 5"]
    view = engine.view(state, 1)
    assert view["you"] == {
        "seat": 1,
        "name": "bea",
        "dice": 5,
        "watches": {"seat": 0, "name": "ada", "dice": ADA},
        "learnt": [],
        "acted": False,
    }
    assert [player["team"] for player in view["players"]] == [1, 2, 1, 2]
    adjacent = engine.view(team_state({**TEAM, "team_seating": "adjacent"})[0], None)
    assert [player["team"] for player in adjacent["players"]] == [1, 1, 2, 2]


def test_the_ring_closes_up_after_an_elimination() -> None:
    state, _ = team_state()
    state = replace(state, counts=(1, 0, 1, 1), hands=((4,), (), (5,), (6,)))
    assert engine.view(state, 2)["you"]["watches"] == {"seat": 0, "name": "ada", "dice": [4]}
    two = replace(state, counts=(2, 0, 0, 1), hands=((4, 4), (), (), (6,)))
    assert engine.view(two, 0)["you"]["watches"]["name"] == "dot"
    assert engine.view(two, 3)["you"]["watches"]["name"] == "ada"


def test_l15_reroll_spares_revealed_and_learnt_dice() -> None:
    state, _ = team_state()
    # X is cid, who watches Y, bea; Z is dot, who learnt bea's die 4.
    state = replace(state, turn=2, learnt=(Learnt(3, 1, 4),))
    state, events = send(state, 2, "reveal 1 reroll", [1, 2, 3])
    assert state.hands[1] == (3, 1, 2, 2, 3)
    assert public(events) == ["round 1: cid reveals bea's die 1: a 3, and rerolls their dice 2 3 5"]
    assert private(events, 2) == ["round 1: bea's dice are now 3 1 2 2 3"]
    assert engine.view(state, None)["players"][1]["revealed"] == [{"slot": 1, "value": 3}]
    assert engine.prompts(state) == [
        Prompt(2, "bid", "round 1, move 1: open with a bid; your action is done")
    ]
    assert rejected(state, 2, "reveal 2 reroll") == (
        "reveal: you have used your action this turn; bid or call liar"
    )
    assert rejected(state, 2, "liar") == "no bid to challenge yet; open with a bid"


def team_after_bid() -> LiarsDiceState:
    """ada opens; bea (who watches ada) is on turn."""
    state, _ = team_state()
    state, _ = send(state, 0, "bid 3 6")
    return state


def test_12_1_team_examples() -> None:
    state = team_after_bid()
    after, events = send(state, 1, "reveal 2 reroll\nbid 4 4", [6, 6, 6, 6])
    assert after.hands[0] == (6, 2, 6, 6, 6)
    assert after.turn == 2 and after.bids[-1] == Bid(1, 4, 4)
    assert public(events) == [
        "round 1: bea reveals ada's die 2: a 2, and rerolls their dice 1 3 4 5",
        "round 1: bea bids 4 x 4",
    ]
    assert rejected(state, 1, "reveal 2 learn ada 1") == (
        "learn: pick a player other than yourself and ada, whom you already watch"
    )
    assert rejected(state, 1, "reveal 9 reroll") == "reveal: ada has no die 9; ada holds 5 dice"


def test_learn_tells_the_learner_alone() -> None:
    state = team_after_bid()
    state, events = send(state, 1, "reveal 5 learn CID 2")
    assert public(events) == ["round 1: bea reveals ada's die 5: a 5, and learns cid's die 2"]
    assert private(events, 1) == ["round 1: cid's die 2 is a 6"]
    assert engine.view(state, 1)["you"]["learnt"] == [
        {"seat": 2, "player": "cid", "slot": 2, "value": 6}
    ]
    assert engine.view(state, 3)["you"]["learnt"] == []
    assert engine.canonical(state, 1, engine.parse(state, 1, "reveal 1 learn cid 2")) == (
        "reveal 1 learn cid 2"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("reveal 1 learn bea 1", "learn: pick a player other than yourself and ada"),
        ("reveal 1 learn zed 1", "learn: there is no player called 'zed'"),
        ("reveal 1 learn cid 6", "learn: cid has no die 6; cid holds 5 dice"),
        ("reveal 1 learn cid 3", "learn: you already know cid's die 3"),
        ("reveal 1 learn dot 2", "learn: dot's die 2 is revealed; everybody knows it"),
        ("reveal 3 reroll", "reveal: ada's die 3 is revealed already"),
        ("reveal 1 swap", "'reveal 1 swap': write reveal <slot> reroll or reveal <slot> learn"),
        ("reveal 1 reroll\nliar", "line 2: no bid to challenge yet"),
    ],
)
def test_team_action_messages(text: str, message: str) -> None:
    state, _ = team_state()
    state = replace(
        state,
        turn=1,
        learnt=(Learnt(1, 2, 3),),
        revealed=((3,), (), (), (2,)),
    )
    with pytest.raises(OrderError) as error:
        send(state, 1, text, [1, 1, 1, 1])
    assert error.value.message.startswith(message)


def test_nothing_to_reroll_and_nothing_left_to_reveal() -> None:
    state, _ = team_state()
    state = replace(state, turn=1, revealed=((1, 2, 3), (), (), ()), learnt=(Learnt(3, 0, 5),))
    assert rejected(state, 1, "reveal 4 reroll") == (
        "nothing to reroll: every other die of ada is revealed or learnt"
    )
    state = replace(state, revealed=((1, 2, 3, 4, 5), (), (), ()))
    assert rejected(state, 1, "reveal 1 reroll") == "reveal: every die of ada is revealed already"


def test_an_applied_action_stands_when_the_bid_after_it_is_rejected() -> None:
    state = team_after_bid()
    order = engine.parse(state, 1, "reveal 2 learn cid 1\nbid 2 2")
    with pytest.raises(ActionApplied) as error:
        engine.submit(state, 1, order, NoDice())
    assert error.value.message.startswith("line 2: bid must raise: after 3 x 6 bid 4 or more")
    assert error.value.state.acted and error.value.state.learnt == (Learnt(1, 2, 1),)
    order = engine.parse(state, 1, "reveal 2 learn cid 1\nbid two 2")
    assert order.rejected == (
        "line 2: bid two 2: the quantity must be a whole number in the digits 0-9, not 'two'"
    )
    with pytest.raises(ActionApplied):
        engine.submit(state, 1, order, NoDice())


def test_team_nmr_defaults_keep_an_applied_action() -> None:
    state, _ = team_state()
    assert engine.default(state, 0) == LiarsDiceOrder("bid", 1, 1)
    state, _ = send(state, 0, "reveal 1 learn bea 1")
    assert engine.default(state, 0) == LiarsDiceOrder("bid", 1, 1)
    state, events = deadline(state)
    assert public(events) == [
        "ada sent no order: the NMR default bid 1 1 is played",
        "round 1: ada bids 1 x 1",
    ]
    assert engine.default(state, 1) == LiarsDiceOrder("liar")


def test_the_sum_phase() -> None:
    state, _ = team_state()
    state = replace(state, counts=(1, 1, 0, 0), hands=((4,), (5,), (), ()))
    assert state.sum_phase
    assert engine.default(state, 0) == LiarsDiceOrder("bid", 2, 0, sum=True)
    assert engine.canonical(state, 0, engine.default(state, 0)) == "bid sum 2"
    assert (
        rejected(state, 0, "bid 2 3") == "bid: two single dice remain; bid a sum: bid sum <total>"
    )
    assert rejected(state, 0, "bid sum 13") == "bid sum 13: the sum must be 2-12"
    assert rejected(state, 0, "reveal 1 reroll") == (
        "nothing to reroll: every other die of bea is revealed or learnt"
    )
    assert rejected(state, 0, "reveal 1 learn bea 1") == (
        "learn: pick a player other than yourself and bea, whom you already watch"
    )
    assert rejected(state, 0, "reveal 1 learn cid 1") == "learn: cid has no dice"
    state, _ = send(state, 0, "bid sum 9")
    assert rejected(state, 1, "bid sum 9") == "bid must raise: after sum 9 bid sum 10 or more"
    state, events = send(state, 1, "liar")
    assert public(events)[0] == (
        "round 1: bea challenges ada's sum 9: there are 9 in all (the sum), the bid holds. "
        "The dice: ada 4; bea 5"
    )
    assert state.finished
    assert engine.standings(state) == [
        Standing(0, 1, None),
        Standing(2, 1, None),
        Standing(1, 3, None),
        Standing(3, 3, None),
    ]


def test_team_turns_pass_to_the_next_seat_with_dice_and_the_loser_opens() -> None:
    state, _ = team_state()
    state = replace(state, counts=(5, 1, 5, 5), hands=(tuple(ADA), (3,), tuple(CID), tuple(DOT)))
    state, _ = send(state, 0, "bid 5 6")
    state, events = send(state, 1, "liar", [1] * 15)
    assert public(events)[1:4] == [
        "bea loses a die and now holds 0",
        "bea has no dice left and is out",
        "round 2: dice in play: ada 5, bea 0, cid 5, dot 5; cid opens",
    ]
    assert state.counts == (5, 0, 5, 5)
    assert state.opener == 2
    assert engine.view(state, 2)["you"]["watches"]["name"] == "ada"


# --- JSON, canonical text, views -----------------------------------------------------------


def test_state_and_orders_round_trip_through_json() -> None:
    state = team_after_bid()
    state, _ = send(state, 1, "reveal 2 learn cid 1")
    data = json.loads(json.dumps(engine.state_to_json(state)))
    assert engine.state_from_json(data) == state
    order = engine.parse(state, 1, "bid 4 4")
    assert engine.order_from_json(json.loads(json.dumps(engine.order_to_json(order)))) == order
    json.dumps(engine.view(state, None))


@pytest.mark.parametrize(
    ("options", "text", "canonical"),
    [
        ({}, "Bid  5,3", "bid 5 3"),
        ({}, "challenge", "liar"),
        ({"calza": True}, "calza", "spot"),
        ({**DM, "revelation": True}, "bid 2 6 show 3", "bid 2 6 show 3"),
        ({**DM, "cheat": True}, "accuse", "accuse"),
    ],
)
def test_canonical_text_reads_back(options: Mapping[str, JSON], text: str, canonical: str) -> None:
    merged = dict(options)
    state, _ = dealt(merged, ["ann", "bob"], FILLER[: 2 * engine.options(merged).start_dice])
    state = replace(state, phase="bidding", bids=(Bid(1, 1, 2),))
    order = engine.parse(state, 0, text)
    assert engine.canonical(state, 0, order) == canonical
    assert engine.parse(state, 0, canonical) == order


def test_the_views_show_a_cup_only_to_its_owner() -> None:
    state = classic_after_ann_bids()
    assert "you" not in engine.view(state, None)
    assert engine.view(state, 1)["you"] == {"seat": 1, "name": "bob", "dice": 5, "cup": BOB}
    text = json.dumps(engine.view(state, None))
    assert "4, 1, 5, 6, 6" not in text
    assert engine.view(state, None)["turn"] == {"seat": 1, "name": "bob"}


# --- numbers in orders ---------------------------------------------------------------------


WIDE_5 = "\N{FULLWIDTH DIGIT FIVE}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("bid ² 3", "bid ² 3: the quantity must be a whole number in the digits 0-9, not '²'"),
        ("bid ٣ 3", "bid ٣ 3: the quantity must be a whole number in the digits 0-9, not '٣'"),
        (
            f"bid 4 {WIDE_5}",
            f"bid 4 {WIDE_5}: the face must be a whole number in the digits 0-9, not '{WIDE_5}'",
        ),
    ],
)
def test_a_number_in_other_digits_than_0_to_9_is_refused(text: str, message: str) -> None:
    state, _ = dealt({}, ["ann", "bob"], FILLER[:10])
    state = replace(state, bids=(Bid(0, 2, 3),), turn=1)
    assert rejected(state, 1, text) == message


def test_a_quantity_is_capped_at_999_and_the_message_says_so() -> None:
    state, _ = dealt({}, ["ann", "bob"], FILLER[:10])
    state = replace(state, bids=(Bid(0, 2, 3),), turn=1)
    assert rejected(state, 1, "bid 99999999999999999999999999999 3") == (
        "bid 99999999999999999999999999999 3: the quantity must be at most 999 (10 dice in play)"
    )
    assert rejected(state, 1, "bid 1000 3") == (
        "bid 1000 3: the quantity must be at most 999 (10 dice in play)"
    )
    assert send(state, 1, "bid 999 3")[0].bids[-1] == Bid(1, 999, 3)


def test_positions_and_slots_in_other_digits_are_refused() -> None:
    mulligan = dm_state({"mulligan": True}, ((1, 2, 3), (4, 4, 4, 4)))
    assert rejected(mulligan, 0, "mulligan 1 ²") == (
        "mulligan: a position must be a whole number in the digits 0-9, not '²'"
    )
    shows = dm_state({"revelation": True}, ((1, 2, 3, 4, 5), (6, 6, 6)))
    assert rejected(shows, 0, "bid 2 6 show ٣") == (
        "bid 2 6 show ٣: the position must be a whole number in the digits 0-9, not '٣'"
    )
    team = team_after_bid()
    assert rejected(team, 1, "reveal ² reroll") == (
        "reveal: the slot must be a whole number in the digits 0-9, not '²'"
    )
    assert rejected(team, 1, "reveal 1 learn cid ٣") == (
        "learn: the slot must be a whole number in the digits 0-9, not '٣'"
    )
    sums = replace(team_state()[0], counts=(1, 1, 0, 0), hands=((4,), (5,), (), ()))
    assert rejected(sums, 0, "bid sum ¹²") == (
        "bid sum ¹²: the sum must be a whole number in the digits 0-9, not '¹²'"
    )


def test_a_slot_far_out_names_how_many_dice_the_player_holds() -> None:
    team = team_after_bid()
    assert rejected(team, 1, "reveal 99999999999999999999 reroll") == (
        "reveal: ada has no die 99999999999999999999; ada holds 5 dice"
    )
    assert rejected(team, 1, "reveal 1 learn cid 99999999999999999999") == (
        "learn: cid has no die 99999999999999999999; cid holds 5 dice"
    )
