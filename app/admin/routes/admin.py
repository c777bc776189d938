"""Authoring insight for admins: how every question performs."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from app.admin import authoring
from app.admin.authoring import MIN_ANSWERS_TO_FLAG, MISSED_BY_MOST
from app.deps import AdminUser, SessionDep, identify
from app.web.templating import render

router = APIRouter(include_in_schema=False, dependencies=[Depends(identify)])


@router.get("/admin/questions")
def question_insight(request: Request, session: SessionDep, admin: AdminUser) -> HTMLResponse:
    """Each question's share of right answers, discrimination and option picks, flagged."""
    context = {
        "stats": authoring.question_stats(session),
        "min_answers": MIN_ANSWERS_TO_FLAG,
        "missed_share": MISSED_BY_MOST,
    }
    return render(request, "admin/questions.html", context)
