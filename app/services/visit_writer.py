"""Visits written in groups (group commit). Every signed-in or returning reader's page view
is a write, and on one core the writes, not the reads, set how many pages a second the
server can show: each took its own transaction and commit, one after the other.

Here a page that records a visit hands it over and waits until it is committed, so no
visit is ever lost (the page answers only once its visit is stored). Whoever hands one over
while no one is writing writes every visit waiting at that moment in one transaction; the
others wait, and the first of those that arrived meanwhile writes the next group. Alone on
the server, a visit is written at once, as before."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.engine import Engine

from app.services import activity_rows


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
        """One transaction for the whole group: a visit count per (learner, item) and the
        views per (learner, day), each written once."""
        per_item = Counter((v.learner_id, v.item_id) for v in group)
        first: dict[tuple[int, int], datetime] = {}
        last: dict[tuple[int, int], datetime] = {}
        for v in sorted(group, key=lambda v: v.at):
            first.setdefault((v.learner_id, v.item_id), v.at)
            last[(v.learner_id, v.item_id)] = v.at
        per_day = Counter((v.learner_id, v.at.date()) for v in group)
        with self.engine.begin() as connection:
            activity_rows.record_visits(
                connection,
                [
                    activity_rows.Visits(learner, item, count, first[key], last[key])
                    for key, count in per_item.items()
                    for learner, item in [key]
                ],
                [(learner, day, views) for (learner, day), views in per_day.items()],
            )
