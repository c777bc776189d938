"""SQLite writers of one process queue on the engine's write lock (app/db.py): handed on
at once when the writer before ends, however it ends, never left taken."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from sqlalchemy import text

from app.db import make_engine


def _engine(tmp_path: Path):  # type: ignore[no-untyped-def]
    engine = make_engine(f"sqlite:///{tmp_path / 'w.db'}")
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE t (n INTEGER)"))
    return engine


def test_a_second_writer_waits_for_the_first_and_then_writes(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    first_inserted = threading.Event()
    finished: list[float] = []

    def first() -> None:
        with engine.begin() as connection:
            connection.execute(text("INSERT INTO t VALUES (1)"))
            first_inserted.set()
            time.sleep(0.3)  # holds SQLite's write lock, and ours

    def second() -> None:
        first_inserted.wait()
        with engine.begin() as connection:
            connection.execute(text("INSERT INTO t VALUES (2)"))
        finished.append(time.monotonic())

    started = time.monotonic()
    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert 0.25 <= finished[0] - started < 2  # waited for the first commit, not a busy loop
    with engine.connect() as connection:
        assert connection.execute(text("SELECT n FROM t ORDER BY n")).scalars().all() == [1, 2]


def test_the_lock_is_given_back_however_a_write_ends(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    with engine.connect() as connection:  # closed with the insert neither committed nor
        connection.execute(text("INSERT INTO t VALUES (1)"))  # rolled back by hand
    try:
        with engine.begin() as connection:
            connection.execute(text("INSERT INTO t VALUES (2)"))
            raise RuntimeError("a failed request")
    except RuntimeError:
        pass
    started = time.monotonic()
    with engine.begin() as connection:
        connection.execute(text("INSERT INTO t VALUES (3)"))
    assert time.monotonic() - started < 1  # not the 5 s a lock left taken would cost
    with engine.connect() as connection:
        assert connection.execute(text("SELECT n FROM t")).scalars().all() == [3]
