"""Open event streams per visitor, counted in the database so that every web replica sees
every other's: each stream holds a connection and a task wherever it is served, and a
visitor may hold only so many at once across the whole fleet.

An open stream is a row of `limithit` (app/platform/limit_store.py), taken when the stream
opens and deleted when it closes. Should its replica die first, the row expires with the
stream's longest life, and the count forgets it then."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete, insert
from sqlmodel import col

from app.domain import RateLimited
from app.models import LimitHit
from app.platform.limit_store import HitStore, digest
from sandbox.protocol import CEILINGS

_HITS = LimitHit.__table__  # type: ignore[attr-defined]
# No stream outlives the longest run by much: the worker ends every run by its wall ceiling
# and, for time spent compiling, the compile allowance's ceiling (sandbox/phases.py).
STREAM_LIFETIME_SECONDS = CEILINGS.wall_seconds + CEILINGS.compile_seconds + 60


class StreamSlots:
    def __init__(
        self, store: HitStore, per_visitor: int, lifetime_seconds: float = STREAM_LIFETIME_SECONDS
    ) -> None:
        self.store = store
        self.per_visitor = per_visitor
        self.lifetime = timedelta(seconds=lifetime_seconds)

    def take(self, owner: str) -> int:
        """A slot for one more stream of `owner`'s (its ticket, for give_back); RateLimited
        when the visitor's streams are all open already, on whichever replicas."""
        key = digest("streams", owner)
        with self.store.engine.begin() as connection:
            now = self.store.begin(connection, [key])
            open_now, _ = self.store.counts(connection, [(key, now - self.lifetime)]).get(
                key, (0, now)
            )
            if open_now >= self.per_visitor:
                raise RateLimited(
                    f"You have {self.per_visitor} run streams open already; close one (a tab, "
                    "say) and try again.",
                    5,
                )
            row = {"key_sha256": key, "at": now, "expires_at": now + self.lifetime}
            ticket: int = connection.execute(
                insert(_HITS).values(row).returning(_HITS.c.id)
            ).scalar_one()
        return ticket

    def give_back(self, ticket: int) -> None:
        """The stream with this ticket closed."""
        with self.store.engine.begin() as connection:
            connection.execute(delete(_HITS).where(col(LimitHit.id) == ticket))
