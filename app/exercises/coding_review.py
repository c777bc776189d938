"""A mock interview's coding round as a review of its exercise (app/exercises/
review.py keeps the log and the cards): graded with the mock, the round counts as
an exercise review event of source `mock`.

A passing graded submit already ended a solve when it finished (review.record_solve,
rated from its submits, hints and time); that event is the round's, and is marked as the
mock's rather than counted twice. A round that did not pass, on an exercise the learner had
solved, is a lapse: Again, as a reveal is. A round on an exercise never solved, or whose
last submit is still being graded, changes nothing here."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import col, select

from app.domain import LearnerScope
from app.exercises import review
from app.exercises.coding_rounds import RoundView
from app.exercises.review import SolveSource
from app.exercises.solve_rating import AGAIN
from app.models import ExerciseReviewEvent, Run, aware

MOCK = "mock"  # ExerciseReviewEvent.source of a mock interview's coding round


def record_round(
    scope: LearnerScope, view: RoundView, *, at: datetime
) -> ExerciseReviewEvent | None:
    """Count the closed round as a review of its exercise (not committed); None when it
    changes nothing."""
    outcome, slug = view.outcome, view.exercise.slug
    if outcome is None or outcome.state == "grading":
        return None
    if outcome.verdict == "passed" and outcome.run_id is not None:
        return _mark_solve(scope, slug, outcome.run_id)
    if review.card_of(scope, slug) is None:
        return None  # never solved: nothing is scheduled to lapse
    event = ExerciseReviewEvent(
        learner_id=scope.learner_id,
        exercise_slug=slug,
        rating=AGAIN,
        source=MOCK,
        attempts=_submits(scope, view),
        reviewed_at=at,
    )
    scope.session.add(event)
    scope.session.flush()
    review.recompute(scope, slug)
    return event


def _mark_solve(scope: LearnerScope, slug: str, run_id: str) -> ExerciseReviewEvent | None:
    """The solve the round's passing submit ended, now marked as the mock's. None when the
    pass counted for nothing (the card was not due yet)."""
    run = scope.session.get(Run, run_id)
    if run is None or run.finished_at is None:
        return None
    passed_at = aware(run.finished_at)
    candidates = scope.session.exec(
        select(ExerciseReviewEvent).where(
            ExerciseReviewEvent.learner_id == scope.learner_id,
            ExerciseReviewEvent.exercise_slug == slug,
            col(ExerciseReviewEvent.source).in_((SolveSource.PRACTICE, SolveSource.REVIEW)),
        )
    )
    event = next((e for e in candidates if aware(e.reviewed_at) == passed_at), None)
    if event is not None:
        event.source = MOCK
        scope.session.add(event)
        scope.session.flush()
    return event


def _submits(scope: LearnerScope, view: RoundView) -> int:
    """The round's graded submits: the learner's on its exercise between its start and end."""
    started, closed = view.round.started_at, view.round.closed_at
    if started is None or closed is None:
        return 0
    rows = scope.session.exec(
        select(Run.id).where(
            Run.learner_id == scope.learner_id,
            Run.exercise_slug == view.exercise.slug,
            Run.grading_mode == "submit",
            col(Run.created_at) >= started,
            col(Run.created_at) <= closed,
        )
    )
    return len(list(rows))
