"""Timed coding rounds: one exercise against a deadline, inside a mock interview or on its
own (personal data, like app/models/quizzes.py)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, Text
from sqlmodel import Field, SQLModel

from app.models.base import utcnow


class CodingRound(SQLModel, table=True):
    """One exercise solved against the server's clock. A mock interview's round starts when
    the learner reaches it (after the prompts), a coding interview's at once; submissions
    after `deadline` are refused, and the round ends there with `run_id`, the last submit
    accepted before it."""

    id: str = Field(primary_key=True, max_length=32)  # random hex; also the URL's id
    learner_id: int = Field(foreign_key="learner.id", index=True, ondelete="CASCADE")
    # The mock interview it belongs to; None for a coding interview on its own.
    attempt_id: str | None = Field(
        default=None, foreign_key="quizattempt.id", unique=True, ondelete="CASCADE"
    )
    exercise_slug: str = Field(max_length=80, index=True)
    minutes: int  # the round's length, fixed when it is made
    created_at: datetime = Field(default_factory=utcnow)
    started_at: datetime | None = None
    deadline: datetime | None = None  # started_at + minutes
    closed_at: datetime | None = None  # finished early, or closed at its deadline
    # The graded submission: the last submit of the round (None: nothing submitted).
    run_id: str | None = Field(default=None, foreign_key="run.id", ondelete="SET NULL")
    # The follow-up prompt about the code (its index in the exercise's follow-ups), and the
    # key points the learner ticked for it ("1,3"); None until graded.
    followup_index: int | None = None
    followup_covered: str | None = Field(default=None, max_length=100)
    # The code in the round's editor, saved as the learner types: a reload gets it back, and
    # when the round ends with it unsubmitted it is graded as the round's last submission
    # (app/exercises/round_drafts.py), so time running out never throws code away.
    draft_code: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    draft_saved_at: datetime | None = None
    # When the draft left at the end was sent to be graded: it is sent once, however many
    # pages ask for the round at the same moment.
    draft_graded_at: datetime | None = None
