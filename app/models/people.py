"""Accounts and progress. Every table here holds personal data: the personal services read
it through a LearnerScope, which filters each query to one learner."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import Column, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from app.models.base import utcnow


class User(SQLModel, table=True):
    """A person with an account."""

    id: int | None = Field(default=None, primary_key=True)
    username: str = Field(unique=True, max_length=40)  # stored lower-case
    password_hash: str = Field(max_length=200)  # argon2id, with its parameters and salt
    created_at: datetime = Field(default_factory=utcnow)
    password_changed_at: datetime = Field(default_factory=utcnow)
    is_admin: bool = False  # sees the authoring pages; granted by `backprop admin grant`
    # Spaced review's short learning steps: a new question answered right comes back minutes
    # later (FSRS's own steps) instead of a day or more later (app/study/review.py).
    short_learning_steps: bool = False


class Learner(SQLModel, table=True):
    """Whose progress it is: a guest's browser (visitor key) or a user, never both."""

    id: int | None = Field(default=None, primary_key=True)
    user_id: int | None = Field(
        default=None, foreign_key="user.id", unique=True, ondelete="CASCADE"
    )
    visitor: str | None = Field(default=None, unique=True, max_length=64)
    created_at: datetime = Field(default_factory=utcnow)


class LoginSession(SQLModel, table=True):
    """A signed-in browser. The cookie holds a random token; only its SHA-256 is kept."""

    token_sha256: str = Field(primary_key=True, max_length=64)
    user_id: int = Field(foreign_key="user.id", index=True, ondelete="CASCADE")
    created_at: datetime = Field(default_factory=utcnow)
    expires_at: datetime


class ApiToken(SQLModel, table=True):
    """A bearer token from POST /api/token; only its SHA-256 is kept."""

    token_sha256: str = Field(primary_key=True, max_length=64)
    user_id: int = Field(foreign_key="user.id", index=True, ondelete="CASCADE")
    created_at: datetime = Field(default_factory=utcnow)
    expires_at: datetime


class ItemProgress(SQLModel, table=True):
    """What one learner did with one item; `status` is derived from the rest."""

    learner_id: int = Field(foreign_key="learner.id", primary_key=True, ondelete="CASCADE")
    item_id: int = Field(foreign_key="item.id", primary_key=True, ondelete="CASCADE")
    status: str = Field(default="new", max_length=16)  # new, seen, practising, mastered
    bookmarked: bool = False
    note: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    visits: int = 0
    runs: int = 0
    runs_ok: int = 0
    first_visit_at: datetime | None = None
    last_visit_at: datetime | None = None
    updated_at: datetime = Field(default_factory=utcnow)


class RecallCheck(SQLModel, table=True):
    """A learner's own verdict on one quiz prompt: could they answer it?"""

    id: int | None = Field(default=None, primary_key=True)
    learner_id: int = Field(foreign_key="learner.id", index=True, ondelete="CASCADE")
    item_id: int = Field(foreign_key="item.id", index=True, ondelete="CASCADE")
    prompt: int  # the prompt's position from 1; 0 is the item's own question
    knew: bool
    answered_at: datetime = Field(default_factory=utcnow)


class Activity(SQLModel, table=True):
    """What a learner did on one UTC day, for the calendar and the streak."""

    learner_id: int = Field(foreign_key="learner.id", primary_key=True, ondelete="CASCADE")
    day: date = Field(primary_key=True)
    views: int = 0
    runs: int = 0
    checks: int = 0


class Draft(SQLModel, table=True):
    """Code an account edited in one of an item's samples and has not reset: its editor
    opens with it, on any device. Guests' drafts stay in their browser."""

    __table_args__ = (
        UniqueConstraint("learner_id", "item_id", "sample_index", name="uq_draft_sample"),
    )

    id: int | None = Field(default=None, primary_key=True)
    learner_id: int = Field(foreign_key="learner.id", index=True, ondelete="CASCADE")
    item_id: int = Field(foreign_key="item.id", ondelete="CASCADE")
    sample_index: int
    code: str = Field(sa_column=Column(Text, nullable=False))
    updated_at: datetime = Field(default_factory=utcnow)


class RecoveryCode(SQLModel, table=True):
    """One of an account's one-time codes for setting a new password without the old one
    (there is no email). Only its SHA-256 is kept: each code is 60 random bits."""

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="user.id", index=True, ondelete="CASCADE")
    code_sha256: str = Field(max_length=64)
    used_at: datetime | None = None
    created_at: datetime = Field(default_factory=utcnow)
