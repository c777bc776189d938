"""A fleet rebuilding its job streams from queued runs sends a queued submission again with
its grading read from the content folder, and never sends one ungraded."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.admin.fleet import _unfinished
from app.models import Run, utcnow
from app.settings import PROJECT_ROOT
from sandbox.protocol import Mode


def queued(engine: Engine, run_id: str, slug: str | None) -> None:
    with Session(engine) as session:
        session.add(
            Run(
                id=run_id,
                visitor="v",
                code_sha256="0" * 64,
                code_bytes=1,
                code="x = 1",
                backend_requested="cpu",
                exercise_slug=slug,
                grading_mode="run" if slug else None,
                created_at=utcnow() - timedelta(minutes=5),
            )
        )
        session.commit()


def test_a_queued_submission_is_restored_with_its_grading(engine: Engine) -> None:
    queued(engine, "plain", None)
    queued(engine, "graded", "stable-softmax")
    queued(engine, "orphaned", "no-longer-here")
    requests, _ = _unfinished(engine, utcnow(), PROJECT_ROOT / "content")
    by_id = {r.id: r for r in requests}
    assert set(by_id) == {"plain", "graded"}  # the one whose exercise is gone waits
    assert by_id["plain"].grading is None
    grading = by_id["graded"].grading
    assert grading is not None and grading.mode is Mode.RUN
    folder = PROJECT_ROOT / "content" / "exercises" / "stable-softmax"
    assert grading.reference == (folder / "reference.py").read_text()
