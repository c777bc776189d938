"""Graded submissions written straight into the database, as the grader would have left
them, for the authoring figures' tests (and their bench)."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from itertools import count

from sqlmodel import Session

from app.models import Run

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
_ids = count(1)

# The code two submits share or differ by: the same program written two ways, and a fix.
FIRST_TRY = """import torch

def softmax(x, dim=-1):
    e = (x - x.amax(dim=dim, keepdim=True)).exp()
    return e / e.sum(dim=dim, keepdim=True)
"""
REFORMATTED = '''"""Softmax."""
import torch
def softmax(x, dim = -1):
    e = (x - x.amax(dim=dim, keepdim=True)).exp()  # shifted
    return e / e.sum(dim=dim,
                     keepdim=True)
'''
FIXED = FIRST_TRY.replace(
    "e.sum(dim=dim, keepdim=True)", "e.sum(dim=dim, keepdim=True).clamp_min(1e-30)"
)


# The tests every report lists, by name: (category, hidden).
TESTS = {
    "softmax of small rows": ("values", False),
    "softmax of huge logits": ("edge cases", True),
    "empty batch": ("edge cases", True),
}


def report(failing: tuple[str, ...], verdict: str) -> str:
    """A grading report in which the tests named fail and the others pass."""
    tests = [
        {
            "name": name,
            "category": category,
            "hidden": hidden,
            "status": "fail" if name in failing else "pass",
        }
        for name, (category, hidden) in TESTS.items()
    ]
    return json.dumps({"verdict": verdict, "score": 0.0, "tests": tests, "mode": "submit"})


def add_submission(
    session: Session,
    *,
    slug: str,
    visitor: str,
    minutes: float,
    mode: str = "submit",
    failing: tuple[str, ...] = (),
    code: str = FIRST_TRY,
    learner_id: int | None = None,
    graded: bool = True,
) -> str:
    """One submission `minutes` after START; its verdict is passed when nothing fails."""
    verdict = "failed" if failing else "passed"
    run_id = f"r{next(_ids):031d}"
    session.add(
        Run(
            id=run_id,
            visitor=visitor,
            learner_id=learner_id,
            code=code,
            code_sha256=hashlib.sha256(code.encode()).hexdigest(),
            code_bytes=len(code.encode()),
            backend_requested="cpu",
            status="done",
            created_at=START + timedelta(minutes=minutes),
            exercise_slug=slug,
            grading_mode=mode,
            grading_verdict=verdict if graded else None,
            grading=report(failing, verdict) if graded else None,
        )
    )
    return run_id
