"""A run that ended is practice for its learner: on the day, on its item when it had one,
and, for a graded submission, on the items its exercise drills (a listener of
app/runs/recorder.RunRecorder)."""

from __future__ import annotations

from sqlmodel import Session

from app.domain import LearnerScope
from app.models import Item, Run
from app.progress import exercise_progress, study
from sandbox.protocol import Verdict


def count_practice(session: Session, run: Run) -> None:
    """A finished run is practice for its learner, and on its item when it had one. Runs
    that never started (refused, or our own failure) are not the learner's doing."""
    if run.learner_id is None:
        return
    if run.verdict in (Verdict.REJECTED.value, Verdict.INTERNAL_ERROR.value):
        return
    item = session.get(Item, run.item_id) if run.item_id else None
    scope = LearnerScope(session, run.learner_id)
    study.record_run(scope, item, ok=run.verdict == Verdict.OK.value)
    if run.exercise_slug and run.grading_verdict:  # graded: the items it drills count it
        exercise_progress.count_submission(scope, run.exercise_slug)
