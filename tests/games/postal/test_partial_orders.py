"""An order whose first line takes effect at once (dice drawn) and whose later line is
refused: the first line stands, with its dice and events, and the player is told what was
refused (rules/README.md: lines before the first invalid line stand)."""

from __future__ import annotations

from datetime import datetime

import pytest

from games import postal, tasks
from games.engines import dice
from games.models import DiceRoll, Event, Game, Order, Step
from moderator.mail.models import OutboundEmail
from tests.factories import started_game

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def seed_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every die from the seed alone, as if each game were game 1: with the game's id in
    the dice, which follows the tests run before, a roll of 6 6 6 (1 in 216) would make
    the refused arrangement below legal."""
    real = dice.face

    def face(seed: bytes, game_id: int, index: int, sides: int) -> int:
        return real(seed, 1, index, sides)

    monkeypatch.setattr(dice, "face", face)


def night(now: datetime) -> Game:
    game = started_game("first-player", now=now, options={"order_mode": "free"})
    postal.resolve_now(game.pk, now=now)  # the gift window closes: rolling opens
    return Game.objects.get(pk=game.pk)


def test_a_roll_stands_when_the_arrangement_after_it_is_refused(now: datetime) -> None:
    game = night(now)
    rolling = Step.objects.get(game=game, number=game.step_number)
    assert {p["kind"] for p in rolling.prompts} == {"roll"}
    drawn = game.dice_drawn
    with pytest.raises(postal.OrderRejected) as refused:
        postal.accept_order(
            game_id=game.pk, position=0, text="roll 3\narrange 6 6 6", source="web", now=now
        )
    assert refused.value.partly_played
    assert refused.value.message.endswith("(the lines before it stand: your dice were rolled)")
    game.refresh_from_db()
    rolls = list(
        DiceRoll.objects.filter(game=game).order_by("index").values_list("value", flat=True)
    )
    assert len(rolls) == drawn + 3
    values = rolls[-3:]
    assert values != [6, 6, 6]
    # The roll is ann's alone to see, and the game moved on to her next decision.
    private = Event.objects.filter(game=game, audience=[0]).last()
    assert private is not None and " ".join(map(str, values)) in private.text
    # Rolling is simultaneous: the step stays open, with its deadline, for everybody.
    rolling.refresh_from_db()
    assert (rolling.status, rolling.number) == ("open", game.step_number)
    assert [p["kind"] for p in rolling.prompts if p["seat"] == 0] == ["reroll or arrange"]
    assert [p["kind"] for p in rolling.prompts if p["seat"] != 0] == ["roll", "roll"]
    (kept,) = Order.objects.filter(step=rolling).exclude(source="default")
    assert (kept.seat.position, kept.canonical) == (0, "roll 3\narrange 6 6 6")
    # A refused order is owed no receipt (the player is told what was refused at once).
    assert (kept.receipt_due, kept.results) == (False, [])
    assert tasks.write_receipts() == 0
    assert not OutboundEmail.objects.filter(kind="receipt").exists()


def test_an_order_refused_before_any_die_is_drawn_changes_nothing(now: datetime) -> None:
    game = night(now)
    before = (game.dice_drawn, game.step_number, Order.objects.count(), game.state)
    with pytest.raises(postal.OrderRejected):
        postal.accept_order(game_id=game.pk, position=0, text="roll 9", source="web", now=now)
    game.refresh_from_db()
    assert (game.dice_drawn, game.step_number, Order.objects.count(), game.state) == before
