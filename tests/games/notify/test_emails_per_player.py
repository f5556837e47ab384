"""How much email a whole game sends each player: a Drop-Shy and a Dice Survivor game of
three, every order made on the seat's page in time (``order_for``), the receipts' task run
after each order as the workers run it. An order made on the
page gets no receipt unless its player asks for them, so each player gets their reports
(as often as the game's default says) and the final standings, nothing more. And a game of
Choice with the default reminder ladder, players ordering early, late and at the last hour.

Run with ``-s`` to see the count of each kind of email."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from typing import Any

import pytest

from games import postal
from games.engines import registry
from games.engines.dice_survivor.rules import SurvivorOrder, clockwise
from games.models import Game, Order, PushDelivery
from games.notify import reminders
from moderator.mail.models import OutboundEmail
from tests.factories import started_game
from tests.games.notify.test_push import PushService, browser_of, turn_on
from tests.games.playing import SeedOnlyDice

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def seed_only_dice(monkeypatch: pytest.MonkeyPatch) -> None:
    from games.postal import steps

    monkeypatch.setattr(steps, "VerifiableDice", SeedOnlyDice)


def order_for(game: Game, state: Any, position: int) -> str:
    """The order a player makes: in Drop-Shy the autopilot's (a die placed where the next
    one fits best); in Dice Survivor a challenge of the richest opponent on every action
    (its autopilot knocks out at once, a game of two orders), the default otherwise (a
    rematch question accepted, a Finals challenge)."""
    engine = registry.get(game.engine)
    order = engine.default(state, position)
    if game.engine == "drop-shy":
        order = registry.STRATEGIES["drop-shy"][0].play(state, position)
    elif order == SurvivorOrder("pass"):
        opponents = clockwise(state, position)
        richest = max(opponents, key=lambda seat: (state.pp(seat), -opponents.index(seat)))
        order = SurvivorOrder("challenge", richest)
    return engine.canonical(state, position, order)


def play_on_the_page(game: Game) -> int:
    """Play ``game`` to its end, each order (``order_for``) made on the page of the seat
    owing it a minute after its step opened; returns how many orders."""
    engine = registry.get(game.engine)
    made = 0
    while True:
        game.refresh_from_db()
        if game.status == Game.Status.FINISHED:
            return made
        step = game.steps.get(number=game.step_number)
        answered = set(step.orders.values_list("seat__position", flat=True))
        owing = [p for p in step.prompted_seats if p not in answered]
        assert owing, f"step {step.number} owes no order and is still open"
        state = engine.state_from_json(game.state)
        at = step.opened_at + timedelta(minutes=1)
        postal.accept_order(
            game_id=game.pk,
            position=owing[0],
            text=order_for(game, state, owing[0]),
            source=Order.Source.WEB,
            now=at,
            step_number=step.number,
        )
        made += 1
        postal.write_receipts(now=at + timedelta(seconds=5))


def emails_of(game: Game) -> tuple[dict[str, int], dict[str, Counter[str]]]:
    """Per address, how many emails the game sent it, and of which kinds."""
    rows = OutboundEmail.objects.filter(game=game).values_list("to", "kind")
    kinds: dict[str, Counter[str]] = {}
    for to, kind in rows:
        kinds.setdefault(to, Counter())[kind] += 1
    return {to: sum(counted.values()) for to, counted in sorted(kinds.items())}, kinds


@pytest.mark.parametrize(
    ("engine_key", "expected"),
    [
        # 29 steps. Before receipts of web orders were a choice, 19, 22 and 22 emails: the
        # same and a receipt of each order (9, 10 and 10).
        ("drop-shy", {"ann@example.org": 10, "bob@example.org": 12, "cy@example.org": 12}),
        # 29 steps. Before: 20, 25 and 18 (receipts 9, 12 and 8).
        ("dice-survivor", {"ann@example.org": 11, "bob@example.org": 13, "cy@example.org": 10}),
    ],
)
def test_a_whole_game_played_on_the_page_emails_each_player_this_often(
    now: datetime, engine_key: str, expected: dict[str, int]
) -> None:
    game = started_game(engine_key, now=now, players=3)

    orders = play_on_the_page(game)

    per_player, kinds = emails_of(game)
    steps = Game.objects.get(pk=game.pk).step_number
    print(f"\n{engine_key}: {steps} steps, {orders} orders made on the page")
    for to, counted in sorted(kinds.items()):
        print(f"  {to}: {per_player[to]} emails: {dict(sorted(counted.items()))}")
    assert per_player == expected


def test_a_whole_game_with_the_default_ladder_reaches_each_player_this_often(
    now: datetime, service: PushService
) -> None:
    """A game of Choice with two-day deadlines and the default ladder (an email 24
    and 2 hours before), the sweep run every hour: ann orders within the hour, bob a day
    and a half in (after the 24-hour reminder), cy in the last hour (after both); bob has
    push on for all his games. Each player's messages, of each kind, over the whole game."""
    game = started_game("choice", now=now, players=3)
    turn_on(browser_of(game, 1, now), game, 1, service.browser("/push/bob"), every_seat=True)
    when = {0: timedelta(hours=1), 1: timedelta(hours=30), 2: timedelta(hours=47)}
    engine = registry.get(game.engine)
    steps = 0
    while Game.objects.get(pk=game.pk).status != Game.Status.FINISHED:
        game.refresh_from_db()
        step = game.steps.get(number=game.step_number)
        steps += 1
        for hour in range(1, 48):
            at = step.opened_at + timedelta(hours=hour)
            reminders.send_reminders(at)
            # The workers send what is written (a game over takes back what is not).
            OutboundEmail.objects.filter(state="pending").update(state="sent", sent_at=at)
            for position, late in when.items():
                if late == timedelta(hours=hour):
                    state = engine.state_from_json(Game.objects.get(pk=game.pk).state)
                    text = engine.canonical(state, position, engine.default(state, position))
                    postal.accept_order(
                        game_id=game.pk,
                        position=position,
                        text=text,
                        source=Order.Source.WEB,
                        now=at,
                        step_number=step.number,
                    )
            if Game.objects.get(pk=game.pk).step_number != step.number:
                break
    per_player, kinds = emails_of(game)
    pushes = Counter(
        PushDelivery.objects.filter(game=game).values_list("subscription__email", flat=True)
    )
    print(f"\nchoice: {steps} steps, the default ladder")
    for to, counted in sorted(kinds.items()):
        print(
            f"  {to}: {per_player[to]} emails {dict(sorted(counted.items()))}, "
            f"{pushes.get(to, 0)} pushes"
        )
    reports = steps  # one report a step (the first is the welcome), and the standings
    assert {to: dict(counted) for to, counted in kinds.items()} == {
        "ann@example.org": {"report": reports, "final": 1},
        "bob@example.org": {"report": reports, "final": 1, "reminder": steps},
        "cy@example.org": {"report": reports, "final": 1, "reminder": 2 * steps},
    }
    # Bob turned push on after the first report: every later report and the standings.
    assert pushes == {"bob@example.org": steps}
