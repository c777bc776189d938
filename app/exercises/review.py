"""Re-solving the code exercises: each solved exercise is an FSRS card per learner, as each
answered question is (app/study/review.py), on a scheduler of its own (below). A solve
ends with a passing graded submit; it is rated from its submits, the hints shown and the
time it took (app/exercises/solve_rating.py), and a reveal of the solution is Again. The log
of review events is the source of truth: a card is its log replayed.

One event per solve: the first pass of an exercise, then one pass per due review. A pass
while the card is not due (a second passing submit minutes later, say) adds nothing."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache

from fsrs import Card, Rating, Scheduler
from sqlalchemy import func
from sqlalchemy import select as core_select
from sqlmodel import Session, col, select

from app.domain import LearnerScope
from app.exercises.solve_rating import AGAIN, Solve, rate_solve
from app.models import (
    Exercise,
    ExerciseCard,
    ExerciseReviewEvent,
    HintView,
    Learner,
    Run,
    SolutionReveal,
    aware,
)


@cache
def _solving_scheduler() -> Scheduler:
    # Re-solving an exercise is not a flash card: no learning steps minutes apart. The first
    # solve schedules a day or more ahead, and a lapse (a reveal) brings it back sooner.
    return Scheduler(learning_steps=(), relearning_steps=(), enable_fuzzing=False)


def schedule_solves(solves: Sequence[tuple[int, datetime]]) -> tuple[datetime, str]:
    """An exercise's re-solving card from its log of (rating, moment), oldest first: when
    it is due, and the card as JSON. The log must not be empty."""
    scheduler = _solving_scheduler()
    card = Card(card_id=0, due=aware(solves[0][1]))
    for rating, at in solves:
        card, _ = scheduler.review_card(card, Rating(rating), aware(at))
    return card.due, json.dumps(card.to_dict())


def solve_recall(card: str, when: datetime) -> float:
    """The chance, 0..1, of solving again at `when` an exercise scheduled as `card`."""
    return float(
        _solving_scheduler().get_card_retrievability(Card.from_dict(json.loads(card)), aware(when))
    )


class SolveSource:
    PRACTICE = "practice"  # the first solve
    REVIEW = "review"  # a solve of a due card
    REVEAL = "reveal"  # the solution shown on a solved exercise: a lapse


def record_solve(session: Session, run: Run) -> ExerciseReviewEvent | None:
    """Rate the solve a finished run ends, and move its card on (not committed). Only a
    learner's passing graded submit ends one, and only the first pass of an exercise or a
    pass once its card is due: None otherwise."""
    if run.learner_id is None or run.exercise_slug is None:
        return None
    if run.grading_mode != "submit" or run.grading_verdict != "passed":
        return None
    # Two passes finishing at once must not both count as the first solve (nor both
    # insert the card): the learner's row serialises them.
    session.get(Learner, run.learner_id, with_for_update=True)
    scope = LearnerScope(session, run.learner_id)
    slug = run.exercise_slug
    passed_at = aware(run.finished_at or run.created_at)
    card = card_of(scope, slug)
    if card is not None and aware(card.due) > passed_at:
        return None  # solved already and not yet due: part of a solve already counted
    since = _span_start(scope, slug, card)
    solve = _solve_between(scope, slug, since, run, passed_at)
    difficulty = session.exec(select(Exercise.difficulty).where(Exercise.slug == slug)).first()
    event = ExerciseReviewEvent(
        learner_id=scope.learner_id,
        exercise_slug=slug,
        rating=rate_solve(solve, difficulty or ""),
        source=SolveSource.PRACTICE if card is None else SolveSource.REVIEW,
        attempts=solve.attempts,
        hints=solve.hints,
        seconds=solve.seconds,
        reviewed_at=passed_at,
    )
    session.add(event)
    session.flush()
    recompute(scope, slug)
    return event


def record_reveal(
    session: Session, *, learner_id: int | None, slug: str, at: datetime
) -> ExerciseReviewEvent | None:
    """A reveal of a solved exercise's solution is a lapse: Again, once until the next solve
    (not committed). A reveal before the first solve rates that solve instead."""
    if learner_id is None:
        return None
    scope = LearnerScope(session, learner_id)
    if card_of(scope, slug) is None:
        return None
    last = _last_event(scope, slug)
    if last is not None and last.source == SolveSource.REVEAL:
        return None
    event = ExerciseReviewEvent(
        learner_id=learner_id,
        exercise_slug=slug,
        rating=AGAIN,
        source=SolveSource.REVEAL,
        reviewed_at=at,
    )
    session.add(event)
    session.flush()
    recompute(scope, slug)
    return event


def _span_start(scope: LearnerScope, slug: str, card: ExerciseCard | None) -> datetime | None:
    """Where the solve a pass ends began: the learner's last event on the exercise, or the
    moment its card fell due when that is later; None (the beginning) for a first solve."""
    last = _last_event(scope, slug)
    moments = [aware(m) for m in (last.reviewed_at if last else None, card and card.due) if m]
    return max(moments, default=None)


def _solve_between(
    scope: LearnerScope, slug: str, since: datetime | None, run: Run, passed_at: datetime
) -> Solve:
    """The submits, hints and reveals of one learner on one exercise in (since, the pass]."""
    runs = select(Run.grading_mode, Run.created_at).where(
        Run.learner_id == scope.learner_id,
        Run.exercise_slug == slug,
        col(Run.grading_verdict).is_not(None),
        col(Run.created_at) <= run.created_at,
    )
    hints = select(func.count()).where(
        HintView.learner_id == scope.learner_id,
        HintView.exercise_slug == slug,
        col(HintView.shown_at) <= passed_at,
    )
    reveals = select(func.count()).where(
        SolutionReveal.learner_id == scope.learner_id,
        SolutionReveal.exercise_slug == slug,
        col(SolutionReveal.revealed_at) <= passed_at,
    )
    if since is not None:
        runs = runs.where(col(Run.created_at) > since)
        hints = hints.where(col(HintView.shown_at) > since)
        reveals = reveals.where(col(SolutionReveal.revealed_at) > since)
    graded = list(scope.session.exec(runs))
    # Time counts from the first submission of either mode: Run is working on it too.
    first = min((aware(at) for _, at in graded), default=aware(run.created_at))
    return Solve(
        attempts=max(1, sum(mode == "submit" for mode, _ in graded)),
        hints=scope.session.exec(hints).one(),
        seconds=max(0, int((passed_at - first).total_seconds())),
        revealed=scope.session.exec(reveals).one() > 0,
    )


def recompute(scope: LearnerScope, slug: str) -> ExerciseCard | None:
    """The exercise's card again, from its log alone (None, and no card, without one)."""
    log = events(scope, slug)
    row = card_of(scope, slug)
    if not log:
        if row is not None:
            scope.session.delete(row)
            scope.session.flush()
        return None
    due, data = schedule_solves([(e.rating, e.reviewed_at) for e in log])
    if row is None:
        row = ExerciseCard(learner_id=scope.learner_id, exercise_slug=slug, due=due, card=data)
    else:
        row.due, row.card = due, data
    scope.session.add(row)
    scope.session.flush()
    return row


def events(scope: LearnerScope, slug: str | None = None) -> list[ExerciseReviewEvent]:
    """The learner's exercise review events, oldest first (one exercise's, or all)."""
    statement = select(ExerciseReviewEvent).where(
        ExerciseReviewEvent.learner_id == scope.learner_id
    )
    if slug is not None:
        statement = statement.where(ExerciseReviewEvent.exercise_slug == slug)
    order = (col(ExerciseReviewEvent.reviewed_at), col(ExerciseReviewEvent.id))
    return list(scope.session.exec(statement.order_by(*order)))


def _last_event(scope: LearnerScope, slug: str) -> ExerciseReviewEvent | None:
    log = events(scope, slug)
    return log[-1] if log else None


def card_of(scope: LearnerScope, slug: str) -> ExerciseCard | None:
    return scope.session.get(ExerciseCard, (scope.learner_id, slug))


@dataclass(frozen=True)
class NextReview:
    """When a solved exercise is next to be solved again, as its page says it."""

    due: datetime
    days: int  # whole days from now; 0 when due today or overdue

    @classmethod
    def of(cls, due: datetime, now: datetime) -> NextReview:
        due = aware(due)
        left = (due - now).total_seconds()
        return cls(due, 0 if left <= 0 else max(1, round(left / 86400)))

    @property
    def is_due(self) -> bool:
        return self.days == 0


@dataclass(frozen=True)
class DueExercise:
    slug: str
    title: str
    topic_slug: str
    difficulty: str
    due: datetime
    kind = "exercise"  # beside DueQuestion in the review queue

    @property
    def review_url(self) -> str:
        """The exercise opened from the starter, to solve again."""
        return f"/exercises/{self.slug}?review=1"


def due_exercises(scope: LearnerScope, *, now: datetime, limit: int = 30) -> list[DueExercise]:
    """The exercises due for re-solving now, the longest overdue first (those no longer in
    the content are left out)."""
    rows = scope.session.execute(
        core_select(
            col(Exercise.slug),
            col(Exercise.title),
            col(Exercise.topic_slug),
            col(Exercise.difficulty),
            col(ExerciseCard.due),
        )
        .join(ExerciseCard, col(ExerciseCard.exercise_slug) == col(Exercise.slug))
        .where(col(ExerciseCard.learner_id) == scope.learner_id, col(ExerciseCard.due) <= now)
        .order_by(col(ExerciseCard.due), col(Exercise.position))
        .limit(limit)
    )
    return [
        DueExercise(slug, title, topic, level, aware(due))
        for slug, title, topic, level, due in rows
    ]


def due_count(scope: LearnerScope, *, now: datetime) -> int:
    """How many of the learner's exercises are due for re-solving now."""
    return scope.session.exec(
        select(func.count())
        .select_from(ExerciseCard)
        .join(Exercise, col(Exercise.slug) == col(ExerciseCard.exercise_slug))
        .where(ExerciseCard.learner_id == scope.learner_id, col(ExerciseCard.due) <= now)
    ).one()


def recall_on(scope: LearnerScope, when: datetime) -> dict[str, float]:
    """slug → the chance of solving each carded exercise again at `when`."""
    rows = scope.session.exec(
        select(ExerciseCard.exercise_slug, ExerciseCard.card).where(
            ExerciseCard.learner_id == scope.learner_id
        )
    )
    return {slug: solve_recall(card, when) for slug, card in rows}
