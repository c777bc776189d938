"""How a coding round is shown: the exercise, the clock, and once the round is over its
graded submission, its difficulty and its follow-up. The difficulty and the follow-up are
withheld while the round is open."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlmodel import Session, select

from app.domain import NotFound
from app.models import CodingRound, Exercise, Run, aware


@dataclass(frozen=True)
class Outcome:
    """The graded submission of a closed round, as the results show it."""

    state: str  # none (nothing submitted), grading (still running), graded
    verdict: str | None  # passed, failed, error, timeout; or how an ungraded run ended
    score: float | None
    failing: list[dict[str, Any]]  # the tests that did not pass: name, category, message
    run_id: str | None


@dataclass(frozen=True)
class RoundView:
    round: CodingRound
    exercise: Exercise
    now: datetime
    outcome: Outcome | None  # only once the round is closed

    @property
    def started(self) -> bool:
        return self.round.started_at is not None

    @property
    def closed(self) -> bool:
        return self.round.closed_at is not None

    @property
    def timed_out(self) -> bool:
        closed, deadline = self.round.closed_at, self.round.deadline
        return closed is not None and deadline is not None and aware(closed) >= aware(deadline)

    @property
    def seconds_left(self) -> float | None:
        if self.round.deadline is None or self.closed:
            return None
        return max(0.0, (aware(self.round.deadline) - self.now).total_seconds())

    @property
    def difficulty(self) -> str | None:
        """Hidden while the round is open: knowing it changes how one attacks a problem."""
        return self.exercise.difficulty if self.closed else None

    @property
    def followup(self) -> dict[str, Any] | None:
        """The follow-up prompt about the code and its key points, once the round is over."""
        index, followups = self.round.followup_index, self.exercise.followup_list
        if not self.closed or index is None or not 0 <= index < len(followups):
            return None
        return followups[index]

    @property
    def followup_covered(self) -> list[int]:
        covered = self.round.followup_covered
        return [int(n) for n in covered.split(",") if n] if covered else []


def build_view(session: Session, found: CodingRound, now: datetime) -> RoundView:
    exercise = session.exec(select(Exercise).where(Exercise.slug == found.exercise_slug)).first()
    if exercise is None:  # the exercise left the content since: the round cannot be shown
        raise NotFound(f"No coding round has the id '{found.id}'.")
    outcome = _outcome(session, found.run_id) if found.closed_at is not None else None
    return RoundView(round=found, exercise=exercise, now=now, outcome=outcome)


def _outcome(session: Session, run_id: str | None) -> Outcome:
    run = session.get(Run, run_id) if run_id else None
    if run is None:
        return Outcome("none", None, None, [], None)
    if run.status != "done":
        return Outcome("grading", None, None, [], run.id)
    report = json.loads(run.grading) if run.grading else {}
    failing = [
        {k: t.get(k, "") for k in ("name", "category", "message")}
        for t in report.get("tests", [])
        if t.get("status") != "pass"
    ]
    verdict = run.grading_verdict or run.verdict
    return Outcome("graded", verdict, run.score, failing, run.id)
