"""Code exercises: what the learner may see of each (written by the importer), the
reveals of their solutions and the hints shown, and the re-solving schedule of each solved
exercise. Submissions are runs (`Run.exercise_slug`); the reference, the
hidden tests and the mutants stay in the content folder and are never stored here."""

from __future__ import annotations

import ast
import functools
import json
from datetime import datetime
from typing import Any

from sqlalchemy import Column, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from app.models.base import utcnow


@functools.lru_cache(maxsize=256)
def _left_to_write(starter: str, entry_point: str) -> tuple[str, ...]:
    """The starter's public top-level functions and classes whose body raises
    NotImplementedError, in its order: many exercises ask for more than their entry point
    (softmax and log_softmax; a BPE trainer and its encoder). The entry point alone when the
    starter leaves none (a given function to rewrite) or does not parse. Kept per starter:
    the page names them on every request."""
    try:
        tree = ast.parse(starter)
    except SyntaxError:
        return (entry_point,)
    left = tuple(
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and not node.name.startswith("_")
        and any(
            isinstance(inner, ast.Raise)
            and inner.exc is not None
            and "NotImplementedError" in ast.unparse(inner.exc)
            for inner in ast.walk(node)
        )
    )
    return left or (entry_point,)


EXERCISE_DIFFICULTIES = ("easy", "medium", "hard")  # an exercise's own scale (content/README.md)


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
    # [{prompt, key_points}] from followups.yml: what an interviewer asks about the code
    # once it is graded (a coding round's follow-up), as JSON.
    followups: str = Field(default="[]", sa_column=Column(Text, nullable=False, default="[]"))
    # How the hidden tests were proven (mutation.json, mutants/, alternatives/), as JSON:
    # {made, killed, equivalent, score, seeds, proven, authored, alternatives}.
    suite_record: str = Field(default="{}", sa_column=Column(Text, nullable=False, default="{}"))
    content_sha256: str = Field(max_length=64)

    @property
    def suite(self) -> dict[str, Any]:
        found: dict[str, Any] = json.loads(self.suite_record or "{}")
        return found

    @property
    def to_write(self) -> tuple[str, ...]:
        """What the learner writes, as the page names it: the starter's definitions left to
        them (see `_left_to_write`)."""
        return _left_to_write(self.starter_code, self.entry_point)

    @property
    def item_list(self) -> list[str]:
        return [s for s in self.items.split(",") if s]

    @property
    def backend_list(self) -> list[str]:
        return [b for b in self.backends.split(",") if b]

    @property
    def followup_list(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = json.loads(self.followups or "[]")
        return found


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


class HintView(SQLModel, table=True):
    """A hint of an exercise shown to a learner (or to a cookie-less client, by its owner
    key): recorded the first time each is shown, with its level and the failing category it
    answers. Hints lower a solve's rating and its status ("solved with hints")."""

    __table_args__ = (
        UniqueConstraint("visitor", "exercise_slug", "hint_index", name="uq_hintview_hint"),
    )

    id: int | None = Field(default=None, primary_key=True)
    exercise_slug: str = Field(max_length=80, index=True)
    learner_id: int | None = Field(
        default=None, foreign_key="learner.id", index=True, ondelete="CASCADE"
    )
    visitor: str = Field(max_length=64)  # the learner's visitor key, or the owner key
    hint_index: int  # position in the exercise's hints.yml
    level: str = Field(max_length=16)  # concept, approach, step
    category: str = Field(max_length=32)  # the test category it answers
    shown_at: datetime = Field(default_factory=utcnow)


class ExerciseReviewEvent(SQLModel, table=True):
    """One solve of an exercise, rated as FSRS rates a recall: from the attempts, the hints
    and the time it took; a reveal is Again. The log is the source of truth for the card."""

    id: int | None = Field(default=None, primary_key=True)
    learner_id: int = Field(foreign_key="learner.id", index=True, ondelete="CASCADE")
    exercise_slug: str = Field(max_length=80, index=True)
    rating: int  # 1 Again, 2 Hard, 3 Good, 4 Easy
    source: str = Field(max_length=16)  # practice, review, reveal, mock
    attempts: int = 0  # submissions in this solve
    hints: int = 0  # hints shown in this solve
    seconds: int = 0  # from the first submission (or the page) to the passing one
    reviewed_at: datetime = Field(default_factory=utcnow)


class ExerciseCard(SQLModel, table=True):
    """A solved exercise's re-solving schedule for one learner (from the starter again),
    derived from its review events."""

    learner_id: int = Field(foreign_key="learner.id", primary_key=True, ondelete="CASCADE")
    exercise_slug: str = Field(max_length=80, primary_key=True)
    due: datetime = Field(index=True)
    card: str = Field(sa_column=Column(Text, nullable=False))  # the scheduler's card, as JSON
