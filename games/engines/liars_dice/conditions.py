"""Liar's Dice conditional orders (rules/liars-dice.md, docs/orders.md): a player whose turn
it is not leaves an order for the bid the others might reach, in the game's own words:

    if 4 5 or more: liar; else: raise 5

"If the bid reaches 4 x 5 or more, call liar; else bid one more of my face." The branch
orders are the game's: ``liar``, ``spot`` (where calza is played), ``bid <q> <f>``, and
``raise <f>``, the lowest bid on face ``f`` the rules allow then. ``else`` may be left out:
then, below the bid, the order is disarmed and the player plays their turn themselves.

In the team game it plays its bid or challenge with no optional action before it. It is
written for the round under way (the cups rolled then) and played on the seat's next turn
in that round; a new round (new cups) disarms it, as does a branch the rules
refuse when its turn comes. Pure: it reads the state alone, like the rules.
"""

from __future__ import annotations

import re
from typing import Any

from games.engines.base import JSON, Conditions, OrderError, Verdict
from games.engines.liars_dice.rules import (
    BIDDING,
    CHALLENGE_WORDS,
    FACES,
    MAX_QUANTITY,
    SPOT_WORDS,
    Bid,
    LiarsDiceState,
    check_raise,
)
from games.engines.text import _

SYNTAX = "if <quantity> <face> or more: liar | spot | bid <q> <f> | raise <f>; else: ..."

_IF = re.compile(
    r"^if\s+(?:the\s+bid\s+(?:reaches|is)\s+)?(\d+)\s*(?:x\s*)?(\d+)\s+or\s+more\s*(?::|,|then)?\s*(.*)$"
)
_ELSE = re.compile(r"^(?:else|otherwise)\s*[:,]?\s*(.*)$")


def _branch(state: LiarsDiceState, text: str, where: str) -> JSON:
    words = text.split()
    if not words:
        raise OrderError(_("%(where)s: say what to play", where=where))
    if words[0] in CHALLENGE_WORDS and len(words) == 1:
        return {"kind": "liar"}
    if words[0] in SPOT_WORDS and len(words) == 1:
        if not state.options.calza:
            raise OrderError(_("spot calls are not used in this game"))
        return {"kind": "spot"}
    if words[0] == "raise" and len(words) == 2 and words[1].isdigit():
        face = int(words[1])
        if face not in FACES:
            raise OrderError(_("%(where)s: raise <face>, a face from 1 to 6", where=where))
        if state.palifico and state.bids and face != state.bids[0].face:
            raise OrderError(_("palifico round: the face stays %(face)d", face=state.bids[0].face))
        return {"kind": "raise", "face": face}
    if words[0] == "bid" and len(words) == 3 and words[1].isdigit() and words[2].isdigit():
        quantity, face = int(words[1]), int(words[2])
        if not 1 <= quantity <= MAX_QUANTITY or face not in FACES:
            raise OrderError(_("%(where)s: bid <quantity> <face>, e.g. bid 5 3", where=where))
        return {"kind": "bid", "quantity": quantity, "face": face}
    raise OrderError(
        _(
            "%(where)s: %(text)s is not an order here: liar, spot, bid <q> <f> or raise <f>",
            where=where,
            text=repr(text),
        )
    )


def parse(state: LiarsDiceState, seat: int, text: str) -> JSON:
    """A conditional order of ``seat`` read and checked now; OrderError says why not."""
    if state.finished or state.phase != BIDDING or state.sum_phase:
        raise OrderError(_("conditional orders are for the bidding of a round"))
    if state.counts[seat] == 0:
        raise OrderError(_("you are out of the game; no order is expected from you"))
    if state.turn == seat:
        raise OrderError(_("it is your turn now: send your order itself"))
    parts = [part.strip() for part in re.split(r"[;\n]", " ".join(text.lower().split(" ")))]
    parts = [part for part in parts if part]
    if not parts or len(parts) > 2:
        raise OrderError(_("write it as: %(syntax)s", syntax=SYNTAX))
    found = _IF.match(parts[0])
    if found is None:
        raise OrderError(_("write it as: %(syntax)s", syntax=SYNTAX))
    quantity, face = int(found[1]), int(found[2])
    if not 1 <= quantity <= MAX_QUANTITY or face not in FACES:
        raise OrderError(_("if <quantity> <face>: a quantity of at least 1 and a face from 1 to 6"))
    data: dict[str, Any] = {
        "round": state.round,
        "quantity": quantity,
        "face": face,
        "then": _branch(state, found[3].strip(), "then"),
        "else": None,
    }
    if len(parts) == 2:
        other = _ELSE.match(parts[1])
        if other is None:
            raise OrderError(_("the second part starts with else: %(syntax)s", syntax=SYNTAX))
        data["else"] = _branch(state, other[1].strip(), "else")
    return data


def _said(branch: Any) -> str:
    kind = branch["kind"]
    if kind == "bid":
        return f"bid {branch['quantity']} {branch['face']}"
    if kind == "raise":
        return f"raise {branch['face']}"
    return str(kind)


def words(data: Any) -> str:
    said = f"if {data['quantity']} {data['face']} or more: {_said(data['then'])}"
    if data["else"] is not None:
        said += f"; else: {_said(data['else'])}"
    return said


def reached(state: LiarsDiceState, quantity: int, face: int) -> bool:
    """Whether the round's bid is at ``quantity`` x ``face`` or above it: bidding that now
    would be no raise (the rules' own order of bids, wild ones and palifico included)."""
    if not state.bids:
        return False
    last: Bid = state.bids[-1]
    if (last.quantity, last.face) == (quantity, face):
        return True
    try:
        check_raise(state, quantity, face)
    except OrderError:
        return True
    return False


def _lowest(state: LiarsDiceState, face: int) -> str | None:
    for quantity in range(1, MAX_QUANTITY + 1):
        try:
            check_raise(state, quantity, face)
        except OrderError:
            continue
        return f"bid {quantity} {face}"
    return None


def _order(state: LiarsDiceState, branch: Any) -> str | None:
    kind = branch["kind"]
    if kind == "bid":
        return f"bid {branch['quantity']} {branch['face']}"
    if kind == "raise":
        return _lowest(state, branch["face"])
    return str(kind)


def play(state: LiarsDiceState, seat: int, data: Any) -> Verdict:
    """What the conditional order of ``seat`` does now."""
    if state.finished:
        return Verdict("disarm", reason=_("the game is over"))
    if state.round != data["round"]:
        return Verdict("disarm", reason=_("the round it was written for is over: new cups"))
    if state.phase != BIDDING or state.turn != seat:
        return Verdict("wait")
    last = state.bids[-1].text() if state.bids else _("no bid yet")
    if reached(state, data["quantity"], data["face"]):
        branch = data["then"]
    elif data["else"] is not None:
        branch = data["else"]
    else:
        return Verdict(
            "disarm",
            reason=_(
                "the bid was %(last)s, below %(quantity)d x %(face)d, and it said nothing else",
                last=last,
                quantity=data["quantity"],
                face=data["face"],
            ),
        )
    order = _order(state, branch)
    if order is None:
        return Verdict("disarm", reason=_("no bid on that face is left to raise to"))
    if order == "liar" and not state.bids:
        return Verdict("disarm", reason=_("there is no bid to call liar on"))
    return Verdict("play", order=order)


CONDITIONS = Conditions(
    parse=parse,
    words=words,
    play=play,
    syntax=SYNTAX,
    example="if 4 5 or more: liar; else: raise 5",
    hint=_(
        "If the bid reaches 4 x 5 or more, call liar; else raise on fives: the lowest bid on "
        "fives the rules allow then."
    ),
)
