"""app/db.py on a real PostgreSQL server: the clock is the server's and moves within a
transaction; the start-up lock keeps a second process (another replica) waiting."""

from __future__ import annotations

import time
from datetime import UTC
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from app.db import STARTUP_LOCK_ID, DatabaseClock, database_now, startup_lock

pytest_plugins = ["tests.support.postgres"]


def test_database_now_is_the_time_of_the_call_not_of_the_transaction(
    postgres_engine: Engine,
) -> None:
    with postgres_engine.begin() as conn:
        first = database_now(conn)
        time.sleep(0.01)
        second = database_now(conn)
        started = conn.execute(select(func.now())).scalar_one()  # the transaction's start
    assert first.tzinfo == UTC and started <= first < second
    assert DatabaseClock(postgres_engine)() > second


def test_only_one_process_at_a_time_runs_start_up(postgres_engine: Engine, tmp_path: Path) -> None:
    def another_replica_may_start() -> bool:
        with postgres_engine.connect() as other:
            taken = other.execute(select(func.pg_try_advisory_lock(STARTUP_LOCK_ID))).scalar()
            if taken:
                other.execute(select(func.pg_advisory_unlock(STARTUP_LOCK_ID)))
            return bool(taken)

    with startup_lock(postgres_engine, tmp_path):
        assert not another_replica_may_start()
    assert another_replica_may_start()
