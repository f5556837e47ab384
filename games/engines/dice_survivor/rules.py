"""Dice Survivor, played by post: rules/dice-survivor.md.

Every participant holds Play Points (PP); whoever is left with PP wins. On a turn the active
player has two actions (one in the Finals): challenge, Extra Play Point, KO or pass. Each
action is one order and takes effect at once: its dice are drawn inside ``submit`` and the
next prompt follows (the same player's next action, the next turn, or the rematch question
to a defeated defender, who answers ``rematch`` or ``accept`` out of turn). Every step
prompts exactly one seat, and the prompt names the turn and the action number, so it
changes after every order.

There is no hidden information: every roll and every PP count is public.
"""

from __future__ import annotations

import re
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
    Prompt,
    Standing,
    check_option_keys,
    check_players,
    competition_places,
    is_int,
    option_flag,
    option_int,
    option_one_of,
    order_lines,
    single_profile,
    to_json,
)
from games.engines.text import EMPTY, Text, _, join, ngettext

PLAYER_DIE = 20
MAJOR_DIE = 12
MINOR_DIE = 8
NORMAL_ACTIONS = 2
FINALS_ACTIONS = 1
FINALS_SIZE = 3
FINALS_MIN_START = 6
EXTRA_TARGET = 10
KO_HALVES = ("floor", "ceil")
KO_DEFENDER_DICE = ("lower", "higher")
NORMAL_SYNTAX = _("challenge <player> [double], extra, ko <player> or pass")
FINALS_SYNTAX = _("challenge d12=<player> or ko <player>")

# --- options -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SurvivorOptions:
    """The options table of rules/dice-survivor.md section 2."""

    start_pp: int = 5
    rematches: int = 3
    ko_half: str = "floor"
    ko_defender: str = "lower"
    finals_add_pp: bool = True
    turn_cap: int = 300


_OPTION_KEYS = ("start_pp", "rematches", "ko_half", "ko_defender", "finals_add_pp", "turn_cap")


def _turn_cap(value: JSON) -> int:
    if is_int(value) and (value == 0 or 20 <= value <= 5000):
        return int(value)
    raise OptionsError(
        _(
            "option turn_cap must be 0 (off) or a whole number 20-5000, not %(value)s",
            value=repr(value),
        )
    )


def parse_options(data: Mapping[str, JSON]) -> SurvivorOptions:
    """Options from a dict: defaults filled in; OptionsError on unknown keys or values."""
    check_option_keys("Dice Survivor", data, _OPTION_KEYS)
    defaults = SurvivorOptions()
    finals_add_pp = option_flag("finals_add_pp", data.get("finals_add_pp", defaults.finals_add_pp))
    return SurvivorOptions(
        start_pp=option_int("start_pp", data.get("start_pp", defaults.start_pp), 1, 20),
        rematches=option_int("rematches", data.get("rematches", defaults.rematches), 0, 10),
        ko_half=option_one_of("ko_half", data.get("ko_half", defaults.ko_half), KO_HALVES),
        ko_defender=option_one_of(
            "ko_defender", data.get("ko_defender", defaults.ko_defender), KO_DEFENDER_DICE
        ),
        finals_add_pp=finals_add_pp,
        turn_cap=_turn_cap(data.get("turn_cap", defaults.turn_cap)),
    )


SETTINGS = single_profile(
    "Dice Survivor",
    _("Challenge, knock out and outlast the others with play points; in a game of 6 players "
      "or more, the last three meet in the Finals. 3 to 8 players."),
    Option("start_pp", _("Play points at the start"), low=1, high=20),
    Option("rematches", _("Rematches per player"), _("Rematches each player may call per game."),
           low=0, high=10),
    Option("ko_half", _("A failed KO costs"), kind="choice",
           choices=(("floor", _("half the play points, rounded down (at least 1)")),
                    ("ceil", _("half the play points, rounded up")))),
    Option("ko_defender", _("The KO defender's die"), kind="choice",
           choices=(("lower", _("the lower of d12 and d8")),
                    ("higher", _("the higher of d12 and d8")))),
    Option("finals_add_pp", _("Finals add play points"), _("Play points are added to the rolls "
           "in a Finals challenge. Only in a game of 6 players or more: the Finals need "
           "them at the start."), kind="flag", players_at_least=FINALS_MIN_START),
    Option("turn_cap", _("Turn cap"), _("Safety cap on turns: 0 for none, else 20-5000."),
           low=0, high=5000),
)  # fmt: skip


def rematches_left(options: SurvivorOptions, participant: Participant) -> int:
    return options.rematches - participant.rematches_used


def ko_loss(options: SurvivorOptions, pp: int) -> int:
    """What a failed KO costs a player holding ``pp`` (``ko_half``, ruling S-5)."""
    if options.ko_half == "ceil":
        return (pp + 1) // 2
    return max(1, pp // 2)


# --- orders --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SurvivorOrder:
    """One order: ``action`` is challenge, extra, ko, pass, rematch or accept.

    ``target`` is the defender of a challenge or KO, or, with ``d12`` set (a Finals
    challenge), the opponent who rolls the d12. ``double`` marks a 2-action challenge.
    """

    action: str
    target: int | None = None
    double: bool = False
    d12: bool = False


# --- state ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Participant:
    """One seat. ``ko_turn`` is the turn the KO was used in; ``out_action`` numbers the
    action that eliminated the participant (equal numbers share a place)."""

    pp: int
    rematches_used: int = 0
    ko_turn: int | None = None
    out_turn: int | None = None
    out_action: int | None = None

    @property
    def out(self) -> bool:
        return self.out_action is not None


@dataclass(frozen=True)
class SeatRoll:
    """The dice one seat rolled in one throw: ``kept`` is the die that counts, ``total`` is
    kept + the PP added (``pp``; 0 when the Finals add no PP)."""

    seat: int
    dice: str
    values: tuple[int, ...]
    kept: int
    pp: int
    total: int


@dataclass(frozen=True)
class Throw:
    """One throw of an action (ties and rematches make more than one) and what it decided."""

    rolls: tuple[SeatRoll, ...]
    decided: Text


@dataclass(frozen=True)
class Action:
    """An order as played: by ``seat`` in turn ``turn``, with its throws and result."""

    turn: int
    seat: int
    order: str
    throws: tuple[Throw, ...] = ()
    result: Text = EMPTY
    default: bool = False


@dataclass(frozen=True)
class Question:
    """The open rematch question: ``defender`` lost a challenge of stake ``stake``."""

    defender: int
    stake: int


@dataclass(frozen=True)
class Initiative:
    """One round of initiative rolls: (seat, d20) in seat order."""

    rolls: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class SurvivorState:
    """The game. ``bank`` is the net PP paid into the (unlimited) bank, so the PP held plus
    ``bank`` always equal the PP handed out at the start. ``log`` keeps the actions of the
    last turns (one round of the table) for the reports."""

    options: SurvivorOptions
    players: tuple[str, ...]
    participants: tuple[Participant, ...]
    initiative: tuple[Initiative, ...]
    first_player: int
    turn: int
    active: int
    actions_left: int
    extra_used: bool = False
    finals: bool = False
    finals_turn: int | None = None
    question: Question | None = None
    bank: int = 0
    actions_done: int = 0
    log: tuple[Action, ...] = ()
    finished: bool = False
    capped: bool = False

    @property
    def alive(self) -> list[int]:
        return [seat for seat, p in enumerate(self.participants) if not p.out]

    def pp(self, seat: int) -> int:
        return self.participants[seat].pp

    def name(self, seat: int) -> str:
        return self.players[seat]

    @property
    def actions_per_turn(self) -> int:
        return FINALS_ACTIONS if self.finals else NORMAL_ACTIONS

    @property
    def action_number(self) -> int:
        return self.actions_per_turn - self.actions_left + 1


def clockwise(state: SurvivorState, seat: int) -> list[int]:
    """The participants still in, clockwise after ``seat`` (``seat`` itself excluded)."""
    count = len(state.players)
    seats = [(seat + step) % count for step in range(1, count)]
    return [s for s in seats if not state.participants[s].out]


# --- order text ----------------------------------------------------------------------------


def _key(name: str) -> str:
    return " ".join(name.replace(",", " ").lower().split())


_D12 = re.compile(r"^d12 ?= ?(?P<name>.+)$")


def _find(state: SurvivorState, text: str) -> int | None:
    keys = {_key(name): seat for seat, name in enumerate(state.players)}
    return keys.get(text)


def _split_names(state: SurvivorState, text: str) -> list[int] | None:
    """``text`` read as player names one after another, or None if it is not that."""
    if not text:
        return []
    words = text.split(" ")
    for cut in range(len(words), 0, -1):
        seat = _find(state, " ".join(words[:cut]))
        if seat is not None:
            rest = _split_names(state, " ".join(words[cut:]))
            if rest is not None:
                return [seat, *rest]
    return None


def _player(state: SurvivorState, text: str, what: str) -> int:
    seat = _find(state, text)
    if seat is None:
        raise OrderError(
            _(
                '%(what)s: there is no player "%(text)s"; the players are %(players)s',
                what=what,
                text=text,
                players=", ".join(state.players),
            )
        )
    return seat


def _challenge_target(state: SurvivorState, rest: str) -> SurvivorOrder:
    if not rest:
        return SurvivorOrder("challenge")
    d12 = _D12.match(rest)
    if d12 is not None:
        return SurvivorOrder("challenge", _player(state, d12["name"], "challenge d12"), d12=True)
    seat = _find(state, rest)
    if seat is not None:
        return SurvivorOrder("challenge", seat)
    named = rest.removesuffix(" double")
    if named != rest:
        seat = _find(state, named)
        if seat is not None:
            return SurvivorOrder("challenge", seat, double=True)
    names = _split_names(state, named)
    if names is not None and len(names) > 1:
        raise OrderError(_("one target per challenge: write challenge <player> [double]"))
    words = rest.split(" ")
    for cut in range(len(words) - 1, 0, -1):
        seat = _find(state, " ".join(words[:cut]))
        if seat is not None:
            name = state.players[seat]
            raise OrderError(
                _('write "challenge %(name)s" or "challenge %(name)s double"', name=name)
            )
    return SurvivorOrder("challenge", _player(state, rest, "challenge"))


def parse_order(state: SurvivorState, text: str) -> SurvivorOrder:
    """The order in ``text``, syntax only (section 9): one order line per message."""
    lines = order_lines(text)
    if not lines:
        raise OrderError(_("the message holds no order: write %(syntax)s", syntax=NORMAL_SYNTAX))
    if len(lines) > 1:
        raise OrderError(
            _(
                "one order per message: this message has %(count)d order lines; "
                "send each action in its own message",
                count=len(lines),
            )
        )
    word, __, rest = lines[0].partition(" ")
    if word == "challenge":
        return _challenge_target(state, rest)
    if word == "ko":
        if not rest:
            raise OrderError(_("ko: name the player: ko <player>"))
        names = _split_names(state, rest)
        if names is not None and len(names) > 1:
            raise OrderError(_("ko: one target per KO: write ko <player>"))
        return SurvivorOrder("ko", _player(state, rest, "ko"))
    if word in ("extra", "pass", "rematch", "accept"):
        if rest:
            raise OrderError(_('%(word)s: write just "%(word)s"', word=word))
        return SurvivorOrder(word)
    raise OrderError(
        _('"%(word)s" is not an order: write %(syntax)s', word=word, syntax=NORMAL_SYNTAX)
    )


def order_text(players: Sequence[str], order: SurvivorOrder) -> str:
    """The canonical text of ``order``; ``parse_order`` reads it back."""
    if order.target is None:
        return order.action
    name = players[order.target]
    if order.d12:
        return f"{order.action} d12={name}"
    return f"{order.action} {name}{' double' if order.double else ''}"


# --- the engine ----------------------------------------------------------------------------


class _Turn:
    """A mutable working copy of the state while one order is applied."""

    def __init__(self, state: SurvivorState) -> None:
        self.state = state
        self.participants = list(state.participants)
        self.bank = state.bank
        self.throws: list[Throw] = []

    def pp(self, seat: int) -> int:
        return self.participants[seat].pp

    def name(self, seat: int) -> str:
        return self.state.players[seat]

    def _set(self, seat: int, pp: int) -> None:
        self.participants[seat] = replace(self.participants[seat], pp=pp)

    def give(self, giver: int, taker: int, amount: int) -> int:
        """``giver`` hands ``taker`` up to ``amount`` PP (no more than they hold)."""
        paid = min(amount, self.pp(giver))
        self._set(giver, self.pp(giver) - paid)
        self._set(taker, self.pp(taker) + paid)
        return paid

    def pay(self, seat: int, amount: int) -> int:
        """``seat`` pays up to ``amount`` PP to the bank (no more than they hold)."""
        paid = min(amount, self.pp(seat))
        self._set(seat, self.pp(seat) - paid)
        self.bank += paid
        return paid

    def gain(self, seat: int, amount: int) -> None:
        self._set(seat, self.pp(seat) + amount)
        self.bank -= amount

    def holdings(self, *seats: int) -> str:
        return ", ".join(f"{self.name(s)} {self.pp(s)}" for s in seats)


def _roll(seat: int, dice: str, values: tuple[int, ...], kept: int, pp: int) -> SeatRoll:
    return SeatRoll(seat, dice, values, kept, pp, kept + pp)


def _throw_text(state: SurvivorState, throw: Throw) -> Text:
    parts: list[str] = []
    for roll in throw.rolls:
        name = state.players[roll.seat]
        dice = f"{roll.dice} {'/'.join(map(str, roll.values))}"
        if len(roll.values) > 1:
            parts.append(
                _(
                    "%(name)s %(dice)s (keeps %(kept)d) + %(pp)d PP = %(total)d",
                    name=name,
                    dice=dice,
                    kept=roll.kept,
                    pp=roll.pp,
                    total=roll.total,
                )
            )
        else:
            parts.append(
                _(
                    "%(name)s %(dice)s + %(pp)d PP = %(total)d",
                    name=name,
                    dice=dice,
                    pp=roll.pp,
                    total=roll.total,
                )
            )
    return join([join(parts, "; "), throw.decided], ": ")


class DiceSurvivorEngine(JsonCodec):
    key = "dice-survivor"
    title = "Dice Survivor"
    min_players = 3
    max_players = 8
    # One player acts at a time: most steps owe nothing of most seats, so a seat's
    # reports come by default only when it owes an order.
    sequential = True
    step_word = "postal turn"
    # No private event of this game speaks to its seat ("you"): everyone reads them alike.
    onlooker_words: Mapping[str, str] = {}

    State = SurvivorState
    Order = SurvivorOrder

    def options(self, data: Mapping[str, JSON]) -> SurvivorOptions:
        return parse_options(data)

    # --- setup -----------------------------------------------------------------------------

    def start(
        self, options: SurvivorOptions, players: Sequence[str], dice: Dice
    ) -> tuple[SurvivorState, list[Event]]:
        check_players(self.title, self.min_players, self.max_players, len(players))
        rounds: list[Initiative] = []
        contenders = list(range(len(players)))
        while len(contenders) > 1:
            rolls = tuple((seat, dice.draw(PLAYER_DIE)) for seat in contenders)
            rounds.append(Initiative(rolls))
            best = max(value for __, value in rolls)
            contenders = [seat for seat, value in rolls if value == best]
        first = contenders[0]
        state = SurvivorState(
            options=options,
            players=tuple(players),
            participants=(Participant(options.start_pp),) * len(players),
            initiative=tuple(rounds),
            first_player=first,
            turn=1,
            active=first,
            actions_left=NORMAL_ACTIONS,
        )
        setup = _(
            "%(initiative)s; %(name)s is Player 1. Turn order: %(order)s. "
            "Everyone starts with %(pp)d PP",
            initiative=self._initiative_text(state),
            name=players[first],
            order=", ".join(players[seat] for seat in [first, *clockwise(state, first)]),
            pp=options.start_pp,
        )
        return state, [Event(setup), Event(self._turn_text(state))]

    @staticmethod
    def _initiative_text(state: SurvivorState) -> Text:
        parts = []
        for number, rolls in enumerate(state.initiative):
            values = ", ".join(f"{state.players[s]} {v}" for s, v in rolls.rolls)
            if number == 0:
                parts.append(_("initiative: %(values)s", values=values))
            else:
                parts.append(_("re-roll: %(values)s", values=values))
        return join(parts, "; ")

    @staticmethod
    def _turn_text(state: SurvivorState) -> Text:
        actions = ngettext("%(count)d action", "%(count)d actions", state.actions_left)
        name = state.players[state.active]
        if state.finals:
            return _(
                "Finals turn %(turn)d: %(name)s to act (%(actions)s)",
                turn=state.turn,
                name=name,
                actions=actions,
            )
        return _(
            "turn %(turn)d: %(name)s to act (%(actions)s)",
            turn=state.turn,
            name=name,
            actions=actions,
        )

    # --- prompts and checks ----------------------------------------------------------------

    def prompts(self, state: SurvivorState) -> list[Prompt]:
        if state.finished:
            return []
        if state.question is not None:
            question = state.question
            left = state.options.rematches - state.participants[question.defender].rematches_used
            return [
                Prompt(
                    question.defender,
                    _("rematch or accept"),
                    _(
                        "turn %(turn)d: you lost %(name)s's challenge (stake %(stake)d): "
                        "rematch (%(left)d left) or accept (pay %(stake)d PP)",
                        turn=state.turn,
                        name=state.players[state.active],
                        stake=question.stake,
                        left=left,
                    ),
                )
            ]
        if state.finals:
            return [
                Prompt(
                    state.active,
                    _("Finals action"),
                    _(
                        "Finals turn %(turn)d, action 1 of 1: %(choices)s",
                        turn=state.turn,
                        choices=self._finals_choices(state),
                    ),
                )
            ]
        return [
            Prompt(
                state.active,
                _("action"),
                _(
                    "turn %(turn)d, action %(number)d of %(actions)d: %(choices)s",
                    turn=state.turn,
                    number=state.action_number,
                    actions=NORMAL_ACTIONS,
                    choices=self._normal_choices(state),
                ),
            )
        ]

    @staticmethod
    def _normal_choices(state: SurvivorState) -> Text:
        """The actions the active player still has this turn, in the words of the syntax."""
        both = state.actions_left == NORMAL_ACTIONS
        choices = ["challenge <player> [double]" if both else "challenge <player>"]
        if not state.extra_used:
            choices.append("extra")
        if both and state.participants[state.active].ko_turn is None:
            choices.append("ko <player>")
        return _("%(choices)s or pass", choices=", ".join(choices))

    @staticmethod
    def _finals_choices(state: SurvivorState) -> str:
        if state.participants[state.active].ko_turn is None:
            return FINALS_SYNTAX
        return "challenge d12=<player>"

    def _expect_order(self, state: SurvivorState, seat: int) -> None:
        if not 0 <= seat < len(state.players):
            raise OrderError(_("there is no seat %(seat)d in this game", seat=seat))
        if state.finished:
            raise OrderError(_("the game is over; no order is expected from you"))
        participant = state.participants[seat]
        if participant.out:
            raise OrderError(
                _(
                    "you are out of the game since turn %(turn)s; no order is expected from you",
                    turn=participant.out_turn,
                )
            )

    def check(self, state: SurvivorState, seat: int, order: SurvivorOrder) -> None:
        """OrderError unless ``seat`` may give ``order`` now."""
        self._expect_order(state, seat)
        question = state.question
        if order.action in ("rematch", "accept"):
            if question is None or question.defender != seat:
                raise OrderError(_("no rematch question is open for you"))
            return
        if question is not None and question.defender == seat:
            raise OrderError(
                _(
                    "%(action)s: first answer the rematch question: rematch or accept",
                    action=order.action,
                )
            )
        self._not_your_turn(state, seat)
        if state.finals:
            self._check_finals(state, seat, order)
        else:
            self._check_normal(state, seat, order)

    @staticmethod
    def _not_your_turn(state: SurvivorState, seat: int) -> None:
        """OrderError unless ``seat`` is the active player and no rematch question is open."""
        question = state.question
        if question is not None:
            raise OrderError(
                _(
                    "not your turn: waiting for %(name)s to answer the rematch question",
                    name=state.name(question.defender),
                )
            )
        if seat != state.active:
            raise OrderError(
                _("not your turn: waiting for %(name)s", name=state.name(state.active))
            )

    def _check_target(self, state: SurvivorState, seat: int, target: int, yourself: Text) -> None:
        """OrderError ``yourself`` if ``target`` is ``seat``, or if ``target`` is out."""
        if target == seat:
            raise OrderError(yourself)
        if state.participants[target].out:
            raise OrderError(_("%(name)s is out of the game", name=state.name(target)))

    def _check_ko(self, state: SurvivorState, seat: int) -> None:
        used = state.participants[seat].ko_turn
        if used is not None:
            raise OrderError(_("you used your KO in turn %(turn)d", turn=used))

    def _check_normal(self, state: SurvivorState, seat: int, order: SurvivorOrder) -> None:
        if order.action == "challenge":
            if order.target is None:
                raise OrderError(_("challenge: name the player you challenge: challenge <player>"))
            if order.d12:
                raise OrderError(
                    _(
                        "challenge d12=<player> is for the Finals: "
                        "write challenge <player> or challenge <player> double"
                    )
                )
            self._check_target(state, seat, order.target, _("you cannot challenge yourself"))
            if order.double and state.actions_left < NORMAL_ACTIONS:
                raise OrderError(
                    _(
                        "a double challenge needs 2 actions; you have %(left)d",
                        left=state.actions_left,
                    )
                )
        elif order.action == "extra":
            if state.extra_used:
                raise OrderError(_("Extra Play Point is allowed once per turn"))
        elif order.action == "ko":
            assert order.target is not None
            self._check_ko(state, seat)
            if state.actions_left < NORMAL_ACTIONS:
                raise OrderError(
                    _("a KO needs both actions; you have %(left)d left", left=state.actions_left)
                )
            self._check_target(state, seat, order.target, _("you cannot KO yourself"))

    def _check_finals(self, state: SurvivorState, seat: int, order: SurvivorOrder) -> None:
        opponents = clockwise(state, seat)
        if order.action == "ko":
            assert order.target is not None
            self._check_ko(state, seat)
            self._check_target(state, seat, order.target, _("you cannot KO yourself"))
            return
        if order.action != "challenge":
            raise OrderError(
                _("the Finals allow only a challenge or a KO: %(syntax)s", syntax=FINALS_SYNTAX)
            )
        if order.target is None:
            if len(opponents) > 1:
                raise OrderError(_("name who rolls the d12: challenge d12=<player>"))
            return
        if not order.d12:
            raise OrderError(
                _(
                    "in the Finals you challenge all your opponents: "
                    "write challenge d12=<player> to name who rolls the d12"
                )
            )
        if order.target == seat:
            raise OrderError(_("the d12 goes to one of your opponents"))
        if state.participants[order.target].out:
            raise OrderError(_("%(name)s is out of the game", name=state.name(order.target)))

    def parse(self, state: SurvivorState, seat: int, text: str) -> SurvivorOrder:
        self._expect_order(state, seat)
        try:
            order = parse_order(state, text)
        except OrderError:
            if seat not in {prompt.seat for prompt in self.prompts(state)}:
                self._not_your_turn(state, seat)
            raise
        self.check(state, seat, order)
        return self._complete(state, seat, order)

    @staticmethod
    def _complete(state: SurvivorState, seat: int, order: SurvivorOrder) -> SurvivorOrder:
        """A Finals challenge against one opponent names that opponent's d12."""
        if state.finals and order.action == "challenge" and order.target is None:
            return SurvivorOrder("challenge", clockwise(state, seat)[0], d12=True)
        return order

    def default(self, state: SurvivorState, seat: int) -> SurvivorOrder:
        self._expect_order(state, seat)
        if state.question is not None:
            if state.question.defender != seat:
                raise OrderError(_("no order is expected from you now"))
            return SurvivorOrder("accept")
        self._not_your_turn(state, seat)
        if not state.finals:
            return SurvivorOrder("pass")
        opponents = clockwise(state, seat)
        richest = max(state.pp(s) for s in opponents)
        holder = next(s for s in opponents if state.pp(s) == richest)
        return SurvivorOrder("challenge", holder, d12=True)

    def canonical(self, state: SurvivorState, seat: int, order: SurvivorOrder) -> str:
        return order_text(state.players, order)

    # --- playing an order ------------------------------------------------------------------

    def submit(
        self, state: SurvivorState, seat: int, order: SurvivorOrder, dice: Dice
    ) -> tuple[SurvivorState, list[Event]]:
        self.check(state, seat, order)
        return self._play(state, seat, self._complete(state, seat, order), dice, default=False)

    def resolve(self, state: SurvivorState, dice: Dice) -> tuple[SurvivorState, list[Event]]:
        if state.finished:
            raise GameError(_("the game is over; there is nothing to resolve"))
        (prompt,) = self.prompts(state)
        order = self.default(state, prompt.seat)
        late = Event(
            _(
                "%(name)s sent no order: the no-moves default is %(order)s",
                name=state.name(prompt.seat),
                order=order_text(state.players, order),
            )
        )
        state, events = self._play(state, prompt.seat, order, dice, default=True)
        return state, [late, *events]

    def _play(
        self, state: SurvivorState, seat: int, order: SurvivorOrder, dice: Dice, default: bool
    ) -> tuple[SurvivorState, list[Event]]:
        work = _Turn(state)
        text = order_text(state.players, order)
        header = f"{state.name(seat)}: {text}"
        question: Question | None = None
        actions_left = state.actions_left
        extra_used = state.extra_used
        ends_turn = False
        result: Text
        if order.action == "pass":
            result = _("%(name)s ends the turn", name=state.name(seat))
            ends_turn = True
        elif order.action == "extra":
            result = self._extra(work, seat, dice)
            actions_left -= 1
            extra_used = True
        elif order.action == "ko":
            result = self._ko(work, seat, order, dice)
            actions_left = 0
        elif order.action == "challenge" and state.finals:
            result = self._finals_challenge(work, seat, order, dice)
            actions_left = 0
        elif order.action == "challenge":
            assert order.target is not None
            stake = 2 if order.double else 1
            actions_left -= stake
            result, question = self._challenge(work, seat, order.target, stake, dice)
        elif order.action == "rematch":
            result = self._rematch(work, seat, dice)
        else:
            assert state.question is not None
            stake = state.question.stake
            paid = work.pay(seat, stake)
            result = _(
                "%(name)s accepts and pays %(paid)d PP: %(holdings)s",
                name=state.name(seat),
                paid=paid,
                holdings=work.holdings(seat),
            )
        action = Action(
            turn=state.turn,
            seat=seat,
            order=text,
            throws=tuple(work.throws),
            result=result,
            default=default,
        )
        lines = [header, *(_throw_text(state, throw) for throw in work.throws), result]
        events = [Event(join(lines, "\n"))]
        state = replace(
            state,
            participants=tuple(work.participants),
            bank=work.bank,
            actions_done=state.actions_done + 1,
            actions_left=actions_left,
            extra_used=extra_used,
            question=question,
            log=(*state.log, action),
        )
        if question is not None:
            return state, events
        state, more = self._after_action(state, ends_turn)
        return state, events + more

    # --- the actions -----------------------------------------------------------------------

    @staticmethod
    def _duel(
        work: _Turn, active: int, defender: int, dice: Dice, keep: str = "lower"
    ) -> tuple[int, int, int]:
        """One throw of d20 against d12 and d8 (always all three); returns (d20, active
        total, defender total) and records the throw with an empty ``decided``."""
        d20 = dice.draw(PLAYER_DIE)
        d12 = dice.draw(MAJOR_DIE)
        d8 = dice.draw(MINOR_DIE)
        kept = min(d12, d8) if keep == "lower" else max(d12, d8)
        mine = _roll(active, "d20", (d20,), d20, work.pp(active))
        theirs = _roll(defender, "d12/d8", (d12, d8), kept, work.pp(defender))
        work.throws.append(Throw((mine, theirs), EMPTY))
        return d20, mine.total, theirs.total

    @staticmethod
    def _decided(work: _Turn, text: Text) -> None:
        work.throws[-1] = replace(work.throws[-1], decided=text)

    def _naturals(self, work: _Turn, active: int, defender: int, d20: int) -> Text | None:
        """A natural 1 or 20 moves exactly 1 PP and decides the throw (ruling S-4)."""
        if d20 == 1:
            paid = work.give(active, defender, 1)
            self._decided(work, _("natural 1"))
            return _(
                "natural 1: %(giver)s gives %(taker)s %(paid)d PP: %(holdings)s",
                giver=work.name(active),
                taker=work.name(defender),
                paid=paid,
                holdings=work.holdings(active, defender),
            )
        if d20 == PLAYER_DIE:
            paid = work.give(defender, active, 1)
            self._decided(work, _("natural 20"))
            return _(
                "natural 20: %(giver)s gives %(taker)s %(paid)d PP: %(holdings)s",
                giver=work.name(defender),
                taker=work.name(active),
                paid=paid,
                holdings=work.holdings(active, defender),
            )
        return None

    @staticmethod
    def _pays(work: _Turn, seat: int, amount: int) -> Text:
        """``seat`` pays ``amount`` PP to the bank (what it holds at most), in words."""
        paid = work.pay(seat, amount)
        return _(
            "%(name)s pays %(paid)d PP: %(holdings)s",
            name=work.name(seat),
            paid=paid,
            holdings=work.holdings(seat),
        )

    def _challenge(
        self, work: _Turn, active: int, defender: int, stake: int, dice: Dice
    ) -> tuple[Text, Question | None]:
        while True:
            d20, mine, theirs = self._duel(work, active, defender, dice)
            natural = self._naturals(work, active, defender, d20)
            if natural is not None:
                return natural, None
            if mine != theirs:
                break
            self._decided(work, _("equal totals: both roll again"))
        if mine < theirs:
            self._decided(work, _("%(name)s lower", name=work.name(active)))
            return self._pays(work, active, stake), None
        self._decided(work, _("%(name)s lower", name=work.name(defender)))
        participant = work.participants[defender]
        left = rematches_left(work.state.options, participant)
        if left > 0:
            return (
                _(
                    "%(name)s lost and is asked: rematch (%(left)d left) "
                    "or accept (pay %(stake)d PP)",
                    name=work.name(defender),
                    left=left,
                    stake=stake,
                ),
                Question(defender, stake),
            )
        paid = work.pay(defender, stake)
        return (
            _(
                "%(name)s has no rematch left and pays %(paid)d PP: %(holdings)s",
                name=work.name(defender),
                paid=paid,
                holdings=work.holdings(defender),
            ),
            None,
        )

    def _rematch(self, work: _Turn, defender: int, dice: Dice) -> Text:
        state = work.state
        assert state.question is not None
        stake = state.question.stake
        active = state.active
        used = work.participants[defender].rematches_used + 1
        work.participants[defender] = replace(work.participants[defender], rematches_used=used)
        while True:
            d20, mine, theirs = self._duel(work, active, defender, dice)
            natural = self._naturals(work, active, defender, d20)
            if natural is not None:
                return natural
            if mine != theirs:
                break
            self._decided(work, _("equal totals: both roll again"))
        if theirs < mine:
            self._decided(work, _("%(name)s lower again", name=work.name(defender)))
            return self._pays(work, defender, 2 * stake)
        self._decided(work, _("%(name)s higher", name=work.name(defender)))
        return self._pays(work, active, stake)

    @staticmethod
    def _extra(work: _Turn, seat: int, dice: Dice) -> Text:
        d20 = dice.draw(PLAYER_DIE)
        roll = _roll(seat, "d20", (d20,), d20, work.pp(seat))
        if roll.total >= EXTRA_TARGET:
            work.throws.append(Throw((roll,), _("%(target)d or more", target=EXTRA_TARGET)))
            work.gain(seat, 1)
            return _(
                "%(name)s gains 1 PP: %(holdings)s",
                name=work.name(seat),
                holdings=work.holdings(seat),
            )
        work.throws.append(Throw((roll,), _("below %(target)d", target=EXTRA_TARGET)))
        return _("%(name)s gains nothing", name=work.name(seat))

    def _ko(self, work: _Turn, seat: int, order: SurvivorOrder, dice: Dice) -> Text:
        assert order.target is not None
        target = order.target
        state = work.state
        work.participants[seat] = replace(work.participants[seat], ko_turn=state.turn)
        __, mine, theirs = self._duel(work, seat, target, dice, state.options.ko_defender)
        if mine > theirs:
            self._decided(work, _("%(name)s higher", name=work.name(seat)))
            work.pay(target, work.pp(target))
            return _("%(name)s loses all PP and is knocked out", name=work.name(target))
        if mine < theirs:
            self._decided(work, _("%(name)s lower", name=work.name(seat)))
            paid = work.give(seat, target, ko_loss(state.options, work.pp(seat)))
            return _(
                "%(giver)s gives %(taker)s %(paid)d PP: %(holdings)s",
                giver=work.name(seat),
                taker=work.name(target),
                paid=paid,
                holdings=work.holdings(seat, target),
            )
        self._decided(work, _("equal totals"))
        return _("nothing happens; the KO is used")

    def _finals_challenge(self, work: _Turn, seat: int, order: SurvivorOrder, dice: Dice) -> Text:
        assert order.target is not None
        state = work.state
        opponents = clockwise(state, seat)
        major = order.target
        minor = [s for s in opponents if s != major]
        add = state.options.finals_add_pp
        while True:
            d20 = dice.draw(PLAYER_DIE)
            rolls = [_roll(seat, "d20", (d20,), d20, work.pp(seat) if add else 0)]
            d12 = dice.draw(MAJOR_DIE)
            rolls.append(_roll(major, "d12", (d12,), d12, work.pp(major) if add else 0))
            for other in minor:
                d8 = dice.draw(MINOR_DIE)
                rolls.append(_roll(other, "d8", (d8,), d8, work.pp(other) if add else 0))
            work.throws.append(Throw(tuple(rolls), EMPTY))
            if d20 == 1:
                self._decided(work, _("natural 1"))
                for other in opponents:
                    work.give(seat, other, 1)
                return _(
                    "natural 1: %(name)s gives each opponent 1 PP while they last: %(holdings)s",
                    name=work.name(seat),
                    holdings=work.holdings(seat, *opponents),
                )
            if d20 == PLAYER_DIE:
                self._decided(work, _("natural 20"))
                for other in opponents:
                    work.give(other, seat, 1)
                return _(
                    "natural 20: each opponent gives %(name)s 1 PP: %(holdings)s",
                    name=work.name(seat),
                    holdings=work.holdings(seat, *opponents),
                )
            best = max(roll.total for roll in rolls)
            losers = [roll.seat for roll in rolls if roll.total < best]
            if losers:
                break
            self._decided(work, _("all totals equal: everyone rolls again"))
        names = join([work.name(s) for s in losers], _(" and "))
        self._decided(work, _("%(names)s below the highest total %(best)d", names=names, best=best))
        for loser in losers:
            work.pay(loser, 1)
        return ngettext(
            "%(names)s loses 1 PP: %(holdings)s",
            "%(names)s lose 1 PP: %(holdings)s",
            len(losers),
            names=names,
            holdings=work.holdings(*losers),
        )

    # --- after an action -------------------------------------------------------------------

    def _after_action(
        self, state: SurvivorState, ends_turn: bool
    ) -> tuple[SurvivorState, list[Event]]:
        """POST_ACTION of section 7: eliminations, the end, the Finals, the turn's end."""
        events: list[Event] = []
        participants = list(state.participants)
        for seat, participant in enumerate(participants):
            if participant.pp == 0 and not participant.out:
                participants[seat] = replace(
                    participant, out_turn=state.turn, out_action=state.actions_done
                )
                events.append(Event(_("%(name)s is eliminated", name=state.name(seat))))
        state = replace(state, participants=tuple(participants))
        alive = state.alive
        if len(alive) == 1:
            state = replace(state, finished=True, actions_left=0)
            return state, [*events, Event(self._final_text(state))]
        starts_finals = (
            not state.finals
            and len(state.players) >= FINALS_MIN_START
            and len(alive) == FINALS_SIZE
        )
        if starts_finals:
            names = ", ".join(state.name(s) for s in alive)
            events.append(
                Event(_("three participants remain (%(names)s): the Finals begin", names=names))
            )
            state = replace(state, finals=True, finals_turn=state.turn + 1)
            ends_turn = True
        if ends_turn or state.actions_left <= 0 or state.participants[state.active].out:
            state, more = self._end_turn(state)
            events.extend(more)
        else:
            events.append(
                Event(
                    _(
                        "turn %(turn)d: %(name)s goes on with action %(number)d of %(actions)d",
                        turn=state.turn,
                        name=state.name(state.active),
                        number=state.action_number,
                        actions=NORMAL_ACTIONS,
                    )
                )
            )
        return state, events

    def _end_turn(self, state: SurvivorState) -> tuple[SurvivorState, list[Event]]:
        cap = state.options.turn_cap
        if cap and state.turn >= cap:
            state = replace(state, finished=True, capped=True, actions_left=0)
            return state, [
                Event(_("turn %(turn)d was the last (turn cap): the game stops", turn=state.turn)),
                Event(self._final_text(state)),
            ]
        following = clockwise(state, state.active)[0]
        turn = state.turn + 1
        keep = set(range(turn - len(state.players) + 1, turn + 1))
        state = replace(
            state,
            turn=turn,
            active=following,
            actions_left=FINALS_ACTIONS if state.finals else NORMAL_ACTIONS,
            extra_used=False,
            log=tuple(action for action in state.log if action.turn in keep),
        )
        return state, [Event(self._turn_text(state))]

    def _final_text(self, state: SurvivorState) -> Text:
        places = "; ".join(
            f"{s.place}. {state.players[s.seat]} ({s.score})" for s in self.standings(state) or []
        )
        return _("the game is over: %(places)s", places=places)

    # --- standings -------------------------------------------------------------------------

    def candidates(self, state: SurvivorState, seat: int) -> list[tuple[str, str]]:
        """One-line orders a web form may offer ``seat`` now, as (text, label): more than
        are legal (the form keeps those ``submit`` accepts)."""
        if state.finished:
            return []
        if state.question is not None:
            return [("rematch", _("rematch: roll again")), ("accept", _("accept the result"))]
        others = [state.players[s] for s in state.alive if s != seat]
        knockouts = [
            (f"ko {name}", _("KO %(name)s (both actions, once a game)", name=name))
            for name in others
        ]
        if state.finals:
            rollers = [state.players[s] for s in state.alive]
            return [
                ("challenge", _("challenge")),
                *(
                    (f"challenge d12={name}", _("challenge: %(name)s rolls the d12", name=name))
                    for name in rollers
                ),
                *knockouts,
            ]
        return [
            ("pass", _("pass: end your turn")),
            ("extra", _("extra: take an Extra Play Point")),
            *(
                (f"challenge {name}", _("challenge %(name)s (stake 1)", name=name))
                for name in others
            ),
            *(
                (f"challenge {name} double", _("challenge %(name)s double (stake 2)", name=name))
                for name in others
            ),
            *knockouts,
        ]

    def confirmation(self, state: SurvivorState, seat: int, text: str) -> str | None:
        """What a player ticks before a one-tap order that can be given once a game (the
        KO), in the player's words; None for any other order."""
        try:
            order = parse_order(state, text)
        except OrderError:
            return None
        if order.action != "ko" or order.target is None:
            return None
        return _("Yes, use my one KO of the game on %(name)s", name=state.players[order.target])

    def standings(self, state: SurvivorState) -> list[Standing] | None:
        if not state.finished:
            return None
        keys: list[tuple[int, tuple[int, int]]] = []
        for seat, participant in enumerate(state.participants):
            if participant.out_action is None:
                keys.append((seat, (0, -participant.pp)))
            else:
                keys.append((seat, (1, -participant.out_action)))
        return [
            Standing(seat, place, state.participants[seat].pp)
            for seat, place in competition_places(keys)
        ]

    # --- what players see ------------------------------------------------------------------

    def legal_orders(self, state: SurvivorState, seat: int) -> list[SurvivorOrder]:
        """Every order ``seat`` may give now, in the order the web form lists them."""
        candidates: list[SurvivorOrder] = [SurvivorOrder("rematch"), SurvivorOrder("accept")]
        others = [s for s in range(len(state.players)) if s != seat]
        if state.finals:
            candidates += [SurvivorOrder("challenge", s, d12=True) for s in others]
        else:
            candidates += [SurvivorOrder("challenge", s) for s in others]
            candidates += [SurvivorOrder("challenge", s, double=True) for s in others]
            candidates += [SurvivorOrder("extra")]
        candidates += [SurvivorOrder("ko", s) for s in others]
        candidates += [SurvivorOrder("pass")]
        legal: list[SurvivorOrder] = []
        for order in candidates:
            try:
                self.check(state, seat, order)
            except OrderError:
                continue
            legal.append(order)
        return legal

    def _participant_view(self, state: SurvivorState, seat: int) -> dict[str, JSON]:
        participant = state.participants[seat]
        return {
            "seat": seat,
            "name": state.players[seat],
            "pp": participant.pp,
            "out": participant.out,
            "out_turn": participant.out_turn,
            "active": not state.finished and seat == state.active,
            "rematches_used": participant.rematches_used,
            "rematches_left": rematches_left(state.options, participant),
            "ko_left": participant.ko_turn is None,
            "ko_turn": participant.ko_turn,
        }

    @staticmethod
    def _action_view(state: SurvivorState, action: Action) -> dict[str, JSON]:
        return {
            "turn": action.turn,
            "player": state.players[action.seat],
            "order": action.order,
            "default": action.default,
            "throws": [
                {
                    "rolls": [
                        {
                            "seat": roll.seat,
                            "player": state.players[roll.seat],
                            "dice": roll.dice,
                            "values": list(roll.values),
                            # Each die with its sides ("d12/d8": 12, then 8), to draw it.
                            "faces": [
                                {"value": value, "sides": int(die.removeprefix("d"))}
                                for value, die in zip(
                                    roll.values, roll.dice.split("/"), strict=True
                                )
                            ],
                            "kept": roll.kept,
                            "pp": roll.pp,
                            "total": roll.total,
                        }
                        for roll in throw.rolls
                    ],
                    "decided": throw.decided,
                    "text": _throw_text(state, throw),
                }
                for throw in action.throws
            ],
            "result": action.result,
        }

    def view(self, state: SurvivorState, seat: int | None) -> dict[str, JSON]:
        owed = self.prompts(state)
        question = state.question
        data: dict[str, JSON] = {
            "game": self.key,
            "status": "finished" if state.finished else "running",
            "options": to_json(state.options),
            "phase": "over" if state.finished else "finals" if state.finals else "normal",
            "finals_turn": state.finals_turn,
            "turn": state.turn,
            "turn_cap": state.options.turn_cap,
            "capped": state.capped,
            "active": None if state.finished else state.players[state.active],
            "actions_per_turn": state.actions_per_turn,
            "actions_left": state.actions_left,
            "action_number": None if state.finished else state.action_number,
            "extra_used": state.extra_used,
            "waiting_for": [state.players[p.seat] for p in owed],
            "owed": [
                {"player": state.players[p.seat], "kind": p.kind, "hint": p.hint} for p in owed
            ],
            "rematch_question": None
            if question is None
            else {
                "defender": state.players[question.defender],
                "challenger": state.players[state.active],
                "stake": question.stake,
                "rematches_left": rematches_left(
                    state.options, state.participants[question.defender]
                ),
            },
            "bank": state.bank,
            "initiative": [
                [{"player": state.players[s], "d20": v} for s, v in rolls.rolls]
                for rolls in state.initiative
            ],
            "first_player": state.players[state.first_player],
            "players": [self._participant_view(state, s) for s in range(len(state.players))],
            "this_turn": [self._action_view(state, a) for a in state.log if a.turn == state.turn],
            "recent": [self._action_view(state, a) for a in state.log],
        }
        if seat is not None:
            mine = [p for p in owed if p.seat == seat]
            data["you"] = {
                "seat": seat,
                "name": state.players[seat],
                "pp": state.participants[seat].pp,
                "owed": mine[0].kind if mine else None,
                "hint": mine[0].hint if mine else None,
                "orders": [
                    order_text(state.players, order)
                    for order in (self.legal_orders(state, seat) if mine else [])
                ],
            }
        standings = self.standings(state)
        if standings is not None:
            data["standings"] = [
                {"player": state.players[s.seat], "place": s.place, "score": s.score}
                for s in standings
            ]
        return data
