"""Browser pages of the code exercises: the list with its filters, and one exercise with
its editor, Run and Submit (which speak the JSON API from static/js/exercise.js)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Query, Request, Response
from fastapi.responses import HTMLResponse
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.deps import (
    CurrentUser,
    EngineDep,
    IdentityDep,
    LearnerDep,
    ReaderDep,
    RunQueueDep,
    SettingsDep,
    WriterDep,
    app_state,
    identify_for_page,
)
from app.domain import MAX_DRAFT_CHARACTERS, Identity, InvalidFilter, LearnerScope
from app.exercises import catalogue as exercises
from app.exercises import drafts, hints, solutions, submissions
from app.exercises import review as exercise_review
from app.exercises import status as exercise_status
from app.exercises.code_diff import side_by_side
from app.exercises.schemas.exercises import SubmissionPublic
from app.library import content_cache
from app.platform import learners
from app.web.templating import render

router = APIRouter(include_in_schema=False, dependencies=[Depends(identify_for_page)])
DIFFICULTIES = ("easy", "medium", "hard")
STATUS_LABELS = exercise_status.LABELS
Filter = Annotated[str | None, Query(max_length=64)]


def _choice(value: str | None, allowed: tuple[str, ...] | set[str], what: str) -> str | None:
    """An empty <select> sends '': no filter. Anything else must be one of `allowed`."""
    value = (value or "").strip() or None
    if value is not None and value not in allowed:
        raise InvalidFilter(f"{what} must be one of {', '.join(sorted(allowed))}, not '{value}'.")
    return value


@router.api_route("/exercises", methods=["GET", "HEAD"])
def exercise_list(
    request: Request,
    engine: EngineDep,
    learner: LearnerDep,
    topic: Filter = None,
    difficulty: Filter = None,
    status: Filter = None,
    q: Annotated[str | None, Query(max_length=exercises.MAX_QUERY_LENGTH)] = None,
) -> HTMLResponse:
    """Every exercise, narrowed by topic, difficulty and the learner's status on it, and by
    a search of titles and statements."""
    with engine.connect() as connection:
        catalogue = content_cache.snapshot(connection).catalogue
        chosen = {
            "topic": _choice(topic, {t.slug for t in catalogue.topics}, "Topic"),
            "difficulty": _choice(difficulty, DIFFICULTIES, "Difficulty"),
            "status": _choice(status, tuple(STATUS_LABELS), "Status"),
        }
        query = " ".join(exercises.search_terms(q))
        rows = exercises.listing(connection, _learner_id(learner), **chosen, query=query)
    context = {
        "catalogue": catalogue,
        "rows": rows,
        "chosen": chosen,
        "query": (q or "").strip(),
        "difficulties": DIFFICULTIES,
        "status_labels": STATUS_LABELS,
    }
    return render(request, "exercises/list.html", context, fragment="exercises/_results.html")


def _learner_id(learner: LearnerScope | None) -> int | None:
    return learner.learner_id if learner is not None else None


@router.api_route("/exercises/{slug}", methods=["GET", "HEAD"])
async def exercise_page(
    request: Request,
    slug: str,
    identity: IdentityDep,
    engine: EngineDep,
    queue: RunQueueDep,
    settings: SettingsDep,
    review: Annotated[bool, Query(description="Solve again from the starter.")] = False,
) -> HTMLResponse:
    """The statement, the starter in the editor (or an account's draft, except in review,
    which starts from the starter), Run and Submit, the results, the hints shown so far, the
    solution once revealed (not in review), and when it is due for re-solving once solved."""
    sandbox = await queue.status()  # before any query: the page waits on nothing else
    clock = app_state(request).clock  # read in the thread: on PostgreSQL it is a query
    context = await asyncio.to_thread(
        _page_context, engine, identity, slug, settings.content_dir, review=review, now=clock
    )
    page = {**context, "sandbox": sandbox}
    return render(request, "exercises/detail.html", page)


def _page_context(
    engine: Engine,
    identity: Identity,
    slug: str,
    content_dir: Path,
    *,
    review: bool,
    now: Callable[[], datetime],
) -> dict[str, object]:
    with engine.connect() as connection:
        exercise = exercises.one(connection, slug)
        snapshot = content_cache.snapshot(connection)
        linked = [r for r in snapshot.rows if r.slug in exercise.item_list]
    context: dict[str, object] = {
        "exercise": exercise,
        "visible_tests": exercises.visible_tests(exercise),
        "items": linked,
        "catalogue": snapshot.catalogue,
        "account_drafts": identity.signed_in,
        "draft": None,
        "review_mode": review,
        "next_review": None,
        "hints": hints.unseen(content_dir, slug),
        "solution": None,
        "solution_state": "review" if review else "open",
        "seen_before": False,
        "last_result": None,
    }
    if not identity.may_have_records:
        return context  # a first request has done nothing yet: no query for its standing
    with Session(engine) as session:
        scope = learners.resolve(session, identity)
        if scope is None:
            return context
        context["next_review"] = exercise_review.next_review(scope, slug, now=now())
        # An account's draft follows it (a guest's stays in the browser); a review starts
        # from the starter, so the saved draft is left as it is.
        if identity.signed_in and not review:
            context["draft"] = drafts.draft_of(scope, slug)
        context["hints"] = hints.state(scope, content_dir, slug)
        # A review is solved from memory: a solution revealed before stays behind its
        # button, and opening it again counts as a lapse (exercise_review.record_reveal).
        standing = solutions.standing(scope, content_dir, slug, review=review)
        context["solution"] = standing.solution
        context["solution_state"] = standing.state
        context["seen_before"] = standing.seen_before
        # The latest grading's results, shown again after a reload (a review starts afresh).
        latest = submissions.history(session, scope.learner_id, slug, limit=1)
        if latest and not review:
            context["last_result"] = SubmissionPublic.of(latest[0].run).model_dump(mode="json")
    return context


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
