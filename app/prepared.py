"""A hot SELECT compiled once per database and run on the driver's own cursor.

Core's execution of an already compiled statement still builds an execution context,
processes every bind parameter through it and wraps every row: for the item page's
reader standing (one UNION ALL, 23 parameters) that was about 130 us around a 30 us
query, on every signed-in page. `exec_driver_sql` still built a result around the cursor
(its column metadata, one entry per column): 34 us for the two-column token look-up whose
query takes 7. A `Prepared` statement keeps its SQL text, its parameter order and
SQLAlchemy's own bind and result processors per dialect, and runs on the DBAPI cursor of
the connection's pooled connection, as the connection's own statements do:
- in the connection's transaction (begun as SQLAlchemy's autobegin would begin it), so a
  `rollback()` after it ends the read as it ends any other;
- with the engine's `before_cursor_execute` and `after_cursor_execute` listeners called (the
  write lock of app/db.py, statement counts in tests), without an execution context;
- with the driver's errors raised as SQLAlchemy's (an `OperationalError` for a locked
  SQLite database, which app/web/errors.py answers with 503), and a lost connection
  invalidated.
Values go in and come out exactly as through Core.

Only for statements read on every request; everything else goes through Core."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Connection,
    Dialect,
    Float,
    Integer,
    TypeDecorator,
    cast,
    literal_column,
    null,
)
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.selectable import SelectBase

Processor = Callable[[Any], Any] | None


@dataclass(frozen=True)
class _Compiled:
    sql: str
    positions: tuple[str, ...] | None  # names in placeholder order; None: named placeholders
    defaults: dict[str, Any]  # the statement's own literal values (a LIMIT's, say)
    binds: Mapping[str, Processor]
    results: tuple[Processor, ...]


class DriverFloat(TypeDecorator[float]):
    """A float column for a Prepared statement: read as the driver gives it (SQLite's REAL
    and psycopg's double are Python floats already). PostgreSQL's own float type picks its
    result handling from the cursor's column type, which a Prepared statement, compiled
    before any cursor, does not have."""

    impl = Float
    cache_ok = True

    def result_processor(self, dialect: Any, coltype: Any) -> None:
        return None


def part_row(part: int, shape: Sequence[tuple[str, Any]], **given: Any) -> list[Any]:
    """One part of a UNION ALL whose rows share one shape (a page's standing, read in one
    statement): the part's number, then each column of `shape` (name, type) as `given` fills
    it, or a NULL of its type. The first part's casts type the union's columns."""
    return [
        literal_column(str(part), Integer).label("part"),
        *(
            (given[name] if name in given else cast(null(), kind)).label(name)
            for name, kind in shape
        ),
    ]


class Prepared:
    """`statement` (a Core SELECT or UNION), compiled on first use on each dialect."""

    def __init__(self, statement: SelectBase) -> None:
        self.statement = statement
        self._compiled: dict[str, _Compiled] = {}

    def rows(self, connection: Connection, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """The statement's rows for `params` (every bind parameter it names)."""
        dialect = connection.dialect
        compiled = self._compiled.get(dialect.name) or self._compile(dialect)
        given = {**compiled.defaults, **params}
        missing = set(compiled.binds) - set(given)
        if missing:
            raise KeyError(f"no value for the statement's parameters {sorted(missing)}")
        values = {
            name: (process(given[name]) if process else given[name])
            for name, process in compiled.binds.items()
        }
        bound: Sequence[Any] | dict[str, Any] = (
            values if compiled.positions is None else tuple(values[n] for n in compiled.positions)
        )
        fetched = _fetch_all(connection, compiled.sql, bound)
        processors = compiled.results
        if not any(processors):
            return fetched
        return [
            tuple(
                process(value) if process else value
                for process, value in zip(processors, row, strict=True)
            )
            for row in fetched
        ]

    def _compile(self, dialect: Dialect) -> _Compiled:
        compiled = self.statement.compile(dialect=dialect)
        positions = tuple(compiled.positiontup) if compiled.positiontup is not None else None
        binds = {
            name: bind.type._cached_bind_processor(dialect) for name, bind in compiled.binds.items()
        }
        results = tuple(
            _result_processor(column, dialect) for column in self.statement.selected_columns
        )
        defaults = {
            name: bind.effective_value for name, bind in compiled.binds.items() if not bind.required
        }
        made = _Compiled(str(compiled), positions, defaults, binds, results)
        self._compiled[dialect.name] = made
        return made


def _result_processor(column: Any, dialect: Dialect) -> Processor:
    """The column's result handling, which must not depend on the cursor's column type (a
    Prepared statement has none when it is compiled): said by name where it does."""
    try:
        return column.type._cached_result_processor(dialect, None)  # type: ignore[no-any-return]
    except Exception as exc:
        raise TypeError(
            f"column {column.name!r} ({column.type!r}) needs the cursor's column type to read "
            f"its values on {dialect.name}: give it a type that does not (DriverFloat for a "
            f"float)"
        ) from exc


def _fetch_all(
    connection: Connection, sql: str, bound: Sequence[Any] | dict[str, Any]
) -> list[tuple[Any, ...]]:
    """`sql`'s rows, run on `connection`'s DBAPI cursor (see the module's docstring)."""
    if not connection.in_transaction():
        connection.begin()
    dbapi_connection = connection.connection
    cursor = dbapi_connection.cursor()
    dispatch = connection.dispatch
    try:
        dispatch.before_cursor_execute(connection, cursor, sql, bound, None, False)
        cursor.execute(sql, bound)
        rows = [tuple(row) for row in cursor.fetchall()]
        dispatch.after_cursor_execute(connection, cursor, sql, bound, None, False)
        return rows
    except connection.dialect.loaded_dbapi.Error as error:
        dialect = connection.dialect
        lost = dialect.is_disconnect(error, dbapi_connection, cursor)
        if lost:
            connection.invalidate(error)
        raise DBAPIError.instance(
            sql,
            bound,
            error,
            dialect.loaded_dbapi.Error,
            connection_invalidated=lost,
            dialect=dialect,
        ) from error
    finally:
        cursor.close()
