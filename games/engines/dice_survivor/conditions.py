"""Dice Survivor conditional orders (rules/dice-survivor.md, docs/orders.md): the answer to
the rematch question, left before it is asked, so that the active player's turn goes on
without waiting for the defender:

    if challenged: rematch
    if challenged for 2 or more: rematch; else: accept

Written for the turn under way (the active player's), played when that turn asks you the
rematch question (``for 2 or more``: a double challenge, whose loss costs 2 PP); disarmed,
and you told, when the turn ends without asking you. Pure: it reads the state alone, like
the rules.
"""

from __future__ import annotations

import re
from typing import Any

from games.engines.base import JSON, Conditions, OrderError, Verdict
from games.engines.dice_survivor.rules import SurvivorState, rematches_left
from games.engines.text import _

SYNTAX = "if challenged [for <stake> or more]: rematch | accept[; else: rematch | accept]"

_IF = re.compile(r"^if\s+challenged(?:\s+for\s+(\d)\s+or\s+more)?\s*[:,]?\s*(\w+)$")
_ELSE = re.compile(r"^(?:else|otherwise)\s*[:,]?\s*(\w+)$")
ANSWERS = ("rematch", "accept")


def _answer(word: str, where: str) -> str:
    if word not in ANSWERS:
        raise OrderError(_("%(where)s: answer rematch or accept", where=where))
    return word


def parse(state: SurvivorState, seat: int, text: str) -> JSON:
    """A conditional order of ``seat`` read and checked now; OrderError says why not."""
    if state.finished:
        raise OrderError(_("the game is over; no order is expected from you"))
    if state.participants[seat].out:
        raise OrderError(_("you are out of the game; no order is expected from you"))
    if state.finals:
        raise OrderError(_("the Finals ask no rematch question: no conditional order is needed"))
    if seat == state.active or (state.question is not None and state.question.defender == seat):
        raise OrderError(_("it is your turn now: send your order itself"))
    parts = [part.strip() for part in re.split(r"[;\n]", text.lower()) if part.strip()]
    found = _IF.match(parts[0]) if parts else None
    if found is None or len(parts) > 2:
        raise OrderError(_("write it as: %(syntax)s", syntax=SYNTAX))
    stake = int(found[1]) if found[1] else 1
    if stake not in (1, 2):
        raise OrderError(_("a challenge is for 1 or 2: write for 2 or more, or leave it out"))
    then = _answer(found[2], "then")
    if then == "rematch" and rematches_left(state.options, state.participants[seat]) == 0:
        raise OrderError(_("you have no rematch left"))
    otherwise = None
    if len(parts) == 2:
        other = _ELSE.match(parts[1])
        if other is None:
            raise OrderError(_("the second part starts with else: %(syntax)s", syntax=SYNTAX))
        otherwise = _answer(other[1], "else")
    return {"turn": state.turn, "stake": stake, "then": then, "else": otherwise}


def words(data: Any) -> str:
    said = "if challenged"
    if data["stake"] > 1:
        said += f" for {data['stake']} or more"
    said += f": {data['then']}"
    if data["else"] is not None:
        said += f"; else: {data['else']}"
    return said


def play(state: SurvivorState, seat: int, data: Any) -> Verdict:
    """What the conditional order of ``seat`` does now."""
    if state.finished:
        return Verdict("disarm", reason=_("the game is over"))
    if state.turn != data["turn"]:
        return Verdict("disarm", reason=_("the turn it was written for ended without asking you"))
    question = state.question
    if question is None or question.defender != seat:
        return Verdict("wait")
    answer = data["then"] if question.stake >= data["stake"] else data["else"]
    if answer is None:
        return Verdict(
            "disarm",
            reason=_(
                "the challenge was for %(stake)d, below %(wanted)d, and it said nothing else",
                stake=question.stake,
                wanted=data["stake"],
            ),
        )
    return Verdict("play", order=answer)


CONDITIONS = Conditions(
    parse=parse,
    words=words,
    play=play,
    syntax=SYNTAX,
    example="if challenged: rematch",
    hint=_(
        "Your answer to the rematch question if the player on turn challenges you this turn "
        "and you lose: the turn goes on without waiting for you."
    ),
)
