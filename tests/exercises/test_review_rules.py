"""Re-solving exercises (app/exercises/review.py): a passing graded submit ends a
solve, rated from the submits, hints and reveals since the last one; one event per solve
or due review; the card is the log replayed; a reveal on a solved exercise is Again."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.domain import Identity, LearnerScope
from app.exercises import review
from app.models import ExerciseCard, ExerciseReviewEvent, HintView, Run, SolutionReveal
from app.platform import learners

T0 = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
SLUG = "stable-softmax"  # an easy exercise
MINUTE = timedelta(minutes=1)


@pytest.fixture
def scope(engine: Engine):  # type: ignore[no-untyped-def]
    with Session(engine) as session:
        yield learners.resolve_or_create(session, Identity(visitor="learner"))


def graded(
    scope: LearnerScope, at: datetime, *, mode: str = "submit", passed: bool = False
) -> ExerciseReviewEvent | None:
    """A graded submission made at `at` and finished a second later; what it recorded."""
    run = Run(
        id=secrets.token_hex(16),
        visitor="learner",
        learner_id=scope.learner_id,
        code_sha256="0" * 64,
        code_bytes=1,
        backend_requested="cpu",
        status="done",
        verdict="ok",
        exercise_slug=SLUG,
        grading_mode=mode,
        grading_verdict="passed" if passed else "failed",
        created_at=at,
        finished_at=at + timedelta(seconds=1),
    )
    scope.session.add(run)
    scope.session.flush()
    return review.record_solve(scope.session, run)


def hint(scope: LearnerScope, at: datetime, index: int = 0) -> None:
    scope.session.add(
        HintView(
            exercise_slug=SLUG,
            learner_id=scope.learner_id,
            visitor="learner",
            hint_index=index,
            level="concept",
            category="values",
            shown_at=at,
        )
    )


def log(scope: LearnerScope) -> list[tuple[int, str, int, int]]:
    return [(e.rating, e.source, e.attempts, e.hints) for e in review.events(scope)]


def test_a_first_try_pass_is_easy_and_schedules_days_ahead(scope: LearnerScope) -> None:
    assert graded(scope, T0, mode="run") is None  # Run checks: no solve
    event = graded(scope, T0 + 2 * MINUTE, passed=True)
    assert event is not None
    assert (event.rating, event.source, event.attempts, event.hints) == (4, "practice", 1, 0)
    assert event.seconds == 2 * 60 + 1  # from the first submission of either mode
    card = review.card_of(scope, SLUG)
    assert card is not None and card.due.replace(tzinfo=UTC) > T0 + timedelta(days=3)


def test_failed_submits_and_hints_since_the_start_lower_the_rating(scope: LearnerScope) -> None:
    graded(scope, T0)
    hint(scope, T0 + MINUTE)
    graded(scope, T0 + 2 * MINUTE)
    event = graded(scope, T0 + 3 * MINUTE, passed=True)
    assert event is not None and (event.attempts, event.hints) == (3, 1)
    assert event.rating == 2  # an easy exercise: 3 submits is more than Good allows


def test_a_second_pass_of_the_same_solve_adds_no_event(scope: LearnerScope) -> None:
    graded(scope, T0, passed=True)
    due = review.card_of(scope, SLUG)
    assert due is not None
    before = (due.due, due.card)
    assert graded(scope, T0 + 5 * MINUTE, passed=True) is None
    assert graded(scope, T0 + 3 * timedelta(days=1), passed=True) is None  # still not due
    assert len(review.events(scope)) == 1
    after = review.card_of(scope, SLUG)
    assert after is not None and (after.due, after.card) == before


def test_a_pass_once_due_is_a_review_counted_from_the_due_time(scope: LearnerScope) -> None:
    graded(scope, T0, passed=True)
    card = review.card_of(scope, SLUG)
    assert card is not None
    due = card.due.replace(tzinfo=UTC)
    graded(scope, due - timedelta(hours=1))  # a failed try before it was due: not this review
    graded(scope, due + timedelta(days=1))
    event = graded(scope, due + timedelta(days=1, minutes=15), passed=True)
    assert event is not None and event.source == "review"
    assert (event.attempts, event.seconds) == (2, 15 * 60 + 1)
    assert event.rating == 3  # two submits within the easy pace's 20 minutes
    later = review.card_of(scope, SLUG)
    assert later is not None and later.due.replace(tzinfo=UTC) > due + timedelta(days=2)


def test_a_reveal_during_the_first_solve_rates_it_again(scope: LearnerScope) -> None:
    graded(scope, T0)
    scope.session.add(
        SolutionReveal(
            exercise_slug=SLUG,
            learner_id=scope.learner_id,
            visitor="learner",
            revealed_at=T0 + MINUTE,
        )
    )
    event = graded(scope, T0 + 2 * MINUTE, passed=True)
    assert event is not None and event.rating == 1 and event.source == "practice"
    card = review.card_of(scope, SLUG)
    assert card is not None and card.due.replace(tzinfo=UTC) <= T0 + timedelta(days=1, minutes=5)


def test_a_reveal_on_a_solved_exercise_is_one_again_until_the_next_solve(
    scope: LearnerScope,
) -> None:
    graded(scope, T0, passed=True)
    first_due = review.card_of(scope, SLUG)
    assert first_due is not None
    first_due_at = first_due.due
    at = T0 + timedelta(days=1)
    lapse = review.record_reveal(scope.session, learner_id=scope.learner_id, slug=SLUG, at=at)
    assert lapse is not None and (lapse.rating, lapse.source) == (1, "reveal")
    again = review.record_reveal(
        scope.session, learner_id=scope.learner_id, slug=SLUG, at=at + MINUTE
    )
    assert again is None  # the same lapse
    card = review.card_of(scope, SLUG)
    assert card is not None and card.due < first_due_at  # brought back sooner
    assert [(r, s) for r, s, _, _ in log(scope)] == [(4, "practice"), (1, "reveal")]


def test_a_reveal_before_any_solve_records_no_event(scope: LearnerScope) -> None:
    assert (
        review.record_reveal(scope.session, learner_id=scope.learner_id, slug=SLUG, at=T0) is None
    )
    assert review.card_of(scope, SLUG) is None


def test_the_card_is_the_log_replayed(scope: LearnerScope) -> None:
    graded(scope, T0, passed=True)
    card = review.card_of(scope, SLUG)
    assert card is not None
    graded(scope, card.due.replace(tzinfo=UTC) + MINUTE, passed=True)
    kept = review.card_of(scope, SLUG)
    assert kept is not None
    stored = (kept.due, kept.card)
    scope.session.delete(kept)
    scope.session.flush()
    rebuilt = review.recompute(scope, SLUG)
    assert rebuilt is not None and (rebuilt.due, rebuilt.card) == stored


def test_guests_without_a_learner_and_other_exercises_are_left_alone(engine: Engine) -> None:
    with Session(engine) as session:
        run = Run(
            id="a" * 32,
            visitor="token-client",
            code_sha256="0" * 64,
            code_bytes=1,
            backend_requested="cpu",
            exercise_slug=SLUG,
            grading_mode="submit",
            grading_verdict="passed",
            finished_at=T0,
        )
        session.add(run)
        session.flush()
        assert review.record_solve(session, run) is None
        assert session.exec(select(ExerciseCard)).all() == []
