"""The exercise page's parts that htmx and static/js/exercise.js swap in or send to: the
Submissions tab, a past submission's diff, the Solution section, and the account's draft.
The list and the page themselves are in exercise_pages.py."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request, Response
from fastapi.responses import HTMLResponse

from app.deps import (
    CurrentUser,
    ReaderDep,
    SettingsDep,
    WriterDep,
    identify_for_page,
)
from app.domain import MAX_DRAFT_CHARACTERS
from app.exercises import catalogue as exercises
from app.exercises import drafts, solutions, submissions
from app.exercises.code_diff import side_by_side
from app.web.templating import render

router = APIRouter(include_in_schema=False, dependencies=[Depends(identify_for_page)])


@router.get("/exercises/{slug}/submissions")
def submissions_tab(request: Request, slug: str, scope: ReaderDep) -> HTMLResponse:
    """The Submissions tab: the learner's past gradings of this exercise, newest first."""
    exercise = exercises.one(scope.session.connection(), slug)
    past = submissions.history(scope.session, scope.learner_id, slug) if scope.learner_id else []
    context = {"exercise": exercise, "past": past, "limit": submissions.HISTORY_LIMIT}
    return render(request, "exercises/_submissions.html", context)


@router.post("/exercises/{slug}/submissions/{submission_id}/diff")
def submission_diff(
    request: Request,
    slug: str,
    submission_id: str,
    scope: ReaderDep,
    code: Annotated[str, Form(max_length=MAX_DRAFT_CHARACTERS * 2)] = "",
) -> HTMLResponse:
    """A past submission beside the code in the editor now (sent as `code`)."""
    exercises.one(scope.session.connection(), slug)
    if not scope.learner_id:
        raise submissions.SubmissionNotFound(slug, submission_id)
    run = submissions.one_of_history(scope.session, scope.learner_id, slug, submission_id)
    context = {
        "diff": side_by_side(run.code, code),
        "diff_id": f"diff-{run.id}",
        "left_label": "That submission",
        "right_label": "Your code now",
    }
    return render(request, "exercises/_diff.html", context)


@router.get("/exercises/{slug}/solution")
def solution_section(
    request: Request, slug: str, scope: ReaderDep, settings: SettingsDep
) -> HTMLResponse:
    """The page's Solution section alone: what the page swaps in once the solution is
    revealed, and after a graded Submit (its words and buttons follow the learner's
    state)."""
    exercise = exercises.one(scope.session.connection(), slug)
    standing = solutions.standing(scope, settings.content_dir, slug)
    context = {
        "exercise": exercise,
        "solution": standing.solution,
        "solution_state": standing.state,
    }
    return render(request, "exercises/_solution.html", context)


@router.post("/exercises/{slug}/draft", status_code=204)
def keep_draft(
    slug: str,
    user: CurrentUser,
    scope: WriterDep,
    code: Annotated[str, Form(max_length=MAX_DRAFT_CHARACTERS * 2)] = "",
) -> Response:
    """Keep the code an account's editor holds for this exercise (its page sends it as the
    learner types). Guests' drafts stay in their browser."""
    exercises.one(scope.session.connection(), slug)
    drafts.keep(scope, slug, code=code)
    scope.session.commit()
    return Response(status_code=204)


@router.post("/exercises/{slug}/draft/discard", status_code=204)
def discard_draft(slug: str, user: CurrentUser, scope: WriterDep) -> Response:
    """Forget the draft: the editor is back to the starter."""
    exercises.one(scope.session.connection(), slug)
    drafts.discard(scope, slug)
    scope.session.commit()
    return Response(status_code=204)
