"""Spaced review in the JSON API, for the asker (a guest by their cookie, or an account):
what is due now, questions and exercises interleaved, and readiness for an interview."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from fastapi import APIRouter, Depends, Query

from app.deps import NowDep, ReaderDep, identify
from app.domain import InvalidInput
from app.interview import readiness, review_queue
from app.interview.schemas.readiness import ReadinessPublic
from app.interview.schemas.review import ReviewPublic
from app.library import content_cache
from app.web.schemas import errors

router = APIRouter(
    prefix="/api/me", tags=["review"], dependencies=[Depends(identify)], responses=errors(401)
)


@router.get("/review")
def due_for_review(scope: ReaderDep, now: NowDep) -> ReviewPublic:
    """The questions and the exercises due now, the longest overdue first, and both in one
    queue with an exercise after every few questions. An exercise is reviewed by solving it
    again from the starter at its `url`; a passing submit there schedules its next review."""
    return ReviewPublic.of(review_queue.due_now(scope, now=now))


@router.get("/readiness", responses=errors(422))
def my_readiness(
    scope: ReaderDep,
    now: NowDep,
    interview: Annotated[date, Query(description="The interview date: today or later.")],
) -> ReadinessPublic:
    """Expected recall on the interview day (FSRS retrievability at 09:00 UTC): of the
    questions per topic and overall, and coding: of each exercise solved so far, now and
    on the day."""
    if interview < now.date():
        raise InvalidInput("The interview date is in the past: choose today or a later day.")
    catalogue = content_cache.snapshot(scope.session.connection()).catalogue
    return ReadinessPublic.of(readiness.forecast(scope, catalogue, on=interview, now=now))
