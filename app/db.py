"""Database engine. SQLite runs in WAL mode with foreign keys on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.pool import StaticPool
from sqlmodel import Session, create_engine


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


def dialect_of(session: Session) -> Any:
    """SQLAlchemy's dialect module for the session's database (its own INSERT ... ON
    CONFLICT lives there)."""
    return postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
