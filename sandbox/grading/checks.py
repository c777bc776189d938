"""Helpers for property checks (`prop`): they compare with the test's own tolerances, which
the runner sets for the check's duration."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from sandbox.grading.compare import DEFAULT_TOLERANCES, Comparison

current: ContextVar[Comparison | None] = ContextVar("current", default=None)
OUTSIDE_A_TEST = Comparison(DEFAULT_TOLERANCES, "cpu", visible=False)


def expect_close(actual: Any, expected: Any, where: str = "output", scale: float = 1.0) -> None:
    """Raise (the property fails) unless `actual` matches `expected` within the test's
    tolerance times `scale`. `expected` here is computed by the check itself (e.g. ones for
    rows that must sum to one), so it may be shown whatever the test's visibility."""
    base = current.get() or OUTSIDE_A_TEST
    comparison = Comparison(base.tolerances, base.device, visible=True, scale=base.scale * scale)
    comparison.check(expected, actual, where)
