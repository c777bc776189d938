"""The navigation's count of cards due for review, which every page of a returning browser
shows: a column expression, so that a page reading its learner's standing in one statement
(app/reader/item_standing.py, app/exercises/page_standing.py) counts it in the same one."""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, func
from sqlalchemy import select as core_select
from sqlmodel import col

from app.models import Exercise, ExerciseCard, Learner, ReviewCard


def due_count_of(owner: Any) -> Any:
    """Due cards of the learner `owner` picks out, questions' and exercises' together,
    counted (a column expression, with the bound parameter `now`; built once by its callers:
    every page of a returning browser asks, as the navigation shows it). An exercise's card
    counts while the exercise is in the content."""
    questions = (
        core_select(func.count())
        .select_from(ReviewCard)
        .join(Learner, col(Learner.id) == col(ReviewCard.learner_id))
        .where(owner, col(ReviewCard.due) <= bindparam("now"))
        .scalar_subquery()
    )
    exercises = (
        core_select(func.count())
        .select_from(ExerciseCard)
        .join(Learner, col(Learner.id) == col(ExerciseCard.learner_id))
        .join(Exercise, col(Exercise.slug) == col(ExerciseCard.exercise_slug))
        .where(owner, col(ExerciseCard.due) <= bindparam("now"))
        .scalar_subquery()
    )
    return questions + exercises
