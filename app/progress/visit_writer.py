"""Visits written in groups (group commit). Every signed-in or returning reader's page view
is a write, and on one core the writes, not the reads, set how many pages a second the
server can show: each took its own transaction and commit, one after the other.

Here a page that records a visit hands it over and waits until it is committed, so no
visit is ever lost (the page answers only once its visit is stored). Whoever hands one over
while no one is writing writes every visit waiting at that moment in one transaction; the
others wait, and the first of those that arrived meanwhile writes the next group. Alone on
the server, a visit is written at once, as before.

A returning reader's visit to an item they have opened before changes only two counters
(the item's visits, the day's views) and a time: nothing the page shows depends on it being
written first. Those are `defer`red: kept in memory, added to what the page shows, and
written by a thread of the writer's own every FLUSH_SECONDS, all in one transaction, and
once more when the app stops (`close`). A write that fails is kept and tried again. Only a
process killed outright (SIGKILL, power loss) can lose them: at most the last
FLUSH_SECONDS of repeat visits, never a first one."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from app.progress import activity_rows

FLUSH_SECONDS = 0.25
log = logging.getLogger(__name__)


@dataclass(eq=False)
class _Visit:
    learner_id: int
    item_id: int
    at: datetime
    wake: threading.Event = field(default_factory=threading.Event)
    lead: bool = False  # this one writes the next group (its own among them)
    done: bool = False
    error: BaseException | None = None


class VisitWriter:
    """Records visits for the pages, many to a transaction when many come at once."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._lock = threading.Lock()
        self._waiting: list[_Visit] = []
        self._writing = False
        self._deferred: dict[tuple[int, int], list[datetime]] = {}  # (learner, item): times
        self._deferred_lock = threading.Lock()
        self._flusher: threading.Thread | None = None
        self._closing = threading.Event()

    def defer(self, *, learner_id: int, item_id: int, at: datetime) -> None:
        """Count a repeat visit, written within FLUSH_SECONDS (never blocks on the database)."""
        with self._deferred_lock:
            self._deferred.setdefault((learner_id, item_id), []).append(at)
            if self._flusher is None and not self._closing.is_set():
                self._flusher = threading.Thread(
                    target=self._flush_every, name="visit-writer", daemon=True
                )
                self._flusher.start()

    def deferred(self, *, learner_id: int, item_id: int) -> tuple[int, datetime | None]:
        """How many of this learner's visits to the item wait to be written, and the last."""
        with self._deferred_lock:
            times = self._deferred.get((learner_id, item_id), [])
            return len(times), max(times, default=None)

    def flush(self, into: Connection | None = None) -> None:
        """Write every deferred visit now (blocking); kept for the next try if it fails.

        `into`: the caller's connection, when its transaction may already have written.
        This engine lets one transaction write at a time (app/db.py), so a flush on a
        connection of its own would wait for the caller's, which waits for the flush: the
        visits are written in the caller's transaction instead (in a savepoint, so that a
        failure leaves the caller's work intact), and commit with it."""
        with self._deferred_lock:
            taken, self._deferred = self._deferred, {}
        if not taken:
            return
        group = [_Visit(*key, at) for key, times in taken.items() for at in times]
        if into is not None:
            try:
                with into.begin_nested():
                    self._write_on(into, group)
            except Exception:  # kept for the writer's thread (which lets go of gone learners)
                log.warning("deferred visits kept for later", exc_info=True)
                self._put_back(taken)
            return
        try:
            self._write(group)
        except IntegrityError:
            self._write_each(taken)
        except Exception:
            log.exception("could not write deferred visits to %d items; trying again", len(taken))
            self._put_back(taken)
            raise

    def _put_back(self, taken: dict[tuple[int, int], list[datetime]]) -> None:
        with self._deferred_lock:
            for key, times in taken.items():
                self._deferred.setdefault(key, [])[:0] = times

    def _write_each(self, taken: dict[tuple[int, int], list[datetime]]) -> None:
        """A learner deleted meanwhile (an account deleted, a guest merged into an account at
        sign-in) fails the group: write item by item and let go of the visits of learners
        that are gone, which belong to no one now."""
        for key, times in taken.items():
            try:
                self._write([_Visit(*key, at) for at in times])
            except IntegrityError:
                log.info("dropped %d visits of learner %d, who is gone", len(times), key[0])

    def flush_before_reading(self) -> None:
        """Best effort before a personal read: a failed write is logged and kept for the
        writer's thread, and the read goes on (showing counts moments old) rather than fail."""
        with contextlib.suppress(Exception):
            self.flush()

    def close(self) -> None:
        """Stop the flushing thread and write what is left (the app is stopping)."""
        self._closing.set()
        flusher = self._flusher
        if flusher is not None:
            flusher.join(timeout=10)
        self.flush()

    def _flush_every(self) -> None:
        while not self._closing.wait(FLUSH_SECONDS):
            with contextlib.suppress(Exception):  # logged by flush; kept for the next round
                self.flush()

    def record(self, *, learner_id: int, item_id: int, at: datetime) -> None:
        """Store one visit; returns once it is committed (blocking: call it in a thread)."""
        visit = _Visit(learner_id, item_id, at)
        with self._lock:
            self._waiting.append(visit)
            if not self._writing:
                self._writing = visit.lead = True
        while not visit.done:
            if visit.lead:
                self._write_group()
            else:
                visit.wake.wait()
                visit.wake.clear()
        if visit.error is not None:
            raise visit.error

    def _write_group(self) -> None:
        with self._lock:
            group, self._waiting = self._waiting, []
        error: BaseException | None = None
        try:
            self._write(group)
        except Exception as exc:  # each visit's page is told, and the writing goes on
            error = exc
        following: _Visit | None = None
        with self._lock:
            for visit in group:
                visit.error, visit.done, visit.lead = error, True, False
            if self._waiting:  # arrived while this group was written: the first leads next
                following = self._waiting[0]
                following.lead = True
            else:
                self._writing = False
        for visit in [*group, *([following] if following else [])]:
            visit.wake.set()

    def _write(self, group: list[_Visit]) -> None:
        """One transaction for the whole group."""
        with self.engine.begin() as connection:
            self._write_on(connection, group)

    @staticmethod
    def _write_on(connection: Connection, group: list[_Visit]) -> None:
        """A visit count per (learner, item) and the views per (learner, day), each written
        once, in `connection`'s transaction."""
        per_item = Counter((v.learner_id, v.item_id) for v in group)
        first: dict[tuple[int, int], datetime] = {}
        last: dict[tuple[int, int], datetime] = {}
        for v in sorted(group, key=lambda v: v.at):
            first.setdefault((v.learner_id, v.item_id), v.at)
            last[(v.learner_id, v.item_id)] = v.at
        per_day = Counter((v.learner_id, v.at.date()) for v in group)
        activity_rows.record_visits(
            connection,
            [
                activity_rows.Visits(learner, item, count, first[key], last[key])
                for key, count in per_item.items()
                for learner, item in [key]
            ],
            [(learner, day, views) for (learner, day), views in per_day.items()],
        )
