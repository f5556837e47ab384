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
    option_flag,
    option_int,
    option_one_of,
    order_lines,
    order_number,
    to_json,
)
from games.engines.text import Text, _, join, ngettext

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

# The faces as words, in the plural ("bid more 2s").
FACE_WORDS = {
    # Translators: a face in the plural, as in "bid more 1s" (German: Einsen, Zweien, ...).
    1: _("1s"),
    2: _("2s"),
    3: _("3s"),
    4: _("4s"),
    5: _("5s"),
    6: _("6s"),
}

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
                _(
                    "option dice_per_player (%(dice)d) must not be above max_dice (%(most)d)",
                    dice=dice_per_player,
                    most=max_dice,
                )
            )
        fields["max_dice"] = max_dice
    if profile == TEAM:
        fields["team_seating"] = seating
    return LiarsDiceOptions(**fields)


SETTINGS = Settings(
    profile_key="profile",
    profiles=(
        Profile(CLASSIC, _("Liar's Dice: classic"), _("The pub game (Perudo): bid on all the "
                "dice under the cups, call liar, wild ones and palifico. 2 to 6 players.")),
        Profile(DEATH_MATCH, _("Liar's Dice: Death Match"), _("The Genius's duel: the loser of "
                "a round gains a die, with optional anomalies. 2 players."), PLAYERS[DEATH_MATCH]),
        Profile(TEAM, _("Liar's Dice: team"), _("Two teams of two; nobody sees their own dice, "
                "only the hand of the player behind them. 4 players."), PLAYERS[TEAM]),
    ),
    options=(
        Option("dice_per_player", _("Dice per player"), _("Dice each player starts with."),
               low=1, high=10),
        Option("wild_ones", _("Wild ones"), _("Ones count as any face."), kind="flag",
               profiles=(CLASSIC,)),
        Option("palifico", _("Palifico"), _("A special round after a player first drops to one "
               "die."), kind="flag", profiles=(CLASSIC,)),
        Option("calza", _("Spot call (calza)"), _("Players may call a bid exactly right."),
               kind="flag", profiles=(CLASSIC,)),
        Option("max_dice", _("Most dice"), _("A player who holds more dice than this loses the "
               "match."), low=2, high=20, profiles=(DEATH_MATCH,)),
        Option("reserve", _("Round reserve"), _("A player's first missed bidding deadline in a "
               "round spends the reserve instead of losing the round."), kind="flag",
               profiles=(DEATH_MATCH,)),
        Option("cheat", _("Anomaly: Cheat"), _("Twice a match a player may secretly see the "
               "opponent's dice; accuse becomes a move."), kind="flag", profiles=(DEATH_MATCH,)),
        Option("double_face", _("Anomaly: Double-Face"), _("Three announced faces come up twice "
               "as often each round."), kind="flag", profiles=(DEATH_MATCH,)),
        Option("fresh_start", _("Anomaly: Fresh Start"), _("Both players start with one die."),
               kind="flag", profiles=(DEATH_MATCH,)),
        Option("mulligan", _("Anomaly: Mulligan"), _("Each round a player may secretly reroll "
               "up to five of their dice once."), kind="flag", profiles=(DEATH_MATCH,)),
        Option("oracle", _("Anomaly: Oracle"), _("After each of your claims you privately learn "
               "whether it is true."), kind="flag", profiles=(DEATH_MATCH,)),
        Option("revelation", _("Anomaly: Revelation"), _("With each claim the claimant shows the "
               "opponent one of their own dice."), kind="flag", profiles=(DEATH_MATCH,)),
        Option("summation", _("Anomaly: Summation"), _("Each player learns the sum of the "
               "opponent's dice."), kind="flag", profiles=(DEATH_MATCH,)),
        Option("team_seating", _("Teams"), kind="choice", profiles=(TEAM,),
               choices=(("alternate", _("seats 1 and 3 against 2 and 4")),
                        ("adjacent", _("seats 1 and 2 against 3 and 4")))),
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
        super().__init__(
            _("%(message)s (your action line was played and stands)", message=message),
            (state, events),
        )
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
        return (
            _("sum %(total)d", total=self.quantity)
            if self.sum
            else f"{self.quantity} x {self.face}"
        )


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
    result: Text
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
    results: tuple[Text, ...] = ()
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
    actions: tuple[Text, ...] = ()

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
    raise GameError(_("no player has dice"))


def behind(state: LiarsDiceState, seat: int) -> int:
    """The team game: the nearest seat before ``seat`` that still has dice (whom it watches)."""
    size = len(state.players)
    for step in range(1, size):
        candidate = (seat - step) % size
        if state.counts[candidate] > 0:
            return candidate
    raise GameError(_("nobody else has dice"))


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


def dice_words(number: int) -> Text:
    """``number`` dice in words: "1 die", "3 dice"."""
    return ngettext("%(count)d die", "%(count)d dice", number)


def _must_raise(q0: int, f0: int, wild: bool) -> Text:
    """The raises after (q0, f0), those of the same quantity named first; ``wild``: with
    wild ones, where a switch to ones is a raise too."""
    last, more, ones = f"{q0} x {f0}", q0 + 1, -(-q0 // 2)
    same = ", ".join(f"{q0} x {face}" for face in range(f0 + 1, 7))
    if wild and same:
        return _(
            "bid must raise: after %(last)s bid %(same)s or %(more)d or more of any face "
            "other than 1, or at least %(ones)d x 1",
            last=last,
            same=same,
            more=more,
            ones=ones,
        )
    if wild:
        return _(
            "bid must raise: after %(last)s bid %(more)d or more of any face other than 1, "
            "or at least %(ones)d x 1",
            last=last,
            more=more,
            ones=ones,
        )
    if same:
        return _(
            "bid must raise: after %(last)s bid %(same)s or %(more)d or more of any face",
            last=last,
            same=same,
            more=more,
        )
    return _(
        "bid must raise: after %(last)s bid %(more)d or more of any face", last=last, more=more
    )


def check_raise(state: LiarsDiceState, quantity: int, face: int) -> None:
    """OrderError unless bid (quantity, face) is legal after the round's bids (section 4.3)."""
    bid = f"bid {quantity} {face}"
    if quantity < 1:
        raise OrderError(_("%(bid)s: the quantity must be at least 1", bid=bid))
    if quantity > MAX_QUANTITY:
        raise OrderError(
            _(
                "%(bid)s: the quantity must be at most %(most)d (%(dice)s in play)",
                bid=bid,
                most=MAX_QUANTITY,
                dice=dice_words(sum(state.counts)),
            )
        )
    if face not in FACES:
        raise OrderError(_("%(bid)s: the face must be 1-6", bid=bid))
    last = state.bids[-1] if state.bids else None
    if state.palifico:
        if last is None:
            return
        if face != last.face:
            raise OrderError(
                _(
                    "palifico round: the face stays %(face)d; bid more %(faces)s",
                    face=last.face,
                    faces=FACE_WORDS[last.face],
                )
            )
        if quantity <= last.quantity:
            raise OrderError(
                _(
                    "palifico round: bid more %(faces)s than %(last)s",
                    faces=FACE_WORDS[last.face],
                    last=last.text(),
                )
            )
        return
    if not state.wilds:
        if (
            last is None
            or quantity > last.quantity
            or (quantity == last.quantity and face > last.face)
        ):
            return
        raise OrderError(_must_raise(last.quantity, last.face, wild=False))
    _check_wild_raise(last, quantity, face)


def _check_wild_raise(last: Bid | None, quantity: int, face: int) -> None:
    if last is None:
        if face == 1:
            raise OrderError(_("you cannot open on ones"))
        return
    q0, f0 = last.quantity, last.face
    if f0 != 1 and face == 1:
        if quantity < -(-q0 // 2):
            raise OrderError(
                _(
                    "to switch to ones after %(last)s bid at least %(ones)d x 1",
                    last=last.text(),
                    ones=-(-q0 // 2),
                )
            )
    elif f0 == 1 and face != 1:
        if quantity < 2 * q0 + 1:
            raise OrderError(
                _(
                    "to leave ones after %(last)s bid at least %(least)d of another face",
                    last=last.text(),
                    least=2 * q0 + 1,
                )
            )
    elif f0 == 1:
        if quantity <= q0:
            raise OrderError(
                _(
                    "bid must raise: after %(last)s bid at least %(ones)d x 1 "
                    "or %(least)d of another face",
                    last=last.text(),
                    ones=q0 + 1,
                    least=2 * q0 + 1,
                )
            )
    elif not (quantity > q0 or (quantity == q0 and face > f0)):
        raise OrderError(_must_raise(q0, f0, wild=True))


def check_sum_raise(state: LiarsDiceState, total: int) -> None:
    if not SUM_LOW <= total <= SUM_HIGH:
        raise OrderError(
            _(
                "%(bid)s: the sum must be %(low)d-%(high)d",
                bid=f"bid sum {total}",
                low=SUM_LOW,
                high=SUM_HIGH,
            )
        )
    if state.bids and total <= state.bids[-1].quantity:
        last = state.bids[-1].quantity
        if last >= SUM_HIGH:
            raise OrderError(
                _("bid must raise: nothing is above sum %(last)d; call liar", last=last)
            )
        raise OrderError(
            _(
                "bid must raise: after sum %(last)d bid sum %(more)d or more",
                last=last,
                more=last + 1,
            )
        )


# --- parsing -------------------------------------------------------------------------------

CHALLENGE_WORDS = ("liar", "challenge", "dudo")
SPOT_WORDS = ("spot", "calza")
SYNTAX = _("write bid <quantity> <face> or liar")


def _number(word: str, what: Text, where: str) -> int:
    number = order_number(word)
    if number is None:
        raise OrderError(
            _(
                "%(where)s: %(what)s must be a whole number in the digits 0-9, not %(word)s",
                where=where,
                what=what,
                word=repr(word),
            )
        )
    return number


def _line(number: int, message: str) -> Text:
    """``message`` about line ``number`` of an order."""
    return _("line %(number)d: %(message)s", number=number, message=message)


def parse_move(state: LiarsDiceState, line: str) -> LiarsDiceOrder:
    """One bidding line: bid, liar, spot or accuse, checked against the game's options."""
    options = state.options
    words = line.split()
    head = words[0]
    if head in CHALLENGE_WORDS and len(words) == 1:
        return LiarsDiceOrder("liar")
    if head in SPOT_WORDS and len(words) == 1:
        if not options.calza:
            raise OrderError(_("spot calls are not used in this game"))
        return LiarsDiceOrder("spot")
    if head == "accuse" and len(words) == 1:
        if not options.cheat:
            raise OrderError(_("accusations are not used in this game"))
        return LiarsDiceOrder("accuse")
    if head != "bid":
        raise OrderError(
            _("%(line)s is not an order here: %(syntax)s", line=repr(line), syntax=SYNTAX)
        )
    if len(words) == 3 and words[1] == "sum":
        if not state.sum_phase:
            raise OrderError(_("bid sum: sum bids are only used when two single dice remain"))
        return LiarsDiceOrder("bid", _number(words[2], _("the sum"), line), 0, sum=True)
    if len(words) not in (3, 5) or (len(words) == 5 and words[3] != "show"):
        if options.revelation:
            raise OrderError(
                _(
                    "%(line)s: write bid <quantity> <face> [show <position>], e.g. bid 5 3",
                    line=repr(line),
                )
            )
        raise OrderError(_("%(line)s: write bid <quantity> <face>, e.g. bid 5 3", line=repr(line)))
    if state.sum_phase:
        raise OrderError(_("bid: two single dice remain; bid a sum: bid sum <total>"))
    quantity = _number(words[1], _("the quantity"), line)
    face = _number(words[2], _("the face"), line)
    show = None
    if len(words) == 5:
        if not options.revelation:
            raise OrderError(_("show: showing dice is not used in this game"))
        show = _number(words[4], _("the position"), line)
    return LiarsDiceOrder("bid", quantity, face, show=show)


def parse_mulligan(words: list[str]) -> LiarsDiceOrder:
    rest = words[1:]
    if rest == ["none"] or not rest:
        return LiarsDiceOrder(MULLIGAN)
    positions = [_number(word, _("a position"), "mulligan") for word in rest]
    if len(set(positions)) != len(positions):
        raise OrderError(_("mulligan: name each position once"))
    return LiarsDiceOrder(MULLIGAN, positions=tuple(sorted(positions)))


def _action_syntax(line: str) -> Text:
    return _(
        "%(line)s: write reveal <slot> reroll or reveal <slot> learn <player> <slot>",
        line=repr(line),
    )


def parse_action(state: LiarsDiceState, line: str) -> Action:
    words = line.split()
    if len(words) < 3:
        raise OrderError(_action_syntax(line))
    reveal = _number(words[1], _("the slot"), "reveal")
    if words[2] == "reroll" and len(words) == 3:
        return Action(reveal)
    if words[2] == "learn" and len(words) == 5:
        names = {name.lower(): seat for seat, name in enumerate(state.players)}
        if words[3] not in names:
            raise OrderError(_("learn: there is no player called %(name)s", name=repr(words[3])))
        return Action(reveal, True, names[words[3]], _number(words[4], _("the slot"), "learn"))
    raise OrderError(_action_syntax(line))


def parse_order(state: LiarsDiceState, text: str) -> LiarsDiceOrder:
    """The order in ``text`` for the current step (the seat is checked by the engine)."""
    lines = order_lines(text)
    if not lines:
        raise OrderError(_("the order is empty: %(syntax)s", syntax=SYNTAX))
    first = lines[0].split()[0]
    if state.phase == MULLIGAN:
        if first != "mulligan" or len(lines) > 1:
            raise OrderError(
                _(
                    "round %(round)d is at the mulligan step: send one line, "
                    "mulligan <positions> or mulligan none",
                    round=state.round,
                )
            )
        return parse_mulligan(lines[0].split())
    if state.phase == CHEAT:
        if lines not in (["cheat yes"], ["cheat no"]):
            raise OrderError(
                _(
                    "round %(round)d is at the cheat step: send cheat yes or cheat no",
                    round=state.round,
                )
            )
        return LiarsDiceOrder(CHEAT, cheat=lines[0] == "cheat yes")
    if first == "mulligan":
        if not state.options.mulligan:
            raise OrderError(_("mulligan: mulligans are not used in this game"))
        raise OrderError(
            _("mulligan: the mulligan step of round %(round)d is over", round=state.round)
        )
    if first == "cheat":
        if not state.options.cheat:
            raise OrderError(_("cheat: cheating is not used in this game"))
        raise OrderError(_("cheat: the cheat step of round %(round)d is over", round=state.round))
    if first == "reveal":
        if state.profile != TEAM:
            raise OrderError(_("reveal: the optional action is only used in the team game"))
        return _parse_action_order(state, lines)
    if len(lines) > 1:
        raise OrderError(_line(2, _("one move per message; %(syntax)s", syntax=SYNTAX)))
    return parse_move(state, lines[0])


def _parse_action_order(state: LiarsDiceState, lines: list[str]) -> LiarsDiceOrder:
    single = len(lines) == 1
    try:
        action = parse_action(state, lines[0])
    except OrderError as error:
        raise OrderError(error.message if single else _line(1, error.message)) from None
    if single:
        return LiarsDiceOrder("action", action=action)
    if len(lines) > 2:
        return LiarsDiceOrder(
            "action",
            action=action,
            rejected=_line(3, _("one action line and one bid or challenge line at most")),
        )
    try:
        move = parse_move(state, lines[1])
    except OrderError as error:
        return LiarsDiceOrder("action", action=action, rejected=_line(2, error.message))
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
    return " ".join(map(str, hand)) if hand else _("no dice")


# --- the engine ----------------------------------------------------------------------------

# The private events told to a seat in the second person, as anyone else reads them (the
# replay of a finished game, the GM's log): ``Engine.onlooker_words``, ``%(player)s`` the
# seat's name.
ONLOOKER: dict[str, str] = {
    "round %(round)d: you watch %(name)s, whose dice are %(dice)s": _(
        "round %(round)d: %(player)s watches %(name)s, whose dice are %(dice)s"
    ),
    "round %(round)d: your dice are %(dice)s": _("round %(round)d: %(player)s's dice are %(dice)s"),
    "%(name)s shows you their die at position %(position)d: a %(value)d": _(
        "%(name)s shows %(player)s their die at position %(position)d: a %(value)d"
    ),
    "oracle: your claim %(bid)s is true": _("oracle: %(player)s's claim %(bid)s is true"),
    "oracle: your claim %(bid)s is false": _("oracle: %(player)s's claim %(bid)s is false"),
    "round %(round)d: after your mulligan your dice are %(dice)s": _(
        "round %(round)d: after the mulligan %(player)s's dice are %(dice)s"
    ),
    "round %(round)d: you cheat; %(name)s's dice are %(dice)s": _(
        "round %(round)d: %(player)s cheats; %(name)s's dice are %(dice)s"
    ),
}


class LiarsDiceEngine(JsonCodec):
    key = "liars-dice"
    title = "Liar's Dice"
    min_players = 2
    max_players = 6
    # One player bids at a time: most steps owe nothing of most seats, so a seat's
    # reports come by default only when it owes an order.
    sequential = True
    step_word = "postal turn"
    onlooker_words: Mapping[str, str] = ONLOOKER

    State = LiarsDiceState
    Order = LiarsDiceOrder

    def options(self, data: Mapping[str, JSON]) -> LiarsDiceOptions:
        return parse_options(data)

    def start(
        self, options: LiarsDiceOptions, players: Sequence[str], dice: Dice
    ) -> tuple[LiarsDiceState, list[Event]]:
        low, high = PLAYERS[options.profile]
        if not low <= len(players) <= high:
            # The profile by the name GMs pick it by, never its key ("genius_dm").
            title = SETTINGS.profile(options.profile).title
            words = {"profile": title, "low": low, "high": high, "count": len(players)}
            if low == high:
                raise OptionsError(
                    _("%(profile)s takes exactly %(low)d players, not %(count)d", **words)
                )
            raise OptionsError(
                _("%(profile)s takes %(low)d to %(high)d players, not %(count)d", **words)
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
            tuple(self._die(state, dice) for __ in range(number)) for number in state.counts
        )
        state = replace(state, hands=hands)
        counts = ", ".join(
            f"{name} {number}" for name, number in zip(state.players, state.counts, strict=True)
        )
        parts = [
            _(
                "round %(round)d: dice in play: %(counts)s; %(name)s opens",
                round=state.round,
                counts=counts,
                name=state.players[opener],
            )
        ]
        if state.palifico:
            parts.append(_("this is a palifico round (ones are not wild, the face stays)"))
        if state.sum_phase:
            parts.append(_("two single dice remain: bids name the sum of both"))
        if state.faces:
            doubled = ", ".join(map(str, state.faces))
            parts.append(_("the doubled faces are %(faces)s", faces=doubled))
        events = [*events, Event(join(parts, "; "))]
        for seat in state.alive():
            events.append(self._hand_event(state, seat))
        if state.options.mulligan:
            return replace(state, phase=MULLIGAN), events
        return self._after_mulligan(state, events)

    def _hand_event(self, state: LiarsDiceState, seat: int) -> Event:
        if state.profile == TEAM:
            watched = behind(state, seat)
            return Event(
                _(
                    "round %(round)d: you watch %(name)s, whose dice are %(dice)s",
                    round=state.round,
                    name=state.players[watched],
                    dice=_dice_text(state.hands[watched]),
                ),
                to=(seat,),
            )
        return Event(
            _(
                "round %(round)d: your dice are %(dice)s",
                round=state.round,
                dice=_dice_text(state.hands[seat]),
            ),
            to=(seat,),
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
                        _(
                            "round %(round)d: the dice of %(name)s add up to %(sum)d",
                            round=state.round,
                            name=state.players[other],
                            sum=sums[seat],
                        ),
                        to=(seat,),
                    )
                )
            state = replace(state, sums=tuple(sums))
        if state.options.cheat and any(used < CHEATS_PER_MATCH for used in state.cheats_used):
            return replace(state, phase=CHEAT), events
        return replace(state, phase=BIDDING), events

    def _end_round(
        self, state: LiarsDiceState, loser: int, result: Text, dice: Dice, spot: bool = False
    ) -> tuple[LiarsDiceState, list[Event]]:
        """ROUND_END: reveal every hand, the loser's dice change, eliminations, the end check,
        and the next round at once. ``spot``: a correct spot call, the caller gains a die."""
        hands = "; ".join(
            f"{state.players[seat]} {_dice_text(state.hands[seat])}" for seat in state.alive()
        )
        text = _(
            "round %(round)d: %(result)s. The dice: %(hands)s",
            round=state.round,
            result=result,
            hands=hands,
        )
        if any(state.cheated):
            cheaters = [state.players[seat] for seat in state.seats if state.cheated[seat]]
            text = ngettext(
                "round %(round)d: %(result)s. The dice: %(hands)s. %(cheaters)s cheated this round",
                "round %(round)d: %(result)s. The dice: %(hands)s. %(cheaters)s cheated this round",
                len(cheaters),
                round=state.round,
                result=result,
                hands=hands,
                cheaters=join(cheaters, _(" and ")),
            )
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
        held = counts[loser]
        if state.profile == DEATH_MATCH or held > before:
            events.append(
                Event(_("%(name)s gains a die and now holds %(count)d", name=name, count=held))
            )
        elif held < before:
            events.append(
                Event(_("%(name)s loses a die and now holds %(count)d", name=name, count=held))
            )
        out = state.out
        if counts[loser] == 0:
            out = (*out, loser)
            events.append(Event(_("%(name)s has no dice left and is out", name=name)))
        summary = _("round %(round)d: %(result)s", round=state.round, result=result)
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
            return _(
                "the match is over: %(name)s holds more than %(most)d dice. %(places)s",
                name=state.players[state.loser],
                most=state.options.max_dice,
                places=places,
            )
        return _("the game is over: %(places)s", places=places)

    # --- prompts and checks ----------------------------------------------------------------

    def prompts(self, state: LiarsDiceState) -> list[Prompt]:
        if state.phase == OVER:
            return []
        if state.phase == MULLIGAN:
            return [
                Prompt(
                    seat,
                    _("mulligan"),
                    _(
                        "round %(round)d: mulligan <positions> (up to %(most)d) or mulligan none",
                        round=state.round,
                        most=min(MULLIGAN_MOST, state.counts[seat]),
                    ),
                )
                for seat in state.seats
            ]
        if state.phase == CHEAT:
            return [
                Prompt(
                    seat,
                    _("cheat"),
                    ngettext(
                        "round %(round)d: cheat yes or cheat no (%(count)d cheat left)",
                        "round %(round)d: cheat yes or cheat no (%(count)d cheats left)",
                        CHEATS_PER_MATCH - state.cheats_used[seat],
                        round=state.round,
                    ),
                )
                for seat in state.seats
                if state.cheats_used[seat] < CHEATS_PER_MATCH
            ]
        return [Prompt(state.turn, self._bid_kind(state), self._bid_hint(state))]

    def _bid_kind(self, state: LiarsDiceState) -> str:
        if state.profile == TEAM and not state.acted and not state.sum_phase:
            return _("action, bid or challenge")
        return _("bid or challenge") if state.bids else _("bid")

    def _bid_hint(self, state: LiarsDiceState) -> str:
        where = {"round": state.round, "move": len(state.bids) + 1}
        if not state.bids:
            parts = [_("round %(round)d, move %(move)d: open with a bid", **where)]
        else:
            last = state.bids[-1]
            raised = _(
                "round %(round)d, move %(move)d: raise %(bid)s (%(name)s) or call liar",
                bid=last.text(),
                name=state.players[last.seat],
                **where,
            )
            parts = [raised]
        if state.options.calza and state.bids:
            parts.append(_(" or spot"))
        if state.options.cheat:
            parts.append(_(" or accuse"))
        if state.sum_phase:
            parts.append(_("; bids name a sum: bid sum <total>"))
        if state.acted:
            parts.append(_("; your action is done"))
        if state.profile == DEATH_MATCH and state.reserve_spent[state.turn]:
            parts.append(_("; your round reserve is spent"))
        return join(parts, "")

    def _expect(self, state: LiarsDiceState, seat: int) -> None:
        if not 0 <= seat < len(state.players):
            raise OrderError(_("there is no seat %(seat)d in this game", seat=seat))
        if state.finished:
            raise OrderError(_("the game is over; no order is expected from you"))
        if state.phase == BIDDING:
            # The player on turn is the one prompted (``prompts``), without writing the
            # prompt's hint: a menu checks every bid it might offer here.
            if seat == state.turn:
                return
            if state.counts[seat] == 0:
                raise OrderError(_("you are out of the game; no order is expected from you"))
            raise OrderError(
                _("not your turn: waiting for %(name)s", name=state.players[state.turn])
            )
        if seat in [prompt.seat for prompt in self.prompts(state)]:
            return
        if state.phase == CHEAT and state.cheats_used[seat] >= CHEATS_PER_MATCH:
            raise OrderError(
                _(
                    "cheat: you have cheated in %(count)d rounds already; "
                    "no order is expected from you now",
                    count=CHEATS_PER_MATCH,
                )
            )
        raise OrderError(_("no order is expected from you now"))

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
                raise OrderError(
                    _(
                        "round %(round)d is at the cheat step: send cheat yes or no",
                        round=state.round,
                    )
                )
            cheats = tuple(order.cheat if s == seat else c for s, c in enumerate(state.cheats))
            return replace(state, cheats=cheats), [self._received(state, seat, order)]
        if order.kind in (MULLIGAN, CHEAT, "timeout"):
            raise OrderError(
                _("%(kind)s: not expected now; %(syntax)s", kind=order.kind, syntax=SYNTAX)
            )
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
                raise ActionApplied(_line(2, error.message), state, events) from None
            return state, events + more
        if order.kind == "action":
            raise OrderError(SYNTAX)
        return self._move(state, seat, order, dice)

    @staticmethod
    def _received(state: LiarsDiceState, seat: int, order: LiarsDiceOrder) -> Event:
        return Event(_("order received: %(order)s", order=order_text(state, order)), to=(seat,))

    def _store_mulligan(
        self, state: LiarsDiceState, seat: int, order: LiarsDiceOrder
    ) -> tuple[LiarsDiceState, list[Event]]:
        if order.kind != MULLIGAN:
            raise OrderError(
                _(
                    "round %(round)d is at the mulligan step: send mulligan <positions> "
                    "or mulligan none",
                    round=state.round,
                )
            )
        held = state.counts[seat]
        most = min(MULLIGAN_MOST, held)
        if len(order.positions) > most:
            raise OrderError(
                _(
                    "mulligan: you hold %(dice)s; name at most %(positions)s",
                    dice=dice_words(held),
                    positions=ngettext(
                        "%(count)d different position", "%(count)d different positions", most
                    ),
                )
            )
        for position in order.positions:
            if not 1 <= position <= held:
                raise OrderError(
                    _(
                        "mulligan: you have no die %(position)d; you hold %(dice)s",
                        position=position,
                        dice=dice_words(held),
                    )
                )
        mulligans = tuple(
            order.positions if s == seat else m for s, m in enumerate(state.mulligans)
        )
        return replace(state, mulligans=mulligans), [self._received(state, seat, order)]

    def _move(
        self, state: LiarsDiceState, seat: int, order: LiarsDiceOrder, dice: Dice
    ) -> tuple[LiarsDiceState, list[Event]]:
        """A bidding move of the player on turn, applied at once."""
        name = state.players[seat]
        if order.kind == "bid":
            return self._bid(state, seat, order, dice)
        if order.kind == "accuse":
            other = 1 - seat
            accused = {"name": name, "other": state.players[other]}
            if state.cheated[other]:
                result = _("%(name)s accuses %(other)s, who cheated: %(name)s wins", **accused)
                return self._end_round(state, other, result, dice)
            result = _("%(name)s accuses %(other)s, who did not cheat: %(name)s loses", **accused)
            return self._end_round(state, seat, result, dice)
        if not state.bids:
            if order.kind == "spot":
                raise OrderError(_("no bid to spot yet; open with a bid"))
            raise OrderError(_("no bid to challenge yet; open with a bid"))
        last = state.bids[-1]
        found = count(state, last)
        if order.kind == "spot":
            return self._spot(state, seat, last, found, dice)
        words = {"name": name, "bidder": state.players[last.seat], "bid": last.text()}
        loser = seat if found >= last.quantity else last.seat
        return self._end_round(state, loser, self._challenged(state, last, found, words), dice)

    def _challenged(
        self, state: LiarsDiceState, last: Bid, found: int, words: dict[str, JSON]
    ) -> Text:
        """The result of a challenge of ``last``, which ``found`` dice (or the sum) meet."""
        if last.sum and found >= last.quantity:
            return _(
                "%(name)s challenges %(bidder)s's %(bid)s: there are %(found)d in all (the sum), "
                "the bid holds",
                found=found,
                **words,
            )
        if last.sum:
            return _(
                "%(name)s challenges %(bidder)s's %(bid)s: there are %(found)d in all (the sum), "
                "the bid fails",
                found=found,
                **words,
            )
        counted = self._counted(state, last)
        if found >= last.quantity:
            return _(
                "%(name)s challenges %(bidder)s's %(bid)s: there are %(found)d %(counted)s, "
                "the bid holds",
                found=found,
                counted=counted,
                **words,
            )
        return _(
            "%(name)s challenges %(bidder)s's %(bid)s: there are %(found)d %(counted)s, "
            "the bid fails",
            found=found,
            counted=counted,
            **words,
        )

    def _spot(
        self, state: LiarsDiceState, seat: int, last: Bid, found: int, dice: Dice
    ) -> tuple[LiarsDiceState, list[Event]]:
        words = {
            "name": state.players[seat],
            "bid": last.text(),
            "found": found,
            "counted": self._counted(state, last),
        }
        if found == last.quantity:
            result = _(
                "%(name)s calls spot on %(bid)s: there are exactly %(found)d %(counted)s", **words
            )
            return self._end_round(state, seat, result, dice, spot=True)
        result = _(
            "%(name)s calls spot on %(bid)s: there are %(found)d %(counted)s, not %(quantity)d",
            quantity=last.quantity,
            **words,
        )
        return self._end_round(state, seat, result, dice)

    @staticmethod
    def _counted(state: LiarsDiceState, bid: Bid) -> Text:
        """The dice a bid on faces counts: "2s", or "2s with ones" where ones are wild."""
        faces = FACE_WORDS[bid.face]
        if state.wilds and bid.face != 1:
            return _("%(faces)s with ones", faces=faces)
        return faces

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
        events = [
            Event(
                _(
                    "round %(round)d: %(name)s bids %(bid)s",
                    round=state.round,
                    name=name,
                    bid=bid.text(),
                )
            )
        ]
        if bid.show is not None:
            other = 1 - seat
            value = state.hands[seat][bid.show - 1]
            shown = _(
                "%(name)s shows you their die at position %(position)d: a %(value)d",
                name=name,
                position=bid.show,
                value=value,
            )
            events.append(Event(shown, to=(other,)))
        if bid.true is not None:
            if bid.true:
                oracle = _("oracle: your claim %(bid)s is true", bid=bid.text())
            else:
                oracle = _("oracle: your claim %(bid)s is false", bid=bid.text())
            events.append(Event(oracle, to=(seat,)))
        return state, events

    def _check_show(self, state: LiarsDiceState, seat: int, show: int | None) -> None:
        to_show = positions_to_show(state, seat)
        held = state.counts[seat]
        if show is None:
            if to_show:
                raise OrderError(
                    _(
                        'show one of your dice: add "show <position>", e.g. show %(position)d',
                        position=to_show[0],
                    )
                )
            return
        if not to_show:
            unshown = held - len(shown_positions(state, seat))
            raise OrderError(
                _(
                    "show: you have %(count)d unshown dice left; claim without show",
                    count=unshown,
                )
            )
        if not 1 <= show <= held:
            raise OrderError(
                _(
                    "show: you have no die at position %(position)d; you hold %(dice)s",
                    position=show,
                    dice=dice_words(held),
                )
            )
        if show not in to_show:
            raise OrderError(
                _(
                    "show: you showed your die at position %(position)d already this round",
                    position=show,
                )
            )

    # --- the team action -------------------------------------------------------------------

    def _action(
        self, state: LiarsDiceState, seat: int, action: Action, dice: Dice, prefix: bool
    ) -> tuple[LiarsDiceState, list[Event]]:
        try:
            return self._apply_action(state, seat, action, dice)
        except OrderError as error:
            raise OrderError(_line(1, error.message) if prefix else error.message) from None

    def _apply_action(
        self, state: LiarsDiceState, seat: int, action: Action, dice: Dice
    ) -> tuple[LiarsDiceState, list[Event]]:
        if state.acted:
            raise OrderError(_("reveal: you have used your action this turn; bid or call liar"))
        watched = behind(state, seat)
        who = state.players[watched]
        hand = state.hands[watched]
        revealed = state.revealed[watched]
        if len(revealed) >= len(hand):
            raise OrderError(_("reveal: every die of %(name)s is revealed already", name=who))
        if not 1 <= action.reveal <= len(hand):
            raise OrderError(
                _(
                    "reveal: %(name)s has no die %(slot)d; %(name)s holds %(dice)s",
                    name=who,
                    slot=action.reveal,
                    dice=dice_words(len(hand)),
                )
            )
        if action.reveal in revealed:
            raise OrderError(
                _(
                    "reveal: %(name)s's die %(slot)d is revealed already",
                    name=who,
                    slot=action.reveal,
                )
            )
        revealed = tuple(sorted((*revealed, action.reveal)))
        # What every player reads of the reveal, the start of the action's public words.
        reveal = {
            "round": state.round,
            "name": state.players[seat],
            "who": who,
            "slot": action.reveal,
            "value": hand[action.reveal - 1],
        }
        state = replace(
            state,
            revealed=tuple(revealed if s == watched else r for s, r in enumerate(state.revealed)),
            acted=True,
        )
        if action.learn:
            return self._learn(state, seat, watched, action, reveal)
        learnt = {entry.slot for entry in state.learnt if entry.target == watched}
        slots = [
            slot for slot in range(1, len(hand) + 1) if slot not in revealed and slot not in learnt
        ]
        if not slots:
            raise OrderError(
                _("nothing to reroll: every other die of %(name)s is revealed or learnt", name=who)
            )
        new = list(hand)
        for slot in slots:
            new[slot - 1] = self._die(state, dice)
        hands = tuple(tuple(new) if s == watched else h for s, h in enumerate(state.hands))
        public = _(
            "round %(round)d: %(name)s reveals %(who)s's die %(slot)d: a %(value)d, "
            "and rerolls their dice %(slots)s",
            slots=" ".join(map(str, slots)),
            **reveal,
        )
        state = replace(state, hands=hands, actions=(*state.actions, public))
        private = _(
            "round %(round)d: %(name)s's dice are now %(dice)s",
            round=state.round,
            name=who,
            dice=_dice_text(new),
        )
        return state, [Event(public), Event(private, to=(seat,))]

    def _learn(
        self,
        state: LiarsDiceState,
        seat: int,
        watched: int,
        action: Action,
        reveal: dict[str, JSON],
    ) -> tuple[LiarsDiceState, list[Event]]:
        target, slot = action.target, action.slot
        assert target is not None and slot is not None
        whose = state.players[target]
        if target in (seat, watched):
            raise OrderError(
                _(
                    "learn: pick a player other than yourself and %(name)s, whom you already watch",
                    name=state.players[watched],
                )
            )
        if state.counts[target] == 0:
            raise OrderError(_("learn: %(name)s has no dice", name=whose))
        if not 1 <= slot <= state.counts[target]:
            raise OrderError(
                _(
                    "learn: %(name)s has no die %(slot)d; %(name)s holds %(dice)s",
                    name=whose,
                    slot=slot,
                    dice=dice_words(state.counts[target]),
                )
            )
        if slot in state.revealed[target]:
            raise OrderError(
                _(
                    "learn: %(name)s's die %(slot)d is revealed; everybody knows it",
                    name=whose,
                    slot=slot,
                )
            )
        if Learnt(seat, target, slot) in state.learnt:
            raise OrderError(
                _("learn: you already know %(name)s's die %(slot)d", name=whose, slot=slot)
            )
        public = _(
            "round %(round)d: %(name)s reveals %(who)s's die %(slot)d: a %(value)d, "
            "and learns %(whose)s's die %(learnt)d",
            whose=whose,
            learnt=slot,
            **reveal,
        )
        state = replace(
            state,
            learnt=(*state.learnt, Learnt(seat, target, slot)),
            actions=(*state.actions, public),
        )
        private = _(
            "round %(round)d: %(name)s's die %(slot)d is a %(value)d",
            round=state.round,
            name=whose,
            slot=slot,
            value=state.hands[target][slot - 1],
        )
        return state, [Event(public), Event(private, to=(seat,))]

    # --- resolve ---------------------------------------------------------------------------

    def resolve(self, state: LiarsDiceState, dice: Dice) -> tuple[LiarsDiceState, list[Event]]:
        if state.finished:
            raise GameError(_("the game is over; there is nothing to resolve"))
        if state.phase == MULLIGAN:
            return self._resolve_mulligan(state, dice)
        if state.phase == CHEAT:
            return self._resolve_cheat(state)
        seat = state.turn
        name = state.players[seat]
        order = self.default(state, seat)
        if order.kind != "timeout":
            nmr = _(
                "%(name)s sent no order: the NMR default %(order)s is played",
                name=name,
                order=order_text(state, order),
            )
            state, more = self._move(state, seat, order, dice)
            return state, [Event(nmr), *more]
        if state.options.reserve and not state.reserve_spent[seat]:
            spent = tuple(s == seat or spent for s, spent in enumerate(state.reserve_spent))
            return replace(state, reserve_spent=spent), [
                Event(
                    _(
                        "round %(round)d: %(name)s missed the deadline and spends the round "
                        "reserve; %(name)s still owes the move",
                        round=state.round,
                        name=name,
                    )
                )
            ]
        if state.options.reserve:
            result = _("%(name)s missed the deadline again and loses the round", name=name)
        else:
            result = _(
                "%(name)s missed the deadline and has no reserve and loses the round", name=name
            )
        return self._end_round(state, seat, result, dice)

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
                    Event(
                        _(
                            "%(name)s sent no mulligan order: nothing is rerolled",
                            name=state.players[seat],
                        )
                    )
                )
                positions = ()
            hand = list(hands[seat])
            for position in positions:
                hand[position - 1] = self._die(state, dice)
            hands[seat] = tuple(hand)
            rerolled.append(positions)
        done = join(
            (
                ngettext(
                    "%(name)s rerolled %(count)d die",
                    "%(name)s rerolled %(count)d dice",
                    len(rerolled[seat]),
                    name=state.players[seat],
                )
                for seat in state.seats
            ),
            "; ",
        )
        events.append(
            Event(_("round %(round)d: mulligans done: %(done)s", round=state.round, done=done))
        )
        for seat in state.seats:
            if rerolled[seat]:
                events.append(
                    Event(
                        _(
                            "round %(round)d: after your mulligan your dice are %(dice)s",
                            round=state.round,
                            dice=_dice_text(hands[seat]),
                        ),
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
                events.append(
                    Event(_("%(name)s sent no cheat order: no cheating", name=state.players[seat]))
                )
            cheated.append(bool(allowed and decision))
        events.append(
            Event(
                _("round %(round)d: the cheat step is over; the bidding begins", round=state.round)
            )
        )
        for seat in state.seats:
            if cheated[seat]:
                other = 1 - seat
                events.append(
                    Event(
                        _(
                            "round %(round)d: you cheat; %(name)s's dice are %(dice)s",
                            round=state.round,
                            name=state.players[other],
                            dice=_dice_text(state.hands[other]),
                        ),
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
            return [("cheat no", _("cheat no")), ("cheat yes", _("cheat yes"))]
        if state.phase == MULLIGAN:
            return [("mulligan none", _("mulligan none: keep every die"))]
        if state.phase != BIDDING:
            return []
        found: list[tuple[str, str]] = [
            ("liar", _("liar: challenge the last bid")),
            ("spot", _("spot: the last bid is exactly right")),
            ("accuse", _("accuse: the opponent cheated this round")),
        ]
        if state.sum_phase:
            found += [
                (f"bid sum {total}", _("bid sum %(total)d", total=total)) for total in range(2, 13)
            ]
        else:
            found += [
                (
                    f"bid {quantity} {face}",
                    _("bid %(quantity)d x %(face)d", quantity=quantity, face=face),
                )
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
