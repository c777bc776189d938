"""The learner's overview pages: the dashboard, and every note in full."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse

from app.deps import NowDep, ReaderDep, identify_for_page
from app.domain import InvalidInput
from app.exercises import review as exercise_review
from app.interview import readiness
from app.library import content_cache
from app.progress.progress import MASTERY_RULE
from app.reader import dashboard
from app.study import quizzes, review
from app.web.templating import render

router = APIRouter(include_in_schema=False, dependencies=[Depends(identify_for_page)])


@router.get("/dashboard")
def dashboard_page(
    request: Request,
    scope: ReaderDep,
    now: NowDep,
    interview: Annotated[
        date | None, Query(description="An interview date, for readiness.")
    ] = None,
) -> HTMLResponse:
    """Progress per deck and topic, activity, streak, where to go on, recent runs and
    quizzes, what is due for review, and readiness for an interview date."""
    catalogue = content_cache.snapshot(scope.session.connection()).catalogue
    board = dashboard.dashboard(scope, catalogue)
    if interview is not None and interview < now.date():
        raise InvalidInput("The interview date is in the past: choose today or a later day.")
    context = {
        "board": board,
        "catalogue": catalogue,
        "mastery_rule": MASTERY_RULE,
        "quizzes": quizzes.history(scope, limit=5),
        "due": review.due_count(scope, now=now),
        "due_exercises": exercise_review.due_count(scope, now=now),
        "interview": interview,
        "today": now.date(),
        "forecast": readiness.forecast(scope, catalogue, on=interview, now=now)
        if interview
        else None,
    }
    return render(request, "progress/dashboard.html", context)


@router.get("/notes")
def notes_page(request: Request, scope: ReaderDep) -> HTMLResponse:
    """Every note the learner keeps, in full, newest change first."""
    return render(request, "progress/notes.html", {"notes": dashboard.notes(scope)})
