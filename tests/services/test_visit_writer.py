"""Visits written in groups (app/services/visit_writer.py): every visit handed over is
stored, however many come at once, each page waits until its own is committed, and many
visits share a transaction under load."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.models import Activity, Item, ItemProgress, Learner
from app.services.visit_writer import VisitWriter


def _learners_and_items(engine: Engine, learners: int) -> tuple[list[int], list[int]]:
    with Session(engine) as session:
        rows = [Learner(visitor=f"visitor-{n}") for n in range(learners)]
        session.add_all(rows)
        session.commit()
        items = [i.id for i in session.exec(select(Item).limit(3))]
        return [r.id for r in rows if r.id is not None], [i for i in items if i is not None]


def test_every_visit_of_many_at_once_is_stored_in_fewer_transactions(engine: Engine) -> None:
    learner_ids, item_ids = _learners_and_items(engine, 4)
    writer = VisitWriter(engine)
    commits = []
    event.listen(engine, "commit", lambda _connection: commits.append(1))
    started = threading.Barrier(16)
    at = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)

    def visit(n: int) -> None:
        if n < 16:
            started.wait()
        writer.record(learner_id=learner_ids[n % 4], item_id=item_ids[n % 3], at=at)

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(visit, range(240)))
    with Session(engine) as session:
        progress = session.exec(select(ItemProgress)).all()
        days = session.exec(select(Activity)).all()
    assert sum(p.visits for p in progress) == 240
    assert {(p.learner_id, p.item_id) for p in progress} == {
        (learner_ids[n % 4], item_ids[n % 3]) for n in range(12)
    }
    assert all(p.status == "seen" for p in progress)
    assert sum(d.views for d in days) == 240 and len(days) == 4
    assert len(commits) < 240  # groups shared transactions


def test_a_failed_group_is_reported_to_each_of_its_pages(engine: Engine) -> None:
    writer = VisitWriter(engine)
    with pytest.raises(Exception, match=r"FOREIGN KEY|foreign key"):
        # no such learner or item: the database refuses the group
        writer.record(learner_id=999_999, item_id=999_999, at=datetime.now(UTC))
    learner_ids, item_ids = _learners_and_items(engine, 1)
    writer.record(learner_id=learner_ids[0], item_id=item_ids[0], at=datetime.now(UTC))
    with Session(engine) as session:
        assert session.exec(select(ItemProgress)).one().visits == 1
