"""Dice Survivor's autopilots (rules/dice-survivor.md): what plays a seat's owed order when
its player misses the deadline and chose an autopilot instead of the NMR default.

Nothing in Dice Survivor is hidden: every PP count is public, and the chance of each
outcome follows from the dice (section 1), so an autopilot weighs its options by their
exact odds, counted over every face of the dice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from fractions import Fraction
from functools import lru_cache
from itertools import product

from games.engines.base import Strategy
from games.engines.dice_survivor.rules import (
    MAJOR_DIE,
    MINOR_DIE,
    NORMAL_ACTIONS,
    PLAYER_DIE,
    DiceSurvivorEngine,
    SurvivorOrder,
    SurvivorState,
    clockwise,
)
from games.engines.text import _

# A KO is tried when it knocks the defender out at least this often.
KO_ODDS = Fraction(3, 4)

_engine = DiceSurvivorEngine()
_D20 = range(1, PLAYER_DIE + 1)
_D12 = range(1, MAJOR_DIE + 1)
_D8 = range(1, MINOR_DIE + 1)


def _defender_die(keep: str) -> Counter[int]:
    """The die a defender's d12 and d8 give, ``keep`` "lower" or "higher": value -> ways."""
    pick = min if keep == "lower" else max
    return Counter(pick(major, minor) for major, minor in product(_D12, _D8))


_LOWER = _defender_die("lower")
_HIGHER = _defender_die("higher")


# How a throw of d20 + PP against the defender's kept die + PP comes out: the natural the
# d20 shows (1, 20, or 0 for none) and the sign of the difference of the totals.
Outcome = tuple[int, int]


@lru_cache(maxsize=4096)
def throws(active: int, defender: int, keep: str) -> Mapping[Outcome, int]:
    """Every throw of a challenge, rematch or KO with ``active`` and ``defender`` PP, by its
    outcome: (natural, sign of active total - defender total) -> ways out of 20 x 12 x 8.
    Kept once counted (a pure function of its numbers): callers only read it."""
    found: Counter[Outcome] = Counter()
    for d20 in _D20:
        natural = d20 if d20 in (1, PLAYER_DIE) else 0
        for die, ways in (_LOWER if keep == "lower" else _HIGHER).items():
            difference = d20 + active - die - defender
            found[(natural, (difference > 0) - (difference < 0))] += ways
    return found


def challenge_wins(active: int, defender: int) -> Fraction:
    """The chance that the active player wins a challenge (the defender pays or is asked
    about a rematch): a natural 20, or a higher total without a natural; throws of equal
    totals are thrown again, so they do not count."""
    won = lost = 0
    for (natural, sign), ways in throws(active, defender, "lower").items():
        if natural == PLAYER_DIE or (not natural and sign > 0):
            won += ways
        elif natural == 1 or sign < 0:
            lost += ways
    return Fraction(won, won + lost)


def ko_succeeds(state: SurvivorState, active: int, defender: int) -> Fraction:
    """The chance that ``active``'s KO knocks ``defender`` out: a higher total, naturals
    meaning nothing; equal totals are not thrown again (section 4.3)."""
    found = throws(state.pp(active), state.pp(defender), state.options.ko_defender)
    knocked = sum(ways for (__, sign), ways in found.items() if sign > 0)
    return Fraction(knocked, sum(found.values()))


def rematch_pays(state: SurvivorState, seat: int) -> bool:
    """Whether ``seat``, the defender asked, loses fewer PP on average by a rematch than by
    accepting the stake: a natural 1 gains it 1, a natural 20 costs 1, a lower total again
    costs twice the stake, a higher one nothing; equal totals are thrown again. No loss
    takes more than the PP it holds."""
    assert state.question is not None
    stake = state.question.stake
    held = state.pp(seat)
    value = {1: 1, PLAYER_DIE: -1}
    total = ways_counted = 0
    for (natural, sign), ways in throws(state.pp(state.active), held, "lower").items():
        if natural:
            total += value[natural] * ways
        elif sign > 0:
            total -= min(2 * stake, held) * ways
        elif sign == 0:
            continue
        ways_counted += ways
    return Fraction(total, ways_counted) > -min(stake, held)


def _ko_target(state: SurvivorState, seat: int) -> int | None:
    """The opponent a KO knocks out most surely, if it does so at least ``KO_ODDS`` of the
    time (equal chances: the first clockwise); None if the KO is spent or too uncertain."""
    if state.participants[seat].ko_turn is not None:
        return None
    chances = [(ko_succeeds(state, seat, other), other) for other in clockwise(state, seat)]
    best, target = max(chances, key=lambda item: item[0])
    return target if best >= KO_ODDS else None


@lru_cache(maxsize=4096)
def finals_keeps(mine: int, major: int, minors: tuple[int, ...]) -> Fraction:
    """The chance that a Finals challenge leaves the active player its PP (its total is the
    highest, alone or tied, or a natural 20), out of the throws that are not all equal:
    ``mine``, ``major`` and ``minors`` are the PP added to the d20, the d12 and each d8."""
    kept = counted = 0
    for d20, d12 in product(_D20, _D12):
        for d8 in _D8 if minors else (0,):
            if d20 in (1, PLAYER_DIE):
                counted += 1
                kept += d20 == PLAYER_DIE
                continue
            others = [d12 + major, *(d8 + minor for minor in minors)]
            if all(total == d20 + mine for total in others):
                continue
            counted += 1
            kept += d20 + mine >= max(others)
    return Fraction(kept, counted)


def _finals_d12(state: SurvivorState, seat: int) -> int:
    """The opponent to give the d12 in a Finals challenge: the one that leaves ``seat``
    likeliest to keep its PP (equal chances: the first clockwise)."""
    opponents = clockwise(state, seat)

    def pp(other: int) -> int:
        return state.pp(other) if state.options.finals_add_pp else 0

    def keeps(major: int) -> Fraction:
        minors = tuple(pp(other) for other in opponents if other != major)
        return finals_keeps(pp(seat), pp(major), minors)

    return max(opponents, key=keeps)


def odds(state: SurvivorState, seat: int) -> SurvivorOrder:
    """The ``odds`` autopilot. Asked about a rematch: rematch when it loses fewer PP on
    average than accepting. On turn: a KO when one would succeed at least three times in
    four (and is allowed now); else the Extra Play Point while it is unused (it never costs
    a PP); else a challenge of the opponent it is likeliest to beat, if it wins more often
    than it loses, else pass. In the Finals the d12 goes to the opponent for whom the seat
    most often keeps its PP."""
    default = _engine.default(state, seat)  # also refuses a seat that owes nothing now
    if state.question is not None:
        return SurvivorOrder("rematch" if rematch_pays(state, seat) else "accept")
    ko = _ko_target(state, seat)
    if state.finals:
        if ko is not None:
            return SurvivorOrder("ko", ko)
        return SurvivorOrder("challenge", _finals_d12(state, seat), d12=True)
    if ko is not None and state.actions_left == NORMAL_ACTIONS:
        return SurvivorOrder("ko", ko)
    if not state.extra_used:
        return SurvivorOrder("extra")
    chances = [
        (challenge_wins(state.pp(seat), state.pp(other)), other) for other in clockwise(state, seat)
    ]
    best, target = max(chances, key=lambda item: item[0])
    if best > Fraction(1, 2):
        return SurvivorOrder("challenge", target)
    return default


STRATEGIES: tuple[Strategy, ...] = (
    Strategy(
        key="odds",
        title=_("Odds: Extra Play Point first, then challenge only when likelier to win"),
        summary=_(
            "Weighs each choice by its exact odds. On your turn: a KO when it would knock "
            "the opponent out at least three times in four; else the Extra Play Point while "
            "it is unused; else a challenge (stake 1) of the opponent you are likeliest to "
            "beat, if you win more often than you lose, else pass. Asked about a rematch: "
            "rematch when it costs fewer PP on average than accepting. In the Finals the "
            "d12 goes to the opponent that leaves you likeliest to keep your PP."
        ),
        play=odds,
    ),
)
