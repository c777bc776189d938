"""An exercise's solution: the reference and its editorial, shown only after a failed
submission (with a confirmation on the page) or when the learner gives up. The reveal is
recorded once; from then on the solution is the learner's to see again, beside their last
submitted code."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import Connection
from sqlalchemy import select as core_select
from sqlmodel import col

from app.domain import DomainError, LearnerScope
from app.exercises import catalogue, review
from app.exercises.code_diff import SideBySide, side_by_side
from app.importer.render import render_markdown
from app.models import Run, SolutionReveal, utcnow


class SolutionRefused(DomainError):
    """Neither a failed submission nor giving up: the solution stays hidden."""

    status = 409

    def __init__(self) -> None:
        super().__init__(
            "The solution is shown after a failed submission, or when you give up: submit "
            "your code first, or ask again with give_up set to true."
        )


@dataclass(frozen=True)
class Solution:
    code: str
    editorial_markdown: str
    editorial_html: str  # rendered as statements are, by the importer's renderer
    revealed_at: datetime
    last_code: str | None  # the learner's last submitted code, when they submitted any
    diff: SideBySide | None  # last_code beside the reference


def revealed_at(connection: Connection, learner_id: int, slug: str) -> datetime | None:
    found: datetime | None = connection.execute(
        core_select(col(SolutionReveal.revealed_at))
        .where(
            col(SolutionReveal.learner_id) == learner_id, col(SolutionReveal.exercise_slug) == slug
        )
        .order_by(col(SolutionReveal.revealed_at))
        .limit(1)
    ).scalar()
    return found


def has_failed_submission(connection: Connection, learner_id: int, slug: str) -> bool:
    """A Submit (every test) of this exercise by the learner, graded and not passed."""
    found = connection.execute(
        core_select(col(Run.id))
        .where(
            col(Run.learner_id) == learner_id,
            col(Run.exercise_slug) == slug,
            col(Run.grading_mode) == "submit",
            col(Run.grading_verdict).is_not(None),
            col(Run.grading_verdict) != "passed",
        )
        .limit(1)
    ).first()
    return found is not None


def last_code(connection: Connection, learner_id: int, slug: str) -> str | None:
    """The code of the learner's latest submission (Run or Submit) of the exercise."""
    code: str | None = connection.execute(
        core_select(col(Run.code))
        .where(col(Run.learner_id) == learner_id, col(Run.exercise_slug) == slug)
        .order_by(col(Run.created_at).desc())
        .limit(1)
    ).scalar()
    return code


def reveal(
    scope: LearnerScope, content_dir: Path, slug: str, *, visitor: str, give_up: bool
) -> Solution:
    """The solution, if the learner may see it: revealed before, or a failed submission, or
    they give up. The first reveal is recorded, and one after a solve is a lapse of its
    re-solving card (not committed). Blocking."""
    connection = scope.session.connection()
    catalogue.one(connection, slug)
    when = revealed_at(connection, scope.learner_id, slug)
    now = utcnow()
    if when is None:
        if not (give_up or has_failed_submission(connection, scope.learner_id, slug)):
            raise SolutionRefused()
        when = now
        scope.session.add(
            SolutionReveal(
                exercise_slug=slug,
                learner_id=scope.learner_id,
                visitor=visitor[:64],
                revealed_at=when,
            )
        )
        scope.session.flush()
    # Asked for after a solve, it is a lapse of that exercise's card (once until the next).
    review.record_reveal(scope.session, learner_id=scope.learner_id, slug=slug, at=now)
    return _solution(connection, content_dir, scope.learner_id, slug, when)


def revealed(scope: LearnerScope, content_dir: Path, slug: str) -> Solution | None:
    """The solution again, once revealed to this learner; None before. Blocking."""
    connection = scope.session.connection()
    when = revealed_at(connection, scope.learner_id, slug)
    if when is None:
        return None
    return _solution(connection, content_dir, scope.learner_id, slug, when)


def standing(scope: LearnerScope, content_dir: Path, slug: str) -> tuple[Solution | None, bool]:
    """What the page's Solution section shows: the solution once revealed, else whether
    the learner may reveal it now (a failed submission). Blocking."""
    solution = revealed(scope, content_dir, slug)
    if solution is not None:
        return solution, True
    return None, has_failed_submission(scope.session.connection(), scope.learner_id, slug)


def _solution(
    connection: Connection, content_dir: Path, learner_id: int, slug: str, when: datetime
) -> Solution:
    folder = catalogue.exercise_folder(content_dir, slug)
    code = (folder / "reference.py").read_text(encoding="utf-8")
    editorial = (folder / "editorial.md").read_text(encoding="utf-8")
    mine = last_code(connection, learner_id, slug)
    return Solution(
        code=code,
        editorial_markdown=editorial,
        editorial_html=render_markdown(editorial).html,
        revealed_at=when,
        last_code=mine,
        diff=side_by_side(mine, code) if mine is not None else None,
    )
