"""The solution's rules, on the database: refused without a failed Submit or giving up,
recorded once, and the last submission set beside the reference; the section's state (open,
failed, passed, revealed, review), a pass outranking a failure."""

from __future__ import annotations

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.domain import LearnerScope
from app.exercises import solutions
from app.models import Learner, Run, SolutionReveal
from app.settings import PROJECT_ROOT

CONTENT = PROJECT_ROOT / "content"
SLUG = "stable-softmax"


def learner(session: Session) -> LearnerScope:
    row = Learner(visitor="v-solutions")
    session.add(row)
    session.flush()
    assert row.id is not None
    return LearnerScope(session, row.id)


def submission(scope: LearnerScope, *, mode: str, verdict: str | None, code: str) -> None:
    scope.session.add(
        Run(
            id=f"run{mode}{verdict}",
            visitor="v-solutions",
            learner_id=scope.learner_id,
            code_sha256="0" * 64,
            code_bytes=len(code),
            code=code,
            backend_requested="cpu",
            status="done",
            exercise_slug=SLUG,
            grading_mode=mode,
            grading_verdict=verdict,
        )
    )
    scope.session.flush()


def test_only_a_failed_submit_or_giving_up_reveals(engine: Engine) -> None:
    with Session(engine) as session:
        scope = learner(session)
        with pytest.raises(solutions.SolutionRefused):
            solutions.reveal(scope, CONTENT, SLUG, visitor="v", give_up=False)
        submission(scope, mode="run", verdict="failed", code="x = 1")
        submission(scope, mode="submit", verdict=None, code="x = 2")  # never graded
        assert not solutions.has_failed_submission(session.connection(), scope.learner_id, SLUG)
        assert solutions.standing(scope, CONTENT, SLUG) == solutions.Standing(None, "open")
        submission(scope, mode="submit", verdict="error", code="x = 3")
        assert solutions.standing(scope, CONTENT, SLUG) == solutions.Standing(None, "failed")
        shown = solutions.reveal(scope, CONTENT, SLUG, visitor="v", give_up=False)
        again = solutions.reveal(scope, CONTENT, SLUG, visitor="v", give_up=False)
        assert again.revealed_at == shown.revealed_at
        assert len(session.exec(select(SolutionReveal)).all()) == 1
        assert shown.diff is not None and shown.last_code is not None


def test_giving_up_reveals_with_nothing_to_compare(engine: Engine) -> None:
    with Session(engine) as session:
        scope = learner(session)
        shown = solutions.reveal(scope, CONTENT, SLUG, visitor="v", give_up=True)
        assert shown.diff is None and shown.code.startswith(
            (CONTENT / "exercises" / SLUG / "reference.py").read_text()[:20]
        )
        assert solutions.revealed(scope, CONTENT, SLUG) is not None


def test_a_pass_outranks_a_failure_and_a_review_hides_what_was_revealed(engine: Engine) -> None:
    with Session(engine) as session:
        scope = learner(session)
        submission(scope, mode="submit", verdict="failed", code="x = 1")
        submission(scope, mode="submit", verdict="passed", code="x = 2")
        assert solutions.submit_outcomes(session.connection(), scope.learner_id, SLUG) == (
            True,
            True,
        )
        assert solutions.standing(scope, CONTENT, SLUG).state == "passed"
        review = solutions.standing(scope, CONTENT, SLUG, review=True)
        assert review == solutions.Standing(None, "review", seen_before=False)
        solutions.reveal(scope, CONTENT, SLUG, visitor="v", give_up=True)
        shown = solutions.standing(scope, CONTENT, SLUG)
        assert shown.state == "revealed" and shown.solution is not None
        assert '<span class="k">def</span>' in shown.solution.code_html
        again = solutions.standing(scope, CONTENT, SLUG, review=True)
        assert again == solutions.Standing(None, "review", seen_before=True)
