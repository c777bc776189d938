"""backprop_lab: an honest eager-versus-torch.compile measurement for Backprop's sandbox.

    from backprop_lab import compare
    result = compare(fn, x, label="gelu chain")   # prints progress, a table, a JSON line

Self-contained (stdlib + torch). See README.md next to this package for the verdict rules.
"""

from __future__ import annotations

from .compare import compare
from .correctness import (
    EXACT,
    TOLERANCES,
    OutputCheck,
    check_outputs,
    format_tolerance,
    max_abs_diff,
    tolerance_for,
)
from .receipt import CACHE_STATES, CacheState, Receipt, cache_state
from .report import RESULT_PREFIX, LabResult, format_table
from .stats import SideStats, iqr, median, percentile, spread, summarize
from .verdict import (
    MAX_SPREAD,
    MIN_ROUNDS,
    SPEEDUP_THRESHOLD,
    VERDICTS,
    Verdict,
    decide,
    judge,
)

__all__ = [
    "CACHE_STATES",
    "EXACT",
    "MAX_SPREAD",
    "MIN_ROUNDS",
    "RESULT_PREFIX",
    "SPEEDUP_THRESHOLD",
    "TOLERANCES",
    "VERDICTS",
    "CacheState",
    "LabResult",
    "OutputCheck",
    "Receipt",
    "SideStats",
    "Verdict",
    "cache_state",
    "check_outputs",
    "compare",
    "decide",
    "format_table",
    "format_tolerance",
    "iqr",
    "judge",
    "max_abs_diff",
    "median",
    "percentile",
    "spread",
    "summarize",
    "tolerance_for",
]
