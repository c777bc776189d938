"""Quizzes in the browser: choose one, take it question by question against the server's
clock, and read the results. Plain forms that redirect, so they work without scripts;
htmx swaps only the question when it can."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.deps import NowDep, ReaderDep, WriterDep, identify_for_page
from app.domain import InvalidInput
from app.exercises import coding_rounds
from app.interview import mock, review_queue
from app.interview.mock import CODING_ROUND_BY_DEFAULT, SECONDS_PER_PROMPT
from app.library import content_cache
from app.study import quizzes
from app.study.quizzes import MAX_QUESTIONS, MIN_QUESTIONS, QuizMode, QuizRequest
from app.web.templating import is_htmx, render

router = APIRouter(include_in_schema=False, dependencies=[Depends(identify_for_page)])
TIME_CHOICES_MINUTES = (5, 10, 15, 20, 30, 45, 60)


@router.get("/quizzes")
def quiz_home(request: Request, scope: ReaderDep) -> HTMLResponse:
    """Choose a quiz; the attempts so far."""
    context = {
        "catalogue": content_cache.snapshot(scope.session.connection()).catalogue,
        "history": quizzes.history(scope),
        "min_questions": MIN_QUESTIONS,
        "max_questions": MAX_QUESTIONS,
        "minutes": TIME_CHOICES_MINUTES,
        "coding_round_by_default": CODING_ROUND_BY_DEFAULT,
        "coding_history": coding_rounds.history(scope),
    }
    return render(request, "quizzes/page.html", context)


@router.post("/quizzes")
def start_quiz(
    scope: WriterDep,
    now: NowDep,
    count: Annotated[int, Form(ge=1, le=MAX_QUESTIONS)] = 10,
    minutes: Annotated[int, Form(ge=1, le=180)] = 10,
    mode: Annotated[QuizMode, Form()] = QuizMode.timed,
    deck: Annotated[str, Form(max_length=64)] = "",
    topic: Annotated[list[str] | None, Form(max_length=40)] = None,
    coding_round: Annotated[bool, Form()] = False,
    code_prompts: Annotated[bool, Form()] = False,
) -> Response:
    """Start the quiz and go to its first question. A mock interview asked with
    `coding_round` ends with a coding round (the page's box is ticked by default); its
    prompts are conceptual ones unless `code_prompts` asks for code-reading ones too."""
    seconds = minutes * 60 if mode is QuizMode.timed else None
    request = QuizRequest(
        mode, count, seconds, deck or None, tuple(topic or ()), code_prompts=code_prompts
    )
    attempt = quizzes.create(scope, request, now=now)
    if mode is QuizMode.mock and coding_round:
        mock.add_coding_round(scope, attempt, deck=request.deck, topics=request.topics, now=now)
    scope.session.commit()
    return RedirectResponse(f"/quizzes/{attempt.id}", status_code=303)


@router.get("/quizzes/{quiz_id}")
def quiz_page(
    request: Request,
    quiz_id: str,
    scope: ReaderDep,
    now: NowDep,
    after: Annotated[int | None, Query(ge=1, le=MAX_QUESTIONS)] = None,
) -> Response:
    """The current question (in practice and review, `after` shows the one just answered,
    explained), or the results once the quiz is closed."""
    view = quizzes.load(scope, quiz_id, now=now)
    coding = None
    if view.attempt.mode == QuizMode.mock.value:
        coding = mock.coding_round(scope, quiz_id, now=now)
    if view.closed:
        scope.session.commit()  # closed at its deadline just now, perhaps
        return render(request, "quizzes/results.html", {"view": view, "coding": coding})
    quizzes.show(scope, view)
    scope.session.commit()
    context = {
        "view": view,
        "just_answered": after,
        "mock_seconds": SECONDS_PER_PROMPT,
        "coding": coding,
    }
    return render(request, "quizzes/attempt.html", context, fragment="quizzes/_question.html")


@router.post("/quizzes/{quiz_id}/answers")
def answer(
    request: Request,
    quiz_id: str,
    scope: ReaderDep,
    now: NowDep,
    position: Annotated[int, Form(ge=1, le=MAX_QUESTIONS)],
    choice: Annotated[str, Form(max_length=1)] = "",
) -> Response:
    """Lock in an answer: htmx gets the next question (or, in practice, this one explained)."""
    if not choice:
        raise InvalidInput("Choose an answer first (keys 1 to 4 pick one).")
    view = quizzes.answer(scope, quiz_id, position=position, letter=choice, now=now)
    if view.attempt.mode == QuizMode.timed.value:
        quizzes.show(scope, view)
    scope.session.commit()
    if not is_htmx(request):
        return RedirectResponse(f"/quizzes/{quiz_id}?after={position}", status_code=303)
    context = {"view": view, "just_answered": position}
    return render(request, "quizzes/_question.html", context, fragment="quizzes/_question.html")


@router.post("/quizzes/{quiz_id}/submit")
def submit(quiz_id: str, scope: ReaderDep, now: NowDep) -> Response:
    """End the quiz now and show the results."""
    quizzes.submit(scope, quiz_id, now=now)
    scope.session.commit()
    return RedirectResponse(f"/quizzes/{quiz_id}", status_code=303)


@router.get("/review")
def review_page(request: Request, scope: ReaderDep, now: NowDep) -> HTMLResponse:
    """What is due for review today, questions and exercises interleaved, and a way to
    start."""
    due = review_queue.due_now(scope, now=now, limit=MAX_QUESTIONS)
    return render(request, "quizzes/review.html", {"due": due, "max_questions": MAX_QUESTIONS})
