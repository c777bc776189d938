"""An exercise's solution: the reference and its editorial, shown only after a failed
submission (with a confirmation on the page) or when the learner gives up. The reveal is
recorded once; from then on the solution is the learner's to see again, beside their last
submitted code.

What the page's Solution section says follows the learner's state (`standing`): open (no
Submit failed or passed yet: giving up is the only way in), failed (a Submit failed: the
solution is theirs to see), passed (a Submit passed: the reference is there to compare
with, and seeing it no longer changes how the exercise counts), revealed, and review (solved
again from memory: the solution stays behind its button whatever came before)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import Connection, case, func
from sqlalchemy import select as core_select
from sqlmodel import col

from app.domain import DomainError, LearnerScope
from app.exercises import catalogue, review
from app.exercises.code_diff import SideBySide, side_by_side
from app.importer.render import highlight_code, render_markdown
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
    code_html: str  # highlighted as an item's code samples are
    editorial_markdown: str
    # Rendered as statements are, with its headings one level under the section's.
    editorial_html: str
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


def submit_outcomes(connection: Connection, learner_id: int, slug: str) -> tuple[bool, bool]:
    """(failed, passed): whether a graded Submit (every test) of this exercise by the
    learner failed, and whether one passed. One query."""
    passed = col(Run.grading_verdict) == "passed"
    found = connection.execute(
        core_select(
            func.max(case((passed, 0), else_=1)), func.max(case((passed, 1), else_=0))
        ).where(
            col(Run.learner_id) == learner_id,
            col(Run.exercise_slug) == slug,
            col(Run.grading_mode) == "submit",
            col(Run.grading_verdict).is_not(None),
        )
    ).one()
    return bool(found[0]), bool(found[1])


def has_failed_submission(connection: Connection, learner_id: int, slug: str) -> bool:
    """A Submit (every test) of this exercise by the learner, graded and not passed."""
    return submit_outcomes(connection, learner_id, slug)[0]


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


STATES = ("open", "failed", "passed", "revealed", "review")


@dataclass(frozen=True)
class Standing:
    """What the page's Solution section shows: the solution once revealed (None before, and
    in a review), and the state its words and buttons follow (STATES)."""

    solution: Solution | None
    state: str
    seen_before: bool = False  # a review of an exercise whose solution was revealed before


def standing(
    scope: LearnerScope, content_dir: Path, slug: str, *, review: bool = False
) -> Standing:
    """The Solution section's standing for this learner (see the module's docstring). A
    pass outranks a failure: once solved, seeing the solution changes no status. Blocking."""
    connection = scope.session.connection()
    revealed = revealed_at(connection, scope.learner_id, slug)
    # The outcomes matter only to an open, unrevealed standing: no query for the others.
    unneeded = review or revealed is not None
    return standing_of(
        connection,
        content_dir,
        scope.learner_id,
        slug,
        revealed=revealed,
        outcomes=(False, False)
        if unneeded
        else submit_outcomes(connection, scope.learner_id, slug),
        review=review,
    )


def standing_of(
    connection: Connection,
    content_dir: Path,
    learner_id: int,
    slug: str,
    *,
    revealed: datetime | None,
    outcomes: tuple[bool, bool],
    review: bool,
) -> Standing:
    """`standing` from what was read already: when the solution was first revealed, and
    whether a Submit failed and whether one passed. Reads the solution (files, and the
    learner's last code) only when it was revealed. Blocking."""
    if review:
        return Standing(None, "review", seen_before=revealed is not None)
    if revealed is not None:
        return Standing(_solution(connection, content_dir, learner_id, slug, revealed), "revealed")
    failed, passed = outcomes
    return Standing(None, "passed" if passed else "failed" if failed else "open")


def _solution(
    connection: Connection, content_dir: Path, learner_id: int, slug: str, when: datetime
) -> Solution:
    folder = catalogue.exercise_folder(content_dir, slug)
    code = (folder / "reference.py").read_text(encoding="utf-8")
    editorial = (folder / "editorial.md").read_text(encoding="utf-8")
    mine = last_code(connection, learner_id, slug)
    return Solution(
        code=code,
        code_html=highlight_code(code.rstrip("\n")),
        editorial_markdown=editorial,
        editorial_html=render_markdown(editorial, heading_shift=0).html,
        revealed_at=when,
        last_code=mine,
        diff=side_by_side(mine, code) if mine is not None else None,
    )
