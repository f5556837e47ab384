from __future__ import annotations

import hashlib
import threading
import time
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.db import connection, transaction
from django.db.models import F
from pytest_django.fixtures import DjangoAssertNumQueries, Settings

from games import postal
from games.engines.choice.rules import ChoiceEngine, RoundLine, legal_choices, play_round
from games.models import DiceRoll, Event, Game, Order, Seat, Step
from games.postal import steps
from moderator.mail.models import OutboundEmail
from tests.factories import SEED, GameFactory, GMFactory, started_game

pytestmark = pytest.mark.django_db

CHOICE = ChoiceEngine()


def nmr_text(game: Game, position: int) -> str:
    """A legal order for ``position``: the engine's own default, written out."""
    state = CHOICE.state_from_json(game.state)
    return CHOICE.canonical(state, position, CHOICE.default(state, position))


def snapshot(game: Game) -> tuple[Any, ...]:
    game.refresh_from_db()
    return (
        game.state,
        game.step_number,
        game.dice_drawn,
        Order.objects.count(),
        Step.objects.filter(status=Step.Status.OPEN).count(),
        DiceRoll.objects.count(),
        Event.objects.count(),
        OutboundEmail.objects.count(),
    )


# --- creating and starting ------------------------------------------------------------


def test_start_commits_the_seed_rolls_turn_one_and_writes_a_report_per_seat(now: datetime) -> None:
    game = started_game(players=3, now=now)
    game.refresh_from_db()
    assert game.status == Game.Status.RUNNING
    assert game.commitment == hashlib.sha256(SEED).hexdigest()
    assert game.seed_revealed is False
    step = game.steps.get()
    assert (step.number, step.status, step.deadline) == (1, "open", now + timedelta(hours=48))
    assert step.prompted_seats == [0, 1, 2]
    # Two rounds of five d6, drawn 0..9 and stored with step 1.
    rolls = list(game.dice_rolls.values_list("index", "sides", "step__number"))
    assert rolls == [(i, 6, 1) for i in range(10)]
    assert game.dice_drawn == 10
    keys = sorted(OutboundEmail.objects.values_list("dedupe_key", flat=True))
    assert keys == [f"report:{game.pk}:1:{p}" for p in range(3)]


def test_create_game_rejects_bad_input_and_writes_nothing() -> None:
    gm = GMFactory.create()
    bad: list[tuple[dict[str, Any], str]] = [
        ({"engine_key": "chess"}, "there is no game 'chess'; the games are choice"),
        ({"options": {"rolls_per_turn": "2"}}, "options: "),
        ({"time_zone": "Mars/Olympus"}, "'Mars/Olympus' is not a time zone"),
        ({"schedule_spec": {"kind": "hourly"}}, "schedule: a schedule's kind must be"),
        ({"title": "two\nlines"}, "the title must be a single line"),
    ]
    for change, message in bad:
        kwargs: dict[str, Any] = {
            "gm": gm,
            "engine_key": "choice",
            "title": "T",
            "players": [postal.Player("ann", "ann@example.org")],
        } | change
        with pytest.raises(postal.PostalError) as caught:
            postal.create_game(**kwargs)
        assert caught.value.message.startswith(message), caught.value.message
    players = [postal.Player("ann", "ann@example.org"), postal.Player("ANN", "b@example.org")]
    with pytest.raises(postal.PostalError, match="two players are called 'ANN'"):
        postal.create_game(gm=gm, engine_key="choice", title="T", players=players)
    with pytest.raises(postal.PostalError, match="is not one email address"):
        postal.create_game(
            gm=gm,
            engine_key="choice",
            title="T",
            players=[postal.Player("ann", "ann@example.org, bob@example.org")],
        )
    assert Game.objects.count() == 0
    assert Seat.objects.count() == 0


def test_a_game_starts_once(now: datetime) -> None:
    game = started_game(players=2, now=now)
    with pytest.raises(postal.PostalError, match="the game is running"):
        postal.start_game(game.pk, now=now)


# --- orders ----------------------------------------------------------------------------


def test_a_valid_order_is_kept_with_its_canonical_form_and_sealed_in_the_state(
    now: datetime,
) -> None:
    game = started_game(players=3, now=now)
    text = nmr_text(game, 0)
    order = postal.accept_order(
        game_id=game.pk, position=0, text=text.upper(), source="web", now=now
    )
    assert (order.text, order.canonical, order.source) == (text.upper(), text, "web")
    game.refresh_from_db()
    assert CHOICE.has_order(CHOICE.state_from_json(game.state), 0) is True
    assert game.steps.get(number=1).status == Step.Status.OPEN


def test_an_order_by_link_is_taken_for_the_seat_the_links_still_open(now: datetime) -> None:
    game = started_game(players=3, now=now, early_processing=False)
    other = started_game(players=2, now=now)
    seats = {seat.position: seat for seat in game.seats.all()}

    def by_link(links: dict[int, int], position: int) -> Order:
        return postal.accept_linked_order(
            game_id=game.pk,
            position=position,
            links=links,
            text=nmr_text(game, position),
            source="web",
            now=now,
        )

    assert by_link({seats[1].pk: 0}, 1).seat == seats[1]
    # Two seats of the game in one browser: the order is the page's seat's, whichever.
    assert by_link({seats[1].pk: 0, seats[2].pk: 0}, 2).seat == seats[2]
    postal.rotate_link(game.pk, position=1, now=now)
    before = snapshot(game)
    refused = [
        {seats[1].pk: 0},  # the link was rotated
        {seats[1].pk: 0, seats[2].pk: 0},  # rotated, and another seat's link works
        {seats[0].pk: 0, seats[2].pk: 0},  # other seats of the game, not this one
        {other.seats.get(position=1).pk: 0},  # the same position in another game
        {},
    ]
    for links in refused:
        with pytest.raises(postal.SeatNotFound):
            by_link(links, 1)
    assert snapshot(game) == before
    assert by_link({seats[1].pk: 1}, 1).seat == seats[1]  # the new link
    assert by_link({seats[1].pk: 0, seats[2].pk: 0}, 2).seat == seats[2]
    # Sent again, the same orders were acknowledged and not recorded twice.
    assert [(order.seat, order.canonical) for order in Order.objects.order_by("id")] == [
        (seats[1], nmr_text(game, 1)),
        (seats[2], nmr_text(game, 2)),
    ]


def test_the_columns_an_order_post_reads_in_one_statement_are_every_models_column(
    now: datetime,
) -> None:
    """A column left out of postal's one statement would be read on first use (a query
    more); the step's states are left out on purpose (an order does not read them), and
    what a rollback reads (an order closing the step writes it, unread), the order the
    host set (written by ``set_order`` only, read by the export), and when the reminders
    look at the step next (the reminders' own mark)."""
    game = started_game(players=2, now=now)
    seat, step = game.seats.get(position=0), game.steps.get()
    assert tuple(Seat.objects.filter(pk=seat.pk).values().get()) == postal.SEAT_COLUMNS
    assert tuple(Game.objects.filter(pk=game.pk).values().get()) == postal.GAME_COLUMNS
    step_columns = tuple(Step.objects.filter(pk=step.pk).values().get())
    states = (
        "state_before",
        "state_after",
        "resolved_from",
        "rollbacks",
        "host_order",
        "remind_at",
    )
    assert set(states) <= set(step_columns)
    assert tuple(name for name in step_columns if name not in states) == postal.STEP_COLUMNS


def waiting_for_a_lock() -> bool:
    """Whether another connection of this database waits for a row lock. (The activity is
    read afresh: a transaction keeps the first it read.)"""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
        )
        row = cursor.fetchone()
    return bool(row and row[0])


def post_in_thread(game: Game, position: int, text: str, now: datetime) -> tuple[Any, list[Any]]:
    """An order by link posted from a thread of its own (a connection of its own): the
    thread and where its outcome (the order, or what was raised) will be."""
    seat = game.seats.get(position=position)
    outcome: list[Any] = []

    def post() -> None:
        try:
            outcome.append(
                postal.accept_linked_order(
                    game_id=game.pk,
                    position=position,
                    links={seat.pk: seat.link_version},
                    text=text,
                    source="web",
                    now=now,
                    step_number=game.step_number,
                )
            )
        except postal.PostalError as error:
            outcome.append(error)
        finally:
            connection.close()

    thread = threading.Thread(target=post)
    thread.start()
    return thread, outcome


def until(condition: Any) -> None:
    for _ in range(200):
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("the other connection never got there")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_an_order_waiting_for_the_games_lock_sees_the_step_its_holder_committed(
    now: datetime,
) -> None:
    """The step is read with the game's lock as the lock's last holder left it, not as it
    was when the order began to wait: here the holder moved the deadline into the past."""
    game = started_game(players=2, now=now, early_processing=False)
    with transaction.atomic():
        Game.objects.select_for_update().get(pk=game.pk)
        thread, outcome = post_in_thread(game, 0, nmr_text(game, 0), now)
        until(waiting_for_a_lock)
        Step.objects.filter(game=game, number=1).update(deadline=now - timedelta(minutes=1))
    thread.join()
    assert [str(error) for error in outcome] == [
        "too late: the deadline passed at Mon 23 Nov 2026 17:59 UTC, so nothing was "
        "recorded; postal turn 1 is being resolved and its report comes by email"
    ]
    assert Order.objects.count() == 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_an_order_waiting_while_its_step_is_resolved_is_tried_on_the_next_step(
    now: datetime,
) -> None:
    """The holder of the game's lock resolved the step and opened the next: the order,
    written for the step that closed, is not taken into it (new dice were rolled)."""
    game = started_game(players=2, now=now, early_processing=False)
    text = nmr_text(game, 0)
    with transaction.atomic():
        Game.objects.select_for_update().get(pk=game.pk)
        thread, outcome = post_in_thread(game, 0, text, now)
        until(waiting_for_a_lock)
        postal.resolve_now(game.pk, now=now)
    thread.join()
    assert [type(error) for error in outcome] == [postal.StepMovedOn]
    assert Order.objects.filter(source=Order.Source.WEB).count() == 0
    game.refresh_from_db()
    assert game.step_number == 2


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_an_order_does_not_wait_for_a_step_written_without_its_games_lock(now: datetime) -> None:
    """A failed resolution counted on the step writes its row without the game's lock
    (and then may write the game): an order holding the game's lock does not wait for the
    step's row, so the two never wait for each other."""
    game = started_game(players=2, now=now, early_processing=False)
    with transaction.atomic():
        Step.objects.filter(game=game, number=1).update(failures=F("failures") + 1)
        thread, outcome = post_in_thread(game, 0, nmr_text(game, 0), now)
        thread.join(timeout=20)
        assert not thread.is_alive()
    assert [(order.seat.position, order.step.number) for order in outcome] == [(0, 1)]


def test_every_revision_is_kept_and_the_latest_counts(now: datetime) -> None:
    game = started_game(players=2, now=now, early_processing=False)
    state = CHOICE.state_from_json(game.state)
    first = nmr_text(game, 0)
    postal.accept_order(game_id=game.pk, position=0, text=first, source="web", now=now)
    # Another legal order for the same rounds: the last legal choice of every round.
    sheet = state.sheets[0]
    lines = []
    for round_ in state.rounds:
        choice = legal_choices(sheet, round_.roll)[-1]
        lines.append(f"{round_.number}: {choice.text()}")
        sheet = play_round(sheet, round_.roll, RoundLine(round_.number, choice), state.options)
    second = "\n".join(lines)
    later = now + timedelta(minutes=5)
    postal.accept_order(game_id=game.pk, position=0, text=second, source="email", now=later)
    assert list(Order.objects.values_list("canonical", flat=True)) == [first, second]
    game.refresh_from_db()
    assert CHOICE.state_from_json(game.state).orders[0] == CHOICE.parse(state, 0, second)


def test_an_invalid_order_gets_the_engines_message_and_changes_nothing(now: datetime) -> None:
    game = started_game(players=3, now=now)
    before = snapshot(game)
    with pytest.raises(postal.OrderRejected) as caught:
        postal.accept_order(game_id=game.pk, position=1, text="W9 1+1 1+1", source="web", now=now)
    assert caught.value.message.startswith("round 1: ")
    assert snapshot(game) == before


def test_a_late_order_is_rejected_and_changes_nothing(now: datetime) -> None:
    game = started_game(players=3, now=now)
    text = nmr_text(game, 0)
    before = snapshot(game)
    late = now + timedelta(hours=48, seconds=1)
    with pytest.raises(postal.OrderRejected) as caught:
        postal.accept_order(game_id=game.pk, position=0, text=text, source="web", now=late)
    assert caught.value.message == (
        "too late: the deadline passed at Wed 25 Nov 2026 18:00 UTC, so nothing was recorded; "
        "postal turn 1 is being resolved and its report comes by email"
    )
    assert snapshot(game) == before


def test_an_order_one_second_before_the_deadline_counts(now: datetime) -> None:
    game = started_game(players=3, now=now)
    just = now + timedelta(hours=48) - timedelta(seconds=1)
    postal.accept_order(game_id=game.pk, position=2, text=nmr_text(game, 2), source="web", now=just)
    assert Order.objects.get().seat.position == 2


def test_an_order_written_for_a_resolved_step_says_so(now: datetime) -> None:
    game = started_game(players=1, now=now)
    postal.accept_order(game_id=game.pk, position=0, text=nmr_text(game, 0), source="web", now=now)
    game.refresh_from_db()
    with pytest.raises(postal.OrderRejected) as caught:
        postal.accept_order(
            game_id=game.pk, position=0, text="W1 1+1 1+1", source="web", now=now, step_number=1
        )
    assert caught.value.message == (
        "too late: postal turn 1 was resolved at Mon 23 Nov 2026 18:00 UTC when every order was "
        "in; postal turn 2 is open now; new dice were rolled since you wrote it; read the new "
        "report first"
    )


def test_the_deadline_is_shown_in_the_seats_time_zone(now: datetime) -> None:
    game = started_game(players=1, now=now, time_zone="Europe/Berlin")
    late = now + timedelta(days=3)
    with pytest.raises(postal.OrderRejected) as caught:
        postal.accept_order(game_id=game.pk, position=0, text="x", source="web", now=late)
    assert caught.value.message == (
        "too late: the deadline passed at Wed 25 Nov 2026 19:00 CET (18:00 UTC), so nothing "
        "was recorded; postal turn 1 is being resolved and its report comes by email"
    )


def test_orders_to_a_game_not_running_are_refused(now: datetime) -> None:
    game = GameFactory.create(seats=2)
    with pytest.raises(postal.OrderRejected, match="the game has not started"):
        postal.accept_order(game_id=game.pk, position=0, text="x", source="web", now=now)
    with pytest.raises(postal.OrderRejected, match="there is no such seat"):
        postal.accept_order(game_id=game.pk, position=7, text="x", source="web", now=now)


# --- resolving -------------------------------------------------------------------------


def test_the_last_order_resolves_the_step_at_once_with_early_processing(now: datetime) -> None:
    game = started_game(players=2, now=now)
    for position in (0, 1):
        postal.accept_order(
            game_id=game.pk,
            position=position,
            text=nmr_text(game, position),
            source="web",
            now=now,
        )
        game.refresh_from_db()
    first, second = game.steps.order_by("number")
    assert (first.status, first.closed_by, second.status) == ("done", "early", "open")
    assert game.dice_drawn == 20
    assert Order.objects.filter(source=Order.Source.DEFAULT).count() == 0


def test_without_early_processing_the_step_waits_for_its_deadline(now: datetime) -> None:
    game = started_game(players=2, now=now, early_processing=False)
    for position in (0, 1):
        postal.accept_order(
            game_id=game.pk,
            position=position,
            text=nmr_text(game, position),
            source="web",
            now=now,
        )
    assert list(game.steps.values_list("status", flat=True)) == ["open"]
    deadline = now + timedelta(hours=48)
    assert postal.due_step_ids(deadline - timedelta(seconds=1)) == []
    assert postal.resolve_due_step(game.steps.get().pk, now=deadline) is True
    assert Order.objects.filter(source=Order.Source.DEFAULT).count() == 0


def test_the_deadline_fills_missing_orders_with_the_nmr_default(now: datetime) -> None:
    game = started_game(players=3, now=now)
    postal.accept_order(game_id=game.pk, position=1, text=nmr_text(game, 1), source="web", now=now)
    game.refresh_from_db()
    expected = {0: nmr_text(game, 0), 2: nmr_text(game, 2)}
    step = game.steps.get()
    deadline = step.deadline
    assert postal.due_step_ids(deadline) == [step.pk]
    assert postal.resolve_due_step(step.pk, now=deadline) is True
    defaults = Order.objects.filter(source=Order.Source.DEFAULT)
    assert {o.seat.position: o.canonical for o in defaults} == expected
    assert list(Seat.objects.order_by("position").values_list("nmr_count", flat=True)) == [1, 0, 1]
    step.refresh_from_db()
    assert (step.status, step.closed_by, step.closed_at) == ("done", "deadline", deadline)
    game.refresh_from_db()
    assert game.step_number == 2
    assert game.steps.get(number=2).deadline == deadline + timedelta(hours=48)
    # The second resolution of the same step does nothing.
    assert postal.resolve_due_step(step.pk, now=deadline) is False
    assert game.steps.count() == 2


def test_a_step_not_yet_due_is_not_resolved_by_the_sweep(now: datetime) -> None:
    game = started_game(players=2, now=now)
    step = game.steps.get()
    assert postal.resolve_due_step(step.pk, now=now + timedelta(hours=47)) is False
    step.refresh_from_db()
    assert step.status == Step.Status.OPEN


def test_a_resolution_that_raises_leaves_the_step_open_with_nothing_written(
    now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = started_game(players=2, now=now)
    before = snapshot(game)

    def explode(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("disk on fire")

    # Fails after the dice for turn 2 were drawn and recorded: all of it must roll back.
    monkeypatch.setattr(steps, "queue_reports", explode)
    step = game.steps.get()
    assert postal.resolve_due_step(step.pk, now=step.deadline) is False
    assert snapshot(game) == before
    step.refresh_from_db()
    assert (step.status, step.failures, step.last_error) == (
        "open",
        1,
        "RuntimeError: disk on fire",
    )
    monkeypatch.undo()
    assert postal.resolve_due_step(step.pk, now=step.deadline) is True


def test_a_step_that_keeps_failing_needs_the_gm_and_leaves_the_sweep(
    now: datetime, monkeypatch: pytest.MonkeyPatch, settings: Settings
) -> None:
    settings.STEP_FAILURE_LIMIT = 2
    game = started_game(players=2, now=now)
    step = game.steps.get()
    monkeypatch.setattr(steps, "queue_reports", lambda *a, **k: 1 / 0)
    assert postal.resolve_due_step(step.pk, now=step.deadline) is False
    assert postal.due_step_ids(step.deadline) == [step.pk]
    assert postal.resolve_due_step(step.pk, now=step.deadline) is False
    game.refresh_from_db()
    assert game.needs_gm == "step 1 failed 2 times: ZeroDivisionError: division by zero"
    assert postal.due_step_ids(step.deadline) == []


def test_a_whole_game_runs_to_final_standings_and_reveals_its_seed(now: datetime) -> None:
    game = started_game(players=3, now=now)
    clock = now
    while True:
        game.refresh_from_db()
        if game.status == Game.Status.FINISHED:
            break
        step = game.steps.get(number=game.step_number)
        clock = step.deadline
        assert postal.due_step_ids(clock) == [step.pk]
        assert postal.resolve_due_step(step.pk, now=clock) is True
    assert game.seed_revealed is True and game.finished_at == clock
    standings = CHOICE.standings(CHOICE.state_from_json(game.state)) or []
    assert [s.seat for s in standings] != []
    finals = OutboundEmail.objects.filter(kind="final").order_by("to")
    assert [m.dedupe_key for m in finals] == [f"final:{game.pk}:{p}" for p in range(3)]
    assert SEED.hex() in finals[0].text
    # Every step was resolved once and every roll index exists once.
    assert list(game.dice_rolls.values_list("index", flat=True)) == list(range(game.dice_drawn))
    assert game.steps.filter(status=Step.Status.OPEN).count() == 0
    assert OutboundEmail.objects.filter(kind="report").count() == 3 * game.step_number


@pytest.mark.parametrize("seats", [3, 5, 8])
def test_a_step_makes_the_same_number_of_queries_whatever_its_seats(
    seats: int, now: datetime, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    game = started_game(players=seats, now=now)
    step = game.steps.get()
    # Inside the savepoint a test runs it in (a transaction in production): the game
    # locked (with its GM), the step, the seats (each with whether it sent an order), the
    # absences of those that did not; the NMR defaults, the NMR counts, the ledger's rows
    # of the defaults played, the dice, the events, the step closed, the next one opened,
    # the links, the reports, the game's webhooks, the game saved.
    with django_assert_num_queries(17):
        assert postal.resolve_due_step(step.pk, now=step.deadline) is True
    assert Step.objects.get(pk=step.pk).status == Step.Status.DONE
    assert Order.objects.filter(step=step, source=Order.Source.DEFAULT).count() == seats
    assert OutboundEmail.objects.filter(kind="report").count() == 2 * seats


@pytest.mark.parametrize("seats", [3, 5, 8])
def test_the_order_that_resolves_its_step_makes_the_same_number_of_queries_whatever_the_seats(
    seats: int, now: datetime, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    game = started_game(players=seats, now=now)
    for position in range(seats - 1):
        postal.accept_order(
            game_id=game.pk, position=position, text=nmr_text(game, position), source="web", now=now
        )
    last = seats - 1
    # The seat with its game locked, the step, the order and its event, the seats that
    # have answered (all of them); the resolution: the seats (each with whether it sent an
    # order), the dice, the events, the step closed, the next one opened, the links, the GM
    # (the reports answer to them), the reports, the game's webhooks, the game saved.
    with django_assert_num_queries(17):
        postal.accept_order(
            game_id=game.pk, position=last, text=nmr_text(game, last), source="web", now=now
        )
    assert Step.objects.get(game=game, number=1).closed_by == Step.Closed.EARLY


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_sweeps_resolving_the_same_step_at_once_resolve_it_once(now: datetime) -> None:
    game = started_game(players=3, now=now)
    step = game.steps.get()
    barrier = threading.Barrier(2)
    results: list[bool] = []

    def sweep() -> None:
        try:
            barrier.wait()
            results.append(postal.resolve_due_step(step.pk, now=step.deadline))
        finally:
            connection.close()

    threads = [threading.Thread(target=sweep) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False, True]
    game.refresh_from_db()
    assert game.step_number == 2
    assert list(game.dice_rolls.values_list("index", flat=True)) == list(range(20))
    assert Order.objects.filter(source=Order.Source.DEFAULT).count() == 3
    assert OutboundEmail.objects.filter(dedupe_key__startswith=f"report:{game.pk}:2:").count() == 3
