"""The engine contract: every game is a pure module that turns (state, orders, dice) into
(state, events). Nothing below ``games/engines`` imports Django or touches the database.

State, orders and options are frozen dataclasses. ``to_json``/``from_json`` turn them into
plain JSON data and back, guided by the dataclass type hints, so a step's state can be stored
and a game replayed from its record.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, TypeVar, Union

from games.engines import text as engine_text
from games.engines.text import _, join

JSON = Any


class GameError(Exception):
    """Base of the errors a person can read; ``str(error)`` is the message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class OrderError(GameError):
    """An order that cannot be accepted now: the message names the line and the reason.

    ``applied``: for an order whose earlier lines took effect at once (dice drawn) before a
    later line failed, the (state, events) with those lines applied; they stand, and the
    caller must keep that state. None when nothing was applied.
    """

    def __init__(self, message: str, applied: tuple[Any, list[Event]] | None = None) -> None:
        super().__init__(message)
        self.applied = applied


class OptionsError(GameError):
    """Game options that are unknown, ill-typed or out of range."""


class DiceError(GameError):
    """A dice source that cannot give the die asked for (a broken scripted record)."""


@dataclass(frozen=True)
class Event:
    """Something that happened. ``to`` is None for the public, else the seats that may see it."""

    text: str
    to: tuple[int, ...] | None = None

    def visible_to(self, seat: int | None) -> bool:
        return self.to is None or (seat is not None and seat in self.to)


@dataclass(frozen=True)
class Prompt:
    """An order a seat owes now: ``kind`` in the game's words and a one-line hint."""

    seat: int
    kind: str
    hint: str


@dataclass(frozen=True)
class Standing:
    """A final place. Places follow the competition rule (1, 1, 3); score None if unscored."""

    seat: int
    place: int
    score: int | None


class Dice(Protocol):
    """The one dice source of a game: every die is drawn here, one value at a time."""

    def draw(self, sides: int) -> int: ...


StateT = TypeVar("StateT")
OrderT = TypeVar("OrderT")
OptionsT = TypeVar("OptionsT")


class Engine(Protocol[OptionsT, StateT, OrderT]):
    """What the postal layer and ``replay`` know of a game (DESIGN.md section 4)."""

    key: str
    title: str
    min_players: int
    max_players: int
    # True when one seat at a time owes an order (the players take turns): a seat's step
    # reports then come by default only when it owes one (games.notify.email_choices).
    sequential: bool
    # What the players call a step of this game, "postal turn", "turn" or "round": the pages
    # say "postal turn 5", not "step 5". "turn" or "round" only where a step is always one
    # of the game's own turns or rounds, numbered alike: a Choice step is a postal turn (of
    # rounds), a Liar's Dice step one move of a round, a Drop-Shy step may play several
    # turns, a First Player round takes several steps; each prompt names the game's own.
    step_word: str
    # How the game's private events read to anyone but the seats they are told to (the
    # replay, the GM's log): each template of an event told to a seat in the second person
    # ("round %(round)d: your dice are %(dice)s") -> its words in the third person, with the
    # same arguments and ``player``, the seat's name ("round %(round)d: %(player)s's dice
    # are %(dice)s"), marked with ``_`` for the game's catalogue. Said by
    # ``games.lib.words.onlooker``.
    onlooker_words: Mapping[str, str]

    def options(self, data: Mapping[str, JSON]) -> OptionsT:
        """Options from a dict: defaults filled in; OptionsError on unknown keys or values."""
        ...

    def start(
        self, options: OptionsT, players: Sequence[str], dice: Dice
    ) -> tuple[StateT, list[Event]]: ...

    def prompts(self, state: StateT) -> list[Prompt]:
        """Who owes what now; [] once the game is finished."""
        ...

    def parse(self, state: StateT, seat: int, text: str) -> OrderT:
        """The order in ``text``, or OrderError naming the line and the reason."""
        ...

    def submit(
        self, state: StateT, seat: int, order: OrderT, dice: Dice
    ) -> tuple[StateT, list[Event]]:
        """Check ``order`` against the state (OrderError if illegal now) and take it in."""
        ...

    def resolve(self, state: StateT, dice: Dice) -> tuple[StateT, list[Event]]:
        """Close the step: NMR defaults for open prompts, apply it, open the next one."""
        ...

    def default(self, state: StateT, seat: int) -> OrderT:
        """The no-moves-received order of ``seat``."""
        ...

    def canonical(self, state: StateT, seat: int, order: OrderT) -> str:
        """The order as the engine writes it (what a receipt echoes; parse() reads it back)."""
        ...

    def view(self, state: StateT, seat: int | None) -> dict[str, JSON]:
        """What ``seat`` (None: the public) may see, as JSON data."""
        ...

    def standings(self, state: StateT) -> list[Standing] | None:
        """Final standings once the game is finished, else None."""
        ...

    def state_to_json(self, state: StateT) -> JSON: ...

    def state_from_json(self, data: JSON) -> StateT: ...

    def order_to_json(self, order: OrderT) -> JSON: ...

    def order_from_json(self, data: JSON) -> OrderT: ...


# --- the options a GM sets -----------------------------------------------------------------
# Each game describes its options once, in its home: the GM's new-game form and the options
# in words on every page derive from these. ``options()`` stays the judge of a value.


@dataclass(frozen=True)
class Option:
    """One option as a GM sets it.

    ``kind``: "int" (``low``-``high``), "choice" (one of ``choices``), "flag", "multi" (any of
    ``choices``), "name" (a player's name or nothing), "names" (players' names) or
    "name_counts" (a number per player). ``choices`` pairs a value with its words.
    ``profiles``: the profiles it belongs to, () for every profile of the game.
    ``players_at_least``: the number of players the rule it sets needs to come into play
    (0: any); a game of fewer players does not list it (``applies``), promising nothing
    that cannot happen."""

    key: str
    label: str
    help: str = ""
    kind: str = "int"
    low: int = 0
    high: int = 0
    choices: tuple[tuple[JSON, str], ...] = ()
    profiles: tuple[str, ...] = ()
    players_at_least: int = 0

    def applies(self, players: int | None) -> bool:
        """Whether the rule this option sets comes into play in a game of ``players``
        (None: a number not known yet, where every option is listed)."""
        return players is None or players >= self.players_at_least

    def words(self, value: JSON) -> str:
        """``value`` (as the options dataclass holds it) in the GM's and players' words."""
        named = {str(choice): words for choice, words in self.choices}
        if self.kind == "flag":
            return _("yes") if value else _("no")
        if self.kind == "choice":
            return named.get(str(value), str(value))
        if self.kind == "multi":
            return join(named.get(str(item), str(item)) for item in value) or _("none")
        if self.kind == "name":
            return str(value) if value else _("none")
        if self.kind == "names":
            return ", ".join(str(item) for item in value) or _("none")
        if self.kind == "name_counts":
            return ", ".join(f"{name} {count}" for name, count in value) or _("none listed")
        return str(value)


@dataclass(frozen=True)
class Profile:
    """A way to play the game that GMs pick by name (Choice: Suppenkasper). ``key`` is the
    value of the game's profile option, "" for a game with one way to play. ``players``:
    how many players it takes (fewest, most) when not the game's own counts (Death Match:
    exactly two)."""

    key: str
    title: str
    summary: str
    players: tuple[int, int] | None = None


@dataclass(frozen=True)
class Settings:
    """Everything a GM chooses about a game before it starts: its profiles (``profile_key``
    names the option that holds the profile) and the options of each."""

    profiles: tuple[Profile, ...]
    options: tuple[Option, ...] = ()
    profile_key: str = ""

    def profile(self, key: str) -> Profile:
        """The profile ``key`` ("": the game's first); KeyError if it has none so named."""
        if not key:
            return self.profiles[0]
        for profile in self.profiles:
            if profile.key == key:
                return profile
        raise KeyError(key)

    def profile_of(self, data: Mapping[str, JSON]) -> Profile:
        """The profile the options ``data`` choose (the first when they name none)."""
        if self.profile_key and self.profile_key in data:
            return self.profile(str(data[self.profile_key]))
        return self.profiles[0]

    def options_of(self, profile: str) -> tuple[Option, ...]:
        """The options a GM sets for ``profile``, in the order the form shows them."""
        return tuple(o for o in self.options if not o.profiles or profile in o.profiles)

    def applies(self, key: str, players: int | None) -> bool:
        """Whether option ``key`` comes into play in a game of ``players`` (None: not known
        yet); KeyError if the game has no option so named."""
        for option in self.options:
            if option.key == key:
                return option.applies(players)
        raise KeyError(key)

    def describe(
        self, data: Mapping[str, JSON], parsed: Any, players: int | None = None
    ) -> list[tuple[str, str]]:
        """(label, words) for each option of the profile ``data`` chose, with the values of
        ``parsed`` (the engine's options dataclass, defaults filled in); for a game of
        ``players`` (when known), only the options that come into play in it."""
        profile = self.profile_of(data)
        return [
            (o.label, o.words(getattr(parsed, o.key)))
            for o in self.options_of(profile.key)
            if o.applies(players)
        ]


@dataclass(frozen=True)
class Strategy:
    """An autopilot a player may choose for a seat: what plays the seat's owed order when
    they miss a deadline, instead of the game's no-moves-received default.

    ``play(state, seat)`` returns an order that ``submit`` takes now. It is pure and
    deterministic: it reads only what ``view(state, seat)`` shows that seat (never another
    seat's hidden dice), draws no dice, and gives the same order for the same state, so a
    game replays from its record. ``key`` is stored on the seat; ``title`` is what the
    player picks and what the report names."""

    key: str
    title: str
    summary: str
    play: Callable[[Any, int], Any]


@dataclass(frozen=True)
class Verdict:
    """What a conditional order does when its seat's turn comes: ``play`` the order
    ``order`` (text, checked by ``submit`` as any order), ``wait`` (not its seat's turn
    yet), or ``disarm`` it, the situation it assumed gone, with the ``reason`` told to the
    player."""

    action: str  # "play" | "wait" | "disarm"
    order: str = ""
    reason: str = ""


@dataclass(frozen=True)
class Conditions:
    """Conditional orders of a game played in turns (docs/orders.md): orders a player
    whose turn it is not leaves for what the others might do, in the game's own words.

    ``parse(state, seat, text)`` reads one and checks it against the rules now: its stored
    form (JSON: what ``play`` reads, the situation it assumes included), or OrderError
    with the reason. ``words(data)`` says it back as the game writes it. ``play(state,
    seat, data)`` decides, when the seat is prompted, its Verdict. All three are pure:
    they read the state and nothing else, so a replay (which replays the orders they
    played) plays the game the same way. ``syntax``: one line that says how to write one;
    ``example``: one written so; ``hint``: what its words mean, in a sentence."""

    parse: Callable[[Any, int, str], JSON]
    words: Callable[[JSON], str]
    play: Callable[[Any, int, JSON], Verdict]
    syntax: str
    example: str
    hint: str


def single_profile(title: str, summary: str, *options: Option) -> Settings:
    """The settings of a game with one way to play."""
    return Settings(profiles=(Profile("", title, summary),), options=options)


# --- option values --------------------------------------------------------------------------
# What every engine's options() checks: the messages a GM sees for a bad value.


def is_int(value: JSON) -> bool:
    """A whole number, and not a bool (JSON's true is not 1)."""
    return isinstance(value, int) and not isinstance(value, bool)


def option_int(key: str, value: JSON, low: int, high: int) -> int:
    if not is_int(value):
        raise OptionsError(
            _(
                "option %(key)s must be a whole number %(low)d-%(high)d, not %(value)s",
                key=key,
                low=low,
                high=high,
                value=repr(value),
            )
        )
    if not low <= value <= high:
        raise OptionsError(
            _(
                "option %(key)s must be %(low)d-%(high)d, not %(value)d",
                key=key,
                low=low,
                high=high,
                value=value,
            )
        )
    return int(value)


def option_one_of(key: str, value: JSON, allowed: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise OptionsError(
            _(
                "option %(key)s must be one of %(allowed)s, not %(value)s",
                key=key,
                allowed=", ".join(allowed),
                value=repr(value),
            )
        )
    return value


def option_flag(key: str, value: JSON) -> bool:
    if not isinstance(value, bool):
        raise OptionsError(
            _("option %(key)s must be true or false, not %(value)s", key=key, value=repr(value))
        )
    return value


def check_option_keys(title: str, data: Any, keys: Sequence[str]) -> None:
    """OptionsError unless ``data`` is a mapping whose every key is one of ``keys``."""
    if not isinstance(data, Mapping):
        raise OptionsError(_("the options must be a mapping of option keys to values"))
    for key in data:
        if key not in keys:
            raise OptionsError(
                _(
                    "unknown option %(key)s (%(title)s options: %(keys)s)",
                    key=repr(key),
                    title=title,
                    keys=", ".join(keys),
                )
            )


def check_players(title: str, low: int, high: int, count: int) -> None:
    """OptionsError unless ``count`` players may play ``title``."""
    if not low <= count <= high:
        raise OptionsError(
            _(
                "%(title)s takes %(low)d to %(high)d players, not %(count)d",
                title=title,
                low=low,
                high=high,
                count=count,
            )
        )


# --- order text ---------------------------------------------------------------------------


# The longest order line read: far above any legal order (a First Player ``arrange`` of 56
# dice), low enough that a message quoting a line stays one short line.
MAX_LINE = 120


def counted(number: int, one: str, many: str = "") -> str:
    """``number`` with the word that fits it: ``counted(1, "die", "dice")`` is "1 die",
    ``counted(2, "token")`` "2 tokens" (the plural adds an s unless given)."""
    return f"{number} {one if number == 1 else many or one + 's'}"


def order_lines(text: str) -> list[str]:
    """The lines of an order as every game reads them (rules/README.md, conventions).

    Case is folded, commas count as spaces, runs of white space are one space, blank lines
    go, e-mail quotes (lines starting with ``>``) go, and everything after a signature line
    (``-- ``) goes. A line still longer than ``MAX_LINE``, or holding a character that is not
    printable (a control or invisible format character), is an OrderError: the games quote
    the lines they refuse, and a message must stay one short line a player can read.
    """
    lines: list[str] = []
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if raw.rstrip() == "--":
            break
        line = raw.strip()
        if line.startswith(">"):
            continue
        line = " ".join(line.replace(",", " ").lower().split())
        if len(line) > MAX_LINE:
            raise OrderError(
                _(
                    "line %(line)d: %(length)d characters is too long for an order line "
                    "(at most %(most)d)",
                    line=len(lines) + 1,
                    length=len(line),
                    most=MAX_LINE,
                )
            )
        if not line.isprintable():
            code = next(ord(char) for char in line if not char.isprintable())
            raise OrderError(
                _(
                    "line %(line)d: the character %(code)s cannot be read; "
                    "write the order in plain text",
                    line=len(lines) + 1,
                    code=f"U+{code:04X}",
                )
            )
        if line:
            lines.append(line)
    return lines


def order_number(word: str) -> int | None:
    """``word`` read as a whole number if it is written in the digits 0-9 alone, else None.

    The one rule for a number in an order, kept here so every game reads numbers alike:
    ``str.isdigit`` also passes superscripts such as '²' (which ``int`` then refuses with a
    ValueError), and ``int`` reads other scripts' digits, such as the Arabic-Indic '٣' or
    full-width ones, as numbers the player may not have meant. The caller answers None with
    its own "line N: ..." message, and bounds the number to what the game can mean.
    """
    if word.isascii() and word.isdigit():
        return int(word)
    return None


def competition_places(scores: Sequence[tuple[int, Any]]) -> list[tuple[int, int]]:
    """Places for (seat, sort key) pairs, best key first; equal keys share a place (1, 1, 3).

    Returns (seat, place) sorted by place, seats sharing a place in seat order.
    """
    ordered = sorted(scores, key=lambda item: (item[1], item[0]))
    places: list[tuple[int, int]] = []
    for position, (seat, key) in enumerate(ordered):
        if position and key == ordered[position - 1][1]:
            places.append((seat, places[-1][1]))
        else:
            places.append((seat, position + 1))
    return places


# --- JSON codec for frozen dataclasses -----------------------------------------------------


def to_json(value: Any) -> JSON:
    """Plain JSON data for a dataclass, tuple, list, dict or scalar (recursively). Words
    (``Text``) are written as their structure, so that a state read back says them in the
    reader's language."""
    if isinstance(value, engine_text.Text):
        return value.data()
    if value is None or isinstance(value, str | int | float):
        return value
    if isinstance(value, tuple | list):
        return [to_json(item) for item in value]
    if isinstance(value, dict):
        return {str(key): to_json(item) for key, item in value.items()}
    names = _field_names(type(value))
    if names is not None:
        return {name: to_json(getattr(value, name)) for name in names}
    return value


_FIELD_NAMES: dict[type, tuple[str, ...] | None] = {}


def _field_names(cls: type) -> tuple[str, ...] | None:
    """The fields of dataclass ``cls`` in order (None for any other class), looked up once:
    asking dataclasses for every value was half of writing a state."""
    if cls not in _FIELD_NAMES:
        is_dataclass = dataclasses.is_dataclass(cls)
        _FIELD_NAMES[cls] = (
            tuple(field.name for field in dataclasses.fields(cls)) if is_dataclass else None
        )
    return _FIELD_NAMES[cls]


Encoder = Callable[[Any], JSON]
_ENCODERS: dict[Any, Encoder | None] = {}


def encoder(hint: Any) -> Encoder:
    """``to_json`` for values of type ``hint``, made once per hint from the type hints, as
    the decoders are: what the hints say needs no converting (an ``int``, a ``tuple[int,
    ...]`` made a list) is not looked at value by value. Writing a Choice state of five
    seats took 57 us with ``to_json``. The same output as ``to_json`` for every value of
    the type; a value of another type than its hint says goes through ``to_json``. Words
    belong in fields hinted ``Text``: a ``str`` field writes a ``Text`` as its English (the
    engines' random-game tests compare the two writers on every state)."""
    made = _encoder(hint)
    return to_json if made is None else made


def _encoder(hint: Any) -> Encoder | None:
    """None: the value is its own JSON (a scalar)."""
    if hint not in _ENCODERS:
        _ENCODERS[hint] = _make_encoder(hint)
    return _ENCODERS[hint]


def _words(value: Any) -> JSON:
    # Plain English (a state written before its words were kept) stays as it is.
    return value.data() if isinstance(value, engine_text.Text) else value


def _make_encoder(hint: Any) -> Encoder | None:
    if hint is engine_text.Text:
        return _words
    if hint is type(None) or (isinstance(hint, type) and issubclass(hint, str | int | float)):
        return None
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return (
            None
            if all(isinstance(a, str | int | float) for a in typing.get_args(hint))
            else to_json
        )
    if origin in (Union, types.UnionType):
        members = [m for m in typing.get_args(hint) if m is not type(None)]
        if len(members) > 1:
            return None if all(_encoder(m) is None for m in members) else to_json
        concrete = _encoder(members[0])
        if concrete is None:
            return None
        return lambda value: None if value is None else concrete(value)
    if origin in (tuple, list):
        args = typing.get_args(hint)
        if origin is list or (len(args) == 2 and args[1] is Ellipsis):
            item = _encoder(args[0]) if args else to_json
            if item is None:
                return list
            return lambda value: [item(member) for member in value]
        if all(_encoder(arg) is None for arg in args):
            return list
        return to_json
    if origin is dict:
        value_encoder = _encoder(typing.get_args(hint)[1])
        if value_encoder is None:
            return lambda value: {str(key): member for key, member in value.items()}
        return lambda value: {str(key): value_encoder(member) for key, member in value.items()}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _dataclass_encoder(hint)
    return to_json


def _dataclass_encoder(cls: type) -> Encoder:
    # Written at the first call, as a function of the fields (a dict display): a field may
    # name a class that is being made.
    written: Encoder | None = None

    def encode(value: Any) -> JSON:
        nonlocal written
        if type(value) is not cls:
            return to_json(value)
        if written is None:
            hints = typing.get_type_hints(cls)
            names = _field_names(cls) or ()
            scope: dict[str, Any] = {"to_json": to_json, "cls": cls}
            items = []
            for number, name in enumerate(names):
                field_encoder = _encoder(hints.get(name, Any))
                if field_encoder is None:
                    items.append(f"{name!r}: value.{name}")
                else:
                    scope[f"e{number}"] = field_encoder
                    items.append(f"{name!r}: e{number}(value.{name})")
            source = (
                "def write(value):\n"
                "    if type(value) is not cls:\n"
                "        return to_json(value)\n"
                f"    return {{{', '.join(items)}}}\n"
            )
            exec(source, scope)  # the names of the project's own dataclasses' fields
            written = typing.cast(Encoder, scope["write"])
        return written(value)

    return encode


T = TypeVar("T")


def from_json(cls: type[T], data: JSON) -> T:
    """Rebuild a dataclass of type ``cls`` from ``to_json`` output, guided by its hints."""
    return typing.cast(T, _decoder(cls)(data))


Decoder = Callable[[JSON], Any]
_DECODERS: dict[Any, Decoder] = {}


def _as_is(data: JSON) -> Any:
    return data


def _decoder(hint: Any) -> Decoder:
    """The function that decodes JSON data of type ``hint``, made once per hint: working
    the hints out again for every value was most of the time to read a state."""
    decoder = _DECODERS.get(hint)
    if decoder is None:
        decoder = _DECODERS[hint] = _make_decoder(hint)
    return decoder


def _make_decoder(hint: Any) -> Decoder:
    if hint is engine_text.Text:
        return engine_text.load
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        members = typing.get_args(hint)
        concrete = _decoder(next(m for m in members if m is not type(None)))
        if type(None) not in members:
            return concrete
        return lambda data: None if data is None else concrete(data)
    if origin is tuple:
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            item = _decoder(args[0])
            if item is _as_is:
                return tuple
            return lambda data: tuple([item(value) for value in data])
        items = [_decoder(arg) for arg in args]
        return lambda data: tuple([item(value) for item, value in zip(items, data, strict=True)])
    if origin is list:
        (arg,) = typing.get_args(hint)
        item = _decoder(arg)
        return lambda data: [item(value) for value in data]
    if origin is dict:
        value_decoder = _decoder(typing.get_args(hint)[1])
        return lambda data: {key: value_decoder(value) for key, value in data.items()}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _dataclass_decoder(hint)
    return _as_is


def _dataclass_decoder(cls: type) -> Decoder:
    # The fields' decoders are made at the first call: a field may name a class that is
    # being made (a dataclass holding one of its own kind).
    fields: list[tuple[str, Decoder]] | None = None

    def decode(data: JSON) -> Any:
        nonlocal fields
        if fields is None:
            hints = typing.get_type_hints(cls)
            fields = [(f.name, _decoder(hints[f.name])) for f in dataclasses.fields(cls) if f.init]
        return cls(**{name: field(data[name]) for name, field in fields if name in data})

    return decode


def same_state(engine: Engine[Any, Any, Any], state: Any, stored: JSON) -> bool:
    """Whether ``stored`` (a state as the database keeps it) is ``state``. A state written
    before a game kept its words' structure holds their English where ``state_to_json``
    now writes the structure: read back, it is the same state (a ``Text`` equals its
    English)."""
    return bool(engine.state_to_json(state) == stored or engine.state_from_json(stored) == state)


def with_player_name(state: Any, seat: int, name: str) -> Any:
    """``state`` with ``seat``'s player called ``name`` (a seat handed to a new player):
    every game's state keeps its players' names in seat order as ``players``, and what the
    game says from then on (its board, prompts, events, standings) reads them there."""
    players = list(state.players)
    players[seat] = name
    return dataclasses.replace(state, players=tuple(players))


class JsonCodec:
    """Mixin for engines whose state and order are dataclasses named by class attributes."""

    State: ClassVar[type]
    Order: ClassVar[type]

    def state_to_json(self, state: Any) -> JSON:
        return encoder(self.State)(state)

    def state_from_json(self, data: JSON) -> Any:
        return from_json(self.State, data)

    def order_to_json(self, order: Any) -> JSON:
        return encoder(self.Order)(order)

    def order_from_json(self, data: JSON) -> Any:
        return from_json(self.Order, data)
