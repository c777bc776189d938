"""Signs of a flaky or wrong hidden test: someone's submit failed a hidden test, and their
next submit passed it with the same program (code_shape: formatting, comments and
docstrings aside). Inputs are drawn afresh for every submission, so the same code passing
what it failed means the test's outcome depends on the draw or the clock, not the code."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select as core_select
from sqlmodel import Session, col

from app.exercises.code_shape import SHAPES
from app.models import Run

_ID_CHUNK = 500  # ids per IN (...): well under every driver's limit on bound parameters


@dataclass(frozen=True)
class GradedSubmit:
    """One submit whose grading report came back: its tests as (name, category, hidden,
    status) dicts, in the report's order."""

    run_id: str
    code_sha256: str
    tests: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class FlakyCase:
    """A failing submit and the next one, the same program, passing the tests named."""

    failed_run: str
    passed_run: str
    tests: list[str]


def report_tests(grading: str | None) -> list[dict[str, Any]]:
    """A grading report's tests; none when it is missing or not what the grader writes."""
    try:
        tests = json.loads(grading or "{}").get("tests", [])
    except (ValueError, AttributeError):
        return []
    if not isinstance(tests, list):
        return []
    return [t for t in tests if isinstance(t, dict) and isinstance(t.get("name"), str)]


def turned_to_pass(before: GradedSubmit, after: GradedSubmit) -> list[str]:
    """The hidden tests `before` did not pass and `after` passed, in `before`'s order."""
    passed = {t["name"] for t in after.tests if t.get("status") == "pass"}
    return [
        t["name"]
        for t in before.tests
        if t.get("hidden") and t.get("status") != "pass" and t["name"] in passed
    ]


def confirm(
    session: Session, pairs: Iterable[tuple[GradedSubmit, GradedSubmit]]
) -> list[FlakyCase]:
    """The pairs whose program did not change between the two submits. Identical bytes
    settle it at once; for the others the programs' shapes are compared (code_shape), from
    the cache or from the code, read for the new ones only, one query per chunk of ids."""
    cases: list[FlakyCase] = []
    unsettled: list[tuple[GradedSubmit, GradedSubmit, list[str]]] = []
    for before, after in pairs:
        tests = turned_to_pass(before, after)
        if not tests:
            continue
        if before.code_sha256 == after.code_sha256:
            cases.append(FlakyCase(before.run_id, after.run_id, tests))
        else:
            unsettled.append((before, after, tests))
    digests = _digests(session, [r for b, a, _ in unsettled for r in (b, a)])
    for before, after, tests in unsettled:
        first, second = digests.get(before.code_sha256), digests.get(after.code_sha256)
        if first and first == second:  # b"": code that does not parse proves nothing
            cases.append(FlakyCase(before.run_id, after.run_id, tests))
    return cases


def _digests(session: Session, submits: list[GradedSubmit]) -> dict[str, bytes]:
    """Shape digests by code sha256: cached ones, and those of the code read now."""
    found: dict[str, bytes] = {}
    unread: dict[str, str] = {}  # sha256 → a run with that code
    for submit in submits:
        digest = SHAPES.get(submit.code_sha256)
        if digest is not None:
            found[submit.code_sha256] = digest
        else:
            unread.setdefault(submit.code_sha256, submit.run_id)
    ids = sorted(unread.values())
    for start in range(0, len(ids), _ID_CHUNK):
        chunk = ids[start : start + _ID_CHUNK]
        for sha, code in session.execute(
            core_select(col(Run.code_sha256), col(Run.code)).where(col(Run.id).in_(chunk))
        ):
            found[sha] = SHAPES.digest(sha, code)
    return found
