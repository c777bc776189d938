"""The JSON API of quizzes: start one, read it, answer, submit. The server's clock decides:
an answer after the deadline is refused; a quiz past its deadline reads as closed."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from app.deps import NowDep, ReaderDep, WriterDep, identify
from app.study import quizzes
from app.study.quizzes import QuizRequest
from app.study.schemas import AnswerCreate, QuizCreate, QuizPublic
from app.web.schemas import errors

router = APIRouter(
    prefix="/api/quizzes",
    tags=["quizzes"],
    dependencies=[Depends(identify)],
    responses=errors(400, 401, 403, 404, 413, 422),
)


@router.post("", status_code=201)
def start_quiz(body: QuizCreate, scope: WriterDep, now: NowDep) -> QuizPublic:
    """Draw the questions (shuffled choices, no keys) and start the clock."""
    request = QuizRequest(
        mode=body.mode,
        count=body.count,
        seconds=body.seconds if body.mode is quizzes.QuizMode.timed else None,
        deck=body.deck,
        topics=tuple(body.topics),
        code_prompts=body.code_prompts,
    )
    attempt = quizzes.create(scope, request, now=now)
    view = quizzes.load(scope, attempt.id, now=now)
    scope.session.commit()
    return QuizPublic.of(view)


@router.get("/{quiz_id}")
def get_quiz(quiz_id: str, scope: ReaderDep, now: NowDep) -> QuizPublic:
    """The quiz as it stands: keys only for questions whose answer is locked."""
    view = quizzes.load(scope, quiz_id, now=now)
    scope.session.commit()  # a quiz past its deadline was closed just now
    return QuizPublic.of(view)


@router.post("/{quiz_id}/answers", responses=errors(409))
def answer_question(quiz_id: str, body: AnswerCreate, scope: ReaderDep, now: NowDep) -> QuizPublic:
    """Lock in one answer; 409 after the deadline or for an answered question."""
    view = quizzes.answer(scope, quiz_id, position=body.question_id, letter=body.choice_id, now=now)
    scope.session.commit()
    return QuizPublic.of(view)


@router.post("/{quiz_id}/submit")
def submit_quiz(quiz_id: str, scope: ReaderDep, now: NowDep) -> QuizPublic:
    """End the quiz: the score, and every question with its key and explanations."""
    view = quizzes.submit(scope, quiz_id, now=now)
    scope.session.commit()
    return QuizPublic.of(view)
