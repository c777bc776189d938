"""A learner's runs of one item, for its page (the dashboard lists them all)."""

from __future__ import annotations

from sqlmodel import col, select

from app.domain import LearnerScope
from app.models import Run

ITEM_RUNS = 5  # runs of an item its page lists


def runs_of(scope: LearnerScope, item_id: int | None, limit: int = ITEM_RUNS) -> list[Run]:
    """The learner's latest runs of the item's samples, newest first."""
    statement = (
        select(Run)
        .where(Run.learner_id == scope.learner_id, Run.item_id == item_id)
        .order_by(col(Run.created_at).desc())
        .limit(limit)
    )
    return list(scope.session.exec(statement))
