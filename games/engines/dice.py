"""Dice sources (DESIGN.md section 6).

``ScriptedDice`` replays a list of values (tests and replay records). ``VerifiableDice``
draws from a committed server seed: draw ``i`` of game ``g`` is
HMAC-SHA256(seed, f"{g}:{i}:{attempt}") mapped to a face by rejection sampling, so every
value can be recomputed from the seed once it is revealed, and a retried step recomputes the
same values instead of re-rolling.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

from games.engines.base import DiceError
from games.engines.text import _

SEED_BYTES = 32
_SPACE = 2**64


def new_seed() -> bytes:
    return secrets.token_bytes(SEED_BYTES)


def commitment(seed: bytes) -> str:
    """The SHA-256 of the seed, published when the game starts."""
    return hashlib.sha256(seed).hexdigest()


def face(seed: bytes, game_id: int, index: int, sides: int) -> int:
    """The value of draw ``index`` of game ``game_id``: uniform on 1..sides, no modulo bias.

    The first 8 bytes of each HMAC are read as an unsigned big-endian integer; values at or
    above the largest multiple of ``sides`` below 2**64 are rejected and the next attempt
    is tried.
    """
    if sides < 2:
        raise DiceError(_("a die needs at least 2 sides, not %(sides)d", sides=sides))
    limit = _SPACE - _SPACE % sides
    attempt = 0
    while True:
        message = f"{game_id}:{index}:{attempt}".encode()
        digest = hmac.new(seed, message, hashlib.sha256).digest()
        number = int.from_bytes(digest[:8], "big")
        if number < limit:
            return number % sides + 1
        attempt += 1


@dataclass(frozen=True)
class Draw:
    index: int
    sides: int
    value: int


class VerifiableDice:
    """Draws from a server seed, starting at draw ``start``; remembers what it drew."""

    def __init__(self, seed: bytes, game_id: int, start: int = 0) -> None:
        self.seed = seed
        self.game_id = game_id
        self.next_index = start
        self.draws: list[Draw] = []

    def draw(self, sides: int) -> int:
        value = face(self.seed, self.game_id, self.next_index, sides)
        self.draws.append(Draw(self.next_index, sides, value))
        self.next_index += 1
        return value


class EnteredDice(VerifiableDice):
    """A game continued from paper (docs/records.md, "A game from paper"): its first draws
    are the values its GM entered, rolled by hand and beyond checking; every draw after
    them comes from the seed, at its own index, as in any game.

    ``sealed`` (default True) lets a draw past the entered values come from the seed; an
    import reading the paper record sets it False until the record's last move, so that a
    die missing from the record is an error rather than a roll nobody made on paper."""

    def __init__(self, entered: Iterable[int], seed: bytes, game_id: int) -> None:
        super().__init__(seed, game_id)
        self.entered = list(entered)
        self.sealed = True

    def draw(self, sides: int) -> int:
        index = self.next_index
        if index >= len(self.entered):
            if not self.sealed:
                raise DiceError(
                    f"the record has too few dice: die {index + 1} (a d{sides}) is needed "
                    f"but only {len(self.entered)} are given"
                )
            return super().draw(sides)
        value = self.entered[index]
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= sides:
            raise DiceError(
                f"die {index + 1} of the record is {value!r}, not a d{sides} value 1-{sides}"
            )
        self.draws.append(Draw(index, sides, value))
        self.next_index += 1
        return value


class ScriptedDice:
    """Returns the given values in order; DiceError when a value does not fit or none is left."""

    def __init__(self, values: Iterable[int]) -> None:
        self.values = list(values)
        self.position = 0
        self.draws: list[Draw] = []

    def draw(self, sides: int) -> int:
        number = self.position + 1
        if self.position >= len(self.values):
            raise DiceError(
                _(
                    "the record has too few dice: draw %(number)d (a d%(sides)d) is needed "
                    "but only %(count)d values are given",
                    number=number,
                    sides=sides,
                    count=len(self.values),
                )
            )
        value = self.values[self.position]
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= sides:
            raise DiceError(
                _(
                    "die %(number)d of the record is %(value)s, not a d%(sides)d value 1-%(sides)d",
                    number=number,
                    value=repr(value),
                    sides=sides,
                )
            )
        self.draws.append(Draw(self.position, sides, value))
        self.position += 1
        return value


class NoDice:
    """For calls that must not draw (parsing, defaults): drawing is a programming error."""

    def draw(self, sides: int) -> int:
        raise RuntimeError("no die may be drawn here")
