"""moderator.db.rows.insert_rows writes what bulk_create writes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import DatabaseError, connection, transaction
from django.db.models import F
from django.db.transaction import TransactionManagementError
from django.test.utils import CaptureQueriesContext

from games.models import DiceRoll, Event, Order, SeatLink
from moderator.db.rows import (
    insert_models,
    insert_rows,
    send_held,
    together,
    update_fields,
    update_where,
)

pytestmark = pytest.mark.django_db


def stored(table: str, ids: list[int]) -> list[dict]:
    """The rows as the database holds them (JSON as text, SQL NULL as None), by column."""
    with connection.cursor() as cursor:
        columns = [c.name for c in connection.introspection.get_table_description(cursor, table)]
        listed = [c for c in columns if c != "id"]
        cursor.execute(
            f"SELECT {', '.join(connection.ops.quote_name(c) for c in listed)} FROM {table} "
            f"WHERE id IN ({', '.join(['%s'] * len(ids))}) ORDER BY id",
            ids,
        )
        return [
            {c: str(v) if isinstance(v, dict | list) else v for c, v in zip(listed, r, strict=True)}
            for r in cursor
        ]


def written_both_ways(model, fields, rows, make):
    before = set(model.objects.values_list("id", flat=True))
    model.objects.bulk_create([make(*row) for row in rows])
    theirs = sorted(set(model.objects.values_list("id", flat=True)) - before)
    assert insert_rows(model, fields, rows) == len(rows)
    ours = sorted(set(model.objects.values_list("id", flat=True)) - before - set(theirs))
    return stored(model._meta.db_table, theirs), stored(model._meta.db_table, ours)


def test_events_with_and_without_an_audience_are_written_as_bulk_create_writes_them(step):
    rows = [(step.game_id, step.pk, "public", None), (step.game_id, step.pk, "for 0 and 2", [0, 2])]
    theirs, ours = written_both_ways(
        Event,
        ["game", "step", "text", "audience"],
        rows,
        lambda g, s, t, a: Event(game_id=g, step_id=s, text=t, audience=a),
    )
    assert ours == theirs
    assert [e.audience for e in Event.objects.filter(text__in=["public", "for 0 and 2"])] == [
        None,
        [0, 2],
        None,
        [0, 2],
    ]
    assert Event.objects.filter(text="public", audience__isnull=True).count() == 2


def test_dice_orders_and_links_are_written_as_bulk_create_writes_them(step, now):
    seat = step.game.seats.get(position=0)
    dice = [(step.game_id, step.pk, 1000 + n, 6, n + 1, "step 9") for n in range(6)]
    theirs, ours = written_both_ways(
        DiceRoll,
        ["game", "step", "index", "sides", "value", "label"],
        dice,
        lambda g, s, i, sides, v, label: DiceRoll(
            game_id=g, step_id=s, index=i + 100, sides=sides, value=v, label=label
        ),
    )
    assert [row | {"index": 0} for row in ours] == [row | {"index": 0} for row in theirs]
    assert [row["index"] for row in ours] == [1000 + n for n in range(6)]
    orders = [
        (step.pk, seat.pk, "", {"lines": [1, "x"]}, "1: x", "default", now, False, [], None),
        (step.pk, seat.pk, "W1", {"lines": [2]}, "1: W1", "web", now, True, ["did"], now),
    ]
    theirs, ours = written_both_ways(
        Order,
        [
            "step",
            "seat",
            "text",
            "parsed",
            "canonical",
            "source",
            "received_at",
            "receipt_due",
            "results",
            "receipt_at",
        ],
        orders,
        lambda st, se, t, p, c, so, r, due, res, at: Order(
            step_id=st,
            seat_id=se,
            text=t,
            parsed=p,
            canonical=c,
            source=so,
            received_at=r,
            receipt_due=due,
            results=res,
            receipt_at=at,
        ),
    )
    assert ours == theirs
    assert [(row["source"], row["receipt_due"]) for row in ours] == [
        ("default", False),
        ("web", True),
    ]
    links = [(seat.pk, "h" * 64, "play", 0, now, now + timedelta(days=3))]
    theirs, ours = written_both_ways(
        SeatLink,
        ["seat", "token_hash", "purpose", "link_version", "created_at", "expires_at"],
        links,
        lambda se, h, p, v, c, e: SeatLink(
            seat_id=se,
            token_hash=h[:-1] + "g",
            purpose=p,
            link_version=v,
            created_at=c,
            expires_at=e,
        ),
    )
    assert [row | {"token_hash": ""} for row in ours] == [
        row | {"token_hash": ""} for row in theirs
    ]
    assert [row["token_hash"] for row in ours] == ["h" * 64]


def test_every_field_must_be_given_and_no_row_writes_nothing(step):
    with pytest.raises(ValueError, match=r"insert_rows\(games.Event\) needs exactly .*'audience'"):
        insert_rows(Event, ["game", "step", "text"], [(step.game_id, step.pk, "x")])
    assert insert_rows(Event, ["game", "step", "text", "audience"], []) == 0
    assert not Event.objects.filter(text="x").exists()


def test_outbox_rows_are_written_as_bulk_create_writes_them_and_get_their_keys(step, now):
    from moderator.mail.models import OutboundEmail

    def rows(tag: str) -> list[OutboundEmail]:
        return [
            OutboundEmail(
                dedupe_key=f"{tag}:{n}",
                kind="report",
                game=step.game,
                to=f"p{n}@example.org",
                subject="Zoë's step ⚀",
                text="text\n",
                html="<p>html</p>",
                headers={"X-Game": str(step.game_id)},
                attachments=[{"filename": "a.ics", "content": "x", "mimetype": "text/calendar"}],
                state=OutboundEmail.State.PENDING,
            )
            for n in range(3)
        ]

    theirs, ours = rows("bulk"), rows("ours")
    OutboundEmail.objects.bulk_create(theirs)
    insert_models(ours)
    assert [row.pk for row in ours] == sorted(row.pk for row in ours)
    assert all(not row._state.adding and row._state.db == "default" for row in ours)
    got = {row.pk: row for row in OutboundEmail.objects.filter(pk__in=[r.pk for r in ours])}
    assert [got[row.pk].dedupe_key for row in ours] == ["ours:0", "ours:1", "ours:2"]
    table = OutboundEmail._meta.db_table
    mine = stored(table, [row.pk for row in ours])
    bulk = stored(table, [row.pk for row in theirs])
    assert all(row["created_at"] is not None for row in mine)
    skip = {"dedupe_key": "", "created_at": None}
    assert [row | skip for row in mine] == [row | skip for row in bulk]
    insert_models([])  # nothing to write: no statement


def test_update_fields_writes_what_save_with_update_fields_writes(step, now):
    theirs, ours = step, type(step).objects.get(pk=step.pk)
    for obj in (theirs, ours):
        obj.status = "done"
        obj.closed_at = now + timedelta(hours=1)
        obj.prompts = [{"seat": 1, "kind": "order"}]
        obj.last_error = "not written"
    theirs.save(update_fields=["status", "closed_at", "prompts"])
    written = stored("games_step", [step.pk])
    type(step).objects.filter(pk=step.pk).update(status="open", closed_at=None, prompts=[])
    update_fields(ours, ["status", "closed_at", "prompts"])
    assert stored("games_step", [step.pk]) == written
    assert written[0]["status"] == "done" and written[0]["last_error"] == ""


def test_update_fields_refuses_what_save_refuses(step):
    gone = type(step).objects.get(pk=step.pk)
    type(step).objects.filter(pk=step.pk).delete()
    with pytest.raises(DatabaseError, match="did not affect any rows"):
        update_fields(gone, ["status"])
    with pytest.raises(ValueError, match="concrete fields but the key"):
        update_fields(gone, ["id"])
    with pytest.raises(ValueError, match="concrete fields but the key"):
        update_fields(gone, [])


@pytest.mark.postgres
def test_writes_made_together_go_in_one_round_trip_and_get_their_keys(step, order):
    before = Event.objects.count()
    step.status = "done"
    with CaptureQueriesContext(connection) as queries, transaction.atomic(), together():
        insert_models([order])
        insert_rows(
            Event, ["game", "step", "text", "audience"], [(step.game_id, step.pk, "e", None)]
        )
        update_fields(step, ["status"])
        assert len(queries) == 1  # the SAVEPOINT of the atomic block, nothing else yet
        assert order.pk is None
    assert [" ".join(s.split()[0] for s in q["sql"].split(";\n")) for q in queries] == [
        "SAVEPOINT",
        "INSERT INSERT WITH",  # update_fields checks its row count in the statement
        "RELEASE",
    ]
    assert order.pk is not None and not order._state.adding
    assert Order.objects.get(pk=order.pk).canonical == "c"
    assert Event.objects.count() == before + 1
    assert type(step).objects.get(pk=step.pk).status == "done"


@pytest.mark.postgres
def test_a_read_inside_the_block_sees_what_was_written_before_it(step):
    before = Event.objects.count()
    rows = [(step.game_id, step.pk, "one", None), (step.game_id, step.pk, "two", [1])]
    with transaction.atomic(), together():
        insert_rows(Event, ["game", "step", "text", "audience"], rows)
        assert Event.objects.count() == before + 2
        insert_rows(Event, ["game", "step", "text", "audience"], rows[:1])
        send_held()
        with connection.cursor() as cursor:  # past Django's cursor: it was sent
            raw = cursor.cursor.connection.execute("SELECT count(*) FROM games_event")
            assert raw.fetchone() == (before + 3,)
        assert Event.objects.count() == before + 3


@pytest.mark.postgres
def test_held_writes_are_checked_when_sent_and_dropped_on_an_exception(step):
    gone = type(step).objects.get(pk=step.pk)
    failing = pytest.raises(DatabaseError, match="did not affect any rows")
    with failing, transaction.atomic(), together():
        type(step).objects.filter(pk=step.pk).delete()
        update_fields(gone, ["status"])
    assert type(step).objects.filter(pk=step.pk).exists()  # rolled back
    before = Event.objects.count()
    with pytest.raises(RuntimeError), transaction.atomic(), together():
        insert_rows(
            Event, ["game", "step", "text", "audience"], [(step.game_id, step.pk, "x", None)]
        )
        raise RuntimeError("the block fails")
    assert Event.objects.count() == before


@pytest.mark.django_db(transaction=True)
def test_together_is_for_a_transaction(step):
    with pytest.raises(TransactionManagementError, match=r"inside transaction\.atomic"), together():
        pass


@pytest.mark.postgres
def test_a_long_insert_is_parsed_once_by_the_driver(step):
    """moderator.db.postgresql keeps psycopg's parse of long queries (a step's writes sent
    together are one query of about 400 parameters); a psycopg that no longer has the
    cache this relies on fails here."""
    from psycopg import _queries

    rows = [(step.game_id, step.pk, f"event {n}", None) for n in range(100)]
    insert_rows(Event, ["game", "step", "text", "audience"], rows)
    before = _queries._query2pg_client.cache_info()
    insert_rows(Event, ["game", "step", "text", "audience"], rows)
    after = _queries._query2pg_client.cache_info()
    assert (after.hits - before.hits, after.misses - before.misses) == (1, 0)


def test_update_where_updates_what_the_queryset_would_and_is_held_with_the_writes(step):
    game = step.game
    seats = game.seats.order_by("position")
    with CaptureQueriesContext(connection) as queries, transaction.atomic(), together():
        update_where(game.seats.filter(position__in=[0, 2]), nmr_count=F("nmr_count") + 1)
        update_where(game.seats.filter(position=2), nmr_count=F("nmr_count") + 1)
    assert [seat.nmr_count for seat in seats] == [1, 0, 2]
    if connection.vendor == "postgresql":
        assert [q["sql"].split()[0] for q in queries] == ["SAVEPOINT", "UPDATE", "RELEASE"]
        assert queries[1]["sql"].count("UPDATE") == 2
