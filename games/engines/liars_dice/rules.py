"""Liar's Dice by post: rules/liars-dice.md.

One bidding core with three profiles. ``classic`` is the pub game (Perudo: wild ones,
palifico, the spot call). ``genius_dm`` is the two-player Death Match of "The Genius": the
loser of a round gains a die, with optional anomalies (Cheat, Double-Face, Fresh Start,
Mulligan, Oracle, Revelation, Summation) and a round reserve for missed deadlines.
``genius_team`` is the four-player team game where nobody sees their own dice, only the hand
of the player behind them, with the optional reveal/reroll/learn action and the sum phase.

Bids, challenges, spot calls, accusations and the team action take effect at once in
``submit`` (the next player must see them); the Mulligan and Cheat steps are sealed and
simultaneous and are applied by ``resolve``. Every prompt names the round and the bid number,
so an order that moved the game on always changes the prompts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
    Profile,
    Prompt,
    Settings,
    Standing,
    check_option_keys,
    counted,
    option_flag,
    option_int,
    option_one_of,
    order_lines,
    order_number,
    to_json,
)

CLASSIC = "classic"
DEATH_MATCH = "genius_dm"
TEAM = "genius_team"
PROFILES = (CLASSIC, DEATH_MATCH, TEAM)
SEATINGS = ("alternate", "adjacent")
PLAYERS = {CLASSIC: (2, 6), DEATH_MATCH: (2, 2), TEAM: (4, 4)}
FACES = range(1, 7)
MULLIGAN_MOST = 5
CHEATS_PER_MATCH = 2
REVELATION_KEEPS = 3
SUM_LOW, SUM_HIGH = 2, 12
# The highest quantity a bid may name. Bids above the dice in play stay legal (rules L-2:
# the text's "100 1's"), so the cap is not the dice in play; it only keeps a typo of many
# digits out of the bids, the reports and every raise worked out from it.
MAX_QUANTITY = 999

BIDDING = "bidding"
MULLIGAN = "mulligan"
CHEAT = "cheat"
OVER = "over"

# --- options -------------------------------------------------------------------------------


@dataclass(frozen=True)
class LiarsDiceOptions:
    """The options table of rules/liars-dice.md section 2.

    Options of another profile are validated but ignored: they keep their defaults here, so
    the rules code can read them without checking the profile.
    """

    profile: str = CLASSIC
    dice_per_player: int = 5
    wild_ones: bool = True
    palifico: bool = True
    calza: bool = False
    max_dice: int = 10
    reserve: bool = True
    cheat: bool = False
    double_face: bool = False
    fresh_start: bool = False
    mulligan: bool = False
    oracle: bool = False
    revelation: bool = False
    summation: bool = False
    team_seating: str = "alternate"

    @property
    def start_dice(self) -> int:
        return 1 if self.fresh_start else self.dice_per_player


_BOOLEANS: dict[str, tuple[str, ...]] = {
    "wild_ones": (CLASSIC,),
    "palifico": (CLASSIC,),
    "calza": (CLASSIC,),
    "reserve": (DEATH_MATCH,),
    "cheat": (DEATH_MATCH,),
    "double_face": (DEATH_MATCH,),
    "fresh_start": (DEATH_MATCH,),
    "mulligan": (DEATH_MATCH,),
    "oracle": (DEATH_MATCH,),
    "revelation": (DEATH_MATCH,),
    "summation": (DEATH_MATCH,),
}
_GENIUS_OFF = ("wild_ones", "palifico", "calza")
_OPTION_KEYS = ("profile", "dice_per_player", "max_dice", "team_seating", *_BOOLEANS)


def parse_options(data: Mapping[str, JSON]) -> LiarsDiceOptions:
    """Options from a dict: defaults filled in; OptionsError on unknown keys or values."""
    check_option_keys("Liar's Dice", data, _OPTION_KEYS)
    profile = option_one_of("profile", data.get("profile", CLASSIC), PROFILES)
    fields: dict[str, JSON] = {"profile": profile}
    default_dice = 4 if profile == DEATH_MATCH else 5
    dice_per_player = option_int(
        "dice_per_player", data.get("dice_per_player", default_dice), 1, 10
    )
    fields["dice_per_player"] = dice_per_player
    max_dice = option_int("max_dice", data.get("max_dice", 10), 2, 20)
    seating = option_one_of("team_seating", data.get("team_seating", "alternate"), SEATINGS)
    for key, profiles in _BOOLEANS.items():
        value = option_flag(key, data.get(key, getattr(LiarsDiceOptions, key)))
        if profile in profiles:
            fields[key] = value
    if profile != CLASSIC:
        fields.update(dict.fromkeys(_GENIUS_OFF, False))
    if profile == DEATH_MATCH:
        # With Fresh Start dice_per_player is ignored, so only the one starting die counts.
        if dice_per_player > max_dice and not fields["fresh_start"]:
            raise OptionsError(
                f"option dice_per_player ({dice_per_player}) must not be above "
                f"max_dice ({max_dice})"
            )
        fields["max_dice"] = max_dice
    if profile == TEAM:
        fields["team_seating"] = seating
    return LiarsDiceOptions(**fields)


SETTINGS = Settings(
    profile_key="profile",
    profiles=(
        Profile(CLASSIC, "Liar's Dice: classic", "The pub game (Perudo): bid on all the dice "
                "under the cups, call liar, wild ones and palifico. 2 to 6 players."),
        Profile(DEATH_MATCH, "Liar's Dice: Death Match", "The Genius's duel: the loser of a "
                "round gains a die, with optional anomalies. 2 players."),
        Profile(TEAM, "Liar's Dice: team", "Two teams of two; nobody sees their own dice, only "
                "the hand of the player behind them. 4 players."),
    ),
    options=(
        Option("dice_per_player", "Dice per player", "Dice each player starts with.",
               low=1, high=10),
        Option("wild_ones", "Wild ones", "Ones count as any face.", kind="flag",
               profiles=(CLASSIC,)),
        Option("palifico", "Palifico", "A special round after a player first drops to one die.",
               kind="flag", profiles=(CLASSIC,)),
        Option("calza", "Spot call (calza)", "Players may call a bid exactly right.",
               kind="flag", profiles=(CLASSIC,)),
        Option("max_dice", "Most dice", "A player who holds more dice than this loses the match.",
               low=2, high=20, profiles=(DEATH_MATCH,)),
        Option("reserve", "Round reserve", "A player's first missed bidding deadline in a round "
               "spends the reserve instead of losing the round.", kind="flag",
               profiles=(DEATH_MATCH,)),
        Option("cheat", "Anomaly: Cheat", "Twice a match a player may secretly see the "
               "opponent's dice; accuse becomes a move.", kind="flag", profiles=(DEATH_MATCH,)),
        Option("double_face", "Anomaly: Double-Face", "Three announced faces come up twice as "
               "often each round.", kind="flag", profiles=(DEATH_MATCH,)),
        Option("fresh_start", "Anomaly: Fresh Start", "Both players start with one die.",
               kind="flag", profiles=(DEATH_MATCH,)),
        Option("mulligan", "Anomaly: Mulligan", "Each round a player may secretly reroll up to "
               "five of their dice once.", kind="flag", profiles=(DEATH_MATCH,)),
        Option("oracle", "Anomaly: Oracle", "After each of your claims you privately learn "
               "whether it is true.", kind="flag", profiles=(DEATH_MATCH,)),
        Option("revelation", "Anomaly: Revelation", "With each claim the claimant shows the "
               "opponent one of their own dice.", kind="flag", profiles=(DEATH_MATCH,)),
        Option("summation", "Anomaly: Summation", "Each player learns the sum of the opponent's "
               "dice.", kind="flag", profiles=(DEATH_MATCH,)),
        Option("team_seating", "Teams", kind="choice", profiles=(TEAM,),
               choices=(("alternate", "seats 1 and 3 against 2 and 4"),
                        ("adjacent", "seats 1 and 2 against 3 and 4"))),
    ),
)  # fmt: skip


# --- orders --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Action:
    """The team game's optional action: reveal a die of the watched hand, then reroll that
    hand or learn one die (``target`` seat, ``slot``) of another player. Slots count from 1."""

    reveal: int
    learn: bool = False
    target: int | None = None
    slot: int | None = None


@dataclass(frozen=True)
class LiarsDiceOrder:
    """One message. ``kind`` is bid, liar, spot, accuse, mulligan, cheat, action (the team
    action alone) or timeout (the Death Match NMR default, never typed).

    A team message may carry ``action`` before its move; ``rejected`` then holds the message
    for a later line that could not be read: the action still applies (section 7.2).
    """

    kind: str
    quantity: int = 0
    face: int = 0
    sum: bool = False
    show: int | None = None
    positions: tuple[int, ...] = ()
    cheat: bool = False
    action: Action | None = None
    rejected: str | None = None


class ActionApplied(OrderError):
    """The team action of a message was applied, but a later line of it is rejected.

    ``state`` and ``events`` are the game after the action: the action is final (rules
    section 7.2) and the player now owes only the bid or challenge.
    """

    def __init__(self, message: str, state: LiarsDiceState, events: list[Event]) -> None:
        super().__init__(f"{message} (your action line was played and stands)", (state, events))
        self.state = state
        self.events = events


# --- state ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bid:
    """A bid of the round: ``quantity`` dice showing ``face``, or (``sum``) a total of at
    least ``quantity``. ``show`` is the slot shown with it (Revelation); ``true`` is the
    Oracle's answer, seen by the bidder alone."""

    seat: int
    quantity: int
    face: int
    sum: bool = False
    show: int | None = None
    true: bool | None = None

    def text(self) -> str:
        return f"sum {self.quantity}" if self.sum else f"{self.quantity} x {self.face}"


@dataclass(frozen=True)
class Learnt:
    """A die a team player learnt this round."""

    seat: int
    target: int
    slot: int


@dataclass(frozen=True)
class Reveal:
    """What every player saw when a round ended."""

    round: int
    hands: tuple[tuple[int, ...], ...]
    result: str
    bids: tuple[Bid, ...] = ()
    cheated: tuple[bool, ...] = ()


@dataclass(frozen=True)
class LiarsDiceState:
    options: LiarsDiceOptions
    players: tuple[str, ...]
    counts: tuple[int, ...]
    round: int = 0
    phase: str = BIDDING
    hands: tuple[tuple[int, ...], ...] = ()
    opener: int = 0
    turn: int = 0
    bids: tuple[Bid, ...] = ()
    palifico: bool = False
    palifico_done: tuple[bool, ...] = ()
    out: tuple[int, ...] = ()
    loser: int | None = None
    last: Reveal | None = None
    results: tuple[str, ...] = ()
    # Death Match
    faces: tuple[int, ...] = ()
    mulligans: tuple[tuple[int, ...] | None, ...] = ()
    rerolled: tuple[tuple[int, ...], ...] = ()
    cheats: tuple[bool | None, ...] = ()
    cheated: tuple[bool, ...] = ()
    cheats_used: tuple[int, ...] = ()
    reserve_spent: tuple[bool, ...] = ()
    sums: tuple[int | None, ...] = ()
    # Team game
    revealed: tuple[tuple[int, ...], ...] = ()
    learnt: tuple[Learnt, ...] = ()
    acted: bool = False
    actions: tuple[str, ...] = ()

    @property
    def finished(self) -> bool:
        return self.phase == OVER

    @property
    def profile(self) -> str:
        return self.options.profile

    @property
    def seats(self) -> range:
        return range(len(self.players))

    def alive(self) -> list[int]:
        return [seat for seat in self.seats if self.counts[seat] > 0]

    @property
    def sum_phase(self) -> bool:
        alive = self.alive()
        return self.profile == TEAM and len(alive) == 2 and all(self.counts[s] == 1 for s in alive)

    @property
    def wilds(self) -> bool:
        return self.options.wild_ones and not self.palifico


def team_of(state: LiarsDiceState, seat: int) -> int:
    return seat // 2 if state.options.team_seating == "adjacent" else seat % 2


def next_seat(state: LiarsDiceState, seat: int) -> int:
    """The first seat with dice clockwise after ``seat``."""
    size = len(state.players)
    for step in range(1, size + 1):
        candidate = (seat + step) % size
        if state.counts[candidate] > 0:
            return candidate
    raise GameError("no player has dice")


def behind(state: LiarsDiceState, seat: int) -> int:
    """The team game: the nearest seat before ``seat`` that still has dice (whom it watches)."""
    size = len(state.players)
    for step in range(1, size):
        candidate = (seat - step) % size
        if state.counts[candidate] > 0:
            return candidate
    raise GameError("nobody else has dice")


def shown_positions(state: LiarsDiceState, seat: int) -> list[int]:
    """Revelation: the positions of the dice ``seat`` showed with its bids this round."""
    return [bid.show for bid in state.bids if bid.seat == seat and bid.show is not None]


def positions_to_show(state: LiarsDiceState, seat: int) -> list[int]:
    """Revelation: the positions of ``seat``'s dice one of which its bid must show now (its
    unshown dice, while more than REVELATION_KEEPS are unshown); empty when a bid shows
    none."""
    if not state.options.revelation:
        return []
    shown = shown_positions(state, seat)
    unshown = [slot for slot in range(1, state.counts[seat] + 1) if slot not in shown]
    return unshown if len(unshown) > REVELATION_KEEPS else []


def face_table(doubled: Sequence[int]) -> tuple[int, ...]:
    """Double-Face: d9 value v shows face ``table[v - 1]`` (section 11)."""
    table: list[int] = []
    for face in FACES:
        table.extend([face] * (2 if face in doubled else 1))
    return tuple(table)


def count(state: LiarsDiceState, bid: Bid) -> int:
    """The count a bid is checked against (section 4.1); the total in the sum phase."""
    dice = [die for hand in state.hands for die in hand]
    if bid.sum:
        return sum(dice)
    wild = state.wilds and bid.face != 1
    return sum(1 for die in dice if die == bid.face or (wild and die == 1))


def holds(state: LiarsDiceState, bid: Bid) -> bool:
    return count(state, bid) >= bid.quantity


# --- the raise rules -----------------------------------------------------------------------


def _same_quantity_raises(q0: int, f0: int) -> str:
    higher = [f"{q0} x {face}" for face in range(f0 + 1, 7)]
    return ", ".join(higher) + " or " if higher else ""


def check_raise(state: LiarsDiceState, quantity: int, face: int) -> None:
    """OrderError unless bid (quantity, face) is legal after the round's bids (section 4.3)."""
    if quantity < 1:
        raise OrderError(f"bid {quantity} {face}: the quantity must be at least 1")
    if quantity > MAX_QUANTITY:
        raise OrderError(
            f"bid {quantity} {face}: the quantity must be at most {MAX_QUANTITY} "
            f"({counted(sum(state.counts), 'die', 'dice')} in play)"
        )
    if face not in FACES:
        raise OrderError(f"bid {quantity} {face}: the face must be 1-6")
    last = state.bids[-1] if state.bids else None
    if state.palifico:
        if last is None:
            return
        if face != last.face:
            raise OrderError(f"palifico round: the face stays {last.face}; bid more {last.face}s")
        if quantity <= last.quantity:
            raise OrderError(
                f"palifico round: bid more {last.face}s than {last.quantity} x {last.face}"
            )
        return
    if not state.wilds:
        if (
            last is None
            or quantity > last.quantity
            or (quantity == last.quantity and face > last.face)
        ):
            return
        q0, f0 = last.quantity, last.face
        raise OrderError(
            f"bid must raise: after {q0} x {f0} bid {_same_quantity_raises(q0, f0)}"
            f"{q0 + 1} or more of any face"
        )
    _check_wild_raise(last, quantity, face)


def _check_wild_raise(last: Bid | None, quantity: int, face: int) -> None:
    if last is None:
        if face == 1:
            raise OrderError("you cannot open on ones")
        return
    q0, f0 = last.quantity, last.face
    if f0 != 1 and face == 1:
        if quantity < -(-q0 // 2):
            raise OrderError(f"to switch to ones after {q0} x {f0} bid at least {-(-q0 // 2)} x 1")
    elif f0 == 1 and face != 1:
        if quantity < 2 * q0 + 1:
            raise OrderError(
                f"to leave ones after {q0} x 1 bid at least {2 * q0 + 1} of another face"
            )
    elif f0 == 1:
        if quantity <= q0:
            raise OrderError(
                f"bid must raise: after {q0} x 1 bid at least {q0 + 1} x 1 "
                f"or {2 * q0 + 1} of another face"
            )
    elif not (quantity > q0 or (quantity == q0 and face > f0)):
        raise OrderError(
            f"bid must raise: after {q0} x {f0} bid {_same_quantity_raises(q0, f0)}"
            f"{q0 + 1} or more of any face other than 1, or at least {-(-q0 // 2)} x 1"
        )


def check_sum_raise(state: LiarsDiceState, total: int) -> None:
    if not SUM_LOW <= total <= SUM_HIGH:
        raise OrderError(f"bid sum {total}: the sum must be {SUM_LOW}-{SUM_HIGH}")
    if state.bids and total <= state.bids[-1].quantity:
        last = state.bids[-1].quantity
        if last >= SUM_HIGH:
            raise OrderError(f"bid must raise: nothing is above sum {last}; call liar")
        raise OrderError(f"bid must raise: after sum {last} bid sum {last + 1} or more")


# --- parsing -------------------------------------------------------------------------------

CHALLENGE_WORDS = ("liar", "challenge", "dudo")
SPOT_WORDS = ("spot", "calza")
SYNTAX = "write bid <quantity> <face> or liar"


def _number(word: str, what: str, where: str) -> int:
    number = order_number(word)
    if number is None:
        raise OrderError(f"{where}: {what} must be a whole number in the digits 0-9, not {word!r}")
    return number


def parse_move(state: LiarsDiceState, line: str) -> LiarsDiceOrder:
    """One bidding line: bid, liar, spot or accuse, checked against the game's options."""
    options = state.options
    words = line.split()
    head = words[0]
    if head in CHALLENGE_WORDS and len(words) == 1:
        return LiarsDiceOrder("liar")
    if head in SPOT_WORDS and len(words) == 1:
        if not options.calza:
            raise OrderError("spot calls are not used in this game")
        return LiarsDiceOrder("spot")
    if head == "accuse" and len(words) == 1:
        if not options.cheat:
            raise OrderError("accusations are not used in this game")
        return LiarsDiceOrder("accuse")
    if head != "bid":
        raise OrderError(f"{line!r} is not an order here: {SYNTAX}")
    if len(words) == 3 and words[1] == "sum":
        if not state.sum_phase:
            raise OrderError("bid sum: sum bids are only used when two single dice remain")
        return LiarsDiceOrder("bid", _number(words[2], "the sum", line), 0, sum=True)
    if len(words) not in (3, 5) or (len(words) == 5 and words[3] != "show"):
        extra = " [show <position>]" if options.revelation else ""
        raise OrderError(f"{line!r}: write bid <quantity> <face>{extra}, e.g. bid 5 3")
    if state.sum_phase:
        raise OrderError("bid: two single dice remain; bid a sum: bid sum <total>")
    quantity = _number(words[1], "the quantity", line)
    face = _number(words[2], "the face", line)
    show = None
    if len(words) == 5:
        if not options.revelation:
            raise OrderError("show: showing dice is not used in this game")
        show = _number(words[4], "the position", line)
    return LiarsDiceOrder("bid", quantity, face, show=show)


def parse_mulligan(words: list[str]) -> LiarsDiceOrder:
    rest = words[1:]
    if rest == ["none"] or not rest:
        return LiarsDiceOrder(MULLIGAN)
    positions = [_number(word, "a position", "mulligan") for word in rest]
    if len(set(positions)) != len(positions):
        raise OrderError("mulligan: name each position once")
    return LiarsDiceOrder(MULLIGAN, positions=tuple(sorted(positions)))


def parse_action(state: LiarsDiceState, line: str) -> Action:
    words = line.split()
    where = "reveal"
    if len(words) < 3:
        raise OrderError(
            f"{line!r}: write reveal <slot> reroll or reveal <slot> learn <player> <slot>"
        )
    reveal = _number(words[1], "the slot", where)
    if words[2] == "reroll" and len(words) == 3:
        return Action(reveal)
    if words[2] == "learn" and len(words) == 5:
        names = {name.lower(): seat for seat, name in enumerate(state.players)}
        if words[3] not in names:
            raise OrderError(f"learn: there is no player called {words[3]!r}")
        return Action(reveal, True, names[words[3]], _number(words[4], "the slot", "learn"))
    raise OrderError(f"{line!r}: write reveal <slot> reroll or reveal <slot> learn <player> <slot>")


def parse_order(state: LiarsDiceState, text: str) -> LiarsDiceOrder:
    """The order in ``text`` for the current step (the seat is checked by the engine)."""
    lines = order_lines(text)
    if not lines:
        raise OrderError(f"the order is empty: {SYNTAX}")
    first = lines[0].split()[0]
    if state.phase == MULLIGAN:
        if first != "mulligan" or len(lines) > 1:
            raise OrderError(
                f"round {state.round} is at the mulligan step: send one line, "
                "mulligan <positions> or mulligan none"
            )
        return parse_mulligan(lines[0].split())
    if state.phase == CHEAT:
        if lines not in (["cheat yes"], ["cheat no"]):
            raise OrderError(
                f"round {state.round} is at the cheat step: send cheat yes or cheat no"
            )
        return LiarsDiceOrder(CHEAT, cheat=lines[0] == "cheat yes")
    if first in ("mulligan", "cheat"):
        if first == "mulligan" and not state.options.mulligan:
            raise OrderError("mulligan: mulligans are not used in this game")
        if first == "cheat" and not state.options.cheat:
            raise OrderError("cheat: cheating is not used in this game")
        raise OrderError(f"{first}: the {first} step of round {state.round} is over")
    if first == "reveal":
        if state.profile != TEAM:
            raise OrderError("reveal: the optional action is only used in the team game")
        return _parse_action_order(state, lines)
    if len(lines) > 1:
        raise OrderError(f"line 2: one move per message; {SYNTAX}")
    return parse_move(state, lines[0])


def _parse_action_order(state: LiarsDiceState, lines: list[str]) -> LiarsDiceOrder:
    single = len(lines) == 1
    try:
        action = parse_action(state, lines[0])
    except OrderError as error:
        raise OrderError(error.message if single else f"line 1: {error.message}") from None
    if single:
        return LiarsDiceOrder("action", action=action)
    if len(lines) > 2:
        return LiarsDiceOrder(
            "action",
            action=action,
            rejected="line 3: one action line and one bid or challenge line at most",
        )
    try:
        move = parse_move(state, lines[1])
    except OrderError as error:
        return LiarsDiceOrder("action", action=action, rejected=f"line 2: {error.message}")
    return replace(move, action=action)


def action_text(state: LiarsDiceState, action: Action) -> str:
    if action.learn and action.target is not None:
        return f"reveal {action.reveal} learn {state.players[action.target]} {action.slot}"
    return f"reveal {action.reveal} reroll"


def order_text(state: LiarsDiceState, order: LiarsDiceOrder) -> str:
    """The canonical text of ``order`` (what parse() reads back)."""
    lines = [action_text(state, order.action)] if order.action is not None else []
    if order.kind == "bid":
        if order.sum:
            lines.append(f"bid sum {order.quantity}")
        else:
            show = f" show {order.show}" if order.show is not None else ""
            lines.append(f"bid {order.quantity} {order.face}{show}")
    elif order.kind == MULLIGAN:
        positions = " ".join(map(str, order.positions))
        lines.append(f"mulligan {positions or 'none'}")
    elif order.kind == CHEAT:
        lines.append(f"cheat {'yes' if order.cheat else 'no'}")
    elif order.kind == "timeout":
        lines.append("no move (deadline missed)")
    elif order.kind != "action":
        lines.append(order.kind)
    return "\n".join(lines)


def _dice_text(hand: Sequence[int]) -> str:
    return " ".join(map(str, hand)) if hand else "no dice"


# --- the engine ----------------------------------------------------------------------------


class LiarsDiceEngine(JsonCodec):
    key = "liars-dice"
    title = "Liar's Dice"
    min_players = 2
    max_players = 6
    # One player bids at a time: most steps owe nothing of most seats, so a seat's
    # reports come by default only when it owes an order.
    sequential = True

    State = LiarsDiceState
    Order = LiarsDiceOrder

    def options(self, data: Mapping[str, JSON]) -> LiarsDiceOptions:
        return parse_options(data)

    def start(
        self, options: LiarsDiceOptions, players: Sequence[str], dice: Dice
    ) -> tuple[LiarsDiceState, list[Event]]:
        low, high = PLAYERS[options.profile]
        if not low <= len(players) <= high:
            allowed = f"exactly {low}" if low == high else f"{low} to {high}"
            raise OptionsError(
                f"Liar's Dice ({options.profile}) takes {allowed} players, not {len(players)}"
            )
        seats = len(players)
        state = LiarsDiceState(
            options=options,
            players=tuple(players),
            counts=(options.start_dice,) * seats,
            palifico_done=(False,) * seats,
            cheats_used=(0,) * seats,
        )
        return self._start_round(state, 0, dice, [])

    # --- rounds ----------------------------------------------------------------------------

    def _die(self, state: LiarsDiceState, dice: Dice) -> int:
        if state.faces:
            return face_table(state.faces)[dice.draw(9) - 1]
        return dice.draw(6)

    def _start_round(
        self, state: LiarsDiceState, opener: int, dice: Dice, events: list[Event]
    ) -> tuple[LiarsDiceState, list[Event]]:
        """ROUND_START: faces (Double-Face), hands in seat order, then the first step."""
        seats = len(state.players)
        state = replace(
            state,
            round=state.round + 1,
            opener=opener,
            turn=opener,
            bids=(),
            faces=(),
            mulligans=(None,) * seats,
            rerolled=((),) * seats,
            cheats=(None,) * seats,
            cheated=(False,) * seats,
            reserve_spent=(False,) * seats,
            sums=(None,) * seats,
            revealed=((),) * seats,
            learnt=(),
            acted=False,
            actions=(),
        )
        if state.options.double_face:
            faces: list[int] = []
            while len(faces) < 3:
                face = dice.draw(6)
                if face not in faces:
                    faces.append(face)
            state = replace(state, faces=tuple(sorted(faces)))
        hands = tuple(
            tuple(self._die(state, dice) for _ in range(number)) for number in state.counts
        )
        state = replace(state, hands=hands)
        counts = ", ".join(
            f"{name} {number}" for name, number in zip(state.players, state.counts, strict=True)
        )
        text = f"round {state.round}: dice in play: {counts}; {state.players[opener]} opens"
        if state.palifico:
            text += "; this is a palifico round (ones are not wild, the face stays)"
        if state.sum_phase:
            text += "; two single dice remain: bids name the sum of both"
        if state.faces:
            text += f"; the doubled faces are {', '.join(map(str, state.faces))}"
        events = [*events, Event(text)]
        for seat in state.alive():
            events.append(self._hand_event(state, seat))
        if state.options.mulligan:
            return replace(state, phase=MULLIGAN), events
        return self._after_mulligan(state, events)

    def _hand_event(self, state: LiarsDiceState, seat: int) -> Event:
        if state.profile == TEAM:
            watched = behind(state, seat)
            return Event(
                f"round {state.round}: you watch {state.players[watched]}, whose dice are "
                f"{_dice_text(state.hands[watched])}",
                to=(seat,),
            )
        return Event(
            f"round {state.round}: your dice are {_dice_text(state.hands[seat])}", to=(seat,)
        )

    def _after_mulligan(
        self, state: LiarsDiceState, events: list[Event]
    ) -> tuple[LiarsDiceState, list[Event]]:
        """Summation, then the Cheat step if anybody may still cheat, else the bidding."""
        if state.options.summation:
            sums = list(state.sums)
            for seat in state.seats:
                other = 1 - seat
                if state.options.fresh_start and state.counts[other] < 4:
                    continue
                sums[seat] = sum(state.hands[other])
                events.append(
                    Event(
                        f"round {state.round}: the dice of {state.players[other]} add up to "
                        f"{sums[seat]}",
                        to=(seat,),
                    )
                )
            state = replace(state, sums=tuple(sums))
        if state.options.cheat and any(used < CHEATS_PER_MATCH for used in state.cheats_used):
            return replace(state, phase=CHEAT), events
        return replace(state, phase=BIDDING), events

    def _end_round(
        self, state: LiarsDiceState, loser: int, result: str, dice: Dice, spot: bool = False
    ) -> tuple[LiarsDiceState, list[Event]]:
        """ROUND_END: reveal every hand, the loser's dice change, eliminations, the end check,
        and the next round at once. ``spot``: a correct spot call, the caller gains a die."""
        hands = "; ".join(
            f"{state.players[seat]} {_dice_text(state.hands[seat])}" for seat in state.alive()
        )
        text = f"round {state.round}: {result}. The dice: {hands}"
        if any(state.cheated):
            cheaters = [state.players[seat] for seat in state.seats if state.cheated[seat]]
            text += f". {' and '.join(cheaters)} cheated this round"
        events = [Event(text)]
        counts = list(state.counts)
        before = counts[loser]
        if state.profile == DEATH_MATCH or spot:
            counts[loser] = min(before + 1, state.options.dice_per_player) if spot else before + 1
        else:
            counts[loser] = before - 1
        name = state.players[loser]
        palifico = False
        palifico_done = state.palifico_done
        if (
            state.options.palifico
            and before == 2
            and counts[loser] == 1
            and not state.palifico_done[loser]
        ):
            palifico = True
            palifico_done = tuple(done or s == loser for s, done in enumerate(palifico_done))
        if state.profile == DEATH_MATCH:
            events.append(Event(f"{name} gains a die and now holds {counts[loser]}"))
        elif counts[loser] != before:
            change = "gains" if counts[loser] > before else "loses"
            events.append(Event(f"{name} {change} a die and now holds {counts[loser]}"))
        out = state.out
        if counts[loser] == 0:
            out = (*out, loser)
            events.append(Event(f"{name} has no dice left and is out"))
        summary = f"round {state.round}: {result}"
        state = replace(
            state,
            counts=tuple(counts),
            out=out,
            palifico=palifico,
            palifico_done=palifico_done,
            last=Reveal(state.round, state.hands, result, state.bids, state.cheated),
            results=(*state.results, summary),
            cheats_used=tuple(
                used + cheated
                for used, cheated in zip(state.cheats_used, state.cheated, strict=True)
            ),
        )
        if self._game_over(state, loser):
            state = replace(
                state, phase=OVER, loser=loser if state.profile == DEATH_MATCH else None
            )
            return state, [*events, Event(self._final_text(state))]
        opener = loser if counts[loser] > 0 else next_seat(state, loser)
        return self._start_round(state, opener, dice, events)

    def _game_over(self, state: LiarsDiceState, loser: int) -> bool:
        if state.profile == DEATH_MATCH:
            return state.counts[loser] > state.options.max_dice
        alive = state.alive()
        if state.profile == TEAM:
            return len({team_of(state, seat) for seat in alive}) < 2
        return len(alive) < 2

    def _final_text(self, state: LiarsDiceState) -> str:
        standings = self.standings(state) or []
        places = "; ".join(f"{place.place}. {state.players[place.seat]}" for place in standings)
        if state.profile == DEATH_MATCH and state.loser is not None:
            return (
                f"the match is over: {state.players[state.loser]} holds more than "
                f"{state.options.max_dice} dice. {places}"
            )
        return f"the game is over: {places}"

    # --- prompts and checks ----------------------------------------------------------------

    def prompts(self, state: LiarsDiceState) -> list[Prompt]:
        where = f"round {state.round}"
        if state.phase == OVER:
            return []
        if state.phase == MULLIGAN:
            return [
                Prompt(
                    seat,
                    "mulligan",
                    f"{where}: mulligan <positions> (up to "
                    f"{min(MULLIGAN_MOST, state.counts[seat])}) or mulligan none",
                )
                for seat in state.seats
            ]
        if state.phase == CHEAT:
            return [
                Prompt(
                    seat,
                    "cheat",
                    f"{where}: cheat yes or cheat no "
                    f"({counted(CHEATS_PER_MATCH - state.cheats_used[seat], 'cheat')} left)",
                )
                for seat in state.seats
                if state.cheats_used[seat] < CHEATS_PER_MATCH
            ]
        return [Prompt(state.turn, self._bid_kind(state), self._bid_hint(state))]

    def _bid_kind(self, state: LiarsDiceState) -> str:
        if state.profile == TEAM and not state.acted and not state.sum_phase:
            return "action, bid or challenge"
        return "bid or challenge" if state.bids else "bid"

    def _bid_hint(self, state: LiarsDiceState) -> str:
        where = f"round {state.round}, move {len(state.bids) + 1}"
        if not state.bids:
            text = f"{where}: open with a bid"
        else:
            last = state.bids[-1]
            text = f"{where}: raise {last.text()} ({state.players[last.seat]}) or call liar"
        if state.options.calza and state.bids:
            text += " or spot"
        if state.options.cheat:
            text += " or accuse"
        if state.sum_phase:
            text += "; bids name a sum: bid sum <total>"
        if state.acted:
            text += "; your action is done"
        if state.profile == DEATH_MATCH and state.reserve_spent[state.turn]:
            text += "; your round reserve is spent"
        return text

    def _expect(self, state: LiarsDiceState, seat: int) -> None:
        if not 0 <= seat < len(state.players):
            raise OrderError(f"there is no seat {seat} in this game")
        if state.finished:
            raise OrderError("the game is over; no order is expected from you")
        if state.phase == BIDDING:
            # The player on turn is the one prompted (``prompts``), without writing the
            # prompt's hint: a menu checks every bid it might offer here.
            if seat == state.turn:
                return
            if state.counts[seat] == 0:
                raise OrderError("you are out of the game; no order is expected from you")
            raise OrderError(f"not your turn: waiting for {state.players[state.turn]}")
        if seat in [prompt.seat for prompt in self.prompts(state)]:
            return
        if state.phase == CHEAT and state.cheats_used[seat] >= CHEATS_PER_MATCH:
            raise OrderError(
                f"cheat: you have cheated in {CHEATS_PER_MATCH} rounds already; "
                "no order is expected from you now"
            )
        raise OrderError("no order is expected from you now")

    def parse(self, state: LiarsDiceState, seat: int, text: str) -> LiarsDiceOrder:
        self._expect(state, seat)
        return parse_order(state, text)

    def default(self, state: LiarsDiceState, seat: int) -> LiarsDiceOrder:
        self._expect(state, seat)
        if state.phase == MULLIGAN:
            return LiarsDiceOrder(MULLIGAN)
        if state.phase == CHEAT:
            return LiarsDiceOrder(CHEAT, cheat=False)
        if state.profile == DEATH_MATCH:
            return LiarsDiceOrder("timeout")
        if state.bids:
            return LiarsDiceOrder("liar")
        if state.sum_phase:
            return LiarsDiceOrder("bid", SUM_LOW, 0, sum=True)
        return LiarsDiceOrder("bid", 1, 2 if state.wilds else 1)

    def canonical(self, state: LiarsDiceState, seat: int, order: LiarsDiceOrder) -> str:
        return order_text(state, order)

    # --- submit ----------------------------------------------------------------------------

    def submit(
        self, state: LiarsDiceState, seat: int, order: LiarsDiceOrder, dice: Dice
    ) -> tuple[LiarsDiceState, list[Event]]:
        self._expect(state, seat)
        if state.phase == MULLIGAN:
            return self._store_mulligan(state, seat, order)
        if state.phase == CHEAT:
            if order.kind != CHEAT:
                raise OrderError(f"round {state.round} is at the cheat step: send cheat yes or no")
            cheats = tuple(order.cheat if s == seat else c for s, c in enumerate(state.cheats))
            return replace(state, cheats=cheats), [
                Event(f"order received: {order_text(state, order)}", to=(seat,))
            ]
        if order.kind in (MULLIGAN, CHEAT, "timeout"):
            raise OrderError(f"{order.kind}: not expected now; {SYNTAX}")
        events: list[Event] = []
        if order.action is not None:
            multi = order.kind != "action" or order.rejected is not None
            state, events = self._action(state, seat, order.action, dice, prefix=multi)
            if order.rejected is not None:
                raise ActionApplied(order.rejected, state, events)
            if order.kind == "action":
                return state, events
            try:
                state, more = self._move(state, seat, order, dice)
            except OrderError as error:
                raise ActionApplied(f"line 2: {error.message}", state, events) from None
            return state, events + more
        if order.kind == "action":
            raise OrderError(f"{SYNTAX}")
        return self._move(state, seat, order, dice)

    def _store_mulligan(
        self, state: LiarsDiceState, seat: int, order: LiarsDiceOrder
    ) -> tuple[LiarsDiceState, list[Event]]:
        if order.kind != MULLIGAN:
            raise OrderError(
                f"round {state.round} is at the mulligan step: send mulligan <positions> "
                "or mulligan none"
            )
        held = state.counts[seat]
        most = min(MULLIGAN_MOST, held)
        if len(order.positions) > most:
            raise OrderError(
                f"mulligan: you hold {counted(held, 'die', 'dice')}; name at most "
                f"{counted(most, 'different position')}"
            )
        for position in order.positions:
            if not 1 <= position <= held:
                raise OrderError(
                    f"mulligan: you have no die {position}; you hold {counted(held, 'die', 'dice')}"
                )
        mulligans = tuple(
            order.positions if s == seat else m for s, m in enumerate(state.mulligans)
        )
        return replace(state, mulligans=mulligans), [
            Event(f"order received: {order_text(state, order)}", to=(seat,))
        ]

    def _move(
        self, state: LiarsDiceState, seat: int, order: LiarsDiceOrder, dice: Dice
    ) -> tuple[LiarsDiceState, list[Event]]:
        """A bidding move of the player on turn, applied at once."""
        name = state.players[seat]
        if order.kind == "bid":
            return self._bid(state, seat, order, dice)
        if order.kind == "accuse":
            other = 1 - seat
            if state.cheated[other]:
                result = f"{name} accuses {state.players[other]}, who cheated: {name} wins"
                return self._end_round(state, other, result, dice)
            result = f"{name} accuses {state.players[other]}, who did not cheat: {name} loses"
            return self._end_round(state, seat, result, dice)
        if not state.bids:
            word = "spot" if order.kind == "spot" else "challenge"
            raise OrderError(f"no bid to {word} yet; open with a bid")
        last = state.bids[-1]
        bidder = state.players[last.seat]
        found = count(state, last)
        counted = self._counted(state, last)
        if order.kind == "spot":
            if found == last.quantity:
                result = f"{name} calls spot on {last.text()}: there are exactly {found}{counted}"
                return self._end_round(state, seat, result, dice, spot=True)
            result = (
                f"{name} calls spot on {last.text()}: there are {found}{counted}, "
                f"not {last.quantity}"
            )
            return self._end_round(state, seat, result, dice)
        if found >= last.quantity:
            result = (
                f"{name} challenges {bidder}'s {last.text()}: there are {found}{counted}, "
                f"the bid holds"
            )
            return self._end_round(state, seat, result, dice)
        result = (
            f"{name} challenges {bidder}'s {last.text()}: there are {found}{counted}, the bid fails"
        )
        return self._end_round(state, last.seat, result, dice)

    @staticmethod
    def _counted(state: LiarsDiceState, bid: Bid) -> str:
        if bid.sum:
            return " in all (the sum)"
        if state.wilds and bid.face != 1:
            return f" {bid.face}s with ones"
        return f" {bid.face}s"

    def _bid(
        self, state: LiarsDiceState, seat: int, order: LiarsDiceOrder, dice: Dice
    ) -> tuple[LiarsDiceState, list[Event]]:
        name = state.players[seat]
        if order.sum:
            check_sum_raise(state, order.quantity)
        else:
            check_raise(state, order.quantity, order.face)
        if state.options.revelation:
            self._check_show(state, seat, order.show)
        bid = Bid(seat, order.quantity, order.face, order.sum, order.show)
        if state.options.oracle:
            bid = replace(bid, true=holds(state, bid))
        state = replace(state, bids=(*state.bids, bid), turn=next_seat(state, seat), acted=False)
        events = [Event(f"round {state.round}: {name} bids {bid.text()}")]
        if bid.show is not None:
            other = 1 - seat
            value = state.hands[seat][bid.show - 1]
            events.append(
                Event(f"{name} shows you their die at position {bid.show}: a {value}", to=(other,))
            )
        if bid.true is not None:
            truth = "true" if bid.true else "false"
            events.append(Event(f"oracle: your claim {bid.text()} is {truth}", to=(seat,)))
        return state, events

    def _check_show(self, state: LiarsDiceState, seat: int, show: int | None) -> None:
        to_show = positions_to_show(state, seat)
        held = state.counts[seat]
        if show is None:
            if to_show:
                raise OrderError(
                    f'show one of your dice: add "show <position>", e.g. show {to_show[0]}'
                )
            return
        if not to_show:
            unshown = held - len(shown_positions(state, seat))
            raise OrderError(f"show: you have {unshown} unshown dice left; claim without show")
        if not 1 <= show <= held:
            raise OrderError(
                f"show: you have no die at position {show}; you hold {counted(held, 'die', 'dice')}"
            )
        if show not in to_show:
            raise OrderError(f"show: you showed your die at position {show} already this round")

    # --- the team action -------------------------------------------------------------------

    def _action(
        self, state: LiarsDiceState, seat: int, action: Action, dice: Dice, prefix: bool
    ) -> tuple[LiarsDiceState, list[Event]]:
        try:
            return self._apply_action(state, seat, action, dice)
        except OrderError as error:
            raise OrderError(f"line 1: {error.message}" if prefix else error.message) from None

    def _apply_action(
        self, state: LiarsDiceState, seat: int, action: Action, dice: Dice
    ) -> tuple[LiarsDiceState, list[Event]]:
        if state.acted:
            raise OrderError("reveal: you have used your action this turn; bid or call liar")
        watched = behind(state, seat)
        who = state.players[watched]
        hand = state.hands[watched]
        revealed = state.revealed[watched]
        if len(revealed) >= len(hand):
            raise OrderError(f"reveal: every die of {who} is revealed already")
        if not 1 <= action.reveal <= len(hand):
            raise OrderError(
                f"reveal: {who} has no die {action.reveal}; "
                f"{who} holds {counted(len(hand), 'die', 'dice')}"
            )
        if action.reveal in revealed:
            raise OrderError(f"reveal: {who}'s die {action.reveal} is revealed already")
        revealed = tuple(sorted((*revealed, action.reveal)))
        name = state.players[seat]
        value = hand[action.reveal - 1]
        text = f"round {state.round}: {name} reveals {who}'s die {action.reveal}: a {value}"
        state = replace(
            state,
            revealed=tuple(revealed if s == watched else r for s, r in enumerate(state.revealed)),
            acted=True,
        )
        if action.learn:
            return self._learn(state, seat, watched, action, text)
        learnt = {entry.slot for entry in state.learnt if entry.target == watched}
        slots = [
            slot for slot in range(1, len(hand) + 1) if slot not in revealed and slot not in learnt
        ]
        if not slots:
            raise OrderError(f"nothing to reroll: every other die of {who} is revealed or learnt")
        new = list(hand)
        for slot in slots:
            new[slot - 1] = self._die(state, dice)
        hands = tuple(tuple(new) if s == watched else h for s, h in enumerate(state.hands))
        public = f"{text}, and rerolls their dice {' '.join(map(str, slots))}"
        state = replace(state, hands=hands, actions=(*state.actions, public))
        private = Event(f"round {state.round}: {who}'s dice are now {_dice_text(new)}", to=(seat,))
        return state, [Event(public), private]

    def _learn(
        self, state: LiarsDiceState, seat: int, watched: int, action: Action, text: str
    ) -> tuple[LiarsDiceState, list[Event]]:
        target, slot = action.target, action.slot
        assert target is not None and slot is not None
        who = state.players[target]
        if target in (seat, watched):
            raise OrderError(
                f"learn: pick a player other than yourself and {state.players[watched]}, "
                "whom you already watch"
            )
        if state.counts[target] == 0:
            raise OrderError(f"learn: {who} has no dice")
        if not 1 <= slot <= state.counts[target]:
            raise OrderError(
                f"learn: {who} has no die {slot}; "
                f"{who} holds {counted(state.counts[target], 'die', 'dice')}"
            )
        if slot in state.revealed[target]:
            raise OrderError(f"learn: {who}'s die {slot} is revealed; everybody knows it")
        if Learnt(seat, target, slot) in state.learnt:
            raise OrderError(f"learn: you already know {who}'s die {slot}")
        public = f"{text}, and learns {who}'s die {slot}"
        state = replace(
            state,
            learnt=(*state.learnt, Learnt(seat, target, slot)),
            actions=(*state.actions, public),
        )
        value = state.hands[target][slot - 1]
        private = Event(f"round {state.round}: {who}'s die {slot} is a {value}", to=(seat,))
        return state, [Event(public), private]

    # --- resolve ---------------------------------------------------------------------------

    def resolve(self, state: LiarsDiceState, dice: Dice) -> tuple[LiarsDiceState, list[Event]]:
        if state.finished:
            raise GameError("the game is over; there is nothing to resolve")
        if state.phase == MULLIGAN:
            return self._resolve_mulligan(state, dice)
        if state.phase == CHEAT:
            return self._resolve_cheat(state)
        seat = state.turn
        name = state.players[seat]
        order = self.default(state, seat)
        if order.kind != "timeout":
            events = [
                Event(f"{name} sent no order: the NMR default {order_text(state, order)} is played")
            ]
            state, more = self._move(state, seat, order, dice)
            return state, events + more
        if state.options.reserve and not state.reserve_spent[seat]:
            spent = tuple(s == seat or spent for s, spent in enumerate(state.reserve_spent))
            return replace(state, reserve_spent=spent), [
                Event(
                    f"round {state.round}: {name} missed the deadline and spends the round "
                    f"reserve; {name} still owes the move"
                )
            ]
        reason = "again" if state.options.reserve else "and has no reserve"
        return self._end_round(
            state, seat, f"{name} missed the deadline {reason} and loses the round", dice
        )

    def _resolve_mulligan(
        self, state: LiarsDiceState, dice: Dice
    ) -> tuple[LiarsDiceState, list[Event]]:
        events: list[Event] = []
        hands = list(state.hands)
        rerolled: list[tuple[int, ...]] = []
        for seat in state.seats:
            positions = state.mulligans[seat]
            if positions is None:
                events.append(
                    Event(f"{state.players[seat]} sent no mulligan order: nothing is rerolled")
                )
                positions = ()
            hand = list(hands[seat])
            for position in positions:
                hand[position - 1] = self._die(state, dice)
            hands[seat] = tuple(hand)
            rerolled.append(positions)
        events.append(
            Event(
                f"round {state.round}: mulligans done: "
                + "; ".join(
                    f"{state.players[seat]} rerolled {counted(len(rerolled[seat]), 'die', 'dice')}"
                    for seat in state.seats
                )
            )
        )
        for seat in state.seats:
            if rerolled[seat]:
                events.append(
                    Event(
                        f"round {state.round}: after your mulligan your dice are "
                        f"{_dice_text(hands[seat])}",
                        to=(seat,),
                    )
                )
        state = replace(
            state,
            hands=tuple(hands),
            rerolled=tuple(rerolled),
            mulligans=(None,) * len(state.players),
        )
        return self._after_mulligan(state, events)

    def _resolve_cheat(self, state: LiarsDiceState) -> tuple[LiarsDiceState, list[Event]]:
        events: list[Event] = []
        cheated = []
        for seat in state.seats:
            decision = state.cheats[seat]
            allowed = state.cheats_used[seat] < CHEATS_PER_MATCH
            if allowed and decision is None:
                events.append(Event(f"{state.players[seat]} sent no cheat order: no cheating"))
            cheated.append(bool(allowed and decision))
        events.append(Event(f"round {state.round}: the cheat step is over; the bidding begins"))
        for seat in state.seats:
            if cheated[seat]:
                other = 1 - seat
                events.append(
                    Event(
                        f"round {state.round}: you cheat; {state.players[other]}'s dice are "
                        f"{_dice_text(state.hands[other])}",
                        to=(seat,),
                    )
                )
        state = replace(
            state, cheated=tuple(cheated), cheats=(None,) * len(state.players), phase=BIDDING
        )
        return state, events

    # --- what players see ------------------------------------------------------------------

    def view(self, state: LiarsDiceState, seat: int | None) -> dict[str, JSON]:
        data: dict[str, JSON] = {
            "game": self.key,
            "status": "finished" if state.finished else "running",
            "options": to_json(state.options),
            "profile": state.profile,
            "round": state.round,
            "phase": state.phase,
            "palifico": state.palifico,
            "sum_phase": state.sum_phase,
            "double_faces": list(state.faces),
            "players": [self._player_view(state, s) for s in state.seats],
            "turn": None
            if state.phase != BIDDING
            else {"seat": state.turn, "name": state.players[state.turn]},
            "opener": state.players[state.opener],
            "bids": [self._bid_view(state, bid) for bid in state.bids],
            "actions": list(state.actions),
            "last_round": self._reveal_view(state),
            "results": list(state.results),
        }
        if seat is not None:
            data["you"] = self._private_view(state, seat)
        standings = self.standings(state)
        if standings is not None:
            data["standings"] = [
                {"player": state.players[s.seat], "place": s.place, "score": s.score}
                for s in standings
            ]
        return data

    def _player_view(self, state: LiarsDiceState, seat: int) -> dict[str, JSON]:
        data: dict[str, JSON] = {
            "seat": seat,
            "name": state.players[seat],
            "dice": state.counts[seat],
            "out": state.counts[seat] == 0,
            "on_turn": state.phase == BIDDING and state.turn == seat,
        }
        if state.profile == DEATH_MATCH:
            data["reserve_spent"] = state.reserve_spent[seat]
            data["cheats_used"] = state.cheats_used[seat]
        if state.profile == TEAM:
            data["team"] = team_of(state, seat) + 1
            watching = not state.finished and state.counts[seat] > 0
            data["watches"] = state.players[behind(state, seat)] if watching else None
            data["revealed"] = [
                {"slot": slot, "value": state.hands[seat][slot - 1]}
                for slot in state.revealed[seat]
            ]
        return data

    def _bid_view(self, state: LiarsDiceState, bid: Bid) -> dict[str, JSON]:
        return {
            "seat": bid.seat,
            "player": state.players[bid.seat],
            "text": bid.text(),
            "quantity": bid.quantity,
            "face": bid.face,
            "sum": bid.sum,
            "showed": bid.show is not None,
        }

    def _reveal_view(self, state: LiarsDiceState) -> dict[str, JSON] | None:
        last = state.last
        if last is None:
            return None
        return {
            "round": last.round,
            "result": last.result,
            "hands": [
                {"seat": s, "name": state.players[s], "dice": list(hand)}
                for s, hand in enumerate(last.hands)
                if hand
            ],
            "bids": [self._bid_view(state, bid) for bid in last.bids],
            "cheated": [state.players[s] for s, cheated in enumerate(last.cheated) if cheated],
        }

    def _private_view(self, state: LiarsDiceState, seat: int) -> dict[str, JSON]:
        data: dict[str, JSON] = {
            "seat": seat,
            "name": state.players[seat],
            "dice": state.counts[seat],
        }
        if state.profile == TEAM:
            return data | self._team_private(state, seat)
        data["cup"] = list(state.hands[seat]) if not state.finished else []
        if state.profile == CLASSIC or state.finished:
            return data
        other = 1 - seat
        mulligan = state.mulligans[seat]
        data["mulligan"] = None if mulligan is None else list(mulligan)
        data["rerolled"] = list(state.rerolled[seat])
        data["cheat"] = state.cheats[seat]
        data["cheating"] = state.cheated[seat]
        data["opponent_cup"] = list(state.hands[other]) if state.cheated[seat] else None
        data["opponent_sum"] = state.sums[seat]
        data["shown_to_you"] = [
            {"slot": bid.show, "value": state.hands[other][bid.show - 1]}
            for bid in state.bids
            if bid.seat == other and bid.show is not None
        ]
        data["you_showed"] = [
            bid.show for bid in state.bids if bid.seat == seat and bid.show is not None
        ]
        data["oracle"] = [
            {"bid": bid.text(), "true": bid.true}
            for bid in state.bids
            if bid.seat == seat and bid.true is not None
        ]
        data["reserve_spent"] = state.reserve_spent[seat]
        return data

    def _team_private(self, state: LiarsDiceState, seat: int) -> dict[str, JSON]:
        if state.finished or state.counts[seat] == 0:
            return {"watches": None, "learnt": [], "acted": False}
        watched = behind(state, seat)
        return {
            "watches": {
                "seat": watched,
                "name": state.players[watched],
                "dice": list(state.hands[watched]),
            },
            "learnt": [
                {
                    "seat": entry.target,
                    "player": state.players[entry.target],
                    "slot": entry.slot,
                    "value": state.hands[entry.target][entry.slot - 1],
                }
                for entry in state.learnt
                if entry.seat == seat
            ],
            "acted": state.acted and state.turn == seat,
        }

    # --- the end ---------------------------------------------------------------------------

    def candidates(self, state: LiarsDiceState, seat: int) -> list[tuple[str, str]]:
        """One-line orders a web form may offer ``seat`` now, as (text, label): more than
        are legal (the form keeps those ``submit`` accepts). Bids go up to every die in
        play; a team action, a Revelation show or a Mulligan of some dice is typed."""
        if state.phase == CHEAT:
            return [("cheat no", "cheat no"), ("cheat yes", "cheat yes")]
        if state.phase == MULLIGAN:
            return [("mulligan none", "mulligan none: keep every die")]
        if state.phase != BIDDING:
            return []
        found = [
            ("liar", "liar: challenge the last bid"),
            ("spot", "spot: the last bid is exactly right"),
            ("accuse", "accuse: the opponent cheated this round"),
        ]
        if state.sum_phase:
            found += [(f"bid sum {total}", f"bid sum {total}") for total in range(2, 13)]
        else:
            found += [
                (f"bid {quantity} {face}", f"bid {quantity} x {face}")
                for quantity in range(1, sum(state.counts) + 1)
                for face in range(1, 7)
            ]
        return found

    def standings(self, state: LiarsDiceState) -> list[Standing] | None:
        if not state.finished:
            return None
        places: list[tuple[int, int]] = []
        if state.profile == DEATH_MATCH:
            places = [(seat, 2 if seat == state.loser else 1) for seat in state.seats]
        elif state.profile == TEAM:
            winners = {team_of(state, seat) for seat in state.alive()}
            places = [(seat, 1 if team_of(state, seat) in winners else 3) for seat in state.seats]
        else:
            size = len(state.players)
            order = {seat: size - index for index, seat in enumerate(state.out)}
            places = [(seat, order.get(seat, 1)) for seat in state.seats]
        return [
            Standing(seat, place, None)
            for seat, place in sorted(places, key=lambda item: (item[1], item[0]))
        ]
