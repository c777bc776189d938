"""Quiz attempts and spaced review (personal data, like app/models/people.py)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, Text
from sqlmodel import Field, SQLModel

from app.models.base import utcnow


class QuizAttempt(SQLModel, table=True):
    """One sitting of a quiz. The server owns its clock: `deadline` is when answers stop."""

    id: str = Field(primary_key=True, max_length=32)  # random hex; also the URL's id
    learner_id: int = Field(foreign_key="learner.id", index=True, ondelete="CASCADE")
    mode: str = Field(max_length=16)  # timed, practice
    title: str = Field(max_length=200)
    started_at: datetime = Field(default_factory=utcnow)
    deadline: datetime | None = None  # None: untimed
    closed_at: datetime | None = None  # submitted, or closed at its deadline
    score: int | None = None
    total: int


class AttemptQuestion(SQLModel, table=True):
    """A question as one attempt shows it: its place, its shuffled choices, the answer."""

    attempt_id: str = Field(foreign_key="quizattempt.id", primary_key=True, ondelete="CASCADE")
    position: int = Field(primary_key=True)  # from 1
    question_id: int = Field(foreign_key="question.id", index=True, ondelete="CASCADE")
    choice_order: str = Field(max_length=200)  # choice ids as shown, comma-separated
    shown_at: datetime | None = None
    choice_id: int | None = None  # the answer, once locked
    answered_at: datetime | None = None
    correct: bool | None = None


class ReviewEvent(SQLModel, table=True):
    """One recall of one question by one learner, rated as FSRS rates it: the log is the
    source of truth, and a card's schedule can always be computed again from it."""

    id: int | None = Field(default=None, primary_key=True)
    learner_id: int = Field(foreign_key="learner.id", index=True, ondelete="CASCADE")
    question_id: int = Field(foreign_key="question.id", index=True, ondelete="CASCADE")
    rating: int  # 1 Again, 2 Hard, 3 Good, 4 Easy
    source: str = Field(max_length=16)  # quiz, open (key points ticked), review
    reviewed_at: datetime = Field(default_factory=utcnow)


class ReviewCard(SQLModel, table=True):
    """A question's schedule for one learner, derived from its review events."""

    learner_id: int = Field(foreign_key="learner.id", primary_key=True, ondelete="CASCADE")
    question_id: int = Field(foreign_key="question.id", primary_key=True, ondelete="CASCADE")
    due: datetime = Field(index=True)
    card: str = Field(sa_column=Column(Text, nullable=False))  # the scheduler's card, as JSON
