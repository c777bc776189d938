"""Everything an exercise's page shows of its learner, read in one statement: their learner,
the navigation's due count, the exercise's re-solving card, their draft, the hints they were
shown, the latest grading's failing categories, the solution's reveal, how their Submits
went, and their latest submission.

A signed-in learner with records read these in nine statements, each a round of the driver
that gives up the GIL: on a loaded one-core server their page served half as many requests a
second as a guest's. As the item page's (app/reader/item_standing.py), the parts are one
UNION ALL of rows of one shape: a part number and columns each part fills as it needs (the
others NULL), built once per kind of owner and run as driver SQL (app/prepared.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from sqlalchemy import (
    BindParameter,
    Connection,
    Integer,
    String,
    bindparam,
    case,
    func,
    union_all,
)
from sqlalchemy import select as core_select
from sqlmodel import col

from app.domain import Identity
from app.exercises import hints, solutions
from app.exercises.review import NextReview
from app.models import ExerciseCard, ExerciseDraft, HintView, Learner, Run, SolutionReveal
from app.platform.due_count import due_count_of
from app.prepared import DriverFloat, Prepared, part_row

LEARNER, DUE, CARD, DRAFT, HINT, GRADED, REVEAL, OUTCOMES, SUBMISSION = range(9)
# The latest submission's columns, in the order its part fills the texts s1, s2...
_SUBMISSION_TEXTS = (
    "id",
    "status",
    "grading_mode",
    "grading_verdict",
    "verdict",
    "grading",
    "stdout",
    "stderr",
    "detail",
    "backend",
    "device",
)


# Each part's columns by position after the part number: two integers, a number, a time and
# eleven texts. The first part's casts give every column its type (and its result handling:
# SQLite keeps times as text); the time's is the tables' own, which gives times back in UTC.
_TIME = Run.__table__.c.created_at.type  # type: ignore[attr-defined]
_SHAPE = (
    ("i1", Integer),
    ("i2", Integer),
    ("f1", DriverFloat),
    ("t1", _TIME),
    *((f"s{n}", String) for n in range(1, len(_SUBMISSION_TEXTS) + 1)),
)


def _row(part: int, **given: Any) -> list[Any]:
    return part_row(part, _SHAPE, **given)


@cache
def _statement(*, by_user: bool) -> Prepared:
    """The rows of the learner of the user (or the visitor) `owner` on the exercise `slug`,
    with the due count at `now`."""
    owner = (col(Learner.user_id) if by_user else col(Learner.visitor)) == bindparam("owner")
    me = core_select(col(Learner.id).label("id")).where(owner).cte("me")
    slug: BindParameter[str] = bindparam("slug")

    def mine(model: Any) -> Any:
        """The learner's rows of `model`'s table for this exercise."""
        columns = model.__table__.c
        return (columns.learner_id == me.c.id) & (columns.exercise_slug == slug)

    latest_graded = (
        core_select(col(Run.grading))
        .where(mine(Run), col(Run.grading).is_not(None))
        .order_by(col(Run.created_at).desc())
        .limit(1)
        .subquery()
    )
    latest = (
        core_select(
            *(Run.__table__.c[name] for name in _SUBMISSION_TEXTS),  # type: ignore[attr-defined]
            col(Run.score),
            col(Run.wall_ms),
        )
        .where(mine(Run), col(Run.grading_mode).is_not(None))
        .order_by(col(Run.created_at).desc())
        .limit(1)
        .subquery()
    )
    passed = col(Run.grading_verdict) == "passed"
    parts = [
        core_select(*_row(LEARNER, i1=me.c.id)).select_from(me),
        core_select(*_row(DUE, i1=due_count_of(owner))),
        core_select(*_row(CARD, t1=col(ExerciseCard.due))).where(mine(ExerciseCard)),
        core_select(
            *_row(HINT, i1=col(HintView.hint_index), i2=col(HintView.id), t1=col(HintView.shown_at))
        ).where(mine(HintView)),
        core_select(*_row(GRADED, s1=latest_graded.c.grading)),
        core_select(*_row(REVEAL, t1=func.min(col(SolutionReveal.revealed_at)))).where(
            mine(SolutionReveal)
        ),
        core_select(
            *_row(
                OUTCOMES,
                i1=func.max(case((passed, 0), else_=1)),
                i2=func.max(case((passed, 1), else_=0)),
            )
        ).where(
            mine(Run),
            col(Run.grading_mode) == "submit",
            col(Run.grading_verdict).is_not(None),
        ),
        core_select(
            *_row(
                SUBMISSION,
                f1=latest.c.score,
                i1=latest.c.wall_ms,
                **{f"s{n}": latest.c[name] for n, name in enumerate(_SUBMISSION_TEXTS, 1)},
            )
        ),
    ]
    if by_user:  # a guest's drafts stay in their browser
        parts.append(
            core_select(*_row(DRAFT, s1=col(ExerciseDraft.code))).where(mine(ExerciseDraft))
        )
    return Prepared(union_all(*parts))


@dataclass
class ExerciseStanding:
    """What an exercise's page shows of its learner, as read; no learner: they have recorded
    nothing."""

    learner_id: int | None = None
    due: int = 0
    card_due: datetime | None = None
    draft: str | None = None
    shown_hints: list[int] = field(default_factory=list)  # oldest first
    failing: list[str] = field(default_factory=list)  # the latest grading's categories
    revealed_at: datetime | None = None
    submit_failed: bool = False
    submit_passed: bool = False
    latest_submission: Run | None = None  # not stored: the row as read


def read(
    connection: Connection, identity: Identity, *, slug: str, now: datetime
) -> ExerciseStanding:
    """The learner's standing on the exercise `slug` (a signed-in learner, or a browser that
    has recorded something; one with no learner yet gets an empty standing)."""
    by_user = identity.user_id is not None
    params = {
        "owner": identity.user_id if by_user else identity.visitor,
        "slug": slug,
        "now": now,
    }
    found = ExerciseStanding()
    shown: list[tuple[datetime, int, int]] = []
    for part, i1, i2, f1, t1, *texts in _statement(by_user=by_user).rows(connection, params):
        if part == LEARNER:
            found.learner_id = i1
        elif part == DUE:
            found.due = int(i1 or 0)
        elif part == CARD:
            found.card_due = t1
        elif part == DRAFT:
            found.draft = texts[0]
        elif part == HINT:
            shown.append((t1, i2, i1))
        elif part == GRADED:
            found.failing = hints.failing_in(texts[0])
        elif part == REVEAL:
            found.revealed_at = t1
        elif part == OUTCOMES:
            found.submit_failed, found.submit_passed = bool(i1), bool(i2)
        elif part == SUBMISSION and texts[0] is not None:
            found.latest_submission = Run(
                **dict(zip(_SUBMISSION_TEXTS, texts, strict=True)), score=f1, wall_ms=i1
            )
    # Hints in the order they were shown (a union keeps no order).
    found.shown_hints = [index for _, _, index in sorted(shown)]
    return found


@dataclass(frozen=True)
class PageStanding:
    """The page's parts that follow the learner: their draft (an account's, not in review),
    the Hints panel, the Solution section, the latest grading and the next re-solving."""

    draft: str | None
    hints: hints.HintState
    solution: solutions.Standing
    latest_submission: Run | None  # None in review: a review starts afresh
    next_review: NextReview | None
    due: int  # the navigation's


def for_page(
    connection: Connection,
    identity: Identity,
    *,
    slug: str,
    content_dir: Path,
    in_review: bool,
    now: datetime,
) -> PageStanding | None:
    """What the exercise's page shows of the asker, read in one statement (and, once they
    have revealed the solution, its files and their last code); None when they have recorded
    nothing yet. Blocking."""
    found = read(connection, identity, slug=slug, now=now)
    if found.learner_id is None:
        return None
    return PageStanding(
        # An account's draft follows it (a guest's stays in the browser); a review starts
        # from the starter, so the saved draft is left as it is.
        draft=found.draft if identity.signed_in and not in_review else None,
        hints=hints.state_of(content_dir, slug, found.shown_hints, found.failing),
        # A review is solved from memory: a solution revealed before stays behind its
        # button, and opening it again counts as a lapse (review.record_reveal).
        solution=solutions.standing_of(
            connection,
            content_dir,
            found.learner_id,
            slug,
            revealed=found.revealed_at,
            outcomes=(found.submit_failed, found.submit_passed),
            review=in_review,
        ),
        latest_submission=None if in_review else found.latest_submission,
        next_review=None if found.card_due is None else NextReview.of(found.card_due, now),
        due=found.due,
    )
