"""What is due for review now, questions and exercises together: the exercises spread
among the questions (one after every few), so that re-solving code is part of the session
and never a pile left at its end."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from app.domain import LearnerScope
from app.exercises import review as exercise_review
from app.exercises.review import DueExercise
from app.study import quizzes, review

EVERY = 3  # at most this many questions before the next due exercise
LIMIT = 30  # of each kind: as many as a review quiz takes

Q = TypeVar("Q")
E = TypeVar("E")


def interleave(questions: Sequence[Q], exercises: Sequence[E], every: int = EVERY) -> list[Q | E]:
    """Both lists in their own order, merged: exercise k follows question
    min(every·(k+1), ⌊(k+1)·n/(m+1)⌋) of n questions and m exercises, so they are spread
    evenly, at least one every `every` questions while any are left, and none after the
    last question (with more exercises than questions, several come together)."""
    n, m = len(questions), len(exercises)
    merged: list[Q | E] = []
    taken = 0
    for k, exercise in enumerate(exercises):
        after = min(every * (k + 1), (k + 1) * n // (m + 1))
        merged.extend(questions[taken:after])
        taken = max(taken, after)
        merged.append(exercise)
    merged.extend(questions[taken:])
    return merged


@dataclass(frozen=True)
class DueQuestion:
    question_id: int
    prompt: str
    item_slug: str
    kind = "question"


@dataclass(frozen=True)
class DueNow:
    questions: list[DueQuestion]
    exercises: list[DueExercise]
    queue: list[DueQuestion | DueExercise]  # both, interleaved


def due_now(scope: LearnerScope, *, now: datetime, limit: int = LIMIT) -> DueNow:
    """The questions and the exercises due now, the longest overdue first."""
    ids = review.due_questions(scope, now=now, limit=limit)
    prompts = quizzes.prompts_by_id(scope, ids)
    questions = [DueQuestion(q, *prompts[q]) for q in ids if q in prompts]
    exercises = exercise_review.due_exercises(scope, now=now, limit=limit)
    return DueNow(questions, exercises, interleave(questions, exercises))
