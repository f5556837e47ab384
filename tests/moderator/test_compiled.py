"""moderator.db.compiled.Compiled reads what its queryset reads, with SQL written once."""

from __future__ import annotations

import threading
import time
from typing import Any

import psycopg
import pytest
from django.db import connection, transaction
from django.db.models import Exists, OuterRef
from django.db.models.query_utils import DeferredAttribute
from django.db.transaction import TransactionManagementError
from django.test.utils import CaptureQueriesContext

from games import postal
from games.models import Game, Order, Seat, Step
from moderator.db.compiled import Compiled, read_together
from tests.factories import choice_game
from tests.games.test_postal import nmr_text

pytestmark = pytest.mark.django_db


@pytest.fixture
def games(now):
    return [
        postal.start_game(choice_game(players, early_processing=False).pk, now=now)
        for players in (3, 2)
    ]


def counted(build):
    """``build``, counting its calls."""
    calls = []

    def counting(*values):
        calls.append(values)
        return build(*values)

    return counting, calls


def columns(instance) -> dict:
    """Every field the instance has loaded, by name (deferred ones left out)."""
    deferred = instance.get_deferred_fields()
    return {
        field.attname: getattr(instance, field.attname)
        for field in type(instance)._meta.concrete_fields
        if field.attname not in deferred
    }


def test_the_instances_are_the_querysets_with_their_related_rows(games):
    def build(game_id, *ids):
        return (
            Seat.objects.select_related("game")
            .filter(pk__in=ids, game_id=game_id)
            .order_by("-position")
        )

    compiling, calls = counted(build)
    seats = Compiled(Seat, compiling)
    game = games[0]
    ids = list(game.seats.values_list("pk", flat=True))
    for chosen in (ids[:2], ids[1:], ids):
        expected = list(build(game.pk, *chosen))
        with CaptureQueriesContext(connection) as queries:
            got = seats.all(game.pk, *chosen)
            # The game came with the seat: reading it is no query.
            assert [seat.game.title for seat in got] == [seat.game.title for seat in expected]
        assert len(queries) == 1
        assert [columns(seat) for seat in got] == [columns(seat) for seat in expected]
        assert [columns(seat.game) for seat in got] == [columns(seat.game) for seat in expected]
        assert [seat.position for seat in got] == sorted((s.position for s in got), reverse=True)
        assert all(not seat._state.adding and seat._state.db == "default" for seat in got)
    # Lists of two values and of three: two compiles, and none again for a list of two;
    # the SQL is the queryset's own.
    seats.all(games[1].pk, *games[1].seats.values_list("pk", flat=True))
    assert [len(values) for values in calls] == [3, 4]
    with CaptureQueriesContext(connection) as queries:
        seats.all(game.pk, ids[0], ids[2])
    assert queries[0]["sql"] == str(build(game.pk, ids[0], ids[2]).query)


def test_other_values_read_other_rows(games):
    steps = Compiled(Step, lambda game, number: Step.objects.filter(game_id=game, number=number))
    for game in games:
        step = steps.get(game.pk, 1)
        assert (step.game_id, step.number, step.pk) == (game.pk, 1, game.steps.get(number=1).pk)
    assert steps.all(games[0].pk, 2) == []


def test_deferred_fields_stay_deferred(games):
    steps = Compiled(
        Step,
        lambda game_id: Step.objects.defer("state_before", "state_after").filter(game_id=game_id),
    )
    step = steps.get(games[0].pk)
    assert step.get_deferred_fields() == {"state_before", "state_after"}
    assert isinstance(Step.__dict__["state_before"], DeferredAttribute)
    assert step.prompts == games[0].steps.get().prompts


def test_get_answers_as_querysets_get_does(games):
    seats = Compiled(Seat, lambda game_id: Seat.objects.filter(game_id=game_id))
    with pytest.raises(Seat.MultipleObjectsReturned, match="it returned 3"):
        seats.get(games[0].pk)
    with pytest.raises(Seat.DoesNotExist):
        seats.get(games[1].pk + 1000)


@pytest.mark.django_db(transaction=True)
def test_a_locking_read_locks_and_only_in_a_transaction(games):
    locked = Compiled(
        Seat,
        lambda game_id: (
            Seat.objects.select_related("game")
            .select_for_update(of=("game",))
            .filter(game_id=game_id)
        ),
    )
    with pytest.raises(TransactionManagementError):
        locked.all(games[0].pk)
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        assert len(locked.all(games[0].pk)) == 3
    assert queries[0]["sql"].endswith('FOR UPDATE OF "games_game"')
    with pytest.raises(TransactionManagementError):  # and still not outside one
        locked.all(games[0].pk)


def test_builds_that_do_not_use_each_value_once_as_a_parameter_are_refused(games):
    twice = Compiled(Seat, lambda game_id: Seat.objects.filter(game_id=game_id, pk=game_id))
    unused = Compiled(Seat, lambda game_id, position: Seat.objects.filter(game_id=game_id))
    other_model = Compiled(Seat, lambda game_id: Game.objects.filter(pk=game_id))  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError, match="each value must become one parameter"):
        twice.all(games[0].pk)
    with pytest.raises(ValueError, match="each value must become one parameter"):
        unused.all(games[0].pk, 0)
    with pytest.raises(ValueError, match=r"reads <class 'games\.models\.Game'>"):
        other_model.all(games[0].pk)


def test_annotations_come_with_the_instances(games, now):
    game = games[0]
    step = game.steps.get()
    seat = game.seats.get(position=1)
    postal.accept_order(game_id=game.pk, position=1, text=nmr_text(game, 1), source="web", now=now)

    def build(game_id: int, step_id: int) -> Any:
        sent = Order.objects.filter(step_id=step_id, seat=OuterRef("pk"))
        return Seat.objects.filter(game_id=game_id).order_by("position").annotate(sent=Exists(sent))

    compiled: Any = Compiled(Seat, build)
    got = [(s.pk, s.position, s.sent) for s in compiled.all(game.pk, step.pk)]
    assert [(position, sent) for _, position, sent in got] == [(0, False), (1, True), (2, False)]
    assert got == [(s.pk, s.position, s.sent) for s in build(game.pk, step.pk)]
    assert got[1][0] == seat.pk


def test_reads_together_are_one_round_trip_each_with_its_instances(games):
    seats = Compiled(
        Seat, lambda game_id: Seat.objects.filter(game_id=game_id).order_by("position")
    )
    steps = Compiled(Step, lambda game_id: Step.objects.filter(game_id=game_id))
    with CaptureQueriesContext(connection) as queries:
        found = read_together((seats, (games[0].pk,)), (steps, (games[1].pk,)), (seats, (0,)))
    assert [[type(i).__name__ for i in part] for part in found] == [["Seat"] * 3, ["Step"], []]
    assert [s.pk for s in found[0]] == [s.pk for s in games[0].seats.order_by("position")]
    assert found[1][0].game_id == games[1].pk
    expected = 1 if connection.vendor == "postgresql" else 3
    assert len(queries) == expected


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_read_after_a_lock_sees_what_the_locks_holder_committed(games):
    """The step read with the game lock, in the same round trip, is the step as the
    transaction that held the lock left it, not as it was when the round trip began."""
    game = games[0]
    step = game.steps.get()
    locked = Compiled(Game, lambda game_id: Game.objects.select_for_update().filter(pk=game_id))
    steps = Compiled(Step, lambda game_id: Step.objects.filter(game_id=game_id))
    db = connection.settings_dict
    holder = psycopg.connect(
        host=db["HOST"], port=db["PORT"] or 5432, user=db["USER"], dbname=db["NAME"]
    )
    holder.execute("SELECT 1 FROM games_game WHERE id = %s FOR UPDATE", [game.pk])
    holder.execute("UPDATE games_step SET prompts = '[]' WHERE id = %s", [step.pk])
    # A thread that sleeps, not a threading.Timer: a timed wait on a condition never
    # returns under libfaketime (make test-later).
    timer = threading.Thread(target=lambda: (time.sleep(0.5), holder.commit()))
    timer.start()
    try:
        with transaction.atomic():
            _, (read,) = read_together((locked, (game.pk,)), (steps, (game.pk,)))
    finally:
        timer.join()
        holder.close()
    assert step.prompts != [] and read.prompts == []
