"""The hottest writes, as INSERT ... ON CONFLICT statements built once per dialect (building
one cost more than running it): a visit to an item, and what a day's activity adds up to.
`app/progress/study.py` writes one at a time, `visit_writer.py` many at once."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from functools import cache
from typing import Any

from sqlalchemy import BindParameter, Connection, Executable, bindparam, case, func
from sqlmodel import col

from app.db import dialect_of
from app.models import Activity, ItemProgress
from app.progress.progress import Status


@cache
def visit(dialect: Any) -> Executable:
    """INSERT ... ON CONFLICT for a visit, built once per dialect: reading an item is the
    hottest write there is, and building the statement cost more than running it."""
    visits: BindParameter[Any] = bindparam("visits")  # this many, the first at `first`
    first: BindParameter[Any] = bindparam("first")
    last: BindParameter[Any] = bindparam("last")
    insert = dialect.insert(ItemProgress).values(
        learner_id=bindparam("learner_id"),
        item_id=bindparam("item_id"),
        status=Status.seen.value,
        bookmarked=False,
        note="",
        visits=visits,
        runs=0,
        runs_ok=0,
        first_visit_at=first,
        last_visit_at=last,
        updated_at=last,
    )
    statement: Executable = insert.on_conflict_do_update(
        index_elements=["learner_id", "item_id"],
        set_={
            "visits": ItemProgress.visits + visits,
            "last_visit_at": last,
            "first_visit_at": func.coalesce(col(ItemProgress.first_visit_at), first),
            "status": case(
                (col(ItemProgress.status) == Status.new.value, Status.seen.value),
                else_=col(ItemProgress.status),
            ),
        },
    )
    return statement


@cache
def day(dialect: Any) -> Executable:
    """INSERT ... ON CONFLICT adding to a day's activity, built once per dialect."""
    views: BindParameter[Any] = bindparam("views")
    runs: BindParameter[Any] = bindparam("runs")
    checks: BindParameter[Any] = bindparam("checks")
    insert = dialect.insert(Activity).values(
        learner_id=bindparam("learner_id"),
        day=bindparam("day"),
        views=views,
        runs=runs,
        checks=checks,
    )
    statement: Executable = insert.on_conflict_do_update(
        index_elements=["learner_id", "day"],
        set_={
            "views": Activity.views + views,
            "runs": Activity.runs + runs,
            "checks": Activity.checks + checks,
        },
    )
    return statement


@dataclass(frozen=True)
class Visits:
    """`count` visits of one learner to one item, from `first` to `last`."""

    learner_id: int
    item_id: int
    count: int
    first: datetime
    last: datetime


def record_visits(
    connection: Connection, visits: list[Visits], views: list[tuple[int, date, int]]
) -> None:
    """Visits of any learners at once (app/progress/visit_writer.py groups them), and the
    views they add to each (learner, day): one statement each, run for many rows (Core,
    not the ORM's bulk path, which cost more than the statements). Each (learner, item) and
    (learner, day) must appear once: PostgreSQL's ON CONFLICT takes a row once a statement."""
    dialect = dialect_of(connection)
    connection.execute(
        visit(dialect),
        [
            {"learner_id": v.learner_id, "item_id": v.item_id, "visits": v.count}
            | {"first": v.first, "last": v.last}
            for v in visits
        ],
    )
    connection.execute(
        day(dialect),
        [
            {"learner_id": learner, "day": day, "views": n, "runs": 0, "checks": 0}
            for learner, day, n in views
        ],
    )
