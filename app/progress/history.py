"""A learner's runs of one item, for its page (the dashboard lists them all)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import Select, bindparam
from sqlalchemy import select as core_select
from sqlmodel import col

from app.domain import LearnerScope
from app.models import Run

ITEM_RUNS = 5  # runs of an item its page lists


class RunLine(NamedTuple):
    """What the item page shows of a run: its outcome and the code it ran."""

    verdict: str | None
    status: str
    sample_index: int | None
    wall_ms: int | None
    backend: str | None
    created_at: datetime
    code: str


def latest_runs(
    learner: Any,
) -> Select[str | None, str, int | None, int | None, str | None, datetime, str]:
    """The learner's latest runs of the item `item` (a bound parameter), newest first: only
    the columns shown (a run's output can be large). `learner`: who, as a column expression
    or a bound parameter."""
    return (
        core_select(
            col(Run.verdict),
            col(Run.status),
            col(Run.sample_index),
            col(Run.wall_ms),
            col(Run.backend),
            col(Run.created_at),
            col(Run.code),
        )
        .where(col(Run.learner_id) == learner, col(Run.item_id) == bindparam("item"))
        .order_by(col(Run.created_at).desc())
        .limit(ITEM_RUNS)
    )


# Built once: the item page is the hottest page there is.
_LATEST = latest_runs(bindparam("learner"))


def runs_of(scope: LearnerScope, item_id: int | None) -> list[RunLine]:
    """The learner's latest runs of the item's samples, newest first."""
    rows = scope.session.connection().execute(
        _LATEST, {"learner": scope.learner_id, "item": item_id}
    )
    return [RunLine(*row) for row in rows]
