"""How an attempt is shown: each question with its choices in the attempt's order, named by
letter, and its key and explanations only once the question is locked."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlmodel import col, select

from app.domain import LearnerScope
from app.models import AttemptQuestion, Choice, Item, Question, QuizAttempt, aware

LETTERS = "ABCD"
EXPLAINED_AS_YOU_GO = ("practice", "review")  # modes that reveal each answer at once


@dataclass(frozen=True)
class ShownChoice:
    letter: str
    text: str
    correct: bool | None = None  # None until the question is locked
    why: str | None = None


@dataclass(frozen=True)
class ShownQuestion:
    """A question as this attempt shows it, with its key only once locked."""

    position: int
    prompt: str
    item_slug: str
    item_title: str
    choices: list[ShownChoice]
    answer: str | None  # the letter chosen
    correct: bool | None  # known once revealed
    revealed: bool
    seconds: float | None  # from first shown to answered
    done: bool = False  # answered (or, in a mock interview, moved past)
    model_answer: str | None = None  # a mock interview's, once every prompt is done
    key_points: tuple[str, ...] = ()
    code: str = ""  # shown with the prompt (empty for most questions)
    code_html: str = ""  # the same, highlighted at import


@dataclass(frozen=True)
class AttemptView:
    attempt: QuizAttempt
    questions: list[ShownQuestion]
    now: datetime

    @property
    def closed(self) -> bool:
        return self.attempt.closed_at is not None

    @property
    def current(self) -> ShownQuestion | None:
        """The first question not yet done, or None when all are."""
        return next((q for q in self.questions if not q.done), None)

    @property
    def seconds_left(self) -> float | None:
        if self.attempt.deadline is None or self.closed:
            return None
        return max(0.0, (aware(self.attempt.deadline) - self.now).total_seconds())


def build_view(scope: LearnerScope, attempt: QuizAttempt, now: datetime) -> AttemptView:
    session = scope.session
    rows = list(
        session.exec(
            select(AttemptQuestion, Question, Item)
            .join(Question, col(Question.id) == col(AttemptQuestion.question_id))
            .join(Item, col(Item.id) == col(Question.item_id))
            .where(AttemptQuestion.attempt_id == attempt.id)
            .order_by(col(AttemptQuestion.position))
        )
    )
    ids = [int(i) for row, _, _ in rows for i in row.choice_order.split(",")]
    choices = {c.id: c for c in session.exec(select(Choice).where(col(Choice.id).in_(ids)))}
    closed = attempt.closed_at is not None
    # A mock interview shows model answers and key points once every prompt is done.
    grading = attempt.mode == "mock" and all(row.answered_at for row, _, _ in rows)
    shown = []
    for row, question, item in rows:
        order = [choices[int(i)] for i in row.choice_order.split(",")]
        answered = row.choice_id is not None
        revealed = closed or (answered and attempt.mode in EXPLAINED_AS_YOU_GO)
        letters = {c.id: LETTERS[n] for n, c in enumerate(order)}
        seconds = None
        if row.answered_at and row.shown_at:
            seconds = (aware(row.answered_at) - aware(row.shown_at)).total_seconds()
        shown.append(
            ShownQuestion(
                position=row.position,
                prompt=question.prompt,
                item_slug=item.slug,
                item_title=item.title,
                choices=[
                    ShownChoice(
                        letters[c.id],
                        c.text,
                        c.correct if revealed else None,
                        c.why if revealed else None,
                    )
                    for c in order
                ],
                answer=letters.get(row.choice_id) if row.choice_id else None,
                correct=row.correct if revealed else None,
                revealed=revealed,
                seconds=seconds,
                done=row.answered_at is not None,
                model_answer=question.model_answer if grading else None,
                key_points=tuple(question.key_point_list) if grading else (),
                code=question.code,
                code_html=question.code_html,
            )
        )
    return AttemptView(attempt=attempt, questions=shown, now=now)
