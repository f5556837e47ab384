"""The PostgreSQL engine (moderator.db.postgresql): a transaction's BEGIN travels with its
first statement, the health check at a request's start asks the socket, not the server,
and compiled reads are prepared once per server session. Outside any test transaction
(``transaction=True``): these are about BEGIN and COMMIT themselves."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import ImproperlyConfigured
from django.db import (
    DataError,
    IntegrityError,
    ProgrammingError,
    close_old_connections,
    connection,
    connections,
    transaction,
)
from django.db.backends.base.base import BaseDatabaseWrapper
from django.test.utils import CaptureQueriesContext
from psycopg import pq
from psycopg.pq import TransactionStatus

from games.models import Game, Seat
from moderator.db.compiled import Compiled, read_together
from moderator.db.postgresql.base import prepared
from tests.factories import choice_game

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


class Sent:
    """What the driver sends the server, read from libpq's trace of the protocol
    (PQtrace): exactly what left the client, a query (one round trip) a string."""

    def __init__(self, directory: Path) -> None:
        connection.ensure_connection()
        self.pgconn = connection.connection.pgconn
        self.trace = directory / "trace"
        self.file = self.trace.open("w")
        self.read = 0
        self.start()

    def start(self) -> None:
        self.pgconn.trace(self.file.fileno())
        self.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)

    def take(self) -> list[str]:
        """The queries sent since the last take()."""
        self.pgconn.untrace()  # libpq flushes its trace then
        lines = self.trace.read_text().splitlines()
        new, self.read = lines[self.read :], len(lines)
        self.start()
        messages: list[str] = []
        for line in new:
            if line[:2] in ("F\t", "B\t"):
                messages.append(line)
            else:  # a query's text goes on over the lines it holds
                messages[-1] += "\n" + line
        queries = []
        for message in messages:
            direction, _, kind, *text = message.split("\t")
            if direction == "F" and kind in ("Query", "Parse"):
                queries.append(" ".join(text).strip().strip('"'))
        return queries

    def close(self) -> None:
        self.pgconn.untrace()
        self.file.close()


@pytest.fixture
def sent(tmp_path: Path) -> Iterator[Sent]:
    traced = Sent(tmp_path)
    try:
        yield traced
    finally:
        traced.close()


@pytest.fixture
def other() -> Iterator[BaseDatabaseWrapper]:
    """A second connection to the same database, as another process would have."""
    second = connections.create_connection("default")
    try:
        yield second
    finally:
        second.close()


def groups_seen_by(other: BaseDatabaseWrapper) -> list[str]:
    with other.cursor() as cursor:
        cursor.execute("SELECT name FROM auth_group ORDER BY name")
        return [name for (name,) in cursor.fetchall()]


def test_a_transaction_is_two_round_trips_for_one_statement(sent, other):
    insert = 'INSERT INTO "auth_group" ("name") VALUES'
    Group.objects.create(name="outside")
    assert [query[: len(insert)] for query in sent.take()] == [insert]  # autocommit
    with transaction.atomic():
        Group.objects.create(name="inside")
        # Written in a transaction the other connection does not see yet.
        assert groups_seen_by(other) == ["outside"]
        assert connection.connection.info.transaction_status == TransactionStatus.INTRANS
    first, commit = sent.take()
    assert (first[: len("BEGIN;") + len(insert)], commit) == (f"BEGIN;{insert}", "COMMIT")
    assert groups_seen_by(other) == ["inside", "outside"]
    assert connection.connection.info.transaction_status == TransactionStatus.IDLE


def test_the_first_statement_runs_inside_the_transaction():
    """now() is the transaction's start: the same for every statement of one transaction,
    so the first statement was in it."""
    with connection.cursor() as cursor:
        with transaction.atomic():
            cursor.execute("SELECT now()")
            (first,) = cursor.fetchone()
            cursor.execute("SELECT pg_sleep(0.02)")
            cursor.execute("SELECT now()")
            assert cursor.fetchone() == (first,)
        cursor.execute("SELECT now()")
        (later,) = cursor.fetchone()
    assert later > first


def test_an_empty_transaction_sends_nothing(sent):
    with transaction.atomic():
        pass
    assert sent.take() == []


def test_a_failing_first_statement_rolls_the_transaction_back(other):
    with pytest.raises(DataError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT 1 / 0")
    with pytest.raises(IntegrityError), transaction.atomic():
        Group.objects.create(name="twice")
        Group.objects.create(name="twice")
    assert groups_seen_by(other) == []
    assert list(Group.objects.values_list("name", flat=True)) == []
    assert connection.connection.info.transaction_status == TransactionStatus.IDLE


def test_a_rolled_back_block_leaves_nothing_and_a_savepoint_keeps_the_rest(other):
    with transaction.atomic():
        Group.objects.create(name="kept")
        with pytest.raises(IntegrityError), transaction.atomic():
            Group.objects.create(name="kept")
    with pytest.raises(RuntimeError), transaction.atomic():
        Group.objects.create(name="dropped")
        raise RuntimeError
    assert groups_seen_by(other) == ["kept"]


def test_a_named_cursor_opens_the_transaction_before_it_declares():
    Group.objects.bulk_create(Group(name=f"g{n}") for n in range(3))
    with transaction.atomic():
        names = [group.name for group in Group.objects.order_by("name").iterator(chunk_size=1)]
        assert connection.connection.info.transaction_status == TransactionStatus.INTRANS
    assert names == ["g0", "g1", "g2"]


def test_autocommit_turned_off_by_hand_commits_when_told(other):
    transaction.set_autocommit(False)
    try:
        Group.objects.create(name="by hand")
        assert groups_seen_by(other) == []
        with pytest.raises(ProgrammingError, match="in transaction status INTRANS"):
            transaction.set_autocommit(True)  # as psycopg refuses it in a transaction
        transaction.commit()
        assert groups_seen_by(other) == ["by hand"]
        Group.objects.create(name="second")  # a new transaction begins with it
        transaction.rollback()
    finally:
        transaction.set_autocommit(True)
    assert groups_seen_by(other) == ["by hand"]


def test_the_health_check_asks_the_socket_not_the_server(sent):
    driver = connection.connection
    connection.health_check_done = False  # type: ignore[attr-defined]
    connection.close_if_health_check_failed()
    assert sent.take() == []
    assert connection.connection is driver
    assert connection.health_check_done is True  # type: ignore[attr-defined]


def test_a_connection_the_server_ended_is_replaced_at_the_next_request(other):
    """A server restarted or an administrator's pg_terminate_backend: the request after it
    opens a new connection and works, where it would have failed on the old one."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (before,) = cursor.fetchone()
    with other.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [before])
    _until_the_server_has_spoken()
    close_old_connections()  # what a request's start does (request_started)
    assert Group.objects.count() == 0
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (after,) = cursor.fetchone()
    assert after != before


def _until_the_server_has_spoken() -> None:
    import select

    poll = select.poll()
    poll.register(connection.connection.fileno(), select.POLLIN)
    deadline = time.monotonic() + 10
    while not poll.poll(50):
        assert time.monotonic() < deadline, "the server did not end the session"


# --- prepared reads ------------------------------------------------------------------------


def _seats_of() -> Compiled[Seat]:
    return Compiled(Seat, lambda game_id: Seat.objects.filter(game_id=game_id).order_by("position"))


def _games_locked() -> Compiled[Game]:
    return Compiled(Game, lambda game_id: Game.objects.select_for_update().filter(pk=game_id))


def prepared_on_server() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM pg_prepared_statements")
        return {name for (name,) in cursor.fetchall()}


@pytest.fixture
def new_session() -> None:
    """A new server session: nothing prepared on it yet."""
    connection.close()
    connection.ensure_connection()


def test_a_compiled_read_is_prepared_once_per_session_then_executed(new_session, sent):
    game = choice_game(3)
    seats = _seats_of()
    sent.take()
    sql = seats._plan(connections["default"], 1).sql
    statement = prepared(sql)
    queryset = Seat.objects.filter(game_id=game.pk).order_by("position")
    with CaptureQueriesContext(connection) as logged:
        first = seats.all(game.pk)
        again = seats.all(game.pk)
    assert sent.take() == [
        f"{statement.prepare};\n{statement.execute % game.pk}",
        statement.execute % game.pk,
    ]
    assert [seat.pk for seat in first] == [seat.pk for seat in again] == [s.pk for s in queryset]
    assert statement.name in prepared_on_server()
    # Django's query log shows the statement that ran, with its value, both times.
    assert [query["sql"] for query in logged] == [str(queryset.query)] * 2


def test_prepared_statements_are_named_by_their_sql():
    sql = 'SELECT "a" FROM "t" WHERE "b" = %s AND "c" LIKE \'x%%\' AND "d" IN (%s, %s)'
    statement = prepared(sql)
    assert statement.name.startswith("moderator_") and len(statement.name) == 34
    assert statement.prepare == (
        f"PREPARE {statement.name} AS "
        'SELECT "a" FROM "t" WHERE "b" = $1 AND "c" LIKE \'x%\' AND "d" IN ($2, $3)'
    )
    assert statement.execute == f"EXECUTE {statement.name}(%s, %s, %s)"
    assert prepared(sql) == statement and prepared(sql + " ").name != statement.name
    alone = prepared('SELECT "a" FROM "t"')
    assert alone.execute == f"EXECUTE {alone.name}"
    with pytest.raises(ValueError, match="named placeholders"):
        prepared("SELECT %(a)s")


def test_after_a_failed_query_the_session_s_statements_are_read_again(sent):
    """A PREPARE that ran before the statement that failed outlives the rollback: the
    next read asks the server what it has, and executes without preparing again."""
    game = choice_game(3)
    seats, locked = _seats_of(), _games_locked()
    seats_sql = prepared(seats._plan(connections["default"], 1).sql)
    locked_sql = prepared(locked._plan(connections["default"], 1).sql)
    sent.take()
    with pytest.raises(DataError), transaction.atomic():
        # The game's key as text that is no number: the second EXECUTE fails.
        read_together((seats, (game.pk,)), (locked, ("x",)))
    assert connection.connection.moderator_prepared is None
    assert {seats_sql.name, locked_sql.name} <= prepared_on_server()
    sent.take()
    with transaction.atomic():
        games, game_seats = read_together((locked, (game.pk,)), (seats, (game.pk,)))
    assert [g.pk for g in games] == [game.pk] and len(game_seats) == 3
    queries = sent.take()
    assert queries[0].startswith(
        "BEGIN;SELECT name, extract(epoch FROM statement_timestamp() - prepare_time)"
        " FROM pg_prepared_statements"
    )
    assert queries[1:] == [
        f"{locked_sql.execute % game.pk};\n{seats_sql.execute % game.pk}",
        "COMMIT",
    ]
    known = connection.connection.moderator_prepared
    assert known is not None and {seats_sql.name, locked_sql.name} <= set(known)


def test_a_statement_is_prepared_again_when_its_plan_is_old(new_session, sent, monkeypatch):
    """A plan kept for every value was made for the tables as they were then: after
    PREPARED_SECONDS the statement is deallocated and prepared again, in the same query."""
    game = choice_game(2)
    seats = _seats_of()
    statement = prepared(seats._plan(connections["default"], 1).sql)
    sent.take()
    assert len(seats.all(game.pk)) == 2
    monkeypatch.setattr("moderator.db.postgresql.base.PREPARED_SECONDS", 0.0)
    assert len(seats.all(game.pk)) == 2
    execute = statement.execute % game.pk
    assert sent.take() == [
        f"{statement.prepare};\n{execute}",
        f"DEALLOCATE {statement.name};\n{statement.prepare};\n{execute}",
    ]
    assert statement.name in prepared_on_server()


def test_a_session_that_lost_its_statements_fails_one_read_then_prepares_again():
    """A pooler's DISCARD ALL (docs/operations.md: prepared_statements off behind PgBouncer in
    transaction mode): the read that finds its statement gone fails, the next prepares it."""
    game = choice_game(2)
    seats = _seats_of()
    assert len(seats.all(game.pk)) == 2
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    with pytest.raises(ProgrammingError, match="does not exist"):
        seats.all(game.pk)
    assert len(seats.all(game.pk)) == 2


def test_prepared_statements_can_be_turned_off(sent, monkeypatch):
    game = choice_game(2)
    options = {**connection.settings_dict["OPTIONS"], "prepared_statements": False}
    engine: Any = type(connections["default"])
    wrapper = engine({**connection.settings_dict, "OPTIONS": options}, "default")
    assert wrapper.prepares_statements is False
    assert "prepared_statements" not in wrapper.get_connection_params()
    seats = _seats_of()
    sent.take()
    monkeypatch.setattr(connections["default"], "prepares_statements", False)
    assert len(seats.all(game.pk)) == 2
    (query,) = sent.take()
    assert query == seats._plan(connections["default"], 1).sql % game.pk


def test_a_read_can_be_kept_from_being_prepared(sent):
    """A read whose best plan changes as its tables grow between two of its runs (the
    orders of a step, games.postal._SEATS_ANSWERED) is planned each time it runs."""
    game = choice_game(2)
    seats = Compiled(
        Seat,
        lambda game_id: Seat.objects.filter(game_id=game_id).order_by("-position"),
        prepare=False,
    )
    sql = seats._plan(connections["default"], 1).sql
    sent.take()
    assert [seat.position for seat in seats.all(game.pk)] == [1, 0]
    assert [seat.position for seat in seats.all(game.pk)] == [1, 0]
    assert sent.take() == [sql % game.pk] * 2
    assert prepared(sql).name not in prepared_on_server()


def test_the_setting_turns_prepared_statements_off(monkeypatch):
    from moderator.settings import database_from_url

    url = "postgres://moderator:secret@db:5432/moderator"
    assert database_from_url(url)["OPTIONS"] == {"prepared_statements": True}
    monkeypatch.setenv("DB_PREPARED_STATEMENTS", "false")
    assert database_from_url(url)["OPTIONS"] == {"prepared_statements": False}
    monkeypatch.setenv("DB_PREPARED_STATEMENTS", "sometimes")
    with pytest.raises(ImproperlyConfigured, match="DB_PREPARED_STATEMENTS must be true or false"):
        database_from_url(url)
    monkeypatch.setenv("DB_PREPARED_STATEMENTS", "false")
    monkeypatch.setenv("DB_PREPARED_READS", "false")  # the name it had: refused, named
    with pytest.raises(ImproperlyConfigured, match="DB_PREPARED_READS is now DB_PREPARED_ST"):
        database_from_url(url)


# --- writes: one row prepared; the transaction's last writes with its COMMIT ------------


def _event(step: Any, text: str) -> tuple[Any, ...]:
    return (step.game_id, step.pk, text, None)


def events_seen_by(other: BaseDatabaseWrapper, text: str) -> int:
    with other.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM games_event WHERE text = %s", [text])
        return int(cursor.fetchone()[0])


def statement_kinds(query: str) -> list[str]:
    """The first word of each statement of a query (its BEGIN, if any, left out)."""
    return [part.split()[0] for part in query.removeprefix("BEGIN;").split(";\n")]


def test_the_transaction_s_last_writes_go_with_its_commit(step, order, new_session, sent, other):
    from games.models import Event, Order
    from moderator.db.rows import insert_models, insert_rows, together, update_fields

    step.status = "done"
    keys_seen_after_commit: list[Any] = []
    sent.take()
    with CaptureQueriesContext(connection) as logged, transaction.atomic():
        transaction.on_commit(lambda: keys_seen_after_commit.append(order.pk))
        locked = list(Game.objects.select_for_update().filter(pk=step.game_id))
        with together(commit=True):
            insert_models([order])
            insert_rows(Event, ["game", "step", "text", "audience"], [_event(step, "e")])
            update_fields(step, ["status"])
        # Held past the block, the transaction still open: the other connection sees
        # nothing yet, and the order has no key.
        assert order.pk is None
        assert events_seen_by(other, "e") == 0
    assert locked and order.pk is not None and keys_seen_after_commit == [order.pk]
    queries = sent.take()
    # The lock; then the three writes and the COMMIT, one query: each write of one row the
    # EXECUTE of a statement prepared in the same query (the first time on this session).
    assert len(queries) == 2 and queries[0].startswith("BEGIN;SELECT")
    parts = queries[1].split(";\n")
    assert statement_kinds(queries[1]) == [*["PREPARE", "EXECUTE"] * 3, "COMMIT"]
    assert parts[0].partition(" AS ")[2].startswith('INSERT INTO "games_order"')
    assert parts[4].partition(" AS ")[2].startswith('WITH updated AS (UPDATE "games_step"')
    # Django's log shows them as they ran (a BEGIN entry, as for any transaction).
    assert [q["sql"].split()[0] for q in logged] == ["BEGIN", "SELECT", "INSERT"]
    assert [part.split()[0] for part in logged[2]["sql"].split(";\n")] == [
        "INSERT",
        "INSERT",
        "WITH",
        "COMMIT",
    ]
    assert events_seen_by(other, "e") == 1
    assert Order.objects.get(pk=order.pk).canonical == "c"
    assert type(step).objects.get(pk=step.pk).status == "done"
    assert connection.connection.info.transaction_status == TransactionStatus.IDLE
    # The second time, on the same session, the statements are executed by name.
    sent.take()
    insert_rows(Event, ["game", "step", "text", "audience"], [_event(step, "again")])
    (again,) = sent.take()
    assert again.startswith("EXECUTE moderator_") and "'again'" in again


def test_a_statement_after_the_block_sends_the_held_writes_first(step, sent):
    from games.models import Event
    from moderator.db.rows import insert_rows, together

    before = Event.objects.count()
    sent.take()
    with transaction.atomic():
        with together(commit=True):
            insert_rows(Event, ["game", "step", "text", "audience"], [_event(step, "first")])
        assert Event.objects.count() == before + 1  # the writes went first: it sees them
    queries = sent.take()
    assert [statement_kinds(q)[-1] for q in queries] == ["EXECUTE", "SELECT", "COMMIT"]
    assert Event.objects.filter(text="first").count() == 1


def test_held_writes_are_dropped_when_the_transaction_rolls_back(step, sent):
    from games.models import Event
    from moderator.db.rows import insert_rows, together

    with pytest.raises(RuntimeError), transaction.atomic():
        with together(commit=True):
            insert_rows(Event, ["game", "step", "text", "audience"], [_event(step, "dropped")])
        raise RuntimeError("after the block")
    queries = sent.take()
    assert not any("dropped" in query for query in queries)
    # The next transaction carries nothing of it.
    with transaction.atomic(), together(commit=True):
        insert_rows(Event, ["game", "step", "text", "audience"], [_event(step, "kept")])
    assert list(Event.objects.filter(text__in=["dropped", "kept"]).values_list("text")) == [
        ("kept",)
    ]


def test_a_write_that_fails_with_the_commit_rolls_everything_back(step):
    """A row that is gone (update_fields' check, made by the server) and a key that no row
    has (a foreign key checked at COMMIT): the query stops at the error, its COMMIT never
    runs, the transaction rolls back; the connection goes on."""
    from games.models import Event, Step
    from moderator.db.rows import insert_rows, together, update_fields

    gone = Step.objects.get(pk=step.pk)
    gone.pk = step.pk + 1000
    refused = pytest.raises(DataError, match="did not affect any rows")
    with refused, transaction.atomic(), together(commit=True):
        insert_rows(Event, ["game", "step", "text", "audience"], [_event(step, "lost")])
        update_fields(gone, ["status"])
    no_such_step = pytest.raises(IntegrityError, match="games_event_step_id")
    with no_such_step, transaction.atomic(), together(commit=True):
        insert_rows(Event, ["game", "step", "text", "audience"], [_event(step, "lost")])
        insert_rows(
            Event, ["game", "step", "text", "audience"], [(step.game_id, gone.pk, "x", None)]
        )
    assert Event.objects.filter(text__in=["lost", "x"]).count() == 0
    assert connection.connection.info.transaction_status == TransactionStatus.IDLE
    insert_rows(Event, ["game", "step", "text", "audience"], [_event(step, "after")])
    assert Event.objects.filter(text="after").count() == 1


def test_inside_an_inner_atomic_block_the_writes_go_as_the_block_ends(step, sent):
    from games.models import Event
    from moderator.db.rows import insert_rows, together

    with transaction.atomic():
        with transaction.atomic(), together(commit=True):
            insert_rows(Event, ["game", "step", "text", "audience"], [_event(step, "inner")])
        savepoint, written, released = sent.take()
        assert statement_kinds(savepoint) == ["SAVEPOINT"]
        assert statement_kinds(written)[-1] == "EXECUTE" and "'inner'" in written
        assert released == "RELEASE SAVEPOINT " + savepoint.split()[-1]
    assert sent.take() == ["COMMIT"]
    assert Event.objects.filter(text="inner").count() == 1
