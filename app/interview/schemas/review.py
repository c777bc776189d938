"""Spaced review in the JSON API: what is due now, questions and exercises interleaved."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from app.exercises.review import DueExercise
from app.interview.review_queue import DueNow, DueQuestion


class DueEntry(BaseModel):
    """One thing to review: a question (answer it in a review quiz) or an exercise (solve it
    again from the starter at `url`)."""

    kind: Literal["question", "exercise"]
    url: str = Field(description="The page to review it on.")
    question_id: int | None = None
    prompt: str | None = None
    item: str | None = Field(None, description="The question's item slug.")
    exercise: str | None = Field(None, description="The exercise's slug.")
    title: str | None = None
    difficulty: str | None = None
    due: datetime | None = Field(None, description="When the exercise fell due.")

    @classmethod
    def of(cls, entry: DueQuestion | DueExercise) -> DueEntry:
        if isinstance(entry, DueExercise):
            return cls(
                kind="exercise",
                url=entry.review_url,
                exercise=entry.slug,
                title=entry.title,
                difficulty=entry.difficulty,
                due=entry.due,
            )
        return cls(
            kind="question",
            url=f"/items/{entry.item_slug}",
            question_id=entry.question_id,
            prompt=entry.prompt,
            item=entry.item_slug,
        )


class ReviewPublic(BaseModel):
    """What is due now: counts of each kind, and both in the order to review them."""

    due_questions: int
    due_exercises: int
    queue: list[DueEntry]

    @classmethod
    def of(cls, due: DueNow) -> ReviewPublic:
        return cls(
            due_questions=len(due.questions),
            due_exercises=len(due.exercises),
            queue=[DueEntry.of(e) for e in due.queue],
        )
