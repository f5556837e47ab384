"""Conditional orders through the postal layer (games/postal/conditionals.py): kept when the
rules take them, played in the transaction that gives the seat its turn, recorded as the
seat's order, told in its ledger; disarmed when the round they assumed is over."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from games import postal, records
from games.engines.drop_shy.rules import cells, legal_cells
from games.models import ConditionalOrder, Decision, Game, Order
from games.notify import ledger
from games.postal import conditionals
from games.postal.steps import game_dice
from games.records import archive
from moderator.mail.models import OutboundEmail
from tests.factories import started_game

pytestmark = pytest.mark.django_db


def _turn(game: Game) -> int:
    game.refresh_from_db()
    return int(game.rules.state_from_json(game.state).turn)


def _order(game: Game, position: int, text: str, now: datetime) -> Order:
    return postal.accept_order(
        game_id=game.pk, position=position, text=text, source=Order.Source.WEB, now=now
    )


def test_a_conditional_order_plays_when_the_seats_turn_comes(now: datetime) -> None:
    game = started_game("liars-dice", now=now, players=3)
    first = _turn(game)
    second, third = (first + 1) % 3, (first + 2) % 3
    kept = conditionals.leave(
        game_id=game.pk,
        position=third,
        text="if 4 5 or more: liar; else: raise 5",
        source=Order.Source.WEB,
        now=now,
    )
    assert (kept.status, kept.words) == ("armed", "if 4 5 or more: liar; else: raise 5")
    # Sent again (a double click): kept once.
    again = conditionals.leave(
        game_id=game.pk,
        position=third,
        text="If 4 5 or more: liar; else: raise 5",
        source=Order.Source.WEB,
        now=now,
    )
    assert again.pk == kept.pk
    assert ConditionalOrder.objects.count() == 1
    _order(game, first, "bid 2 5", now)
    _order(game, second, "bid 3 6", now)
    # The third seat's turn came with the bid at 3 x 6: its else played at once.
    played = Order.objects.get(seat__position=third)
    assert (played.source, played.canonical) == ("conditional", "bid 4 5")
    kept.refresh_from_db()
    assert (kept.status, kept.order_id) == ("played", played.pk)
    assert _turn(game) == first
    seat = game.seats.get(position=third)
    assert [row.what for row in ledger.of_seat(seat)] == [
        "postal turn 3: your conditional order “if 4 5 or more: liar; else: raise 5” played bid 4 5"
    ]
    # Its order is in the record like any other: the replay plays the game the same way.
    game.refresh_from_db()
    replayed = records.run(archive.export(game))
    assert game.rules.state_to_json(replayed.state) == game.state


def test_a_new_round_disarms_it_and_the_player_is_told(now: datetime) -> None:
    game = started_game("liars-dice", now=now, players=3)
    first = _turn(game)
    second, third = (first + 1) % 3, (first + 2) % 3
    conditionals.leave(
        game_id=game.pk,
        position=third,
        text="if 9 5 or more: liar",
        source=Order.Source.WEB,
        now=now,
    )
    _order(game, first, "bid 2 5", now)
    _order(game, second, "liar", now)
    kept = ConditionalOrder.objects.get()
    assert (kept.status, kept.reason) == (
        "disarmed",
        "the round it was written for is over: new cups",
    )
    assert Decision.objects.get().kind == "conditional"
    assert not Order.objects.filter(seat__position=third).exists()
    seat = game.seats.get(position=third)
    told = OutboundEmail.objects.get(kind="command", to=seat.email)
    assert told.subject == f"{game.title}: your conditional order was disarmed"
    assert "  if 9 5 or more: liar\n" in told.text
    assert "Why: the round it was written for is over: new cups." in told.text
    assert "/p/" in told.text


def test_a_conditional_order_the_rules_refuse_is_not_kept(now: datetime) -> None:
    game = started_game("liars-dice", now=now, players=3)
    first = _turn(game)
    with pytest.raises(conditionals.ConditionalRejected) as refused:
        conditionals.leave(
            game_id=game.pk,
            position=first,
            text="if 4 5 or more: liar",
            source=Order.Source.WEB,
            now=now,
        )
    assert refused.value.message == "it is your turn now: send your order itself"
    choice = started_game("choice", now=now, players=2)
    with pytest.raises(conditionals.ConditionalRejected) as other:
        conditionals.leave(
            game_id=choice.pk,
            position=0,
            text="if 4 5 or more: liar",
            source=Order.Source.WEB,
            now=now,
        )
    assert other.value.message == "conditional orders are not used in this game"
    assert not ConditionalOrder.objects.exists()


def test_the_report_of_the_step_it_closed_says_a_conditional_order_played(now: datetime) -> None:
    game = started_game("liars-dice", now=now, players=3)
    first = _turn(game)
    second, third = (first + 1) % 3, (first + 2) % 3
    conditionals.leave(
        game_id=game.pk,
        position=third,
        text="if 3 6 or more: liar",
        source=Order.Source.WEB,
        now=now,
    )
    _order(game, first, "bid 2 5", now)
    _order(game, second, "bid 3 6", now)
    name = game.seats.get(position=third).name
    said = f"{name} played a conditional order left in advance: liar"
    # The report of the step it opened (to whoever owes next: a game in turns reports to
    # the seat that owes by default).
    latest = OutboundEmail.objects.filter(kind="report").order_by("-id").first()
    assert latest is not None
    assert said in latest.text
    assert said in latest.html


def _drop_shy_turn(now: datetime, *, line_kept: bool) -> tuple[Game, int, str, int, Any]:
    """A Drop-Shy game whose next turn, after its mover's first move, is another seat's,
    that seat's line as it was (``line_kept``) or changed meanwhile (its front die fitted
    nowhere, failed by itself and went to the back, rerolled); the game's own dice say which
    (they depend on the game's number), so the first of a few games that fits. Returns the
    game, the mover, its move, the seat whose turn comes, and the state then."""
    for _ in range(60):
        game = started_game("drop-shy", now=now, players=3)
        engine = game.rules
        state = engine.state_from_json(game.state)
        mover = state.current
        first = legal_cells(cells(state.board), state.lines[mover][0].face)[0]
        move = f"place {first[0]} {first[1]}"
        after, _ = engine.submit(state, mover, engine.parse(state, mover, move), game_dice(game))
        target = after.current
        if target is None or target == mover:
            continue
        kept = [die.face for die in after.lines[target]] == [d.face for d in state.lines[target]]
        if kept == line_kept:
            return game, mover, move, target, after
    pytest.fail("no such game in 60")


def test_a_drop_shy_conditional_order_places_on_the_first_legal_cell(now: datetime) -> None:
    game, mover, move, target, after = _drop_shy_turn(now, line_kept=True)
    # Where that seat's die may go then: the rules prompt it, so somewhere.
    legal = legal_cells(cells(after.board), after.lines[target][0].face)
    kept = conditionals.leave(
        game_id=game.pk,
        position=target,
        # (0,0) holds the instigator: never legal, so the second cell plays.
        text=f"place 0 0 or {legal[-1][0]} {legal[-1][1]}",
        source=Order.Source.WEB,
        now=now,
    )
    _order(game, mover, move, now)
    played = Order.objects.get(seat__position=target, step__game=game)
    assert (played.source, played.canonical) == (
        "conditional",
        f"place {legal[-1][0]} {legal[-1][1]}",
    )
    kept.refresh_from_db()
    assert (kept.status, kept.order_id) == ("played", played.pk)


def test_a_drop_shy_conditional_order_for_a_die_that_failed_meanwhile_is_disarmed(
    now: datetime,
) -> None:
    game, mover, move, target, _ = _drop_shy_turn(now, line_kept=False)
    kept = conditionals.leave(
        game_id=game.pk,
        position=target,
        text="place 0 1 or 1 0 or 0 -1 or -1 0",
        source=Order.Source.WEB,
        now=now,
    )
    _order(game, mover, move, now)
    kept.refresh_from_db()
    assert (kept.status, kept.reason) == (
        "disarmed",
        "the die it was written for is no longer the one you play",
    )
    assert not Order.objects.filter(seat__position=target, step__game=game).exists()


def test_a_dice_survivor_defender_answers_the_rematch_question_in_advance(
    now: datetime,
) -> None:
    # The first game whose first challenge the defender loses, as the game's own dice say
    # (they depend on the game's number): then the rematch question comes.
    for _ in range(20):
        game = started_game("dice-survivor", now=now, players=3)
        engine = game.rules
        state = engine.state_from_json(game.state)
        active = state.active
        defender = (active + 1) % 3
        target = state.players[defender]
        challenge = f"challenge {target}"
        after, _ = engine.submit(
            state, active, engine.parse(state, active, challenge), game_dice(game)
        )
        if after.question is not None:
            break
    else:
        pytest.fail("no challenge lost by its defender in 20 games")
    kept = conditionals.leave(
        game_id=game.pk,
        position=defender,
        text="if challenged: accept",
        source=Order.Source.WEB,
        now=now,
    )
    _order(game, active, challenge, now)
    answered = Order.objects.get(seat__position=defender, step__game=game)
    assert (answered.source, answered.canonical) == ("conditional", "accept")
    kept.refresh_from_db()
    assert (kept.status, kept.order_id) == ("played", answered.pk)
    # The turn went on: the active player owes the next action, nobody waits for the defender.
    game.refresh_from_db()
    assert engine.state_from_json(game.state).question is None
