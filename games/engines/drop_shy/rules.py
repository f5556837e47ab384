"""Drop-Shy, played by post: rules/drop-shy.md.

Every player holds a public line of dice, front first. On a turn the player tries the die in
play (the front die, or in two-candidate mode the rightmost or the closest one) on the
square grid that grows from the instigator at (0, 0): a die may go on an empty cell that
touches at least one die by a side, and every die it touches must show one more or one less.
A die that fits nowhere is rerolled and put at the back of the line. The first player to
place every die wins; the last one holding dice loses.

The game is sequential and has no hidden information: an order takes effect at once, and
the engine plays every turn that needs no decision (a die that fits nowhere, or, with
``auto_single``, a die with one legal cell) as soon as it comes up. Each prompt names the
turn number, so the prompts after an order always differ from those before it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from games.engines.base import (
    JSON,
    Dice,
    Event,
    GameError,
    JsonCodec,
    Option,
    OptionsError,
    OrderError,
    Prompt,
    Standing,
    check_option_keys,
    check_players,
    option_flag,
    option_int,
    order_lines,
    order_number,
    single_profile,
    to_json,
)
from games.engines.text import Text, _, join, ngettext

SELECTIONS = ("strict_queue", "two_candidate")
RIGHTMOST = "rightmost"
CLOSEST = "closest"
TAKES = (RIGHTMOST, CLOSEST)
# The candidates in the players' words (the order words stay "rightmost" and "closest").
TAKE_WORDS = {RIGHTMOST: _("rightmost"), CLOSEST: _("closest")}
DEPTH_SIDES = 20
ORIGIN = (0, 0)
NEIGHBOURS = ((1, 0), (-1, 0), (0, 1), (0, -1))
HINT_CELLS = 6

Cell = tuple[int, int]

# --- options -------------------------------------------------------------------------------


@dataclass(frozen=True)
class DropShyOptions:
    """The options table of rules/drop-shy.md section 2, plus the "play again" handicap.

    ``previous_winner`` and ``previous_loser`` name the winner and loser of the game this one
    follows (section 4.1): the instigator is reported as rolled for the previous winner, and
    the previous loser must sit in seat 1, so they place first. ``follow_up`` builds both.
    """

    dice_per_player: int = 10
    selection: str = "strict_queue"
    auto_single: bool = False
    turn_cap: int = 500
    previous_winner: str | None = None
    previous_loser: str | None = None

    @property
    def two_candidate(self) -> bool:
        return self.selection == "two_candidate"


_OPTION_KEYS = (
    "dice_per_player",
    "selection",
    "auto_single",
    "turn_cap",
    "previous_winner",
    "previous_loser",
)


def _name_or_none(key: str, value: JSON) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise OptionsError(
            _(
                "option %(key)s must be a player's name or null, not %(value)s",
                key=key,
                value=repr(value),
            )
        )
    return value.strip()


def parse_options(data: Mapping[str, JSON]) -> DropShyOptions:
    """Options from a dict: defaults filled in; OptionsError on unknown keys or values."""
    check_option_keys("Drop-Shy", data, _OPTION_KEYS)
    defaults = DropShyOptions()
    selection = data.get("selection", defaults.selection)
    if not isinstance(selection, str) or selection not in SELECTIONS:
        raise OptionsError(
            _(
                "option selection must be one of %(choices)s, not %(value)s",
                choices=", ".join(SELECTIONS),
                value=repr(selection),
            )
        )
    auto_single = option_flag("auto_single", data.get("auto_single", defaults.auto_single))
    winner = _name_or_none("previous_winner", data.get("previous_winner"))
    loser = _name_or_none("previous_loser", data.get("previous_loser"))
    if winner is not None and loser is not None and winner.lower() == loser.lower():
        raise OptionsError(
            _("option previous_winner and previous_loser are both %(name)s", name=repr(winner))
        )
    return DropShyOptions(
        dice_per_player=option_int(
            "dice_per_player", data.get("dice_per_player", defaults.dice_per_player), 1, 30
        ),
        selection=selection,
        auto_single=auto_single,
        turn_cap=option_int("turn_cap", data.get("turn_cap", defaults.turn_cap), 50, 5000),
        previous_winner=winner,
        previous_loser=loser,
    )


SETTINGS = single_profile(
    "Drop-Shy",
    _("Place your dice on a shared table next to a die one pip away; the first to place "
      "them all wins. 2 to 20 players."),
    Option("dice_per_player", _("Dice per player"), _("Dice each player starts with."),
           low=1, high=30),
    Option("selection", _("Which die to play"), kind="choice",
           choices=(("strict_queue", _("always the front of your line")),
                    ("two_candidate", _("the rightmost or the closest die, your choice")))),
    Option("auto_single", _("Place forced dice automatically"), _("When the die to play has "
           "exactly one legal cell, it is placed without asking."), kind="flag"),
    Option("turn_cap", _("Turn cap"), _("Safety cap on the number of turns."),
           low=50, high=5000),
    Option("previous_winner", _("Previous game's winner"), _("Optional, for a rematch: the "
           "instigator is rolled for this player."), kind="name"),
    Option("previous_loser", _("Previous game's loser"), _("Optional, for a rematch: this "
           "player sits in seat 1 and places first."), kind="name"),
)  # fmt: skip


# --- orders --------------------------------------------------------------------------------


@dataclass(frozen=True)
class DropShyOrder:
    """``take rightmost|closest`` (two-candidate mode) and/or ``place x y``.

    Without ``cell`` the chosen die is failed on purpose (two-candidate mode, a die with no
    legal cell)."""

    take: str | None = None
    cell: tuple[int, int] | None = None


def cell_text(cell: Cell) -> str:
    return f"({cell[0]},{cell[1]})"


def order_text(order: DropShyOrder) -> str:
    """The canonical text: ``take ...`` and ``place x y`` on lines of their own."""
    lines: list[str] = []
    if order.take is not None:
        lines.append(f"take {order.take}")
    if order.cell is not None:
        lines.append(f"place {order.cell[0]} {order.cell[1]}")
    return "\n".join(lines)


def _coordinate(word: str) -> int | None:
    """``word`` as a whole number with an optional sign (``-1``, ``+2``), else None."""
    digits = word[1:] if word[:1] in ("+", "-") else word
    number = order_number(digits)
    if number is None:
        return None
    return -number if word[:1] == "-" else number


def parse_order(text: str, options: DropShyOptions) -> DropShyOrder:
    """The order in ``text`` (section 7), or OrderError naming the line and the reason."""
    take: str | None = None
    cell: Cell | None = None
    lines = order_lines(text)
    if not lines:
        raise OrderError(_("the order is empty: write place x y, e.g. place 1 0"))
    for line in lines:
        words = line.replace("(", " ").replace(")", " ").split()
        where = f'"{line}"'
        while words:
            word = words.pop(0)
            if word == "take":
                if not options.two_candidate:
                    raise OrderError(
                        _(
                            "%(where)s: take is only used in two-candidate mode; this game "
                            "plays the front die of your line, so write place x y",
                            where=where,
                        )
                    )
                which = words.pop(0) if words else ""
                if which not in TAKES:
                    raise OrderError(
                        _("%(where)s: write take rightmost or take closest", where=where)
                    )
                if take is not None:
                    raise OrderError(_("%(where)s: only one take per order", where=where))
                take = which
            elif word == "place":
                x = _coordinate(words[0]) if words else None
                y = _coordinate(words[1]) if len(words) > 1 else None
                if x is None or y is None:
                    raise OrderError(
                        _(
                            "%(where)s: place needs two whole numbers x and y, e.g. place -1 0",
                            where=where,
                        )
                    )
                del words[:2]
                if cell is not None:
                    raise OrderError(_("%(where)s: only one place per order", where=where))
                cell = (x, y)
            elif options.two_candidate:
                raise OrderError(
                    _(
                        "%(where)s: %(word)s is not understood; write place x y "
                        "(and take rightmost or take closest)",
                        where=where,
                        word=repr(word),
                    )
                )
            else:
                raise OrderError(
                    _(
                        "%(where)s: %(word)s is not understood; write place x y",
                        where=where,
                        word=repr(word),
                    )
                )
    return DropShyOrder(take, cell)


# --- state ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Die:
    """A die of a line. ``depth`` (d20, two-candidate mode only) is its distance from the
    table edge: the lowest depth is the closest die."""

    face: int
    depth: int | None = None

    def text(self) -> str:
        return str(self.face) if self.depth is None else f"{self.face}/{self.depth}"


@dataclass(frozen=True)
class Placed:
    """A die on the board; ``seat`` is None for the instigator."""

    x: int
    y: int
    face: int
    seat: int | None = None

    @property
    def cell(self) -> Cell:
        return (self.x, self.y)


@dataclass(frozen=True)
class Turn:
    """One turn as played: the die tried, the candidate taken (two-candidate mode, when the
    player chose), the cell it went to (None: it failed) and the replacement drawn for a
    failed die. ``how`` is "order", "auto" (no decision was needed) or "default" (NMR)."""

    number: int
    seat: int
    die: Die
    take: str | None
    cell: tuple[int, int] | None
    reroll: Die | None
    how: str


@dataclass(frozen=True)
class DropShyState:
    """``lines[seat]`` is that seat's line, front first. ``current`` is the seat on turn
    (None once the game is over); ``turns`` counts the turns played. ``finishers`` holds the
    seats that placed every die, in the order they did; ``capped`` marks a game ended by
    ``turn_cap``."""

    options: DropShyOptions
    players: tuple[str, ...]
    board: tuple[Placed, ...]
    lines: tuple[tuple[Die, ...], ...]
    current: int | None
    turns: int = 0
    finishers: tuple[int, ...] = ()
    capped: bool = False
    history: tuple[Turn, ...] = ()

    @property
    def finished(self) -> bool:
        return self.current is None

    @property
    def instigator(self) -> int:
        return self.board[0].face


# --- the grid ------------------------------------------------------------------------------


def cells(board: Iterable[Placed]) -> dict[Cell, int]:
    """The board as cell -> face."""
    return {placed.cell: placed.face for placed in board}


def _neighbours(cell: Cell) -> list[Cell]:
    return [(cell[0] + dx, cell[1] + dy) for dx, dy in NEIGHBOURS]


def scan_key(cell: Cell) -> tuple[int, int]:
    """Scan order: highest y first, then lowest x (the NMR default's order)."""
    return (-cell[1], cell[0])


def cell_problem(grid: Mapping[Cell, int], face: int, cell: Cell) -> Text | None:
    """Why a die showing ``face`` may not go on ``cell`` (section 3), or None if it may."""
    where = cell_text(cell)
    if cell in grid:
        return _("%(cell)s is taken", cell=where)
    touching = [n for n in _neighbours(cell) if n in grid]
    if not touching:
        xs = [x for x, __ in grid]
        ys = [y for __, y in grid]
        x, y = cell
        if min(xs) - 1 <= x <= max(xs) + 1 and min(ys) - 1 <= y <= max(ys) + 1:
            return _("%(cell)s is not next to any die (corner contact does not count)", cell=where)
        # Far off: say where the dice are, which bounds every coordinate a player can mean.
        return _(
            "%(cell)s is not next to any die (the dice lie within x %(min_x)d to %(max_x)d "
            "and y %(min_y)d to %(max_y)d)",
            cell=where,
            min_x=min(xs),
            max_x=max(xs),
            min_y=min(ys),
            max_y=max(ys),
        )
    wrong = [n for n in sorted(touching, key=scan_key) if abs(grid[n] - face) != 1]
    if wrong:
        what = join(
            [_("the %(face)d at %(cell)s", face=grid[n], cell=cell_text(n)) for n in wrong],
            _(" and "),
        )
        return _(
            "%(cell)s is not legal for your %(face)d: it touches %(touching)s",
            cell=where,
            face=face,
            touching=what,
        )
    return None


def legal_cells(grid: Mapping[Cell, int], face: int) -> list[Cell]:
    """Every cell a die showing ``face`` may go on, in scan order."""
    empty = {n for cell in grid for n in _neighbours(cell) if n not in grid}
    fits = [cell for cell in empty if cell_problem(grid, face, cell) is None]
    return sorted(fits, key=scan_key)


def candidates(line: Sequence[Die], options: DropShyOptions) -> list[tuple[str, int]]:
    """The dice the player may try, as (name, index in the line): the front die, and in
    two-candidate mode also the closest die (lowest depth, nearer the front on equal depth)
    when that is another die."""
    if not line:
        return []
    if not options.two_candidate:
        return [(RIGHTMOST, 0)]
    closest = min(range(len(line)), key=lambda index: (line[index].depth or 0, index))
    if closest == 0:
        return [(RIGHTMOST, 0)]
    return [(RIGHTMOST, 0), (CLOSEST, closest)]


def _join_cells(found: Sequence[Cell], limit: int | None = None) -> str:
    shown = found if limit is None else found[:limit]
    text = ", ".join(cell_text(cell) for cell in shown)
    if len(shown) < len(found):
        return _("%(cells)s and %(count)d more", cells=text, count=len(found) - len(shown))
    return text


def _take_choices(found: Sequence[tuple[str, int, Sequence[Cell]]], line: Sequence[Die]) -> Text:
    """ "take rightmost (4) or take closest (2)": the orders that choose a candidate."""
    return join([f"take {name} ({line[index].face})" for name, index, __ in found], _(" or "))


def bounds(state: DropShyState, margin: int = 1) -> dict[str, int]:
    """The bounding box of the board, widened by ``margin`` cells on every side (a margin of
    1 holds every legal cell)."""
    xs = [placed.x for placed in state.board]
    ys = [placed.y for placed in state.board]
    return {
        "min_x": min(xs) - margin,
        "max_x": max(xs) + margin,
        "min_y": min(ys) - margin,
        "max_y": max(ys) + margin,
    }


def legal_by_candidate(state: DropShyState) -> list[tuple[str, int, list[Cell]]]:
    """For the seat on turn: each candidate die as (name, index in the line, legal cells)."""
    if state.current is None:
        return []
    grid = cells(state.board)
    line = state.lines[state.current]
    return [
        (name, index, legal_cells(grid, line[index].face))
        for name, index in candidates(line, state.options)
    ]


def grid_rows(state: DropShyState, margin: int = 1) -> list[dict[str, JSON]]:
    """The board as rows for a monospace grid or an HTML table, top row (highest y) first.

    Each cell has its coordinates, its face (None if empty), whether it holds the
    instigator, the candidates it is legal for, and ``mark``: the face, "+" where the die in
    play (or both candidates) may go, "r" or "c" where only the rightmost or the closest
    candidate may go, "." elsewhere."""
    box = bounds(state, margin)
    grid = cells(state.board)
    owners = {(placed.x, placed.y): placed.seat for placed in state.board}
    legal_for: dict[Cell, list[str]] = {}
    options = legal_by_candidate(state)
    for name, __, found in options:
        for cell in found:
            legal_for.setdefault(cell, []).append(name)
    rows: list[dict[str, JSON]] = []
    for y in range(box["max_y"], box["min_y"] - 1, -1):
        row: list[JSON] = []
        for x in range(box["min_x"], box["max_x"] + 1):
            face = grid.get((x, y))
            names = legal_for.get((x, y), [])
            if face is not None:
                mark = str(face)
            elif not names:
                mark = "."
            elif len(names) == len(options):
                mark = "+"
            else:
                mark = names[0][0]
            row.append(
                {
                    "x": x,
                    "y": y,
                    "face": face,
                    "seat": owners.get((x, y)),
                    "instigator": (x, y) == ORIGIN,
                    "legal_for": names,
                    "mark": mark,
                }
            )
        rows.append({"y": y, "cells": row})
    return rows


# --- standings -----------------------------------------------------------------------------


def places(state: DropShyState) -> dict[int, int]:
    """seat -> place once the game is over (section 5): the winner 1, the loser P, everyone
    else 2; after the turn cap the three groups are decided by the dice left."""
    seats = range(len(state.players))
    last = len(state.players)
    holders = [seat for seat in seats if state.lines[seat]]
    if not state.capped:
        return {
            seat: 1 if seat in state.finishers[:1] else last if seat in holders else 2
            for seat in seats
        }
    if state.finishers:
        first = {state.finishers[0]}
    else:
        fewest = min(len(state.lines[seat]) for seat in holders)
        first = {seat for seat in holders if len(state.lines[seat]) == fewest}
    others = [seat for seat in holders if seat not in first]
    most = max((len(state.lines[seat]) for seat in others), default=0)
    bottom = {seat for seat in others if len(state.lines[seat]) == most}
    return {seat: 1 if seat in first else last if seat in bottom else 2 for seat in seats}


def follow_up(state: DropShyState) -> tuple[list[str], dict[str, JSON]]:
    """The players (seat order) and options of the next game with the same players
    (section 4.1, "play again"): the previous seat order rotated so that the loser is seat 1,
    the same options, and the previous winner and loser named.

    After the turn cap the winner is the first player at place 1 and the loser the last
    player at the bottom place, in seat order."""
    if not state.finished:
        raise GameError(_("the game is not over yet; a follow-up game starts after it"))
    standing = sorted(places(state).items(), key=lambda item: (item[1], item[0]))
    winner, loser = standing[0][0], standing[-1][0]
    players = list(state.players[loser:] + state.players[:loser])
    options = to_json(state.options)
    options["previous_winner"] = state.players[winner]
    options["previous_loser"] = state.players[loser]
    return players, options


# --- what a turn says ----------------------------------------------------------------------


def _placed_text(name: str, face: int, take: str | None, cell: Cell, how: str) -> Text:
    """A die placed: by an order, by the default, or by itself (``how`` "auto": it had one
    legal cell); ``take`` names the candidate the player chose, if they chose."""
    where = cell_text(cell)
    if how == "auto" and take:
        return _(
            "%(name)s takes the %(which)s die, a %(face)d, has one legal cell and goes to %(cell)s",
            name=name,
            which=TAKE_WORDS[take],
            face=face,
            cell=where,
        )
    if how == "auto":
        return _(
            "%(name)s's %(face)d has one legal cell and goes to %(cell)s",
            name=name,
            face=face,
            cell=where,
        )
    if take:
        return _(
            "%(name)s takes the %(which)s die, a %(face)d, and places it at %(cell)s",
            name=name,
            which=TAKE_WORDS[take],
            face=face,
            cell=where,
        )
    return _("%(name)s places the %(face)d at %(cell)s", name=name, face=face, cell=where)


def _failed_text(name: str, face: int, take: str | None, reroll: Die) -> Text:
    """A die that fits nowhere, rerolled to the back of the line as ``reroll``."""
    if take:
        return _(
            "%(name)s takes the %(which)s die, a %(face)d, which cannot be placed: it is "
            "rerolled and goes to the back of %(name)s's line as a %(reroll)s",
            name=name,
            which=TAKE_WORDS[take],
            face=face,
            reroll=reroll.text(),
        )
    return _(
        "%(name)s's %(face)d cannot be placed: it is rerolled and goes to the back of "
        "%(name)s's line as a %(reroll)s",
        name=name,
        face=face,
        reroll=reroll.text(),
    )


# --- the engine ----------------------------------------------------------------------------


class DropShyEngine(JsonCodec):
    key = "drop-shy"
    title = "Drop-Shy"
    min_players = 2
    max_players = 20
    # One player places at a time: most steps owe nothing of most seats, so a seat's
    # reports come by default only when it owes an order.
    sequential = True
    step_word = "postal turn"
    # No private event of this game speaks to its seat ("you"): everyone reads them alike.
    onlooker_words: Mapping[str, str] = {}

    State = DropShyState
    Order = DropShyOrder

    def options(self, data: Mapping[str, JSON]) -> DropShyOptions:
        return parse_options(data)

    def start(
        self, options: DropShyOptions, players: Sequence[str], dice: Dice
    ) -> tuple[DropShyState, list[Event]]:
        check_players(self.title, self.min_players, self.max_players, len(players))
        options = self._named(options, players)
        instigator = dice.draw(6)
        lines = tuple(
            tuple(self._roll(options, dice) for __ in range(options.dice_per_player))
            for __ in players
        )
        state = DropShyState(
            options=options,
            players=tuple(players),
            board=(Placed(0, 0, instigator),),
            lines=lines,
            current=0,
        )
        rolled = _("the moderator")
        if options.previous_winner is not None:
            rolled = _("%(name)s, the previous winner", name=options.previous_winner)
        events = [
            Event(
                _(
                    "the instigator is a %(face)d at (0,0), rolled for %(whom)s",
                    face=instigator,
                    whom=rolled,
                )
            )
        ]
        for seat, name in enumerate(players):
            events.append(
                Event(
                    _(
                        "%(name)s's line, front first: %(dice)s",
                        name=name,
                        dice=self._line_text(state, seat),
                    )
                )
            )
        if options.previous_loser is not None:
            events.append(Event(_("%(name)s, the previous loser, places first", name=players[0])))
        return self._advance(state, dice, events)

    @staticmethod
    def _named(options: DropShyOptions, players: Sequence[str]) -> DropShyOptions:
        """The previous winner and loser must be players, spelled as in the seat list; the
        previous loser must be seat 1."""
        seats = {name.lower(): seat for seat, name in enumerate(players)}

        def player(key: str, name: str | None) -> str | None:
            if name is None:
                return None
            if name.lower() not in seats:
                raise OptionsError(
                    _(
                        "option %(key)s: %(name)s is not a player of this game",
                        key=key,
                        name=repr(name),
                    )
                )
            return players[seats[name.lower()]]

        winner = player("previous_winner", options.previous_winner)
        loser = player("previous_loser", options.previous_loser)
        if loser is not None and seats[loser.lower()] != 0:
            raise OptionsError(
                _(
                    "option previous_loser: %(name)s places first, so %(name)s must be seat 1, "
                    "not seat %(seat)d",
                    name=loser,
                    seat=seats[loser.lower()] + 1,
                )
            )
        return replace(options, previous_winner=winner, previous_loser=loser)

    @staticmethod
    def _roll(options: DropShyOptions, dice: Dice) -> Die:
        face = dice.draw(6)
        return Die(face, dice.draw(DEPTH_SIDES) if options.two_candidate else None)

    def _line_text(self, state: DropShyState, seat: int) -> str:
        line = state.lines[seat]
        return " ".join(die.text() for die in line) if line else _("empty")

    # --- orders ----------------------------------------------------------------------------

    def prompts(self, state: DropShyState) -> list[Prompt]:
        if state.current is None:
            return []
        number = state.turns + 1
        found = legal_by_candidate(state)
        line = state.lines[state.current]
        if len(found) == 1:
            __, index, legal = found[0]
            hint = ngettext(
                "turn %(turn)d: place your %(face)d; legal cell: %(cells)s",
                "turn %(turn)d: place your %(face)d; legal cells: %(cells)s",
                len(legal),
                turn=number,
                face=line[index].face,
                cells=_join_cells(legal, HINT_CELLS),
            )
            return [Prompt(state.current, _("place your die"), hint)]
        hint = _(
            "turn %(turn)d: %(choices)s, then place x y if it fits",
            turn=number,
            choices=_take_choices(found, line),
        )
        return [Prompt(state.current, _("choose and place"), hint)]

    def _expect_order(self, state: DropShyState, seat: int) -> None:
        if not 0 <= seat < len(state.players):
            raise OrderError(_("there is no seat %(seat)d in this game", seat=seat))
        if state.current is None:
            raise OrderError(_("the game is over; no order is expected from you"))
        if seat != state.current:
            if not state.lines[seat]:
                raise OrderError(_("you have placed every die; no order is expected from you"))
            raise OrderError(
                _("not your turn: waiting for %(name)s", name=state.players[state.current])
            )

    def parse(self, state: DropShyState, seat: int, text: str) -> DropShyOrder:
        self._expect_order(state, seat)
        return parse_order(text, state.options)

    def _check(self, state: DropShyState, seat: int, order: DropShyOrder) -> tuple[str, int]:
        """The candidate ``order`` plays, as (name, index in the line); OrderError if the
        order is illegal now (sections 4.3 and 7)."""
        self._expect_order(state, seat)
        line = state.lines[seat]
        found = legal_by_candidate(state)
        if order.take is not None and not state.options.two_candidate:
            raise OrderError(_("take: only used in two-candidate mode; write place x y"))
        if order.take is None and len(found) > 1:
            raise OrderError(
                _("choose your die first: %(choices)s", choices=_take_choices(found, line))
            )
        name, index, legal = found[0]
        if order.take is not None and len(found) > 1:
            name, index, legal = found[TAKES.index(order.take)]
        face = line[index].face
        if order.cell is None:
            if legal:
                raise OrderError(
                    _(
                        "your %(face)d can be placed; add place x y (legal: %(cells)s)",
                        face=face,
                        cells=_join_cells(legal),
                    )
                )
            return name, index
        if not legal:
            raise OrderError(
                _(
                    "your %(face)d cannot be placed; send take %(which)s alone to fail it",
                    face=face,
                    which=order.take or name,
                )
            )
        problem = cell_problem(cells(state.board), face, order.cell)
        if problem is not None:
            raise OrderError(problem)
        return name, index

    def submit(
        self, state: DropShyState, seat: int, order: DropShyOrder, dice: Dice
    ) -> tuple[DropShyState, list[Event]]:
        __, index = self._check(state, seat, order)
        state, events = self._play(state, index, order.take, order.cell, "order", dice)
        return self._advance(state, dice, events)

    def default(self, state: DropShyState, seat: int) -> DropShyOrder:
        """NMR (section 4.3): the rightmost candidate on its first legal cell in scan order;
        if it has no legal cell it fails."""
        self._expect_order(state, seat)
        found = legal_by_candidate(state)
        legal = found[0][2]
        take = RIGHTMOST if len(found) > 1 else None
        return DropShyOrder(take, legal[0] if legal else None)

    def canonical(self, state: DropShyState, seat: int, order: DropShyOrder) -> str:
        return order_text(order)

    def resolve(self, state: DropShyState, dice: Dice) -> tuple[DropShyState, list[Event]]:
        if state.current is None:
            raise GameError(_("the game is over; there is nothing to resolve"))
        seat = state.current
        order = self.default(state, seat)
        __, index = self._check(state, seat, order)
        events = [
            Event(
                _(
                    "%(name)s sent no order: the no-moves default is played",
                    name=state.players[seat],
                )
            )
        ]
        state, played = self._play(state, index, order.take, order.cell, "default", dice)
        state, more = self._advance(state, dice, played)
        return state, events + more

    # --- play ------------------------------------------------------------------------------

    def _play(
        self,
        state: DropShyState,
        index: int,
        take: str | None,
        cell: Cell | None,
        how: str,
        dice: Dice,
    ) -> tuple[DropShyState, list[Event]]:
        """One turn of the seat on turn: die ``index`` of its line goes on ``cell``, or fails
        (``cell`` None) and is rerolled to the back of the line. Then the end checks and the
        next seat (section 4.3)."""
        seat = state.current
        assert seat is not None
        number = state.turns + 1
        name = state.players[seat]
        line = state.lines[seat]
        die = line[index]
        rest = line[:index] + line[index + 1 :]
        board = state.board
        reroll: Die | None = None
        if cell is not None:
            board = (*board, Placed(cell[0], cell[1], die.face, seat))
            text = _placed_text(name, die.face, take, cell, how)
        else:
            reroll = self._roll(state.options, dice)
            rest = (*rest, reroll)
            text = _failed_text(name, die.face, take, reroll)
        lines = list(state.lines)
        lines[seat] = rest
        turn = Turn(number, seat, die, take, cell, reroll, how)
        state = replace(
            state,
            board=board,
            lines=tuple(lines),
            turns=number,
            history=(*state.history, turn),
        )
        events = [Event(_("turn %(turn)d: %(text)s", turn=number, text=text))]
        if not rest:
            state = replace(state, finishers=(*state.finishers, seat))
            if len(state.finishers) == 1:
                events.append(Event(_("%(name)s has placed every die and wins", name=name)))
            else:
                events.append(
                    Event(_("%(name)s has placed every die: neither glory nor shame", name=name))
                )
        return self._next(state, events)

    def _next(self, state: DropShyState, events: list[Event]) -> tuple[DropShyState, list[Event]]:
        """The end checks after a turn (section 5), else the next seat with dice."""
        seat = state.current
        assert seat is not None
        holders = [s for s, line in enumerate(state.lines) if line]
        if len(holders) <= 1:
            state = replace(state, current=None)
            events.append(Event(_("the game is over: %(places)s", places=self._result_text(state))))
            return state, events
        if state.turns >= state.options.turn_cap:
            state = replace(state, current=None, capped=True)
            events.append(
                Event(
                    _(
                        "turn %(turn)d is the turn cap: the game is over: %(places)s",
                        turn=state.turns,
                        places=self._result_text(state),
                    )
                )
            )
            return state, events
        count = len(state.players)
        following = next(
            (seat + step) % count
            for step in range(1, count + 1)
            if state.lines[(seat + step) % count]
        )
        return replace(state, current=following), events

    def _result_text(self, state: DropShyState) -> Text:
        ranked = sorted(places(state).items(), key=lambda item: (item[1], item[0]))
        parts: list[str] = []
        for seat, place in ranked:
            name, left = state.players[seat], len(state.lines[seat])
            if left:
                parts.append(
                    ngettext(
                        "%(place)d. %(name)s, %(count)d die left",
                        "%(place)d. %(name)s, %(count)d dice left",
                        left,
                        place=place,
                        name=name,
                    )
                )
            else:
                parts.append(f"{place}. {name}")
        return join(parts, "; ")

    def _advance(
        self, state: DropShyState, dice: Dice, events: list[Event]
    ) -> tuple[DropShyState, list[Event]]:
        """Play every turn that needs no order: a lone candidate with no legal cell fails; with
        ``auto_single`` a lone candidate with one legal cell is placed."""
        while state.current is not None:
            found = legal_by_candidate(state)
            if len(found) > 1:
                break
            __, index, legal = found[0]
            if legal and not (state.options.auto_single and len(legal) == 1):
                break
            cell = legal[0] if legal else None
            state, played = self._play(state, index, None, cell, "auto", dice)
            events.extend(played)
        return state, events

    # --- what players see ------------------------------------------------------------------

    def _player_view(self, state: DropShyState, seat: int, place: int | None) -> dict[str, JSON]:
        line = state.lines[seat]
        result: str | None = None
        if place is not None:
            result = {1: "winner", len(state.players): "loser"}.get(place, "neither")
        elif seat in state.finishers:
            result = "winner" if state.finishers[0] == seat else "neither"
        return {
            "seat": seat,
            "name": state.players[seat],
            "line": [die.face for die in line],
            "line_text": " ".join(die.text() for die in line),
            "depths": [die.depth for die in line] if state.options.two_candidate else None,
            "dice_left": len(line),
            "placed": sum(1 for placed in state.board if placed.seat == seat),
            "finished": seat in state.finishers,
            "finish_order": state.finishers.index(seat) + 1 if seat in state.finishers else None,
            "on_turn": seat == state.current,
            "result": result,
            "place": place,
        }

    def view(self, state: DropShyState, seat: int | None) -> dict[str, JSON]:
        final = places(state) if state.finished else {}
        found = legal_by_candidate(state)
        current = state.current
        in_play: list[JSON] = []
        for name, index, legal in found:
            assert current is not None
            die = state.lines[current][index]
            in_play.append(
                {
                    "which": name,
                    "index": index,
                    "face": die.face,
                    "depth": die.depth,
                    "legal": [list(cell) for cell in legal],
                }
            )
        prompts = self.prompts(state)
        data: dict[str, JSON] = {
            "game": self.key,
            "status": "finished" if state.finished else "running",
            "options": to_json(state.options),
            "turns_played": state.turns,
            "turn": state.turns + 1 if current is not None else None,
            "turn_cap": state.options.turn_cap,
            "capped": state.capped,
            "current": current,
            "current_player": state.players[current] if current is not None else None,
            "owed": {"kind": prompts[0].kind, "hint": prompts[0].hint} if prompts else None,
            "instigator": {
                "face": state.instigator,
                "rolled_for": state.options.previous_winner,
            },
            "players": [
                self._player_view(state, s, final.get(s)) for s in range(len(state.players))
            ],
            "candidates": in_play,
            "legal": [list(cell) for cell in found[0][2]] if len(found) == 1 else None,
            "board": {
                "cells": [
                    {"x": p.x, "y": p.y, "face": p.face, "seat": p.seat} for p in state.board
                ],
                "bounds": bounds(state, 0),
            },
            "grid": {
                "xs": list(range(bounds(state)["min_x"], bounds(state)["max_x"] + 1)),
                "rows": grid_rows(state),
            },
            "history": [self._turn_view(state, turn) for turn in state.history],
        }
        if seat is not None:
            data["you"] = {
                "seat": seat,
                "name": state.players[seat],
                "on_turn": seat == current,
                "dice_left": len(state.lines[seat]),
            }
        standings = self.standings(state)
        if standings is not None:
            data["standings"] = [
                {"player": state.players[s.seat], "place": s.place, "score": s.score}
                for s in standings
            ]
        return data

    @staticmethod
    def _turn_view(state: DropShyState, turn: Turn) -> dict[str, JSON]:
        return {
            "turn": turn.number,
            "seat": turn.seat,
            "player": state.players[turn.seat],
            "face": turn.die.face,
            "depth": turn.die.depth,
            "take": turn.take,
            "cell": list(turn.cell) if turn.cell is not None else None,
            "reroll": turn.reroll.face if turn.reroll is not None else None,
            "reroll_depth": turn.reroll.depth if turn.reroll is not None else None,
            "how": turn.how,
        }

    def candidates(self, state: DropShyState, seat: int) -> list[tuple[str, str]]:
        """The orders a web form may offer ``seat`` now, as (text, label): a cell for each
        candidate die, or failing a die that fits nowhere (the form keeps those ``submit``
        accepts)."""
        if state.current != seat:
            return []
        line = state.lines[seat]
        named = state.options.two_candidate and len(candidates(line, state.options)) > 1
        found: list[tuple[str, str]] = []
        for name, index, legal in legal_by_candidate(state):
            face = line[index].face
            which = TAKE_WORDS[name]
            take = f"take {name} " if named else ""
            if not legal:
                label = _("fail your %(face)d (%(which)s): it fits nowhere", face=face, which=which)
                found.append((f"take {name}", label))
            for x, y in legal:
                if named:
                    label = _(
                        "your %(face)d (%(which)s) to (%(x)d,%(y)d)",
                        face=face,
                        which=which,
                        x=x,
                        y=y,
                    )
                else:
                    label = _("your %(face)d to (%(x)d,%(y)d)", face=face, x=x, y=y)
                found.append((f"{take}place {x} {y}", label))
        return found

    def follow_up(self, state: DropShyState) -> tuple[list[str], dict[str, JSON]]:
        """The next game with the same players ("play again"): ``follow_up`` above."""
        return follow_up(state)

    def standings(self, state: DropShyState) -> list[Standing] | None:
        if not state.finished:
            return None
        ranked = sorted(places(state).items(), key=lambda item: (item[1], item[0]))
        return [Standing(seat, place, None) for seat, place in ranked]
