"""Accounts and one's own data: users, tokens, progress, the dashboard's figures."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from app.accounts.passwords import MAX_PASSWORD_LENGTH
from app.models import ItemProgress
from app.progress.progress import Status
from app.progress.study import MAX_NOTE_LENGTH
from app.reader.dashboard import Bar, Dashboard


class UserCreate(BaseModel):
    """A new account: a username (3-40 of a-z 0-9 . _ -) and a password of 8 or more."""

    username: str = Field(max_length=200)
    # One over the limit, so the service (not the schema) says what the limit is.
    password: str = Field(max_length=MAX_PASSWORD_LENGTH + 1)


class UserPublic(BaseModel):
    id: int
    username: str
    created_at: datetime


class NewUser(UserPublic):
    recovery_codes: list[str] = Field(
        description="One-time codes that set a new password at /forgot; shown only here."
    )


class Token(BaseModel):
    access_token: str
    token_type: str = "bearer"
    expires_in: int = Field(description="Seconds until the token expires.")


class ItemProgressPublic(BaseModel):
    """One's own progress on one item (an item never touched reads `new`)."""

    item: str
    status: str
    bookmarked: bool
    note: str
    visits: int
    runs: int
    runs_ok: int

    @classmethod
    def of(cls, slug: str, row: ItemProgress | None) -> ItemProgressPublic:
        return cls(
            item=slug,
            status=row.status if row else Status.new.value,
            bookmarked=bool(row and row.bookmarked),
            note=row.note if row else "",
            visits=row.visits if row else 0,
            runs=row.runs if row else 0,
            runs_ok=row.runs_ok if row else 0,
        )


class ItemProgressUpdate(BaseModel):
    """Fields to change; those left out stay as they are."""

    bookmarked: bool | None = None
    note: str | None = Field(None, max_length=MAX_NOTE_LENGTH * 2)


class ItemRef(BaseModel):
    deck: str
    number: int
    slug: str
    title: str


class GroupProgress(BaseModel):
    """Progress over a deck or a topic."""

    slug: str
    title: str
    items: int
    seen: int
    practising: int
    mastered: int

    @classmethod
    def of(cls, bar: Bar) -> GroupProgress:
        return cls(
            slug=bar.slug,
            title=bar.title,
            items=bar.total,
            seen=bar.seen,
            practising=bar.practising,
            mastered=bar.mastered,
        )


class ActivityDay(BaseModel):
    date: str
    views: int
    practice: int


class RecentRun(BaseModel):
    id: str
    item: ItemRef | None
    verdict: str | None
    status: str
    backend: str | None
    wall_ms: int | None
    created_at: datetime


class ProgressPublic(BaseModel):
    """The dashboard's figures."""

    items: int
    status_counts: dict[str, int]
    decks: list[GroupProgress]
    topics: list[GroupProgress]
    streak_days: int
    practice_days: int
    activity: list[ActivityDay]
    continue_: ItemRef | None = Field(alias="continue")
    bookmarks: list[ItemRef]
    recent_runs: list[RecentRun]

    model_config = {"populate_by_name": True, "serialize_by_alias": True}

    @classmethod
    def of(cls, board: Dashboard) -> ProgressPublic:
        def ref(item: Any) -> ItemRef | None:
            if item is None:
                return None
            return ItemRef(
                deck=item.deck_slug, number=item.number, slug=item.slug, title=item.title
            )

        return cls(
            items=board.items,
            status_counts={s.value: board.totals[s.value] for s in Status},
            decks=[GroupProgress.of(b) for b in board.decks],
            topics=[GroupProgress.of(b) for b in board.topics],
            streak_days=board.streak_days,
            practice_days=board.practice_days,
            activity=[
                ActivityDay(date=c.day.isoformat(), views=c.views, practice=c.practice)
                for c in board.calendar
                if c.views or c.practice
            ],
            continue_=ref(board.continue_item),
            bookmarks=[r for r in map(ref, board.bookmarks) if r],
            recent_runs=[
                RecentRun(
                    id=run.id,
                    item=ref(item),
                    verdict=run.verdict,
                    status=run.status,
                    backend=run.backend,
                    wall_ms=run.wall_ms,
                    created_at=run.created_at,
                )
                for run, item in board.recent_runs
            ],
        )


class AccountExport(BaseModel):
    username: str
    created_at: str
    password_changed_at: str


class ProgressExport(BaseModel):
    item: str | None
    status: str
    bookmarked: bool
    note: str
    visits: int
    runs: int
    runs_ok: int
    first_visit_at: str | None
    last_visit_at: str | None


class CheckExport(BaseModel):
    item: str | None
    prompt: int
    knew: bool
    answered_at: str


class ActivityExport(BaseModel):
    date: str
    views: int
    runs: int
    checks: int


class QuizExport(BaseModel):
    id: str
    mode: str
    title: str
    started_at: str
    closed_at: str | None
    score: int | None
    total: int


class CodingRoundExport(BaseModel):
    id: str
    mock: str | None = Field(description="The mock interview it was part of, if any.")
    exercise: str
    minutes: int
    started_at: str | None
    deadline: str | None
    closed_at: str | None
    submission: str | None = Field(description="The graded submission (one of `runs`).")
    followup_covered: list[int] | None = Field(
        description="The follow-up's key points the learner ticked; null until graded."
    )


class ReviewExport(BaseModel):
    question: str
    rating: int
    source: str
    reviewed_at: str


class RunExport(BaseModel):
    id: str
    item: str | None
    sample: int | None
    created_at: str
    backend: str | None
    device: str | None
    verdict: str | None
    exit_code: int | None
    wall_ms: int | None
    code_sha256: str
    code: str = Field(description="The code as it ran (empty for runs made before it was kept).")
    stdout: str
    stderr: str
    exercise: str | None = Field(None, description="A submission: the exercise's slug.")
    mode: str | None = Field(None, description="A submission: run (visible tests) or submit.")
    grading: dict[str, Any] | None = Field(
        None, description="A submission's grading: verdict, score, every test's result."
    )


class RevealExport(BaseModel):
    exercise: str
    revealed_at: str


class HintExport(BaseModel):
    exercise: str
    hint: int = Field(description="Its position in the exercise's hints.")
    level: str
    category: str
    shown_at: str


class ExerciseReviewExport(BaseModel):
    """One solve of an exercise (or a reveal that was a lapse), as its card was scheduled."""

    exercise: str
    rating: int = Field(description="1 Again, 2 Hard, 3 Good, 4 Easy.")
    source: str = Field(description="practice (the first solve), review, reveal or mock.")
    attempts: int = Field(description="Submits in the solve.")
    hints: int = Field(description="Hints shown in the solve.")
    seconds: int = Field(description="From the solve's first submission to the pass.")
    reviewed_at: str


class Export(BaseModel):
    """Everything stored about a learner: the account page's download, and /api/me/export."""

    format: str
    exported_at: str
    account: AccountExport | None
    progress: list[ProgressExport]
    recall_checks: list[CheckExport]
    activity: list[ActivityExport]
    quizzes: list[QuizExport]
    coding_rounds: list[CodingRoundExport] = []
    reviews: list[ReviewExport]
    runs: list[RunExport]
    solution_reveals: list[RevealExport] = []
    hints_shown: list[HintExport] = []
    exercise_reviews: list[ExerciseReviewExport] = []
