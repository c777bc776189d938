"""The learner's overview pages: the dashboard, and every note in full."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from app.deps import ReaderDep, count_due, identify
from app.services import content_cache, dashboard
from app.services.progress import MASTERY_RULE
from app.web.templating import render

router = APIRouter(include_in_schema=False, dependencies=[Depends(identify), Depends(count_due)])


@router.get("/dashboard")
async def dashboard_page(request: Request, scope: ReaderDep) -> HTMLResponse:
    """Progress per deck and topic, activity, streak, where to go on, recent runs."""
    catalogue = content_cache.snapshot(scope.session.connection()).catalogue
    board = dashboard.dashboard(scope, catalogue)
    context = {"board": board, "catalogue": catalogue, "mastery_rule": MASTERY_RULE}
    return render(request, "progress/dashboard.html", context)


@router.get("/notes")
async def notes_page(request: Request, scope: ReaderDep) -> HTMLResponse:
    """Every note the learner keeps, in full, newest change first."""
    return render(request, "progress/notes.html", {"notes": dashboard.notes(scope)})
