"""The First Player, one game night played by post: rules/first-player.md.

A night opens with the absences (one die of each absent member to the reserve) and the new
members (3 dice each), then plays ``rounds`` rounds. Each round is a gift window (GIFTS), the
rolling (COMMIT: ``roll`` and ``reroll`` draw their dice at once and answer only the player,
``arrange`` fixes the sequence), the reveal, a token window (tokens on), the ranking with its
tiebreak rolls (each followed by a token window for the tied players), the actual order and
the transfers of section 4.7. The night ends with the tokens discarded and the tracker column.

Every die that changes hands is written as a ``Movement`` (who gave how many to whom and why),
so a campaign ledger can be kept from the state and the counts rebuilt from it.

Partial orders: a ``roll`` or ``reroll`` line is final once applied. ``parse`` checks every line
as far as the dice allow before anything is drawn; a line that can only fail on the dice just
drawn by an earlier line of the same message (``roll 3`` then ``arrange 6 2 2``, ``reroll
set-aside 5`` or ``token 1`` on a 6) raises an OrderError that carries the state with the lines
before it applied (``OrderError.applied``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
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
    counted,
    option_flag,
    option_int,
    order_lines,
    order_number,
    single_profile,
)
from games.engines.text import Text, _, join, ngettext

ORDER_MODES = ("seating", "free")
RESERVE = "reserve"
START_DICE = 3
SIDES = 6
MAX_ROUNDS = 10
MAX_DICE = 30
MAX_RESERVE = 100
MIN_PLAYERS = 2
MAX_PLAYERS = 20

GIFTS = "gifts"
COMMIT = "commit"
TOKENS = "tokens"
TIEBREAK = "tiebreak"
RANKING = "ranking"
FINISHED = "finished"

_OPTION_KEYS = (
    "order_mode",
    "rounds",
    "tokens",
    "reserve_to_second_last",
    "dice",
    "reserve",
    "absent",
    "campaign",
)

# --- options -------------------------------------------------------------------------------


@dataclass(frozen=True)
class FirstPlayerOptions:
    """The options table of rules/first-player.md section 2. ``dice`` holds (member, count)
    pairs in the order given; members not listed start with 3 dice."""

    order_mode: str = "seating"
    rounds: int = 1
    tokens: bool = False
    reserve_to_second_last: bool = False
    dice: tuple[tuple[str, int], ...] = ()
    reserve: int = 0
    absent: tuple[str, ...] = ()
    campaign: bool = True

    @property
    def free(self) -> bool:
        return self.order_mode == "free"

    def listed(self, name: str) -> int | None:
        """The count ``dice`` gives ``name`` (any case), or None if not listed."""
        for member, count in self.dice:
            if member.lower() == name.lower():
                return count
        return None

    def as_dict(self) -> dict[str, JSON]:
        return {
            "order_mode": self.order_mode,
            "rounds": self.rounds,
            "tokens": self.tokens,
            "reserve_to_second_last": self.reserve_to_second_last,
            "dice": dict(self.dice),
            "reserve": self.reserve,
            "absent": list(self.absent),
            "campaign": self.campaign,
        }


def _name(key: str, value: JSON) -> str:
    if not isinstance(value, str) or not value.strip():
        raise OptionsError(
            _("option %(key)s: %(value)s is not a member's name", key=key, value=repr(value))
        )
    return value


def _dice_option(value: JSON) -> tuple[tuple[str, int], ...]:
    if not isinstance(value, Mapping):
        raise OptionsError(_("option dice must map each member's name to a dice count 0-30"))
    pairs: list[tuple[str, int]] = []
    seen: set[str] = set()
    for member, count in value.items():
        name = _name("dice", member)
        if name.lower() in seen:
            raise OptionsError(_("option dice lists %(name)s twice", name=name))
        seen.add(name.lower())
        pairs.append((name, option_int(f"dice of {name}", count, 0, MAX_DICE)))
    return tuple(pairs)


def _absent_option(value: JSON) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        raise OptionsError(_("option absent must be a list of members' names"))
    names: list[str] = []
    for member in value:
        name = _name("absent", member)
        if name.lower() in {n.lower() for n in names}:
            raise OptionsError(_("option absent lists %(name)s twice", name=name))
        names.append(name)
    return tuple(names)


def parse_options(data: Mapping[str, JSON]) -> FirstPlayerOptions:
    """Options from a dict: defaults filled in; OptionsError on unknown keys or values."""
    check_option_keys("The First Player", data, _OPTION_KEYS)
    mode = data.get("order_mode", "seating")
    if not isinstance(mode, str) or mode not in ORDER_MODES:
        raise OptionsError(
            _("option order_mode must be seating or free, not %(mode)s", mode=repr(mode))
        )
    return FirstPlayerOptions(
        order_mode=mode,
        rounds=option_int("rounds", data.get("rounds", 1), 1, MAX_ROUNDS),
        tokens=option_flag("tokens", data.get("tokens", False)),
        reserve_to_second_last=option_flag(
            "reserve_to_second_last", data.get("reserve_to_second_last", False)
        ),
        dice=_dice_option(data.get("dice", {})),
        reserve=option_int("reserve", data.get("reserve", 0), 0, MAX_RESERVE),
        absent=_absent_option(data.get("absent", [])),
        campaign=option_flag("campaign", data.get("campaign", True)),
    )


SETTINGS = single_profile(
    "The First Player",
    _("A quick dice game before the real one decides who starts it; dice counts carry over "
      "from night to night. 2 to 20 players."),
    Option("order_mode", _("The real game's order"), kind="choice",
           choices=(("seating", _("by seats, starting from the winner")),
                    ("free", _("by the full ranking")))),
    Option("rounds", _("Real games tonight"), _("One round of The First Player per real game."),
           low=1, high=MAX_ROUNDS),
    Option("tokens", _("+1 tokens"), _("The token variant: add 1 to one of your dice."),
           kind="flag"),
    Option("reserve_to_second_last", _("Reserve die to the second-to-last"), _("With 4 or 5 "
           "players, a reserve die goes to the second-to-last player instead of a token."),
           kind="flag"),
    Option("dice", _("Dice at the start"), _("One player per line: name and count, e.g. "
           "\"Ann 4\"; anyone not listed starts with 3."), kind="name_counts", high=MAX_DICE),
    Option("reserve", _("Dice in the reserve"), low=0, high=MAX_RESERVE),
    Option("absent", _("Absent members"), _("Members missing tonight, separated by commas; "
           "each with a die moves one to the reserve."), kind="names"),
    Option("campaign", _("Campaign mode"), _("Counts and reserve carry over to the next night."),
           kind="flag"),
)  # fmt: skip


# --- orders --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Line:
    """One order line.

    ``give``: ``seat`` the recipient, ``count`` how many, ``unit`` "dice" or "token".
    ``ready``. ``roll``: ``count`` (None: all). ``reroll``: ``values`` = (the value set
    aside,). ``arrange``: ``values`` left to right (empty: high to low). ``token``:
    ``values`` the positions, 1 = leftmost (empty: ``token none``).
    """

    verb: str
    seat: int | None = None
    count: int | None = None
    unit: str = ""
    values: tuple[int, ...] = ()


@dataclass(frozen=True)
class FirstPlayerOrder:
    lines: tuple[Line, ...] = ()


def _numbers(values: Sequence[int]) -> str:
    return " ".join(str(value) for value in values)


def _amount(count: int, unit: str) -> str:
    """A gift's amount as an order writes it: "1 die", "2 dice", "1 token"."""
    return counted(count, "die", "dice") if unit == "dice" else counted(count, "token")


def line_text(players: Sequence[str], line: Line) -> str:
    """The line as the engine writes it; ``parse`` reads it back."""
    if line.verb == "give":
        assert line.seat is not None and line.count is not None
        return f"give {players[line.seat]} {_amount(line.count, line.unit)}"
    if line.verb == "roll":
        return "roll all" if line.count is None else f"roll {line.count}"
    if line.verb == "reroll":
        return f"reroll set-aside {line.values[0]}"
    if line.verb == "arrange":
        return f"arrange {_numbers(line.values)}" if line.values else "arrange desc"
    if line.verb == "token":
        return f"token {_numbers(line.values)}" if line.values else "token none"
    return line.verb


def _where(texts: Sequence[str], index: int) -> str:
    """How a message names its line: the line itself, or its number and text."""
    if len(texts) == 1:
        return texts[0]
    return _("line %(number)d (%(line)s)", number=index + 1, line=texts[index])


def _at(where: str, message: str) -> Text:
    """``message`` about the line named ``where``."""
    return _("%(where)s: %(message)s", where=where, message=message)


def _count(word: str, where: str, unit: str) -> int:
    number = order_number(word)
    if number is None:
        if unit == "dice":
            message = _(
                "%(word)s is not a number of dice; write it in the digits 0-9", word=repr(word)
            )
        else:
            message = _(
                "%(word)s is not a number of token; write it in the digits 0-9", word=repr(word)
            )
        raise OrderError(_at(where, message))
    return number


def _face(word: str, where: str) -> int:
    number = order_number(word)
    if number is None or not 1 <= number <= SIDES:
        raise OrderError(_at(where, _("%(word)s is not a die value 1-6", word=repr(word))))
    return number


_SYNTAX = _(
    "the orders are %(orders)s",
    orders="give <player> <n> dice, give <player> <n> tokens, ready, roll <n>, roll all, "
    "reroll set-aside <value>, arrange <values>, arrange desc, token <positions>, token none",
)


def parse_line(players: Sequence[str], text: str, where: str) -> Line:
    """One normalised line (order_lines) as a Line; OrderError for bad syntax."""
    words = text.split()
    verb, rest = words[0], words[1:]
    parse = _VERBS.get(verb)
    if parse is None:
        raise OrderError(_at(where, _("unknown order; %(syntax)s", syntax=_SYNTAX)))
    return parse(players, rest, where)


def _give(players: Sequence[str], rest: list[str], where: str) -> Line:
    if len(rest) < 3 or rest[-1] not in ("dice", "die", "token", "tokens"):
        raise OrderError(_at(where, _("write give <player> <n> dice (or tokens)")))
    name = " ".join(rest[:-2])
    seats = [seat for seat, player in enumerate(players) if player.lower() == name]
    if not seats:
        raise OrderError(
            _at(
                where,
                _(
                    "%(name)s is not a player of this game (players: %(players)s)",
                    name=name,
                    players=", ".join(players),
                ),
            )
        )
    unit = "dice" if rest[-1] in ("dice", "die") else "token"
    count = _count(rest[-2], where, unit)
    if count < 1:
        least = _gift_words(1, unit)
        raise OrderError(_at(where, _("a gift needs at least %(gift)s", gift=least)))
    return Line("give", seat=seats[0], count=count, unit=unit)


def _ready(players: Sequence[str], rest: list[str], where: str) -> Line:
    if rest:
        raise OrderError(_at(where, _("ready takes nothing after it")))
    return Line("ready")


def _roll(players: Sequence[str], rest: list[str], where: str) -> Line:
    if len(rest) != 1:
        raise OrderError(_at(where, _("write roll <n> or roll all")))
    if rest[0] == "all":
        return Line("roll")
    return Line("roll", count=_count(rest[0], where, "dice"))


def _reroll(players: Sequence[str], rest: list[str], where: str) -> Line:
    if rest[:2] == ["set", "aside"]:
        rest = ["set-aside", *rest[2:]]
    if len(rest) != 2 or rest[0] != "set-aside":
        raise OrderError(_at(where, _("write reroll set-aside <value>")))
    return Line("reroll", values=(_face(rest[1], where),))


def _arrange(players: Sequence[str], rest: list[str], where: str) -> Line:
    if not rest:
        raise OrderError(_at(where, _("write arrange <values> or arrange desc")))
    if rest == ["desc"]:
        return Line("arrange")
    return Line("arrange", values=tuple(_face(word, where) for word in rest))


def _token(players: Sequence[str], rest: list[str], where: str) -> Line:
    if not rest:
        raise OrderError(_at(where, _("write token <position> ... or token none")))
    if rest == ["none"]:
        return Line("token")
    positions: list[int] = []
    for word in rest:
        position = order_number(word)
        if position is None or position < 1:
            raise OrderError(
                _at(where, _("%(word)s is not a die position (1 = leftmost)", word=repr(word)))
            )
        positions.append(position)
    return Line("token", values=tuple(positions))


# Each verb's reader: the players' names, the words after the verb, where the line is.
_VERBS: dict[str, Callable[[Sequence[str], list[str], str], Line]] = {
    "give": _give,
    "ready": _ready,
    "roll": _roll,
    "reroll": _reroll,
    "arrange": _arrange,
    "token": _token,
}


# --- state ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Die:
    """An arranged die. ``token``: a +1 token sits on it now; ``marked``: it has taken a token
    this round (a token spent by a tiebreak reroll still marks it, F-19)."""

    value: int
    token: bool = False
    marked: bool = False

    @property
    def shown(self) -> int:
        return self.value + int(self.token)

    def text(self) -> str:
        return f"{self.value}+1" if self.token else str(self.value)


@dataclass(frozen=True)
class Cup:
    """One participant's rolling in COMMIT. ``rolls`` counts the roll and reroll lines
    applied (0: not rolled); ``row`` is the arrangement (empty until arranged);
    ``secret_tokens`` the tokens placed before the reveal."""

    rolls: int = 0
    hand: tuple[int, ...] = ()
    set_aside: tuple[int, ...] = ()
    row: tuple[Die, ...] = ()
    secret_tokens: int = 0
    defaulted: bool = False


@dataclass(frozen=True)
class Movement:
    """Dice (or tokens) changing hands. ``giver``/``receiver``: a member's name, "reserve",
    or None for the box (dice created or removed by the rules). ``round`` 0 is the opening."""

    round: int
    reason: str
    giver: str | None
    receiver: str | None
    count: int
    unit: str = "dice"


@dataclass(frozen=True)
class Absentee:
    name: str
    had: int
    count: int


@dataclass(frozen=True)
class RoundResult:
    """A finished round: the actual order (seats), each seat's final row (empty for players
    who sat out), the temporary dice (seat, last value) and whether the host set the order."""

    number: int
    order: tuple[int, ...]
    rows: tuple[tuple[Die, ...], ...]
    temporary: tuple[tuple[int, int], ...] = ()
    host: bool = False


@dataclass(frozen=True)
class FirstPlayerState:
    options: FirstPlayerOptions
    players: tuple[str, ...]
    counts: tuple[int, ...]
    tokens: tuple[int, ...]
    reserve: int
    absent: tuple[Absentee, ...]
    round: int
    phase: str
    ready: tuple[bool, ...]
    participants: tuple[int, ...] = ()
    cups: tuple[Cup, ...] = ()
    revealed: bool = False
    window: tuple[int, ...] = ()
    window_orders: tuple[tuple[int, ...] | None, ...] = ()
    ranking: tuple[int, ...] = ()
    group: tuple[int, ...] = ()
    tiebreaks: int = 0
    history: tuple[RoundResult, ...] = ()
    movements: tuple[Movement, ...] = ()

    @property
    def finished(self) -> bool:
        return self.phase == FINISHED


def _seq(row: Sequence[Die]) -> tuple[int, ...]:
    """The comparison key (RP-4): Python compares a tuple that is a prefix of another as
    smaller, which is "a missing position counts 0" since every die shows at least 1."""
    return tuple(die.shown for die in row)


def _row_text(row: Sequence[Die]) -> str:
    return " ".join(die.text() for die in row)


def _can_take_token(row: Sequence[Die]) -> bool:
    return any(not die.marked and die.value < SIDES for die in row)


def tracker(state: FirstPlayerState) -> dict[str, dict[str, JSON]]:
    """The tracker column: every member's count and note ("4(-1)" for an absence, F-14)."""
    column: dict[str, dict[str, JSON]] = {}
    for seat, name in enumerate(state.players):
        column[name] = {"count": state.counts[seat], "note": str(state.counts[seat])}
    for member in state.absent:
        note = f"{member.had}(-1)" if member.had else str(member.count)
        column[member.name] = {"count": member.count, "note": note}
    return column


def rebuild(
    options: FirstPlayerOptions, members: Sequence[str], movements: Sequence[Movement]
) -> tuple[dict[str, int], int]:
    """Dice counts (by member) and the reserve rebuilt from the options and the movements:
    what a ledger holds. Members not listed in ``dice`` start from 0 (their 3 dice arrive as
    a "new member" movement)."""
    counts = {name: options.listed(name) or 0 for name in members}
    reserve = options.reserve
    for move in movements:
        if move.unit != "dice":
            continue
        if move.giver == RESERVE:
            reserve -= move.count
        elif move.giver is not None:
            counts[move.giver] -= move.count
        if move.receiver == RESERVE:
            reserve += move.count
        elif move.receiver is not None:
            counts[move.receiver] += move.count
    return counts, reserve


# --- the web form's menu (FirstPlayerEngine.candidates) ------------------------------------


def _gift_words(count: int, unit: str) -> Text:
    """A gift's amount in words: "1 die", "2 dice", "1 token"."""
    if unit == "dice":
        return ngettext("%(count)d die", "%(count)d dice", count)
    return ngettext("%(count)d token", "%(count)d tokens", count)


def _roll_candidates(owned: int) -> list[tuple[str, str]]:
    rolls = [
        (f"roll {n}", ngettext("Roll %(count)d die", "Roll %(count)d dice", n))
        for n in range(1, owned + 1)
    ]
    return [*rolls, ("roll all", _("Roll all your dice (%(count)d)", count=owned))]


def _reroll_candidates(hand: Sequence[int]) -> list[tuple[str, str]]:
    """One set-aside reroll per distinct value in hand, highest first (RP-2: only while at
    least two dice are in hand)."""
    if len(hand) < 2:
        return []
    return [
        (
            f"reroll set-aside {value}",
            _("Set aside a %(value)d and reroll the rest", value=value),
        )
        for value in sorted(set(hand), reverse=True)
    ]


def _token_candidates(row: Sequence[Die]) -> list[tuple[str, str]]:
    """A token on each arranged die that can take one (not a 6, no token yet this round)."""
    return [
        (
            f"token {position}",
            _(
                "Put a token on die %(position)d (%(value)d becomes %(higher)d)",
                position=position,
                value=die.value,
                higher=die.value + 1,
            ),
        )
        for position, die in enumerate(row, start=1)
        if not die.marked and die.value < SIDES
    ]


# --- the engine ----------------------------------------------------------------------------


class _Desk:
    """A participant's rolling while a message's lines are applied. Values are None while
    parse() checks lines that follow a roll of the same message (no die is drawn there)."""

    def __init__(self, cup: Cup, owned: int, tokens: int) -> None:
        self.owned = owned
        self.rolls = cup.rolls
        self.hand: list[int | None] = list(cup.hand)
        self.set_aside: list[int | None] = list(cup.set_aside)
        self.row: list[tuple[int | None, bool, bool]] = [
            (die.value, die.token, die.marked) for die in cup.row
        ]
        self.secret = cup.secret_tokens
        self.tokens_left = tokens - cup.secret_tokens

    def copy(self) -> _Desk:
        return copy.deepcopy(self)

    def known(self, values: Sequence[int | None]) -> list[int] | None:
        return None if any(v is None for v in values) else [int(v or 0) for v in values]

    def cup(self, defaulted: bool) -> Cup:
        hand = self.known(self.hand)
        aside = self.known(self.set_aside)
        values = self.known([value for value, __, __ in self.row])
        assert hand is not None and aside is not None and values is not None
        row = tuple(
            Die(value, token, marked)
            for value, (__, token, marked) in zip(values, self.row, strict=True)
        )
        return Cup(self.rolls, tuple(hand), tuple(aside), row, self.secret, defaulted)


# The private events told to a seat in the second person, as anyone else reads them (the
# replay of a finished game, the GM's log): ``Engine.onlooker_words``, ``%(player)s`` the
# seat's name.
ONLOOKER: dict[str, str] = {
    "round %(round)d: you roll %(dice)s": _("round %(round)d: %(player)s rolls %(dice)s"),
    "round %(round)d: you set a %(value)d aside and reroll: %(dice)s": _(
        "round %(round)d: %(player)s sets a %(value)d aside and rerolls: %(dice)s"
    ),
    "round %(round)d: you arrange %(dice)s": _("round %(round)d: %(player)s arranges %(dice)s"),
    "round %(round)d: your arrangement with tokens: %(dice)s": _(
        "round %(round)d: %(player)s's arrangement with tokens: %(dice)s"
    ),
    "round %(round)d token window: your order is %(order)s": _(
        "round %(round)d token window: %(player)s's order is %(order)s"
    ),
}


class FirstPlayerEngine(JsonCodec):
    key = "first-player"
    title = "The First Player"
    min_players = MIN_PLAYERS
    max_players = MAX_PLAYERS
    # Every player gifts, rolls and plays tokens in the same windows: every step owes
    # something of every seat, so a seat's reports come by default every step.
    sequential = False
    step_word = "postal turn"
    onlooker_words: Mapping[str, str] = ONLOOKER

    State = FirstPlayerState
    Order = FirstPlayerOrder

    def options(self, data: Mapping[str, JSON]) -> FirstPlayerOptions:
        return parse_options(data)

    # --- opening the night -----------------------------------------------------------------

    def start(
        self, options: FirstPlayerOptions, players: Sequence[str], dice: Dice
    ) -> tuple[FirstPlayerState, list[Event]]:
        if not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
            raise OptionsError(
                _(
                    "The First Player takes %(low)d to %(high)d players, not %(count)d",
                    low=MIN_PLAYERS,
                    high=MAX_PLAYERS,
                    count=len(players),
                )
            )
        playing = {name.lower() for name in players}
        for name in (*players, *options.absent):
            if name.lower() == RESERVE:
                raise OptionsError(_("the name reserve is kept for the reserve row of the tracker"))
        for name in options.absent:
            if name.lower() in playing:
                raise OptionsError(
                    _("option absent: %(name)s is both absent and playing", name=name)
                )
        members = playing | {name.lower() for name in options.absent}
        for name, __ in options.dice:
            if name.lower() not in members:
                raise OptionsError(
                    _("option dice: %(name)s is neither a player nor absent", name=name)
                )
        movements: list[Movement] = []
        events: list[Event] = []
        reserve = options.reserve
        absent: list[Absentee] = []
        for name in options.absent:
            had = self._opening_count(options, name, movements)
            if had:
                movements.append(Movement(0, "absence", name, RESERVE, 1))
                events.append(
                    Event(
                        _(
                            "%(name)s is absent: one die to the reserve (%(had)d -> %(left)d)",
                            name=name,
                            had=had,
                            left=had - 1,
                        )
                    )
                )
                reserve += 1
            else:
                events.append(Event(_("%(name)s is absent with no dice: nothing moves", name=name)))
            absent.append(Absentee(name, had, max(had - 1, 0)))
        counts = tuple(self._opening_count(options, name, movements) for name in players)
        for move in movements:
            if move.reason == "new member":
                events.append(
                    Event(_("%(name)s joins the campaign with 3 dice", name=move.receiver))
                )
        if not any(counts):
            raise OptionsError(_("nobody holds a die: the night cannot start"))
        seats = len(players)
        state = FirstPlayerState(
            options=options,
            players=tuple(players),
            counts=counts,
            tokens=(0,) * seats,
            reserve=reserve,
            absent=tuple(absent),
            round=0,
            phase=GIFTS,
            ready=(False,) * seats,
            movements=tuple(movements),
        )
        events.append(Event(_("the night opens: %(counts)s", counts=self._counts_text(state))))
        state, opened = self._open_round(state)
        return state, events + opened

    @staticmethod
    def _opening_count(options: FirstPlayerOptions, name: str, movements: list[Movement]) -> int:
        listed = options.listed(name)
        if listed is not None:
            return listed
        movements.append(Movement(0, "new member", None, name, START_DICE))
        return START_DICE

    def _counts_text(self, state: FirstPlayerState) -> Text:
        parts = [f"{name} {count}" for name, count in zip(state.players, state.counts, strict=True)]
        counts, reserve = ", ".join(parts), state.reserve
        if not state.options.tokens:
            return _("%(counts)s; reserve %(reserve)d", counts=counts, reserve=reserve)
        held = [
            f"{name} {tokens}"
            for name, tokens in zip(state.players, state.tokens, strict=True)
            if tokens
        ]
        return _(
            "%(counts)s; reserve %(reserve)d; tokens: %(tokens)s",
            counts=counts,
            reserve=reserve,
            tokens=", ".join(held) if held else _("none"),
        )

    def _open_round(self, state: FirstPlayerState) -> tuple[FirstPlayerState, list[Event]]:
        seats = len(state.players)
        state = replace(
            state,
            round=state.round + 1,
            phase=GIFTS,
            ready=(False,) * seats,
            participants=(),
            cups=(),
            revealed=False,
            window=(),
            window_orders=(),
            ranking=(),
            group=(),
            tiebreaks=0,
        )
        return state, [
            Event(
                _(
                    "round %(round)d of %(rounds)d: the gift window is open "
                    "(give <player> <n> dice, or ready)",
                    round=state.round,
                    rounds=state.options.rounds,
                )
            )
        ]

    # --- prompts ---------------------------------------------------------------------------

    def prompts(self, state: FirstPlayerState) -> list[Prompt]:
        k = state.round
        if state.phase == GIFTS:
            return [self._gift_prompt(state, seat) for seat in range(len(state.players))]
        if state.phase == COMMIT:
            prompts: list[Prompt] = []
            for seat in state.participants:
                cup = state.cups[seat]
                if not cup.rolls:
                    owned = state.counts[seat]
                    hint = _(
                        "round %(round)d: roll <n> (1 to %(owned)d) or roll all",
                        round=k,
                        owned=owned,
                    )
                    prompts.append(Prompt(seat, _("roll"), hint))
                elif not cup.row:
                    hint = _(
                        "round %(round)d: reroll set-aside <value> or arrange <values> / "
                        "arrange desc (after roll %(rolls)d)",
                        round=k,
                        rolls=cup.rolls,
                    )
                    prompts.append(Prompt(seat, _("reroll or arrange"), hint))
                elif state.options.tokens and state.tokens[seat]:
                    hint = _(
                        "round %(round)d: arranged; token <position> is possible until rolling "
                        "closes",
                        round=k,
                    )
                    prompts.append(Prompt(seat, _("token"), hint))
            return prompts
        if state.phase in (TOKENS, TIEBREAK):
            if state.phase == TOKENS:
                hint = _(
                    "round %(round)d token window after the reveal: token <positions> or "
                    "token none",
                    round=k,
                )
            else:
                hint = _(
                    "round %(round)d token window after tiebreak roll %(number)d: "
                    "token <positions> or token none",
                    round=k,
                    number=state.tiebreaks,
                )
            return [Prompt(seat, _("token"), hint) for seat in state.window]
        return []

    def _gift_prompt(self, state: FirstPlayerState, seat: int) -> Prompt:
        held = ngettext("you hold %(count)d die", "you hold %(count)d dice", state.counts[seat])
        if state.options.tokens:
            held = _(
                "%(dice)s and %(tokens)s",
                dice=held,
                tokens=_gift_words(state.tokens[seat], "token"),
            )
        if state.ready[seat]:
            return Prompt(
                seat,
                _("ready"),
                _(
                    "round %(round)d gifts: you are ready (%(held)s); "
                    "rolling starts when everyone is ready",
                    round=state.round,
                    held=held,
                ),
            )
        if state.options.tokens:
            hint = _(
                "round %(round)d gifts: give <player> <n> dice or tokens, or ready (%(held)s)",
                round=state.round,
                held=held,
            )
        else:
            hint = _(
                "round %(round)d gifts: give <player> <n> dice, or ready (%(held)s)",
                round=state.round,
                held=held,
            )
        return Prompt(seat, _("gifts or ready"), hint)

    # --- the web form's menu ----------------------------------------------------------------

    def candidates(self, state: FirstPlayerState, seat: int) -> list[tuple[str, str]]:
        """One-line orders a web form may offer ``seat`` now, as (text, label): more than
        are legal (the form keeps those ``submit`` accepts). Gifts and an arrangement of
        the player's own choosing are typed (or tapped) instead."""
        if state.phase == GIFTS:
            return [("ready", _("Ready: no more gifts from me"))]
        if state.phase == COMMIT and seat in state.participants:
            cup = state.cups[seat]
            if not cup.rolls:
                return _roll_candidates(state.counts[seat])
            if not cup.row:
                return [
                    *_reroll_candidates(cup.hand),
                    ("arrange desc", _("Arrange from high to low")),
                ]
            return _token_candidates(cup.row)
        if state.phase in (TOKENS, TIEBREAK) and seat in state.window:
            return [("token none", _("Use no token now")), *_token_candidates(state.cups[seat].row)]
        return []

    # --- orders ----------------------------------------------------------------------------

    def _expect(self, state: FirstPlayerState, seat: int) -> None:
        if not 0 <= seat < len(state.players):
            raise OrderError(_("there is no seat %(seat)d in this game", seat=seat))
        if state.finished:
            raise OrderError(_("the night is over; no order is expected from you"))
        if state.phase == COMMIT and seat not in state.participants:
            raise OrderError(_("no order is expected from you now: you have no dice this round"))
        if state.phase in (TOKENS, TIEBREAK) and seat not in state.window:
            raise OrderError(_("no order is expected from you now"))
        if state.phase == COMMIT:
            cup = state.cups[seat]
            if cup.row and not (state.options.tokens and state.tokens[seat]):
                raise OrderError(
                    _(
                        "no order is expected from you now: you have arranged; "
                        "the reveal comes when everyone has"
                    )
                )

    def parse(self, state: FirstPlayerState, seat: int, text: str) -> FirstPlayerOrder:
        self._expect(state, seat)
        texts = order_lines(text)
        if not texts:
            raise OrderError(_("the order is empty; %(syntax)s", syntax=_SYNTAX))
        lines = tuple(
            parse_line(state.players, line, _where(texts, index))
            for index, line in enumerate(texts)
        )
        order = FirstPlayerOrder(lines)
        self._apply(state, seat, order, None)
        return order

    def submit(
        self, state: FirstPlayerState, seat: int, order: FirstPlayerOrder, dice: Dice
    ) -> tuple[FirstPlayerState, list[Event]]:
        self._expect(state, seat)
        return self._apply(state, seat, order, dice)

    def _apply(
        self,
        state: FirstPlayerState,
        seat: int,
        order: FirstPlayerOrder,
        dice: Dice | None,
    ) -> tuple[FirstPlayerState, list[Event]]:
        """Apply the lines in order; with ``dice`` None only check them (parse)."""
        if not order.lines:
            raise OrderError(_("the order is empty; %(syntax)s", syntax=_SYNTAX))
        texts = [line_text(state.players, line) for line in order.lines]
        if state.phase == GIFTS:
            return self._gifts(state, seat, order.lines, texts)
        if state.phase == COMMIT:
            return self._commit(state, seat, order.lines, texts, dice)
        return self._window_order(state, seat, order.lines, texts)

    # --- GIFTS -----------------------------------------------------------------------------

    def _gifts(
        self, state: FirstPlayerState, seat: int, lines: Sequence[Line], texts: Sequence[str]
    ) -> tuple[FirstPlayerState, list[Event]]:
        counts, tokens = list(state.counts), list(state.tokens)
        ready = list(state.ready)
        moves: list[Movement] = []
        events: list[Event] = []
        name = state.players[seat]
        for index, line in enumerate(lines):
            where = _where(texts, index)
            if line.verb == "ready":
                if not ready[seat]:
                    events.append(
                        Event(_("round %(round)d: %(name)s is ready", round=state.round, name=name))
                    )
                ready[seat] = True
                continue
            if line.verb != "give":
                raise OrderError(
                    _at(
                        where,
                        _(
                            "rolling has not started: the gift window is open; "
                            "send ready to close it sooner"
                        ),
                    )
                )
            assert line.seat is not None and line.count is not None
            if ready[seat]:
                raise OrderError(
                    _at(where, _("you have sent ready: no more gifts from you this round"))
                )
            if line.seat == seat:
                raise OrderError(_at(where, _("a gift goes to another player")))
            receiver = state.players[line.seat]
            if line.unit == "dice":
                held = counts[seat]
                if held - line.count < 1:
                    kept = max(held - line.count, 0)
                    raise OrderError(
                        _at(
                            where,
                            _(
                                "gift refused: you would keep %(kept)d dice (you hold %(held)d)",
                                kept=kept,
                                held=held,
                            ),
                        )
                    )
                counts[seat] -= line.count
                counts[line.seat] += line.count
            else:
                if not state.options.tokens:
                    raise OrderError(_at(where, _("tokens are not in play in this game")))
                if tokens[seat] < line.count:
                    raise OrderError(
                        _at(
                            where,
                            ngettext(
                                "gift refused: you hold %(count)d token, not %(gift)d",
                                "gift refused: you hold %(count)d tokens, not %(gift)d",
                                tokens[seat],
                                gift=line.count,
                            ),
                        )
                    )
                tokens[seat] -= line.count
                tokens[line.seat] += line.count
            moves.append(Movement(state.round, "gift", name, receiver, line.count, line.unit))
            gift = _gift_words(line.count, line.unit)
            events.append(
                Event(
                    _(
                        "round %(round)d: %(name)s gives %(receiver)s %(gift)s",
                        round=state.round,
                        name=name,
                        receiver=receiver,
                        gift=gift,
                    )
                )
            )
        state = replace(
            state,
            counts=tuple(counts),
            tokens=tuple(tokens),
            ready=tuple(ready),
            movements=state.movements + tuple(moves),
        )
        if all(state.ready):
            opened, more = self._open_commit(state)
            return opened, events + more
        return state, events

    def _open_commit(self, state: FirstPlayerState) -> tuple[FirstPlayerState, list[Event]]:
        """COMMIT(k): participants fixed now, after the round's gifts (6.1)."""
        participants = tuple(seat for seat, count in enumerate(state.counts) if count > 0)
        sitting = [
            state.players[seat] for seat in range(len(state.players)) if seat not in participants
        ]
        text = _("round %(round)d: the gift window is closed; rolling is open", round=state.round)
        if sitting:
            text = _(
                "round %(round)d: the gift window is closed; rolling is open; "
                "sitting out without dice: %(names)s",
                round=state.round,
                names=", ".join(sitting),
            )
        state = replace(
            state,
            phase=COMMIT,
            participants=participants,
            cups=(Cup(),) * len(state.players),
        )
        return state, [Event(text)]

    # --- COMMIT ----------------------------------------------------------------------------

    def _commit(
        self,
        state: FirstPlayerState,
        seat: int,
        lines: Sequence[Line],
        texts: Sequence[str],
        dice: Dice | None,
        defaulted: bool = False,
    ) -> tuple[FirstPlayerState, list[Event]]:
        desk = _Desk(state.cups[seat], state.counts[seat], state.tokens[seat])
        events: list[Event] = []
        drawn = False
        draw: Callable[[], int | None] = (
            (lambda: None) if dice is None else (lambda: dice.draw(SIDES))
        )
        for index, line in enumerate(lines):
            before, done = desk.copy(), len(events)
            try:
                drawn = self._commit_line(state, seat, desk, line, draw, events) or drawn
            except OrderError as error:
                message = _at(_where(texts, index), error.message)
                if not drawn or dice is None:
                    raise OrderError(message) from None
                partial, more = self._after_commit(state, seat, before, events[:done], dice, False)
                raise OrderError(
                    _(
                        "%(message)s (the lines before it stand: your dice were rolled)",
                        message=message,
                    ),
                    applied=(partial, more),
                ) from None
        if dice is None:
            return state, []
        return self._after_commit(state, seat, desk, events, dice, defaulted)

    def _after_commit(
        self,
        state: FirstPlayerState,
        seat: int,
        desk: _Desk,
        events: list[Event],
        dice: Dice,
        defaulted: bool,
    ) -> tuple[FirstPlayerState, list[Event]]:
        cups = list(state.cups)
        cups[seat] = desk.cup(defaulted)
        state = replace(state, cups=tuple(cups))
        if all(state.cups[s].row for s in state.participants):
            closed, more = self._close_commit(state, dice)
            return closed, events + more
        return state, events

    def _commit_line(
        self,
        state: FirstPlayerState,
        seat: int,
        desk: _Desk,
        line: Line,
        draw: Callable[[], int | None],
        events: list[Event],
    ) -> bool:
        """Apply one COMMIT line to ``desk``; True if it drew dice."""
        if line.verb in ("give", "ready"):
            raise OrderError(_("gifts are closed until this round is resolved"))
        if line.verb == "roll":
            self._commit_roll(state, seat, desk, line, draw, events)
            return True
        if line.verb == "reroll":
            self._commit_reroll(state, seat, desk, line, draw, events)
            return True
        if line.verb == "arrange":
            self._commit_arrange(state, seat, desk, line, events)
            return False
        if line.verb == "token":
            self._commit_token(state, seat, desk, line, events)
            return False
        raise OrderError(_("this order is not for rolling"))

    def _commit_roll(
        self,
        state: FirstPlayerState,
        seat: int,
        desk: _Desk,
        line: Line,
        draw: Callable[[], int | None],
        events: list[Event],
    ) -> None:
        """roll <n>: the seat's first roll, of ``line.count`` dice (all it owns if None)."""
        k, name, me = state.round, state.players[seat], (seat,)
        if desk.rolls:
            raise OrderError(_("you have already rolled"))
        count = desk.owned if line.count is None else line.count
        if not 1 <= count <= desk.owned:
            raise OrderError(
                ngettext(
                    "you own %(count)d die: roll 1 to %(count)d",
                    "you own %(count)d dice: roll 1 to %(count)d",
                    desk.owned,
                )
            )
        desk.hand = [draw() for __ in range(count)]
        desk.rolls = 1
        shown = self._shown(desk.hand)
        events.append(Event(_("round %(round)d: you roll %(dice)s", round=k, dice=shown), to=me))
        events.append(Event(_("round %(round)d: %(name)s has rolled", round=k, name=name)))

    def _commit_reroll(
        self,
        state: FirstPlayerState,
        seat: int,
        desk: _Desk,
        line: Line,
        draw: Callable[[], int | None],
        events: list[Event],
    ) -> None:
        """reroll set-aside <value>: one die of the hand set aside, the rest rolled again."""
        k, name, me = state.round, state.players[seat], (seat,)
        self._rolled_not_arranged(desk)
        value = line.values[0]
        if len(desk.hand) < 2:
            raise OrderError(_("you need at least 2 dice in hand to set one aside"))
        known = desk.known(desk.hand)
        if known is not None and value not in known:
            raise OrderError(
                _(
                    "you hold no %(value)d (your dice: %(dice)s)",
                    value=value,
                    dice=_numbers(known),
                )
            )
        desk.set_aside.append(value)
        desk.hand = [draw() for __ in range(len(desk.hand) - 1)]
        desk.rolls += 1
        events.append(
            Event(
                _(
                    "round %(round)d: you set a %(value)d aside and reroll: %(dice)s",
                    round=k,
                    value=value,
                    dice=self._shown(desk.hand),
                ),
                to=me,
            )
        )
        events.append(
            Event(_("round %(round)d: %(name)s sets a die aside and rerolls", round=k, name=name))
        )

    def _commit_arrange(
        self, state: FirstPlayerState, seat: int, desk: _Desk, line: Line, events: list[Event]
    ) -> None:
        """arrange <values> (or desc): the hand laid out in a row, left to right."""
        k, name, me = state.round, state.players[seat], (seat,)
        self._rolled_not_arranged(desk)
        known = desk.known(desk.hand)
        if not line.values:
            values: list[int | None] = (
                list(sorted(known, reverse=True)) if known is not None else list(desk.hand)
            )
        else:
            yours: str = (
                _numbers(known)
                if known is not None
                else ngettext(
                    "the %(count)d you will hold", "the %(count)d you will hold", len(desk.hand)
                )
            )
            if len(line.values) != len(desk.hand) or (
                known is not None and sorted(line.values) != sorted(known)
            ):
                raise OrderError(_("arrange must use exactly your dice: %(dice)s", dice=yours))
            values = list(line.values)
        desk.row = [(value, False, False) for value in values]
        events.append(
            Event(
                _("round %(round)d: you arrange %(dice)s", round=k, dice=self._shown(values)),
                to=me,
            )
        )
        events.append(Event(_("round %(round)d: %(name)s has arranged", round=k, name=name)))

    def _commit_token(
        self, state: FirstPlayerState, seat: int, desk: _Desk, line: Line, events: list[Event]
    ) -> None:
        """token <positions>: +1 tokens put on dice of the arranged row."""
        k, me = state.round, (seat,)
        if not state.options.tokens:
            raise OrderError(_("tokens are not in play in this game"))
        if not line.values:
            raise OrderError(_("token none is only for token windows"))
        if not desk.row:
            raise OrderError(_("arrange first: a token goes on an arranged die"))
        for position in line.values:
            self._check_token(
                [(value, marked) for value, __, marked in desk.row], position, desk.tokens_left
            )
            face, __, __ = desk.row[position - 1]
            desk.row[position - 1] = (face, True, True)
            desk.tokens_left -= 1
            desk.secret += 1
        shown = " ".join(
            "?" if value is None else (f"{value}+1" if token else str(value))
            for value, token, __ in desk.row
        )
        events.append(
            Event(
                _(
                    "round %(round)d: your arrangement with tokens: %(dice)s",
                    round=k,
                    dice=shown,
                ),
                to=me,
            )
        )

    @staticmethod
    def _shown(values: Sequence[int | None]) -> str:
        return " ".join("?" if value is None else str(value) for value in values)

    @staticmethod
    def _rolled_not_arranged(desk: _Desk) -> None:
        if not desk.rolls:
            raise OrderError(_("you have not rolled yet: roll <n> first"))
        if desk.row:
            raise OrderError(_("you have already arranged"))

    @staticmethod
    def _check_token(row: Sequence[tuple[int | None, bool]], position: int, left: int) -> None:
        """The token checks of 6.1, in order: position, no token yet, not a 6, a token held."""
        if not 1 <= position <= len(row):
            raise OrderError(
                ngettext(
                    "there is no die %(position)d: your row has %(count)d die",
                    "there is no die %(position)d: your row has %(count)d dice",
                    len(row),
                    position=position,
                )
            )
        value, marked = row[position - 1]
        if marked:
            raise OrderError(
                _("die %(position)d already has a token this round", position=position)
            )
        if value == SIDES:
            raise OrderError(_("die %(position)d shows 6 and cannot go higher", position=position))
        if left < 1:
            raise OrderError(_("you hold no token"))

    def _close_commit(
        self, state: FirstPlayerState, dice: Dice
    ) -> tuple[FirstPlayerState, list[Event]]:
        """REVEAL(k): every row published; secret tokens leave the public counts."""
        tokens = list(state.tokens)
        moves: list[Movement] = []
        rows: list[str] = []
        for seat in state.participants:
            cup = state.cups[seat]
            name = state.players[seat]
            rows.append(f"{name} {_row_text(cup.row)}")
            if cup.secret_tokens:
                tokens[seat] -= cup.secret_tokens
                moves.append(
                    Movement(state.round, "token used", name, None, cup.secret_tokens, "token")
                )
        state = replace(
            state,
            tokens=tuple(tokens),
            revealed=True,
            movements=state.movements + tuple(moves),
        )
        events = [
            Event(_("round %(round)d reveal: %(rows)s", round=state.round, rows="; ".join(rows)))
        ]
        if state.options.tokens:
            window = tuple(
                seat
                for seat in state.participants
                if state.tokens[seat] and _can_take_token(state.cups[seat].row)
            )
            if window:
                return self._open_window(state, TOKENS, window), events
        ranked, more = self._rank(state, dice)
        return ranked, events + more

    # --- token windows ---------------------------------------------------------------------

    @staticmethod
    def _open_window(
        state: FirstPlayerState, phase: str, window: tuple[int, ...]
    ) -> FirstPlayerState:
        return replace(
            state, phase=phase, window=window, window_orders=(None,) * len(state.players)
        )

    def _window_order(
        self, state: FirstPlayerState, seat: int, lines: Sequence[Line], texts: Sequence[str]
    ) -> tuple[FirstPlayerState, list[Event]]:
        """A sealed token order for the open window; it replaces the seat's earlier one."""
        row = state.cups[seat].row
        marks = [(die.value, die.marked) for die in row]
        positions: list[int] = []
        left = state.tokens[seat]
        none = False
        for index, line in enumerate(lines):
            where = _where(texts, index)
            if line.verb in ("give", "ready"):
                raise OrderError(_at(where, _("gifts are closed until this round is resolved")))
            if line.verb != "token":
                raise OrderError(
                    _at(where, _("rolling is closed; this window takes token lines only"))
                )
            if not line.values:
                none = True
            for position in line.values:
                try:
                    self._check_token(marks, position, left)
                except OrderError as error:
                    raise OrderError(_at(where, error.message)) from None
                marks[position - 1] = (row[position - 1].value, True)
                positions.append(position)
                left -= 1
            if none and positions:
                raise OrderError(
                    _at(where, _("token none cannot go with tokens in the same order"))
                )
        orders = list(state.window_orders)
        orders[seat] = tuple(positions)
        said = f"token {_numbers(positions)}" if positions else "token none"
        receipt = Event(
            _(
                "round %(round)d token window: your order is %(order)s",
                round=state.round,
                order=said,
            ),
            to=(seat,),
        )
        return replace(state, window_orders=tuple(orders)), [receipt]

    def _close_window(
        self, state: FirstPlayerState, dice: Dice
    ) -> tuple[FirstPlayerState, list[Event]]:
        cups, tokens = list(state.cups), list(state.tokens)
        moves: list[Movement] = []
        events: list[Event] = []
        for seat in state.window:
            positions = state.window_orders[seat] or ()
            name = state.players[seat]
            if not positions:
                events.append(
                    Event(
                        _("round %(round)d: %(name)s uses no token", round=state.round, name=name)
                    )
                )
                continue
            row = list(cups[seat].row)
            for position in positions:
                row[position - 1] = replace(row[position - 1], token=True, marked=True)
            cups[seat] = replace(cups[seat], row=tuple(row))
            tokens[seat] -= len(positions)
            moves.append(Movement(state.round, "token used", name, None, len(positions), "token"))
            events.append(
                Event(
                    ngettext(
                        "round %(round)d: %(name)s puts a token on die %(dice)s: %(row)s",
                        "round %(round)d: %(name)s puts a token on die %(dice)s: %(row)s",
                        len(positions),
                        round=state.round,
                        name=name,
                        dice=_numbers(positions),
                        row=_row_text(row),
                    )
                )
            )
        state = replace(
            state,
            cups=tuple(cups),
            tokens=tuple(tokens),
            movements=state.movements + tuple(moves),
            phase=RANKING,
            window=(),
            window_orders=(),
        )
        ranked, more = self._rank(state, dice)
        return ranked, events + more

    # --- RANK ------------------------------------------------------------------------------

    def _best(self, state: FirstPlayerState, seats: Sequence[int]) -> list[int]:
        top = max(_seq(state.cups[seat].row) for seat in seats)
        return [seat for seat in seats if _seq(state.cups[seat].row) == top]

    def _rank(self, state: FirstPlayerState, dice: Dice) -> tuple[FirstPlayerState, list[Event]]:
        """RANK(k): RP-4 to RP-6. Stops at a tiebreak token window; resumes from the state
        (``group``: a tied group that has rolled and waits to be compared)."""
        events: list[Event] = []
        state = replace(state, phase=RANKING)
        while True:
            if state.group:
                best = self._best(state, state.group)
                if len(best) == 1:
                    state = replace(state, ranking=(*state.ranking, best[0]), group=())
                    continue
                group = state.group
            else:
                remaining = [s for s in state.participants if s not in state.ranking]
                if not remaining or (state.ranking and not state.options.free):
                    break
                best = self._best(state, remaining)
                if len(best) == 1:
                    state = replace(state, ranking=(*state.ranking, best[0]))
                    continue
                group = tuple(best)
            state, rolled = self._tiebreak_roll(state, group, dice)
            events.extend(rolled)
            if state.options.tokens:
                window = tuple(
                    seat
                    for seat in group
                    if state.tokens[seat] and _can_take_token(state.cups[seat].row)
                )
                if window:
                    return self._open_window(state, TIEBREAK, window), events
        finished, more = self._finish_round(state, dice)
        return finished, events + more

    def _tiebreak_roll(
        self, state: FirstPlayerState, group: tuple[int, ...], dice: Dice
    ) -> tuple[FirstPlayerState, list[Event]]:
        """RP-5: every player of the tied group rolls their last die again, in seat order."""
        cups = list(state.cups)
        rolled: list[str] = []
        for seat in group:
            row = list(cups[seat].row)
            value = dice.draw(SIDES)
            row[-1] = Die(value, token=False, marked=row[-1].marked)
            cups[seat] = replace(cups[seat], row=tuple(row))
            rolled.append(f"{state.players[seat]} {value} ({_row_text(row)})")
        number = state.tiebreaks + 1
        state = replace(state, cups=tuple(cups), group=group, tiebreaks=number)
        return state, [
            Event(
                _(
                    "round %(round)d tiebreak roll %(number)d: %(rolls)s",
                    round=state.round,
                    number=number,
                    rolls="; ".join(rolled),
                )
            )
        ]

    def _temporary(
        self, state: FirstPlayerState, seats: Sequence[int], dice: Dice
    ) -> tuple[list[int], dict[int, int], list[Event]]:
        """Section 4.5: players without dice order themselves with one temporary die each,
        ranked like one-die sequences (RP-5, RP-6); no token goes on a temporary die."""
        values = {seat: dice.draw(SIDES) for seat in seats}
        rolls = [f"{state.players[s]} {values[s]}" for s in seats]
        events = [
            Event(
                _(
                    "round %(round)d temporary dice: %(rolls)s",
                    round=state.round,
                    rolls="; ".join(rolls),
                )
            )
        ]
        placed: list[int] = []
        group: list[int] = []
        while len(placed) < len(seats):
            pool = group or [s for s in seats if s not in placed]
            top = max(values[s] for s in pool)
            best = [s for s in pool if values[s] == top]
            if len(best) == 1:
                placed.append(best[0])
                group = []
                continue
            group = best
            for seat in group:
                values[seat] = dice.draw(SIDES)
            rerolled = [f"{state.players[s]} {values[s]}" for s in group]
            events.append(
                Event(
                    _(
                        "round %(round)d temporary dice again: %(rolls)s",
                        round=state.round,
                        rolls="; ".join(rerolled),
                    )
                )
            )
        return placed, values, events

    def _finish_round(
        self, state: FirstPlayerState, dice: Dice
    ) -> tuple[FirstPlayerState, list[Event]]:
        """ORDER(k) and RESOLVE(k), then the next round or the end of the night."""
        events: list[Event] = []
        temporary: tuple[tuple[int, int], ...] = ()
        moves: list[Movement] = []
        if state.options.free:
            zeros = [s for s in range(len(state.players)) if s not in state.participants]
            if len(zeros) >= 2:
                zeros, values, rolled = self._temporary(state, zeros, dice)
                events.extend(rolled)
                temporary = tuple((seat, values[seat]) for seat in zeros)
                for seat in zeros:
                    name = state.players[seat]
                    moves.append(Movement(state.round, "temporary die", None, name, 1))
                    moves.append(Movement(state.round, "temporary die removed", name, None, 1))
            order = state.ranking + tuple(zeros)
        else:
            winner = state.ranking[0]
            seats = len(state.players)
            order = tuple((winner + step) % seats for step in range(seats))
        state = replace(state, movements=state.movements + tuple(moves))
        return self._resolve_round(state, order, temporary, host=False, events=events)

    def _resolve_round(
        self,
        state: FirstPlayerState,
        order: tuple[int, ...],
        temporary: tuple[tuple[int, int], ...],
        host: bool,
        events: list[Event],
    ) -> tuple[FirstPlayerState, list[Event]]:
        k = state.round
        names = [state.players[seat] for seat in order]
        events.append(
            Event(_("round %(round)d actual order: %(names)s", round=k, names=", ".join(names)))
        )
        counts, tokens = list(state.counts), list(state.tokens)
        reserve = state.reserve
        moves: list[Movement] = []
        said: list[Text] = []

        def give(giver: int | None, receiver: int, reason: str) -> None:
            nonlocal reserve
            to = state.players[receiver]
            if giver is None:
                reserve -= 1
                moves.append(Movement(k, reason, RESERVE, to, 1))
                said.append(_("the reserve gives %(name)s a die", name=to))
            else:
                counts[giver] -= 1
                moves.append(Movement(k, reason, state.players[giver], to, 1))
                said.append(
                    _("%(giver)s gives %(name)s a die", giver=state.players[giver], name=to)
                )
            counts[receiver] += 1

        def award(receiver: int) -> None:
            tokens[receiver] += 1
            moves.append(Movement(k, "token award", None, state.players[receiver], 1, "token"))
            said.append(_("%(name)s receives a token", name=state.players[receiver]))

        n = len(order)
        first, last = order[0], order[-1]
        if counts[first] > 0:
            give(first, last, "winner to last")
        else:
            said.append(_("%(name)s has no die to give", name=state.players[first]))
        if n >= 6:
            second, second_last = order[1], order[-2]
            if reserve > 0:
                give(None, second_last, "reserve to second-last")
            elif counts[second] > 0:
                give(second, second_last, "second to second-last")
            else:
                said.append(
                    _(
                        "%(name)s has no die: %(receiver)s receives nothing",
                        name=state.players[second],
                        receiver=state.players[second_last],
                    )
                )
            if state.options.tokens:
                award(order[-3])
        elif n >= 4:
            if state.options.reserve_to_second_last and reserve > 0:
                give(None, order[-2], "reserve to second-last")
            elif state.options.tokens:
                award(order[-2])
        events.append(
            Event(_("round %(round)d resolve: %(moves)s", round=k, moves=join(said, "; ")))
        )
        rows = tuple(
            state.cups[seat].row if state.cups else () for seat in range(len(state.players))
        )
        result = RoundResult(k, order, rows, temporary, host)
        state = replace(
            state,
            counts=tuple(counts),
            tokens=tuple(tokens),
            reserve=reserve,
            movements=state.movements + tuple(moves),
            history=(*state.history, result),
            group=(),
        )
        events.append(
            Event(_("after round %(round)d: %(counts)s", round=k, counts=self._counts_text(state)))
        )
        if k < state.options.rounds:
            opened, more = self._open_round(state)
            return opened, events + more
        return self._end_night(state, events)

    def _end_night(
        self, state: FirstPlayerState, events: list[Event]
    ) -> tuple[FirstPlayerState, list[Event]]:
        """NIGHT_END: tokens discarded, tracker column written."""
        moves = tuple(
            Movement(state.round, "tokens discarded", name, None, held, "token")
            for name, held in zip(state.players, state.tokens, strict=True)
            if held
        )
        state = replace(
            state,
            phase=FINISHED,
            tokens=(0,) * len(state.players),
            movements=state.movements + moves,
            ready=(False,) * len(state.players),
            window=(),
            window_orders=(),
        )
        column = ", ".join(f"{name} {cell['note']}" for name, cell in tracker(state).items())
        events.append(
            Event(
                _(
                    "the night is over; tracker: %(column)s, reserve %(reserve)d",
                    column=column,
                    reserve=state.reserve,
                )
            )
        )
        return state, events

    # --- deadlines and defaults ------------------------------------------------------------

    def default(self, state: FirstPlayerState, seat: int) -> FirstPlayerOrder:
        if state.phase == GIFTS:
            return FirstPlayerOrder((Line("ready"),))
        if state.phase == COMMIT and seat in state.participants:
            cup = state.cups[seat]
            if not cup.rolls:
                return FirstPlayerOrder((Line("roll"), Line("arrange")))
            if not cup.row:
                return FirstPlayerOrder((Line("arrange"),))
            return FirstPlayerOrder()
        if state.phase in (TOKENS, TIEBREAK) and seat in state.window:
            return FirstPlayerOrder((Line("token"),))
        raise OrderError(_("no order is expected from you now"))

    def canonical(self, state: FirstPlayerState, seat: int, order: FirstPlayerOrder) -> str:
        return "\n".join(line_text(state.players, line) for line in order.lines)

    def resolve(self, state: FirstPlayerState, dice: Dice) -> tuple[FirstPlayerState, list[Event]]:
        if state.phase == GIFTS:
            return self._open_commit(state)
        if state.phase == COMMIT:
            events: list[Event] = []
            for seat in state.participants:
                if state.phase != COMMIT:
                    break
                cup = state.cups[seat]
                if cup.row:
                    continue
                name = state.players[seat]
                order = self.default(state, seat)
                if not cup.rolls:
                    events.append(
                        Event(
                            _(
                                "round %(round)d: %(name)s sent no roll: all their dice are "
                                "rolled and arranged high to low",
                                round=state.round,
                                name=name,
                            )
                        )
                    )
                else:
                    events.append(
                        Event(
                            _(
                                "round %(round)d: %(name)s did not arrange: high to low",
                                round=state.round,
                                name=name,
                            )
                        )
                    )
                texts = [line_text(state.players, line) for line in order.lines]
                state, more = self._commit(state, seat, order.lines, texts, dice, defaulted=True)
                events.extend(more)
            if state.phase == COMMIT and not state.revealed:
                closed, more = self._close_commit(state, dice)
                return closed, events + more
            return state, events
        if state.phase in (TOKENS, TIEBREAK):
            return self._close_window(state, dice)
        raise GameError(_("the night is over; there is nothing to resolve"))

    def host_order(
        self, state: FirstPlayerState, order: Sequence[int]
    ) -> tuple[FirstPlayerState, list[Event]]:
        """F-16: the host enters the actual order (seats) instead of COMMIT and RANK, while
        the round's gift window or rolling is open; RESOLVE still applies. Rolls already made
        this round are void."""
        if state.phase not in (GIFTS, COMMIT):
            raise GameError(_("the host can set the actual order only before the reveal"))
        if sorted(order) != list(range(len(state.players))):
            raise GameError(_("the actual order must name every player exactly once"))
        state = replace(state, cups=(), participants=(), ranking=())
        events = [Event(_("round %(round)d: the host sets the actual order", round=state.round))]
        return self._resolve_round(state, tuple(order), (), host=True, events=events)

    # --- what players see ------------------------------------------------------------------

    def _row_view(self, row: Sequence[Die]) -> list[JSON]:
        return [{"value": die.value, "token": die.token, "shown": die.shown} for die in row]

    def _player_view(self, state: FirstPlayerState, seat: int) -> dict[str, JSON]:
        cup = state.cups[seat] if state.cups else Cup()
        data: dict[str, JSON] = {
            "seat": seat,
            "name": state.players[seat],
            "dice": state.counts[seat],
            "tokens": state.tokens[seat],
            "ready": state.ready[seat],
            "participant": seat in state.participants,
            "rolled": cup.rolls > 0,
            "arranged": bool(cup.row),
            "row": self._row_view(cup.row) if state.revealed and cup.row else None,
        }
        return data

    def view(self, state: FirstPlayerState, seat: int | None) -> dict[str, JSON]:
        current = None
        if state.history and state.history[-1].number == state.round:
            current = [state.players[s] for s in state.history[-1].order]
        data: dict[str, JSON] = {
            "game": self.key,
            "status": "finished" if state.finished else "running",
            "options": state.options.as_dict(),
            "round": state.round,
            "rounds": state.options.rounds,
            "phase": state.phase,
            "reserve": state.reserve,
            "players": [self._player_view(state, s) for s in range(len(state.players))],
            "absent": [{"name": m.name, "had": m.had, "dice": m.count} for m in state.absent],
            "owed": [
                {"player": state.players[p.seat], "kind": p.kind, "hint": p.hint}
                for p in self.prompts(state)
            ],
            "ranking": [state.players[s] for s in state.ranking] if state.revealed else [],
            "tiebreak": (
                {"number": state.tiebreaks, "group": [state.players[s] for s in state.group]}
                if state.group
                else None
            ),
            "order": current,
            "history": [self._result_view(state, result) for result in state.history],
            "movements": [
                {
                    "round": m.round,
                    "reason": m.reason,
                    "from": m.giver,
                    "to": m.receiver,
                    "count": m.count,
                    "unit": m.unit,
                }
                for m in state.movements
            ],
            "tracker": tracker(state),
        }
        if seat is not None:
            data["you"] = self._you(state, seat)
        standings = self.standings(state)
        if standings is not None:
            data["standings"] = [
                {"player": state.players[s.seat], "place": s.place, "score": s.score}
                for s in standings
            ]
        return data

    def _you(self, state: FirstPlayerState, seat: int) -> dict[str, JSON]:
        cup = state.cups[seat] if state.cups else Cup()
        window = None
        if state.window_orders and state.window_orders[seat] is not None:
            window = list(state.window_orders[seat] or ())
        return {
            "seat": seat,
            "name": state.players[seat],
            "dice": state.counts[seat],
            "tokens_left": state.tokens[seat] - cup.secret_tokens,
            "rolled": cup.rolls > 0,
            "hand": list(cup.hand),
            "set_aside": list(cup.set_aside),
            "row": self._row_view(cup.row),
            "window_order": window,
            "owes": [p.kind for p in self.prompts(state) if p.seat == seat],
        }

    def _result_view(self, state: FirstPlayerState, result: RoundResult) -> dict[str, JSON]:
        return {
            "round": result.number,
            "order": [state.players[s] for s in result.order],
            "rows": {
                state.players[s]: self._row_view(row) for s, row in enumerate(result.rows) if row
            },
            "temporary": {state.players[s]: value for s, value in result.temporary},
            "host": result.host,
        }

    def standings(self, state: FirstPlayerState) -> list[Standing] | None:
        """Places: the actual order of the last round; score: the dice owned at the end."""
        if not state.finished:
            return None
        order = state.history[-1].order
        return [
            Standing(seat, place, state.counts[seat]) for place, seat in enumerate(order, start=1)
        ]

    def replay_output(self, state: FirstPlayerState) -> dict[str, JSON]:
        """The extra keys of the replay output (section 6): the reserve and the tracker."""
        return {"reserve": state.reserve, "tracker": tracker(state)}
