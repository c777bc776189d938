"""Spaced review in the JSON API: what is due now for the asker (a guest by their cookie,
or an account), questions and exercises interleaved."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from app.deps import NowDep, ReaderDep, identify
from app.schemas import errors
from app.schemas.review import ReviewPublic
from app.services import review_queue

router = APIRouter(
    prefix="/api/me", tags=["review"], dependencies=[Depends(identify)], responses=errors(401)
)


@router.get("/review")
def due_for_review(scope: ReaderDep, now: NowDep) -> ReviewPublic:
    """The questions and the exercises due now, the longest overdue first, and both in one
    queue with an exercise after every few questions. An exercise is reviewed by solving it
    again from the starter at its `url`; a passing submit there schedules its next review."""
    return ReviewPublic.of(review_queue.due_now(scope, now=now))
