"""Open-answer practice on an item's page: the learner answers a prompt aloud or in
writing, reveals the model answer, and ticks the key points they covered. The ticks become
a recall check (kept in the history, as the old "I knew it" checks are) and a review of the
prompt's question."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import select

from app.domain import InvalidInput, LearnerScope
from app.models import ItemProgress, Question
from app.progress import study
from app.progress.study import ItemKey
from app.study import review


def record_open_answer(
    scope: LearnerScope, item: ItemKey, *, position: int, covered: list[int], now: datetime
) -> ItemProgress:
    """Rate an open answer by the key points covered (not committed)."""
    question = scope.session.exec(
        select(Question).where(Question.item_id == item.id, Question.position == position)
    ).first()
    if question is None:
        raise InvalidInput(f"Question {item.number} has no model answer for prompt {position}.")
    total = len(question.key_point_list)
    ticked = len({n for n in covered if 1 <= n <= total})
    if len(covered) != ticked:
        raise InvalidInput(f"That prompt has key points 1 to {total}.")
    rating = review.rating_for_points(ticked=ticked, total=total)
    assert question.id is not None
    review.record(scope, question.id, rating=rating, source=review.ReviewSource.OPEN, at=now)
    # Half the points or more counts as knowing it, for the item's status and its history.
    return study.record_question_recall(
        scope, item, position=position, knew=ticked * 2 >= total, now=now
    )
