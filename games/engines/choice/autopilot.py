"""Choice's autopilots (rules/choice.md): what plays a seat's postal turn when its player
misses the deadline and chose an autopilot instead of the NMR default.

Nothing in Choice is hidden but the other players' sealed orders, and every round of a
postal turn is rolled when it opens (section 5), so an autopilot may plan the whole turn:
it reads the seat's own sheet and the turn's rolls, nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

from games.engines.base import OrderError, Strategy
from games.engines.choice.rules import (
    ChoiceOrder,
    ChoiceState,
    Round,
    RoundLine,
    Sheet,
    legal_choices,
    score,
)
from games.engines.text import _

# The most partial plans kept after each round of a postal turn (the best by score so far).
# Four rounds of up to fifteen choices each would be 50,625 plans; a plan the beam drops is
# one whose first rounds already score worse than this many others. Over 150 games of four
# rounds per turn, keeping every plan scored no better than keeping 60.
BEAM = 60

# A plan's tie-break, round by round: the value set aside, the lower and the higher sum,
# and the pairing's place among the legal choices (the NMR default's order, section 5).
PathKey = tuple[tuple[int, int, int, int], ...]


@dataclass(frozen=True)
class _Plan:
    """The lines chosen so far for the rounds of the turn, and the sheet they leave: its
    sum track, its stored values (value, count) by value, and whether the game ended.
    A round played without a card needs no more of the sheet (rules/choice.md 7.5)."""

    counts: tuple[int, ...]
    stored: tuple[tuple[int, int], ...]
    ended: bool
    lines: tuple[RoundLine, ...]
    path: PathKey
    points: int

    def rank(self) -> tuple[int, int, PathKey]:
        """Lower is better: the highest score were the game to end after these lines; then
        the fewest Wurfels on the most-stored value (the longer the game can go on); then
        the smaller value set aside and the smaller sums, round by round."""
        most = max((count for __, count in self.stored), default=0)
        return (-self.points, most, self.path)

    def future(self) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...], bool]:
        """What the rest of the turn depends on: two plans with equal futures play on alike."""
        return (self.counts, self.stored, self.ended)


def _extend(plan: _Plan, current: Round, threshold: int) -> list[_Plan]:
    """``plan`` with each legal choice for ``current`` (W1-W3 on the stored values)."""
    plans: list[_Plan] = []
    stored = dict(plan.stored)
    for index, choice in enumerate(legal_choices(Sheet(stored=plan.stored), current.roll)):
        counts = list(plan.counts)
        for total in choice.sums:
            counts[total - 2] += 1
        now = dict(stored)
        if choice.wurfel:
            now[choice.value] = now.get(choice.value, 0) + 1
        low, high = sorted(choice.sums)
        plans.append(
            _Plan(
                tuple(counts),
                tuple(sorted(now.items())),
                any(count >= threshold for count in now.values()),
                (*plan.lines, RoundLine(current.number, choice)),
                (*plan.path, (choice.value, low, high, index)),
                score(counts),
            )
        )
    return plans


def best_score(state: ChoiceState, seat: int) -> ChoiceOrder:
    """The ``best-score`` autopilot: the Wurfels (or free rides) and pairs, one per round of
    the postal turn, that together leave the highest score were the game to end after them.
    Plays no card and no Suppen-Kasper round."""
    if not 0 <= seat < len(state.players):
        raise OrderError(_("there is no seat %(seat)d in this game", seat=seat))
    sheet = state.sheets[seat]
    if not sheet.active or state.finished:
        raise OrderError(_("no order is expected from you now"))
    threshold = state.options.end_threshold
    frontier = [
        _Plan(sheet.counts, tuple(sorted(sheet.stored)), False, (), (), score(sheet.counts))
    ]
    done: list[_Plan] = []
    for current in state.rounds:
        best: dict[object, _Plan] = {}
        for plan in frontier:
            for following in _extend(plan, current, threshold):
                key = following.future()
                if key not in best or following.path < best[key].path:
                    best[key] = following
        ranked = sorted(best.values(), key=_Plan.rank)
        done.extend(plan for plan in ranked if plan.ended)
        frontier = [plan for plan in ranked if not plan.ended][:BEAM]
    chosen = min([*done, *frontier], key=_Plan.rank)
    return ChoiceOrder(chosen.lines)


STRATEGIES: tuple[Strategy, ...] = (
    Strategy(
        key="best-score",
        title=_("Best score: the Wurfels and pairs that score most this postal turn"),
        summary=_(
            "Plans every round of the postal turn together, since all its rolls are known: "
            "of the legal Wurfels (or free-ride discards) and pairings, takes the ones that "
            "leave the highest score were the game to end after them. On equal scores it "
            "keeps the count of its most-stored Wurfel value lowest, so the game lasts. "
            "Plays no card and no Suppen-Kasper round."
        ),
        play=best_score,
    ),
)
