from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from django.utils import timezone

from games import postal
from games.engines.choice.rules import ChoiceEngine
from games.models import Game, Order, Step
from games.records import archive
from moderator.mail.models import OutboundEmail
from moderator.mail.views import read_mail_file
from tests.factories import choice_game
from tests.integration.conftest import Services, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.postgres, pytest.mark.redis]

CHOICE = ChoiceEngine()


def test_a_three_player_game_runs_to_final_standings_through_worker_and_beat(
    services: Services, tmp_path: Path
) -> None:
    game = choice_game(
        3, options={"rolls_per_turn": 4}, schedule_spec={"kind": "interval", "seconds": 2}
    )
    # Step 1 is answered by every player, so it resolves at once; the rest by deadline.
    game = postal.start_game(game.pk, now=timezone.now())
    state = CHOICE.state_from_json(game.state)
    for position in range(3):
        text = CHOICE.canonical(state, position, CHOICE.default(state, position))
        # By email: each gets its receipt (an order made on the page only when asked for).
        postal.accept_order(
            game_id=game.pk, position=position, text=text, source="email", now=timezone.now()
        )
    services.worker()
    services.beat()

    def finished() -> bool:
        return Game.objects.get(pk=game.pk).status == Game.Status.FINISHED

    wait_for(finished, 180, "the game to finish", services)
    game.refresh_from_db()
    # A report per seat and step, the three game-over emails and the three order receipts;
    # and the GM's alert when the seats, missing every deadline from step 2 on, fall into
    # civil disorder together at their third missed turn in a row (step 4).
    alerts = 1 if game.step_number >= 4 else 0
    expected_mail = 3 * game.step_number + 3 + 3 + alerts

    def all_sent() -> bool:
        return OutboundEmail.objects.filter(state="sent").count() == expected_mail

    wait_for(all_sent, 60, "every report to be sent", services)

    steps = list(game.steps.order_by("number").values_list("number", "status", "closed_by"))
    assert steps[0] == (1, "done", "early")
    assert steps[1:] == [(n, "done", "deadline") for n in range(2, game.step_number + 1)]
    # Every die drawn once, in order; every missing order filled once per step and seat.
    assert list(game.dice_rolls.values_list("index", flat=True)) == list(range(game.dice_drawn))
    defaults = Counter(
        Order.objects.filter(source="default").values_list("step__number", "seat__position")
    )
    assert set(defaults.values()) == {1}
    assert len(defaults) == sum(len(s.prompted_seats) for s in game.steps.filter(number__gt=1))
    # Every report was delivered exactly once: one message per row, none twice.
    messages = [
        message
        for path in sorted((tmp_path / "var" / "mail").iterdir())
        for message in read_mail_file(path)
    ]
    assert len(messages) == expected_mail
    assert len({(m["Subject"], m["To"]) for m in messages}) == expected_mail
    assert OutboundEmail.objects.exclude(state="sent").count() == 0
    assert OutboundEmail.objects.filter(kind="civil-disorder").count() == alerts
    assert Step.objects.filter(game=game).exclude(status="done").count() == 0
    # The dice check out against the revealed seed, and the orders replay to the result.
    verdict = archive.verify(game)
    assert verdict.problems == []
    standings = CHOICE.standings(CHOICE.state_from_json(game.state)) or []
    assert sorted(s.seat for s in standings) == [0, 1, 2]
