"""Quizzes: build an attempt, take answers against the server's clock, close and grade it.

The server owns the clock: an attempt stores its deadline, an answer after it is refused,
and an attempt abandoned in a closed tab is closed and graded the next time anyone reads it.
Answer keys and explanations never leave here for a question whose answer is not locked:
views carry them only once the question is answered in practice mode, or the attempt is
closed. Choices are shown shuffled per attempt and named by letter in that order, so
nothing in a response points at the key."""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from sqlmodel import col, select

from app import metrics
from app.domain import DomainError, InvalidInput, LearnerScope, NotFound
from app.models import AttemptQuestion, Choice, Item, Question, QuizAttempt, aware
from app.progress import study
from app.study import review

MIN_QUESTIONS, MAX_QUESTIONS = 5, 30
MIN_MOCK_PROMPTS, MAX_MOCK_PROMPTS = 3, 10
MIN_SECONDS, MAX_SECONDS = 60, 3 * 3600


class QuizMode(StrEnum):
    timed = "timed"  # a deadline; results at the end
    practice = "practice"  # untimed; the key and explanations after each answer
    review = "review"  # the questions due for review; feedback after each answer
    mock = "mock"  # open-answer prompts against a timer, graded by key points at the end

    @property
    def explains_each_answer(self) -> bool:
        return self.value in EXPLAINED_AS_YOU_GO


class QuizNotFound(NotFound):
    def __init__(self, attempt_id: str) -> None:
        super().__init__(f"No quiz has the id '{attempt_id}'.")


class QuizClosed(DomainError):
    """An answer for an attempt that has ended (its time ran out, or it was submitted)."""

    status = 409


class AnswerLocked(DomainError):
    status = 409


@dataclass(frozen=True)
class QuizRequest:
    """What the learner asked for."""

    mode: QuizMode
    count: int
    seconds: int | None  # timed only
    deck: str | None = None
    topics: tuple[str, ...] = ()
    # A mock interview's prompts are conceptual unless this asks for code-reading ones too.
    code_prompts: bool = False

    def checked(self) -> QuizRequest:
        if self.mode is QuizMode.mock:
            if not MIN_MOCK_PROMPTS <= self.count <= MAX_MOCK_PROMPTS:
                raise InvalidInput(
                    f"A mock interview has {MIN_MOCK_PROMPTS} to {MAX_MOCK_PROMPTS} prompts."
                )
            return self
        if not MIN_QUESTIONS <= self.count <= MAX_QUESTIONS:
            raise InvalidInput(
                f"A quiz has {MIN_QUESTIONS} to {MAX_QUESTIONS} questions, not {self.count}."
            )
        timed = self.mode is QuizMode.timed
        if timed and (self.seconds is None or not MIN_SECONDS <= self.seconds <= MAX_SECONDS):
            raise InvalidInput(
                f"A timed quiz lasts {MIN_SECONDS // 60} to {MAX_SECONDS // 60} minutes."
            )
        return self


def create(
    scope: LearnerScope, request: QuizRequest, *, now: datetime, rng: random.Random | None = None
) -> QuizAttempt:
    """A new attempt over questions drawn from the deck and topics asked for (not committed)."""
    request = request.checked()
    rng = rng or random.SystemRandom()
    statement = select(Question.id).join(Item, col(Item.id) == col(Question.item_id))
    if request.deck:
        statement = statement.where(Item.deck_slug == request.deck)
    if request.topics:
        statement = statement.where(col(Item.topic_slug).in_(request.topics))
    if request.mode is QuizMode.mock and not request.code_prompts:
        # A mock's prompts are answered aloud: "what does this code print?" read out is a
        # guess at a number, not an interview answer (questions that show code are those).
        statement = statement.where(Question.code == "")
    if request.mode is QuizMode.review:
        chosen = review.due_questions(scope, now=now, limit=request.count)
        if not chosen:
            raise InvalidInput("Nothing is due for review now: come back when the next is due.")
    else:
        pool = [q for q in scope.session.exec(statement) if q is not None]
        if not pool:
            raise InvalidInput("No questions match that deck and those topics; choose more.")
        chosen = rng.sample(pool, min(request.count, len(pool)))
    attempt = QuizAttempt(
        id=secrets.token_hex(16),
        learner_id=scope.learner_id,
        mode=request.mode.value,
        title=_title(request, len(chosen)),
        started_at=now,
        deadline=now + timedelta(seconds=request.seconds) if request.seconds else None,
        total=len(chosen),
    )
    scope.session.add(attempt)
    scope.session.flush()
    for position, question_id in enumerate(chosen, start=1):
        ids = list(scope.session.exec(select(Choice.id).where(Choice.question_id == question_id)))
        rng.shuffle(ids)
        scope.session.add(
            AttemptQuestion(
                attempt_id=attempt.id,
                position=position,
                question_id=question_id,
                choice_order=",".join(str(i) for i in ids),
            )
        )
    scope.session.flush()
    return attempt


def _title(request: QuizRequest, count: int) -> str:
    kind = {
        QuizMode.timed: "Timed quiz",
        QuizMode.practice: "Practice",
        QuizMode.review: "Review",
        QuizMode.mock: "Mock interview",
    }
    noun = "prompt" if request.mode is QuizMode.mock else "question"
    return f"{kind[request.mode]} · {count} {noun}{'' if count == 1 else 's'}"


def load(scope: LearnerScope, attempt_id: str, *, now: datetime) -> AttemptView:
    """The learner's attempt as it stands, shown (see _attempt)."""
    return build_view(scope, _attempt(scope, attempt_id, now=now), now)


def _attempt(scope: LearnerScope, attempt_id: str, *, now: datetime) -> QuizAttempt:
    """The learner's attempt; one whose deadline passed is closed and graded now (not
    committed). Someone else's attempt answers like no attempt at all."""
    attempt = scope.session.get(QuizAttempt, attempt_id)
    if attempt is None or attempt.learner_id != scope.learner_id:
        raise QuizNotFound(attempt_id)
    if attempt.closed_at is None and _past(attempt, now):
        _close(scope, attempt, at=aware(attempt.deadline))  # type: ignore[arg-type]
    return attempt


def show(scope: LearnerScope, view: AttemptView) -> None:
    """Note when the current question was first shown (for the time it took)."""
    current = view.current
    if current is None or view.closed:
        return
    row = scope.session.get(AttemptQuestion, (view.attempt.id, current.position))
    if row is not None and row.shown_at is None:
        row.shown_at = view.now
        scope.session.add(row)


def answer(
    scope: LearnerScope, attempt_id: str, *, position: int, letter: str, now: datetime
) -> AttemptView:
    """Lock in one answer (not committed)."""
    attempt = _attempt(scope, attempt_id, now=now)
    if attempt.closed_at is not None:
        closed_at = aware(attempt.closed_at)
        raise QuizClosed(
            f"This quiz closed at {closed_at:%H:%M:%S} UTC, so that answer was not counted; "
            "your answers before then were scored."
        )
    row = scope.session.get(AttemptQuestion, (attempt_id, position))
    if row is None:
        raise InvalidInput(f"This quiz has no question {position}.")
    if row.choice_id is not None:
        raise AnswerLocked(f"Question {position} is already answered; answers are locked.")
    order = [int(i) for i in row.choice_order.split(",")]
    index = LETTERS.find(letter.upper()) if len(letter) == 1 else -1
    if not 0 <= index < len(order):
        raise InvalidInput(f"Choose one of {', '.join(LETTERS[: len(order)])}.")
    choice = scope.session.get(Choice, order[index])
    row.choice_id = order[index]
    row.answered_at = now
    row.shown_at = row.shown_at or now
    row.correct = bool(choice and choice.correct)
    scope.session.add(row)
    seconds = (now - aware(row.shown_at)).total_seconds()
    rating = review.rating_for_answer(correct=row.correct, seconds=seconds)
    review.record(scope, row.question_id, rating=rating, source=review.ReviewSource.QUIZ, at=now)
    # A quiz answer is a recall of the item's prompt too: it counts towards mastery.
    question = scope.session.get(Question, row.question_id)
    item = scope.session.get(Item, question.item_id) if question else None
    if question is not None and item is not None:
        study.record_question_recall(
            scope, item, position=question.position, knew=row.correct, now=now
        )
    return build_view(scope, attempt, now)


def submit(scope: LearnerScope, attempt_id: str, *, now: datetime) -> AttemptView:
    """End the attempt now and grade it (not committed); submitting twice changes nothing."""
    attempt = _attempt(scope, attempt_id, now=now)
    if attempt.closed_at is None:
        _close(scope, attempt, at=now)
        metrics.QUIZ_SUBMISSIONS.labels(attempt.mode).inc()
    return build_view(scope, attempt, now)


def prompts_by_id(scope: LearnerScope, question_ids: list[int]) -> dict[int, tuple[str, str]]:
    """question id → (prompt, item slug), for those of these questions that exist."""
    rows = scope.session.exec(
        select(Question.id, Question.prompt, Item.slug)
        .join(Item, col(Item.id) == col(Question.item_id))
        .where(col(Question.id).in_(question_ids))
    )
    return {qid: (prompt, slug) for qid, prompt, slug in rows if qid is not None}


def history(scope: LearnerScope, limit: int = 20) -> list[QuizAttempt]:
    return list(
        scope.session.exec(
            select(QuizAttempt)
            .where(QuizAttempt.learner_id == scope.learner_id)
            .order_by(col(QuizAttempt.started_at).desc())
            .limit(limit)
        )
    )


def _past(attempt: QuizAttempt, now: datetime) -> bool:
    return attempt.deadline is not None and now >= aware(attempt.deadline)


def _close(scope: LearnerScope, attempt: QuizAttempt, *, at: datetime) -> None:
    rows = scope.session.exec(
        select(AttemptQuestion).where(AttemptQuestion.attempt_id == attempt.id)
    )
    attempt.score = sum(1 for r in rows if r.correct)
    attempt.closed_at = at
    scope.session.add(attempt)
    scope.session.flush()


# How an attempt is shown: each question with its choices in the attempt's order, named by
# letter, and its key and explanations only once the question is locked.

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
    # When the answer brings the question back (shown with the answer, in practice and review).
    next_review: review.NextReview | None = None


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
    explained = attempt.mode in EXPLAINED_AS_YOU_GO
    answered_at = {
        row.question_id: row.answered_at for row, _, _ in rows if row.choice_id is not None
    }
    coming_back = (
        review.next_reviews(scope, {q: at for q, at in answered_at.items() if at})
        if explained and answered_at
        else {}
    )
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
                next_review=coming_back.get(row.question_id) if revealed else None,
            )
        )
    return AttemptView(attempt=attempt, questions=shown, now=now)
