"""Spaced review (app/study/review.py): ratings from answers, FSRS scheduling, and the
log as the source of truth."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.domain import Identity, LearnerScope
from app.models import Question, ReviewCard, User
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


def questions(engine: Engine, count: int) -> list[int]:
    add_bank(engine, per_item=3)
    with Session(engine) as session:
        ids = [q for q in session.exec(select(Question.id)) if q is not None]
    assert len(ids) >= count
    return ids[:count]


def account(session: Session, *, short_steps: bool) -> LearnerScope:
    user = User(
        username=f"steps-{short_steps}", password_hash="-", short_learning_steps=short_steps
    )
    session.add(user)
    session.flush()
    return learners.resolve_or_create(session, Identity(visitor="x", user_id=user.id))


@pytest.mark.parametrize("rating", [2, 3, 4])
def test_a_right_answer_on_a_new_question_waits_at_least_a_day(engine: Engine, rating: int) -> None:
    (question,) = questions(engine, 1)
    with Session(engine) as session:
        scope = learners.resolve_or_create(session, Identity(visitor="guest"))
        card = review.record(scope, question, rating=rating, source="quiz", at=T0)
        assert _utc(card.due) - T0 >= timedelta(days=1)


def test_a_wrong_answer_comes_back_the_same_day_then_a_right_one_waits_a_day(
    engine: Engine,
) -> None:
    (question,) = questions(engine, 1)
    with Session(engine) as session:
        scope = learners.resolve_or_create(session, Identity(visitor="guest"))

        def wait_after(rating: int, at: datetime) -> tuple[timedelta, datetime]:
            due = _utc(review.record(scope, question, rating=rating, source="quiz", at=at).due)
            return due - at, due

        assert wait_after(1, T0)[0] == review.SAME_DAY_STEP
        wait, at = wait_after(1, T0 + review.SAME_DAY_STEP)
        assert wait == review.SAME_DAY_STEP  # wrong again: back again the same day
        wait, at = wait_after(3, at)
        assert wait >= timedelta(days=1)
        # A lapse, days later, comes back the same day too, and a right answer then waits.
        wait, at = wait_after(1, at)
        assert wait == review.SAME_DAY_STEP
        assert wait_after(2, at)[0] >= timedelta(days=1)


def test_short_learning_steps_bring_a_new_question_back_within_minutes(engine: Engine) -> None:
    (question,) = questions(engine, 1)
    with Session(engine) as session:
        scope = account(session, short_steps=True)
        assert review.short_steps_for(scope)
        waits, at = [], T0
        for rating in (1, 3, 3):
            due = _utc(review.record(scope, question, rating=rating, source="quiz", at=at).due)
            waits.append(due - at)
            at = due
        # FSRS's steps, 1 and 10 minutes, each answered right before the day-scale wait.
        assert waits[:2] == [timedelta(minutes=1), timedelta(minutes=10)]
        assert waits[2] >= timedelta(days=1)


def test_an_account_without_short_steps_has_the_default(engine: Engine) -> None:
    (question,) = questions(engine, 1)
    with Session(engine) as session:
        scope = account(session, short_steps=False)
        assert not review.short_steps_for(scope)
        card = review.record(scope, question, rating=3, source="quiz", at=T0)
        assert _utc(card.due) - T0 >= timedelta(days=1)


@pytest.mark.parametrize("short_steps", [False, True])
def test_right_answers_leave_the_due_count_as_it_was_unless_steps_are_short(
    engine: Engine, short_steps: bool
) -> None:
    """Three questions due, answered right, and six new ones answered right: 20 minutes
    later nothing is due by default (it was nine with FSRS's own steps)."""
    ids = questions(engine, 9)
    with Session(engine) as session:
        scope = account(session, short_steps=short_steps)
        earlier = T0 - timedelta(days=30)
        for question in ids[:3]:
            review.record(scope, question, rating=4, source="quiz", at=earlier)
        assert review.due_count(scope, now=T0) == 3
        for n, question in enumerate(ids):
            review.record(scope, question, rating=3, source="quiz", at=T0 + timedelta(seconds=n))
        due = review.due_count(scope, now=T0 + timedelta(minutes=20))
        assert due == (6 if short_steps else 0)


def test_a_schedule_computed_again_follows_the_accounts_steps(engine: Engine) -> None:
    (question,) = questions(engine, 1)
    with Session(engine) as session:
        scope = account(session, short_steps=True)
        review.record(scope, question, rating=3, source="quiz", at=T0)
        user = session.exec(select(User).where(User.username == "steps-True")).one()
        user.short_learning_steps = False
        session.add(user)
        again = review.recompute(scope, question)
        assert again is not None and _utc(again.due) - T0 >= timedelta(days=1)


@pytest.mark.parametrize(
    ("wait", "when", "same_day"),
    [
        (timedelta(minutes=10), "in 10 min", True),
        (timedelta(seconds=20), "in 1 min", True),
        (timedelta(hours=3, minutes=10), "in 3 h", True),
        (timedelta(days=1), "in 1 day", False),
        (timedelta(days=12, hours=2), "in 12 days", False),
    ],
)
def test_when_a_question_comes_back_reads_plainly(
    wait: timedelta, when: str, same_day: bool
) -> None:
    back = review.NextReview(T0 + wait, wait)
    assert (back.when, back.same_day) == (when, same_day)
