"""The SQL statements an engine runs while a block runs, lower-cased: what a test counts to
hold a page to the statements it should need."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine, event


@contextmanager
def statements(engine: Engine) -> Iterator[list[str]]:
    seen: list[str] = []

    def keep(conn: object, cursor: object, statement: str, *args: object) -> None:
        seen.append(statement.lower())

    event.listen(engine, "before_cursor_execute", keep)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", keep)
