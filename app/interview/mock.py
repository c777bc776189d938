"""Mock interviews: open-answer prompts one after another, each against its own timer, then
(when asked for) a timed coding round on one exercise; at the end the learner reads the
grader's verdict and grades every answer, and the follow-up about the code, against its
key points. Each prompt's grade becomes a review and a recall check, as open answers on an
item page do."""

from __future__ import annotations

import random
from datetime import datetime

from app.domain import DomainError, InvalidInput, LearnerScope
from app.exercises import coding_review, coding_rounds
from app.exercises.coding_rounds import RoundView
from app.models import AttemptQuestion, CodingRound, Item, Question, QuizAttempt
from app.study import practice, quizzes
from app.study.quizzes import AttemptView

SECONDS_PER_PROMPT = 120  # the timer each prompt shows; running over is allowed, and shown
# A mock interview includes a coding round unless the learner leaves it out: interviews for
# deep-learning roles nearly always have one, and a rehearsal that skips it flatters. It is
# an option rather than the rule for someone rehearsing the spoken part on a phone.
CODING_ROUND_BY_DEFAULT = True


def add_coding_round(
    scope: LearnerScope,
    attempt: QuizAttempt,
    *,
    deck: str | None,
    topics: tuple[str, ...],
    minutes: int = coding_rounds.ROUND_MINUTES,
    now: datetime,
    rng: random.Random | None = None,
) -> CodingRound:
    """The mock interview's coding round, on an exercise of its deck and topics (not
    committed). Its clock starts when the learner reaches it, after the prompts."""
    exercise = coding_rounds.choose(scope, deck=deck, topics=topics, now=now, rng=rng)
    return coding_rounds.create(
        scope, exercise, minutes=minutes, attempt_id=attempt.id, start=False, now=now, rng=rng
    )


def coding_round(scope: LearnerScope, attempt_id: str, *, now: datetime) -> RoundView | None:
    return coding_rounds.of_attempt(scope, attempt_id, now=now)


def start_coding_round(scope: LearnerScope, attempt_id: str, *, now: datetime) -> RoundView:
    """Every prompt is answered: the coding round's clock starts now (not committed)."""
    view = _mock(scope, attempt_id, now)
    if view.current is not None:
        raise quizzes.AnswerLocked("Answer every prompt first; the coding round comes after.")
    found = coding_rounds.of_attempt(scope, attempt_id, now=now)
    if found is None:
        raise InvalidInput("This mock interview has no coding round.")
    return coding_rounds.begin(scope, found.round.id, now=now)


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
    scope: LearnerScope,
    attempt_id: str,
    *,
    covered: dict[int, list[int]],
    followup: list[int] | None = None,
    now: datetime,
) -> AttemptView:
    """Grade every prompt by the key points ticked, and the coding round's follow-up by
    those of `followup`; close the interview (not committed)."""
    view = _mock(scope, attempt_id, now)
    if view.current is not None:
        raise DomainError("Answer every prompt before grading.")
    round_view = coding_rounds.of_attempt(scope, attempt_id, now=now)
    if round_view is not None:
        if not round_view.closed:
            raise DomainError("Finish the coding round before grading.")
        coding_rounds.grade_followup(scope, round_view, covered=followup or [])
        # The round is a review of its exercise: a pass its solve, a failure a lapse.
        coding_review.record_round(scope, round_view, at=now)
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
