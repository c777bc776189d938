"""Everything stored about a learner (and their account), for the JSON download."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlmodel import col, select

from app.domain import LearnerScope
from app.exercises import catalogue, hints, review
from app.models import (
    Activity,
    CodingRound,
    Item,
    Question,
    QuizAttempt,
    RecallCheck,
    ReviewEvent,
    User,
    utcnow,
)
from app.progress import study
from app.reader import dashboard

EXPORT_FORMAT = "backprop-export/1"


def export(scope: LearnerScope, user: User | None) -> dict[str, Any]:
    """All of this learner's data, as JSON-ready values (app/accounts/schemas.py documents
    the shapes)."""
    session = scope.session
    slugs = dict(session.exec(select(Item.id, Item.slug)).all())
    progress_rows = sorted(study.progress_by_item(scope).values(), key=lambda p: p.item_id)
    checks = session.exec(
        select(RecallCheck)
        .where(RecallCheck.learner_id == scope.learner_id)
        .order_by(col(RecallCheck.answered_at))
    )
    days = session.exec(
        select(Activity).where(Activity.learner_id == scope.learner_id).order_by(col(Activity.day))
    )
    return {
        "format": EXPORT_FORMAT,
        "exported_at": utcnow().isoformat(),
        "account": None
        if user is None
        else {
            "username": user.username,
            "created_at": user.created_at.isoformat(),
            "password_changed_at": user.password_changed_at.isoformat(),
            "short_learning_steps": user.short_learning_steps,
        },
        "progress": [
            {
                "item": slugs.get(p.item_id),
                "status": p.status,
                "bookmarked": p.bookmarked,
                "note": p.note,
                "visits": p.visits,
                "runs": p.runs,
                "runs_ok": p.runs_ok,
                "first_visit_at": _iso(p.first_visit_at),
                "last_visit_at": _iso(p.last_visit_at),
            }
            for p in progress_rows
        ],
        "recall_checks": [
            {
                "item": slugs.get(c.item_id),
                "prompt": c.prompt,
                "knew": c.knew,
                "answered_at": c.answered_at.isoformat(),
            }
            for c in checks
        ],
        "activity": [
            {"date": a.day.isoformat(), "views": a.views, "runs": a.runs, "checks": a.checks}
            for a in days
        ],
        "quizzes": [
            {
                "id": q.id,
                "mode": q.mode,
                "title": q.title,
                "started_at": q.started_at.isoformat(),
                "closed_at": _iso(q.closed_at),
                "score": q.score,
                "total": q.total,
            }
            for q in session.exec(
                select(QuizAttempt)
                .where(QuizAttempt.learner_id == scope.learner_id)
                .order_by(col(QuizAttempt.started_at))
            )
        ],
        "coding_rounds": [
            {
                "id": r.id,
                "mock": r.attempt_id,
                "exercise": r.exercise_slug,
                "minutes": r.minutes,
                "started_at": _iso(r.started_at),
                "deadline": _iso(r.deadline),
                "closed_at": _iso(r.closed_at),
                "submission": r.run_id,
                "followup_covered": None
                if r.followup_covered is None
                else [int(n) for n in r.followup_covered.split(",") if n],
            }
            for r in session.exec(
                select(CodingRound)
                .where(CodingRound.learner_id == scope.learner_id)
                .order_by(col(CodingRound.created_at))
            )
        ],
        "reviews": [
            {
                "question": prompt,
                "rating": event.rating,
                "source": event.source,
                "reviewed_at": event.reviewed_at.isoformat(),
            }
            for event, prompt in session.exec(
                select(ReviewEvent, Question.prompt)
                .join(Question, col(Question.id) == col(ReviewEvent.question_id))
                .where(ReviewEvent.learner_id == scope.learner_id)
                .order_by(col(ReviewEvent.reviewed_at))
            )
        ],
        "runs": [
            {
                "id": run.id,
                "item": item.slug if item else None,
                "sample": run.sample_index,
                "created_at": run.created_at.isoformat(),
                "backend": run.backend,
                "device": run.device,
                "verdict": run.verdict,
                "exit_code": run.exit_code,
                "wall_ms": run.wall_ms,
                "code_sha256": run.code_sha256,
                "code": run.code,
                "stdout": run.stdout,
                "stderr": run.stderr,
                "exercise": run.exercise_slug,
                "mode": run.grading_mode,
                "grading": json.loads(run.grading) if run.grading else None,
            }
            for run, item in dashboard.runs(scope)
        ],
        "solution_reveals": [
            {"exercise": r.exercise_slug, "revealed_at": r.revealed_at.isoformat()}
            for r in catalogue.revealed(scope)
        ],
        "hints_shown": [
            {
                "exercise": h.exercise_slug,
                "hint": h.hint_index,
                "level": h.level,
                "category": h.category,
                "shown_at": h.shown_at.isoformat(),
            }
            for h in hints.shown_for_export(scope)
        ],
        "exercise_reviews": [
            {
                "exercise": e.exercise_slug,
                "rating": e.rating,
                "source": e.source,
                "attempts": e.attempts,
                "hints": e.hints,
                "seconds": e.seconds,
                "reviewed_at": e.reviewed_at.isoformat(),
            }
            for e in review.events(scope)
        ],
    }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None
