"""Database engine, and the one upsert the personal-data services share. SQLite runs in WAL
mode with foreign keys on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.pool import StaticPool
from sqlmodel import Session, SQLModel, create_engine


def make_engine(database_url: str) -> Engine:
    """Create the engine; for SQLite, make the folder and set the pragmas on every connection."""
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite":
        return create_engine(database_url, pool_pre_ping=True)

    in_memory = url.database in (None, "", ":memory:")
    if not in_memory:
        Path(str(url.database)).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        database_url,
        connect_args={"check_same_thread": False},
        # One shared connection is the only way an in-memory database survives between sessions.
        poolclass=StaticPool if in_memory else None,
    )

    @event.listens_for(engine, "connect")
    def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        if not in_memory:
            cursor.execute("PRAGMA journal_mode=WAL")
            # WAL makes NORMAL durable across application crashes; only power loss can undo
            # the last commits, which is the usual trade for web apps.
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=5000")
        cursor.close()

    return engine


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


def upsert(
    session: Session,
    model: type[SQLModel],
    keys: list[str],
    values: dict[str, Any],
    on_conflict: dict[str, Any],
) -> None:
    """Insert a row or, when its key exists, update it: one statement, safe under races."""
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    statement = dialect.insert(model).values(**values)
    session.execute(statement.on_conflict_do_update(index_elements=keys, set_=on_conflict))
