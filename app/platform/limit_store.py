"""Where rate limits count attempts: rows of `limithit` in the database, so that every web
replica sees every other's, stamped by the database's clock.

Each check runs in one short transaction that first takes a lock per key counted, so that
two replicas admitting the same client at once cannot both see room for one more: on
PostgreSQL advisory locks held until the transaction ends, on SQLite the database's one
writer lock, taken by a first statement that writes. A check is four statements whatever
the number of keys: lock (and read the clock), count, insert, and the caller's commit."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from functools import cache

from sqlalchemy import (
    Delete,
    Select,
    TextClause,
    and_,
    bindparam,
    delete,
    func,
    insert,
    or_,
    select,
    text,
)
from sqlalchemy.engine import Connection, Engine
from sqlmodel import col

from app.db import database_now
from app.models import LimitHit

# Expired hits are swept at most this often by each process; until then the windows'
# queries skip them anyway (they select by time).
SWEEP_SECONDS = 60.0
_HITS = LimitHit.__table__  # type: ignore[attr-defined]


def digest(name: str, key: str) -> str:
    """The stored form of a key counted by the window `name`."""
    return hashlib.sha256(f"{name}\x00{key}".encode()).hexdigest()


def lock_id(key_sha256: str) -> int:
    """A signed 64-bit number for pg_advisory_xact_lock, from a key's digest."""
    return int.from_bytes(bytes.fromhex(key_sha256[:16]), "big", signed=True)


# Statements are built once per number of keys (one or two): building and caching a
# statement anew on every check cost more than running it.


@cache
def _lock_statement(keys: int) -> TextClause:
    # PostgreSQL evaluates a select list from left to right: the locks are taken in the
    # order given, then the clock is read.
    locks = ", ".join(f"pg_advisory_xact_lock(:k{n})" for n in range(keys))
    return text(f"SELECT {locks}, clock_timestamp()")


@cache
def _expired_statement(keys: int) -> Delete:
    return delete(_HITS).where(
        col(LimitHit.key_sha256).in_([bindparam(f"k{n}") for n in range(keys)]),
        col(LimitHit.expires_at) <= bindparam("now"),
    )


@cache
def _count_statement(keys: int) -> Select[str, int, datetime]:
    each = (
        and_(col(LimitHit.key_sha256) == bindparam(f"k{n}"), col(LimitHit.at) >= bindparam(f"s{n}"))
        for n in range(keys)
    )
    return (
        select(col(LimitHit.key_sha256), func.count(), func.min(col(LimitHit.at)))
        .where(or_(*each))
        .group_by(col(LimitHit.key_sha256))
    )


class HitStore:
    """The shared record of attempts, over the app's engine."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._postgres = engine.dialect.name == "postgresql"
        self._last_sweep = 0.0

    def begin(self, connection: Connection, keys: Iterable[str]) -> datetime:
        """Lock `keys` (digests) for the rest of the transaction on `connection`; now, by the
        database's clock. Call it first in the transaction."""
        ordered = sorted(set(keys))  # one order everywhere, so two lockers never deadlock
        if self._postgres:
            ids = {f"k{n}": lock_id(key) for n, key in enumerate(ordered)}
            row = connection.execute(_lock_statement(len(ordered)), ids).one()
            now: datetime = row[-1]
        else:
            # A write first (these keys' expired hits): SQLite then holds its writer lock
            # until the commit, so no other connection counts between this count and insert.
            keys = {f"k{n}": key for n, key in enumerate(ordered)}
            connection.execute(
                _expired_statement(len(ordered)), {**keys, "now": database_now(connection)}
            )
            now = database_now(connection)  # read once the lock is held
        self._sweep(connection, now)
        return now

    def counts(
        self, connection: Connection, since: Sequence[tuple[str, datetime]]
    ) -> dict[str, tuple[int, datetime]]:
        """For each (key, since): the hits on the key at or after `since`, and the earliest
        of them. Keys with none are left out."""
        params: dict[str, object] = {}
        for n, (key, start) in enumerate(since):
            params[f"k{n}"], params[f"s{n}"] = key, start
        found = connection.execute(_count_statement(len(since)), params)
        return {key: (int(hits), earliest) for key, hits, earliest in found}

    def add(
        self, connection: Connection, hits: Sequence[tuple[str, timedelta]], now: datetime
    ) -> None:
        """Count one hit now on each key, kept for its window."""
        rows = [{"key_sha256": key, "at": now, "expires_at": now + kept} for key, kept in hits]
        connection.execute(insert(_HITS), rows)

    def _sweep(self, connection: Connection, now: datetime) -> None:
        """Delete hits that left their window, once in a while."""
        if time.monotonic() - self._last_sweep < SWEEP_SECONDS:
            return
        self._last_sweep = time.monotonic()
        expired = select(col(LimitHit.id)).where(col(LimitHit.expires_at) <= now)
        if self._postgres:
            # Rows another replica's sweep is deleting right now are left to it: no waiting.
            expired = expired.with_for_update(skip_locked=True)
        connection.execute(delete(_HITS).where(col(LimitHit.id).in_(expired.scalar_subquery())))
