"""Reads whose SQL the ORM writes once.

A read through a queryset builds its Query, compiles it to SQL and turns the rows into
model instances, every time; for the reads an order post and a step's resolution make
(the game locked with its seat, the open step) compiling was about a third of the
statement's cost in the web process, more than PostgreSQL's own work on it
(bench/changes.md).

``Compiled(model, build)`` takes a function of plain values that returns a queryset. The
first call on a connection calls it with marker values in place of the real ones, compiles
the queryset and notes which parameter of the SQL each marker became; every later call runs
that SQL with the real values in their place and builds the instances as the queryset would
have (select_related objects and annotations included, deferred fields deferred). The SQL is
the ORM's own, so it follows the models. ``build`` must use each value once, as a parameter
of the SQL (a filter's value, an ``__in`` list's members), and must not branch on the
values: a call with a different number of values (an ``__in`` list of another length)
compiles again, and an empty one is no query at all (Django writes none): the caller knows
the answer. Values are passed as they are; the build's lookups would have converted them (a
``pk`` given as a string, say), so callers pass them as the columns hold them.

Where the engine prepares reads (moderator.db.postgresql), the SQL is prepared on the
server session and run by name; ``prepare=False`` keeps a read from it, for one whose best
plan changes as its tables grow between two of its runs.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from django.core.exceptions import EmptyResultSet
from django.db import connections, router
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Model, QuerySet
from django.db.models.query import get_related_populators
from django.db.models.sql.compiler import SQLCompiler
from django.db.transaction import TransactionManagementError

M = TypeVar("M", bound=Model)

# Each call's i-th value is _MARK + i while the SQL is written: values every integer
# column takes (Django turns a lookup with a value out of its field's range into no
# query at all), and unlikely as a constant of a query; a constant that is one of them
# shows as a value used twice, which is refused.
_MARK = 32_001


@dataclass
class _Plan:
    compiler: SQLCompiler
    sql: str
    # For each parameter of the SQL: the index of the value that goes there, or None for a
    # constant of the query, which is then in ``constants`` at the same place.
    slots: list[int | None]
    constants: list[Any]
    model: type[Model]
    fields: slice
    names: list[str]
    locks: bool
    # What results_iter and ModelIterable work out for every read, worked out once.
    converters: list[Any]
    populators: list[Any]


class Compiled(Generic[M]):
    """A read written by ``build`` (a function of plain values returning a queryset of
    ``M``), compiled once per database connection and number of values."""

    def __init__(
        self, model: type[M], build: Callable[..., QuerySet[M]], *, prepare: bool = True
    ) -> None:
        self.model = model
        self.build = build
        # Whether the read may be prepared on the server (where the engine prepares reads):
        # not one whose best plan changes as the tables grow between two of its runs.
        self.prepare = prepare
        self._plans: weakref.WeakKeyDictionary[BaseDatabaseWrapper, dict[int, _Plan]] = (
            weakref.WeakKeyDictionary()
        )

    def all(self, *values: Any) -> list[M]:
        """The instances the queryset ``build(*values)`` yields, in its order."""
        return read_together((self, values))[0]

    def get(self, *values: Any) -> M:
        """The one instance ``build(*values)`` yields: the model's DoesNotExist if none,
        MultipleObjectsReturned if more than one, as ``QuerySet.get``."""
        return self.one(self.all(*values))

    def one(self, found: list[M]) -> M:
        """``found`` (what this read returned) as ``get`` answers it."""
        model = self.model
        if not found:
            name = model._meta.object_name
            raise model.DoesNotExist(f"{name} matching query does not exist.")  # type: ignore[attr-defined]
        if len(found) > 1:
            raise model.MultipleObjectsReturned(  # type: ignore[attr-defined]
                f"get() returned more than one {model._meta.object_name} -- "
                f"it returned {len(found)}!"
            )
        return found[0]

    def _params(self, plan: _Plan, values: tuple[Any, ...]) -> list[Any]:
        return [
            constant if slot is None else values[slot]
            for slot, constant in zip(plan.slots, plan.constants, strict=True)
        ]

    # --- compiling ------------------------------------------------------------------------

    def _plan(self, connection: BaseDatabaseWrapper, arity: int) -> _Plan:
        plans = self._plans.setdefault(connection, {})
        plan = plans.get(arity)
        if plan is None:
            plan = plans[arity] = self._compile(connection, arity)
        return plan

    def _compile(self, connection: BaseDatabaseWrapper, arity: int) -> _Plan:
        markers = [_MARK + index for index in range(arity)]
        queryset = self.build(*markers)
        if queryset.model is not self.model:
            raise ValueError(f"{self.build.__qualname__} reads {queryset.model}, not {self.model}")
        query = queryset.query
        if query.extra or queryset._prefetch_related_lookups:  # type: ignore[attr-defined]
            raise ValueError("compiled reads take no extra() and no prefetches")
        compiler = query.get_compiler(connection=connection)
        # as_sql refuses select_for_update outside a transaction; the SQL is the same.
        autocommit = connection.get_autocommit()
        if query.select_for_update and autocommit:
            connection.set_autocommit(False)
        try:
            sql, params = compiler.as_sql()
        except EmptyResultSet:
            name = self.build.__qualname__
            raise ValueError(f"{name}: a value the columns cannot hold") from None
        finally:
            if query.select_for_update and autocommit:
                connection.set_autocommit(True)
        slots: list[int | None] = []
        constants: list[Any] = []
        for param in params:
            index = param - _MARK if isinstance(param, int) and not isinstance(param, bool) else -1
            if 0 <= index < arity:
                slots.append(index)
                constants.append(None)
            else:
                slots.append(None)
                constants.append(param)
        used = sorted(slot for slot in slots if slot is not None)
        if used != list(range(arity)):
            raise ValueError(
                f"{self.build.__qualname__}: each value must become one parameter of the SQL"
            )
        klass_info = compiler.klass_info
        assert klass_info is not None
        selected = [column[0] for column in compiler.select[: compiler.col_count]]
        if compiler.has_composite_fields(selected):
            raise ValueError("compiled reads take no composite fields")
        select_fields = klass_info["select_fields"]
        fields = slice(select_fields[0], select_fields[-1] + 1)
        names = [column[0].target.attname for column in compiler.select[fields]]
        return _Plan(
            compiler=compiler,
            sql=sql,
            slots=slots,
            constants=constants,
            model=klass_info["model"],
            fields=fields,
            names=names,
            locks=bool(query.select_for_update),
            converters=compiler.get_converters(selected),
            # (django-stubs describe a later Django's signature.)
            populators=get_related_populators(  # type: ignore[call-arg]
                compiler.klass_info, compiler.select, connection.alias
            ),
        )

    # --- building instances -----------------------------------------------------------------

    def _instances(self, plan: _Plan, alias: str, rows: list[tuple[Any, ...]]) -> list[M]:
        if not rows:
            return []
        compiler = plan.compiler
        converted: Any = rows
        if plan.converters:
            converted = compiler.apply_converters(rows, plan.converters)  # type: ignore[arg-type]
        annotations = compiler.annotation_col_map.items()
        made: list[M] = []
        for row in converted:
            instance = plan.model.from_db(alias, plan.names, row[plan.fields])
            for populator in plan.populators:
                populator.populate(row, instance)
            for name, position in annotations:
                setattr(instance, name, row[position])
            made.append(instance)  # type: ignore[arg-type]
        return made


def read_together(*reads: tuple[Compiled[Any], tuple[Any, ...]]) -> list[list[Any]]:
    """Run several compiled reads (each with its values) in one round trip where the
    driver takes several statements in one query (PostgreSQL with Django's client-side
    binding), else one after another; returns each one's instances. They run in order,
    each with its own snapshot (READ COMMITTED): a read after one that waited for a lock
    sees what the lock's last holder committed, as it would in a round trip of its own."""
    from moderator.db.rows import execute_prepared  # (imports nothing here)

    connection = connections[router.db_for_read(reads[0][0].model)]
    plans = [compiled._plan(connection, len(values)) for compiled, values in reads]
    if any(plan.locks for plan in plans) and connection.get_autocommit():
        raise TransactionManagementError(
            "select_for_update cannot be used outside of a transaction."
        )
    params = [
        compiled._params(plan, values)
        for (compiled, values), plan in zip(reads, plans, strict=True)
    ]
    # Prepared by name on the server session where the engine prepares statements
    # (moderator.db.postgresql), unless the read says not to (Compiled(prepare=False)).
    results = execute_prepared(
        connection,
        [
            (plan.sql, part, True, compiled.prepare)
            for (compiled, _), plan, part in zip(reads, plans, params, strict=True)
        ],
    )
    return [
        compiled._instances(plan, connection.alias, rows)
        for (compiled, _), plan, (rows, _) in zip(reads, plans, results, strict=True)
    ]
