"""Spaced review (app/study/review.py): ratings from answers, FSRS scheduling, and the
log as the source of truth."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.domain import Identity
from app.models import Question, ReviewCard
from app.platform import learners
from app.study import review
from tests.support.bank import add_bank

T0 = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("correct", "seconds", "rating"),
    [(False, 5.0, 1), (True, 90.0, 2), (True, 10.0, 3), (True, None, 3)],
)
def test_answers_rate_again_hard_or_good(correct: bool, seconds: float | None, rating: int) -> None:
    assert review.rating_for_answer(correct=correct, seconds=seconds) == rating


@pytest.mark.parametrize(("ticked", "rating"), [(0, 1), (1, 2), (2, 3), (3, 3), (4, 4)])
def test_open_answers_rate_by_the_share_of_key_points(ticked: int, rating: int) -> None:
    assert review.rating_for_points(ticked=ticked, total=4) == rating


def test_good_answers_space_reviews_out_and_again_brings_them_back(engine: Engine) -> None:
    add_bank(engine)
    with Session(engine) as session:
        scope = learners.resolve_or_create(session, Identity(visitor="v"))
        question = session.exec(select(Question)).first()
        assert question is not None and question.id is not None
        at = T0
        intervals = []
        for _ in range(3):
            card = review.record(scope, question.id, rating=3, source="quiz", at=at)
            intervals.append(_utc(card.due) - at)
            at = _utc(card.due)
        assert intervals[0] < intervals[1] < intervals[2]  # each success waits longer
        lapse = review.record(scope, question.id, rating=1, source="quiz", at=at)
        assert _utc(lapse.due) - at < intervals[-1]
        assert review.due_questions(scope, now=_utc(lapse.due)) == [question.id]
        assert review.due_count(scope, now=at) == 0


def test_a_schedule_can_be_computed_again_from_the_log(engine: Engine) -> None:
    add_bank(engine)
    with Session(engine) as session:
        scope = learners.resolve_or_create(session, Identity(visitor="w"))
        question = session.exec(select(Question)).first()
        assert question is not None and question.id is not None
        for n, rating in enumerate([3, 3, 1, 3, 4]):
            review.record(
                scope, question.id, rating=rating, source="quiz", at=T0 + timedelta(days=n * 3)
            )
        kept = session.get(ReviewCard, (scope.learner_id, question.id))
        assert kept is not None
        before = (kept.due, kept.card)
        kept.card, kept.due = "{}", T0  # a lost or damaged schedule
        session.add(kept)
        again = review.recompute(scope, question.id)
        assert again is not None and (again.due, again.card) == before
        recall = review.recall_on(scope, _utc(again.due) + timedelta(days=30))[question.id]
        assert 0 < recall.retrievability < 0.9


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
