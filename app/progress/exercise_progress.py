"""A graded submission moves the items its exercise drills: their status counts the
learner's exercises (progress.item_status), so it is derived again when one ends."""

from __future__ import annotations

from sqlmodel import col, select

from app.domain import LearnerScope
from app.exercises import catalogue
from app.models import Item
from app.progress import study


def count_submission(scope: LearnerScope, slug: str) -> None:
    """Derive again the status of each item the exercise drills. Not committed."""
    drilled = catalogue.one(scope.session.connection(), slug).item_list
    if not drilled:
        return
    for item in scope.session.exec(select(Item).where(col(Item.slug).in_(drilled))):
        study.refresh_status(scope, item)
