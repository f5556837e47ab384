"""Liar's Dice autopilots (rules/liars-dice.md): what plays a seat's owed order when its
player misses the deadline and chose an autopilot instead of the NMR default.

An autopilot knows what the seat knows and nothing more: in classic and the Death Match
its own cup (and, in the Death Match, the opponent's cup in a round it cheated, and the
dice the opponent showed it); in the team game the hand it watches, the dice it learnt and
the dice revealed to all. The dice counts and the bids are public. Every other die is
unknown and counted by its chance of showing a face.
"""

from __future__ import annotations

from fractions import Fraction

from games.engines.base import Strategy
from games.engines.liars_dice.rules import (
    CHEAT,
    DEATH_MATCH,
    FACES,
    MAX_QUANTITY,
    MULLIGAN,
    SUM_HIGH,
    SUM_LOW,
    TEAM,
    LiarsDiceEngine,
    LiarsDiceOrder,
    LiarsDiceState,
    behind,
    positions_to_show,
)
from games.engines.text import _

# The mean of a fair d6: an unknown die's share of a sum.
MEAN_DIE = Fraction(7, 2)

_engine = LiarsDiceEngine()


def known_dice(state: LiarsDiceState, seat: int) -> dict[tuple[int, int], int]:
    """The dice ``seat`` may see now, as (owner, slot) -> face; slots count from 1."""
    known: dict[tuple[int, int], int] = {}

    def take(owner: int, slots: list[int] | tuple[int, ...] | range) -> None:
        for slot in slots:
            known[(owner, slot)] = state.hands[owner][slot - 1]

    if state.profile == TEAM:
        for owner in state.seats:
            take(owner, state.revealed[owner])
        watched = behind(state, seat)
        take(watched, range(1, state.counts[watched] + 1))
        for entry in state.learnt:
            if entry.seat == seat:
                take(entry.target, (entry.slot,))
        return known
    take(seat, range(1, state.counts[seat] + 1))
    if state.profile == DEATH_MATCH:
        other = 1 - seat
        if state.cheated[seat]:
            take(other, range(1, state.counts[other] + 1))
        take(other, [bid.show for bid in state.bids if bid.seat == other and bid.show is not None])
    return known


def _matches(state: LiarsDiceState, die: int, face: int) -> bool:
    """Whether ``die`` counts for a bid on ``face`` (section 4.1: ones wild in classic)."""
    return die == face or (state.wilds and face != 1 and die == 1)


def chance(state: LiarsDiceState, face: int) -> Fraction:
    """The chance that an unknown die counts for a bid on ``face``: 1/6, or 2/6 with wild
    ones; with Double-Face 2/9 for a doubled face and 1/9 for the others (section 6.2)."""
    if state.faces:
        return Fraction(2 if face in state.faces else 1, 9)
    if state.wilds and face != 1:
        return Fraction(2, 6)
    return Fraction(1, 6)


def expected_count(state: LiarsDiceState, seat: int, face: int) -> Fraction:
    """The count of ``face`` that ``seat`` expects: the dice it knows that count, plus each
    die it does not know times the chance that it counts."""
    known = known_dice(state, seat)
    unknown = sum(state.counts) - len(known)
    matching = sum(1 for die in known.values() if _matches(state, die, face))
    return matching + unknown * chance(state, face)


def expected_sum(state: LiarsDiceState, seat: int) -> Fraction:
    """The team game's sum phase: the total ``seat`` expects of the two remaining dice."""
    known = known_dice(state, seat)
    return sum(known.values()) + (sum(state.counts) - len(known)) * MEAN_DIE


def smallest_quantity(state: LiarsDiceState, face: int) -> int | None:
    """The smallest quantity of ``face`` that may be bid now (section 4.3), or None when no
    bid on ``face`` is legal."""
    last = state.bids[-1] if state.bids else None
    if last is None:
        quantity = 1
        if state.wilds and face == 1:
            return None
    elif state.palifico:
        if face != last.face:
            return None
        quantity = last.quantity + 1
    elif state.wilds and (last.face == 1) != (face == 1):
        # Switching to ones halves the quantity (rounded up); leaving them doubles it, +1.
        quantity = -(-last.quantity // 2) if face == 1 else 2 * last.quantity + 1
    else:
        quantity = last.quantity + (0 if face > last.face else 1)
    return quantity if quantity <= MAX_QUANTITY else None


def _show(state: LiarsDiceState, seat: int, face: int) -> int | None:
    """Revelation: the die a bid on ``face`` shows, when it must show one: the first that
    does not show the face (the opponent learns least about the bid), else the first."""
    positions = positions_to_show(state, seat)
    if not positions:
        return None
    hand = state.hands[seat]
    return next((slot for slot in positions if hand[slot - 1] != face), positions[0])


def _sum_move(state: LiarsDiceState, seat: int) -> LiarsDiceOrder:
    expected = expected_sum(state, seat)
    last = state.bids[-1].quantity if state.bids else None
    if last is not None and (last > expected or last >= SUM_HIGH):
        return LiarsDiceOrder("liar")
    return LiarsDiceOrder("bid", SUM_LOW if last is None else last + 1, 0, sum=True)


def expected_count_move(state: LiarsDiceState, seat: int) -> LiarsDiceOrder:
    """The ``expected-count`` autopilot's bidding move (see ``expected_count_play``)."""
    if state.sum_phase:
        return _sum_move(state, seat)
    last = state.bids[-1] if state.bids else None
    if last is not None and last.quantity > expected_count(state, seat, last.face):
        return LiarsDiceOrder("liar")
    raises: list[tuple[Fraction, int, int]] = []
    for face in FACES:
        quantity = smallest_quantity(state, face)
        if quantity is not None:
            margin = expected_count(state, seat, face) - quantity
            raises.append((-margin, quantity, face))
    if not raises:
        return LiarsDiceOrder("liar")
    __, quantity, face = min(raises)
    return LiarsDiceOrder("bid", quantity, face, show=_show(state, seat, face))


def expected_count_play(state: LiarsDiceState, seat: int) -> LiarsDiceOrder:
    """The ``expected-count`` autopilot. Bidding: call liar when the standing bid names more
    dice than the seat expects of its face, else make the smallest legal raise on the face
    whose expected count best covers it (the most to spare; then the lower quantity, then
    the lower face). Every other step (Mulligan, Cheat) takes the NMR default; it never
    uses the team action, a spot call or an accusation."""
    default = _engine.default(state, seat)  # also refuses a seat that owes nothing now
    if state.phase in (MULLIGAN, CHEAT):
        return default
    return expected_count_move(state, seat)


STRATEGIES: tuple[Strategy, ...] = (
    Strategy(
        key="expected-count",
        title=_("Expected count: call liar when the bid names more dice than expected"),
        summary=_(
            "Counts the dice the seat can see that show a face (ones wild where they are) "
            "and adds each unseen die times its chance of showing it. Calls liar when the "
            "standing bid names more than that expected count, else makes the smallest "
            "legal raise on the face the count supports best (in the team game's sum phase: "
            "the sum it expects). Never cheats, accuses, calls spot or takes the team "
            "action; rerolls nothing in a Mulligan."
        ),
        play=expected_count_play,
    ),
)
