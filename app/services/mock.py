"""Mock interviews: open-answer prompts one after another, each against its own timer; at
the end the learner grades every answer against its key points, and each grade becomes a
review and a recall check, as open answers on an item page do."""

from __future__ import annotations

from datetime import datetime

from app.domain import DomainError, InvalidInput, LearnerScope
from app.models import AttemptQuestion, Item, Question
from app.services import practice, quizzes
from app.services.quiz_views import AttemptView

SECONDS_PER_PROMPT = 120  # the timer each prompt shows; running over is allowed, and shown


def _mock(scope: LearnerScope, attempt_id: str, now: datetime) -> AttemptView:
    view = quizzes.load(scope, attempt_id, now=now)
    if view.attempt.mode != quizzes.QuizMode.mock.value:
        raise InvalidInput("That is not a mock interview.")
    if view.closed:
        raise quizzes.QuizClosed("This mock interview is already graded.")
    return view


def move_on(scope: LearnerScope, attempt_id: str, *, position: int, now: datetime) -> AttemptView:
    """The learner has answered prompt `position` (aloud or on paper): on to the next."""
    view = _mock(scope, attempt_id, now)
    current = view.current
    if current is None or current.position != position:
        raise quizzes.AnswerLocked("That prompt is already behind you; answer the current one.")
    row = scope.session.get(AttemptQuestion, (attempt_id, position))
    assert row is not None
    row.shown_at = row.shown_at or now
    row.answered_at = now
    scope.session.add(row)
    scope.session.flush()
    return quizzes.load(scope, attempt_id, now=now)


def grade(
    scope: LearnerScope, attempt_id: str, *, covered: dict[int, list[int]], now: datetime
) -> AttemptView:
    """Grade every prompt by the key points ticked, and close the interview (not committed)."""
    view = _mock(scope, attempt_id, now)
    if view.current is not None:
        raise DomainError("Answer every prompt before grading.")
    passed = 0
    for shown in view.questions:
        row = scope.session.get(AttemptQuestion, (attempt_id, shown.position))
        question = scope.session.get(Question, row.question_id) if row else None
        item = scope.session.get(Item, question.item_id) if question else None
        assert row is not None and question is not None and item is not None
        total = len(question.key_point_list)
        ticked = sorted({n for n in covered.get(shown.position, []) if 1 <= n <= total})
        good = len(ticked) * 2 >= total
        passed += good
        row.correct = good
        scope.session.add(row)
        # Graded as an open answer on the item's page is: a review and a recall check.
        practice.record_open_answer(
            scope, item, position=question.position, covered=ticked, now=now
        )
    view.attempt.score, view.attempt.closed_at = passed, now
    scope.session.add(view.attempt)
    scope.session.flush()
    return quizzes.load(scope, attempt_id, now=now)
