"""Code exercises: what the learner may see of each (written by the importer), and the
reveals of their solutions. Submissions are runs (`Run.exercise_slug`); the reference, the
hidden tests and the mutants stay in the content folder and are never stored here."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from app.models.base import utcnow


class Exercise(SQLModel, table=True):
    """One exercise folder's public side, as imported from content/exercises/<slug>/."""

    id: int | None = Field(default=None, primary_key=True)
    slug: str = Field(unique=True, max_length=80)
    title: str = Field(max_length=200)
    topic_slug: str = Field(foreign_key="topic.slug", index=True, max_length=64)
    difficulty: str = Field(max_length=16)
    position: int
    items: str = Field(default="", max_length=1000)  # comma-separated slugs of the Q&A items
    entry_point: str = Field(max_length=120)
    statement_markdown: str = Field(sa_column=Column(Text, nullable=False))
    statement_html: str = Field(sa_column=Column(Text, nullable=False))  # rendered at import
    starter_code: str = Field(sa_column=Column(Text, nullable=False))
    # [{name, category, description}] of the visible tests, as JSON
    visible_tests: str = Field(sa_column=Column(Text, nullable=False))
    backends: str = Field(default="cpu,cuda", max_length=20)
    content_sha256: str = Field(max_length=64)

    @property
    def item_list(self) -> list[str]:
        return [s for s in self.items.split(",") if s]

    @property
    def backend_list(self) -> list[str]:
        return [b for b in self.backends.split(",") if b]


class SolutionReveal(SQLModel, table=True):
    """A learner (or a cookie-less client, by its owner key) asked for an exercise's solution."""

    id: int | None = Field(default=None, primary_key=True)
    exercise_slug: str = Field(max_length=80, index=True)
    learner_id: int | None = Field(
        default=None, foreign_key="learner.id", index=True, ondelete="CASCADE"
    )
    visitor: str = Field(max_length=64)
    revealed_at: datetime = Field(default_factory=utcnow)


class ExerciseDraft(SQLModel, table=True):
    """Code an account edited in an exercise's editor and has not reset: the page opens with
    it, on any device. Guests' drafts stay in their browser."""

    __table_args__ = (
        UniqueConstraint("learner_id", "exercise_slug", name="uq_exercisedraft_exercise"),
    )

    id: int | None = Field(default=None, primary_key=True)
    learner_id: int = Field(foreign_key="learner.id", index=True, ondelete="CASCADE")
    exercise_slug: str = Field(max_length=80)
    code: str = Field(sa_column=Column(Text, nullable=False))
    updated_at: datetime = Field(default_factory=utcnow)
