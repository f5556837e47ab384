from __future__ import annotations

import threading
from datetime import datetime, time, timedelta

import pytest
import time_machine
from django.core import mail
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks

from games import postal, tasks
from games.engines.choice.rules import ChoiceEngine
from games.models import Game, Step
from games.notify import ladder, quiet, reminders
from games.postal import access
from moderator.mail.models import OutboundEmail
from tests.factories import started_game

pytestmark = pytest.mark.django_db

CHOICE = ChoiceEngine()
HOUR = timedelta(hours=1)


def order(game: Game, position: int, now: datetime) -> None:
    game.refresh_from_db()
    state = CHOICE.state_from_json(game.state)
    text = CHOICE.canonical(state, position, CHOICE.default(state, position))
    postal.accept_order(game_id=game.pk, position=position, text=text, source="web", now=now)


def reminded(game: Game) -> list[str]:
    return list(
        OutboundEmail.objects.filter(kind="reminder", game=game)
        .order_by("dedupe_key")
        .values_list("dedupe_key", flat=True)
    )


def keys(game: Game, positions: list[int], hours: int, deadline: datetime) -> list[str]:
    stamp = int(deadline.timestamp())
    return [f"reminder:{game.pk}:1:{p}:{hours}:{stamp}" for p in positions]


def test_reminders_go_24_and_2_hours_before_to_the_seats_that_still_owe(now: datetime) -> None:
    game = started_game(now=now, players=3)
    deadline = now + 48 * HOUR
    order(game, 0, now + HOUR)
    assert reminders.send_reminders(now + 23 * HOUR) == 0
    assert reminders.send_reminders(now + 24 * HOUR) == 2
    assert reminded(game) == keys(game, [1, 2], 24, deadline)
    order(game, 1, now + 30 * HOUR)
    assert reminders.send_reminders(now + 45 * HOUR) == 0
    assert reminders.send_reminders(now + 46 * HOUR) == 1
    assert reminded(game) == keys(game, [1, 2], 24, deadline) + keys(game, [2], 2, deadline)


def test_each_reminder_is_sent_once_however_often_the_sweep_runs(
    now: datetime, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    game = started_game(now=now, players=3)
    order(game, 0, now + HOUR)
    for minutes in range(0, 120, 10):
        with (
            time_machine.travel(now + 25 * HOUR + timedelta(minutes=minutes), tick=False),
            django_capture_on_commit_callbacks(execute=True),
        ):
            tasks.sweep()
    sent = OutboundEmail.objects.filter(kind="reminder", state="sent")
    assert sorted(sent.values_list("to", flat=True)) == ["bob@example.org", "cy@example.org"]
    reminder_mail = [m for m in mail.outbox if "has not arrived yet" in m.body]
    assert sorted(m.to[0] for m in reminder_mail) == ["bob@example.org", "cy@example.org"]


def test_a_player_who_has_sent_every_order_gets_no_reminder(now: datetime) -> None:
    game = started_game(now=now, players=2, early_processing=False)
    order(game, 0, now + HOUR)
    order(game, 1, now + HOUR)
    assert reminders.send_reminders(now + 47 * HOUR) == 0
    assert reminded(game) == []


def test_an_extended_deadline_earns_fresh_reminders(now: datetime) -> None:
    game = started_game(now=now, players=2)
    old = now + 48 * HOUR
    reminders.send_reminders(now + 25 * HOUR)
    new = now + 72 * HOUR
    postal.extend_deadline(game.pk, deadline=new, now=now + 26 * HOUR)
    assert reminders.send_reminders(now + 47 * HOUR) == 0  # 25 hours left now
    assert reminders.send_reminders(now + 49 * HOUR) == 2
    assert reminded(game) == sorted(keys(game, [0, 1], 24, old) + keys(game, [0, 1], 24, new))


def test_a_paused_or_finished_game_gets_no_reminders(now: datetime) -> None:
    paused = started_game(now=now, players=2)
    postal.pause(paused.pk, now=now + HOUR)
    finished = started_game(now=now, players=2)
    clock = now
    while finished.status != Game.Status.FINISHED:
        clock = finished.steps.get(number=finished.step_number).deadline
        assert postal.resolve_due_step(finished.steps.get(status="open").pk, now=clock)
        finished.refresh_from_db()
    assert reminders.send_reminders(now + 47 * HOUR) == 0
    assert reminders.send_reminders(clock - HOUR) == 0
    assert OutboundEmail.objects.filter(kind="reminder").count() == 0


def test_only_the_most_urgent_window_reminds(now: datetime) -> None:
    game = started_game(now=now, players=2)
    # The sweep missed the 24-hour window: only the 2-hour reminder goes out.
    assert reminders.send_reminders(now + 47 * HOUR) == 2
    assert reminded(game) == keys(game, [0, 1], 2, now + 48 * HOUR)


def test_a_window_that_began_before_the_step_opened_reminds_of_nothing(now: datetime) -> None:
    game = started_game(
        now=now, players=2, schedule_spec={"kind": "interval", "seconds": 10 * 3600}
    )
    assert reminders.send_reminders(now + timedelta(minutes=1)) == 0
    assert reminders.send_reminders(now + 8 * HOUR) == 2
    assert reminded(game) == keys(game, [0, 1], 2, now + 10 * HOUR)


def test_the_hours_come_from_the_game(now: datetime) -> None:
    game = started_game(now=now, players=2)
    Game.objects.filter(pk=game.pk).update(reminders=[6])
    assert reminders.send_reminders(now + 24 * HOUR) == 0
    assert reminders.send_reminders(now + 42 * HOUR) == 2
    assert reminded(game) == keys(game, [0, 1], 6, now + 48 * HOUR)


def test_the_reminder_says_the_deadline_what_is_owed_and_links_the_order_form(
    now: datetime,
) -> None:
    game = started_game(now=now, players=2, time_zone="Europe/Berlin", title="Dice at Dawn")
    reminders.send_reminders(now + 46 * HOUR)
    email = OutboundEmail.objects.get(kind="reminder", to="bob@example.org")
    (prompt,) = [p for p in game.steps.get().prompts if p["seat"] == 1]
    lines = email.text.splitlines()
    assert email.subject == (
        "Dice at Dawn: postal turn 1, your order is due Wed 25 Nov 2026 19:00 CET (18:00 UTC)"
    )
    assert lines[:7] == [
        "Hello bob,",
        "",
        'Your order for postal turn 1 of "Dice at Dawn" (Choice) has not arrived yet.',
        "",
        "Deadline: Wed 25 Nov 2026 19:00 CET (18:00 UTC)",
        f"You owe: {prompt['kind']} ({prompt['hint']})",
        "",
    ]
    prefix = "Your order form: http://127.0.0.1:8000/p/"
    assert lines[7].startswith(prefix)
    token = lines[7].removeprefix(prefix).rstrip("/")
    seat = access.seat_for(token, now=now + 46 * HOUR)
    assert seat is not None
    assert (seat.game_id, seat.position) == (game.pk, 1)
    assert (email.game_id, email.thread, email.reply_to) == (
        game.pk,
        f"game-{game.pk}-seat-1",
        game.gm.email,
    )


def test_queries_do_not_grow_with_the_number_of_seats(now: datetime) -> None:
    counts = {}
    for seats in (2, 8):
        started_game(now=now, players=seats)
        with CaptureQueriesContext(connection) as queries:
            assert reminders.send_reminders(now + 47 * HOUR) == seats
        counts[seats] = len(queries)
        OutboundEmail.objects.filter(kind="reminder").delete()
        Game.objects.update(status=Game.Status.FINISHED)
    assert counts[2] == counts[8]


# --- the sweep reads only the steps whose moment has come (Step.remind_at) ---------------


def remind_at(game: Game) -> datetime | None:
    return game.steps.get(status="open").remind_at


def test_a_sweep_gives_each_step_the_moment_of_its_next_rung_and_then_reads_nothing(
    now: datetime,
) -> None:
    game = started_game(now=now, players=3)
    deadline = now + 48 * HOUR
    assert remind_at(game) is None  # not worked out yet
    assert reminders.send_reminders(now + HOUR) == 0
    assert remind_at(game) == deadline - 24 * HOUR
    with CaptureQueriesContext(connection) as queries:
        assert reminders.send_reminders(now + 2 * HOUR) == 0
        assert reminders.send_reminders(now + 23 * HOUR) == 0
    assert len(queries) == 2  # the steps whose moment has come: none, twice
    assert reminders.send_reminders(now + 24 * HOUR) == 3
    assert remind_at(game) == deadline - 2 * HOUR
    assert reminders.send_reminders(now + 46 * HOUR) == 3
    assert remind_at(game) == deadline  # no rung left: read again only if it changes
    assert reminders.send_reminders(now + 47 * HOUR) == 0
    assert reminded(game) == sorted(
        keys(game, [0, 1, 2], 2, deadline) + keys(game, [0, 1, 2], 24, deadline)
    )


def test_a_sweep_late_for_a_moment_still_sends_the_most_urgent_rung(now: datetime) -> None:
    game = started_game(now=now, players=2)
    assert reminders.send_reminders(now + HOUR) == 0
    assert reminders.send_reminders(now + 47 * HOUR) == 2  # the beat was down for a day
    assert reminded(game) == keys(game, [0, 1], 2, now + 48 * HOUR)
    assert remind_at(game) == now + 48 * HOUR


def test_what_a_reminder_depends_on_changing_has_the_next_sweep_look_again(
    now: datetime,
) -> None:
    game = started_game(now=now, players=2)
    step = game.steps.get()
    deadline = now + 48 * HOUR
    assert reminders.send_reminders(now + HOUR) == 0
    seat = game.seats.get(position=0)
    # Quiet hours from 17:00 to 20:00 (UTC, the address's zone): the 24-hour rung of the
    # deadline at 18:00 two days ahead falls in them, and moves to their end.
    assert deadline.hour == 18
    reminders.choose_quiet(seat, start=time(17), end=time(20))
    assert remind_at(game) is None
    assert reminders.send_reminders(now + 2 * HOUR) == 0
    assert remind_at(game) == deadline - 24 * HOUR  # the other seat's rung comes first
    # The other seat's ladder: only 12 hours before, by email.
    other = game.seats.get(position=1)
    postal.choose_ladder(other, [ladder.Rung(12, ladder.EMAIL)], everywhere=False)
    assert remind_at(game) is None
    assert reminders.send_reminders(now + 3 * HOUR) == 0
    assert remind_at(game) == deadline - 22 * HOUR  # seat 0's, moved out of its night
    assert reminders.send_reminders(deadline - 22 * HOUR) == 1
    assert remind_at(game) == deadline - 12 * HOUR
    postal.extend_deadline(game.pk, deadline=deadline + 24 * HOUR, now=now + 27 * HOUR)
    assert remind_at(game) is None
    postal.pause(game.pk, now=now + 28 * HOUR)
    postal.resume(game.pk, now=now + 29 * HOUR)
    step.refresh_from_db()
    assert step.deadline == deadline + 25 * HOUR and step.remind_at is None
    assert reminders.send_reminders(now + 30 * HOUR) == 0
    assert remind_at(game) == step.deadline - 23 * HOUR  # seat 0's, out of its night
    postal.replace_player(
        game.pk, position=1, name="Dee", email="dee@example.org", now=now + 31 * HOUR
    )
    assert remind_at(game) is None
    assert reminders.send_reminders(now + 32 * HOUR) == 0
    assert remind_at(game) == step.deadline - 23 * HOUR


def test_a_seat_back_to_reminders_by_email_gets_the_one_that_has_come(now: datetime) -> None:
    game = started_game(now=now, players=2)
    seat = game.seats.get(position=0)
    reminders.choose(seat, way=reminders.DIGEST, hour=8)
    assert reminders.send_reminders(now + 25 * HOUR) == 1  # the other seat's
    assert remind_at(game) == now + 46 * HOUR
    reminders.choose(seat, way=reminders.EACH)
    assert remind_at(game) is None
    assert reminders.send_reminders(now + 26 * HOUR) == 1
    assert reminded(game) == keys(game, [0, 1], 24, now + 48 * HOUR)


def test_a_change_made_while_the_sweep_works_is_not_overwritten(now: datetime) -> None:
    game = started_game(now=now, players=2)
    assert reminders.send_reminders(now + HOUR) == 0
    read = list(game.steps.all())
    postal.extend_deadline(game.pk, deadline=now + 72 * HOUR, now=now + 2 * HOUR)
    ladders: dict[int, tuple[list[ladder.Rung], quiet.Night | None]] = {
        seat.pk: (ladder.default(game), None) for seat in game.seats.all()
    }
    seats = {game.pk: {seat.position: seat for seat in game.seats.all()}}
    reminders._remind_next(read, seats, ladders, now + 2 * HOUR)
    assert remind_at(game) is None
    assert reminders.send_reminders(now + 3 * HOUR) == 0
    assert remind_at(game) == now + 48 * HOUR  # 24 hours before the new deadline


@pytest.mark.django_db(transaction=True)
def test_the_sweep_skips_a_step_a_resolution_holds_rather_than_wait(now: datetime) -> None:
    held, other = started_game(now=now, players=2), started_game(now=now, players=2)
    holding, release = threading.Event(), threading.Event()

    def resolution() -> None:  # holds the step's row, as a resolution does until it commits
        try:
            with transaction.atomic():
                Step.objects.select_for_update().get(game=held)
                holding.set()
                release.wait(10)
        finally:
            connection.close()

    thread = threading.Thread(target=resolution)
    thread.start()
    try:
        assert holding.wait(10)
        assert reminders.send_reminders(now + HOUR) == 0
        assert (remind_at(held), remind_at(other)) == (None, now + 24 * HOUR)
    finally:
        release.set()
        thread.join()
    assert reminders.send_reminders(now + 2 * HOUR) == 0
    assert remind_at(held) == now + 24 * HOUR
