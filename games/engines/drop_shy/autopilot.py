"""Drop-Shy's autopilots (rules/drop-shy.md): what plays a seat's turn when its player misses
the deadline and chose an autopilot instead of the NMR default. Nothing in Drop-Shy is
hidden: an autopilot reads the board and the seat's own line."""

from __future__ import annotations

from games.engines.base import Strategy
from games.engines.drop_shy.rules import (
    Cell,
    DropShyEngine,
    DropShyOrder,
    DropShyState,
    cells,
    legal_by_candidate,
    legal_cells,
    scan_key,
)
from games.engines.text import _

_engine = DropShyEngine()


def next_room(state: DropShyState, seat: int) -> DropShyOrder:
    """The ``next-room`` autopilot: of every legal placement (each candidate die on each of
    its legal cells), the one after which the die then at the front of the seat's line fits
    in the most cells. Ties go to the rightmost candidate, then to the first cell in scan
    order (highest y, then lowest x), where the last die of a line always goes. When no
    candidate fits anywhere, the NMR default fails the rightmost."""
    default = _engine.default(state, seat)  # also refuses a seat not on turn
    grid = cells(state.board)
    line = state.lines[seat]
    found = legal_by_candidate(state)
    best: tuple[tuple[int, int, tuple[int, int]], str, Cell] | None = None
    for position, (name, index, legal) in enumerate(found):
        face = line[index].face
        rest = line[:index] + line[index + 1 :]
        for cell in legal:
            room = len(legal_cells({**grid, cell: face}, rest[0].face)) if rest else 0
            rank = (-room, position, scan_key(cell))
            if best is None or rank < best[0]:
                best = (rank, name, cell)
    if best is None:
        return default
    __, name, cell = best
    return DropShyOrder(name if len(found) > 1 else None, cell)


STRATEGIES: tuple[Strategy, ...] = (
    Strategy(
        key="next-room",
        title=_("Room for the next die: place where your next die fits in the most cells"),
        summary=_(
            "Tries every legal cell for the die in play (both candidates in two-candidate "
            "mode) and places it where the die that will then be at the front of your line "
            "has the most legal cells. Ties go to the rightmost die, then to the highest "
            "and leftmost cell. A die that fits nowhere fails, as the no-moves default does."
        ),
        play=next_room,
    ),
)
