"""A Prepared statement gives the rows Core gives, value for value and type for type: times
(SQLite keeps them as text), flags (SQLite keeps them as integers), a literal of the
statement's own (a LIMIT), a parameter named twice; and it refuses a missing parameter. It
runs on the driver's cursor, yet as one of the connection's statements: in its transaction,
seen by the engine's listeners, its errors raised as Core raises them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import (
    Boolean,
    Column,
    Integer,
    MetaData,
    Table,
    TypeDecorator,
    bindparam,
    cast,
    event,
    literal,
    or_,
    union_all,
)
from sqlalchemy import select as core_select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.selectable import CompoundSelect
from sqlmodel import Session, col

from app.models import ApiToken, User
from app.prepared import DriverFloat, Prepared


def _two_users(engine: Engine) -> datetime:
    expires = datetime(2031, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)
    with Session(engine) as session:
        for name in ("ada", "grace"):
            user = User(username=name, password_hash="x")
            session.add(user)
            session.flush()
            assert user.id is not None
            digest = name.ljust(64, "0")
            session.add(ApiToken(token_sha256=digest, user_id=user.id, expires_at=expires))
        session.commit()
    return expires


def _statement() -> CompoundSelect[Any]:
    tokens = (
        core_select(
            col(User.username),
            col(ApiToken.expires_at),
            cast(col(ApiToken.expires_at) > bindparam("now"), Boolean).label("live"),
        )
        .join(ApiToken, col(ApiToken.user_id) == col(User.id))
        .where(or_(col(User.username) == bindparam("name"), col(User.username) == "grace"))
        .order_by(col(User.username))
        .limit(5)
    )
    again = core_select(literal("x"), col(ApiToken.expires_at), literal(False)).where(
        col(ApiToken.expires_at) < bindparam("now")
    )
    return union_all(tokens.subquery().select(), again)


def test_rows_are_the_rows_core_gives(engine: Engine) -> None:
    expires = _two_users(engine)
    statement = _statement()
    prepared = Prepared(statement)
    params = {"name": "ada", "now": expires - timedelta(days=1)}
    with engine.connect() as connection:
        core = [tuple(row) for row in connection.execute(statement, params)]
        found = prepared.rows(connection, params)
        again = prepared.rows(connection, {**params, "now": expires + timedelta(days=1)})
    assert sorted(found) == sorted(core)
    assert sorted(found) == [("ada", expires, True), ("grace", expires, True)]
    assert [type(value) for value in found[0]] == [str, datetime, bool]
    assert found[0][1].tzinfo is not None
    # The same compiled statement, other values: both tokens have expired by then, and the
    # second part's rows come too.
    assert sorted(again) == [
        ("ada", expires, False),
        ("grace", expires, False),
        ("x", expires, False),
        ("x", expires, False),
    ]


def test_a_missing_parameter_is_refused_by_name(engine: Engine) -> None:
    with engine.connect() as connection, pytest.raises(KeyError, match="name"):
        Prepared(_statement()).rows(connection, {"now": datetime.now(UTC)})


def test_it_runs_in_the_connections_transaction_seen_by_the_engines_listeners(
    engine: Engine,
) -> None:
    _two_users(engine)
    seen: list[tuple[str, str]] = []

    def before(_c: object, _cursor: object, statement: str, *_: object) -> None:
        seen.append(("before", statement))

    def after(_c: object, _cursor: object, statement: str, *_: object) -> None:
        seen.append(("after", statement))

    event.listen(engine, "before_cursor_execute", before)
    event.listen(engine, "after_cursor_execute", after)
    try:
        with engine.connect() as connection:
            rows = Prepared(_statement()).rows(
                connection, {"name": "ada", "now": datetime.now(UTC)}
            )
            assert len(rows) == 2
            assert connection.in_transaction()  # begun as Core's first statement begins it
            connection.rollback()
            assert not connection.in_transaction()
    finally:
        event.remove(engine, "before_cursor_execute", before)
        event.remove(engine, "after_cursor_execute", after)
    assert [kind for kind, _ in seen] == ["before", "after"]
    assert "UNION ALL" in seen[0][1].upper()


def test_a_driver_error_is_raised_as_core_raises_it(engine: Engine) -> None:
    nowhere = Table("nowhere_to_be_found", MetaData(), Column("x", Integer))
    statement = core_select(nowhere.c.x).where(nowhere.c.x == bindparam("x"))
    with engine.connect() as connection:
        with pytest.raises(DBAPIError) as through_core:
            connection.execute(statement, {"x": 1})
        connection.rollback()
        with pytest.raises(DBAPIError) as prepared:
            Prepared(statement).rows(connection, {"x": 1})
    assert type(prepared.value) is type(through_core.value)  # OperationalError on SQLite
    assert type(prepared.value.orig) is type(through_core.value.orig)
    assert "nowhere_to_be_found" in str(prepared.value)


def test_a_float_reads_as_a_float_on_either_engine(engine: Engine) -> None:
    statement = Prepared(core_select(cast(bindparam("x"), DriverFloat).label("x")))
    with engine.connect() as connection:
        assert statement.rows(connection, {"x": 87.5}) == [(87.5,)]


class _NeedsTheCursor(TypeDecorator[int]):
    impl = Integer
    cache_ok = True

    def result_processor(self, dialect: Any, coltype: Any) -> Any:
        if coltype is None:
            raise ValueError("no column type")
        return None


def test_a_type_that_needs_the_cursors_column_type_is_named(engine: Engine) -> None:
    statement = Prepared(core_select(cast(literal(1), _NeedsTheCursor).label("picky")))
    with engine.connect() as connection, pytest.raises(TypeError, match=r"'picky'.*DriverFloat"):
        statement.rows(connection, {})
