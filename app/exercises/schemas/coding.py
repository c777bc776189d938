"""Coding rounds in the JSON API: a timed exercise whose difficulty and result are shown
only once the round is over."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from app.exercises.coding_rounds import MAX_MINUTES, MIN_MINUTES, ROUND_MINUTES, RoundView
from app.exercises.schemas.exercises import ExercisePublic
from app.models import aware


class CodingRoundCreate(BaseModel):
    topic: str | None = Field(None, max_length=64, description="Draw from this topic only.")
    minutes: int = Field(ROUND_MINUTES, ge=MIN_MINUTES, le=MAX_MINUTES)


class FailingTest(BaseModel):
    name: str
    category: str
    message: str


class RoundResult(BaseModel):
    """The round's last submit before its deadline, as graded."""

    state: Literal["none", "grading", "graded"] = Field(
        description="none: nothing was submitted; grading: the last submit is still running."
    )
    submission_id: str | None
    verdict: str | None
    score: float | None
    failing_tests: list[FailingTest]


class CodingRoundPublic(BaseModel):
    """A round as it stands. `difficulty` and `result` stay null while it is open."""

    id: str
    status: Literal["waiting", "open", "closed"]
    minutes: int
    started_at: datetime | None
    deadline: datetime | None
    seconds_left: float | None = Field(description="By the server's clock; null once closed.")
    exercise: ExercisePublic | None = Field(
        description="Null while a mock interview's round waits for its prompts to be answered."
    )
    difficulty: Literal["easy", "medium", "hard"] | None
    result: RoundResult | None

    @classmethod
    def of(cls, view: RoundView) -> CodingRoundPublic:
        r, outcome = view.round, view.outcome
        result = None
        if outcome is not None:
            result = RoundResult(
                state=outcome.state,
                submission_id=outcome.run_id,
                verdict=outcome.verdict,
                score=outcome.score,
                failing_tests=[FailingTest(**t) for t in outcome.failing],
            )
        status = "closed" if view.closed else "open" if view.started else "waiting"
        return cls(
            id=r.id,
            status=status,
            minutes=r.minutes,
            started_at=aware(r.started_at) if r.started_at else None,
            deadline=aware(r.deadline) if r.deadline else None,
            seconds_left=view.seconds_left,
            exercise=ExercisePublic.of(view.exercise) if view.started else None,
            difficulty=view.difficulty,
            result=result,
        )
