"""Database engine and clock. SQLite runs in WAL mode with foreign keys on.

Database work never runs on the event loop (docs/architecture.md): handlers and
dependencies that query are plain `def`, which FastAPI runs in its thread pool, and async
code hands its database work to a thread. The pool is sized for that thread pool, and a
request that cannot get a connection soon is answered 503 rather than kept waiting."""

from __future__ import annotations

import asyncio
import fcntl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import event, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.pool import StaticPool
from sqlmodel import Session, create_engine

# The handlers' thread pool (anyio's default limiter, which FastAPI uses; set at start-up):
# 4 rather than anyio's 40, since on a core or two more threads only fight over the GIL,
# and the event loop (health checks, streams) waits behind them. During 500 mixed requests
# at once (bench/responsive.py, 2 cores, five runs each side by side), GET /api/health's p99
# had a median of 148 ms with 16 threads and 99 ms with 4; the signed-in item page served
# as many requests a second under 32 clients (394-429 with 16, 402-589 with 4).
HANDLER_THREADS = 4
# How long a thread may hold the GIL while another waits for it (CPython's default: 5 ms),
# for the server processes (app/asgi.py). The event loop gives the GIL up at every wait on
# the network and the handler threads take it; each time the loop wants it back it waits up
# to this long, so a health check needing a dozen turns of the loop waited a dozen of these
# behind pages being rendered.
GIL_SWITCH_SECONDS = 0.001
# Those threads and asyncio's default executor (what async code hands its queries to) have a
# connection each at hand, so no thread waits for one. One that waits longer than
# POOL_TIMEOUT_SECONDS gives up, and the request is answered 503 with Retry-After
# (app/web/errors.py).
POOL_SIZE = 10
POOL_OVERFLOW = 40
POOL_TIMEOUT_SECONDS = 3.0
POOL = {"pool_size": POOL_SIZE, "max_overflow": POOL_OVERFLOW, "pool_timeout": POOL_TIMEOUT_SECONDS}


def make_engine(database_url: str) -> Engine:
    """Create the engine; for SQLite, make the folder and set the pragmas on every connection."""
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite":
        return create_engine(database_url, pool_pre_ping=True, **POOL)

    in_memory = url.database in (None, "", ":memory:")
    if not in_memory:
        Path(str(url.database)).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        database_url,
        connect_args={"check_same_thread": False},
        # One shared connection is the only way an in-memory database survives between sessions.
        **({"poolclass": StaticPool} if in_memory else POOL),
    )

    if not in_memory:
        _serialise_writes(engine)

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


# SQLite lets one connection write at a time; the others wait in its busy handler, which
# sleeps 1, 2, 5 ... 100 ms between tries. With many handler threads writing at once (every
# signed-in page records a visit) those sleeps, not the work, set the pace: 330 pages/s with
# the CPU half idle. Writers of this process therefore queue on a lock of ours, handed on
# the moment the writer before commits; SQLite's own lock still guards other processes.
WRITE_LOCK_WAIT_SECONDS = 5.0  # as SQLite's busy timeout; then it is SQLite's turn to wait
_HOLDS_WRITE_LOCK = "backprop_holds_write_lock"
_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE", "BEGIN IMMEDIATE", "BEGIN EXCLUSIVE")


def _serialise_writes(engine: Engine) -> None:
    """Take this engine's write lock at a transaction's first write; give it back when the
    transaction ends, however it ends (commit, rollback, or the pool's reset on return)."""
    lock = threading.Lock()

    @event.listens_for(engine, "before_cursor_execute")
    def _take(connection: Connection, _c: Any, statement: str, *_: Any) -> None:
        if connection.info.get(_HOLDS_WRITE_LOCK) or not statement.lstrip().upper().startswith(
            _WRITES
        ):
            return
        connection.info[_HOLDS_WRITE_LOCK] = lock.acquire(timeout=WRITE_LOCK_WAIT_SECONDS)

    def _give(info: dict[Any, Any]) -> None:
        if info.pop(_HOLDS_WRITE_LOCK, False):
            lock.release()

    @event.listens_for(engine, "commit")
    def _committed(connection: Connection) -> None:
        _give(connection.info)

    @event.listens_for(engine, "rollback")
    def _rolled_back(connection: Connection) -> None:
        _give(connection.info)

    @event.listens_for(engine.pool, "reset")
    def _reset(dbapi_connection: Any, connection_record: Any, reset_state: Any) -> None:
        _give(connection_record.info)

    @event.listens_for(engine.pool, "close")
    def _closed(dbapi_connection: Any, connection_record: Any) -> None:
        _give(connection_record.info)


async def close_off_loop(session: Session) -> None:
    """End `session` from async code: at once when it has nothing begun (no I/O), else in a
    worker thread, where its rollback and the connection's return to the pool happen."""
    if session.in_transaction():
        await asyncio.to_thread(session.close)
    else:
        session.close()


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


def dialect_of(session: Session | Connection) -> Any:
    """SQLAlchemy's dialect module for the session's (or connection's) database (its own
    INSERT ... ON CONFLICT lives there)."""
    bind = session.get_bind() if isinstance(session, Session) else session
    return postgresql if bind.dialect.name == "postgresql" else sqlite


def database_now(connection: Connection) -> datetime:
    """Now, in UTC, by the database server's clock: what every web replica agrees on
    (quiz deadlines, rate-limit windows), however wrong its own clock is. PostgreSQL's
    clock_timestamp() is the time of the call (now() is the transaction's start); SQLite
    lives in this process, so the process's clock is the database's."""
    if connection.dialect.name != "postgresql":
        return _python_now()
    moment: datetime = connection.execute(select(func.clock_timestamp())).scalar_one()
    return moment.astimezone(UTC)


def _python_now() -> datetime:
    # Looked up when called, so a test can put a skewed clock here.
    return datetime.now(UTC)


class DatabaseClock:
    """The app's clock: database_now on a connection of its own."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.in_process = engine.dialect.name != "postgresql"

    def __call__(self) -> datetime:
        if self.in_process:
            return _python_now()
        with self.engine.connect() as connection:
            return database_now(connection)


# pg_advisory_lock's key for start-up (migrations, the content import): any fixed number
# the app uses for nothing else; this one spells "bprpstrt" in ASCII.
STARTUP_LOCK_ID = 0x6270727073747274


@contextmanager
def startup_lock(engine: Engine, data_dir: Path) -> Iterator[None]:
    """One process at a time runs the block among all that share the database: on
    PostgreSQL an advisory lock on the server (replicas on other hosts wait too), on SQLite
    an exclusive lock on DATA_DIR/.startup.lock (the database is a file on this host)."""
    if engine.dialect.name == "postgresql":
        with engine.connect() as connection:
            connection.execute(select(func.pg_advisory_lock(STARTUP_LOCK_ID)))
            try:
                yield
            finally:
                connection.execute(select(func.pg_advisory_unlock(STARTUP_LOCK_ID)))
                connection.commit()
        return
    data_dir.mkdir(parents=True, exist_ok=True)
    with open(data_dir / ".startup.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
