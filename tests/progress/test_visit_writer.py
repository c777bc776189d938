"""Visits written in groups (app/progress/visit_writer.py): every visit handed over is
stored, however many come at once, each page waits until its own is committed, and many
visits share a transaction under load."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.models import Activity, Item, ItemProgress, Learner
from app.progress.visit_writer import VisitWriter


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


# Repeat visits, deferred: counted at once on the page, written within FLUSH_SECONDS.


def _progress(engine: Engine, learner_id: int, item_id: int) -> ItemProgress | None:
    with Session(engine) as session:
        return session.get(ItemProgress, (learner_id, item_id))


def test_deferred_visits_are_counted_before_and_written_by_flush(engine: Engine) -> None:
    (learner,), (item, *_) = _learners_and_items(engine, 1)
    writer = VisitWriter(engine)
    first = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
    writer.record(learner_id=learner, item_id=item, at=first)
    later = [datetime(2026, 11, 24, 12, m, tzinfo=UTC) for m in (1, 2, 3)]
    for at in later:
        writer.defer(learner_id=learner, item_id=item, at=at)
    assert writer.deferred(learner_id=learner, item_id=item) == (3, later[-1])
    assert writer.deferred(learner_id=learner, item_id=item + 1) == (0, None)
    writer.flush()
    assert writer.deferred(learner_id=learner, item_id=item) == (0, None)
    row = _progress(engine, learner, item)
    assert row is not None and row.visits == 4
    assert row.last_visit_at is not None and row.last_visit_at.minute == 3
    writer.close()


def test_the_writers_thread_writes_deferred_visits_soon_and_close_writes_the_rest(
    engine: Engine,
) -> None:
    (learner,), (item, *_) = _learners_and_items(engine, 1)
    writer = VisitWriter(engine)
    writer.record(learner_id=learner, item_id=item, at=datetime.now(UTC))
    writer.defer(learner_id=learner, item_id=item, at=datetime.now(UTC))
    for _ in range(100):  # written by the thread within FLUSH_SECONDS; 5 s at most here
        row = _progress(engine, learner, item)
        if row is not None and row.visits == 2:
            break
        threading.Event().wait(0.05)
    assert row is not None and row.visits == 2
    writer.defer(learner_id=learner, item_id=item, at=datetime.now(UTC))
    writer.close()  # the app stops: nothing deferred is left behind
    row = _progress(engine, learner, item)
    assert row is not None and row.visits == 3
    assert writer.deferred(learner_id=learner, item_id=item) == (0, None)


def test_visits_of_a_learner_gone_meanwhile_do_not_hold_up_the_others(engine: Engine) -> None:
    (kept, gone), (item, *_) = _learners_and_items(engine, 2)
    writer = VisitWriter(engine)
    now = datetime.now(UTC)
    for learner in (kept, gone):
        writer.record(learner_id=learner, item_id=item, at=now)
        writer.defer(learner_id=learner, item_id=item, at=now)
    with Session(engine) as session:  # e.g. the guest was merged into an account at sign-in
        session.delete(session.get(Learner, gone))
        session.commit()
    writer.flush()
    row = _progress(engine, kept, item)
    assert row is not None and row.visits == 2
    assert writer.deferred(learner_id=gone, item_id=item) == (0, None)
    writer.close()


def test_a_failed_write_before_a_read_keeps_the_visits_and_does_not_fail_the_read(
    engine: Engine,
) -> None:
    writer = VisitWriter(engine)
    writer._closing.set()  # no writer's thread: this test alone flushes
    at = datetime.now(UTC)
    writer.defer(learner_id=1, item_id=1, at=at)

    def refuse(group: list[object]) -> None:
        raise OSError("disk full")

    writer._write = refuse  # type: ignore[method-assign,assignment]
    writer.flush_before_reading()  # no exception reaches the read
    assert writer.deferred(learner_id=1, item_id=1) == (1, at), "kept for the next try"
    with pytest.raises(OSError):
        writer.flush()


def test_a_flush_into_a_transaction_that_has_written_neither_waits_nor_deadlocks(
    engine: Engine,
) -> None:
    """Sign-up writes the account, then carries the guest's deferred visits in: a flush on a
    connection of its own would wait for the sign-up's write, which waits for the flush
    (this failed a sign-up with 503 after 10 s)."""
    (learner,), (item, *_) = _learners_and_items(engine, 1)
    writer = VisitWriter(engine)
    writer._closing.set()  # no writer's thread: this test alone flushes
    writer.record(learner_id=learner, item_id=item, at=datetime.now(UTC))
    writer.defer(learner_id=learner, item_id=item, at=datetime.now(UTC))
    with Session(engine) as session:
        session.add(Learner(visitor="someone-new"))
        session.flush()  # this transaction holds the database's write now
        started = time.monotonic()
        writer.flush(into=session.connection())
        assert time.monotonic() - started < 2
        session.commit()
    row = _progress(engine, learner, item)
    assert row is not None and row.visits == 2
    assert writer.deferred(learner_id=learner, item_id=item) == (0, None)


def test_a_flush_into_a_transaction_that_fails_keeps_the_visits_and_the_callers_work(
    engine: Engine,
) -> None:
    writer = VisitWriter(engine)
    writer._closing.set()
    at = datetime.now(UTC)
    writer.defer(learner_id=999_999, item_id=999_999, at=at)  # refused: no such learner
    with Session(engine) as session:
        session.add(Learner(visitor="kept"))
        session.flush()
        writer.flush(into=session.connection())
        session.commit()
    with Session(engine) as session:
        assert session.exec(select(Learner).where(Learner.visitor == "kept")).one()
    assert writer.deferred(learner_id=999_999, item_id=999_999) == (1, at)


def test_a_runs_outcome_and_the_visit_writer_meet_without_deadlock(engine: Engine) -> None:
    """A finished run (study.record_run: the item's row, then the day's) and the writer's
    deferred visits (the same two rows) write at the same moments for one learner and item,
    many times over. On PostgreSQL the two once took the rows in opposite orders and one of
    them died in a deadlock; here every write lands and every count adds up."""
    from app.domain import LearnerScope
    from app.progress import study

    (learner,), (item_id, *_) = _learners_and_items(engine, 1)
    writer = VisitWriter(engine)
    now = datetime.now(UTC)
    writer.record(learner_id=learner, item_id=item_id, at=now)  # a first visit, written
    rounds = 25
    start = threading.Barrier(2)

    def runs() -> None:
        for _ in range(rounds):
            start.wait(timeout=30)
            with Session(engine) as session:
                item = session.get(Item, item_id)
                assert item is not None
                study.record_run(LearnerScope(session, learner), item, ok=True, now=now)
                session.commit()

    def visits() -> None:
        for _ in range(rounds):
            writer.defer(learner_id=learner, item_id=item_id, at=now)
            start.wait(timeout=30)
            writer.flush()

    with ThreadPoolExecutor(2) as pool:
        for done in [pool.submit(runs), pool.submit(visits)]:
            done.result(timeout=120)  # raises what either thread raised
    writer.flush()
    row = _progress(engine, learner, item_id)
    assert row is not None and row.runs == rounds and row.visits == 1 + rounds
    with Session(engine) as session:
        day = session.exec(select(Activity).where(Activity.learner_id == learner)).one()
    assert day.runs == rounds and day.views == 1 + rounds
