"""Authoring insight for admins on the code exercises: each one's figures and the flag of
a flaky or wrong hidden test, as a page and as JSON, and any submission the flag names."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import HTMLResponse

from app.deps import AdminUser, SessionDep, identify
from app.exercises import stats as exercise_stats
from app.exercises import submission_insight
from app.exercises.schemas.stats import ExerciseStatsPublic
from app.exercises.stats import MOST_FAILING
from app.web.schemas import errors
from app.web.templating import render

router = APIRouter(dependencies=[Depends(identify)])

SortColumn = Literal[
    "exercise", "tried", "solve_rate", "submits", "time", "hints", "reveals", "flag"
]
Order = Literal["asc", "desc"]


@router.get("/admin/exercises", include_in_schema=False)
def exercise_insight(
    request: Request,
    session: SessionDep,
    admin: AdminUser,
    sort: SortColumn = "exercise",
    order: Order | None = None,
) -> HTMLResponse:
    """Every exercise's figures in a table sorted by one column (numbers: largest first)."""
    descending = (order or ("asc" if sort == "exercise" else "desc")) == "desc"
    stats = exercise_stats.exercise_stats(session)
    context = {
        "stats": exercise_stats.sorted_stats(stats, by=sort, descending=descending),
        "anyone": any(s.tried for s in stats),
        "sort": sort,
        "descending": descending,
        "most_failing": MOST_FAILING,
    }
    return render(request, "admin/exercises.html", context)


@router.get("/api/admin/exercises", tags=["admin"], responses=errors(401, 403))
def exercise_insight_json(session: SessionDep, admin: AdminUser) -> list[ExerciseStatsPublic]:
    """Every exercise's figures for authors, in the set's order (admins only)."""
    return [ExerciseStatsPublic.model_validate(s) for s in exercise_stats.exercise_stats(session)]


@router.get("/admin/submissions/{run_id}", include_in_schema=False)
def submission(
    request: Request,
    session: SessionDep,
    admin: AdminUser,
    run_id: Annotated[str, Path(max_length=32)],
) -> HTMLResponse:
    """One submission's code and tests, whoever made it."""
    view = submission_insight.submission(session, run_id)
    return render(request, "admin/submission.html", {"view": view})
