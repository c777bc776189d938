"""One submission as an author sees it, whoever made it: the code as it was graded and
every test's outcome. The flag of a flaky test links here (stats)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session

from app.domain import NotFound
from app.exercises.flaky_tests import report_tests
from app.models import Run


class SubmissionNotFound(NotFound):
    def __init__(self, run_id: str) -> None:
        super().__init__(f"No exercise submission has the id '{run_id}'.")


@dataclass(frozen=True)
class SubmissionView:
    run: Run
    who: str  # "learner 12", or the start of a guest's or client's key
    tests: list[dict[str, Any]] = field(default_factory=list)


def submission(session: Session, run_id: str) -> SubmissionView:
    """The submission with this id; SubmissionNotFound for a plain run or none."""
    run = session.get(Run, run_id)
    if run is None or run.exercise_slug is None:
        raise SubmissionNotFound(run_id)
    who = f"learner {run.learner_id}" if run.learner_id is not None else f"key {run.visitor[:8]}…"
    return SubmissionView(run, who, report_tests(run.grading))
